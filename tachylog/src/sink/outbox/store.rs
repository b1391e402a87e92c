//! The outbox's files: the stores (one directory per process), their segments and frames,
//! read back as hostile input. See the module above for the format.

use super::{OutboxFormat, OutboxFull, OutboxReport};
use crate::queue::spool::PrivateDir;
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SEGMENT_MAGIC: &[u8; 8] = b"TLOUTBX1";
const SEGMENT_HEADER: u64 = 16;
const FRAME_MAGIC: &[u8; 4] = b"TLFR";
const FRAME_HEADER: u64 = 16;
const SEGMENT_PREFIX: &str = "seg-";
const LOCK: &str = "lock";
const RESOURCE: &str = "resource";
const ACKED: &str = "acked";
const ACK_SLOT: u64 = 32;
const BUILDING: &str = ".new";
const REMOVING: &str = ".removing";
/// The largest `resource` file read back: far beyond any resource's attributes.
const MAX_RESOURCE: u64 = 1 << 20;
/// The largest segment file read back: a segment holds at most its size limit plus one frame,
/// and a frame's length is a `u32`.
const MAX_SEGMENT_FILE: u64 = 1 << 34;
/// How long a `.new` directory may stay before a later process removes it as a leftover of a
/// process that died while making it.
const BUILDING_GRACE: Duration = Duration::from_secs(60);

/// A position in a store: a segment's number and a byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Position {
    segment: u64,
    offset: u64,
}

struct Segment {
    number: u64,
    file: File,
    /// The first byte not yet acknowledged.
    read_from: u64,
    /// The end of its valid frames.
    len: u64,
    /// Records from `read_from` to `len`.
    records: u64,
}

/// One process's directory.
struct Store {
    id: u64,
    dir: PrivateDir,
    name: String,
    _lock: File,
    resource: Vec<u8>,
    segments: VecDeque<Segment>,
    ack_file: File,
    ack_serial: u64,
    /// This process's own store: its last segment is written to.
    own: bool,
}

/// A batch read from the outbox for one request.
pub(crate) struct DiskBatch {
    pub(crate) store: u64,
    pub(crate) records: Vec<u8>,
    pub(crate) count: u64,
    /// Where the store's acknowledged position moves once the collector took the batch.
    end: Position,
    /// The records taken from each segment.
    parts: Vec<(u64, u64)>,
    /// The resource of the store's process.
    pub(crate) resource: Vec<u8>,
    /// Which take it was: only the batch in flight can be retired or put back.
    ticket: u64,
}

/// The batch being sent: its store, the segments it spans, and its ticket.
#[derive(Clone, Copy)]
struct InFlight {
    store: u64,
    first: u64,
    last: u64,
    ticket: u64,
}

/// Tickets of the batches taken, unique in the process: a batch of another outbox, or one
/// retired already, matches none in flight.
static TICKETS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The outbox: the stores of dead processes being sent (oldest first) and this process's own.
pub(crate) struct Outbox {
    root: PrivateDir,
    adopted: VecDeque<Store>,
    own: Store,
    max_bytes: u64,
    segment_bytes: u64,
    when_full: OutboxFull,
    format: OutboxFormat,
    /// Bytes of all segments' valid frames and headers.
    bytes: u64,
    /// Records not yet acknowledged, in every store.
    records: u64,
    /// The batch being sent: its store and the segments it spans.
    in_flight: Option<InFlight>,
    /// Records of the own store appended but not yet taken into a batch, and when the first
    /// of them was appended.
    unsent: u64,
    unsent_since: Option<Instant>,
}

