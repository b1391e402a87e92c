//! The write journal: for every `write(2)` a file sink makes while a spool is open, what it
//! carried and where it went, noted in the spool before and after the write. Recovery decides
//! from these facts alone which records reached a file, never from what a line looks like:
//! identical lines (a heartbeat, a health check) are the common case.
//!
//! Before a batch is written, with the file's lock stripe held (see [`Journal::lock_stripe`]),
//! an *intent* is appended: the file (device, inode), where the batch starts (the file's length
//! then: exact while every writer of the file holds the stripe, a lower bound otherwise), its
//! length, a CRC-32 of each of its pieces between 4 KiB boundaries of the file, and its
//! *units*: each line's (or binary block's) place in the batch with the records it holds, a
//! record named by its ring's serial and its frame's position. After the write returns, a
//! *landing* is appended: how many bytes went, and where they end (the file offset after the
//! write). A landed write's units are in the file; a write with an intent and no landing (the
//! process died inside it) is compared with the file at its start, piece by piece: Linux tears
//! a write only at such a boundary, so the pieces that match say exactly which units arrived.
//!
//! A death inside the write leaves no landing, and bytes at the batch's start that may be its
//! own or (when the death cut the batch short) a sibling's appended after it: identical lines
//! from two processes cannot be told apart by their bytes. So each stripe file holds the
//! *current write* of its holder (owner, write, file, start, path), marked done before the
//! stripe is let go. The next process to take the stripe and find a write not done knows its
//! owner died inside it, and knows exactly how much of it landed: nobody else appended since,
//! so it is the file's length now less the write's start. It appends that *settlement* to the
//! spool root's `locks/settled`, and recovery reads it there (or settles it itself).
//!
//! Runs on the back end's thread (units, the active journal) and on a file's writing thread
//! (stripe, intent, write, landing); never on a caller's. Layer 1: bytes and files only.

use super::PrivateDir;
use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A record of a spooled ring: the ring's serial and the position of its frame.
pub(crate) type RecordId = (u64, u64);

/// The file names of a live process's two journals: a cut empties the older one.
pub(crate) const LIVE_JOURNALS: [&str; 2] = ["journal-0", "journal-1"];
/// The journal of the recoveries of a dead process's directory, kept in that directory.
pub(crate) const RECOVERY_JOURNAL: &str = "journal-recovery";
/// The directory of lock stripes in the spool root.
pub(crate) const LOCKS: &str = "locks";
/// Lock stripes: a file's stripe is its device and inode hashed; two files sharing one only
/// wait for each other's writes.
const STRIPES: u64 = 64;
/// The longest a writer waits for a stripe before it writes without it (the write's start is
/// then a lower bound, and recovery may write its records again rather than lose them).
const STRIPE_WAIT: Duration = Duration::from_millis(200);
/// Pieces of a batch are checked between file offsets that are multiples of this.
pub(crate) const PIECE: u64 = 4096;

const KIND_INTENT: u32 = 1;
const KIND_LANDED: u32 = 2;
const KIND_SETTLED: u32 = 3;
const KIND_UNLOCKED: u32 = 4;
/// The settlements of writes whose owners died inside them, in the lock stripes' directory.
pub(crate) const SETTLED: &str = "settled";
/// The largest settlement log a reader takes.
pub(crate) const MAX_SETTLED: u64 = 64 << 20;
/// The largest current-write record of a stripe.
const MAX_RECORD: usize = 8192;
/// A landed length that could not be measured (the file is no longer at its path).
pub(crate) const UNKNOWN: u64 = u64::MAX;
/// The largest journal file a reader takes: a ring's worth of records several times over.
pub(crate) const MAX_JOURNAL: u64 = 1 << 30;

thread_local! {
    /// The spooled frame the back end is handing to the sinks now.
    static FRAME: Cell<Option<RecordId>> = const { Cell::new(None) };
    /// The record whose line the sinks are being given now: set around a live record's
    /// writes and a recovered record's, never around a notice.
    static LINE: Cell<Option<RecordId>> = const { Cell::new(None) };
    /// The records of a binary block being handed to its file.
    static BLOCK: RefCell<Option<Vec<RecordId>>> = const { RefCell::new(None) };
    /// Whether `BLOCK` holds a block's records (one load on every line's path).
    static BLOCK_OPEN: Cell<bool> = const { Cell::new(false) };
    /// Where this thread's file writes are noted.
    static ACTIVE: RefCell<Option<Arc<Journal>>> = const { RefCell::new(None) };
}

