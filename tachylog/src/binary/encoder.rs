//! The binary log's writer side: one record at a time into an open block, whose call-site and
//! thread tables start empty, so every block can be read on its own (see `FORMAT.md`). Back end
//! only; no date-time, pattern or escaping work: a call site's message is walked once to find
//! its values, which are stored without the literal text around them.

use super::texts::TextTable;
use super::wire::{put_str, put_varint, zigzag};
use super::{flag, tag, value, BLOCK_TARGET, HEADER, MAX_PAYLOAD, SYNC, VERSION};
use crate::codec::{Decoder, TextBuf, Typed};
use crate::fields::{FieldValue, Fields};
use crate::format::message::take_located;
use crate::format::pattern::{render_message, Message, RecordView};
use crate::format::shaped::{self, Spec};
use crate::format::AddressHasher;
use crate::queue::registry::ThreadInfo;
use crate::record::{Decode, MessageValue, MessageValues, Site, TraceContext};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::BuildHasherDefault;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Tables keyed by addresses and serial numbers: one multiply, not SipHash, per look-up.
type Table = HashMap<u64, u32, BuildHasherDefault<AddressHasher>>;

/// What a reader takes from a call site's format string (`FORMAT.md`): its specs, when the
/// format string splits into the site's placeholders, and so which values may stay typed.
#[derive(Debug, Default)]
struct ReaderSpecs {
    specs: Option<Vec<Spec>>,
    /// Per placeholder: the reader's spec is the writer's (plain exactly where the writer's
    /// placeholder is) and takes typed values (`Spec::takes_typed`).
    typed_ok: Vec<bool>,
}

impl ReaderSpecs {
    fn of(site: &Site) -> ReaderSpecs {
        let Some(specs) = shaped::site_specs(site.format, site.message.len()) else {
            return ReaderSpecs::default();
        };
        let typed_ok = specs
            .iter()
            .zip(site.message)
            .map(|(spec, placeholder)| {
                spec.takes_typed() && spec.is_plain_but_for_trait() == placeholder.plain
            })
            .collect();
        ReaderSpecs {
            specs: Some(specs),
            typed_ok,
        }
    }
}

/// Encodes records into blocks.
pub(crate) struct Encoder {
    /// The open block: header space, then payload; empty between blocks.
    block: Vec<u8>,
    /// Call sites defined in the open block, by address, with their reference.
    sites: Table,
    /// Threads defined in the open block, by registration serial, with their reference.
    threads: Table,
    /// The last site and thread looked up, (key, reference): records come in runs from one
    /// thread and often from one site, and a hit skips the table (whose probe was a fifth of
    /// the encoder's time, `perf annotate` of `throughput_binary`). `u64::MAX`: none.
    last_site: (u64, u32),
    last_thread: (u64, u32),
    /// The timestamp of the block's previous record (its base before the first).
    last_nanos: i64,
    /// Bytes of formatted message kept, as the text line keeps them.
    max_message: usize,
    message: String,
    fields: Fields,
    /// A call site's values taken straight off the record's bytes (the fast path).
    typed: MessageValues,
    /// The open block's repeated texts.
    texts: TextTable,
    /// Every call site's [`ReaderSpecs`], by address, kept across blocks: a site's format
    /// string is parsed once.
    reader_specs: HashMap<u64, Arc<ReaderSpecs>, BuildHasherDefault<AddressHasher>>,
    /// The site whose specs `specs` and `typed` hold (`u64::MAX`: none).
    specs_site: u64,
    specs: Arc<ReaderSpecs>,
}

impl Encoder {
    pub(crate) fn new(max_message: usize) -> Self {
        Encoder {
            block: Vec::new(),
            sites: Table::default(),
            threads: Table::default(),
            last_site: (u64::MAX, 0),
            last_thread: (u64::MAX, 0),
            last_nanos: 0,
            max_message,
            message: String::new(),
            fields: Fields::new(),
            typed: MessageValues::default(),
            texts: TextTable::new(),
            reader_specs: HashMap::default(),
            specs_site: u64::MAX,
            specs: Arc::default(),
        }
    }

