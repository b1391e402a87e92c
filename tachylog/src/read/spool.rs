//! Reading what a dead process left in its spool (see `queue::spool` and `SPOOL.md`): the
//! records it logged that its back end had not committed as written when it died, decoded with
//! the definitions (no address or code of the dead program is needed) and merged by time, one
//! ring at a time in memory's worth of a few frames each. The back end's recovery
//! (`backend::recovery`) writes them to its own sinks.
//!
//! Nothing here trusts what it reads. The root and the process directories must be private to
//! the user (`queue::spool::PrivateDir`); every file is opened without following links, must be
//! a regular file of the user's, and is read only up to the size the layout allows; every
//! length, position and clock field is checked before use. What cannot be read is named in a
//! warning, with the number of bytes or records it concerns: a directory set aside, a ring or
//! a large record missing or damaged, the rest of a ring after a damaged frame.

use crate::binary::decoder::{Decoded, SiteDef, SiteDefSource};
use crate::codec::shape::Shape;
use crate::error::ShapeError;
use crate::fields::Fields;
use crate::format::pattern::{render_message, Message};
use crate::format::shaped::{decode, SiteText};
use crate::queue::registry::ThreadInfo;
use crate::queue::spool::journal::{self, Journal, JournaledWrite, RecordId};
use crate::queue::spool::layout::*;
use crate::queue::spool::{remove_process_dir, set_lock, PrivateDir};
use crate::record::{
    CallSiteLayout, TraceContext, KIND_DYNAMIC, KIND_DYNAMIC_SCOPED, KIND_SCOPE_EVENT,
};
use crate::Level;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// The largest ring recovery reads (a spool's rings are `Builder::ring_capacity`, 16 MiB at
/// most by default): a header claiming more is damage.
pub(crate) const MAX_RING_CAPACITY: u64 = 1 << 30;
/// The largest `defs` file recovery reads: a few hundred bytes per call site.
const MAX_DEFS: u64 = 64 << 20;
/// The largest record too large for its ring that recovery reads back.
pub(crate) const MAX_LARGE_RECORD: u64 = 1 << 30;
/// Bytes of a ring read at a time.
const WINDOW: usize = 64 << 10;

/// The spool root of [`dead_processes`], and the dead processes' directories in it.
pub(crate) struct DeadProcesses {
    pub(crate) root: PrivateDir,
    pub(crate) processes: Vec<DeadProcess>,
}

/// A dead process's directory, its lock taken: no live process writes it, and no other
/// recovery reads it, until it is dropped.
pub(crate) struct DeadProcess {
    name: OsString,
    dir: PrivateDir,
    _lock: File,
}