/// Test hook: the next journaled batch is torn as a death inside its `write(2)` tears it.
#[cfg(feature = "testing")]
pub(crate) static TEAR_NEXT_WRITE: AtomicBool = AtomicBool::new(false);

/// Tests only (feature `testing`): the next batch a file sink writes with a spool open goes
/// only up to a 4 KiB boundary of the file past its first half (where Linux stops a write that
/// a fatal signal interrupts), then the process sends itself SIGKILL: its intent is noted, its
/// landing never is.
///
/// ```no_run
/// tachylog::__private::tear_next_write();
/// ```
#[cfg(feature = "testing")]
pub fn tear_next_write() {
    TEAR_NEXT_WRITE.store(true, Ordering::SeqCst);
}

/// How much of a batch of `len` bytes starting at file offset `start` the torn write of
/// [`tear_next_write`] writes before the death (`None`: this write is not torn).
pub(crate) fn torn_length(start: u64, len: usize) -> Option<usize> {
    #[cfg(feature = "testing")]
    if TEAR_NEXT_WRITE.swap(false, Ordering::SeqCst) {
        let half = start + len as u64 / 2;
        let boundary = half.div_ceil(PIECE) * PIECE;
        return Some((boundary - start).min(len as u64) as usize);
    }
    let _ = (start, len);
    None
}

/// Notes the spooled frame being emitted (`None` for a frame of a ring that is not spooled).
#[inline(always)]
pub(crate) fn set_frame(id: Option<RecordId>) {
    FRAME.with(|f| f.set(id));
}

/// While alive, the lines written are the record `id`'s.
pub(crate) struct LineOf(Option<RecordId>);

impl LineOf {
    /// The frame being emitted is the record of the lines written until the guard drops.
    #[inline(always)]
    pub(crate) fn current_frame() -> LineOf {
        LineOf::record(FRAME.with(Cell::get))
    }

    /// The lines written until the guard drops are `id`'s.
    #[inline(always)]
    pub(crate) fn record(id: Option<RecordId>) -> LineOf {
        LineOf(LINE.with(|l| l.replace(id)))
    }
}

impl Drop for LineOf {
    #[inline(always)]
    fn drop(&mut self) {
        LINE.with(|l| l.set(self.0));
    }
}

/// The record of the line being written, if it is one of a spooled ring.
#[inline(always)]
pub(crate) fn line() -> Option<RecordId> {
    LINE.with(Cell::get)
}

/// Runs `write` with `ids` as the records of the unit it writes (a binary block).
pub(crate) fn with_block<T>(ids: Vec<RecordId>, write: impl FnOnce() -> T) -> (T, Vec<RecordId>) {
    BLOCK.with(|b| *b.borrow_mut() = Some(ids));
    BLOCK_OPEN.with(|o| o.set(true));
    let result = write();
    BLOCK_OPEN.with(|o| o.set(false));
    let ids = BLOCK.with(|b| b.borrow_mut().take()).unwrap_or_default();
    (result, ids)
}

/// Appends the unit `start..end` of a batch to `units` with the records it holds: the block's
/// when one is being written, else the line's. A unit of no record is noted only inside a
/// block (binary logs: recovery needs every block's bounds to cut a torn one).
#[inline(always)]
pub(crate) fn note_unit(units: &mut Vec<u64>, start: usize, end: usize) {
    if BLOCK_OPEN.with(Cell::get) {
        BLOCK.with(|b| push_unit(units, start, end, b.borrow().as_deref().unwrap_or(&[])));
    } else if let Some(id) = line() {
        push_unit(units, start, end, &[id]);
    }
}

fn push_unit(units: &mut Vec<u64>, start: usize, end: usize, ids: &[RecordId]) {
    units.extend_from_slice(&[start as u64, end as u64, ids.len() as u64]);
    for &(serial, position) in ids {
        units.extend_from_slice(&[serial, position]);
    }
}