    /// Loads `site`'s [`ReaderSpecs`] into `specs` and `typed`, unless they hold them already.
    #[inline]
    fn load_specs(&mut self, site: &'static Site) {
        let key = site as *const Site as usize as u64;
        if self.specs_site == key {
            return;
        }
        let specs = self
            .reader_specs
            .entry(key)
            .or_insert_with(|| Arc::new(ReaderSpecs::of(site)));
        self.specs = specs.clone();
        self.typed.specs_read = specs.specs.is_some();
        self.typed.typed_ok.clone_from(&specs.typed_ok);
        self.specs_site = key;
    }

    /// Appends one record to the open block; returns whether the block is due to be closed.
    pub(crate) fn encode(&mut self, record: &RecordView<'_>) -> bool {
        if self.block.is_empty() {
            self.block.resize(HEADER, 0);
            self.block
                .extend_from_slice(&record.unix_nanos.to_le_bytes());
            self.last_nanos = record.unix_nanos;
            self.sites.clear();
            self.threads.clear();
            self.texts.reset(0);
            self.last_site = (u64::MAX, 0);
            self.last_thread = (u64::MAX, 0);
        }
        let thread = self.thread_ref(record.thread);
        let delta = zigzag(record.unix_nanos.wrapping_sub(self.last_nanos));
        self.last_nanos = record.unix_nanos;
        let mut flags = 0;
        if record.backtrace {
            flags |= flag::BACKTRACE;
        }
        if record.trace.is_some() {
            flags |= flag::TRACE;
        }
        if record.recovered {
            flags |= flag::RECOVERED;
        }
        let record_start = self.block.len();
        let texts_at_start = self.texts.count();
        let typed = match &record.message {
            Message::Site(site_message) if self.take_typed(site_message) => {
                self.typed_record(site_message, delta, thread, flags, record);
                true
            }
            other => {
                render_message(other, &mut self.message, &mut self.fields, self.max_message);
                self.text_record(record, delta, thread, flags);
                false
            }
        };
        if self.block.len() - HEADER > MAX_PAYLOAD {
            // One record larger than a reader takes (a message or field of hundreds of MiB
            // with no `max_message_bytes`): its message cut, its fields left out.
            self.block.truncate(record_start);
            self.texts.reset(texts_at_start);
            if typed {
                let message = &record.message;
                render_message(
                    message,
                    &mut self.message,
                    &mut self.fields,
                    self.max_message,
                );
            }
            let mut keep = (MAX_PAYLOAD / 2).min(self.message.len());
            while !self.message.is_char_boundary(keep) {
                keep -= 1;
            }
            let removed = self.message.len() - keep;
            self.message.truncate(keep);
            let _ = write!(self.message, "…[truncated {removed} bytes]");
            self.fields.clear();
            self.text_record(record, delta, thread, flags);
        }
        self.block.len() >= HEADER + BLOCK_TARGET
    }

    /// A call-site record whose values [`Encoder::take_typed`] took: its head, the values
    /// (typed, or text through the block's table), then its fields.
    #[inline(always)]
    fn typed_record(
        &mut self,
        site_message: &crate::format::pattern::SiteMessage<'_>,
        delta: u64,
        thread: u32,
        flags: u8,
        record: &RecordView<'_>,
    ) {
        let has_fields = !site_message.site.fields.is_empty();
        let site = self.site_ref(site_message.site);
        let out = &mut self.block;
        let texts = &mut self.texts;
        let items = &self.typed.items;
        let trace = record.trace.as_ref();
        // The head and the typed values up to the first text, in one go.
        let mut next = 0;
        append_with(out, MAX_HEAD + MAX_TYPED * items.len(), |w| {
            w.site_record_head(site, delta, thread, flags, trace);
            while let Some(MessageValue::Typed(typed)) = items.get(next) {
                w.typed(*typed);
                next += 1;
            }
        });
        for item in &items[next..] {
            match item {
                MessageValue::Typed(typed) => append_with(out, MAX_TYPED, |w| w.typed(*typed)),
                MessageValue::Text(range) => {
                    texts.put(out, self.typed.text.get(range.clone()).unwrap_or(""))
                }
                MessageValue::Raw(raw) => {
                    texts.put(out, &raw.in_args(site_message.args).unwrap_or_default())
                }
            }
        }
        if has_fields {
            for field in self.fields.iter() {
                match field.value {
                    FieldValue::Str(text) => texts.put(out, text),
                    other => put_value(out, other),
                }
            }
        }
    }