/// The directories of dead processes under `root`, oldest first (their records come first in
/// the files they share), each locked; `None` when `root` does not exist. The calling process's
/// own spool, if it has one, is left out. What cannot be taken (a directory of someone else's, a
/// lock that cannot be opened) is a warning; directories of live processes are skipped
/// silently. Fails when `root` itself cannot be trusted or read.
pub(crate) fn dead_processes(
    root: &Path,
    warnings: &mut Vec<String>,
) -> io::Result<Option<DeadProcesses>> {
    let root = match PrivateDir::open_root(root, false) {
        Ok(root) => root,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let entries = root.entries()?;
    // A recovery's removal that a death interrupted: what is left was written. A directory
    // whose process died while making it (its lock free): it holds no record yet.
    for name in &entries {
        let Ok(dir) = root.open_dir(name) else {
            continue;
        };
        if is_being_removed(name) {
            remove_process_dir(&root, name, &dir);
        } else if with_suffix(name, BUILDING) && made_before(name, BUILDING_GRACE) {
            // Its process has had ample time to take its lock: a free lock means it died.
            let free = dir
                .open_file(LOCK, true, 0)
                .is_ok_and(|lock| set_lock(&lock).unwrap_or(false));
            if free {
                remove_process_dir(&root, name, &dir);
            }
        }
    }
    let mut names: Vec<(u128, OsString)> = entries
        .into_iter()
        .filter_map(|name| Some((started(&name)?, name)))
        .collect();
    names.sort();
    // This process's own spool is alive whatever its lock says: `fcntl` locks do not exclude
    // the process that holds them. Its pid is no help: a container's process is pid 1 at every
    // restart.
    let own = crate::queue::spool::active()
        .and_then(|spool| spool.dir().file_name().map(OsStr::to_os_string));
    let mut processes = Vec::new();
    for (_, name) in names {
        if own.as_deref() == Some(name.as_os_str()) {
            continue;
        }
        let dir = match root.open_dir(&name) {
            Ok(dir) => dir,
            Err(e) => {
                warnings.push(format!("{e}; left alone, nothing recovered from it"));
                continue;
            }
        };
        let lock = match dir.open_file(LOCK, true, 0) {
            Ok(lock) => lock,
            // A clean end removes the lock last: what is left has nothing to recover.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                remove_process_dir(&root, &name, &dir);
                continue;
            }
            Err(e) => {
                warnings.push(format!(
                    "{}: its lock: {e}; left alone",
                    dir.path().display()
                ));
                continue;
            }
        };
        match set_lock(&lock) {
            Ok(true) => processes.push(DeadProcess {
                name,
                dir,
                _lock: lock,
            }),
            Ok(false) => {} // Its process is alive.
            Err(e) => warnings.push(format!(
                "{}: cannot take its lock: {e}; left alone",
                dir.path().display()
            )),
        }
    }
    Ok(Some(DeadProcesses { root, processes }))
}

/// How old a directory being made must be before a recovery may take its free lock for a
/// death: between making the directory and taking its lock, a live process's lock is free too.
const BUILDING_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the directory `<pid>.<start ns><suffix>` was made more than `age` ago, by the start
/// time in its name.
fn made_before(name: &OsStr, age: std::time::Duration) -> bool {
    let Some(started) = name
        .to_str()
        .and_then(|n| n.strip_suffix(BUILDING))
        .and_then(|n| started(OsStr::new(n)))
    else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    now.saturating_sub(started) > age.as_nanos()
}

/// What a process directory's name ends with while a recovery removes it.
const REMOVING: &str = ".removing";

/// `<pid>.<start ns>.removing`: a directory whose removal began.
fn is_being_removed(name: &OsStr) -> bool {
    with_suffix(name, REMOVING)
}

/// `<pid>.<start ns>` followed by `suffix`.
fn with_suffix(name: &OsStr, suffix: &str) -> bool {
    name.to_str()
        .and_then(|n| n.strip_suffix(suffix))
        .is_some_and(|n| started(OsStr::new(n)).is_some())
}

/// `<pid>.<start ns>`: the start time, which orders the directories.
fn started(name: &OsStr) -> Option<u128> {
    let (pid, start) = name.to_str()?.split_once('.')?;
    pid.parse::<u32>().ok()?;
    start.parse().ok()
}

impl DeadProcess {
    /// The directory, for messages.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Reads the state, the definitions and the rings' headers.
    pub(crate) fn open(&self) -> Result<DeadSpool<'_>, String> {
        DeadSpool::open(&self.dir)
    }

    /// The journal this recovery's writes are noted in, in the directory, so that a recovery
    /// killed halfway is followed by one that writes only what it did not (see
    /// `queue::spool::journal`).
    pub(crate) fn recovery_journal(&self, root: &PrivateDir) -> io::Result<Journal> {
        let file = self.dir.open_or_create_file(journal::RECOVERY_JOURNAL)?;
        let owner = format!("{}/recovery", self.name.to_string_lossy());
        Ok(Journal::new(
            owner,
            vec![file],
            crate::queue::spool::lock_stripes(root),
        ))
    }

    /// Removes the directory: its records were written. It is renamed first, so that a death
    /// halfway through leaves a directory the next recovery removes without a word, not a
    /// spool with its state gone (which would be set aside as damaged).
    pub(crate) fn remove(self, root: &PrivateDir) {
        crate::queue::spool::kill_before_removal_if_asked();
        let mut removing = self.name.clone();
        removing.push(REMOVING);
        let name = match root.rename(&self.name, &removing) {
            Ok(()) => removing,
            Err(_) => self.name.clone(),
        };
        remove_process_dir(root, &name, &self.dir);
    }

    /// Renames the directory `<name>.damaged` and leaves it for a person; recovery never looks
    /// at it again.
    pub(crate) fn set_aside(self, root: &PrivateDir) {
        let mut aside = self.name.clone();
        aside.push(".damaged");
        let _ = root.rename(&self.name, &aside);
    }
}