impl Outbox {
    /// Opens the root `path` (made if missing), adopts the directories of processes that are
    /// gone, and makes this process's own, whose records go out under `resource`.
    pub(crate) fn open(
        path: &Path,
        resource: &[u8],
        max_bytes: u64,
        when_full: OutboxFull,
        format: OutboxFormat,
        losses: &mut OutboxReport,
    ) -> io::Result<Outbox> {
        let root = PrivateDir::open_root(path, true)?;
        let mut next_id = 1;
        let mut adopted = Vec::new();
        let mut names: Vec<String> = root
            .entries()?
            .into_iter()
            .filter_map(|n| n.into_string().ok())
            .collect();
        names.sort();
        for name in names {
            if name.ends_with(REMOVING) {
                if let Err(e) = remove_store_dir(&root, &name) {
                    losses.warnings.push(format!(
                        "cannot finish removing {}: {e}",
                        root.path().join(&name).display()
                    ));
                }
                continue;
            }
            if name.ends_with(BUILDING) {
                remove_stale_building(&root, &name, losses);
                continue;
            }
            if !is_store_name(&name) {
                continue;
            }
            match Store::adopt(&root, &name, next_id, format, losses) {
                Ok(Some(store)) => {
                    next_id += 1;
                    adopted.push(store);
                }
                Ok(None) => {}
                Err(e) => losses.warnings.push(format!(
                    "cannot send what {} holds: {e}",
                    root.path().join(&name).display()
                )),
            }
        }
        // Oldest process first: the names begin with the pid, the start time decides.
        adopted.sort_by_key(|s| started_of(&s.name));
        let own = Store::create(&root, resource, next_id)?;
        let mut outbox = Outbox {
            root,
            adopted: VecDeque::new(),
            own,
            max_bytes: max_bytes.max(1),
            segment_bytes: (max_bytes / 8).clamp(64 << 10, 16 << 20),
            when_full,
            format,
            bytes: 0,
            records: 0,
            in_flight: None,
            unsent: 0,
            unsent_since: None,
        };
        for store in adopted {
            if store.records() == 0 {
                remove_store(&outbox.root, store, losses);
            } else {
                outbox.bytes += store.bytes();
                outbox.records += store.records();
                outbox.adopted.push_back(store);
            }
        }
        outbox.bytes += outbox.own.bytes();
        Ok(outbox)
    }

    /// This process's directory, for messages.
    pub(crate) fn own_path(&self) -> std::path::PathBuf {
        self.own.dir.path().to_path_buf()
    }

    /// Records not yet acknowledged.
    pub(crate) fn records(&self) -> u64 {
        self.records
    }

    /// Records adopted from processes that are gone, not yet acknowledged.
    pub(crate) fn adopted_records(&self) -> u64 {
        self.adopted.iter().map(Store::records).sum()
    }

    /// Whether `len` more payload bytes fit under the limit, making room as the policy says
    /// (the records of removed segments are added to `losses`).
    pub(crate) fn make_room(&mut self, len: usize, losses: &mut OutboxReport) -> bool {
        let needed = FRAME_HEADER + len as u64;
        if needed + SEGMENT_HEADER > self.max_bytes {
            // It would not fit in an empty outbox: removing what is there would not help.
            return false;
        }
        while self.bytes + needed > self.max_bytes {
            if self.when_full == OutboxFull::DropNewest || !self.drop_oldest(losses) {
                return false;
            }
        }
        true
    }

    /// Removes the oldest segment that is not being sent and not the one being written.
    fn drop_oldest(&mut self, losses: &mut OutboxReport) -> bool {
        let in_flight = self.in_flight;
        let own_id = self.own.id;
        let spared = |store: u64, number: u64, current: bool| {
            current
                || in_flight
                    .is_some_and(|f| f.store == store && (f.first..=f.last).contains(&number))
        };
        let mut chosen = None;
        for (store_index, store) in self
            .adopted
            .iter()
            .map(Some)
            .chain(std::iter::once(None))
            .enumerate()
        {
            let store = store.unwrap_or(&self.own);
            let last = store.segments.len().saturating_sub(1);
            if let Some(index) =
                store.segments.iter().enumerate().position(|(i, seg)| {
                    !spared(store.id, seg.number, store.id == own_id && i == last)
                })
            {
                chosen = Some((store_index, index));
                break;
            }
        }
        let Some((store_index, index)) = chosen else {
            return false;
        };
        let store = if store_index < self.adopted.len() {
            &mut self.adopted[store_index]
        } else {
            &mut self.own
        };
        let Some(segment) = store.segments.remove(index) else {
            return false;
        };
        let size = segment_size(&segment);
        let records = segment.records;
        let name = segment_name(segment.number);
        drop(segment);
        if let Err(e) = store.dir.remove_file(OsStr::new(&name)) {
            losses.warnings.push(format!(
                "cannot remove {}: {e}",
                store.dir.path().join(&name).display()
            ));
        }
        if store.own {
            // Not in flight, so none of its records were taken.
            self.unsent -= records.min(self.unsent);
        }
        self.bytes -= size;
        self.records -= records;
        losses.lost += records;
        losses.removed_for_room += records;
        true
    }