    /// Takes a call-site record's message values into `self.typed` and its fields into
    /// `self.fields`: numbers and `bool` as their type under any spec a reader applies
    /// (`MessageValues::push`), the rest rendered alone, without the literal text around
    /// them. A site without fields whose arguments are message values only (a
    /// `Decode::Rendered` group, as most are) has them taken in one call; any other is walked
    /// value by value. `false` (then the record is stored as text): a value that failed to
    /// render, bytes that do not match the site, or a message that could pass
    /// `max_message_bytes` (the text line would cut it).
    #[inline]
    fn take_typed(&mut self, site_message: &crate::format::pattern::SiteMessage<'_>) -> bool {
        let site = site_message.site;
        self.load_specs(site);
        self.typed.clear();
        match (site_message.decode, site.fields) {
            (Decode::Rendered { items, encode, .. }, []) if items.len() == site.message.len() => {
                let mut decoder = Decoder::new(site_message.args);
                if encode(&mut decoder, site.message, &mut self.typed).is_err()
                    || decoder.is_malformed()
                {
                    return false;
                }
            }
            _ => {
                if !self.take_walked(site_message) {
                    return false;
                }
            }
        }
        if self.typed.items.len() != site.message.len() {
            return false;
        }
        if self.max_message != usize::MAX {
            // The text line cuts a longer message: measured, with the typed values rendered
            // (only under a limit).
            let mut scratch = std::mem::take(&mut self.message);
            scratch.clear();
            for (index, item) in self.typed.items.iter().enumerate() {
                if let MessageValue::Typed(typed) = item {
                    let spec = self.specs.specs.as_ref().and_then(|specs| specs.get(index));
                    match spec {
                        Some(spec) if !spec.is_plain() => {
                            if shaped::render_typed(&mut scratch, *typed, spec).is_err() {
                                self.message = scratch;
                                return false;
                            }
                        }
                        _ => typed.render(&mut TextBuf::of_string(&mut scratch)),
                    }
                }
            }
            let raw: usize = self
                .typed
                .items
                .iter()
                .map(|item| match item {
                    MessageValue::Raw(raw) => {
                        raw.in_args(site_message.args).map_or(0, |text| text.len())
                    }
                    _ => 0,
                })
                .sum();
            let literal: usize = site.message.iter().map(|p| p.literal.len()).sum();
            let len = scratch.len() + literal + site.tail.len() + self.typed.text.len() + raw;
            self.message = scratch;
            if len > self.max_message {
                return false;
            }
        }
        true
    }

    /// [`Encoder::take_typed`] for a site walked value by value, out of line: the values of
    /// the fast path stay in registers.
    #[inline(never)]
    fn take_walked(&mut self, site_message: &crate::format::pattern::SiteMessage<'_>) -> bool {
        self.fields.clear();
        self.fields.limit_values(self.max_message);
        take_located(site_message, &mut self.fields, &mut self.typed).is_ok()
            && !self.fields.has_spans()
            && self.fields.iter().count() == site_message.site.fields.len()
    }

    /// A record stored with its own metadata and its message as text (`self.message`,
    /// `self.fields`).
    fn text_record(&mut self, record: &RecordView<'_>, delta: u64, thread: u32, mut flags: u8) {
        if record.static_metadata {
            flags |= flag::STATIC_METADATA;
        }
        let out = &mut self.block;
        out.push(tag::TEXT_RECORD);
        put_varint(out, delta);
        put_varint(out, u64::from(thread));
        out.push(flags);
        put_trace(out, record.trace.as_ref());
        out.push(record.level as u8);
        put_str(out, record.target);
        put_str(out, record.file);
        put_varint(out, u64::from(record.line));
        put_str(out, &self.message);
        put_fields(out, &self.fields);
    }

