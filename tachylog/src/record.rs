//! The record format shared by the front end (which writes it) and the back end (which reads it).
//!
//! A record is one ring frame. Its body starts with the timestamp in clock ticks (`u64`), then:
//! - [`KIND_CALL_SITE`]: a `&'static Site` pointer, a `&'static Decode` pointer (how to read
//!   the arguments, shared by every call site whose arguments have the same types), then the
//!   call's argument bytes (see [`crate::codec`]): its structured fields' first, then its
//!   message's;
//! - [`KIND_CALL_SITE_TRACED`]: the same, logged inside an OpenTelemetry span: after the two
//!   pointers, the span's [`TraceContext`] (25 bytes, padded to 32), then the arguments;
//! - [`KIND_CALL_SITE_SCOPED`] and [`KIND_CALL_SITE_SCOPED_TRACED`]: the same two, logged in a
//!   request scope: the scope's id (`u64`) comes right after the two pointers;
//! - [`KIND_SCOPE_EVENT`]: a request scope began, was flushed or ended ([`ScopeEvent`]);
//! - [`KIND_DYNAMIC_SCOPED`]: a [`KIND_DYNAMIC`] record logged in a request scope;
//! - [`KIND_DYNAMIC`]: a record whose metadata is only known at run time (the `log` facade, the
//!   panic hook, `tracing`): level (`u64`), line (`u64`), then target, file and message, each a
//!   `usize` length followed by UTF-8 bytes, then the structured fields and spans in the
//!   encoding of [`crate::fields::wire`], also `usize`-length-prefixed (frames are padded),
//!   then the [`TraceContext`], `usize`-length-prefixed (0 bytes outside a span), then the
//!   request scope's id, `usize`-length-prefixed (0 bytes outside a scope).
//!
//! Layer 2 (see `ARCHITECTURE.md`): imports layer 1, `fields` and `codec`.

use crate::codec::render::{Applied, FieldValueFn, FlagsFn, PushFn, RenderError, RenderFn};
use crate::codec::texts::TextTable;
use crate::codec::wire::{append_with, MAX_TYPED};
use crate::codec::{Decoder, TextBuf, Typed};
use crate::Level;

/// Frame kind of a record from a tachylog macro.
pub(crate) const KIND_CALL_SITE: u32 = 1;
/// Frame kind of a record with run-time metadata.
pub(crate) const KIND_DYNAMIC: u32 = 2;

/// Bytes before the arguments in a call-site record: timestamp, site and decode pointers.
pub(crate) const CALL_SITE_PREFIX: usize = 24;

/// Frame kind of a record from a tachylog macro logged inside an OpenTelemetry span: a
/// call-site record whose prefix also holds the span's [`TraceContext`].
pub(crate) const KIND_CALL_SITE_TRACED: u32 = 3;
/// Frame kind of a call-site record logged in a request scope: the scope's id follows the two
/// pointers.
pub(crate) const KIND_CALL_SITE_SCOPED: u32 = 4;
/// Frame kind of a call-site record logged in a request scope and an OpenTelemetry span: the
/// scope's id, then the trace context, follow the two pointers.
pub(crate) const KIND_CALL_SITE_SCOPED_TRACED: u32 = 5;
/// Frame kind of a request scope's begin, flush or end ([`ScopeEvent`]).
pub(crate) const KIND_SCOPE_EVENT: u32 = 6;
/// Frame kind of a [`KIND_DYNAMIC`] record logged in a request scope: its last
/// length-prefixed piece is the scope's id.
pub(crate) const KIND_DYNAMIC_SCOPED: u32 = 7;

/// Bytes of a scope id in a call-site record's prefix.
const SCOPE_BYTES: usize = 8;
/// Bytes of a trace context in a call-site record's prefix: its 25 bytes, padded.
const TRACE_BYTES: usize = 32;

/// What a call-site record carries between its two pointers and its arguments, by frame kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallSiteLayout {
    pub(crate) scoped: bool,
    pub(crate) traced: bool,
}

impl CallSiteLayout {
    /// The layout of a call-site frame `kind`; `None` for every other kind.
    #[inline(always)]
    pub(crate) fn of_kind(kind: u32) -> Option<CallSiteLayout> {
        let (scoped, traced) = match kind {
            KIND_CALL_SITE => (false, false),
            KIND_CALL_SITE_TRACED => (false, true),
            KIND_CALL_SITE_SCOPED => (true, false),
            KIND_CALL_SITE_SCOPED_TRACED => (true, true),
            _ => return None,
        };
        Some(CallSiteLayout { scoped, traced })
    }

