//! The binary log: what a file sink with [`Format::Binary`](crate::Format::Binary) writes
//! instead of text lines, and how those bytes are read back. The layout is specified in
//! `FORMAT.md` beside this file (also the documentation of [`crate::read`]).
//!
//! [`encoder`] runs on the back end only, inside the file sink's slot: it turns a decoded
//! record into a site reference, a timestamp delta, a thread reference and the argument values,
//! with no date-time, pattern or escaping work. [`decoder`] runs in any thread of a reading
//! program and never trusts its input: damage is an error value, never a panic.
//!
//! Layer 4 (see `ARCHITECTURE.md`), after `format`: imports layers 1 to 3 and `format`
//! (the record view it encodes, the message walk that locates each value).

pub(crate) mod decoder;
pub(crate) mod encoder;
// The value wire and the text table sit in `codec`: the front end's generic code writes a
// record's message values straight into the open block through them.
pub(crate) use crate::codec::wire::value;
pub(crate) use crate::codec::{texts, wire};

/// The first bytes of every block: `0xF7` (never a byte of UTF-8 text), then `TLBLK`.
pub(crate) const SYNC: [u8; 6] = [0xF7, b'T', b'L', b'B', b'L', b'K'];
/// The format version written after [`SYNC`]: 2, where typed values take their placeholder's
/// spec from the call site's format string.
pub(crate) const VERSION: u8 = 2;
/// The oldest version a reader reads: 1, where a typed value is written as `{}` writes it.
pub(crate) const OLDEST_VERSION: u8 = 1;
/// Bytes of a block header: sync, version, reserved byte, payload length, CRC-32.
pub(crate) const HEADER: usize = 16;
/// The largest payload a reader accepts. Writers close a block at [`BLOCK_TARGET`]; only a
/// single huge record makes one longer, and the writer cuts a record's message rather than
/// pass this.
pub(crate) const MAX_PAYLOAD: usize = 1 << 30;
/// A writer closes its block once the payload passes this many bytes.
pub(crate) const BLOCK_TARGET: usize = 64 << 10;

/// Entry tags of a block's payload.
pub(crate) mod tag {
    /// A call site's static parts.
    pub(crate) const SITE: u8 = 0x01;
    /// A thread's id and name.
    pub(crate) const THREAD: u8 = 0x02;
    /// A record of a defined call site: its values only.
    pub(crate) const SITE_RECORD: u8 = 0x10;
    /// A record with its own metadata and message text.
    pub(crate) const TEXT_RECORD: u8 = 0x11;
}

/// Record flags.
pub(crate) mod flag {
    /// Written from the backtrace ring.
    pub(crate) const BACKTRACE: u8 = 1;
    /// A 25-byte trace context follows the flags.
    pub(crate) const TRACE: u8 = 2;
    /// The target and file come from a compiled-in call site (text records only).
    pub(crate) const STATIC_METADATA: u8 = 4;
    /// Written by a later process from the spool of one that died.
    pub(crate) const RECOVERED: u8 = 8;
    /// Every flag a reader of this version knows.
    pub(crate) const KNOWN: u8 = BACKTRACE | TRACE | STATIC_METADATA | RECOVERED;
}