/// Makes `journal` the one this thread's file writes are noted in (`None`: none).
pub(crate) fn activate(journal: Option<Arc<Journal>>) -> Option<Arc<Journal>> {
    ACTIVE.with(|a| std::mem::replace(&mut *a.borrow_mut(), journal))
}

/// The journal this thread's file writes are noted in, if any.
pub(crate) fn active() -> Option<Arc<Journal>> {
    ACTIVE.with(|a| a.borrow().clone())
}

/// One or two append-only journal files, and the spool root's lock stripes.
pub(crate) struct Journal {
    /// Whose writes these are: the process directory's name (with `/recovery` for a
    /// recovery's), in every intent and stripe record.
    owner: String,
    files: Vec<File>,
    /// The file intents go to now (one writer: the back end, between writes).
    current: AtomicUsize,
    locks: Option<PrivateDir>,
    next_write: AtomicU64,
    /// Whether a stripe was not to be had in time, said once.
    stripe_reported: AtomicBool,
    /// Stripe files opened before, by index, while no writer uses them.
    open_stripes: std::sync::Mutex<Vec<Option<File>>>,
}

/// A write whose intent is noted: where its landing goes.
pub(crate) struct Noted {
    pub(crate) journal: Arc<Journal>,
    file: usize,
    write: u64,
    written: u64,
}

impl Journal {
    /// A journal of `owner`'s writes over `files` (the first is current), with the stripes in
    /// `locks`.
    pub(crate) fn new(owner: String, files: Vec<File>, locks: Option<PrivateDir>) -> Journal {
        // Write numbers are unique per owner across its journals' lives: a recovery killed
        // halfway and the next one append to the same journal.
        let first = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Journal {
            owner,
            files,
            current: AtomicUsize::new(0),
            locks,
            next_write: AtomicU64::new(first),
            stripe_reported: AtomicBool::new(false),
            open_stripes: std::sync::Mutex::new((0..STRIPES).map(|_| None).collect()),
        }
    }

    /// After a cut committed every record noted before the previous cut: empties the older
    /// file and makes it current. No write may be in flight.
    pub(crate) fn rotate(&self) {
        if self.files.len() < 2 {
            return;
        }
        let older = (self.current.load(Ordering::Relaxed) + 1) % self.files.len();
        if self.files[older].set_len(0).is_ok() {
            self.current.store(older, Ordering::Relaxed);
        }
    }

    /// A number for the next write, unique for this journal's owner.
    pub(crate) fn next_write(&self) -> u64 {
        self.next_write.fetch_add(1, Ordering::Relaxed)
    }

