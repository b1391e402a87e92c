//! Recovering what a dead process left in its spool (see `queue::spool` and `SPOOL.md`): the
//! records it logged that its back end had not written when it died, each written once, whole,
//! with its own timestamp, marked as recovered (`[recovered]` in text, `"recovered":true` in
//! JSON, `recovered=true` in logfmt, a flag in the binary log).
//!
//! For each process directory whose lock nobody holds:
//! 1. the state gives the last committed cut: how long each file was and how far each ring
//!    had been written;
//! 2. every file the process wrote is cut back to its committed length, which removes a batch
//!    being written, or written but not committed, when the process died;
//! 3. every ring's records after its committed position are read, decoded with the
//!    definitions (no address or code of the dead program is needed), merged by time and
//!    written to the files, and to standard output and error for the console sinks;
//! 4. the directory is removed, its lock last.
//!
//! Killed during its own step 3, a recovery leaves the directory as it found it but for the
//! files' tails, which the next recovery cuts back again: still once each. Nothing here trusts
//! the bytes it reads: damage is reported and skipped, never a panic.

use crate::binary::decoder::{Decoded, SiteDef, SiteDefSource};
use crate::codec::shape::Shape;
use crate::error::ShapeError;
use crate::fields::Fields;
use crate::format::pattern::{render_message, Message};
use crate::format::shaped::{decode, SiteText};
use crate::queue::registry::ThreadInfo;
use crate::queue::spool::layout::*;
use crate::queue::spool::set_lock;
use crate::record::{
    TraceContext, CALL_SITE_PREFIX, KIND_CALL_SITE, KIND_CALL_SITE_TRACED, KIND_DYNAMIC,
    TRACED_PREFIX,
};
use crate::{Format, Level, Pattern, TimeZone};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a recovery did.
#[derive(Debug, Default)]
pub struct Recovery {
    /// Process directories recovered (dead processes found).
    pub processes: usize,
    /// Records written, counting each once whatever number of sinks took it.
    pub records: usize,
    /// Problems met and how they were handled, one line each (a damaged file, a record whose
    /// argument list was never defined, a file that was replaced since).
    pub warnings: Vec<String>,
}

/// Recovers every dead process's directory under `root`: see the module documentation.
/// Records of console sinks go to `stdout` and `stderr`.
///
/// Directories of live processes are left alone. An error is returned only when `root` cannot
/// be read; anything wrong inside a process's directory is a warning in the result.
///
/// A spool's manifest names the files its recovery writes to and may cut back, so run this only
/// on a directory that nobody but the application can write to (the process directories it
/// makes are `0700`; keep their parent private too).
///
/// ```no_run
/// let recovery = tachylog::read::recover_spool(
///     std::path::Path::new("/dev/shm/my-app"),
///     &mut std::io::stdout(),
///     &mut std::io::stderr(),
/// )?;
/// eprintln!("{} record(s) of {} dead process(es)", recovery.records, recovery.processes);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn recover_spool(
    root: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> io::Result<Recovery> {
    let mut recovery = Recovery::default();
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(recovery),
        Err(e) => return Err(e),
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| is_process_dir(p))
        .collect();
    // Oldest process first: its records come first in the files they share.
    dirs.sort_by_key(|p| started(p));
    // This process's own spool, if it has one, is alive whatever its lock says: `fcntl` locks
    // do not exclude the process that holds them (and closing any descriptor of the file would
    // release them). Its pid is no help: a container's process is pid 1 at every restart.
    let own = crate::queue::spool::active().map(|spool| spool.dir().to_path_buf());
    for dir in dirs {
        if own.as_deref() == Some(dir.as_path()) {
            continue;
        }
        recover_process(&dir, stdout, stderr, &mut recovery);
    }
    Ok(recovery)
}

/// `<pid>.<start ns>`.
fn is_process_dir(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let mut parts = name.splitn(2, '.');
    matches!(
        (parts.next(), parts.next()),
        (Some(pid), Some(start)) if pid.parse::<u32>().is_ok() && start.parse::<u128>().is_ok()
    )
}

fn started(path: &Path) -> u128 {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split_once('.'))
        .and_then(|(_, s)| s.parse().ok())
        .unwrap_or(0)
}