    /// Appends one frame of `count` records (after [`Outbox::make_room`] said it fits).
    pub(crate) fn append(&mut self, payload: &[u8], count: u64) -> io::Result<()> {
        let frame_len = FRAME_HEADER + payload.len() as u64;
        let rotate =
            self.own.segments.back().is_none_or(|seg| {
                seg.len > SEGMENT_HEADER && seg.len + frame_len > self.segment_bytes
            });
        if rotate {
            let number = self.own.segments.back().map_or(1, |s| s.number + 1);
            let segment = self.own.new_segment(number)?;
            self.bytes += SEGMENT_HEADER;
            self.own.segments.push_back(segment);
        }
        let segment = self.own.segments.back_mut().expect("a segment to write");
        let frame = frame(payload, count as u32);
        if let Err(e) = segment.file.write_all_at(&frame, segment.len) {
            // Whatever part landed lies past `len`: the next frame overwrites it, and a reader
            // after a crash stops at its checksum.
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "cannot write to {}: {e}",
                    self.own
                        .dir
                        .path()
                        .join(segment_name(segment.number))
                        .display()
                ),
            ));
        }
        segment.len += frame_len;
        segment.records += count;
        self.bytes += frame_len;
        self.records += count;
        if self.unsent == 0 {
            self.unsent_since = Some(Instant::now());
        }
        self.unsent += count;
        Ok(())
    }

    /// Whether a batch should go now: records of a dead process wait for nothing; the own
    /// store's wait until `max_records` are there or the first has waited `timeout`. `None`
    /// when there is nothing to send, else how long until one is due (zero: now).
    pub(crate) fn due_in(
        &self,
        max_records: u64,
        timeout: Duration,
        stopping: bool,
    ) -> Option<Duration> {
        if self.adopted.iter().any(|s| s.records() > 0) {
            return Some(Duration::ZERO);
        }
        if self.unsent == 0 {
            return None;
        }
        if stopping || self.unsent >= max_records {
            return Some(Duration::ZERO);
        }
        let since = self.unsent_since.unwrap_or_else(Instant::now);
        Some(timeout.saturating_sub(since.elapsed()))
    }

    /// Reads the next batch: up to `max_records` records or `max_bytes` bytes (at least one
    /// frame) from the oldest store that has any. Unreadable frames end their segment's
    /// records there; those are added to `losses`.
    pub(crate) fn take(
        &mut self,
        max_records: u64,
        max_bytes: usize,
        losses: &mut OutboxReport,
    ) -> Option<DiskBatch> {
        if self.in_flight.is_some() {
            return None; // one batch out at a time
        }
        let format = self.format;
        let adopted = self.adopted.iter().position(|s| s.records() > 0);
        let store = match adopted {
            Some(i) => &mut self.adopted[i],
            None if self.unsent > 0 => &mut self.own,
            None => return None,
        };
        let mut batch = DiskBatch {
            store: store.id,
            records: Vec::new(),
            count: 0,
            end: Position {
                segment: 0,
                offset: 0,
            },
            parts: Vec::new(),
            resource: store.resource.clone(),
            ticket: TICKETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        let mut lost = 0;
        for segment in &mut store.segments {
            let mut at = segment.read_from;
            let mut taken = 0;
            while at < segment.len && batch.count < max_records && batch.records.len() < max_bytes {
                let Some((count, payload)) = read_frame(&segment.file, at, segment.len, format)
                else {
                    // Changed since it was checked: nothing after `at` can be read.
                    let unread = segment.records - taken;
                    losses.warnings.push(format!(
                        "{} byte(s) of {} no longer read as whole frames; the {unread} \
                         record(s) in them are lost",
                        segment.len - at,
                        store
                            .dir
                            .path()
                            .join(segment_name(segment.number))
                            .display()
                    ));
                    lost += unread;
                    segment.records = taken;
                    segment.len = at;
                    break;
                };
                if batch.count > 0 && batch.records.len() + payload.len() > max_bytes {
                    break;
                }
                batch.records.extend_from_slice(&payload);
                batch.count += count;
                taken += count;
                at += FRAME_HEADER + payload.len() as u64;
            }
            if taken > 0 {
                batch.parts.push((segment.number, taken));
            }
            batch.end = Position {
                segment: segment.number,
                offset: at,
            };
            if batch.count >= max_records || batch.records.len() >= max_bytes {
                break;
            }
        }
        self.records -= lost.min(self.records);
        losses.lost += lost;
        if batch.store == self.own.id {
            self.unsent -= (batch.count + lost).min(self.unsent);
            self.unsent_since = (self.unsent > 0).then(Instant::now);
        }
        if batch.count == 0 {
            return None;
        }
        let first = batch.parts.first().map_or(0, |p| p.0);
        self.in_flight = Some(InFlight {
            store: batch.store,
            first,
            last: batch.end.segment,
            ticket: batch.ticket,
        });
        Some(batch)
    }

    /// The batch is done with (the collector took it, or refused it for good): the store's
    /// acknowledged position moves past it, and what lies wholly before that goes.
    pub(crate) fn retire(&mut self, batch: &DiskBatch, losses: &mut OutboxReport) {
        if !self.is_in_flight(batch) {
            return;
        }
        self.in_flight = None;
        let Some(index) = self.store_index(batch.store) else {
            return; // removed meanwhile (its segments dropped to make room)
        };
        let store = match index {
            Some(i) => &mut self.adopted[i],
            None => &mut self.own,
        };
        if let Err(e) = store.write_acked(batch.end) {
            losses.warnings.push(format!(
                "cannot record what the collector acknowledged in {}: {e}; after a crash it \
                 may be sent again",
                store.dir.path().display()
            ));
        }
        let mut retired = 0;
        for &(number, count) in &batch.parts {
            if let Some(segment) = store.segments.iter_mut().find(|s| s.number == number) {
                let count = count.min(segment.records);
                segment.records -= count;
                retired += count;
            }
        }
        let mut freed = 0;
        let last = store.segments.len();
        let mut kept = VecDeque::new();
        for (i, mut segment) in std::mem::take(&mut store.segments).into_iter().enumerate() {
            let writing = store.own && i + 1 == last;
            let before = segment.number < batch.end.segment
                || (segment.number == batch.end.segment && batch.end.offset >= segment.len);
            if before && !writing {
                freed += segment_size(&segment);
                let name = segment_name(segment.number);
                drop(segment);
                let _ = store.dir.remove_file(OsStr::new(&name));
            } else {
                if segment.number == batch.end.segment {
                    segment.read_from = segment.read_from.max(batch.end.offset);
                }
                kept.push_back(segment);
            }
        }
        store.segments = kept;
        self.bytes -= freed.min(self.bytes);
        self.records -= retired.min(self.records);
        if let Some(i) = index {
            if self.adopted[i].records() == 0 {
                if let Some(store) = self.adopted.remove(i) {
                    self.bytes -= store.bytes().min(self.bytes);
                    remove_store(&self.root, store, losses);
                }
            }
        }
    }

    /// The batch was not sent (the deadline came first): it stays, to be read again.
    pub(crate) fn put_back(&mut self, batch: &DiskBatch) {
        if !self.is_in_flight(batch) {
            return;
        }
        self.in_flight = None;
        if batch.store == self.own.id {
            if self.unsent == 0 {
                self.unsent_since = Some(Instant::now());
            }
            self.unsent += batch.count;
        }
    }

    /// At the end: removes the own directory if everything in it was acknowledged; otherwise
    /// it stays for the next start, as do the adopted ones not yet sent (their locks are let
    /// go here). Returns the records left on disk.
    pub(crate) fn close(self, losses: &mut OutboxReport) -> u64 {
        let left = self.records;
        let Outbox { root, own, .. } = self;
        if own.records() == 0 {
            remove_store(&root, own, losses);
        }
        left
    }

    /// Whether `batch` is the one taken last and neither retired nor put back since.
    fn is_in_flight(&self, batch: &DiskBatch) -> bool {
        self.in_flight.is_some_and(|f| f.ticket == batch.ticket)
    }

    fn store_index(&self, id: u64) -> Option<Option<usize>> {
        if self.own.id == id {
            return Some(None);
        }
        self.adopted.iter().position(|s| s.id == id).map(Some)
    }
}