    /// Closes the open block and hands its bytes (header and payload) to `write`; nothing when
    /// no record is open.
    pub(crate) fn close_block<R>(&mut self, write: impl FnOnce(&[u8]) -> R) -> Option<R> {
        if self.block.is_empty() {
            return None;
        }
        let payload = (self.block.len() - HEADER) as u32;
        let crc = crc32fast::hash(&self.block[HEADER..]);
        self.block[..6].copy_from_slice(&SYNC);
        self.block[6] = VERSION;
        self.block[7] = 0;
        self.block[8..12].copy_from_slice(&payload.to_le_bytes());
        self.block[12..16].copy_from_slice(&crc.to_le_bytes());
        let result = write(&self.block);
        self.block.clear();
        if self.block.capacity() > 4 * BLOCK_TARGET {
            self.block = Vec::new();
        }
        Some(result)
    }

    /// The reference of `thread` in the open block, defining it first if new.
    #[inline]
    fn thread_ref(&mut self, thread: &ThreadInfo) -> u32 {
        if self.last_thread.0 == thread.serial {
            return self.last_thread.1;
        }
        let reference = self.thread_ref_in_table(thread);
        self.last_thread = (thread.serial, reference);
        reference
    }

    fn thread_ref_in_table(&mut self, thread: &ThreadInfo) -> u32 {
        let next = self.threads.len() as u32;
        let reference = *self.threads.entry(thread.serial).or_insert(next);
        if reference == next {
            self.block.push(tag::THREAD);
            put_varint(&mut self.block, u64::from(reference));
            put_varint(&mut self.block, thread.id);
            put_str(&mut self.block, &thread.name);
        }
        reference
    }

    /// The reference of `site` in the open block, defining it first if new.
    #[inline]
    fn site_ref(&mut self, site: &'static Site) -> u32 {
        let key = site as *const Site as usize as u64;
        if self.last_site.0 == key {
            return self.last_site.1;
        }
        let reference = self.site_ref_in_table(site);
        self.last_site = (key, reference);
        reference
    }

    fn site_ref_in_table(&mut self, site: &'static Site) -> u32 {
        let next = self.sites.len() as u32;
        let reference = *self
            .sites
            .entry(site as *const Site as usize as u64)
            .or_insert(next);
        if reference == next {
            let out = &mut self.block;
            out.push(tag::SITE);
            put_varint(out, u64::from(reference));
            out.push(site.level as u8);
            put_str(out, site.target);
            put_str(out, site.file);
            put_varint(out, u64::from(site.line));
            put_str(out, site.format);
            put_varint(out, site.message.len() as u64);
            for placeholder in site.message {
                put_str(out, placeholder.literal);
            }
            put_str(out, site.tail);
            put_varint(out, site.fields.len() as u64);
            for key in site.fields {
                put_str(out, key);
            }
        }
        reference
    }
}

/// The most bytes a call-site record's head takes: tag, three varints, flags, trace context.
const MAX_HEAD: usize = 1 + 5 + 10 + 5 + 1 + TraceContext::ENCODED;

/// The most bytes one typed value takes: its tag and 16 bytes of `u128`.
const MAX_TYPED: usize = 17;

/// Appends at most `max` bytes to `out`, written by `write` straight into its spare capacity:
/// one capacity check for a record's head and values instead of one per byte, and no staging
/// buffer (one on the stack, written a byte at a time and copied out in 16-byte loads, stalled
/// on store forwarding: a third of the encoder's time in `perf annotate`).
#[inline(always)]
fn append_with(out: &mut Vec<u8>, max: usize, write: impl FnOnce(&mut SpareWriter<'_>)) {
    out.reserve(max);
    let mut writer = SpareWriter {
        spare: &mut out.spare_capacity_mut()[..max],
        len: 0,
    };
    write(&mut writer);
    let len = writer.len;
    // SAFETY: `writer` writes its bytes in order, each at index `len` of `spare` before `len`
    // moves past it (a write past `spare`, the first `max` bytes of spare capacity, panics on
    // its bounds check first), so the `len` bytes after the vector's length are initialised
    // and within its capacity.
    unsafe { out.set_len(out.len() + len) };
}

/// Writes bytes, in order, into a vector's spare capacity ([`append_with`]).
struct SpareWriter<'a> {
    spare: &'a mut [MaybeUninit<u8>],
    len: usize,
}