    /// The layout of a record logged with (or without) a trace context and a scope.
    #[inline(always)]
    pub(crate) fn of_call(trace: &Option<TraceContext>, scope: u64) -> CallSiteLayout {
        CallSiteLayout {
            scoped: scope != 0,
            traced: trace.is_some(),
        }
    }

    #[inline(always)]
    pub(crate) fn kind(self) -> u32 {
        match (self.scoped, self.traced) {
            (false, false) => KIND_CALL_SITE,
            (false, true) => KIND_CALL_SITE_TRACED,
            (true, false) => KIND_CALL_SITE_SCOPED,
            (true, true) => KIND_CALL_SITE_SCOPED_TRACED,
        }
    }

    /// Bytes after the two pointers and before the arguments.
    #[inline(always)]
    pub(crate) fn extra(self) -> usize {
        SCOPE_BYTES * self.scoped as usize + TRACE_BYTES * self.traced as usize
    }

    /// Bytes before the arguments in a record of this process (8-byte timestamp, two pointers).
    #[inline(always)]
    pub(crate) fn prefix(self) -> usize {
        CALL_SITE_PREFIX + self.extra()
    }

    /// Where the trace context starts, counted from the end of the two pointers.
    #[inline(always)]
    pub(crate) fn trace_offset(self) -> usize {
        SCOPE_BYTES * self.scoped as usize
    }
}

/// A request scope's life, as the front end tells the back end: one frame of
/// [`KIND_SCOPE_EVENT`], ordered with the records like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScopeEvent {
    pub(crate) scope: u64,
    pub(crate) what: ScopeEventKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeEventKind {
    /// The scope opened, inside `parent` (0: none), holding records at `hold` or more verbose
    /// (at most `max_records` and `max_bytes` of them) until one at `trigger` or more severe.
    Begin {
        parent: u64,
        hold: Level,
        trigger: Level,
        max_records: u32,
        max_bytes: u64,
    },
    /// The application asked for the held records.
    Flush,
    /// The scope ended; `failed` when it ended by a panic's unwinding.
    End { failed: bool },
}

impl ScopeEvent {
    /// Bytes of the encoding after the timestamp.
    pub(crate) const ENCODED: usize = 32;

    pub(crate) fn encode(&self) -> [u8; Self::ENCODED] {
        let mut out = [0u8; Self::ENCODED];
        out[..8].copy_from_slice(&self.scope.to_le_bytes());
        match self.what {
            ScopeEventKind::Begin {
                parent,
                hold,
                trigger,
                max_records,
                max_bytes,
            } => {
                out[8] = 1;
                out[9] = hold as u8;
                out[10] = trigger as u8;
                out[12..16].copy_from_slice(&max_records.to_le_bytes());
                out[16..24].copy_from_slice(&parent.to_le_bytes());
                out[24..32].copy_from_slice(&max_bytes.to_le_bytes());
            }
            ScopeEventKind::Flush => out[8] = 2,
            ScopeEventKind::End { failed } => {
                out[8] = 3;
                out[9] = failed as u8;
            }
        }
        out
    }

    /// Reads [`ScopeEvent::encode`]'s bytes; `None` for anything else.
    pub(crate) fn decode(bytes: &[u8]) -> Option<ScopeEvent> {
        let bytes: &[u8; Self::ENCODED] = bytes.get(..Self::ENCODED)?.try_into().ok()?;
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let what = match bytes[8] {
            1 => ScopeEventKind::Begin {
                parent: u64_at(16),
                hold: Level::from_u8(bytes[9])?,
                trigger: Level::from_u8(bytes[10])?,
                max_records: u32::from_le_bytes(bytes[12..16].try_into().ok()?),
                max_bytes: u64_at(24),
            },
            2 => ScopeEventKind::Flush,
            3 => ScopeEventKind::End {
                failed: bytes[9] != 0,
            },
            _ => return None,
        };
        Some(ScopeEvent {
            scope: u64_at(0),
            what,
        })
    }
}