/// Removes a store's directory, crash-ordered: renamed `.removing` first.
fn remove_store(root: &PrivateDir, store: Store, losses: &mut OutboxReport) {
    let name = store.name.clone();
    let removing = format!("{name}{REMOVING}");
    // Its files closed (and its lock let go) only once it no longer has its name.
    let result = root
        .rename(OsStr::new(&name), OsStr::new(&removing))
        .and_then(|()| {
            drop(store);
            remove_store_dir(root, &removing)
        });
    if let Err(e) = result {
        losses.warnings.push(format!(
            "cannot remove {}: {e}",
            root.path().join(&name).display()
        ));
    }
}

impl Store {
    fn records(&self) -> u64 {
        self.segments.iter().map(|s| s.records).sum()
    }

    fn bytes(&self) -> u64 {
        self.segments.iter().map(segment_size).sum()
    }

    /// Makes this process's directory.
    fn create(root: &PrivateDir, resource: &[u8], id: u64) -> io::Result<Store> {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{}.{started}", std::process::id());
        let building = format!("{name}{BUILDING}");
        let dir = root.create_dir(&building)?;
        let lock = dir.create_file(LOCK)?;
        if !try_lock(&lock)? {
            return Err(io::Error::other("the outbox directory's lock is held"));
        }
        let mut resource_file = dir.create_file(RESOURCE)?;
        let mut header = Vec::with_capacity(8 + resource.len());
        header.extend_from_slice(&(resource.len() as u32).to_le_bytes());
        header.extend_from_slice(&crc32fast::hash(resource).to_le_bytes());
        header.extend_from_slice(resource);
        resource_file.write_all(&header)?;
        let ack_file = dir.create_file(ACKED)?;
        root.rename(OsStr::new(&building), OsStr::new(&name))?;
        let dir = root.open_dir(OsStr::new(&name))?;
        let mut store = Store {
            id,
            dir,
            name,
            _lock: lock,
            resource: resource.to_vec(),
            segments: VecDeque::new(),
            ack_file,
            ack_serial: 0,
            own: true,
        };
        let first = store.new_segment(1)?;
        store.segments.push_back(first);
        Ok(store)
    }