/// A dead process's spool, open for reading.
pub(crate) struct DeadSpool<'a> {
    dir: &'a PrivateDir,
    clock: Clock,
    sites: HashMap<u64, Arc<SpooledSite>>,
    args: HashMap<u64, Result<Shape, ShapeError>>,
    rings: Vec<RingImage>,
    usize_bytes: usize,
    /// What was found wrong while opening (rings refused, say).
    pub(crate) warnings: Vec<String>,
}

/// A call site as its definition gives it.
pub(crate) struct SpooledSite {
    pub(crate) def: Arc<SiteDef>,
    /// Its placeholders' literal text and specs, read again from the format string; `None`
    /// when it does not parse (its records keep the literal text, `<?>` for the values).
    pub(crate) text: Option<SiteText>,
}

/// The clock's calibration: ticks at `base_ticks` were `base_wall` ns after the epoch,
/// `nanos_per_tick` apart.
#[derive(Clone, Copy)]
struct Clock {
    base_ticks: u64,
    base_wall: i64,
    nanos_per_tick: f64,
}

impl Clock {
    fn unix_nanos(&self, ticks: u64) -> i64 {
        // Wrapping, then saturating: a tick count from a damaged frame dates its record
        // somewhere absurd, never out of range.
        let delta = ticks.wrapping_sub(self.base_ticks) as i64 as f64 * self.nanos_per_tick;
        self.base_wall.saturating_add(delta as i64)
    }
}

/// A ring's file and what its header says.
struct RingImage {
    file: File,
    capacity: u64,
    head: u64,
    from: u64,
    serial: u64,
    thread: Arc<ThreadInfo>,
}