/// The OpenTelemetry span a record was logged in: written on the record's line (` trace_id=…
/// span_id=…` in text, fields in JSON) and into the OTLP `LogRecord`'s own fields.
///
/// ```
/// let ids = tachylog::TraceContext { trace_id: [0xab; 16], span_id: [0xcd; 8], flags: 1 };
/// assert_eq!(ids.trace_id_hex(), "abababababababababababababababab");
/// assert_eq!(ids.span_id_hex(), "cdcdcdcdcdcdcdcd");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    /// The W3C trace id.
    pub trace_id: [u8; 16],
    /// The span id.
    pub span_id: [u8; 8],
    /// The W3C trace flags (`1`: sampled).
    pub flags: u8,
}

impl TraceContext {
    /// Bytes of the encoding in a record.
    pub(crate) const ENCODED: usize = 25;

    /// The record encoding: trace id, span id, flags.
    pub(crate) fn encode(&self) -> [u8; Self::ENCODED] {
        let mut out = [0u8; Self::ENCODED];
        out[..16].copy_from_slice(&self.trace_id);
        out[16..24].copy_from_slice(&self.span_id);
        out[24] = self.flags;
        out
    }

    /// Reads [`TraceContext::encode`]'s bytes.
    pub(crate) fn decode(bytes: &[u8]) -> Option<TraceContext> {
        if bytes.len() < Self::ENCODED {
            return None;
        }
        let mut ids = TraceContext {
            trace_id: [0; 16],
            span_id: [0; 8],
            flags: bytes[24],
        };
        ids.trace_id.copy_from_slice(&bytes[..16]);
        ids.span_id.copy_from_slice(&bytes[16..24]);
        Some(ids)
    }

    /// The trace id in lowercase hex (32 characters), as the W3C and OTLP/JSON write it.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id in lowercase hex (16 characters).
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }
}

/// Appends ` trace_id=… span_id=…`, as text and logfmt lines carry them.
pub(crate) fn write_trace_pairs(trace: &TraceContext, out: &mut Vec<u8>) {
    out.extend_from_slice(b" trace_id=");
    write_hex(&trace.trace_id, out);
    out.extend_from_slice(b" span_id=");
    write_hex(&trace.span_id, out);
}

/// Appends `bytes` as lowercase hex.
pub(crate) fn write_hex(bytes: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize]);
        out.push(DIGITS[(b & 15) as usize]);
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    write_hex(bytes, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Static metadata of one log call site, created at compile time; records carry a pointer to it.
///
/// Plain data, the same whatever the arguments' types: the message's literal pieces and
/// placeholder specs, and the fields' keys. How to read the arguments travels beside it as a
/// [`Decode`], which every call site with the same argument types shares, so a call site emits
/// no code for its formatting. The back end walks both together (`format::message`).
///
/// Its fields are private and it is made by [`Site::new`], which works out at compile time
/// whether its target and file may be written without escaping: a site built by hand can
/// never have them written raw.
#[derive(Debug)]
pub struct Site {
    /// The call's level.
    pub(crate) level: Level,
    /// `module_path!()` of the call.
    pub(crate) target: &'static str,
    /// `file!()` of the call.
    pub(crate) file: &'static str,
    /// `line!()` of the call.
    pub(crate) line: u32,
    /// The format string as written.
    pub(crate) format: &'static str,
    /// The message's placeholders in order, each with the literal text before it.
    pub(crate) message: &'static [Placeholder],
    /// The literal text after the last placeholder (all of it for a message without any).
    pub(crate) tail: &'static str,
    /// The structured fields' keys, in the order their values come first in the arguments.
    pub(crate) fields: &'static [&'static str],
    /// Neither `target` nor `file` holds a character the text line escapes: they are copied as
    /// they are (the back end's fast path). Derived in [`Site::new`].
    pub(crate) plain_metadata: bool,
    /// The address of the [`Decode`] its last record was armed with (see `frontend::spool`),
    /// [`Site::ANY_ARGUMENTS`] when no spool needs to know each argument list, 0 before its
    /// first record: a log call whose `Decode` is not this one takes the cold path, which
    /// defines the site and its argument list in the spool before the record is published.
    pub(crate) armed: std::sync::atomic::AtomicUsize,
}

impl Site {
    /// [`Site::armed`] when no spool is installed: every argument list passes.
    pub(crate) const ANY_ARGUMENTS: usize = usize::MAX;

