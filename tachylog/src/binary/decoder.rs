//! The binary log's reader side for one block's payload: the call-site and thread tables it
//! defines and the records that use them. Input is never trusted: any inconsistency ends the
//! block with an error naming the byte at fault; nothing here panics or allocates more than the
//! payload's size warrants.

use super::texts::MAX_TEXTS;
use super::wire::{unzigzag, Cursor};
use super::{flag, tag, value};
use crate::codec::plain::push_fixed;
use crate::codec::short_copy::append_from_padded;
use crate::codec::{TextBuf, Typed};
use crate::fields::{FieldValue, Fields};
use crate::format::escape::may_need_escape;
use crate::format::shaped::{self, Spec};
use crate::queue::registry::ThreadInfo;
use crate::record::TraceContext;
use crate::Level;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A call site's static parts, as a block defines them.
#[derive(Debug)]
pub(crate) struct SiteDef {
    pub(crate) level: Level,
    pub(crate) target: String,
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) format: String,
    pub(crate) literals: Vec<Piece>,
    pub(crate) tail: Piece,
    pub(crate) keys: Vec<String>,
    /// How each placeholder writes a typed value, from `format`: in a block of format version
    /// 2 or later, when `format` splits into `literals.len()` placeholders, one per
    /// placeholder. A typed value without one is written as `{}` writes it.
    pub(crate) specs: Vec<ValueSpec>,
    /// Neither the format string nor the message text around the values holds a byte that a
    /// text line escapes: a message of typed values only needs no scan.
    pub(crate) clean: bool,
    /// Unique to this definition in the process, unlike its address, which a later block's
    /// site may reuse: what a renderer's per-site caches are keyed by.
    pub(crate) serial: u64,
}

/// Bytes a [`Piece`] keeps padded, if it is that short.
const PADDED_PIECE: usize = 32;

/// A piece of a call site's message text (the text before a value, or after the last), kept
/// also padded with zeros to [`PADDED_PIECE`] bytes when it fits: appended as one fixed-width
/// store, where a copy of a length known only at run time tests the length in a ladder of
/// branches, which mispredict as the pieces of a line alternate (callgrind `--branch-sim`,
/// `tachylog cat` of `tachylog-bench`'s `throughput_mix_binary` log).
#[derive(Debug)]
pub(crate) struct Piece {
    text: String,
    padded: [u8; PADDED_PIECE],
}

impl Piece {
    fn new(text: String) -> Self {
        let mut padded = [0; PADDED_PIECE];
        if let Some(start) = padded.get_mut(..text.len()) {
            start.copy_from_slice(text.as_bytes());
        }
        Piece { text, padded }
    }

    /// Appends the piece to `out`.
    #[inline(always)]
    fn append_to(&self, out: &mut String) {
        if self.text.len() <= PADDED_PIECE {
            // SAFETY: `padded` starts with the text's bytes, so the bytes appended are the
            // text, whole UTF-8, and `out` stays a `String`.
            append_from_padded(unsafe { out.as_mut_vec() }, &self.padded, self.text.len());
        } else {
            TextBuf::of_string(out).push_str(&self.text);
        }
    }
}