fn recover_process(
    dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    recovery: &mut Recovery,
) {
    let warn = |recovery: &mut Recovery, what: String| {
        recovery
            .warnings
            .push(format!("spool {}: {what}", dir.display()))
    };
    let lock_path = dir.join(LOCK);
    let lock = match OpenOptions::new().read(true).write(true).open(&lock_path) {
        Ok(lock) => lock,
        // A clean end removes the lock last: what is left is empty.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            remove_process_dir(dir);
            return;
        }
        Err(e) => return warn(recovery, format!("cannot open its lock: {e}")),
    };
    match set_lock(&lock) {
        Ok(true) => {}
        Ok(false) => return, // Its process is alive.
        Err(e) => return warn(recovery, format!("cannot take its lock: {e}")),
    }
    let spool = match DeadSpool::read(dir) {
        Ok(spool) => spool,
        Err(why) => {
            warn(
                recovery,
                format!("{why}; left as it is, renamed to .damaged, nothing recovered from it"),
            );
            let mut set_aside = dir.as_os_str().to_owned();
            set_aside.push(".damaged");
            let _ = std::fs::rename(dir, set_aside);
            return;
        }
    };
    recovery.processes += 1;
    let mut records = Vec::new();
    for ring in &spool.rings {
        spool.decode_ring(ring, &mut records, &mut |w| warn(recovery, w));
    }
    // By time; a ring's own records keep their order.
    records.sort_by_key(|r: &Decoded| r.unix_nanos);
    recovery.records += records.len();
    let mut complete = true;
    for (index, sink) in spool.manifest.sinks.iter().enumerate() {
        let written = match &sink.kind {
            SinkKind::File(path) => {
                let committed = spool.lengths.get(index).copied().unwrap_or((0, 0, 0));
                match append_to_file(path, committed, sink, &spool.manifest, &records) {
                    Ok(Some(warning)) => {
                        warn(recovery, warning);
                        Ok(())
                    }
                    Ok(None) => Ok(()),
                    Err(e) => Err(format!("{}: {e}", path.display())),
                }
            }
            SinkKind::Stdout => write_console(stdout, sink, &spool.manifest, &records),
            SinkKind::Stderr => write_console(stderr, sink, &spool.manifest, &records),
            SinkKind::Other(what) => {
                if !records.is_empty() {
                    warn(
                        recovery,
                        format!(
                            "the sink {what} cannot be written by another process: its \
                             recovered records went only to the other sinks"
                        ),
                    );
                }
                Ok(())
            }
        };
        if let Err(e) = written {
            complete = false;
            warn(recovery, format!("recovered records not written: {e}"));
        }
    }
    if complete {
        drop(lock);
        remove_process_dir(dir);
    }
}