    /// A call site: its level, `module_path!()` (or the call's own target), `file!()`,
    /// `line!()`, the format string as written, its placeholders, the text after the last one
    /// and the fields' keys.
    ///
    /// ```
    /// use tachylog::__private::Site;
    /// static SITE: Site = Site::new(tachylog::Level::Info, "app", "src/main.rs", 7, "hi", &[], "hi", &[]);
    /// # let _ = &SITE;
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        level: Level,
        target: &'static str,
        file: &'static str,
        line: u32,
        format: &'static str,
        message: &'static [Placeholder],
        tail: &'static str,
        fields: &'static [&'static str],
    ) -> Site {
        Site {
            level,
            target,
            file,
            line,
            format,
            message,
            tail,
            fields,
            plain_metadata: crate::__private::is_plain_target(target)
                && crate::__private::is_plain_target(file),
            armed: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

/// One `{...}` of a call site's format string, made by [`Placeholder::new`].
///
/// Its fields are private because two of them are derived from the others when it is made:
/// a literal changed afterwards would leave `padded` holding other bytes.
#[derive(Debug)]
pub struct Placeholder {
    /// The literal text before it, with `{{` and `}}` unescaped.
    pub(crate) literal: &'static str,
    /// Its precision. A precision argument travels before the width's, then the value.
    pub(crate) precision: Count,
    /// Its width.
    pub(crate) width: Count,
    /// The call site's function for a spec with flags (fill, alignment, sign, `#`, `0`).
    pub(crate) flags: Option<FlagsFn>,
    /// `{}`: no precision, width or flags. Worked out once, at compile time, because the
    /// back end asks for every value it renders: the three checks take 11 instructions per
    /// placeholder, this one two (callgrind, `tachylog-bench --only tachylog,backend_iteration`).
    pub(crate) plain: bool,
    /// `literal`'s bytes zero-padded to [`PADDED_LITERAL`], if it fits (else unused): the back
    /// end appends it with one fixed-width copy.
    padded: [u8; PADDED_LITERAL],
}

/// Literal text of at most this many bytes is also kept padded in a [`Placeholder`].
const PADDED_LITERAL: usize = 16;

impl Placeholder {
    /// A placeholder with the literal text before it and its spec.
    ///
    /// ```
    /// use tachylog::__private::{Count, Placeholder};
    /// static PLACEHOLDER: Placeholder = Placeholder::new("id=", Count::None, Count::None, None);
    /// assert!(format!("{PLACEHOLDER:?}").contains(r#"literal: "id=""#));
    /// ```
    pub const fn new(
        literal: &'static str,
        precision: Count,
        width: Count,
        flags: Option<FlagsFn>,
    ) -> Self {
        let plain = matches!((precision, width, flags), (Count::None, Count::None, None));
        let mut padded = [0u8; PADDED_LITERAL];
        if literal.len() <= PADDED_LITERAL {
            let bytes = literal.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                padded[i] = bytes[i];
                i += 1;
            }
        }
        Placeholder {
            literal,
            precision,
            width,
            flags,
            plain,
            padded,
        }
    }

    /// Appends the literal text before this placeholder, then the value `render` takes off
    /// `decoder`, with this placeholder's spec: its width and precision as written, or read
    /// off `decoder` (before the value) when they are arguments.
    #[inline(always)]
    pub(crate) fn render_value(
        &self,
        render: RenderFn,
        decoder: &mut Decoder<'_>,
        out: &mut TextBuf<'_>,
    ) -> Result<(), RenderError> {
        if self.literal.len() <= PADDED_LITERAL {
            // SAFETY: `padded` starts with `literal`'s bytes, so the bytes appended are
            // `literal`, whole UTF-8.
            crate::codec::short_copy::append_from_padded(
                unsafe { out.as_mut_vec() },
                &self.padded,
                self.literal.len(),
            );
        } else {
            out.push_str(self.literal);
        }
        self.render_bare(render, decoder, out)
    }

    /// [`Placeholder::render_value`] without the literal text: the value alone, spec applied.
    #[inline(always)]
    pub(crate) fn render_bare(
        &self,
        render: RenderFn,
        decoder: &mut Decoder<'_>,
        out: &mut TextBuf<'_>,
    ) -> Result<(), RenderError> {
        // `{}` (most placeholders): the renderer gets the constant plain spec, so its spec
        // checks fold away once it is inlined, and no spec is built per record.
        if self.plain {
            return render(decoder, &Applied::PLAIN, out);
        }
        let precision = self.precision.resolve(decoder);
        let width = self.width.resolve(decoder);
        let spec = Applied {
            width,
            precision,
            flags: self.flags,
        };
        render(decoder, &spec, out)
    }
}

/// The binary log's open block, and the writer of a call-site record's message values into it
/// (see `binary/FORMAT.md`), one by one as a [`Decode::Rendered`] group's [`EncodeFn`] (or a
/// walk's [`TakeFn`]) takes them off the record's bytes: a number or `bool` as its [`Typed`]
/// value where the reader can apply its placeholder's spec to it, a `&str` under `{}` as its
/// bytes, anything else as the text its placeholder rendered, spec applied; texts through the
/// block's [`TextTable`]. Written straight into the block, with no list of values in between:
/// that list and the loop over it were about an eighth of the writer's instructions on a mix
/// of server records (callgrind, `tachylog-bench --child tachylog throughput_mix_binary`). The
/// binary encoder writes the record's head before and takes the bytes back if a value fails.
/// Not a public API.
#[doc(hidden)]
#[derive(Default)]
pub struct ValueWriter {
    /// The open block: header space, then payload; empty between blocks.
    pub(crate) block: Vec<u8>,
    /// The open block's repeated texts.
    pub(crate) texts: TextTable,
    /// Values written for the record so far.
    pub(crate) written: usize,
    /// Whether a reader takes the site's specs from its format string; when not, it writes a
    /// typed value as `{}` does.
    pub(crate) specs_read: bool,
    /// Bit `i`, when `specs_read`: the reader's spec of placeholder `i` is the writer's and
    /// takes typed values (no count argument, none past 32), so a value under it may be kept
    /// typed. None past the 64th placeholder.
    pub(crate) typed_ok: u64,
    /// Set under a limit on a message's length: the record's typed values, by placeholder,
    /// and its texts' length, for the encoder to measure the line the text sink would write.
    pub(crate) measuring: bool,
    pub(crate) measured_typed: Vec<(usize, Typed)>,
    pub(crate) measured_text: usize,
}

/// Which values a message argument's formatting trait lets the binary log keep typed. Not a
/// public API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typing {
    /// Always text (`{:p}`).
    Never,
    /// `Display`: under a plain `{}` always, under any other spec the reader knows.
    Display,
    /// `Debug`, the radix and exponent traits: under a spec the reader knows, but for a
    /// negative integer of at most 64 bits, whose radix digits depend on a width
    /// [`Typed::I64`] does not keep.
    OtherTrait,
}