impl std::ops::Deref for Piece {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

/// How a placeholder writes a typed value, decided once for its call site.
#[derive(Debug)]
pub(crate) enum ValueSpec {
    /// `{}`: as the live back end's fast path writes it.
    Plain,
    /// `{:.N}` and nothing else that changes a float's text: a float by the fixed-places
    /// writer, straight (the usual spec of a measurement); any other value by the spec.
    Places(usize, Spec),
    /// Any other spec.
    Shaped(Spec),
}

impl ValueSpec {
    fn of(spec: Spec) -> Self {
        match spec.places_only() {
            _ if spec.is_plain() => ValueSpec::Plain,
            // A count above what a writer keeps typed values under is refused by the spec.
            Some(places) if spec.takes_typed() => ValueSpec::Places(places, spec),
            _ => ValueSpec::Shaped(spec),
        }
    }
}

/// One record read back, with reusable buffers: see [`crate::read::Record`].
#[derive(Debug, Clone)]
pub(crate) struct Decoded {
    pub(crate) unix_nanos: i64,
    pub(crate) level: Level,
    pub(crate) site: Option<Arc<SiteDef>>,
    /// A text record's own metadata (unused for a call-site record).
    pub(crate) target: String,
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) thread: Arc<ThreadInfo>,
    pub(crate) message: String,
    /// Each message value's text in `message`, with its stored type.
    pub(crate) args: Vec<(Range<usize>, ArgKind)>,
    /// A call-site record whose message holds no byte a text line escapes: its site's text
    /// is clean and so is each of its text values (a number's text always is).
    pub(crate) clean_message: bool,
    pub(crate) fields: Fields,
    pub(crate) backtrace: bool,
    /// Recovered from a dead process's spool.
    pub(crate) recovered: bool,
    pub(crate) trace: Option<TraceContext>,
    pub(crate) static_metadata: bool,
}

/// How a message value was stored.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgKind {
    Typed(Typed),
    Text,
}

impl Default for Decoded {
    fn default() -> Self {
        Decoded {
            unix_nanos: 0,
            level: Level::Info,
            site: None,
            target: String::new(),
            file: String::new(),
            line: 0,
            thread: Arc::new(ThreadInfo::new("-".into(), 0)),
            message: String::new(),
            args: Vec::new(),
            clean_message: false,
            fields: Fields::new(),
            backtrace: false,
            recovered: false,
            trace: None,
            static_metadata: false,
        }
    }
}

/// Walks one block's payload.
pub(crate) struct BlockDecoder {
    /// The block's format version: from 2, typed values take their placeholder's spec.
    version: u8,
    sites: Vec<Arc<SiteDef>>,
    /// The texts the block defined so far (`value::TEXT_NEW`), by number.
    texts: Vec<TableText>,
    threads: Vec<Arc<ThreadInfo>>,
    last_nanos: i64,
    /// Where the next entry starts in the payload.
    pos: usize,
}

impl BlockDecoder {
    /// A decoder for a payload of format `version` whose first 8 bytes (the base time) were
    /// checked to be there.
    pub(crate) fn new(payload: &[u8], version: u8) -> Option<Self> {
        let base = i64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
        Some(BlockDecoder {
            version,
            sites: Vec::new(),
            texts: Vec::new(),
            threads: Vec::new(),
            last_nanos: base,
            pos: 8,
        })
    }

    /// The next record of `payload` into `out`: `None` at the end of the block, `Err` with
    /// the offset in the payload of the entry at fault (the rest of the block is then
    /// unreadable).
    pub(crate) fn next(
        &mut self,
        payload: &[u8],
        out: &mut Decoded,
    ) -> Option<Result<(), (usize, &'static str)>> {
        loop {
            let start = self.pos;
            let rest = payload.get(start..)?;
            if rest.is_empty() {
                return None;
            }
            let mut cursor = Cursor::new(rest);
            let outcome = self.entry(&mut cursor, out);
            self.pos = start + cursor.position();
            match outcome {
                Ok(true) => return Some(Ok(())),
                Ok(false) => continue,
                Err(why) => {
                    self.pos = payload.len();
                    return Some(Err((start, why)));
                }
            }
        }
    }