    /// Opens the directory `name` of another process, if that process is gone (its lock free).
    fn adopt(
        root: &PrivateDir,
        name: &str,
        id: u64,
        format: OutboxFormat,
        losses: &mut OutboxReport,
    ) -> io::Result<Option<Store>> {
        let dir = root.open_dir(OsStr::new(name))?;
        let lock = dir.open_file(LOCK, true, 0)?;
        if !try_lock(&lock)? {
            return Ok(None); // its process still sends
        }
        let resource = match read_resource(&dir, format) {
            Ok(resource) => resource,
            Err(e) => {
                losses.warnings.push(format!(
                    "{} has no usable resource ({e}); its records are sent without one",
                    dir.path().display()
                ));
                Vec::new()
            }
        };
        let ack_file = dir.open_or_create_in_place(ACKED)?;
        let (ack_serial, acked) = read_acked(&ack_file);
        let mut numbers: Vec<u64> = dir
            .entries()?
            .iter()
            .filter_map(|n| {
                n.to_str()?
                    .strip_prefix(SEGMENT_PREFIX)
                    .and_then(parse_number)
            })
            .collect();
        numbers.sort_unstable();
        let mut segments = VecDeque::new();
        for number in numbers {
            let name = segment_name(number);
            if number < acked.segment {
                // Acknowledged before the crash that left it.
                let _ = dir.remove_file(OsStr::new(&name));
                continue;
            }
            let file = match dir.open_file(&name, true, MAX_SEGMENT_FILE) {
                Ok(file) => file,
                Err(e) => {
                    losses.warnings.push(format!(
                        "passing over {}: {e}",
                        dir.path().join(&name).display()
                    ));
                    continue;
                }
            };
            let from = if number == acked.segment {
                acked.offset.max(SEGMENT_HEADER)
            } else {
                SEGMENT_HEADER
            };
            let file_len = file.metadata()?.len();
            if !segment_header_ok(&file, number) {
                losses.warnings.push(format!(
                    "passing over {}: not a segment of this outbox ({file_len} bytes)",
                    dir.path().join(&name).display()
                ));
                continue;
            }
            let (len, records) = scan(&file, from, file_len, format);
            if len < file_len {
                losses.warnings.push(format!(
                    "{}: {} byte(s) after offset {len} are not whole frames; passed over",
                    dir.path().join(&name).display(),
                    file_len - len
                ));
            }
            segments.push_back(Segment {
                number,
                file,
                read_from: from.min(len),
                len,
                records,
            });
        }
        Ok(Some(Store {
            id,
            dir,
            name: name.to_string(),
            _lock: lock,
            resource,
            segments,
            ack_file,
            ack_serial,
            own: false,
        }))
    }

    fn new_segment(&mut self, number: u64) -> io::Result<Segment> {
        let name = segment_name(number);
        let file = self.dir.create_file(&name)?;
        let mut header = [0u8; SEGMENT_HEADER as usize];
        header[..8].copy_from_slice(SEGMENT_MAGIC);
        header[8..].copy_from_slice(&number.to_le_bytes());
        file.write_all_at(&header, 0)?;
        Ok(Segment {
            number,
            file,
            read_from: SEGMENT_HEADER,
            len: SEGMENT_HEADER,
            records: 0,
        })
    }

    fn write_acked(&mut self, position: Position) -> io::Result<()> {
        self.ack_serial += 1;
        let mut slot = [0u8; ACK_SLOT as usize];
        slot[..8].copy_from_slice(&self.ack_serial.to_le_bytes());
        slot[8..16].copy_from_slice(&position.segment.to_le_bytes());
        slot[16..24].copy_from_slice(&position.offset.to_le_bytes());
        let crc = crc32fast::hash(&slot[..24]);
        slot[24..28].copy_from_slice(&crc.to_le_bytes());
        self.ack_file
            .write_all_at(&slot, (self.ack_serial % 2) * ACK_SLOT)
    }
}

fn segment_size(segment: &Segment) -> u64 {
    segment.len
}

fn segment_name(number: u64) -> String {
    format!("{SEGMENT_PREFIX}{number:016x}")
}