impl SpareWriter<'_> {
    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.spare[self.len].write(byte);
        self.len += 1;
    }

    #[inline(always)]
    fn slice<const N: usize>(&mut self, bytes: [u8; N]) {
        let spare = &mut self.spare[self.len..self.len + N];
        for (slot, byte) in spare.iter_mut().zip(bytes) {
            slot.write(byte);
        }
        self.len += N;
    }

    #[inline(always)]
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte(value as u8 | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    /// A call-site record's head, on both of its paths (typed values or text); at most
    /// [`MAX_HEAD`] bytes.
    #[inline(always)]
    fn site_record_head(
        &mut self,
        site: u32,
        delta: u64,
        thread: u32,
        flags: u8,
        trace: Option<&TraceContext>,
    ) {
        self.byte(tag::SITE_RECORD);
        self.varint(u64::from(site));
        self.varint(delta);
        self.varint(u64::from(thread));
        self.byte(flags);
        if let Some(trace) = trace {
            self.slice(trace.encode());
        }
    }

    /// A message value kept as its type, tagged as [`put_value`] tags it; at most [`MAX_TYPED`]
    /// bytes.
    #[inline(always)]
    fn typed(&mut self, typed: Typed) {
        match typed {
            Typed::U64(v) => {
                self.byte(value::U64);
                self.varint(v);
            }
            Typed::I64(v) => {
                self.byte(value::I64);
                self.varint(zigzag(v));
            }
            Typed::F64(v) => {
                self.byte(value::F64);
                self.slice(v.to_bits().to_le_bytes());
            }
            Typed::F32(v) => {
                self.byte(value::F32);
                self.slice(v.to_bits().to_le_bytes());
            }
            Typed::U128(v) => {
                self.byte(value::U128);
                self.slice(v.to_le_bytes());
            }
            Typed::I128(v) => {
                self.byte(value::I128);
                self.slice(v.to_le_bytes());
            }
            Typed::Bool(v) => self.byte(if v { value::TRUE } else { value::FALSE }),
        }
    }
}

fn put_trace(out: &mut Vec<u8>, trace: Option<&TraceContext>) {
    if let Some(trace) = trace {
        out.extend_from_slice(&trace.encode());
    }
}