    /// One entry; `true` when it was a record.
    fn entry(&mut self, c: &mut Cursor<'_>, out: &mut Decoded) -> Result<bool, &'static str> {
        match c.u8().ok_or("empty entry")? {
            tag::SITE => {
                let reference = c.varint().ok_or("bad site reference")?;
                if reference != self.sites.len() as u64 {
                    return Err("call sites must be defined in order");
                }
                let mut site = SiteDef::read(c).ok_or("malformed call site")?;
                if self.version >= 2 {
                    let specs = shaped::site_specs(&site.format, site.literals.len());
                    site.specs = specs.into_iter().flatten().map(ValueSpec::of).collect();
                }
                self.sites.push(Arc::new(site));
                Ok(false)
            }
            tag::THREAD => {
                let reference = c.varint().ok_or("bad thread reference")?;
                if reference != self.threads.len() as u64 {
                    return Err("threads must be defined in order");
                }
                let id = c.varint().ok_or("bad thread id")?;
                let name = c.str().ok_or("bad thread name")?;
                self.threads.push(Arc::new(ThreadInfo::named(name, id)));
                Ok(false)
            }
            tag::SITE_RECORD => {
                let index = c.varint().ok_or("bad site reference")?;
                let index = usize::try_from(index)
                    .ok()
                    .filter(|&i| i < self.sites.len())
                    .ok_or("record of an undefined call site")?;
                self.header(c, out)?;
                let site = &self.sites[index];
                // The same site as the record before (most of the time): no reference count
                // touched.
                if !out.site.as_ref().is_some_and(|s| Arc::ptr_eq(s, site)) {
                    out.site = Some(site.clone());
                }
                out.level = site.level;
                out.message.clear();
                out.args.clear();
                // Version 1 blocks have no text table.
                let table = self.version >= 2;
                let mut clean = site.clean;
                for (index, literal) in site.literals.iter().enumerate() {
                    literal.append_to(&mut out.message);
                    let start = out.message.len();
                    let spec = site.specs.get(index).unwrap_or(&ValueSpec::Plain);
                    let kind = message_value(c, &mut self.texts, table, out, spec, &mut clean)?;
                    out.args.push((start..out.message.len(), kind));
                }
                out.clean_message = clean;
                site.tail.append_to(&mut out.message);
                out.fields.clear();
                for key in &site.keys {
                    let tag = c.u8().ok_or("malformed field")?;
                    match read_text(tag, c, &mut self.texts, table).ok_or("malformed text")? {
                        Some(text) => {
                            let text = text.resolve(&self.texts).ok_or("undefined text")?;
                            out.fields.push_value(key, FieldValue::Str(text));
                        }
                        None => {
                            let value = field_value(tag, c).ok_or("malformed field")?;
                            out.fields.push_value(key, value);
                        }
                    }
                }
                // Its target and file come from the file, not from this program: escaped.
                out.static_metadata = false;
                Ok(true)
            }
            tag::TEXT_RECORD => {
                // What the writer took from its own program is, to a reader, bytes of a file:
                // its target and file are escaped like any other run-time text.
                self.header(c, out)?;
                out.static_metadata = false;
                let level = c.u8().and_then(Level::from_u8).ok_or("bad level")?;
                out.level = level;
                out.site = None;
                out.target.clear();
                out.target.push_str(c.str().ok_or("bad target")?);
                out.file.clear();
                out.file.push_str(c.str().ok_or("bad file")?);
                out.line = c.varint_u32().ok_or("bad line")?;
                out.message.clear();
                out.message.push_str(c.str().ok_or("bad message")?);
                out.args.clear();
                out.clean_message = false;
                out.fields.clear();
                let spans = c.varint().ok_or("bad span count")?;
                for _ in 0..spans {
                    out.fields.begin_span(c.str().ok_or("bad span name")?);
                    keyed_fields(c, &mut out.fields).ok_or("malformed span field")?;
                }
                out.fields.begin_event();
                keyed_fields(c, &mut out.fields).ok_or("malformed field")?;
                Ok(true)
            }
            _ => Err("unknown entry tag"),
        }
    }

    /// The part both kinds of records share: time, thread, flags (returned), trace context.
    #[inline(always)]
    fn header(&mut self, c: &mut Cursor<'_>, out: &mut Decoded) -> Result<u8, &'static str> {
        let delta = unzigzag(c.varint().ok_or("bad timestamp")?);
        self.last_nanos = self.last_nanos.wrapping_add(delta);
        out.unix_nanos = self.last_nanos;
        let thread = c.varint().ok_or("bad thread reference")?;
        let thread = usize::try_from(thread)
            .ok()
            .and_then(|i| self.threads.get(i))
            .ok_or("record of an undefined thread")?;
        if !Arc::ptr_eq(&out.thread, thread) {
            out.thread = thread.clone();
        }
        let flags = c.u8().ok_or("bad flags")?;
        if flags & !flag::KNOWN != 0 {
            return Err("unknown record flags");
        }
        out.backtrace = flags & flag::BACKTRACE != 0;
        out.recovered = flags & flag::RECOVERED != 0;
        out.trace = if flags & flag::TRACE != 0 {
            let bytes = c.take(TraceContext::ENCODED).ok_or("short trace context")?;
            TraceContext::decode(bytes)
        } else {
            None
        };
        Ok(flags)
    }
}

/// Where a call site's definition is read from: a binary log's block (varints, strict UTF-8) or
/// a spool's `defs` file (fixed widths). The parts and their order are the same in both.
pub(crate) trait SiteDefSource {
    fn byte(&mut self) -> Option<u8>;
    fn text(&mut self) -> Option<String>;
    /// A line number or a count.
    fn number(&mut self) -> Option<u32>;
}

impl SiteDefSource for Cursor<'_> {
    fn byte(&mut self) -> Option<u8> {
        self.u8()
    }
    fn text(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }
    fn number(&mut self) -> Option<u32> {
        self.varint_u32()
    }
}

impl SiteDef {
    /// `None` when the bytes end early or hold something no writer writes.
    pub(crate) fn read(from: &mut impl SiteDefSource) -> Option<SiteDef> {
        fn texts(from: &mut impl SiteDefSource) -> Option<Vec<String>> {
            // Each text takes at least a byte, so a count larger than the input fails when the
            // input ends, without a reservation of that size.
            (0..from.number()?).map(|_| from.text()).collect()
        }
        let level = Level::from_u8(from.byte()?)?;
        let (target, file, line) = (from.text()?, from.text()?, from.number()?);
        let (format, literals, tail) = (from.text()?, texts(from)?, from.text()?);
        let clean = ![&format, &tail]
            .into_iter()
            .chain(&literals)
            .any(|text| may_need_escape(text.as_bytes()));
        let (literals, tail) = (
            literals.into_iter().map(Piece::new).collect(),
            Piece::new(tail),
        );
        Some(SiteDef {
            level,
            target,
            file,
            line,
            format,
            literals,
            tail,
            keys: texts(from)?,
            specs: Vec::new(),
            clean,
            serial: {
                static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);
                NEXT_SERIAL.fetch_add(1, Ordering::Relaxed)
            },
        })
    }
}

