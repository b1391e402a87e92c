//! The binary log's writer side: one record at a time into an open block, whose call-site and
//! thread tables start empty, so every block can be read on its own (see `FORMAT.md`). Back end
//! only; no date-time, pattern or escaping work: a call site's message is walked once to find
//! its values, which are stored without the literal text around them.

use super::wire::{append_with, put_str, put_varint, zigzag, SpareWriter};
use super::{flag, tag, value, BLOCK_TARGET, HEADER, MAX_PAYLOAD, SYNC, VERSION};
use crate::codec::{Decoder, TextBuf};
use crate::fields::{FieldValue, Fields};
use crate::format::message::take_located;
use crate::format::pattern::{render_message, Message, RecordView, SiteMessage};
use crate::format::shaped::{self, Spec};
use crate::format::AddressHasher;
use crate::queue::registry::ThreadInfo;
use crate::record::{Decode, Site, TraceContext, ValueWriter};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::BuildHasherDefault;

/// Tables keyed by addresses and serial numbers: one multiply, not SipHash, per look-up.
type Table = HashMap<u64, u32, BuildHasherDefault<AddressHasher>>;

/// A call site as the encoder knows it, kept across blocks: what a reader takes from its format
/// string (`FORMAT.md`), parsed once, and its reference in the block that defined it last. One
/// look-up when the record's site changes gives both: a second table for the specs, with their
/// flags copied out, cost 19 instructions a record (callgrind, `throughput_mix_binary`'s back
/// end, where one record in five changes site).
#[derive(Debug)]
struct KnownSite {
    /// The reader's specs, when the format string splits into the site's placeholders.
    specs: Option<Vec<Spec>>,
    /// Bit `i`: the reader's spec of placeholder `i` is the writer's (plain exactly where the
    /// writer's placeholder is) and takes typed values (`Spec::takes_typed`). Placeholders past
    /// the 64th are written as text, which reads back the same.
    typed_ok: u64,
    /// The block generation that defined the site, and its reference there.
    defined_in: u32,
    reference: u32,
}

impl KnownSite {
    fn of(site: &Site) -> KnownSite {
        let specs = shaped::site_specs(site.format, site.message.len());
        let typed_ok = specs.as_ref().map_or(0, |specs| {
            specs
                .iter()
                .zip(site.message)
                .take(64)
                .enumerate()
                .filter(|(_, (spec, placeholder))| {
                    spec.takes_typed() && spec.is_plain_but_for_trait() == placeholder.plain
                })
                .fold(0, |bits, (index, _)| bits | 1 << index)
        });
        KnownSite {
            specs,
            typed_ok,
            defined_in: NO_BLOCK,
            reference: 0,
        }
    }
}

/// A block generation no block has: a site's `defined_in` before any block defines it.
const NO_BLOCK: u32 = 0;

/// Encodes records into blocks.
pub(crate) struct Encoder {
    /// The open block and its texts, and the writer of a record's message values into it.
    values: ValueWriter,
    /// Every call site met, by address, kept across blocks.
    sites: HashMap<u64, KnownSite, BuildHasherDefault<AddressHasher>>,
    /// The open block's generation (never [`NO_BLOCK`]) and the sites it defined so far.
    generation: u32,
    sites_defined: u32,
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
    /// The largest payload a block may reach ([`MAX_PAYLOAD`]; smaller in tests).
    max_payload: usize,
    message: String,
    fields: Fields,
}

impl Encoder {
    pub(crate) fn new(max_message: usize) -> Self {
        Encoder {
            values: ValueWriter::new(max_message != usize::MAX),
            sites: HashMap::default(),
            generation: NO_BLOCK,
            sites_defined: 0,
            threads: Table::default(),
            last_site: (u64::MAX, 0),
            last_thread: (u64::MAX, 0),
            last_nanos: 0,
            max_message,
            max_payload: MAX_PAYLOAD,
            message: String::new(),
            fields: Fields::new(),
        }
    }