/// Removes a process directory, its lock last.
fn remove_process_dir(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name() != LOCK {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let _ = std::fs::remove_file(dir.join(LOCK));
    let _ = std::fs::remove_dir(dir);
}

/// The most bytes past a file's committed length that recovery reads to tell what is there: a
/// few of the dead process's batches. More means other processes wrote to the file since.
const TAIL_LIMIT: u64 = 64 << 20;

/// Writes the records `sink` takes to `path`, once each: when the file is still the one the
/// process wrote and holds more than its committed length, the bytes after it are looked at.
/// - Only lines (or binary records) of the dead process, the last maybe torn: a batch cut by
///   its death, or written and not committed. The file is cut back and they are written again,
///   whole and marked.
/// - Lines of other processes too (a file several processes append to): nothing is cut, and the
///   records found there already are not written again; a line the death tore, if any, stays.
///
/// Returns a warning for the second case.
fn append_to_file(
    path: &Path,
    committed: (u64, u64, u64),
    sink: &ManifestSink,
    manifest: &Manifest,
    records: &[Decoded],
) -> io::Result<Option<String>> {
    use std::io::{Read, Seek};
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let meta = file.metadata()?;
    let (dev, ino, len) = committed;
    let taken: Vec<&Decoded> = records.iter().filter(|r| r.level <= sink.level).collect();
    let mut already = vec![false; taken.len()];
    let mut warning = None;
    let same_file = (dev, ino) != (0, 0) && (dev, ino) == (meta.dev(), meta.ino());
    if same_file && meta.len() > len {
        let mut tail = Vec::new();
        let past = meta.len() - len;
        if past <= TAIL_LIMIT {
            file.seek(io::SeekFrom::Start(len))?;
            (&mut file).take(past).read_to_end(&mut tail)?;
        }
        match (past <= TAIL_LIMIT).then(|| found_in_tail(&tail, sink, manifest, &taken)) {
            Some(found) if found.foreign == 0 => file.set_len(len)?,
            found => {
                let foreign = found.as_ref().map_or(0, |f| f.foreign);
                if let Some(found) = found {
                    already = found.ours;
                }
                warning = Some(format!(
                    "{}: other processes wrote to it after the dead one ({} of their lines \
                     past its last committed length, {past} bytes): it was not cut back; {} \
                     record(s) already in it were not written again, and a line cut by the \
                     death, if any, is still there",
                    path.display(),
                    foreign,
                    already.iter().filter(|a| **a).count()
                ));
            }
        }
    }
    let remaining = taken
        .into_iter()
        .zip(already)
        .filter_map(|(record, already)| (!already).then_some(record));
    let bytes = render_all(sink, manifest, remaining);
    if !bytes.is_empty() {
        (&file).write_all(&bytes)?;
    }
    Ok(warning)
}

/// What the bytes past a file's committed length hold.
struct Tail {
    /// Per record taken, whether its line (or binary record) is there.
    ours: Vec<bool>,
    /// Complete lines (or records) there that are none of ours.
    foreign: usize,
}

/// Compares `tail` with the lines the dead process would have written for `taken`, and with
/// those an earlier recovery of it wrote (marked). A torn last line counts as neither.
fn found_in_tail(
    tail: &[u8],
    sink: &ManifestSink,
    manifest: &Manifest,
    taken: &[&Decoded],
) -> Tail {
    let mut ours = vec![false; taken.len()];
    let mut foreign = 0;
    if sink.format == Format::Binary {
        let key = |nanos: i64, tid: u64, message: &str| (nanos, tid, message.to_string());
        let mut index: HashMap<(i64, u64, String), Vec<usize>> = HashMap::new();
        for (i, r) in taken.iter().enumerate().rev() {
            index
                .entry(key(r.unix_nanos, r.thread.id, &r.message))
                .or_default()
                .push(i);
        }
        let mut reader = super::Reader::new(tail);
        while let Some(item) = reader.next_record() {
            let Ok(record) = item else { continue };
            // Each record of the tail stands for one of ours: equal ones are taken in turn.
            let found = index
                .get_mut(&key(
                    record.unix_nanos(),
                    record.thread_id(),
                    record.message(),
                ))
                .and_then(Vec::pop);
            match found {
                Some(i) => ours[i] = true,
                None => foreign += 1,
            }
        }
        return Tail { ours, foreign };
    }
    let mut renderer = line_renderer(sink, manifest);
    let mut index: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
    for (i, r) in taken.iter().enumerate().rev() {
        let unmarked = Decoded {
            recovered: false,
            ..(*r).clone()
        };
        let mut line = Vec::new();
        renderer.render_decoded(&unmarked, &mut line);
        index.entry(line).or_default().push(i);
        // As an earlier recovery, killed before it removed the spool, wrote it.
        let mut marked = Vec::new();
        renderer.render_decoded(r, &mut marked);
        index.entry(marked).or_default().push(i);
    }
    let mut rest = tail;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        let (line, after) = rest.split_at(end + 1);
        rest = after;
        match index.get_mut(line).and_then(Vec::pop) {
            Some(i) => ours[i] = true,
            None => foreign += 1,
        }
    }
    Tail { ours, foreign }
}

fn write_console(
    out: &mut dyn Write,
    sink: &ManifestSink,
    manifest: &Manifest,
    records: &[Decoded],
) -> Result<(), String> {
    let bytes = render_all(
        sink,
        manifest,
        records.iter().filter(|r| r.level <= sink.level),
    );
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

/// The lines (or blocks) of the records `sink` takes, as the dead process would have written
/// them, marked as recovered.
fn render_all<'a>(
    sink: &ManifestSink,
    manifest: &Manifest,
    taken: impl Iterator<Item = &'a Decoded>,
) -> Vec<u8> {
    let mut out = Vec::new();
    if sink.format == Format::Binary {
        let mut encoder = crate::binary::encoder::Encoder::new(usize::MAX);
        for record in taken {
            let view = super::view_of(record);
            if encoder.encode(&view) {
                encoder.close_block(|block| out.extend_from_slice(block));
            }
        }
        encoder.close_block(|block| out.extend_from_slice(block));
        return out;
    }
    let mut renderer = line_renderer(sink, manifest);
    for record in taken {
        renderer.render_decoded(record, &mut out);
    }
    out
}