fn parse_number(hex: &str) -> Option<u64> {
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

/// `<pid>.<ns>`, digits only.
fn is_store_name(name: &str) -> bool {
    let mut parts = name.split('.');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

fn started_of(name: &str) -> u128 {
    name.split('.')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn try_lock(file: &File) -> io::Result<bool> {
    match rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn frame_crc(len: u32, count: u32, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&len.to_le_bytes());
    hasher.update(&count.to_le_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// A frame holding `payload` as `count` records, as [`Outbox::append`] writes it.
pub(crate) fn frame(payload: &[u8], count: u32) -> Vec<u8> {
    let mut frame = Vec::with_capacity(FRAME_HEADER as usize + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&count.to_le_bytes());
    frame.extend_from_slice(&frame_crc(payload.len() as u32, count, payload).to_le_bytes());
    frame.extend_from_slice(FRAME_MAGIC);
    frame.extend_from_slice(payload);
    frame
}

/// Whether `header` (a frame's first 16 bytes) and `payload` make a valid frame, and its count.
pub(crate) fn check_frame(
    header: &[u8; FRAME_HEADER as usize],
    payload: &[u8],
    format: OutboxFormat,
) -> Option<u64> {
    let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
    let (len, count, crc) = (word(0), word(4), word(8));
    if &header[12..] != FRAME_MAGIC || len as usize != payload.len() || count == 0 {
        return None;
    }
    if frame_crc(len, count, payload) != crc {
        return None;
    }
    ((format.count_records)(payload) == Some(u64::from(count))).then_some(u64::from(count))
}

/// Bytes read at an offset: a segment's file, or (for the fuzz target) a slice.
pub(crate) trait ReadAt {
    /// Fills `buf` from `offset`, or fails.
    fn fill_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl ReadAt for File {
    fn fill_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn fill_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// The frame at `at`, if it is whole and valid before `end`: its count and payload.
fn read_frame(
    file: &(impl ReadAt + ?Sized),
    at: u64,
    end: u64,
    format: OutboxFormat,
) -> Option<(u64, Vec<u8>)> {
    let mut header = [0u8; FRAME_HEADER as usize];
    if at + FRAME_HEADER > end {
        return None;
    }
    file.fill_at(&mut header, at).ok()?;
    let len = u64::from(u32::from_le_bytes(header[..4].try_into().expect("4 bytes")));
    if at + FRAME_HEADER + len > end {
        return None;
    }
    let mut payload = vec![0u8; len as usize];
    file.fill_at(&mut payload, at + FRAME_HEADER).ok()?;
    let count = check_frame(&header, &payload, format)?;
    Some((count, payload))
}

/// Walks the frames from `from`: where the valid ones end, and the records in them.
pub(crate) fn scan(
    file: &(impl ReadAt + ?Sized),
    from: u64,
    file_len: u64,
    format: OutboxFormat,
) -> (u64, u64) {
    let (mut at, mut records) = (from, 0);
    while let Some((count, payload)) = read_frame(file, at, file_len, format) {
        at += FRAME_HEADER + payload.len() as u64;
        records += count;
    }
    (at.min(file_len.max(from)), records)
}

fn segment_header_ok(file: &File, number: u64) -> bool {
    let mut header = [0u8; SEGMENT_HEADER as usize];
    file.read_exact_at(&mut header, 0).is_ok()
        && &header[..8] == SEGMENT_MAGIC
        && header[8..] == number.to_le_bytes()
}

fn read_resource(dir: &PrivateDir, format: OutboxFormat) -> io::Result<Vec<u8>> {
    let file = dir.open_file(RESOURCE, false, MAX_RESOURCE)?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut &file, &mut bytes)?;
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "not a resource this outbox wrote",
        )
    };
    let len =
        u32::from_le_bytes(bytes.get(..4).ok_or_else(bad)?.try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(
        bytes
            .get(4..8)
            .ok_or_else(bad)?
            .try_into()
            .expect("4 bytes"),
    );
    let resource = bytes.get(8..).filter(|r| r.len() == len).ok_or_else(bad)?;
    if crc32fast::hash(resource) != crc || !(format.check_meta)(resource) {
        return Err(bad());
    }
    Ok(resource.to_vec())
}

/// The acknowledged position in `file`: the valid slot with the higher serial, else the start.
fn read_acked(file: &File) -> (u64, Position) {
    let mut best = (
        0,
        Position {
            segment: 0,
            offset: 0,
        },
    );
    for slot in 0..2 {
        let mut bytes = [0u8; ACK_SLOT as usize];
        if file.read_exact_at(&mut bytes, slot * ACK_SLOT).is_err() {
            continue;
        }
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let crc = u32::from_le_bytes(bytes[24..28].try_into().expect("4 bytes"));
        if crc32fast::hash(&bytes[..24]) != crc || word(0) % 2 != slot {
            continue;
        }
        if word(0) > best.0 {
            best = (
                word(0),
                Position {
                    segment: word(8),
                    offset: word(16),
                },
            );
        }
    }
    best
}

/// Removes a store directory's files, then the directory.
/// Another process finishing the same removal (it found the `.removing` name at its start)
/// may take a file first: what is gone already is not an error.
fn remove_store_dir(root: &PrivateDir, name: &str) -> io::Result<()> {
    let gone = |result: io::Result<()>| match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    let dir = match root.open_dir(OsStr::new(name)) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in dir.entries()? {
        gone(dir.remove_file(&entry))?;
    }
    gone(root.remove_dir(OsStr::new(name)))
}

fn remove_stale_building(root: &PrivateDir, name: &str, losses: &mut OutboxReport) {
    let old = std::fs::symlink_metadata(root.path().join(name))
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > BUILDING_GRACE));
    if old {
        if let Err(e) = remove_store_dir(root, name) {
            losses.warnings.push(format!(
                "cannot remove {}: {e}",
                root.path().join(name).display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` encoded `log_records` fields, each a `LogRecord` with a body of `size` bytes.
    fn records(count: usize, size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..count {
            // field 2 (LEN) of ScopeLogs holding field 5 (LEN, the body) of LogRecord.
            let inner_len = 2 + size;
            out.extend_from_slice(&[0x12, inner_len as u8, 0x2a, size as u8]);
            out.extend(std::iter::repeat_n(b'x', size));
        }
        out
    }

    /// Payloads of `records`: the record count is the number of 0x12 bytes that start one.
    const FORMAT: OutboxFormat = OutboxFormat {
        count_records,
        check_meta: |_| true,
    };

    fn count_records(payload: &[u8]) -> Option<u64> {
        let mut at = 0;
        let mut count = 0;
        while at < payload.len() {
            if payload[at] != 0x12 {
                return None;
            }
            at += 2 + usize::from(*payload.get(at + 1)?);
            count += 1;
        }
        (at == payload.len()).then_some(count)
    }

    fn open(path: &Path, max: u64, policy: OutboxFull) -> (Outbox, OutboxReport) {
        let mut losses = OutboxReport::default();
        let outbox = Outbox::open(path, b"", max, policy, FORMAT, &mut losses).unwrap();
        (outbox, losses)
    }

    #[test]
    fn a_frame_reads_back_and_every_corruption_is_refused() {
        let payload = records(3, 10);
        let frame = frame(&payload, 3);
        let header: [u8; 16] = frame[..16].try_into().unwrap();
        assert_eq!(check_frame(&header, &payload, FORMAT), Some(3));
        for byte in 0..16 {
            let mut bad = header;
            bad[byte] ^= 1;
            assert_eq!(
                check_frame(&bad, &payload, FORMAT),
                None,
                "header byte {byte}"
            );
        }
        for byte in 0..payload.len() {
            let mut bad = payload.clone();
            bad[byte] ^= 0x80;
            assert_eq!(
                check_frame(&header, &bad, FORMAT),
                None,
                "payload byte {byte}"
            );
        }
        // A checksum that matches does not make a count that lies acceptable.
        let mut lying = header;
        lying[4..8].copy_from_slice(&2u32.to_le_bytes());
        lying[8..12].copy_from_slice(&frame_crc(payload.len() as u32, 2, &payload).to_le_bytes());
        assert_eq!(check_frame(&lying, &payload, FORMAT), None);
    }

    #[test]
    fn the_acknowledged_position_survives_a_torn_slot() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("acked"))
            .unwrap();
        let store_file = |serial: u64, segment: u64, offset: u64| {
            let mut slot = [0u8; 32];
            slot[..8].copy_from_slice(&serial.to_le_bytes());
            slot[8..16].copy_from_slice(&segment.to_le_bytes());
            slot[16..24].copy_from_slice(&offset.to_le_bytes());
            let crc = crc32fast::hash(&slot[..24]);
            slot[24..28].copy_from_slice(&crc.to_le_bytes());
            file.write_all_at(&slot, (serial % 2) * ACK_SLOT).unwrap();
        };
        store_file(1, 1, 100);
        store_file(2, 1, 200);
        assert_eq!(
            read_acked(&file).1,
            Position {
                segment: 1,
                offset: 200
            }
        );
        // The next write torn: the slot it overwrote no longer checks, the other one stands.
        file.write_all_at(&[0xff; 5], ACK_SLOT).unwrap();
        file.write_all_at(&3u64.to_le_bytes(), ACK_SLOT).unwrap();
        assert_eq!(
            read_acked(&file).1,
            Position {
                segment: 1,
                offset: 200
            }
        );
    }

    #[test]
    fn what_a_dead_process_left_is_adopted_once_and_retired_by_acknowledgement() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("outbox");
        let (mut first, _) = open(&root, 1 << 20, OutboxFull::DropNewest);
        for _ in 0..10 {
            first.append(&records(5, 20), 5).unwrap();
        }
        let mut losses = OutboxReport::default();
        // One batch acknowledged, one taken and not: the process dies.
        let acked = first.take(10, 1 << 20, &mut losses).unwrap();
        first.retire(&acked, &mut losses);
        let _lost_in_flight = first.take(10, 1 << 20, &mut losses).unwrap();
        drop(first);

        let (mut second, warnings) = open(&root, 1 << 20, OutboxFull::DropNewest);
        assert!(warnings.warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            second.adopted_records(),
            40,
            "all but the acknowledged batch"
        );
        // A third outbox on the same root finds nothing to adopt: the second holds it.
        let (third, _) = open(&root, 1 << 20, OutboxFull::DropNewest);
        assert_eq!(third.adopted_records(), 0);
        let mut sent = 0;
        while let Some(batch) = second.take(15, 1 << 20, &mut losses) {
            sent += batch.count;
            second.retire(&batch, &mut losses);
        }
        assert_eq!((sent, second.records()), (40, 0));
        assert_eq!(losses.lost, 0, "{losses:?}");
        let mut left = OutboxReport::default();
        assert_eq!(second.close(&mut left), 0);
        assert_eq!(third.close(&mut left), 0);
        let names: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn a_full_outbox_drops_the_oldest_segment_not_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let (mut outbox, _) = open(
            &dir.path().join("outbox"),
            256 << 10,
            OutboxFull::DropOldest,
        );
        let mut losses = OutboxReport::default();
        let frame = records(50, 100);
        let mut appended = 0;
        let mut in_flight = None;
        for i in 0..200 {
            assert!(outbox.make_room(frame.len(), &mut losses));
            outbox.append(&frame, 50).unwrap();
            appended += 50;
            if i == 0 {
                in_flight = outbox.take(50, 1 << 20, &mut losses);
            }
            assert!(outbox.bytes <= 256 << 10);
        }
        assert!(losses.removed_for_room > 0);
        assert_eq!(outbox.records() + losses.lost, appended);
        let batch = in_flight.unwrap();
        outbox.retire(&batch, &mut losses);
        assert_eq!(outbox.records() + losses.lost + batch.count, appended);
    }

    #[test]
    fn a_frame_larger_than_the_whole_outbox_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (mut outbox, _) = open(
            &dir.path().join("outbox"),
            512 << 10,
            OutboxFull::DropOldest,
        );
        let mut losses = OutboxReport::default();
        // Four segments of 64 KiB: three could be removed, and still the frame would not fit.
        for _ in 0..400 {
            outbox.append(&records(5, 100), 5).unwrap();
        }
        assert!(outbox.own.segments.len() >= 4);
        assert!(!outbox.make_room(512 << 10, &mut losses));
        assert_eq!((outbox.records(), losses.lost), (2000, 0));
    }

    /// Misuse through the public API costs nothing on disk: a second take while a batch is out
    /// gets none, and a batch retired twice or retired by another outbox moves nothing.
    #[test]
    fn only_the_batch_in_flight_is_retired() {
        let dir = tempfile::tempdir().unwrap();
        let (mut one, _) = open(&dir.path().join("one"), 1 << 20, OutboxFull::DropNewest);
        let (mut other, _) = open(&dir.path().join("other"), 1 << 20, OutboxFull::DropNewest);
        let mut losses = OutboxReport::default();
        for outbox in [&mut one, &mut other] {
            for _ in 0..3 {
                outbox.append(&records(5, 20), 5).unwrap();
            }
        }
        let batch = one.take(5, 1 << 20, &mut losses).unwrap();
        assert!(one.take(5, 1 << 20, &mut losses).is_none());
        other.retire(&batch, &mut losses);
        assert_eq!(other.records(), 15);
        one.retire(&batch, &mut losses);
        one.retire(&batch, &mut losses);
        one.put_back(&batch);
        assert_eq!(one.records(), 10);
        let next = one.take(5, 1 << 20, &mut losses).unwrap();
        assert_ne!(next.records, Vec::<u8>::new());
        one.retire(&next, &mut losses);
        assert_eq!(one.records(), 5);
    }

    #[test]
    fn drop_newest_refuses_and_keeps_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let (mut outbox, _) = open(&dir.path().join("outbox"), 64 << 10, OutboxFull::DropNewest);
        let mut losses = OutboxReport::default();
        let frame = records(10, 100);
        let mut appended = 0;
        while outbox.make_room(frame.len(), &mut losses) {
            outbox.append(&frame, 10).unwrap();
            appended += 10;
        }
        assert_eq!((outbox.records(), losses.lost), (appended, 0));
    }
}