    /// Appends one record to the open block; returns whether the block is due to be closed.
    pub(crate) fn encode(&mut self, record: &RecordView<'_>) -> bool {
        self.open_block(record.unix_nanos);
        // The thread and the call site are defined before the record starts, so that taking
        // the record back (a value that fails, a record too large) keeps their definitions,
        // which the tables say the block holds.
        let thread = self.thread_ref(record.thread);
        let site = match &record.message {
            Message::Site(site_message) => Some((site_message, self.site_ref(site_message.site))),
            _ => None,
        };
        let delta = self.delta(record.unix_nanos);
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
        let start = (self.values.block.len(), self.values.texts.count());
        let typed = match site {
            Some((site_message, site_ref)) => {
                let head = (site_ref, delta, thread, flags);
                self.typed_record(site_message, head, record.trace.as_ref(), start)
            }
            None => false,
        };
        self.finish_record(record, (delta, thread, flags), typed, start)
    }

    /// [`Encoder::encode`] for a live call-site record with no trace context, given as its
    /// parts: what a lone binary log gets from the merge loop, without a [`RecordView`] built
    /// there and read back here (35 of the back end's 568 instructions a record, callgrind,
    /// `tachylog-bench --child tachylog throughput_mix_binary`). The view is built only when
    /// the record is not kept typed. Out of line, as `encode` is: inlined into the merge
    /// loop's call, `encode` cost 610 instructions a record against 580.
    #[inline(never)]
    pub(crate) fn encode_site(
        &mut self,
        thread_info: &ThreadInfo,
        unix_nanos: i64,
        site_message: &SiteMessage<'_>,
    ) -> bool {
        self.open_block(unix_nanos);
        let thread = self.thread_ref(thread_info);
        let site_ref = self.site_ref(site_message.site);
        let delta = self.delta(unix_nanos);
        let start = (self.values.block.len(), self.values.texts.count());
        let typed = self.typed_record(site_message, (site_ref, delta, thread, 0), None, start);
        if typed && self.values.block.len() - HEADER <= self.max_payload {
            return self.values.block.len() >= HEADER + BLOCK_TARGET;
        }
        let site = site_message.site;
        let record = RecordView {
            unix_nanos,
            level: site.level,
            target: site.target,
            file: site.file,
            line: site.line,
            thread: thread_info,
            message: Message::Site(*site_message),
            static_metadata: site.plain_metadata,
            backtrace: false,
            recovered: false,
            trace: None,
        };
        self.finish_record(&record, (delta, thread, 0), typed, start)
    }

    /// Readies the open block, or a new one, for a record at `unix_nanos`.
    #[inline(always)]
    fn open_block(&mut self, unix_nanos: i64) {
        if !self.values.block.is_empty() {
            return;
        }
        let block = &mut self.values.block;
        block.resize(HEADER, 0);
        block.extend_from_slice(&unix_nanos.to_le_bytes());
        self.last_nanos = unix_nanos;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == NO_BLOCK {
            // Wrapped: no site may look defined by a block of long ago.
            self.sites.clear();
            self.generation += 1;
        }
        self.sites_defined = 0;
        self.threads.clear();
        self.values.texts.reset(0);
        self.last_site = (u64::MAX, 0);
        self.last_thread = (u64::MAX, 0);
    }

    /// The record's time as its delta from the block's previous record, zigzagged.
    #[inline(always)]
    fn delta(&mut self, unix_nanos: i64) -> u64 {
        let delta = zigzag(unix_nanos.wrapping_sub(self.last_nanos));
        self.last_nanos = unix_nanos;
        delta
    }