/// A message value: its text appended to `out.message` (a typed value's with its
/// placeholder's `spec`, or as `{}` writes it without one), and how it was stored. `clean`
/// turns false if it is a text that a text line escapes. `texts` and `table` as [`read_text`]
/// takes them.
fn message_value(
    c: &mut Cursor<'_>,
    texts: &mut Vec<TableText>,
    table: bool,
    out: &mut Decoded,
    spec: &ValueSpec,
    clean: &mut bool,
) -> Result<ArgKind, &'static str> {
    let tag = c.u8().ok_or("malformed value")?;
    // Numbers first: they are most values, and no text tag is tried on them.
    if let Some(typed) = typed_value(tag, c) {
        let mut message = TextBuf::of_string(&mut out.message);
        match spec {
            ValueSpec::Plain => typed.render(&mut message),
            ValueSpec::Places(places, spec) => {
                let written = match typed {
                    Typed::F64(v) => push_fixed(v, *places, &mut message),
                    Typed::F32(v) => push_fixed(v, *places, &mut message),
                    _ => false,
                };
                if !written {
                    shaped::render_typed(&mut out.message, typed, spec)?;
                }
            }
            ValueSpec::Shaped(spec) => shaped::render_typed(&mut out.message, typed, spec)?,
        }
        return Ok(ArgKind::Typed(typed));
    }
    let text = read_text(tag, c, texts, table)
        .ok_or("malformed text")?
        .ok_or("malformed value")?;
    // A table's text was scanned once, when the block defined it; and the scan reads the
    // text where it is, not the copy just written (a load of bytes still in the store
    // buffer stalls).
    let text = match text {
        TextAt::Here(text) => {
            *clean = *clean && !may_need_escape(text.as_bytes());
            text
        }
        TextAt::Table(number) => {
            let entry = texts.get(number).ok_or("undefined text")?;
            *clean = *clean && entry.clean;
            &entry.text
        }
    };
    TextBuf::of_string(&mut out.message).push_str(text);
    Ok(ArgKind::Text)
}