/// The renderer of a text, JSON or logfmt sink of the dead process.
fn line_renderer(sink: &ManifestSink, manifest: &Manifest) -> super::Renderer {
    let zone = if manifest.utc {
        TimeZone::utc()
    } else {
        TimeZone::system().unwrap_or_else(|_| TimeZone::utc())
    };
    let pattern = Pattern::parse(&manifest.pattern).unwrap_or_default();
    match sink.format {
        Format::Json => super::Renderer::json(zone),
        Format::Logfmt => super::Renderer::logfmt(zone),
        _ => super::Renderer::text(pattern, zone),
    }
}

/// A dead process's spool, read whole.
struct DeadSpool {
    manifest: Manifest,
    /// Per manifest file: device, inode and length at the last committed cut.
    lengths: Vec<(u64, u64, u64)>,
    clock: (u64, i64, f64),
    sites: HashMap<u64, Arc<SpooledSite>>,
    args: HashMap<u64, Result<Shape, ShapeError>>,
    rings: Vec<RingImage>,
    usize_bytes: usize,
}

/// A call site as its definition gives it.
pub(crate) struct SpooledSite {
    pub(crate) def: Arc<SiteDef>,
    /// Its placeholders' literal text and specs, read again from the format string; `None`
    /// when it does not parse (its records keep the literal text, `<?>` for the values).
    pub(crate) text: Option<SiteText>,
}

struct RingImage {
    bytes: Vec<u8>,
    capacity: usize,
    head: u64,
    from: u64,
    thread: Arc<ThreadInfo>,
}