    /// The end of a record begun at `start` (the block's length and texts then): stored as
    /// text unless `typed`, and cut to what a block takes. Returns whether the block is due
    /// to be closed.
    fn finish_record(
        &mut self,
        record: &RecordView<'_>,
        (delta, thread, flags): (u64, u32, u8),
        typed: bool,
        (record_start, texts_at_start): (usize, u32),
    ) -> bool {
        if !typed {
            render_message(
                &record.message,
                &mut self.message,
                &mut self.fields,
                self.max_message,
            );
            self.text_record(record, delta, thread, flags);
        }
        if self.values.block.len() - HEADER > self.max_payload {
            // One record larger than a reader takes (a message or field of hundreds of MiB
            // with no `max_message_bytes`): its message cut, its fields left out.
            self.values.block.truncate(record_start);
            self.values.texts.reset(texts_at_start);
            if typed {
                let message = &record.message;
                render_message(
                    message,
                    &mut self.message,
                    &mut self.fields,
                    self.max_message,
                );
            }
            let mut keep = (self.max_payload / 2).min(self.message.len());
            while !self.message.is_char_boundary(keep) {
                keep -= 1;
            }
            let removed = self.message.len() - keep;
            self.message.truncate(keep);
            if removed > 0 {
                let _ = write!(self.message, "…[truncated {removed} bytes]");
            }
            if self.fields.iter().next().is_some() || self.fields.spans().next().is_some() {
                self.message
                    .push_str("…[fields left out: the record is larger than a block]");
            }
            self.fields.clear();
            self.text_record(record, delta, thread, flags);
        }
        self.values.block.len() >= HEADER + BLOCK_TARGET
    }

    /// Writes a call-site record as its site's reference and its values: the head, then each
    /// message value straight into the block (numbers and `bool` as their type under any spec
    /// a reader applies, `ValueWriter::push`; the rest rendered alone, without the literal text
    /// around them), then its fields. A site without fields whose arguments are message values
    /// only (a `Decode::Rendered` group, as most are) has them written in one call; any other
    /// is walked value by value. `false`, with the block and its texts as they were at `start`
    /// (then the record is stored as text): a value that failed to render, bytes that do not
    /// match the site, a field that is a span's, or a message that could pass
    /// `max_message_bytes` (the text line would cut it).
    #[inline(always)]
    fn typed_record(
        &mut self,
        site_message: &SiteMessage<'_>,
        (site_ref, delta, thread, flags): (u32, u64, u32, u8),
        trace: Option<&TraceContext>,
        (record_start, texts_at_start): (usize, u32),
    ) -> bool {
        let site = site_message.site;
        // The closure inlined too: left to the compiler once two paths share this function,
        // it became a call of 61 instructions a record.
        append_with(
            &mut self.values.block,
            MAX_HEAD,
            #[inline(always)]
            |w| site_record_head(w, site_ref, delta, thread, flags, trace),
        );
        self.values.start_record();
        let written = match (site_message.decode, site.fields) {
            (Decode::Rendered { items, encode, .. }, []) if items.len() == site.message.len() => {
                let mut decoder = Decoder::new(site_message.args);
                encode(&mut decoder, site.message, &mut self.values).is_ok()
                    && !decoder.is_malformed()
            }
            _ => self.values_one_by_one(site_message),
        };
        if written
            && self.values.written == site.message.len()
            && (!self.values.measuring || self.within_limit(site_message))
        {
            return true;
        }
        self.values.block.truncate(record_start);
        self.values.texts.reset(texts_at_start);
        false
    }

    /// [`Encoder::typed_record`]'s values and fields for a site whose values are not one
    /// group: taken as they are when its fields are all native, else walked. Out of line, so
    /// that the one-group path keeps its values in registers (inline there, this choice cost
    /// `throughput_binary` 3 instructions a record, callgrind).
    #[inline(never)]
    fn values_one_by_one(&mut self, site_message: &SiteMessage<'_>) -> bool {
        if let (Decode::List(items), [_, ..]) = (site_message.decode, site_message.site.fields) {
            if let Some(written) = self.native_fields_and_values(site_message, items) {
                return written;
            }
        }
        self.walked_values(site_message)
    }

    /// [`Encoder::typed_record`]'s values and fields for a site walked value by value.
    fn walked_values(&mut self, site_message: &SiteMessage<'_>) -> bool {
        self.fields.clear();
        self.fields.limit_values(self.max_message);
        if take_located(site_message, &mut self.fields, &mut self.values).is_err()
            || self.fields.has_spans()
            || self.fields.iter().count() != site_message.site.fields.len()
        {
            return false;
        }
        let ValueWriter { block, texts, .. } = &mut self.values;
        for field in self.fields.iter() {
            match field.value {
                FieldValue::Str(text) => texts.put(block, text),
                other => put_value(block, other),
            }
        }
        true
    }

