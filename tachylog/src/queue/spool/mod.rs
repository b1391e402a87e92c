//! The spool: rings in shared file mappings (on tmpfs by default), so that what a thread has
//! logged outlives the process, however it dies, and a later process (or `tachylog recover`)
//! writes it. Opt-in with `Builder::spool`.
//!
//! A process's spool is one directory, `<pid>.<start time in ns>`, under the directory the
//! application chose; `layout` says where everything sits and `SPOOL.md` gives the format:
//! - `lock`: an `fcntl` write lock held while the process lives, so that a recovering process
//!   never takes the files of a live one (not inherited by a forked child);
//! - `defs`: each call site and argument list, appended before the first record that uses it;
//! - `ring-<serial>`: a thread's ring, its control block (head, tail) at the start of the file;
//! - `large-<serial>-<position>`: the body of a record too large for its ring, saved before the
//!   record is published and removed once a cut wrote it;
//! - `state`: the clock's calibration, and the ledger: after each batch the back end wrote, which
//!   file each file sink was writing and how long it was, and how far each ring had been
//!   written, committed by one store.
//!
//! The root and the process directories are private to the user (`private_dir`): a directory
//! someone else owns or may write is refused, and everything inside is reached through the
//! directory's descriptor.
//!
//! Layer 1 (see `ARCHITECTURE.md`): bytes and files only; what a definition says is the
//! front end's business, what a recovered record says is the reader's.

pub(crate) mod journal;
pub(crate) mod layout;
mod map;
mod private_dir;

use layout::*;
use map::Mapping;
pub(crate) use private_dir::PrivateDir;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A process's spool directory, open for writing.
pub(crate) struct Spool {
    root: PrivateDir,
    /// The process's directory's name in `root`.
    name: String,
    dir: Arc<PrivateDir>,
    /// Holds the `fcntl` lock while open.
    _lock: File,
    state: Mapping,
    /// The definitions file, and the keys defined in it.
    defs: Mutex<(File, std::collections::HashSet<u64>)>,
    capacity: usize,
    /// Whether every record since the spool opened was committed and the directory may go.
    clean: AtomicBool,
    /// Where the file sinks' writes are noted.
    journal: Arc<journal::Journal>,
}

static ACTIVE: Mutex<Option<Arc<Spool>>> = Mutex::new(None);
/// Set while a spool is installed: the front end's cold paths look here before the mutex.
static ON: AtomicBool = AtomicBool::new(false);
/// A problem the back end has not reported yet (a ring or definition the spool could not
/// take): logging goes on, those records unprotected.
static WARNING: Mutex<Option<String>> = Mutex::new(None);

/// The installed spool, if any.
pub(crate) fn active() -> Option<Arc<Spool>> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    super::sync::lock(&ACTIVE).clone()
}

/// Makes `spool` the one new rings and definitions go to.
pub(crate) fn install(spool: Spool) {
    *super::sync::lock(&ACTIVE) = Some(Arc::new(spool));
    ON.store(true, Ordering::Release);
}

/// Takes the installed spool away (a logger's clean end).
pub(crate) fn uninstall() -> Option<Arc<Spool>> {
    ON.store(false, Ordering::Release);
    super::sync::lock(&ACTIVE).take()
}

/// Notes a problem for the back end to report as a WARN record (the first one until then).
pub(crate) fn warn(message: String) {
    let mut slot = super::sync::lock(&WARNING);
    if slot.is_none() {
        *slot = Some(message);
    }
}

/// The problem noted since the last call, if any.
pub(crate) fn take_warning() -> Option<String> {
    super::sync::lock(&WARNING).take()
}