/// A typed value: its tag, then its payload.
fn put_value(out: &mut Vec<u8>, v: FieldValue<'_>) {
    match v {
        FieldValue::Null => out.push(value::NULL),
        FieldValue::Bool(true) => out.push(value::TRUE),
        FieldValue::Bool(false) => out.push(value::FALSE),
        FieldValue::I64(v) => {
            out.push(value::I64);
            put_varint(out, zigzag(v));
        }
        FieldValue::U64(v) => {
            out.push(value::U64);
            put_varint(out, v);
        }
        FieldValue::F64(v) => {
            out.push(value::F64);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        FieldValue::I128(v) => {
            out.push(value::I128);
            out.extend_from_slice(&v.to_le_bytes());
        }
        FieldValue::U128(v) => {
            out.push(value::U128);
            out.extend_from_slice(&v.to_le_bytes());
        }
        FieldValue::Str(s) => {
            out.push(value::STR);
            put_str(out, s);
        }
    }
}

/// A text record's fields: the spans with theirs, then the record's own, keyed.
fn put_fields(out: &mut Vec<u8>, fields: &Fields) {
    put_varint(out, fields.spans().count() as u64);
    for span in fields.spans() {
        put_str(out, span.name());
        put_varint(out, span.fields().count() as u64);
        for field in span.fields() {
            put_str(out, field.key);
            put_value(out, field.value);
        }
    }
    put_varint(out, fields.iter().count() as u64);
    for field in fields.iter() {
        put_str(out, field.key);
        put_value(out, field.value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn typed() -> impl Strategy<Value = Typed> {
        prop_oneof![
            any::<u64>().prop_map(Typed::U64),
            any::<i64>().prop_map(Typed::I64),
            any::<u128>().prop_map(Typed::U128),
            any::<i128>().prop_map(Typed::I128),
            any::<f64>().prop_map(Typed::F64),
            any::<f32>().prop_map(Typed::F32),
            any::<bool>().prop_map(Typed::Bool),
        ]
    }

    /// The reference encoding of a call-site record's head, byte by byte with `Vec::push`.
    fn put_site_record_head(
        out: &mut Vec<u8>,
        site: u32,
        delta: u64,
        thread: u32,
        flags: u8,
        trace: Option<&TraceContext>,
    ) {
        out.push(tag::SITE_RECORD);
        put_varint(out, u64::from(site));
        put_varint(out, delta);
        put_varint(out, u64::from(thread));
        out.push(flags);
        put_trace(out, trace);
    }

    /// The reference encoding: `Vec::push` and `extend_from_slice`, value by value.
    fn reference(out: &mut Vec<u8>, head: (u32, u64, u32, u8), values: &[Typed]) {
        let (site, delta, thread, flags) = head;
        put_site_record_head(out, site, delta, thread, flags, None);
        for value in values {
            match *value {
                Typed::U64(v) => put_value(out, FieldValue::U64(v)),
                Typed::I64(v) => put_value(out, FieldValue::I64(v)),
                Typed::U128(v) => put_value(out, FieldValue::U128(v)),
                Typed::I128(v) => put_value(out, FieldValue::I128(v)),
                Typed::F64(v) => put_value(out, FieldValue::F64(v)),
                Typed::Bool(v) => put_value(out, FieldValue::Bool(v)),
                Typed::F32(v) => {
                    out.push(value::F32);
                    out.extend_from_slice(&v.to_bits().to_le_bytes());
                }
            }
        }
    }

    /// The longest prefix before the record. Shorter under Miri, which interprets the
    /// generation of every byte: the prefix only moves where the spare capacity starts.
    const MAX_PREFIX: usize = if cfg!(miri) { 40 } else { 300 };

    proptest! {
        /// Writing into spare capacity gives the bytes the reference does, after any prefix
        /// and from any spare capacity, in one append or one per value.
        #[test]
        fn scratch_writes_what_the_reference_writes(
            prefix in proptest::collection::vec(any::<u8>(), 0..MAX_PREFIX),
            spare in 0usize..200,
            head in (any::<u32>(), any::<u64>(), any::<u32>(), any::<u8>()),
            values in proptest::collection::vec(typed(), 0..24),
        ) {
            let mut expected = prefix.clone();
            reference(&mut expected, head, &values);
            let mut out = Vec::with_capacity(prefix.len() + spare);
            out.extend_from_slice(&prefix);
            let (first, rest) = values.split_at(values.len() / 2);
            append_with(&mut out, MAX_HEAD + MAX_TYPED * first.len(), |w| {
                w.site_record_head(head.0, head.1, head.2, head.3, None);
                for value in first {
                    w.typed(*value);
                }
            });
            for value in rest {
                append_with(&mut out, MAX_TYPED, |w| w.typed(*value));
            }
            prop_assert_eq!(out, expected);
        }
    }

    #[test]
    fn a_head_with_a_trace_context_and_a_u128_fit() {
        let trace = TraceContext {
            trace_id: [7; 16],
            span_id: [9; 8],
            flags: 1,
        };
        let mut out = Vec::new();
        append_with(&mut out, MAX_HEAD + MAX_TYPED, |w| {
            w.site_record_head(u32::MAX, u64::MAX, u32::MAX, 3, Some(&trace));
            w.typed(Typed::U128(u128::MAX));
        });
        assert_eq!(out.len(), MAX_HEAD + MAX_TYPED);
        let mut expected = Vec::new();
        put_site_record_head(&mut expected, u32::MAX, u64::MAX, u32::MAX, 3, Some(&trace));
        put_value(&mut expected, FieldValue::U128(u128::MAX));
        assert_eq!(out, expected);
    }
}