impl ValueWriter {
    /// An empty block's writer; `measuring` under a limit on a message's length.
    pub(crate) fn new(measuring: bool) -> Self {
        ValueWriter {
            measuring,
            ..ValueWriter::default()
        }
    }

    /// Readies the writer for a record's values.
    #[inline]
    pub(crate) fn start_record(&mut self) {
        self.written = 0;
        if self.measuring {
            self.measured_typed.clear();
            self.measured_text = 0;
        }
    }

    /// Writes the value of placeholder `index` off `decoder`: typed when `typing` and the
    /// reader's spec allow and the codec has a type, its bytes when `{}` of it is them, else
    /// rendered. The caller counts it in `written`.
    #[inline(always)]
    pub(crate) fn push<C: crate::codec::Codec>(
        &mut self,
        index: usize,
        typing: Typing,
        placeholder: &Placeholder,
        render: RenderFn,
        decoder: &mut Decoder<'_>,
    ) -> Result<(), RenderError> {
        let spec_ok = index < 64 && self.typed_ok >> index & 1 == 1;
        match typing {
            // A `&str` under `{}`: copied once, from the record into the block (a constant
            // test for every other codec).
            Typing::Display if C::PLAIN_IS_BYTES && placeholder.plain => {
                if let Some(text) = decoder.plain_text::<C>() {
                    self.put_text(&text);
                    return Ok(());
                }
            }
            Typing::Display if spec_ok || (placeholder.plain && !self.specs_read) => {
                if let Some(value) = decoder.typed::<C>() {
                    self.put_typed(index, value);
                    return Ok(());
                }
            }
            Typing::OtherTrait if spec_ok => {
                let mut ahead = decoder.clone();
                match ahead.typed::<C>() {
                    Some(Typed::I64(v)) if v < 0 => {}
                    Some(value) => {
                        *decoder = ahead;
                        self.put_typed(index, value);
                        return Ok(());
                    }
                    None => {}
                }
            }
            _ => {}
        }
        self.put_rendered(placeholder, render, decoder)
    }