    /// Takes the lock stripe of `file`, waiting at most [`STRIPE_WAIT`], and settles the
    /// write of a holder that died inside it; `None` when there is none to take (no stripes,
    /// or a holder that kept it too long, said once on stderr).
    pub(crate) fn lock_stripe(&self, dev: u64, ino: u64) -> Option<Stripe<'_>> {
        let locks = self.locks.as_ref()?;
        let index = stripe_index(dev, ino);
        // An open stripe file is kept for the next write, taken out while in use: two writers
        // of this process must not share one (a `flock` belongs to the open file, and would not
        // keep them apart).
        let cached = crate::queue::sync::lock(&self.open_stripes)[index].take();
        let opened = cached.or_else(|| open_stripe(locks, index))?;
        match lock_within(opened, STRIPE_WAIT) {
            Some(held) => {
                settle_dead_holder(locks, &held, None);
                Some(Stripe {
                    held: Some(held),
                    journal: self,
                    index,
                })
            }
            None => {
                if !self.stripe_reported.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "tachylog: a log file's lock stripe in the spool was held for over {} \
                         ms; writing without it (recovery may then write a batch twice, never \
                         lose it)",
                        STRIPE_WAIT.as_millis()
                    );
                }
                None
            }
        }
    }

    /// Appends the intent of writing `bytes` at `start` of the file `meta` describes (`exact`: no other writer
    /// of the file can append before it, the stripe being held), with its `units` (see
    /// [`note_unit`]). `None` if it could not be noted: the write goes on unjournaled.
    pub(crate) fn intend(
        self: &Arc<Self>,
        write: u64,
        meta: &std::fs::Metadata,
        start: u64,
        exact: bool,
        bytes: &[u8],
        units: &[u64],
    ) -> Option<Noted> {
        let mut payload = Vec::with_capacity(64 + bytes.len() / 1024 + units.len() * 2);
        for word in [write, meta.dev(), meta.ino(), start, bytes.len() as u64] {
            payload.extend_from_slice(&word.to_le_bytes());
        }
        payload.push(exact as u8);
        payload.push(self.owner.len().min(255) as u8);
        payload.extend_from_slice(&self.owner.as_bytes()[..self.owner.len().min(255)]);
        let crcs = piece_crcs(start, bytes);
        payload.extend_from_slice(&(crcs.len() as u64).to_le_bytes());
        for crc in crcs {
            payload.extend_from_slice(&crc.to_le_bytes());
        }
        encode_units(units, &mut payload);
        let current = self.current.load(Ordering::Relaxed);
        self.append(current, KIND_INTENT, &payload).ok()?;
        Some(Noted {
            journal: self.clone(),
            file: current,
            write,
            written: 0,
        })
    }

    /// Notes, in the settlement log, that `count` bytes ending at `end` of the file (`dev`,
    /// `ino`) were written without the file's stripe (it was held past [`STRIPE_WAIT`]): a
    /// dead process's write compared there may not be taken for landed (see
    /// [`read_settled`]). Nothing without stripes.
    pub(crate) fn note_unlocked(&self, dev: u64, ino: u64, end: u64, count: u64) {
        let Some(locks) = &self.locks else {
            return;
        };
        let mut payload = Vec::with_capacity(32);
        for word in [dev, ino, end, count] {
            payload.extend_from_slice(&word.to_le_bytes());
        }
        let _ = locks
            .open_or_create_file(SETTLED)
            .and_then(|log| write_entry(&log, KIND_UNLOCKED, &payload));
    }

    fn append(&self, file: usize, kind: u32, payload: &[u8]) -> io::Result<()> {
        write_entry(&self.files[file], kind, payload)
    }
}

/// A lock stripe held (see the module documentation); let go when dropped, its file kept for
/// the journal's next write.
pub(crate) struct Stripe<'a> {
    held: Option<File>,
    journal: &'a Journal,
    index: usize,
}

impl Stripe<'_> {
    /// Records write `write` of the journal's owner as the stripe's current write: `start` of
    /// the file (`dev`, `ino`) at `path`, not done. Before its intent is noted: a death after
    /// the intent always leaves a write to settle.
    pub(crate) fn begin(&self, write: u64, dev: u64, ino: u64, start: u64, path: &Path) {
        let path = path.as_os_str().as_bytes();
        let owner = self.journal.owner.as_bytes();
        let mut body = Vec::with_capacity(48 + owner.len() + path.len());
        for word in [write, dev, ino, start] {
            body.extend_from_slice(&word.to_le_bytes());
        }
        let (owner, path) = (
            &owner[..owner.len().min(255)],
            &path[..path.len().min(4096)],
        );
        body.extend_from_slice(&(owner.len() as u16).to_le_bytes());
        body.extend_from_slice(&(path.len() as u16).to_le_bytes());
        body.extend_from_slice(owner);
        body.extend_from_slice(path);
        let mut record = Vec::with_capacity(8 + body.len());
        record.extend_from_slice(&1u32.to_le_bytes());
        record.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        record.extend_from_slice(&body);
        if let Some(held) = &self.held {
            let _ = held.write_all_at(&record, 0);
        }
    }

    /// The current write is done: all of it landed or failed with the process alive.
    pub(crate) fn end(&self) {
        if let Some(held) = &self.held {
            let _ = held.write_all_at(&0u32.to_le_bytes(), 0);
        }
    }
}

impl Drop for Stripe<'_> {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        let _ = rustix::fs::flock(&held, rustix::fs::FlockOperation::Unlock);
        let mut open = crate::queue::sync::lock(&self.journal.open_stripes);
        if open[self.index].is_none() {
            open[self.index] = Some(held);
        }
    }
}

/// A stripe's current write, as its record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CurrentWrite {
    pub(crate) owner: String,
    pub(crate) write: u64,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) start: u64,
    pub(crate) path: std::path::PathBuf,
}