/// A number's or `bool`'s payload, after its `tag`.
fn typed_value(tag: u8, c: &mut Cursor<'_>) -> Option<Typed> {
    Some(match tag {
        value::U64 => Typed::U64(c.varint()?),
        value::I64 => Typed::I64(unzigzag(c.varint()?)),
        value::U128 => Typed::U128(u128::from_le_bytes(c.array()?)),
        value::I128 => Typed::I128(i128::from_le_bytes(c.array()?)),
        value::F64 => Typed::F64(f64::from_bits(u64::from_le_bytes(c.array()?))),
        value::F32 => Typed::F32(f32::from_bits(u32::from_le_bytes(c.array()?))),
        value::TRUE => Typed::Bool(true),
        value::FALSE => Typed::Bool(false),
        _ => return None,
    })
}

/// A text a block defined, with whether a text line would escape none of its bytes.
struct TableText {
    text: String,
    clean: bool,
}

/// A text value of a call-site record, where it is.
enum TextAt<'a> {
    /// In the payload.
    Here(&'a str),
    /// The block's text of this number (perhaps not defined: a forged reference).
    Table(usize),
}

impl<'a> TextAt<'a> {
    fn resolve<'t>(self, texts: &'t [TableText]) -> Option<&'t str>
    where
        'a: 't,
    {
        match self {
            TextAt::Here(text) => Some(text),
            TextAt::Table(number) => texts.get(number).map(|entry| entry.text.as_str()),
        }
    }
}

/// The text after `tag`: `Some(None)` when `tag` is not a text's, `None` when the bytes are
/// malformed. A defined text is added to `texts` (never more than a writer defines); a block
/// without a text table (`table`: version 1) has only texts in full.
fn read_text<'a>(
    tag: u8,
    c: &mut Cursor<'a>,
    texts: &mut Vec<TableText>,
    table: bool,
) -> Option<Option<TextAt<'a>>> {
    Some(Some(match tag {
        value::STR => TextAt::Here(c.str()?),
        value::TEXT_NEW | value::TEXT_REF if !table => return None,
        value::TEXT_NEW if texts.len() < MAX_TEXTS as usize => {
            let text = c.str()?;
            texts.push(TableText {
                text: text.to_string(),
                clean: !may_need_escape(text.as_bytes()),
            });
            TextAt::Table(texts.len() - 1)
        }
        value::TEXT_REF => TextAt::Table(usize::try_from(c.varint()?).ok()?),
        value::TEXT_NEW => return None,
        _ => return Some(None),
    }))
}

/// A typed value's payload, after its `tag`.
fn field_value<'a>(tag: u8, c: &mut Cursor<'a>) -> Option<FieldValue<'a>> {
    Some(match tag {
        value::NULL => FieldValue::Null,
        value::TRUE => FieldValue::Bool(true),
        value::FALSE => FieldValue::Bool(false),
        value::I64 => FieldValue::I64(unzigzag(c.varint()?)),
        value::U64 => FieldValue::U64(c.varint()?),
        value::F64 => FieldValue::F64(f64::from_bits(u64::from_le_bytes(c.array()?))),
        value::I128 => FieldValue::I128(i128::from_le_bytes(c.array()?)),
        value::U128 => FieldValue::U128(u128::from_le_bytes(c.array()?)),
        value::STR => FieldValue::Str(c.str()?),
        _ => return None,
    })
}

/// A count, then that many keys with their values.
fn keyed_fields(c: &mut Cursor<'_>, fields: &mut Fields) -> Option<()> {
    for _ in 0..c.varint()? {
        let key = c.str()?;
        let tag = c.u8()?;
        let value = field_value(tag, c)?;
        fields.push_value(key, value);
    }
    Some(())
}