impl<'a> DeadSpool<'a> {
    fn open(dir: &'a PrivateDir) -> Result<DeadSpool<'a>, String> {
        let state = read_all(dir, STATE, STATE_BYTES as u64)?;
        if state.len() != STATE_BYTES || state[..8] != STATE_MAGIC {
            return Err(if state.get(..7) == Some(&STATE_MAGIC[..7]) {
                "state: a spool of another version of tachylog".into()
            } else {
                "state: not a spool state file".into()
            });
        }
        let usize_bytes = u32_at(&state, 12).unwrap_or(0) as usize;
        if usize_bytes != 8 && usize_bytes != 4 {
            return Err(format!("state: a ring position of {usize_bytes} bytes"));
        }
        let current = u64_at(&state, STATE_CURRENT).unwrap_or(0);
        if current != 0 {
            let slot = STATE_SLOTS + (current % 2) as usize * SLOT_BYTES;
            if u64_at(&state, slot) != Some(current) {
                return Err("state: the committed cut's slot is not that cut's".into());
            }
        }
        let clock = read_clock(&state)?;
        let defs = read_all(dir, DEFS, MAX_DEFS)?;
        let (sites, args) = parse_defs(&defs);
        let mut spool = DeadSpool {
            dir,
            clock,
            sites,
            args,
            rings: Vec::new(),
            usize_bytes,
            warnings: Vec::new(),
        };
        let entries = dir
            .entries()
            .map_err(|e| format!("{}: {e}", dir.path().display()))?;
        for name in entries {
            let Some(name) = name.to_str().filter(|n| is_ring_name(n)) else {
                continue;
            };
            match spool.open_ring(name, current) {
                Ok(ring) => spool.rings.push(ring),
                Err(why) => spool
                    .warnings
                    .push(format!("{name}: {why}; none of its records recovered")),
            }
        }
        spool.rings.sort_by_key(|r| r.serial);
        Ok(spool)
    }

    /// Every write the dead process's journals (and those of earlier recoveries of it) tell
    /// of; what cannot be read is a warning, its writes' records then written again.
    pub(crate) fn journaled_writes(&self, warnings: &mut Vec<String>) -> Vec<JournaledWrite> {
        let mut writes = Vec::new();
        let names = journal::LIVE_JOURNALS
            .iter()
            .chain([&journal::RECOVERY_JOURNAL]);
        for name in names {
            let read = self
                .dir
                .open_file(name, false, journal::MAX_JOURNAL)
                .and_then(|file| {
                    let mut bytes = Vec::new();
                    file.take(journal::MAX_JOURNAL).read_to_end(&mut bytes)?;
                    Ok(bytes)
                });
            match read {
                Ok(bytes) => writes.extend(journal::read(&bytes)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => warnings.push(format!(
                    "{name}: {e}; the records its writes took may be written twice"
                )),
            }
        }
        writes
    }

    fn open_ring(&self, name: &str, current: u64) -> Result<RingImage, String> {
        let file = self
            .dir
            .open_file(name, false, PAGE as u64 + MAX_RING_CAPACITY)
            .map_err(|e| e.to_string())?;
        let mut header = vec![0u8; PAGE];
        file.read_exact_at(&mut header, 0)
            .map_err(|e| format!("its header: {e}"))?;
        let h = RING_HEADER;
        if header.get(h..h + 8) != Some(&RING_MAGIC[..]) {
            return Err("not a ring file".into());
        }
        let field = |at| u64_at(&header, h + at).ok_or("a header cut short");
        let capacity = field(RH_CAPACITY)?;
        if !capacity.is_power_of_two() || !(64..=MAX_RING_CAPACITY).contains(&capacity) {
            return Err(format!("a capacity of {capacity} bytes"));
        }
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        if len != PAGE as u64 + capacity {
            return Err(format!(
                "{len} bytes where a ring of {capacity} takes {}",
                PAGE as u64 + capacity
            ));
        }
        let head_offset = usize::try_from(field(RH_HEAD_OFFSET)?).unwrap_or(usize::MAX);
        if head_offset >= h || head_offset % 8 != 0 {
            return Err(format!("its head at offset {head_offset}"));
        }
        let head = uint_at(&header, head_offset, self.usize_bytes).ok_or("no head")?;
        let mut from = field(RH_START)?;
        for slot in 0..2 {
            let at = RH_COMMITTED + slot * 16;
            if current != 0 && field(at)? == current {
                from = field(at + 8)?;
            }
        }
        let unread = head.wrapping_sub(from);
        if unread > capacity {
            return Err(format!(
                "{unread} bytes written since its last committed position, more than the \
                 ring holds ({capacity}): they were overwritten"
            ));
        }
        if from % 8 != 0 {
            return Err(format!("a committed position ({from}) between frames"));
        }
        let name_len = (u16::from_le_bytes([header[h + RH_NAME], header[h + RH_NAME + 1]])
            as usize)
            .min(MAX_NAME);
        let thread_name = String::from_utf8_lossy(&header[h + RH_NAME + 2..][..name_len]);
        Ok(RingImage {
            file,
            capacity,
            head,
            from,
            serial: field(RH_SERIAL)?,
            thread: Arc::new(ThreadInfo::named(&thread_name, field(RH_TID)?)),
        })
    }

    /// Every record after the rings' committed positions, oldest first (a ring's own records
    /// in their order). With `holes`, an opaque value (a `CopyArg` of the dead program's own
    /// type) is written as `format::shaped::HOLE` (see [`decode`]).
    pub(crate) fn records(&self, holes: bool) -> Records<'_> {
        let mut rings: Vec<RingReader<'_>> = self
            .rings
            .iter()
            .map(|image| RingReader {
                image,
                pos: image.from,
                window: Vec::new(),
                window_start: 0,
                last_nanos: self.clock.base_wall,
                undefined: 0,
                next: None,
                next_position: image.from,
                done: false,
            })
            .collect();
        let mut warnings = Vec::new();
        for ring in &mut rings {
            ring.advance(self, holes, &mut warnings);
        }
        Records {
            spool: self,
            rings,
            holes,
            current: None,
            warnings,
        }
    }

    fn decode_body(
        &self,
        thread: &Arc<ThreadInfo>,
        kind: u32,
        body: &[u8],
        holes: bool,
    ) -> Result<Decoded, Undecodable> {
        let damaged = |why: &'static str| Undecodable::Damaged(why);
        let ticks = u64_at(body, 0).ok_or(damaged("no timestamp"))?;
        let mut record = Decoded {
            unix_nanos: self.clock.unix_nanos(ticks),
            thread: thread.clone(),
            recovered: true,
            ..Decoded::default()
        };
        if let Some(layout) = CallSiteLayout::of_kind(kind) {
            let w = self.usize_bytes;
            let site_addr = uint_at(body, 8, w).ok_or(damaged("no call site"))?;
            let args_addr = uint_at(body, 8 + w, w).ok_or(damaged("no argument list"))?;
            let prefix = 8 + 2 * w;
            let trace = if layout.traced {
                let at = prefix + layout.trace_offset();
                let bytes = body
                    .get(at..at + TraceContext::ENCODED)
                    .ok_or(damaged("a cut trace context"))?;
                TraceContext::decode(bytes)
            } else {
                None
            };
            let args_at = prefix + layout.extra();
            let site = self
                .sites
                .get(&site_addr)
                .ok_or(damaged("a call site never defined"))?;
            record.site = Some(site.def.clone());
            record.level = site.def.level;
            record.trace = trace;
            let args = body.get(args_at..).unwrap_or(&[]);
            match (self.args.get(&args_addr), &site.text) {
                (Some(Ok(shape)), Some(text)) => {
                    let mut fields = Fields::new();
                    decode(text, shape, args, holes, &mut record.message, &mut fields)
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
        } else if kind == KIND_DYNAMIC || kind == KIND_DYNAMIC_SCOPED {
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
            record.level = u8::try_from(level)
                .ok()
                .and_then(Level::from_u8)
                .ok_or(damaged("an unknown level"))?;
            record.line = u32::try_from(line).unwrap_or(u32::MAX);
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
        } else {
            Err(damaged("an unknown record kind"))
        }
    }

    /// The body of the large record at `position` of `ring`, saved beside it (`large-…`):
    /// `len` bytes, as its frame says.
    fn large_body(&self, ring: &RingImage, position: u64, len: u64) -> Result<Vec<u8>, String> {
        let name = large_name(ring.serial, position);
        let bytes = read_all(self.dir, &name, MAX_LARGE_RECORD.min(len))?;
        if bytes.len() as u64 != len {
            return Err(format!(
                "{name}: {} bytes where its frame says {len}",
                bytes.len()
            ));
        }
        Ok(bytes)
    }
}

/// Whether `name` is `ring-<serial>`.
fn is_ring_name(name: &str) -> bool {
    name.strip_prefix(RING_PREFIX)
        .is_some_and(|serial| serial.parse::<u64>().is_ok())
}

/// The whole of file `name` in `dir`, which may hold at most `max` bytes.
fn read_all(dir: &PrivateDir, name: &str, max: u64) -> Result<Vec<u8>, String> {
    let file = dir.open_file(name, false, max).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{name}: {e}"))?;
    Ok(bytes)
}

/// The records of a dead spool, merged by time: see [`DeadSpool::records`].
pub(crate) struct Records<'a> {
    spool: &'a DeadSpool<'a>,
    rings: Vec<RingReader<'a>>,
    holes: bool,
    /// The ring serial and frame position of the record [`Iterator::next`] gave last: what the
    /// write journal names it by (`queue::spool::journal`).
    pub(crate) current: Option<RecordId>,
    /// What could not be recovered, one line each, as the records were read.
    pub(crate) warnings: Vec<String>,
}

impl Iterator for Records<'_> {
    type Item = Decoded;

    fn next(&mut self) -> Option<Decoded> {
        let oldest = self
            .rings
            .iter()
            .enumerate()
            .filter_map(|(i, ring)| Some((ring.next.as_ref()?.unix_nanos, i)))
            .min()?
            .1;
        let ring = &mut self.rings[oldest];
        let record = ring.next.take();
        self.current = Some((ring.image.serial, ring.next_position));
        ring.advance(self.spool, self.holes, &mut self.warnings);
        record
    }
}

/// One ring read frame by frame from its committed position to its head.
struct RingReader<'a> {
    image: &'a RingImage,
    pos: u64,
    /// Bytes of the storage from `window_start` on.
    window: Vec<u8>,
    window_start: u64,
    /// A lost record is dated like the record before it.
    last_nanos: i64,
    /// Records of a call site logged with an argument list never defined.
    undefined: usize,
    /// The next record, read ahead, and the position of its frame.
    next: Option<Decoded>,
    next_position: u64,
    done: bool,
}

