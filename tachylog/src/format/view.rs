//! What a line is made of, as the worker hands it to every format: [`RecordView`] and its
//! [`Message`]. Kept apart from the formats so that each of them depends on it, not on another
//! format.

use crate::queue::registry::ThreadInfo;
use crate::record::{Decode, Site, TraceContext};
use crate::Level;
use std::mem::MaybeUninit;

/// Where a record's message comes from.
pub(crate) enum Message<'a> {
    /// A macro call site's record.
    Site(SiteMessage<'a>),
    /// Text formatted by the caller (the panic hook, tachylog's own notices).
    Text(&'a str),
    /// Text formatted by the caller with structured fields in the encoding of
    /// [`crate::fields::wire`] (the `log` facade, `tracing`).
    Dynamic { text: &'a str, fields: &'a [u8] },
    /// A message read back with its fields (a record recovered from a spool).
    #[cfg_attr(not(all(unix, not(loom))), allow(dead_code))]
    Decoded {
        text: &'a str,
        fields: &'a crate::fields::Fields,
    },
}

/// A call-site record's message, before rendering: its site, how to read its arguments, and
/// their bytes.
#[derive(Clone, Copy)]
pub(crate) struct SiteMessage<'a> {
    pub(crate) site: &'static Site,
    pub(crate) decode: &'static Decode,
    pub(crate) args: &'a [MaybeUninit<u8>],
}

/// Everything a line is made of.
pub(crate) struct RecordView<'a> {
    pub(crate) unix_nanos: i64,
    pub(crate) level: Level,
    pub(crate) target: &'a str,
    pub(crate) file: &'a str,
    pub(crate) line: u32,
    pub(crate) thread: &'a ThreadInfo,
    pub(crate) message: Message<'a>,
    /// Whether `target` and `file` come from a compiled-in call site (and need no escaping).
    pub(crate) static_metadata: bool,
    /// Written from the backtrace ring (marked `[backtrace]` in text, `"backtrace":true` in
    /// JSON, `backtrace=true` in logfmt).
    pub(crate) backtrace: bool,
    /// Written by a later process from the spool of one that died (marked `[recovered]` in
    /// text, `"recovered":true` in JSON, `recovered=true` in logfmt).
    pub(crate) recovered: bool,
    /// The OpenTelemetry span the record was logged in.
    pub(crate) trace: Option<TraceContext>,
}