    /// [`Encoder::typed_record`]'s values and fields for a site whose fields are all native
    /// (numbers, `bool`, text: `key = value`) and whose list is flat: each field's value taken
    /// off the record as it is, borrowing its bytes, instead of through a [`Fields`], which
    /// copies each key and value in and out (the values of `throughput_mix_binary`'s record
    /// with two fields: 435 instructions against the walk's 854, callgrind). The block ends up
    /// as [`Encoder::walked_values`] writes it. `None`, with nothing written, for any other
    /// site or a value the walk must handle (text that is not UTF-8 or longer than the limit,
    /// a `char`): then the caller walks it.
    #[inline]
    fn native_fields_and_values(
        &mut self,
        site_message: &SiteMessage<'_>,
        items: &'static [Decode],
    ) -> Option<bool> {
        let site = site_message.site;
        let flat = items.iter().all(|item| {
            matches!(
                item,
                Decode::Field(_, Some(_)) | Decode::Message(..) | Decode::Count
            )
        });
        if !flat || site.fields.len() > MAX_NATIVE_FIELDS {
            return None;
        }
        let mut fields = [FieldValue::Null; MAX_NATIVE_FIELDS];
        let (mut next_field, mut next_placeholder) = (0, 0);
        let mut decoder = Decoder::new(site_message.args);
        for item in items {
            match *item {
                Decode::Field(_, Some(value_of)) => {
                    let value = value_of(&mut decoder)
                        .filter(|v| !matches!(v, FieldValue::Str(t) if t.len() > self.max_message));
                    match (value, fields.get_mut(next_field)) {
                        (Some(value), Some(slot)) => *slot = value,
                        // Fields travel before the message's values, so nothing is written yet.
                        (None, _) if next_placeholder == 0 => return None,
                        _ => return Some(false),
                    }
                    next_field += 1;
                }
                Decode::Message(_, take) => {
                    let Some(placeholder) = site.message.get(next_placeholder) else {
                        return Some(false);
                    };
                    next_placeholder += 1;
                    if take(&mut decoder, placeholder, &mut self.values).is_err() {
                        return Some(false);
                    }
                }
                // Read by the placeholder whose value follows it.
                _ => {}
            }
        }
        if next_field != site.fields.len()
            || next_placeholder != site.message.len()
            || decoder.is_malformed()
        {
            return Some(false);
        }
        let ValueWriter { block, texts, .. } = &mut self.values;
        for field in &fields[..next_field] {
            match *field {
                FieldValue::Str(text) => texts.put(block, text),
                other => put_value(block, other),
            }
        }
        Some(true)
    }

    /// Under a limit on a message's length: whether the line the text sink writes for the
    /// record just written stays within it (else the text line would cut it), measured with
    /// its typed values rendered as the reader renders them.
    #[cold]
    fn within_limit(&mut self, site_message: &SiteMessage<'_>) -> bool {
        let site = site_message.site;
        let mut scratch = std::mem::take(&mut self.message);
        scratch.clear();
        let mut rendered = true;
        let key = site as *const Site as usize as u64;
        let specs = self.sites.get(&key).and_then(|known| known.specs.as_ref());
        for &(index, typed) in &self.values.measured_typed {
            let spec = specs.and_then(|specs| specs.get(index));
            match spec {
                Some(spec) if !spec.is_plain() => {
                    if shaped::render_typed(&mut scratch, typed, spec).is_err() {
                        rendered = false;
                        break;
                    }
                }
                _ => typed.render(&mut TextBuf::of_string(&mut scratch)),
            }
        }
        let literal: usize = site.message.iter().map(|p| p.literal.len()).sum();
        let len = scratch.len() + literal + site.tail.len() + self.values.measured_text;
        self.message = scratch;
        rendered && len <= self.max_message
    }