impl RingReader<'_> {
    /// Reads the next record into `next` (none at the ring's end).
    fn advance(&mut self, spool: &DeadSpool<'_>, holes: bool, warnings: &mut Vec<String>) {
        while self.next.is_none() && !self.done {
            if let Err(why) = self.read_frame(spool, holes) {
                self.done = true;
                let lost = self.image.head.wrapping_sub(self.pos);
                warnings.push(format!(
                    "thread {}: {why} at position {}; the rest of its ring ({lost} bytes) is lost",
                    self.image.thread.name, self.pos
                ));
            }
        }
        if self.done && self.undefined > 0 {
            warnings.push(format!(
                "thread {}: {} record(s) of a call site logged with an argument list it never \
                 defined: recovered with `<?>` for their values",
                self.image.thread.name, self.undefined
            ));
            self.undefined = 0;
        }
    }

    /// One frame: a record into `next`, padding skipped, a lost record as a WARN record.
    fn read_frame(&mut self, spool: &DeadSpool<'_>, holes: bool) -> Result<(), String> {
        let image = self.image;
        if self.pos == image.head {
            self.done = true;
            return Ok(());
        }
        let offset = self.pos & (image.capacity - 1);
        let header = self.bytes(offset, 8)?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as u64;
        let kind = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let unread = image.head.wrapping_sub(self.pos);
        if len < 8 || len % 8 != 0 || offset + len > image.capacity || len > unread {
            return Err(format!("a damaged frame of {len} bytes"));
        }
        let position = self.pos;
        self.next_position = position;
        self.pos = self.pos.wrapping_add(len);
        // Padding, and a request scope's events: a recovered record is written whatever its
        // scope (whether the scope would have failed is not known).
        if kind == 0 || kind == KIND_SCOPE_EVENT {
            return Ok(());
        }
        let body = self.bytes(offset + 8, len - 8)?.to_vec();
        let thread = &image.thread;
        let decoded = if kind & (1 << 31) != 0 {
            let len = uint_at(&body, spool.usize_bytes, spool.usize_bytes).unwrap_or(0);
            match spool.large_body(image, position, len) {
                Ok(large) => spool.decode_body(thread, kind & !(1 << 31), &large, holes),
                Err(why) => {
                    self.next = Some(lost_large(thread, self.last_nanos, len, &why));
                    return Ok(());
                }
            }
        } else {
            spool.decode_body(thread, kind, &body, holes)
        };
        match decoded {
            Ok(record) => self.next = Some(record),
            Err(Undecodable::ArgsUndefined(record)) => {
                self.undefined += 1;
                self.next = Some(*record);
            }
            Err(Undecodable::Damaged(why)) => {
                self.next = Some(lost_record(thread, self.last_nanos, why));
            }
        }
        if let Some(record) = &self.next {
            self.last_nanos = record.unix_nanos;
        }
        Ok(())
    }

    /// `len` bytes of the storage at `offset` (within it: checked by the caller), through the
    /// window.
    fn bytes(&mut self, offset: u64, len: u64) -> Result<&[u8], String> {
        let end = offset + len;
        let window_end = self.window_start + self.window.len() as u64;
        if offset < self.window_start || end > window_end {
            let size = len.max(WINDOW as u64).min(self.image.capacity - offset);
            self.window.resize(size as usize, 0);
            self.image
                .file
                .read_exact_at(&mut self.window, PAGE as u64 + offset)
                .map_err(|e| format!("reading the ring: {e}"))?;
            self.window_start = offset;
        }
        let at = (offset - self.window_start) as usize;
        Ok(&self.window[at..at + len as usize])
    }
}