/// The write the stripe `held` records as not done, if any.
fn current_write(held: &File) -> Option<CurrentWrite> {
    // The state alone first: a write that is done (the common case) costs four bytes.
    let mut state = [0u8; 4];
    if held.read_at(&mut state, 0).ok()? < 4 || state != 1u32.to_le_bytes() {
        return None;
    }
    let mut record = vec![0u8; MAX_RECORD];
    let n = held.read_at(&mut record, 0).ok()?;
    parse_current_write(&record[..n])
}

/// A stripe's record (see [`Stripe::begin`]): the write it names if not done. Never trusts a
/// length.
pub(crate) fn parse_current_write(record: &[u8]) -> Option<CurrentWrite> {
    if record.get(..4)? != 1u32.to_le_bytes() {
        return None;
    }
    let crc = u32::from_le_bytes(record.get(4..8)?.try_into().ok()?);
    let body = record.get(8..)?;
    let mut cursor = Cursor(body);
    let (write, dev, ino, start) = (cursor.u64()?, cursor.u64()?, cursor.u64()?, cursor.u64()?);
    let owner_len = u16::from_le_bytes(cursor.take(2)?.try_into().ok()?) as usize;
    let path_len = u16::from_le_bytes(cursor.take(2)?.try_into().ok()?) as usize;
    let owner = String::from_utf8_lossy(cursor.take(owner_len)?).into_owned();
    let path = std::ffi::OsStr::from_bytes(cursor.take(path_len)?).into();
    let used = 36 + owner_len + path_len;
    if crc32fast::hash(body.get(..used)?) != crc {
        return None;
    }
    Some(CurrentWrite {
        owner,
        write,
        dev,
        ino,
        start,
        path,
    })
}

/// With the stripe `held`: if its record names a write not done, its owner died inside it
/// (it held the stripe until then), and nobody appended to its file since: appends to the
/// settlement log how much of it landed (the file's length now less the write's start, or
/// [`UNKNOWN`] when its path no longer names that file), and marks the record done. Returns
/// the settled write, if any, and what landed. `file_len` is the file's length if the caller
/// already has it open.
pub(crate) fn settle_dead_holder(
    locks: &PrivateDir,
    held: &File,
    file_len: Option<u64>,
) -> Option<(CurrentWrite, u64)> {
    let dead = current_write(held)?;
    let len = file_len.or_else(|| {
        let meta = std::fs::metadata(&dead.path).ok()?;
        ((meta.dev(), meta.ino()) == (dead.dev, dead.ino)).then_some(meta.len())
    });
    let landed = len
        .and_then(|len| len.checked_sub(dead.start))
        .unwrap_or(UNKNOWN);
    let mut payload = Vec::with_capacity(32 + dead.owner.len());
    payload.push(dead.owner.len().min(255) as u8);
    payload.extend_from_slice(&dead.owner.as_bytes()[..dead.owner.len().min(255)]);
    payload.extend_from_slice(&dead.write.to_le_bytes());
    payload.extend_from_slice(&landed.to_le_bytes());
    let appended = locks
        .open_or_create_file(SETTLED)
        .and_then(|log| write_entry(&log, KIND_SETTLED, &payload));
    if appended.is_ok() {
        let _ = held.write_all_at(&0u32.to_le_bytes(), 0);
    }
    Some((dead, landed))
}

/// What a settlement log says.
#[derive(Debug, Default)]
pub(crate) struct Settlements {
    /// (owner, write) → bytes landed ([`UNKNOWN`] when not measured).
    pub(crate) landed: std::collections::HashMap<(String, u64), u64>,
    /// (device, inode) → file ranges written without the stripe.
    pub(crate) unlocked: std::collections::HashMap<(u64, u64), Vec<(u64, u64)>>,
}

impl Settlements {
    /// Whether a write without the stripe put bytes into `from..to` of the file (`dev`, `ino`).
    pub(crate) fn unlocked_within(&self, dev: u64, ino: u64, from: u64, to: u64) -> bool {
        self.unlocked
            .get(&(dev, ino))
            .is_some_and(|ranges| ranges.iter().any(|&(a, b)| a < to && from < b))
    }
}

