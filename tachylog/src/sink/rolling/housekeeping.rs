//! Compression and retention of rolled files, on a thread of their own.
//!
//! The back end only sends messages here (a file was left; prune now), so a slow compression
//! of a large file never delays its writes. This thread is the only one that compresses or
//! deletes, so the two never race each other. Everything it does is driven by what is on disk,
//! so it is correct after a restart: files left uncompressed by a previous run are compressed,
//! abandoned temporary files are removed, and retention counts every file of the pattern.

use super::name::{NamePattern, Recognised, COMPRESSED_SUFFIXES, TEMP_SUFFIX};
use super::Compression;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// An abandoned temporary compression older than this is removed at startup.
const STALE_TEMP_AGE: Duration = Duration::from_secs(600);

/// Which old files to delete. All limits apply together; the current file always stays.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Retention {
    pub(crate) max_files: Option<usize>,
    pub(crate) max_age: Option<Duration>,
    pub(crate) max_total_bytes: Option<u64>,
}

impl Retention {
    pub(crate) fn is_set(&self) -> bool {
        self.max_files.is_some() || self.max_age.is_some() || self.max_total_bytes.is_some()
    }
}

enum Job {
    /// Compress this file once `due` has passed.
    Compress { path: PathBuf, due: Instant },
    /// Apply retention; `current` is the file in use.
    Prune { current: PathBuf },
    /// After a (re)start: compress what an earlier run left uncompressed before
    /// `period_start` (nanoseconds since the epoch), remove stale temporaries, prune.
    Startup { current: PathBuf, period_start: i64 },
}