impl DeadSpool {
    fn read(dir: &Path) -> Result<DeadSpool, String> {
        let state = std::fs::read(dir.join(STATE)).map_err(|e| format!("state: {e}"))?;
        if state.len() < STATE_BYTES || state[..8] != STATE_MAGIC {
            return Err("state: not a spool state file".into());
        }
        let usize_bytes = u32_at(&state, 12).unwrap_or(0) as usize;
        if usize_bytes != 8 && usize_bytes != 4 {
            return Err(format!("state: a ring position of {usize_bytes} bytes"));
        }
        let current = u64_at(&state, STATE_CURRENT).unwrap_or(0);
        let mut lengths = Vec::new();
        if current != 0 {
            let slot = STATE_SLOTS + (current % 2) as usize * SLOT_BYTES;
            if u64_at(&state, slot) != Some(current) {
                return Err("state: the committed cut's slot is not that cut's".into());
            }
            let files = u64_at(&state, slot + 8).unwrap_or(0).min(MAX_FILES as u64) as usize;
            for i in 0..files {
                let at = slot + 16 + i * 24;
                lengths.push((
                    u64_at(&state, at).unwrap_or(0),
                    u64_at(&state, at + 8).unwrap_or(0),
                    u64_at(&state, at + 16).unwrap_or(0),
                ));
            }
        }
        let clock = read_clock(&state)?;
        let manifest = std::fs::read(dir.join(MANIFEST))
            .map_err(|e| format!("manifest: {e}"))
            .and_then(|bytes| Manifest::parse(&bytes))?;
        let defs = std::fs::read(dir.join(DEFS)).unwrap_or_default();
        let (sites, args) = parse_defs(&defs);
        let mut rings = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(RING_PREFIX) {
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    if let Some(ring) = RingImage::parse(bytes, current, usize_bytes) {
                        rings.push(ring);
                    }
                }
            }
        }
        rings.sort_by_key(|r| r.thread.serial);
        Ok(DeadSpool {
            manifest,
            lengths,
            clock,
            sites,
            args,
            rings,
            usize_bytes,
        })
    }

    fn unix_nanos(&self, ticks: u64) -> i64 {
        let (base_ticks, base_wall, nanos_per_tick) = self.clock;
        let delta = ticks.wrapping_sub(base_ticks) as i64 as f64 * nanos_per_tick;
        base_wall + delta as i64
    }

    /// Every record of `ring` after its committed position.
    fn decode_ring(&self, ring: &RingImage, out: &mut Vec<Decoded>, warn: &mut dyn FnMut(String)) {
        let mask = ring.capacity as u64 - 1;
        let mut pos = ring.from;
        let storage = &ring.bytes[PAGE..];
        let mut undefined = 0usize;
        // A lost oversize record is dated like the record before it.
        let mut last_nanos = self.clock.1;
        while pos != ring.head && ring.head.wrapping_sub(pos) <= ring.capacity as u64 {
            let offset = (pos & mask) as usize;
            let (Some(len), Some(kind)) = (u32_at(storage, offset), u32_at(storage, offset + 4))
            else {
                warn(format!(
                    "thread {}: a frame header past the ring",
                    ring.thread.name
                ));
                return;
            };
            let len = len as usize;
            if len < 8 || len % 8 != 0 || offset + len > storage.len() {
                warn(format!(
                    "thread {}: a damaged frame at position {pos}; the rest of this ring is lost",
                    ring.thread.name
                ));
                return;
            }
            pos = pos.wrapping_add(len as u64);
            if kind == 0 {
                continue;
            }
            let body = &storage[offset + 8..offset + len];
            if kind & (1 << 31) != 0 {
                out.push(self.lost_oversize(ring, body, last_nanos));
                continue;
            }
            match self.decode_body(ring, kind, body) {
                Ok(record) => {
                    last_nanos = record.unix_nanos;
                    out.push(record)
                }
                Err(Undecodable::ArgsUndefined(record)) => {
                    last_nanos = record.unix_nanos;
                    undefined += 1;
                    out.push(*record);
                }
                Err(Undecodable::Damaged(why)) => warn(format!(
                    "thread {}: a record not recovered ({why})",
                    ring.thread.name
                )),
            }
        }
        if undefined > 0 {
            warn(format!(
                "thread {}: {undefined} record(s) of a call site logged with an argument list \
                 it was not first defined with (a call in a generic function): recovered with \
                 `<?>` for their values",
                ring.thread.name
            ));
        }
    }

    fn decode_body(
        &self,
        ring: &RingImage,
        kind: u32,
        body: &[u8],
    ) -> Result<Decoded, Undecodable> {
        let damaged = |why: &'static str| Undecodable::Damaged(why);
        let ticks = u64_at(body, 0).ok_or(damaged("no timestamp"))?;
        let mut record = Decoded {
            unix_nanos: self.unix_nanos(ticks),
            thread: ring.thread.clone(),
            recovered: true,
            ..Decoded::default()
        };
        match kind {
            KIND_CALL_SITE | KIND_CALL_SITE_TRACED => {
                let w = self.usize_bytes;
                let site_addr = uint_at(body, 8, w).ok_or(damaged("no call site"))?;
                let args_addr = uint_at(body, 8 + w, w).ok_or(damaged("no argument list"))?;
                let prefix = if w == 8 { CALL_SITE_PREFIX } else { 16 };
                let (trace, args_at) = if kind == KIND_CALL_SITE_TRACED {
                    let bytes = body
                        .get(prefix..prefix + TraceContext::ENCODED)
                        .ok_or(damaged("a cut trace context"))?;
                    (
                        TraceContext::decode(bytes),
                        prefix + (TRACED_PREFIX - CALL_SITE_PREFIX),
                    )
                } else {
                    (None, prefix)
                };
                let site = self
                    .sites
                    .get(&site_addr)
                    .ok_or(damaged("a call site never defined"))?;
                record.site = Some(site.def.clone());
                record.level = site.def.level;
                record.static_metadata = true;
                record.trace = trace;
                let args = body.get(args_at..).unwrap_or(&[]);
                match (self.args.get(&args_addr), &site.text) {
                    (Some(Ok(shape)), Some(text)) => {
                        let mut fields = Fields::new();
                        decode(text, shape, args, &mut record.message, &mut fields)
                            .map_err(|_| damaged("values that do not match their shape"))?;
                        record.fields = fields;
                        Ok(record)
                    }
                    (Some(Err(_)), _) => Err(damaged("an argument list whose shape is damaged")),
                    _ => {
                        record.message = unknown_values(site);
                        Err(Undecodable::ArgsUndefined(Box::new(record)))
                    }
                }
            }
            KIND_DYNAMIC => {
                let mut rest = DynamicBody { rest: &body[8..] };
                let (Some(level), Some(line), Some(target), Some(file), Some(message)) = (
                    rest.u64(),
                    rest.u64(),
                    rest.bytes(),
                    rest.bytes(),
                    rest.bytes(),
                ) else {
                    return Err(damaged("a cut log or tracing record"));
                };
                let encoded_fields = rest.bytes().unwrap_or(&[]);
                record.trace = rest.bytes().and_then(TraceContext::decode);
                record.level = Level::from_u8(level as u8).unwrap_or(Level::Error);
                record.line = line as u32;
                record.target = String::from_utf8_lossy(target).into_owned();
                record.file = String::from_utf8_lossy(file).into_owned();
                let text = String::from_utf8_lossy(message);
                let mut fields = Fields::new();
                render_message(
                    &Message::Dynamic {
                        text: &text,
                        fields: encoded_fields,
                    },
                    &mut record.message,
                    &mut fields,
                    usize::MAX,
                );
                record.fields = fields;
                Ok(record)
            }
            _ => Err(damaged("an unknown record kind")),
        }
    }

    /// A record too large for the ring travelled on the dead process's heap: its place in the
    /// output says so.
    fn lost_oversize(&self, ring: &RingImage, body: &[u8], unix_nanos: i64) -> Decoded {
        let len = uint_at(body, self.usize_bytes, self.usize_bytes).unwrap_or(0);
        Decoded {
            unix_nanos,
            recovered: true,
            level: Level::Warn,
            target: "tachylog".into(),
            file: file!().into(),
            line: line!(),
            thread: ring.thread.clone(),
            message: format!(
                "a record of {len} bytes, larger than a quarter of the spool's ring, was on \
                 the heap of the dead process and is lost"
            ),
            ..Decoded::default()
        }
    }
}