    /// A value [`ValueWriter::push`] does not keep typed: rendered alone, spec applied,
    /// straight into the block after room for its tag and length, then kept there as a new
    /// text or taken back for a reference to the same text defined earlier. Rendered into a
    /// scratch string and copied, each value cost about 26 instructions more (callgrind,
    /// `tachylog-bench`'s `throughput_user_binary`, two such values a record). Out of line, so
    /// that the typed values' path, inlined into every group's function, keeps a small frame.
    #[inline(never)]
    fn put_rendered(
        &mut self,
        placeholder: &Placeholder,
        render: RenderFn,
        decoder: &mut Decoder<'_>,
    ) -> Result<(), RenderError> {
        let start = self.block.len();
        self.block.extend_from_slice(&[0, 0]);
        let result = placeholder.render_bare(render, decoder, &mut TextBuf::new(&mut self.block));
        if result.is_err() {
            self.block.truncate(start);
            return result;
        }
        if self.measuring {
            self.measured_text += self.block.len() - start - 2;
        }
        self.texts.put_appended(&mut self.block, start);
        Ok(())
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put_typed(&mut self, index: usize, value: Typed) {
        // The closure inlined too: then a value's type is known where it is written, and the
        // match over the types folds away (the closure's call was 80 of the 782 instructions a
        // record of `throughput_mix_binary`'s back end, callgrind).
        append_with(
            &mut self.block,
            MAX_TYPED,
            #[cfg_attr(not(debug_assertions), inline(always))]
            |w| w.typed(value),
        );
        if self.measuring {
            self.measured_typed.push((index, value));
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put_text(&mut self, text: &str) {
        self.texts.put(&mut self.block, text);
        if self.measuring {
            self.measured_text += text.len();
        }
    }
}

/// Writes a group of message values off the decoder into the binary log's open block
/// ([`ValueWriter`]), one per placeholder, as [`MessagesFn`] renders them: a record's values
/// from its first, after [`ValueWriter::start_record`].
pub type EncodeFn =
    fn(&mut Decoder<'_>, &'static [Placeholder], &mut ValueWriter) -> Result<(), RenderError>;

/// Writes one message value off the decoder into the binary log's open block, as [`EncodeFn`]
/// writes a group's, for a value read one by one (a site with fields, counts or more than eight
/// arguments).
pub type TakeFn = fn(&mut Decoder<'_>, &Placeholder, &mut ValueWriter) -> Result<(), RenderError>;

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

impl Count {
    /// The count for one record: `Arg` reads it off `decoder`.
    #[inline(always)]
    fn resolve(self, decoder: &mut Decoder<'_>) -> Option<usize> {
        match self {
            Count::None => None,
            Count::Literal(n) => Some(n),
            Count::Arg => Some(decoder.count()),
        }
    }
}

/// How the back end reads a call's arguments, in the order they travel: a constant of the
/// arguments' types (`Args::DECODE`), so every call site whose arguments have the same types,
/// and the same formatting traits, points at the same one.
#[derive(Debug, Clone, Copy)]
pub enum Decode {
    /// A width or precision argument (`usize`), read by the placeholder it belongs to.
    Count,
    /// The value of the site's next placeholder: appended by the renderer, or taken for the
    /// binary log by the `TakeFn` (typed where its trait and spec allow).
    Message(RenderFn, TakeFn),
    /// The value of the site's next field, recorded by the push function; a native field's
    /// value also has the function that takes it for the binary log as it is.
    Field(PushFn, Option<FieldValueFn>),
    /// Arguments grouped together (the macro nests long lists by eight).
    List(&'static [Decode]),
    /// A group of message values only (no field, count or nested group), as
    /// [`Decode::group`] makes it. The macro's argument tuples get [`Decode::Rendered`]
    /// instead, but for an empty one: a message without arguments.
    Messages(&'static [Decode]),
    /// A group of message values like [`Decode::Messages`], with one function that renders
    /// them all beside their placeholders: generic over the group's argument types, so every
    /// call site with the same types shares it, and it calls each value's renderer directly
    /// (see `MessagesFn`). `items` are the same renderers, one by one, for a record read
    /// inside a longer, nested list.
    Rendered {
        /// The group's values, as `Messages` lists them.
        items: &'static [Decode],
        /// Renders the whole group.
        render: MessagesFn,
        /// Takes the whole group's values for the binary log.
        encode: EncodeFn,
        /// Every value's text is free of bytes that need escaping (numbers, `bool`): with
        /// clean literal text, the message is not scanned.
        escape_free: bool,
    },
}

/// Renders a group of message values, each after its placeholder's literal text: the
/// placeholders must be as many as the group's values, which the back end checks first.
///
/// Why one function per list of argument types: a loop over a list of renderers makes an
/// indirect call per value, each with its own prologue, spec and error plumbing. Here each
/// renderer is known at compile time, so it is inlined, and a `{}` gets the constant plain
/// spec, whose checks then fold away: about 8% fewer instructions per record than the loop
/// for `u64, i64, f64` (callgrind, `tachylog-bench --only tachylog,backend_iteration`).
pub type MessagesFn =
    fn(&mut Decoder<'_>, &'static [Placeholder], &mut TextBuf<'_>) -> Result<(), RenderError>;

impl Decode {
    /// A group of arguments, [`Decode::Messages`] when all of them are message values; for
    /// the tuples' `Args::DECODE`, so the check costs nothing at run time.
    #[doc(hidden)]
    pub const fn group(items: &'static [Decode]) -> Decode {
        let mut i = 0;
        while i < items.len() {
            if !matches!(items[i], Decode::Message(..)) {
                return Decode::List(items);
            }
            i += 1;
        }
        Decode::Messages(items)
    }

    /// [`Decode::group`], with `render` for a group of message values only (a non-empty one: an
    /// empty group is the message's tail, copied without a call).
    #[doc(hidden)]
    pub const fn rendered_group(
        items: &'static [Decode],
        render: MessagesFn,
        encode: EncodeFn,
        escape_free: bool,
    ) -> Decode {
        match Decode::group(items) {
            Decode::Messages(items) if !items.is_empty() => Decode::Rendered {
                items,
                render,
                encode,
                escape_free,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A site whose target or file holds a character the line escapes is never written raw:
    /// however it was built, `Site::new` says so, and the back end escapes it.
    #[test]
    fn a_site_with_hostile_metadata_is_not_plain() {
        let site = |target, file| Site::new(Level::Info, target, file, 1, "x", &[], "x", &[]);
        assert!(site("app::net", "src/net.rs").plain_metadata);
        assert!(!site("app\nERROR forged", "src/net.rs").plain_metadata);
        assert!(!site("app", "src/\u{202e}net.rs").plain_metadata);
        assert!(!site("app\u{85}", "f").plain_metadata);
    }

    #[test]
    fn scope_events_read_back_as_written_and_nothing_else_does() {
        let events = [
            ScopeEventKind::Begin {
                parent: 7,
                hold: Level::Trace,
                trigger: Level::Warn,
                max_records: 12,
                max_bytes: u64::MAX,
            },
            ScopeEventKind::Flush,
            ScopeEventKind::End { failed: true },
            ScopeEventKind::End { failed: false },
        ];
        for what in events {
            let event = ScopeEvent { scope: 99, what };
            assert_eq!(ScopeEvent::decode(&event.encode()), Some(event));
        }
        let mut unknown = ScopeEvent {
            scope: 1,
            what: ScopeEventKind::Flush,
        }
        .encode();
        unknown[8] = 9;
        assert_eq!(ScopeEvent::decode(&unknown), None);
        assert_eq!(ScopeEvent::decode(&[1; 8]), None, "too short");
        let mut bad_level = ScopeEvent {
            scope: 1,
            what: events[0],
        }
        .encode();
        bad_level[9] = 200;
        assert_eq!(ScopeEvent::decode(&bad_level), None);
    }

    #[test]
    fn each_call_site_kind_has_one_layout() {
        for kind in [
            KIND_CALL_SITE,
            KIND_CALL_SITE_TRACED,
            KIND_CALL_SITE_SCOPED,
            KIND_CALL_SITE_SCOPED_TRACED,
        ] {
            let layout = CallSiteLayout::of_kind(kind).unwrap();
            assert_eq!(layout.kind(), kind);
            assert!(
                layout.trace_offset() + TraceContext::ENCODED <= layout.extra() || !layout.traced
            );
        }
        for kind in [KIND_DYNAMIC, KIND_SCOPE_EVENT, KIND_DYNAMIC_SCOPED, 0, 8] {
            assert_eq!(CallSiteLayout::of_kind(kind), None);
        }
    }
}