    /// A record stored with its own metadata and its message as text (`self.message`,
    /// `self.fields`).
    fn text_record(&mut self, record: &RecordView<'_>, delta: u64, thread: u32, mut flags: u8) {
        if record.static_metadata {
            flags |= flag::STATIC_METADATA;
        }
        let out = &mut self.values.block;
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
        if self.values.block.is_empty() {
            return None;
        }
        let payload = (self.values.block.len() - HEADER) as u32;
        let crc = crc32fast::hash(&self.values.block[HEADER..]);
        self.values.block[..6].copy_from_slice(&SYNC);
        self.values.block[6] = VERSION;
        self.values.block[7] = 0;
        self.values.block[8..12].copy_from_slice(&payload.to_le_bytes());
        self.values.block[12..16].copy_from_slice(&crc.to_le_bytes());
        let result = write(&self.values.block);
        self.values.block.clear();
        if self.values.block.capacity() > 4 * BLOCK_TARGET {
            self.values.block = Vec::new();
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
            self.values.block.push(tag::THREAD);
            put_varint(&mut self.values.block, u64::from(reference));
            put_varint(&mut self.values.block, thread.id);
            put_str(&mut self.values.block, &thread.name);
        }
        reference
    }

    /// The reference of `site` in the open block, defining it first if new; the writer of
    /// values takes the site's specs.
    #[inline]
    fn site_ref(&mut self, site: &'static Site) -> u32 {
        let key = site as *const Site as usize as u64;
        if self.last_site.0 == key {
            return self.last_site.1;
        }
        let reference = self.site_ref_in_table(site, key);
        self.last_site = (key, reference);
        reference
    }

    fn site_ref_in_table(&mut self, site: &'static Site, key: u64) -> u32 {
        let known = self.sites.entry(key).or_insert_with(|| KnownSite::of(site));
        self.values.specs_read = known.specs.is_some();
        self.values.typed_ok = known.typed_ok;
        if known.defined_in == self.generation {
            return known.reference;
        }
        let reference = self.sites_defined;
        self.sites_defined += 1;
        known.defined_in = self.generation;
        known.reference = reference;
        let out = &mut self.values.block;
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
        reference
    }
}

/// The most fields [`Encoder::native_fields_and_values`] takes: a flat list holds at most eight
/// arguments (the macro nests longer ones).
const MAX_NATIVE_FIELDS: usize = 8;

/// The most bytes a call-site record's head takes: tag, three varints, flags, trace context.
const MAX_HEAD: usize = 1 + 5 + 10 + 5 + 1 + TraceContext::ENCODED;

/// A call-site record's head; at most [`MAX_HEAD`] bytes.
#[inline(always)]
fn site_record_head(
    w: &mut SpareWriter<'_>,
    site: u32,
    delta: u64,
    thread: u32,
    flags: u8,
    trace: Option<&TraceContext>,
) {
    if site < 0x80 && thread < 0x80 && delta < 0x4000 {
        // Nearly every head: its five or six bytes put together in a register and stored at
        // once; written one by one, each varint with its loop and bound checks, they took 6
        // instructions a record more (callgrind, `throughput_mix_binary`).
        let (delta, delta_len) = if delta < 0x80 {
            (delta, 1)
        } else {
            (delta & 0x7f | 0x80 | (delta >> 7) << 8, 2)
        };
        let thread_at = 8 * (2 + delta_len);
        w.word(
            u64::from(tag::SITE_RECORD)
                | u64::from(site) << 8
                | delta << 16
                | u64::from(thread) << thread_at
                | u64::from(flags) << (thread_at + 8),
            4 + delta_len as usize,
        );
    } else {
        site_record_head_in_varints(w, site, delta, thread, flags);
    }
    if let Some(trace) = trace {
        w.slice(trace.encode());
    }
}