enum Undecodable {
    /// The site is known, its values are not: the record keeps the site's text.
    ArgsUndefined(Box<Decoded>),
    Damaged(&'static str),
}

/// The site's message with `<?>` for each value.
fn unknown_values(site: &SpooledSite) -> String {
    let mut message = String::new();
    for literal in &site.def.literals {
        message.push_str(literal);
        message.push_str("<?>");
    }
    message.push_str(&site.def.tail);
    message
}

impl RingImage {
    fn parse(bytes: Vec<u8>, current: u64, usize_bytes: usize) -> Option<RingImage> {
        let h = RING_HEADER;
        if bytes.get(h..h + 8)? != RING_MAGIC {
            return None;
        }
        let capacity = u64_at(&bytes, h + RH_CAPACITY)? as usize;
        if !capacity.is_power_of_two() || capacity < 64 || bytes.len() < PAGE + capacity {
            return None;
        }
        let start = u64_at(&bytes, h + RH_START)?;
        let head_offset = u64_at(&bytes, h + RH_HEAD_OFFSET)? as usize;
        let head = uint_at(&bytes, head_offset, usize_bytes)?;
        let mut from = start;
        for slot in 0..2 {
            let at = h + RH_COMMITTED + slot * 16;
            if current != 0 && u64_at(&bytes, at) == Some(current) {
                from = u64_at(&bytes, at + 8)?;
            }
        }
        let tid = u64_at(&bytes, h + RH_TID)?;
        let name_len =
            (u16::from_le_bytes(bytes.get(h + RH_NAME..h + RH_NAME + 2)?.try_into().ok()?)
                as usize)
                .min(MAX_NAME);
        let name = String::from_utf8_lossy(bytes.get(h + RH_NAME + 2..h + RH_NAME + 2 + name_len)?)
            .into_owned();
        if head.wrapping_sub(from) > capacity as u64 {
            return None;
        }
        Some(RingImage {
            bytes,
            capacity,
            head,
            from,
            thread: Arc::new(ThreadInfo::new(name, tid)),
        })
    }
}

/// A dynamic (`log`, `tracing`) record's body after its timestamp.
struct DynamicBody<'a> {
    rest: &'a [u8],
}