/// The handle the sink keeps; dropping it finishes pending work and joins the thread.
pub(crate) struct Housekeeper {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Housekeeper {
    pub(crate) fn start(
        pattern: Arc<NamePattern>,
        retention: Retention,
        compression: Compression,
    ) -> io::Result<Housekeeper> {
        let (jobs, inbox) = mpsc::channel();
        let worker = Worker {
            pattern,
            retention,
            compression,
            pending: Vec::new(),
            current: None,
        };
        let thread = std::thread::Builder::new()
            .name("tachylog-files".into())
            .spawn(move || worker.run(inbox))?;
        Ok(Housekeeper {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// The back end stopped writing `path`; compress it at `due`.
    pub(crate) fn file_left(&self, path: PathBuf, due: Instant) {
        self.send(Job::Compress { path, due });
    }

    /// Applies retention now.
    pub(crate) fn prune(&self, current: PathBuf) {
        self.send(Job::Prune { current });
    }

    pub(crate) fn startup(&self, current: PathBuf, period_start: i64) {
        self.send(Job::Startup {
            current,
            period_start,
        });
    }

    fn send(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            // Fails only if the thread died, which it reported already.
            let _ = jobs.send(job);
        }
    }
}

impl Drop for Housekeeper {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Worker {
    pattern: Arc<NamePattern>,
    retention: Retention,
    compression: Compression,
    /// Files waiting for their compression time.
    pending: Vec<(Instant, PathBuf)>,
    current: Option<PathBuf>,
}

impl Worker {
    fn run(mut self, inbox: mpsc::Receiver<Job>) {
        loop {
            let next_due = self.pending.iter().map(|(due, _)| *due).min();
            let job = match next_due {
                Some(due) => inbox.recv_timeout(due.saturating_duration_since(Instant::now())),
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match job {
                Ok(job) => self.take(job),
                Err(RecvTimeoutError::Timeout) => self.compress_due(Some(Instant::now())),
                Err(RecvTimeoutError::Disconnected) => {
                    // The sink is closing: nothing more will be written to the files left.
                    self.compress_due(None);
                    self.prune();
                    return;
                }
            }
        }
    }

    fn take(&mut self, job: Job) {
        match job {
            Job::Compress { path, due } => self.pending.push((due, path)),
            Job::Prune { current } => {
                self.current = Some(current);
                self.prune();
            }
            Job::Startup {
                current,
                period_start,
            } => {
                self.current = Some(current.clone());
                self.recover(&current, period_start);
                self.prune();
            }
        }
    }

    /// Compresses the pending files due by `now` (all of them with `None`), then prunes.
    fn compress_due(&mut self, now: Option<Instant>) {
        let (due, waiting) = self
            .pending
            .drain(..)
            .partition(|(due, _)| now.is_none_or(|now| *due <= now));
        self.pending = waiting;
        let due: Vec<(Instant, PathBuf)> = due;
        if due.is_empty() {
            return;
        }
        for (_, path) in due {
            if self.current.as_deref() != Some(path.as_path()) {
                self.compress(&path);
            }
        }
        self.prune();
    }

    fn compress(&self, path: &Path) {
        if self.compression == Compression::None {
            return;
        }
        match compress_file(path, self.compression) {
            Ok(()) => {}
            // Already compressed (or pruned) by another run or process.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => eprintln!(
                "tachylog: cannot compress {}: {e}; it stays uncompressed",
                path.display()
            ),
        }
    }

    /// Compresses files an earlier run left uncompressed (not written since the current
    /// period began, so no process is still writing them) and removes stale temporaries.
    fn recover(&mut self, current: &Path, period_start: i64) {
        let now = SystemTime::now();
        for found in list_files(&self.pattern) {
            if found.path == current {
                continue;
            }
            let age = now.duration_since(found.modified).unwrap_or_default();
            if found.kind.temporary {
                if age >= STALE_TEMP_AGE {
                    let _ = std::fs::remove_file(&found.path);
                }
            } else if !found.kind.compressed && unix_nanos(found.modified) < period_start {
                self.compress(&found.path);
            }
        }
    }

    /// Deletes the oldest files of the pattern beyond the retention limits.
    fn prune(&self) {
        if !self.retention.is_set() {
            return;
        }
        let now = SystemTime::now();
        let mut files: Vec<Found> = list_files(&self.pattern)
            .into_iter()
            .filter(|f| !f.kind.temporary)
            .collect();
        // Newest first; the current file is kept whatever its time.
        files.sort_by(|a, b| {
            let is_current = |f: &Found| Some(f.path.as_path()) == self.current.as_deref();
            is_current(b)
                .cmp(&is_current(a))
                .then(b.modified.cmp(&a.modified))
                .then(b.path.cmp(&a.path))
        });
        let mut kept = 0usize;
        let mut kept_bytes = 0u64;
        let mut expired = false;
        for (position, file) in files.iter().enumerate() {
            let age = now.duration_since(file.modified).unwrap_or_default();
            expired = expired
                || self.retention.max_files.is_some_and(|max| kept >= max)
                || self.retention.max_age.is_some_and(|max| age > max)
                || self
                    .retention
                    .max_total_bytes
                    .is_some_and(|max| kept_bytes.checked_add(file.size).is_none_or(|t| t > max));
            if position == 0 && Some(file.path.as_path()) == self.current.as_deref() {
                expired = false;
            }
            if expired {
                match std::fs::remove_file(&file.path) {
                    Ok(()) => remove_empty_parents(&self.pattern, &file.path),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => eprintln!(
                        "tachylog: cannot delete old log {}: {e}",
                        file.path.display()
                    ),
                }
            } else {
                kept += 1;
                // Checked above: sparse files of 2^63 bytes (tmpfs allows them) would overflow.
                kept_bytes = kept_bytes.saturating_add(file.size);
            }
        }
    }
}

/// A file of the pattern found on disk.
struct Found {
    path: PathBuf,
    kind: Recognised,
    modified: SystemTime,
    size: u64,
}

/// Every file under the pattern's fixed root that the pattern could have produced.
fn list_files(pattern: &NamePattern) -> Vec<Found> {
    let mut found = Vec::new();
    walk(pattern, &pattern.fixed_root(), 0, &mut found);
    found
}

fn walk(pattern: &NamePattern, dir: &Path, depth: usize, found: &mut Vec<Found>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let last = depth + 1 == pattern.varying_depth();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // `symlink_metadata`: a `latest` link that happens to match is not a log file.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if last {
            if let (true, Some(kind)) = (meta.is_file(), pattern.recognise_file(name)) {
                found.push(Found {
                    path: clean(entry.path()),
                    kind,
                    modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    size: meta.len(),
                });
            }
        } else if meta.is_dir() && pattern.matches_directory(depth, name) {
            walk(pattern, &entry.path(), depth + 1, found);
        }
    }
}

/// Drops the `./` that walking from `.` adds, so paths compare equal to the sink's.
fn clean(path: PathBuf) -> PathBuf {
    match path.strip_prefix(".") {
        Ok(rest) => rest.to_path_buf(),
        Err(_) => path,
    }
}

/// Removes directories of the pattern (`logs/%Y/%m/%d`) that pruning left empty.
fn remove_empty_parents(pattern: &NamePattern, file: &Path) {
    let mut dir = file.parent();
    for _ in 1..pattern.varying_depth() {
        let Some(d) = dir else { return };
        // Fails (harmlessly) as soon as a directory is not empty.
        if std::fs::remove_dir(d).is_err() {
            return;
        }
        dir = d.parent();
    }
}

/// The highest size-rotation index of the period file `base` on disk.
pub(crate) struct Highest {
    pub(crate) index: u32,
    /// The size of that index's uncompressed file, when it exists and has no compressed copy
    /// (so it may still be appended to).
    pub(crate) uncompressed_size: Option<u64>,
}

pub(crate) fn highest_index(pattern: &NamePattern, base: &Path) -> Option<Highest> {
    let (index, packed) = indexes_on_disk(pattern, base).pop()?;
    let size = (!packed)
        .then(|| std::fs::metadata(pattern.indexed(base, index)).ok())
        .flatten()
        .map(|m| m.len());
    Some(Highest {
        index,
        uncompressed_size: size,
    })
}

/// The size-rotation indexes of the period file `base` that are on disk, in increasing order,
/// each with whether it has a compressed or temporary copy: what one listing of the directory
/// finds, so that a file with an index of billions (put there by anyone) costs one entry, not
/// a look at every index below it.
pub(crate) fn indexes_on_disk(pattern: &NamePattern, base: &Path) -> Vec<(u32, bool)> {
    let dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, bool)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(kind) = pattern.recognise_file(name) else {
            continue;
        };
        let plain = pattern.indexed(base, kind.index);
        let Some(plain) = plain.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.starts_with(plain) {
            continue; // Another period's file.
        }
        let rest = &name[plain.len()..];
        let compressed = rest.trim_end_matches(TEMP_SUFFIX);
        if !(rest.is_empty() || COMPRESSED_SUFFIXES.contains(&compressed)) {
            continue;
        }
        found.push((kind.index, !rest.is_empty()));
    }
    found.sort_unstable();
    // One entry per index, with a copy if any of its files is one.
    found.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        kept.1 |= same && later.1;
        same
    });
    found
}