/// A call-site record's head but its trace context, field by field: what
/// [`site_record_head`] writes for any site, delta and thread.
fn site_record_head_in_varints(
    w: &mut SpareWriter<'_>,
    site: u32,
    delta: u64,
    thread: u32,
    flags: u8,
) {
    w.byte(tag::SITE_RECORD);
    w.varint(u64::from(site));
    w.varint(delta);
    w.varint(u64::from(thread));
    w.byte(flags);
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
    use crate::codec::wire::MAX_TYPED;
    use crate::codec::Typed;
    use proptest::prelude::*;

    /// The head put together in one word is byte for byte the head written field by field,
    /// on each side of every bound of the short form.
    #[test]
    fn a_head_stored_at_once_is_the_head_written_field_by_field() {
        let numbers = [0u32, 1, 0x7f, 0x80, 0x3fff, 0x4000, u32::MAX];
        let deltas = [0u64, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1 << 40, u64::MAX];
        for (&site, &thread) in numbers
            .iter()
            .flat_map(|s| numbers.iter().map(move |t| (s, t)))
        {
            for &delta in &deltas {
                for flags in [0u8, 0x5a, 0xff] {
                    let (mut at_once, mut by_field) = (vec![9u8], vec![9u8]);
                    append_with(&mut at_once, MAX_HEAD, |w| {
                        site_record_head(w, site, delta, thread, flags, None)
                    });
                    append_with(&mut by_field, MAX_HEAD, |w| {
                        site_record_head_in_varints(w, site, delta, thread, flags)
                    });
                    assert_eq!(
                        at_once, by_field,
                        "site {site}, delta {delta}, thread {thread}"
                    );
                }
            }
        }
    }

    /// The record of call site `site` with argument bytes `args`, at time 1 on `thread`.
    fn site_record<'a>(
        site: &'static Site,
        decode: &'static Decode,
        args: &'a [std::mem::MaybeUninit<u8>],
        thread: &'a ThreadInfo,
    ) -> RecordView<'a> {
        RecordView {
            unix_nanos: 1,
            level: site.level,
            target: site.target,
            file: site.file,
            line: site.line,
            thread,
            message: Message::Site(SiteMessage { site, decode, args }),
            static_metadata: true,
            backtrace: false,
            recovered: false,
            trace: None,
        }
    }

    /// The thread the unit tests' records come from.
    fn main_thread() -> ThreadInfo {
        ThreadInfo {
            name: "main".into(),
            id: 1,
            serial: 1,
        }
    }

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
                site_record_head(w, head.0, head.1, head.2, head.3, None);
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
            site_record_head(w, u32::MAX, u64::MAX, u32::MAX, 3, Some(&trace));
            w.typed(Typed::U128(u128::MAX));
        });
        assert_eq!(out.len(), MAX_HEAD + MAX_TYPED);
        let mut expected = Vec::new();
        put_site_record_head(&mut expected, u32::MAX, u64::MAX, u32::MAX, 3, Some(&trace));
        put_value(&mut expected, FieldValue::U128(u128::MAX));
        assert_eq!(out, expected);
    }

    /// A site whose fields are all native takes them off the record as they are, and the block
    /// holds what the walk through a `Fields` writes, texts defined and then referred to alike;
    /// a `char` field, or bytes that do not match the site, leave it to the walk.
    #[test]
    fn native_fields_are_written_as_the_walk_writes_them() {
        use crate::codec::{CopyCodec, StrCodec};
        use crate::frontend::args::{field_role::Native, fmt_trait::Display, Decodes};
        use crate::record::{Count, Placeholder};
        use std::mem::MaybeUninit;

        static PLACEHOLDERS: &[Placeholder] = &[
            Placeholder::new("m ", Count::None, Count::None, None),
            Placeholder::new(" ", Count::None, Count::Arg, None),
        ];
        static SITE: Site = Site {
            level: crate::Level::Info,
            target: "t",
            file: "f.rs",
            line: 1,
            format: "m {} {:.*}",
            message: PLACEHOLDERS,
            tail: "",
            fields: &["id", "who", "when", "ok", "ratio"],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
        };
        static DECODE: Decode = Decode::List(&[
            <Native as Decodes<CopyCodec<u64>>>::DECODE,
            <Native as Decodes<StrCodec>>::DECODE,
            <Native as Decodes<CopyCodec<Option<u32>>>>::DECODE,
            <Native as Decodes<CopyCodec<bool>>>::DECODE,
            <Native as Decodes<CopyCodec<f64>>>::DECODE,
            <Display as Decodes<StrCodec>>::DECODE,
            Decode::Count,
            <Display as Decodes<CopyCodec<f64>>>::DECODE,
        ]);
        static CHAR_FIRST: Decode = Decode::List(&[
            <Native as Decodes<CopyCodec<char>>>::DECODE,
            <Display as Decodes<CopyCodec<u64>>>::DECODE,
        ]);
        fn raw<T: Copy>(value: T, out: &mut Vec<MaybeUninit<u8>>) {
            let mut bytes = vec![MaybeUninit::<u8>::uninit(); size_of::<T>()];
            // SAFETY: `bytes` has room for a `T`; its bytes, padding included, are copied as
            // `MaybeUninit<u8>`, which any byte may be.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    &value as *const T as *const MaybeUninit<u8>,
                    bytes.as_mut_ptr(),
                    size_of::<T>(),
                )
            };
            out.extend(bytes);
        }
        fn text(value: &str, out: &mut Vec<MaybeUninit<u8>>) {
            raw(value.len(), out);
            out.extend(value.bytes().map(MaybeUninit::new));
        }
        let record = |id: u64, who: &str, when: Option<u32>, message: &str| {
            let mut args = Vec::new();
            raw(id, &mut args);
            text(who, &mut args);
            raw(when, &mut args);
            raw(id % 2 == 0, &mut args);
            raw(id as f64 / 3.0, &mut args);
            text(message, &mut args);
            raw(2usize, &mut args);
            raw(0.125f64, &mut args);
            args
        };
        let items = match &DECODE {
            Decode::List(items) => *items,
            _ => unreachable!(),
        };
        let site_message = |decode: &'static Decode, args| SiteMessage {
            site: &SITE,
            decode,
            args,
        };
        let (mut fast, mut walked) = (Encoder::new(usize::MAX), Encoder::new(usize::MAX));
        let records = [
            record(1, "ann", None, "first"),
            record(2, "ann", Some(7), "ann"),
            record(u64::MAX, "", Some(0), "first"),
        ];
        for args in &records {
            fast.values.start_record();
            walked.values.start_record();
            let message = site_message(&DECODE, args);
            assert_eq!(fast.native_fields_and_values(&message, items), Some(true));
            assert!(walked.walked_values(&message));
            assert_eq!(fast.values.written, walked.values.written);
            assert_eq!(fast.values.block, walked.values.block);
        }
        let short = &records[0][..records[0].len() - 1];
        assert_eq!(
            fast.native_fields_and_values(&site_message(&DECODE, short), items),
            Some(false)
        );
        let mut args = Vec::new();
        raw('x', &mut args);
        raw(5u64, &mut args);
        let char_items = match &CHAR_FIRST {
            Decode::List(items) => *items,
            _ => unreachable!(),
        };
        let before = fast.values.block.len();
        assert_eq!(
            fast.native_fields_and_values(&site_message(&CHAR_FIRST, &args), char_items),
            None
        );
        assert_eq!(fast.values.block.len(), before, "nothing written");
    }

    /// A record too large for a block is cut to a text record; the call site it defined stays
    /// defined, and the next record of that site, in the same block, reads back.
    #[test]
    fn a_record_cut_for_its_size_keeps_its_sites_definition() {
        use crate::binary::decoder::{BlockDecoder, Decoded};
        use crate::codec::{CopyCodec, StrCodec};
        use crate::frontend::args::{field_role::Native, fmt_trait::Display, Decodes};
        use crate::record::{Count, Placeholder};
        use std::mem::MaybeUninit;

        static PLACEHOLDERS: &[Placeholder] =
            &[Placeholder::new("m ", Count::None, Count::None, None)];
        static SITE: Site = Site {
            level: crate::Level::Info,
            target: "t",
            file: "f.rs",
            line: 1,
            format: "m {}",
            message: PLACEHOLDERS,
            tail: "",
            fields: &["k"],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
        };
        static DECODE: Decode = Decode::List(&[
            <Native as Decodes<StrCodec>>::DECODE,
            <Display as Decodes<CopyCodec<u64>>>::DECODE,
        ]);
        fn args(field: &str, value: u64) -> Vec<MaybeUninit<u8>> {
            let mut bytes = field.len().to_ne_bytes().to_vec();
            bytes.extend_from_slice(field.as_bytes());
            bytes.extend_from_slice(&value.to_ne_bytes());
            bytes.into_iter().map(MaybeUninit::new).collect()
        }
        let thread = main_thread();
        let record = |args| site_record(&SITE, &DECODE, args, &thread);
        let mut encoder = Encoder::new(usize::MAX);
        encoder.max_payload = 4096;
        let (huge, small) = (args(&"x".repeat(10_000), 1), args("y", 2));
        assert!(!encoder.encode(&record(&huge)), "the block stays open");
        assert!(!encoder.encode(&record(&small)));
        let block = encoder.close_block(|block| block.to_vec()).unwrap();
        // The same records given in parts, as a lone binary log's merge loop gives them: the
        // same block, the cut record's fallback to its view included.
        let mut in_parts = Encoder::new(usize::MAX);
        in_parts.max_payload = 4096;
        for args in [&huge, &small] {
            let Message::Site(site_message) = record(args).message else {
                unreachable!("a site record")
            };
            assert!(!in_parts.encode_site(&thread, 1, &site_message));
        }
        assert_eq!(in_parts.close_block(|block| block.to_vec()).unwrap(), block);
        let payload = &block[HEADER..];
        let mut decoder = BlockDecoder::new(payload, VERSION).unwrap();
        let mut out = Decoded::default();
        let cut = "m 1…[fields left out: the record is larger than a block]";
        for expected in [cut, "m 2"] {
            assert_eq!(decoder.next(payload, &mut out), Some(Ok(())));
            assert_eq!(out.message, expected);
        }
        assert_eq!(decoder.next(payload, &mut out), None);
    }

    /// A site with more placeholders than the writer keeps typed flags for: the values past the
    /// 64th go in as text, and every one reads back as the text sink writes it, spec applied.
    #[test]
    fn values_past_the_sixty_fourth_placeholder_read_back_as_text() {
        use crate::binary::decoder::{BlockDecoder, Decoded};
        use crate::codec::CopyCodec;
        use crate::frontend::args::{fmt_trait::Display, Decodes};
        use crate::record::{Count, Placeholder};
        use std::mem::MaybeUninit;
        use std::sync::OnceLock;

        const VALUES: usize = 70;
        // In statics, not leaked, so that Miri's leak check passes.
        static PLACEHOLDERS: OnceLock<Vec<Placeholder>> = OnceLock::new();
        static FORMAT: OnceLock<String> = OnceLock::new();
        static SITE: OnceLock<Site> = OnceLock::new();
        static VALUE_DECODES: OnceLock<Vec<Decode>> = OnceLock::new();
        static DECODE: OnceLock<Decode> = OnceLock::new();
        let placeholders = PLACEHOLDERS.get_or_init(|| {
            (0..VALUES)
                .map(|i| {
                    let literal = if i == 0 { "v" } else { " " };
                    Placeholder::new(literal, Count::None, Count::Literal(3), None)
                })
                .collect()
        });
        let format = FORMAT.get_or_init(|| format!("v{}", vec!["{:3}"; VALUES].join(" ")));
        let site: &'static Site = SITE.get_or_init(|| Site {
            level: crate::Level::Info,
            target: "t",
            file: "f.rs",
            line: 1,
            format,
            message: placeholders,
            tail: "",
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
        });
        let value_decodes = VALUE_DECODES
            .get_or_init(|| vec![<Display as Decodes<CopyCodec<u64>>>::DECODE; VALUES]);
        let decode: &'static Decode = DECODE.get_or_init(|| Decode::List(value_decodes));
        let args: Vec<MaybeUninit<u8>> = (0..VALUES as u64)
            .flat_map(u64::to_ne_bytes)
            .map(MaybeUninit::new)
            .collect();
        let mut encoder = Encoder::new(usize::MAX);
        encoder.encode(&site_record(site, decode, &args, &main_thread()));
        let key = site as *const Site as usize as u64;
        assert_eq!(encoder.sites[&key].typed_ok, u64::MAX, "the first 64 typed");
        let block = encoder.close_block(|block| block.to_vec()).unwrap();
        let payload = &block[HEADER..];
        let mut decoder = BlockDecoder::new(payload, VERSION).unwrap();
        let mut out = Decoded::default();
        assert_eq!(decoder.next(payload, &mut out), Some(Ok(())));
        let expected: Vec<String> = (0..VALUES).map(|i| format!("{i:3}")).collect();
        assert_eq!(out.message, format!("v{}", expected.join(" ")));
    }
}