/// The settlements and the writes without a stripe in a settlement log's bytes.
pub(crate) fn read_settled(bytes: &[u8]) -> Settlements {
    let mut settled = Settlements::default();
    for (kind, payload) in entries(bytes) {
        let mut cursor = Cursor(payload);
        if kind == KIND_UNLOCKED {
            if let (Some(dev), Some(ino), Some(end), Some(count)) =
                (cursor.u64(), cursor.u64(), cursor.u64(), cursor.u64())
            {
                settled
                    .unlocked
                    .entry((dev, ino))
                    .or_default()
                    .push((end.saturating_sub(count), end));
            }
            continue;
        }
        if kind != KIND_SETTLED {
            continue;
        }
        let Some(owner_len) = cursor.take(1).map(|b| b[0] as usize) else {
            continue;
        };
        let (Some(owner), Some(write), Some(landed)) =
            (cursor.take(owner_len), cursor.u64(), cursor.u64())
        else {
            continue;
        };
        // The first settlement is the one made when the stripe was first taken after the
        // death; one made later (if marking the write done failed) may count others' lines.
        settled
            .landed
            .entry((String::from_utf8_lossy(owner).into_owned(), write))
            .or_insert(landed);
    }
    settled
}

/// A journal file's entries, up to the first that is cut short or fails its checksum.
fn entries(bytes: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let kind = u32::from_le_bytes(rest.get(0..4)?.try_into().ok()?);
        let len = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
        let crc = u32::from_le_bytes(rest.get(8..12)?.try_into().ok()?);
        let payload = rest.get(12..12usize.checked_add(len)?)?;
        if crc32fast::hash(payload) != crc {
            return None;
        }
        rest = &rest[12 + len..];
        Some((kind, payload))
    })
}

fn write_entry(mut file: &File, kind: u32, payload: &[u8]) -> io::Result<()> {
    let mut entry = Vec::with_capacity(12 + payload.len());
    entry.extend_from_slice(&kind.to_le_bytes());
    entry.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    entry.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    entry.extend_from_slice(payload);
    file.write_all(&entry)
}

impl Noted {
    /// Appends the landing of `count` more bytes of the batch, ending at file offset `end`.
    pub(crate) fn landed(&mut self, count: u64, end: u64) {
        let mut payload = Vec::with_capacity(32);
        for word in [self.write, self.written, count, end] {
            payload.extend_from_slice(&word.to_le_bytes());
        }
        self.written += count;
        let _ = self.journal.append(self.file, KIND_LANDED, &payload);
    }
}

/// Takes the stripe of the file (`dev`, `ino`) in `locks`, waiting at most `wait`.
pub(crate) fn stripe(locks: &PrivateDir, dev: u64, ino: u64, wait: Duration) -> Option<File> {
    let file = open_stripe(locks, stripe_index(dev, ino))?;
    lock_within(file, wait)
}

/// Which stripe the file (`dev`, `ino`) is in.
fn stripe_index(dev: u64, ino: u64) -> usize {
    let mixed = (dev.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ino).wrapping_mul(0xff51_afd7_ed55_8ccd);
    ((mixed >> 58) % STRIPES) as usize
}

fn open_stripe(locks: &PrivateDir, index: usize) -> Option<File> {
    locks
        .open_or_create_in_place(&format!("stripe-{index}"))
        .ok()
}

/// `file` with its exclusive `flock` taken, waiting at most `wait`.
fn lock_within(file: File, wait: Duration) -> Option<File> {
    use rustix::fs::{flock, FlockOperation};
    let started = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Some(file),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR)
                if started.elapsed() < wait =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
}

/// The CRC-32 of each piece of `bytes` written at file offset `start`, pieces ending at
/// multiples of [`PIECE`] (and at the end).
pub(crate) fn piece_crcs(start: u64, bytes: &[u8]) -> Vec<u32> {
    let mut crcs = Vec::with_capacity(bytes.len() / PIECE as usize + 2);
    let mut at = 0usize;
    while at < bytes.len() {
        let offset = start + at as u64;
        let to_boundary = (PIECE - offset % PIECE) as usize;
        let end = bytes.len().min(at + to_boundary);
        crcs.push(crc32fast::hash(&bytes[at..end]));
        at = end;
    }
    crcs
}