impl<'a> DynamicBody<'a> {
    fn u64(&mut self) -> Option<u64> {
        let v = u64_at(self.rest, 0)?;
        self.rest = &self.rest[8..];
        Some(v)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        if self.rest.len() < len {
            return None;
        }
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(bytes)
    }
}

/// The sinks of the dead process, and how it laid out its lines.
struct Manifest {
    pattern: String,
    utc: bool,
    sinks: Vec<ManifestSink>,
}

struct ManifestSink {
    kind: SinkKind,
    format: Format,
    level: Level,
}

enum SinkKind {
    File(PathBuf),
    Stdout,
    Stderr,
    Other(String),
}

impl Manifest {
    /// See [`manifest`] for the format.
    fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "manifest: not UTF-8".to_string())?;
        let mut lines = text.lines();
        if lines.next() != Some(MANIFEST_HEADER) {
            return Err("manifest: not a spool manifest".into());
        }
        let mut manifest = Manifest {
            pattern: crate::format::pattern::DEFAULT_PATTERN.to_string(),
            utc: false,
            sinks: Vec::new(),
        };
        for line in lines {
            let (key, value) = line.split_once('\t').unwrap_or((line, ""));
            match key {
                "pattern" => manifest.pattern = unescape(value),
                "utc" => manifest.utc = value == "1",
                "sink" => {
                    let mut parts = value.splitn(3, '\t');
                    let (Some(format), Some(level), Some(target)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(format!("manifest: a bad sink line `{line}`"));
                    };
                    let format = match format {
                        "text" => Format::Text,
                        "json" => Format::Json,
                        "logfmt" => Format::Logfmt,
                        "binary" => Format::Binary,
                        other => return Err(format!("manifest: an unknown format `{other}`")),
                    };
                    let level = level
                        .parse::<Level>()
                        .map_err(|_| format!("manifest: an unknown level `{level}`"))?;
                    let kind = match target.split_once(':') {
                        Some(("file", path)) => SinkKind::File(PathBuf::from(unescape(path))),
                        Some(("stdout", _)) => SinkKind::Stdout,
                        Some(("stderr", _)) => SinkKind::Stderr,
                        _ => SinkKind::Other(unescape(target)),
                    };
                    manifest.sinks.push(ManifestSink {
                        kind,
                        format,
                        level,
                    });
                }
                _ => {}
            }
        }
        Ok(manifest)
    }
}

/// The first line of a manifest.
const MANIFEST_HEADER: &str = "tachylog spool manifest 1";

/// A manifest (see `SPOOL.md`): tab-separated lines, `\t`, `\n` and `\\` escaped.
pub(crate) fn manifest(
    pattern: &str,
    utc: bool,
    sinks: &[(Format, Level, ManifestTarget)],
) -> Vec<u8> {
    let mut out = format!(
        "{MANIFEST_HEADER}\npattern\t{}\nutc\t{}\n",
        escape(pattern),
        utc as u8
    );
    for (format, level, target) in sinks {
        let format = match format {
            Format::Text => "text",
            Format::Json => "json",
            Format::Logfmt => "logfmt",
            Format::Binary => "binary",
        };
        let target = match target {
            ManifestTarget::File(path) => format!("file:{}", escape(&path.to_string_lossy())),
            ManifestTarget::Stdout => "stdout:".into(),
            ManifestTarget::Stderr => "stderr:".into(),
            ManifestTarget::Other(what) => format!("other:{}", escape(what)),
        };
        out.push_str(&format!("sink\t{format}\t{}\t{target}\n", level.as_str()));
    }
    out.into_bytes()
}