/// A WARN record in the place of a record that could not be read back.
fn lost_record(thread: &Arc<ThreadInfo>, unix_nanos: i64, why: &str) -> Decoded {
    tachylog_warning(
        thread,
        unix_nanos,
        format!("a record of this thread could not be recovered: {why}"),
    )
}

/// A WARN record in the place of a large record whose saved body is missing or damaged.
fn lost_large(thread: &Arc<ThreadInfo>, unix_nanos: i64, len: u64, why: &str) -> Decoded {
    tachylog_warning(
        thread,
        unix_nanos,
        format!(
            "a record of {len} bytes, too large for its ring, could not be recovered from the \
             spool: {why}"
        ),
    )
}

fn tachylog_warning(thread: &Arc<ThreadInfo>, unix_nanos: i64, message: String) -> Decoded {
    Decoded {
        unix_nanos,
        recovered: true,
        level: Level::Warn,
        target: "tachylog".into(),
        file: file!().into(),
        line: line!(),
        thread: thread.clone(),
        message,
        ..Decoded::default()
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
    let mut at = 0usize;
    while let (Some(len), Some(crc)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) {
        let Some(payload) = at
            .checked_add(8 + len as usize)
            .and_then(|end| bytes.get(at + 8..end))
        else {
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

/// The clock's calibration. A process killed in the middle of a publication leaves the version
/// odd; the fields are then a mix of two calibrations taken a second apart, off by far less
/// than a millisecond. A calibration no clock gives (a tick shorter than a femtosecond or
/// longer than a second, or not a number) is damage.
fn read_clock(state: &[u8]) -> Result<Clock, String> {
    let version = u64_at(state, STATE_CLOCK).unwrap_or(0);
    if version == 0 {
        return Err("state: the clock was never published".into());
    }
    let clock = Clock {
        base_ticks: u64_at(state, STATE_CLOCK + 8).unwrap_or(0),
        base_wall: u64_at(state, STATE_CLOCK + 16).unwrap_or(0) as i64,
        nanos_per_tick: f64::from_bits(u64_at(state, STATE_CLOCK + 24).unwrap_or(0)),
    };
    if !(1e-6..=1e9).contains(&clock.nanos_per_tick) {
        return Err(format!(
            "state: a clock of {} ns per tick",
            clock.nanos_per_tick
        ));
    }
    Ok(clock)
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

/// The fuzz target `spool_recovery`: a spool directory made for real from untrusted bytes (see
/// `__fuzz::spool_recovery`), then read as recovery reads it; the records it yields.
#[cfg(fuzzing)]
pub(crate) fn fuzz(root: &Path) -> Vec<Decoded> {
    let mut warnings = Vec::new();
    let mut out = Vec::new();
    let Ok(Some(dead)) = dead_processes(root, &mut warnings) else {
        return out;
    };
    for process in &dead.processes {
        if let Ok(spool) = process.open() {
            for holes in [false, true] {
                out.extend(spool.records(holes).take(10_000));
            }
        }
    }
    out
}