/// Units as [`note_unit`] lays them out, compacted: per unit, its start after the previous
/// unit's end, its length and its record count as LEB128, then each record's serial and
/// position as zigzag LEB128 differences from the previous record's.
fn encode_units(units: &[u64], out: &mut Vec<u8>) {
    let count_at = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    let (mut count, mut previous_end, mut serial, mut position) = (0u64, 0u64, 0u64, 0u64);
    let mut at = 0;
    while at + 3 <= units.len() {
        let (start, end, records) = (units[at], units[at + 1], units[at + 2] as usize);
        leb(out, start.wrapping_sub(previous_end));
        leb(out, end - start);
        leb(out, records as u64);
        previous_end = end;
        for pair in units[at + 3..].chunks_exact(2).take(records) {
            leb(out, zigzag(pair[0].wrapping_sub(serial)));
            leb(out, zigzag(pair[1].wrapping_sub(position)));
            (serial, position) = (pair[0], pair[1]);
        }
        at += 3 + 2 * records;
        count += 1;
    }
    out[count_at..count_at + 8].copy_from_slice(&count.to_le_bytes());
}

fn leb(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn zigzag(difference: u64) -> u64 {
    let signed = difference as i64;
    ((signed << 1) ^ (signed >> 63)) as u64
}

fn unzigzag(value: u64) -> u64 {
    ((value >> 1) as i64 ^ -((value & 1) as i64)) as u64
}

/// A write as a journal tells it: what was to be written, and what landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JournaledWrite {
    /// Whose write, and its number: what a settlement names it by.
    pub(crate) owner: String,
    pub(crate) write: u64,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// The file's length when the write began: where it went, if `exact`.
    pub(crate) start: u64,
    pub(crate) exact: bool,
    pub(crate) len: u64,
    /// See [`piece_crcs`].
    pub(crate) crcs: Vec<u32>,
    /// Each unit's bytes in the batch, and its records.
    pub(crate) units: Vec<Unit>,
    /// What landed: (offset in the batch, bytes, file offset after them), in order.
    pub(crate) landed: Vec<(u64, u64, u64)>,
}

/// A line or a binary block of a journaled write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) records: Vec<RecordId>,
}

/// Every write a journal's bytes tell of, in order. Reading stops at the first entry that is
/// cut short or fails its checksum (a death inside a journal append leaves only that one, and
/// its write never began); what does not add up (a unit past its batch, a landing of an
/// unknown write or past its end) is left out. Never trusts a length.
pub(crate) fn read(bytes: &[u8]) -> Vec<JournaledWrite> {
    let mut writes: Vec<(u64, JournaledWrite)> = Vec::new();
    for (kind, payload) in entries(bytes) {
        let mut cursor = Cursor(payload);
        match kind {
            KIND_INTENT => {
                if let Some(write) = read_intent(&mut cursor) {
                    writes.push(write);
                }
            }
            KIND_LANDED => {
                let (Some(id), Some(offset), Some(count), Some(end)) =
                    (cursor.u64(), cursor.u64(), cursor.u64(), cursor.u64())
                else {
                    continue;
                };
                let Some((_, write)) = writes.iter_mut().rev().find(|(w, _)| *w == id) else {
                    continue;
                };
                if offset.checked_add(count).is_some_and(|e| e <= write.len) && end >= count {
                    write.landed.push((offset, count, end));
                }
            }
            _ => {}
        }
    }
    writes.into_iter().map(|(_, w)| w).collect()
}

