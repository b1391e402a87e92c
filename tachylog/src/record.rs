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

use crate::codec::render::{FlagsFn, PushFn, RenderFn};
use crate::Level;

/// Frame kind of a record from a tachylog macro.
pub(crate) const KIND_CALL_SITE: u32 = 1;
/// Frame kind of a record with run-time metadata.
pub(crate) const KIND_DYNAMIC: u32 = 2;

/// Bytes before the arguments in a call-site record: timestamp and site pointer.
pub(crate) const CALL_SITE_PREFIX: usize = 16;

/// Static metadata of one log call site, created at compile time; records carry a pointer to it.
///
/// The message is data, not code: its literal pieces and placeholders, each placeholder
/// pointing at a renderer shared by every call site with the same argument type and trait
/// (see [`crate::codec::render`]). The back end walks this table (`format::message`).
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
    /// The message's placeholders in order, each with the literal text before it.
    pub message: &'static [Placeholder],
    /// The literal text after the last placeholder (all of it for a message without any).
    pub tail: &'static str,
    /// The structured fields, whose bytes come first in a record's arguments.
    pub fields: &'static [FieldSlot],
}

/// One `{...}` of a call site's format string.
#[derive(Debug)]
pub struct Placeholder {
    /// The literal text before it, with `{{` and `}}` unescaped.
    pub literal: &'static str,
    /// Its precision. A precision argument travels before the width's, then the value.
    pub precision: Count,
    /// Its width.
    pub width: Count,
    /// The call site's function for a spec with flags (fill, alignment, sign, `#`, `0`).
    pub flags: Option<FlagsFn>,
    /// Appends the argument, formatted with the placeholder's trait.
    pub render: RenderFn,
}

/// A width or precision.
#[derive(Debug, Clone, Copy)]
pub enum Count {
    /// Not given.
    None,
    /// Written in the format string.
    Literal(usize),
    /// Taken from an argument: a `usize` in the record before the value.
    Arg,
}

/// One structured field of a call site.
#[derive(Debug)]
pub struct FieldSlot {
    /// Its key.
    pub key: &'static str,
    /// Records its value, decoded with its type's codec, as its sigil asks.
    pub push: PushFn,
}