impl Spool {
    /// Opens a new process directory under `root` (made if missing, and refused unless it is
    /// private to this user: see `private_dir`), for rings of `capacity` bytes (a power of
    /// two).
    pub(crate) fn create(root: &Path, capacity: usize) -> io::Result<Spool> {
        let root = PrivateDir::open_root(root, true)?;
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{}.{started}", std::process::id());
        // Made under a name recovery passes over, and given its own only once its lock is
        // held: a recovery starting meanwhile must not take a directory without a lock for
        // one whose process ended cleanly, and remove it.
        let building = format!("{name}{BUILDING}");
        let dir = root.create_dir(&building)?;
        let lock = dir.create_file(LOCK)?;
        if !set_lock(&lock)? {
            return Err(io::Error::other("the spool directory's lock is held"));
        }
        root.rename(OsStr::new(&building), OsStr::new(&name))?;
        let dir = root.open_dir(OsStr::new(&name))?;
        let state = Mapping::create(&dir.create_file(STATE)?, STATE_BYTES)?;
        state.write(0, &STATE_MAGIC);
        state.write(8, &(STATE_USIZE_BYTES as u32).to_le_bytes());
        state.write(12, &(usize::BITS / 8).to_le_bytes());
        let defs = dir.create_file(DEFS)?;
        let journals = journal::LIVE_JOURNALS
            .iter()
            .map(|name| dir.open_or_create_file(name))
            .collect::<io::Result<Vec<File>>>()?;
        let journal = Arc::new(journal::Journal::new(
            name.clone(),
            journals,
            lock_stripes(&root),
        ));
        Ok(Spool {
            root,
            name,
            dir: Arc::new(dir),
            _lock: lock,
            state,
            defs: Mutex::new((defs, std::collections::HashSet::new())),
            capacity,
            clean: AtomicBool::new(false),
            journal,
        })
    }

    /// The journal the file sinks' writes are noted in (see `journal`).
    pub(crate) fn journal(&self) -> Arc<journal::Journal> {
        self.journal.clone()
    }

    /// The process's directory.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A ring file for the thread `serial` (OS id `tid`, `name`), its pages allocated and
    /// touched.
    pub(crate) fn ring_file(&self, serial: u64, tid: u64, name: &str) -> io::Result<RingFile> {
        let file_name = format!("{RING_PREFIX}{serial}");
        let mapping = Mapping::create(&self.dir.create_file(&file_name)?, PAGE + self.capacity)?;
        let h = RING_HEADER;
        mapping.write(h, &RING_MAGIC);
        mapping.write(h + RH_USIZE_BYTES, &(usize::BITS / 8).to_le_bytes());
        mapping.write(h + RH_CAPACITY, &(self.capacity as u64).to_le_bytes());
        mapping.write(h + RH_TID, &tid.to_le_bytes());
        mapping.write(h + RH_SERIAL, &serial.to_le_bytes());
        let name = &name.as_bytes()[..name.len().min(MAX_NAME)];
        mapping.write(h + RH_NAME, &(name.len() as u16).to_le_bytes());
        mapping.write(h + RH_NAME + 2, name);
        Ok(RingFile {
            mapping,
            name: file_name,
            dir: self.dir.clone(),
            serial,
            capacity: self.capacity,
        })
    }

    /// Appends the definition `payload()` of `key` (a site's or an argument list's address)
    /// unless it was defined already: a `u32` length, a CRC-32, the payload, in one
    /// `write(2)`, which puts it in the page cache before it returns.
    pub(crate) fn define(&self, key: u64, payload: impl FnOnce() -> Vec<u8>) -> io::Result<()> {
        let mut defs = super::sync::lock(&self.defs);
        if defs.1.contains(&key) {
            return Ok(());
        }
        let payload = payload();
        let mut entry = Vec::with_capacity(8 + payload.len());
        entry.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        entry.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        entry.extend_from_slice(&payload);
        defs.0.write_all(&entry)?;
        defs.1.insert(key);
        Ok(())
    }

    /// Publishes the clock's calibration: ticks at `base_ticks` were `base_wall` ns after the
    /// Unix epoch, `nanos_per_tick` apart. Back end only (one writer).
    pub(crate) fn publish_clock(&self, base_ticks: u64, base_wall: i64, nanos_per_tick: f64) {
        let version = self.state.atomic_u64(STATE_CLOCK);
        let v = version.load(Ordering::Relaxed);
        version.store(v | 1, Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Release);
        self.state
            .atomic_u64(STATE_CLOCK + 8)
            .store(base_ticks, Ordering::Relaxed);
        self.state
            .atomic_u64(STATE_CLOCK + 16)
            .store(base_wall as u64, Ordering::Relaxed);
        self.state
            .atomic_u64(STATE_CLOCK + 24)
            .store(nanos_per_tick.to_bits(), Ordering::Relaxed);
        version.store((v | 1) + 1, Ordering::Release);
    }

