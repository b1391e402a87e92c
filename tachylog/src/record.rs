//! The record format shared by the front end (which writes it) and the back end (which reads it).
//!
//! A record is one ring frame. Its body starts with the timestamp in clock ticks (`u64`), then:
//! - [`KIND_CALL_SITE`]: a `&'static Site` pointer, then the call's argument bytes (see
//!   [`crate::codec`]);
//! - [`KIND_DYNAMIC`]: a record whose metadata is only known at run time (the `log` facade, the
//!   panic hook): level (`u64`), line (`u64`), then target, file and message, each a `usize`
//!   length followed by UTF-8 bytes.

use crate::codec::Decoder;
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
}