/// Where a sink of the manifest writes.
pub(crate) enum ManifestTarget {
    File(PathBuf),
    Stdout,
    Stderr,
    Other(String),
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The definitions, up to the first damaged entry (a write cut by the process's death defines
/// nothing a published record uses).
#[allow(clippy::type_complexity)]
fn parse_defs(
    bytes: &[u8],
) -> (
    HashMap<u64, Arc<SpooledSite>>,
    HashMap<u64, Result<Shape, ShapeError>>,
) {
    let (mut sites, mut args) = (HashMap::new(), HashMap::new());
    let mut at = 0;
    while let (Some(len), Some(crc)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) {
        let Some(payload) = bytes.get(at + 8..at + 8 + len as usize) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        at += 8 + len as usize;
        match payload.first() {
            Some(&DEF_SITE) => {
                if let Some((addr, site)) = parse_site(&payload[1..]) {
                    sites.insert(addr, Arc::new(site));
                }
            }
            Some(&DEF_ARGS) => {
                if let Some(addr) = u64_at(payload, 1) {
                    args.insert(addr, Shape::parse(&payload[9..]));
                }
            }
            _ => {}
        }
    }
    (sites, args)
}

fn parse_site(bytes: &[u8]) -> Option<(u64, SpooledSite)> {
    let mut c = DefCursor { bytes, at: 0 };
    let addr = c.u64()?;
    let def = SiteDef::read(&mut c)?;
    let text = SiteText::parse(&def.format, def.keys.clone()).ok();
    Some((
        addr,
        SpooledSite {
            def: Arc::new(def),
            text,
        },
    ))
}

/// A site definition in a spool's `defs` file: fixed-width little-endian numbers, strings with
/// a u32 length, read leniently: a damaged byte in a name costs a replacement character, not
/// the records of the site.
struct DefCursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl DefCursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

impl SiteDefSource for DefCursor<'_> {
    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn text(&mut self) -> Option<String> {
        let len = self.number()? as usize;
        Some(String::from_utf8_lossy(self.take(len)?).into_owned())
    }
    fn number(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

fn read_clock(state: &[u8]) -> Result<(u64, i64, f64), String> {
    let version = u64_at(state, STATE_CLOCK).unwrap_or(0);
    if version == 0 {
        return Err("state: the clock was never published".into());
    }
    // A process killed in the middle of a publication leaves the version odd; the fields are
    // then a mix of two calibrations taken a second apart, off by far less than a millisecond.
    Ok((
        u64_at(state, STATE_CLOCK + 8).unwrap_or(0),
        u64_at(state, STATE_CLOCK + 16).unwrap_or(0) as i64,
        f64::from_bits(u64_at(state, STATE_CLOCK + 24).unwrap_or(0)),
    ))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// A `usize` of the dead process, `width` bytes.
fn uint_at(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    match width {
        8 => u64_at(bytes, at),
        4 => u32_at(bytes, at).map(u64::from),
        _ => None,
    }
}

/// The fuzz target `spool_recovery`: `defs` as a `defs` file and `storage` as a ring's frames
/// from position 0 to its length (rounded down to a frame), decoded and rendered in every
/// format as recovery does; `storage` is also read as a whole ring file and as a state file.
#[cfg(fuzzing)]
pub(crate) fn fuzz(defs: &[u8], storage: &[u8]) {
    let _ = RingImage::parse(storage.to_vec(), 1, 8);
    let _ = read_clock(storage);
    let _ = Manifest::parse(storage);
    let (sites, args) = parse_defs(defs);
    let capacity = storage.len().max(64).next_power_of_two();
    let mut bytes = vec![0u8; PAGE + capacity];
    bytes[PAGE..PAGE + storage.len()].copy_from_slice(storage);
    let ring = RingImage {
        bytes,
        capacity,
        head: (storage.len() & !7) as u64,
        from: 0,
        thread: Arc::new(ThreadInfo::new("fuzz".into(), 1)),
    };
    let spool = DeadSpool {
        manifest: Manifest {
            pattern: crate::format::pattern::DEFAULT_PATTERN.to_string(),
            utc: true,
            sinks: [Format::Text, Format::Json, Format::Logfmt, Format::Binary]
                .into_iter()
                .map(|format| ManifestSink {
                    kind: SinkKind::Stdout,
                    format,
                    level: Level::Trace,
                })
                .collect(),
        },
        lengths: Vec::new(),
        clock: (0, 0, 1.0),
        sites,
        args,
        rings: Vec::new(),
        usize_bytes: 8,
    };
    let mut records = Vec::new();
    spool.decode_ring(&ring, &mut records, &mut |_| {});
    for sink in &spool.manifest.sinks {
        let bytes = render_all(sink, &spool.manifest, records.iter());
        if sink.format != Format::Binary {
            assert!(
                std::str::from_utf8(&bytes).is_ok(),
                "a line that is not UTF-8"
            );
        }
    }
}