/// Compresses `path` into `path` + suffix: written to a temporary name, linked into place only
/// when complete (never replacing an existing file), then the original is removed, unless a
/// sibling process appended to it meanwhile (see [`remove_if_unchanged`]).
fn compress_file(path: &Path, compression: Compression) -> io::Result<()> {
    let source = open_rotated(path)?;
    let metadata = source.metadata()?;
    let (modified, len) = (metadata.modified()?, metadata.len());
    let mut target = path.as_os_str().to_owned();
    target.push(compression.suffix());
    let target = PathBuf::from(target);
    let mut temp = target.as_os_str().to_owned();
    temp.push(TEMP_SUFFIX);
    let temp = PathBuf::from(temp);
    // `create_new`: another process compressing the same file makes this one step aside.
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o640);
    let out = options.open(&temp)?;
    let input = BufReader::new(io::Read::take(&source, len));
    let written = encode(input, BufWriter::new(out), compression).and_then(|out| {
        out.set_modified(modified)?;
        out.sync_all()?;
        // A hard link never replaces an existing target, unlike rename.
        std::fs::hard_link(&temp, &target)
    });
    let _ = std::fs::remove_file(&temp);
    written?;
    if !remove_if_unchanged(path, &source, len)? {
        // The compressed copy lacks what was appended: the file stays as it is, whole.
        std::fs::remove_file(&target)?;
        return Err(io::Error::other(
            "another process appended to it while it was compressed",
        ));
    }
    Ok(())
}

/// Opens the rotated file `path` for reading, as a regular file only. On Unix, never through a
/// symbolic link: a process that may write the log directory could put one where the file
/// was, and have this process (perhaps root) copy a file only it may read into a compressed
/// log others may; and never waiting, as opening a FIFO put there would.
fn open_rotated(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = match options.open(path) {
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(e.kind(), "a symbolic link, not a log file"));
        }
        opened => opened?,
    };
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Removes `path` if it still holds `len` bytes, deciding under the file's exclusive lock,
/// which every tachylog writer's shared lock excludes while its `write(2)` runs: a sibling
/// process may still write late records to a file this one left. After the removal its next
/// write finds the file gone (`lock::append_locked`) and creates it again at the path.
/// `false` if it grew; on Windows, or where the lock cannot be taken within a second, the
/// length is checked without it.
fn remove_if_unchanged(path: &Path, source: &File, len: u64) -> io::Result<bool> {
    #[cfg(unix)]
    let locked = crate::sink::append::lock::exclusive_lock(source, Duration::from_secs(1));
    let unchanged = source.metadata()?.len() == len;
    let removed = if unchanged {
        std::fs::remove_file(path).map(|()| true)
    } else {
        Ok(false)
    };
    #[cfg(unix)]
    if locked {
        crate::sink::append::lock::unlock(source);
    }
    removed
}

// With neither compression feature, only `Compression::None` exists and nothing is encoded.
#[cfg_attr(
    not(any(feature = "gzip", feature = "zstd")),
    allow(unused_variables, unused_mut)
)]
fn encode(
    mut input: impl io::Read,
    output: BufWriter<File>,
    compression: Compression,
) -> io::Result<File> {
    let encoded: Option<BufWriter<File>> = match compression {
        Compression::None => None,
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            let mut encoder = flate2::write::GzEncoder::new(output, flate2::Compression::default());
            io::copy(&mut input, &mut encoder)?;
            Some(encoder.finish()?)
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut encoder = zstd::stream::write::Encoder::new(output, 3)?;
            io::copy(&mut input, &mut encoder)?;
            Some(encoder.finish()?)
        }
    };
    let encoded = encoded.ok_or_else(|| io::Error::other("no compression configured"))?;
    encoded.into_inner().map_err(|e| e.into_error())
}

fn unix_nanos(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

#[cfg(test)]
mod tests;
