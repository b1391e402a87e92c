//! The record format shared by the front end (which writes it) and the back end (which reads it).
//!
//! A record is one ring frame. Its body starts with the timestamp in clock ticks (`u64`), then:
//! - [`KIND_CALL_SITE`]: a `&'static Site` pointer, then the call's argument bytes (see
//!   [`crate::codec`]): its structured fields' first, then its message's;
//! - [`KIND_DYNAMIC`]: a record whose metadata is only known at run time (the `log` facade, the
//!   panic hook, `tracing`): level (`u64`), line (`u64`), then target, file and message, each a
//!   `usize` length followed by UTF-8 bytes, then the structured fields and spans in the
//!   encoding of [`crate::fields::wire`], also `usize`-length-prefixed (frames are padded).
//!
//! Layer 2 (see `ARCHITECTURE.md`): imports layer 1, `fields` and `codec`.

use crate::codec::Decoder;
use crate::Fields;
use crate::Level;
use std::fmt;

/// Frame kind of a record from a tachylog macro.
pub(crate) const KIND_CALL_SITE: u32 = 1;
/// Frame kind of a record with run-time metadata.
pub(crate) const KIND_DYNAMIC: u32 = 2;

/// Bytes before the arguments in a call-site record: timestamp and site pointer.
pub(crate) const CALL_SITE_PREFIX: usize = 16;

/// Formats a record's message from its argument bytes. Generated per call site.
pub type DecodeFn = fn(&mut Decoder<'_>, &mut dyn fmt::Write) -> fmt::Result;

/// Decodes a record's structured fields, which precede the message's arguments. Generated per
/// call site that has fields; [`no_fields`] otherwise.
pub type FieldsFn = fn(&mut Decoder<'_>, &mut Fields);

/// The `FieldsFn` of a call site without fields.
pub fn no_fields(_: &mut Decoder<'_>, _: &mut Fields) {}

/// Static metadata of one log call site, created at compile time; records carry a pointer to it.
#[derive(Debug)]
pub struct Site {
    /// The call's level.
    pub level: Level,
    /// `module_path!()` of the call.
    pub target: &'static str,
    /// `file!()` of the call.
    pub file: &'static str,
    /// `line!()` of the call.
    pub line: u32,
    /// The format string as written.
    pub format: &'static str,
    /// Formats the message from the argument bytes.
    pub decode: DecodeFn,
    /// Decodes the structured fields, which come first in the argument bytes.
    pub fields: FieldsFn,
}