    /// Commits cut `seq`: every ring's slot for it was written ([`RingFile::commit`]). One
    /// store makes it the current cut. One writer: the back end.
    pub(crate) fn commit(&self, seq: u64) {
        let slot = STATE_SLOTS + (seq % 2) as usize * SLOT_BYTES;
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&seq.to_le_bytes());
        self.state.write(slot, &bytes);
        self.state
            .atomic_u64(STATE_CURRENT)
            .store(seq, Ordering::Release);
        // Every record written before the previous cut is committed now: the journal of those
        // writes may go (see `journal`).
        self.journal.rotate();
    }

    /// Marks everything logged as written for good: dropping the spool then removes its
    /// directory (a logger's clean end).
    pub(crate) fn mark_clean(&self) {
        self.clean.store(true, Ordering::Release);
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if self.clean.load(Ordering::Acquire) {
            remove_process_dir(&self.root, OsStr::new(&self.name), &self.dir);
        }
    }
}

/// The directory of lock stripes in `root` (see `journal`), made if missing; `None` if it
/// cannot be had (a file in the way, another user's directory), which is noted for the back
/// end to report: writes then go without stripes, and a crash inside one may have recovery
/// write its batch again.
pub(crate) fn lock_stripes(root: &PrivateDir) -> Option<PrivateDir> {
    match root.open_or_create_dir(journal::LOCKS) {
        Ok(dir) => Some(dir),
        Err(e) => {
            warn(format!(
                "spool {}: no lock stripes ({e}): a batch a crash cuts short may be recovered \
                 twice",
                root.path().display()
            ));
            None
        }
    }
}

/// Removes the process directory `name` of `root`, open as `dir`: everything but the lock
/// first (a recovery that finds the directory without its files has nothing to do), the lock
/// last, then the directory.
pub(crate) fn remove_process_dir(root: &PrivateDir, name: &OsStr, dir: &PrivateDir) {
    if let Ok(entries) = dir.entries() {
        for entry in entries.iter().filter(|e| e.as_os_str() != LOCK) {
            let _ = dir.remove_file(entry);
            kill_if_asked(&KILL_DURING_REMOVAL);
        }
    }
    let _ = dir.remove_file(OsStr::new(LOCK));
    let _ = root.remove_dir(name);
}

/// Test hook: a recovery sends its process SIGKILL once its records are written, before it
/// removes the directory.
static KILL_BEFORE_REMOVAL: AtomicBool = AtomicBool::new(false);
/// Test hook: a recovery sends its process SIGKILL after it removed a file of the directory.
static KILL_DURING_REMOVAL: AtomicBool = AtomicBool::new(false);

/// Tests only (feature `testing`): the next recovery of a dead process's spool is killed
/// (SIGKILL) after it wrote and flushed the records, before it removes the directory
/// (`during`: after it renamed the directory and removed its first file).
///
/// ```no_run
/// tachylog::__private::kill_recovery_before_cleanup(false);
/// ```
#[cfg(feature = "testing")]
pub fn kill_recovery_before_cleanup(during: bool) {
    let hook = match during {
        true => &KILL_DURING_REMOVAL,
        false => &KILL_BEFORE_REMOVAL,
    };
    hook.store(true, Ordering::SeqCst);
}