fn read_intent(cursor: &mut Cursor<'_>) -> Option<(u64, JournaledWrite)> {
    let (id, dev, ino, start, len) = (
        cursor.u64()?,
        cursor.u64()?,
        cursor.u64()?,
        cursor.u64()?,
        cursor.u64()?,
    );
    let exact = cursor.take(1)?[0] == 1;
    let owner_len = cursor.take(1)?[0] as usize;
    let owner = String::from_utf8_lossy(cursor.take(owner_len)?).into_owned();
    let pieces = cursor.u64()?;
    if start.checked_add(len).is_none() || pieces > len / PIECE + 2 {
        return None;
    }
    let crcs = (0..pieces)
        .map(|_| Some(u32::from_le_bytes(cursor.take(4)?.try_into().ok()?)))
        .collect::<Option<Vec<u32>>>()?;
    let count = cursor.u64()?;
    let mut units = Vec::new();
    let (mut previous_end, mut serial, mut position) = (0u64, 0u64, 0u64);
    for _ in 0..count {
        let unit_start = previous_end.checked_add(cursor.leb()?)?;
        let end = unit_start.checked_add(cursor.leb()?)?;
        let records = cursor.leb()?;
        if end > len || records > cursor.0.len() as u64 {
            return None;
        }
        let mut ids = Vec::with_capacity(records as usize);
        for _ in 0..records {
            serial = serial.wrapping_add(unzigzag(cursor.leb()?));
            position = position.wrapping_add(unzigzag(cursor.leb()?));
            ids.push((serial, position));
        }
        previous_end = end;
        units.push(Unit {
            start: unit_start,
            end,
            records: ids,
        });
    }
    Some((
        id,
        JournaledWrite {
            owner,
            write: id,
            dev,
            ino,
            start,
            exact,
            len,
            crcs,
            units,
            landed: Vec::new(),
        },
    ))
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn leb(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal_in(dir: &std::path::Path) -> Arc<Journal> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(dir.join("journal"))
            .unwrap();
        Arc::new(Journal::new("test".into(), vec![file], None))
    }

    // Files through `tempfile` and `fstat`: not for Miri, which runs `queue::`'s tests.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn an_intent_and_its_landing_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = journal_in(dir.path());
        let data = std::fs::File::create(dir.path().join("data")).unwrap();
        let mut units = Vec::new();
        let bytes = vec![b'x'; 10_000];
        LINE.with(|l| l.set(Some((3, 4096))));
        note_unit(&mut units, 0, 100);
        LINE.with(|l| l.set(None));
        note_unit(&mut units, 100, 200);
        let (_, _) = with_block(vec![(3, 1 << 40), (1, 8)], || {
            note_unit(&mut units, 200, 10_000)
        });
        let meta = data.metadata().unwrap();
        let mut noted = journal
            .intend(7, &meta, 5000, true, &bytes, &units)
            .unwrap();
        noted.landed(6000, 11_000);
        let writes = read(&std::fs::read(dir.path().join("journal")).unwrap());
        assert_eq!(writes.len(), 1);
        let write = &writes[0];
        assert_eq!((write.start, write.len, write.exact), (5000, 10_000, true));
        // 5000..8192, 8192..12288, 12288..15000
        assert_eq!(write.crcs.len(), 3);
        assert_eq!(write.crcs[0], crc32fast::hash(&bytes[..3192]));
        assert_eq!(
            write.units,
            vec![
                Unit {
                    start: 0,
                    end: 100,
                    records: vec![(3, 4096)]
                },
                Unit {
                    start: 200,
                    end: 10_000,
                    records: vec![(3, 1 << 40), (1, 8)]
                },
            ]
        );
        assert_eq!(write.landed, vec![(0, 6000, 11_000)]);
    }

    // Files through `tempfile` and `fstat`: not for Miri, which runs `queue::`'s tests.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_journal_cut_short_or_damaged_reads_up_to_the_damage() {
        let dir = tempfile::tempdir().unwrap();
        let journal = journal_in(dir.path());
        let data = std::fs::File::create(dir.path().join("data")).unwrap();
        let meta = data.metadata().unwrap();
        for start in [0, 10, 20] {
            journal.intend(start, &meta, start, false, b"0123456789", &[]);
        }
        let bytes = std::fs::read(dir.path().join("journal")).unwrap();
        assert_eq!(read(&bytes).len(), 3);
        assert_eq!(read(&bytes[..bytes.len() - 1]).len(), 2);
        let mut damaged = bytes.clone();
        let second = bytes.len() / 3 + 20;
        damaged[second] ^= 1;
        assert_eq!(read(&damaged).len(), 1);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut state = 0x1234_5678_u64;
        // Miri runs `queue::`'s tests: a few inputs there.
        let lengths = if cfg!(miri) { 40 } else { 2000 };
        for len in 0..lengths {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let _ = read(&bytes);
        }
    }
}