/// With the test hook `hook` set: SIGKILL.
pub(crate) fn kill_if_asked(hook: &AtomicBool) {
    if hook.load(Ordering::Relaxed) {
        // SAFETY: sends our own process a signal; no memory is involved.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// With the test hook of [`kill_recovery_before_cleanup`] set: SIGKILL.
pub(crate) fn kill_before_removal_if_asked() {
    kill_if_asked(&KILL_BEFORE_REMOVAL);
}

/// Takes the `fcntl` write lock on `file`: `false` when another process holds it.
pub(crate) fn set_lock(file: &File) -> io::Result<bool> {
    // SAFETY: a zeroed `flock` is a valid value; the fields set below make it "the whole file,
    // for writing".
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as _;
    lock.l_whence = libc::SEEK_SET as _;
    // SAFETY: a valid descriptor and a valid `flock`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

/// A thread's ring file, mapped; removed from the directory when dropped (its records are all
/// written by then: the back end drops a queue only after the cut that wrote its last one).
pub(crate) struct RingFile {
    mapping: Mapping,
    /// Its name in `dir`.
    name: String,
    /// The process's spool directory, where the ring's large records are saved too.
    dir: Arc<PrivateDir>,
    serial: u64,
    capacity: usize,
}

/// A large record's body saved under a temporary name, before its frame has a place in the
/// ring (see [`RingFile::stage_large`]).
pub(crate) struct StagedRecord {
    file: File,
    name: String,
}

impl RingFile {
    /// The start of the mapping, where the ring's control block goes.
    pub(crate) fn base(&self) -> NonNull<u8> {
        // SAFETY: a mapping's address is never null.
        unsafe { NonNull::new_unchecked(self.mapping.ptr()) }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records where the ring's `head` and `tail` are in the file, and the position it starts
    /// at, which is committed until the first cut says otherwise.
    pub(crate) fn set_positions(&mut self, head: usize, tail: usize, start: usize) {
        let h = RING_HEADER;
        self.mapping
            .write(h + RH_HEAD_OFFSET, &(head as u64).to_le_bytes());
        self.mapping
            .write(h + RH_TAIL_OFFSET, &(tail as u64).to_le_bytes());
        self.mapping
            .write(h + RH_START, &(start as u64).to_le_bytes());
    }

    /// Writes this ring's slot of cut `seq`: every record before `position` is in the files
    /// (once the cut is committed). Back end only.
    pub(crate) fn commit(&self, seq: u64, position: usize) {
        let slot = RING_HEADER + RH_COMMITTED + (seq % 2) as usize * 16;
        self.mapping
            .atomic_u64(slot + 8)
            .store(position as u64, Ordering::Relaxed);
        self.mapping.atomic_u64(slot).store(seq, Ordering::Release);
    }

    /// Saves the body of a record too large for the ring (its first 8 bytes, the timestamp,
    /// are written again by [`RingFile::place_large`]) in this ring's temporary file, one
    /// `write(2)`: in the page cache, so it outlives the process, before the log call returns.
    /// Producer only (one thread per ring).
    pub(crate) fn stage_large(&self, body: &[u8]) -> io::Result<StagedRecord> {
        let name = format!("{LARGE_PREFIX}{}.tmp", self.serial);
        let mut file = self.dir.replace_file(&name)?;
        file.write_all(body)?;
        Ok(StagedRecord { file, name })
    }

    /// Gives a staged record its name, `large-<serial>-<position>` (the position of its frame
    /// in the ring), with its timestamp `ticks`: recovery finds it there from the frame.
    /// Producer only, between reserving the frame and publishing it.
    pub(crate) fn place_large(
        &self,
        staged: StagedRecord,
        position: usize,
        ticks: u64,
    ) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        staged.file.write_all_at(&ticks.to_ne_bytes(), 0)?;
        let name = large_name(self.serial, position as u64);
        self.dir.rename(OsStr::new(&staged.name), OsStr::new(&name))
    }

    /// Removes the saved body of the large record at `position`, once a committed cut has
    /// written it. Back end only.
    pub(crate) fn remove_large(&self, position: usize) {
        let _ = self
            .dir
            .remove_file(OsStr::new(&large_name(self.serial, position as u64)));
    }

    /// The process's spool directory.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for RingFile {
    fn drop(&mut self) {
        let _ = self.dir.remove_file(OsStr::new(&self.name));
    }
}
