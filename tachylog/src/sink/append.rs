//! An append-only file with a whole-line batch buffer: what [`FileSink`](super::FileSink) and
//! `RollingFile` write through.
//!
//! - Opened with `O_APPEND` (mode 0640, parent directories created): every `write(2)` lands at
//!   the end even when other processes append to the same file or `logrotate copytruncate`
//!   truncates it. On Linux an `O_APPEND` write to a regular file is not interleaved with other
//!   appends, so processes sharing a file never tear each other's lines. On Windows the file is
//!   opened with append access only (`FILE_APPEND_DATA`) and shared for reading, writing and
//!   deleting: each `WriteFile` lands at the end as one piece on a local volume (NTFS
//!   serialises the writes that extend a file), which is the same guarantee.
//! - The buffer only ever holds whole lines and goes out in one `write` call, so a batch never
//!   splits a line. A line larger than the buffer is written on its own.
//! - At most once a second, at flush time, the path is checked to still name the open file
//!   (see [`identity`]); if the file was deleted or moved away, it is recreated, so a log
//!   deleted by hand or moved by a rotation tool without `copytruncate` is not written into the
//!   void forever. A relative path is made absolute against the working directory of the
//!   open, so a later change of directory does not move the file.
//! - A full batch is written by a [`BackgroundWriter`] thread while the next one fills; a
//!   flush writes the rest itself after that batch is done (see its module for why).
//! - Each `write(2)` holds the file's shared `flock` (see [`lock`]), so that a recovery never
//!   cuts a line this process is appending, and a sibling's compression never removes a file
//!   while a line is going into it. A file found removed under that lock is not written to:
//!   a flush creates it again at the path and writes there.

mod identity;
pub(crate) mod lock;

use super::background_write::BackgroundWriter;
use identity::FileId;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of whole lines gathered before a `write`. Two such buffers exist per file (one being
/// written, one filling). Fewer, larger writes cost the kernel less per byte, up to the point
/// where a batch no longer fits in the caches: 1 MiB is the fastest size tried (measured:
/// 171 ns/record vs 186 at 256 KiB and 180 at 4 MiB,
/// `cargo run --release -p tachylog-bench -- --only tachylog,backend_iteration`).
pub(crate) const BATCH: usize = 1024 * 1024;

/// How often, at most, the path is checked against the open file.
const IDENTITY_CHECK_INTERVAL: Duration = Duration::from_secs(1);

pub(crate) struct AppendFile {
    path: PathBuf,
    /// Whether `path` may be a symbolic link: yes for a path the application gave, no for a
    /// name a pattern made ([`AppendFile::open_generated`]).
    follow_link: bool,
    /// Shared with the writing thread while it writes a batch. `None` only after a file
    /// deleted on Windows was closed so that its name could be taken again, until it is.
    file: Option<Arc<File>>,
    /// What identifies `file`, to notice when `path` names another file.
    identity: FileId,
    /// Whole lines not yet written.
    buf: Vec<u8>,
    /// The units of `buf` for a spool's journal (see `queue::spool::journal::note_unit`):
    /// empty without one.
    units: Vec<u64>,
    /// Where the next line appended in place starts in `buf`.
    noted_to: usize,
    /// The file's length as of the last `stat` plus what this process wrote since.
    written_len: u64,
    last_identity_check: Instant,
    /// Started at the first full batch: a logger that never fills one has no extra thread.
    writer: Option<BackgroundWriter>,
}

impl AppendFile {
    /// Opens `path` for appending, creating it and its parent directories.
    pub(crate) fn open(path: &Path) -> io::Result<AppendFile> {
        AppendFile::open_following(path, true)
    }

    /// [`AppendFile::open`] for a file whose name the logger made from a pattern: on Unix,
    /// never through a symbolic link, now or when the file is opened again. Such a name is
    /// the logger's, in a directory other processes may write, and a link put there before
    /// the period began (say, to `/etc/passwd`) would have a logger running as root append
    /// its lines to the link's target.
    #[cfg(feature = "rolling")]
    pub(crate) fn open_generated(path: &Path) -> io::Result<AppendFile> {
        AppendFile::open_following(path, false)
    }

    fn open_following(path: &Path, follow_link: bool) -> io::Result<AppendFile> {
        // The file is checked and opened again by its path for as long as the logger runs: a
        // relative path taken against a later working directory (a daemon's `chdir("/")`)
        // would move the log there. `absolute` reads the working directory once, now.
        let path = std::path::absolute(path)?;
        let file = open_append(&path, follow_link)?;
        let meta = file.metadata()?;
        Ok(AppendFile {
            path,
            follow_link,
            identity: identity::of_file(&file)?,
            file: Some(Arc::new(file)),
            buf: Vec::with_capacity(BATCH),
            units: Vec::new(),
            noted_to: 0,
            written_len: meta.len(),
            last_identity_check: Instant::now(),
            writer: None,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size including buffered lines, as far as this process knows.
    #[cfg(feature = "rolling")]
    pub(crate) fn len(&self) -> u64 {
        let in_flight = self.writer.as_ref().map_or(0, BackgroundWriter::in_flight);
        self.written_len + (in_flight + self.buf.len()) as u64
    }

    /// Re-reads the file's size from the file system (other processes may have appended).
    #[cfg(feature = "rolling")]
    pub(crate) fn refresh_len(&mut self) -> io::Result<()> {
        self.wait_for_writer()?;
        self.written_len = self.file()?.metadata()?.len();
        Ok(())
    }

    /// Buffers one whole line; a full buffer goes to the writing thread first.
    pub(crate) fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        if self.buf.len() + line.len() > BATCH && !self.buf.is_empty() {
            self.hand_off_buffer()?;
        }
        if line.len() >= BATCH {
            // A huge line goes straight out, without a copy, after the batch before it.
            self.wait_for_writer()?;
            let mut units = Vec::new();
            note_unit(&mut units, 0, line.len());
            let journal = lock::active_journal();
            lock::append_locked(
                self.file()?,
                line,
                lock::journaling(&journal, &units, &self.path),
            )?;
            self.written_len += line.len() as u64;
            return Ok(());
        }
        self.buf.extend_from_slice(line);
        note_unit(&mut self.units, self.buf.len() - line.len(), self.buf.len());
        self.noted_to = self.buf.len();
        Ok(())
    }

    /// Takes over `previous`'s writing thread once its last batch is written (a rotation: the
    /// next file needs no thread of its own).
    #[cfg(feature = "rolling")]
    pub(crate) fn take_writer_from(&mut self, previous: &mut AppendFile) {
        if previous.wait_for_writer().is_ok() && self.writer.is_none() {
            self.writer = previous.writer.take();
        }
    }

    /// The batch buffer, for a line to be formatted straight into it; call
    /// [`AppendFile::line_appended`] after each whole line.
    #[inline]
    pub(crate) fn line_buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// After a line was appended to [`AppendFile::line_buffer`]: a full batch goes to the
    /// writing thread (a line longer than a batch goes with the lines before it).
    #[inline]
    pub(crate) fn line_appended(&mut self) -> io::Result<()> {
        note_unit(&mut self.units, self.noted_to, self.buf.len());
        self.noted_to = self.buf.len();
        if self.buf.len() >= BATCH {
            self.hand_off_buffer()?;
        }
        Ok(())
    }

    /// Gives the full buffer to the writing thread and continues in the one it finished with.
    /// On an error the buffer is dropped like a failed write's (see [`Self::write_buffer`]).
    fn hand_off_buffer(&mut self) -> io::Result<()> {
        if self.writer.is_none() {
            match BackgroundWriter::start() {
                Ok(writer) => self.writer = Some(writer),
                // No thread to be had: write here, as a flush does.
                Err(_) => return self.write_buffer(),
            }
        }
        let Some(writer) = &mut self.writer else {
            unreachable!("started above")
        };
        let spare = match writer.wait() {
            Ok((written, spare)) => {
                self.written_len += written;
                spare
            }
            Err(e) => return Err(self.batch_failed(e)),
        };
        // A buffer that grew around a huge line is not kept for the next batches.
        let (spare, spare_units) = spare.unwrap_or_default();
        let spare =
            Some(spare).filter(|spare| spare.capacity() <= 4 * BATCH && spare.capacity() > 0);
        let full = std::mem::replace(
            &mut self.buf,
            spare.unwrap_or_else(|| Vec::with_capacity(BATCH)),
        );
        let units = std::mem::replace(&mut self.units, spare_units);
        self.noted_to = 0;
        let Some(file) = &self.file else {
            self.buf.clear();
            self.units.clear();
            return Err(self.closed_error());
        };
        self.written_len += writer.write(file, full, units, lock::active_journal(), &self.path)?;
        Ok(())
    }

    /// Waits until the batch on the writing thread, if any, is in the file (or failed: then
    /// the buffered lines are dropped with it, as a failed write drops its batch).
    fn wait_for_writer(&mut self) -> io::Result<()> {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        match writer.wait() {
            Ok((written, _)) => {
                self.written_len += written;
                Ok(())
            }
            Err(e) => Err(self.batch_failed(e)),
        }
    }

    /// After the writing thread's batch failed: the buffered lines are dropped with it (the
    /// caller counts them lost), and a file removed while open is created again now, not at
    /// the next check a second later (if that fails, the check tries again).
    fn batch_failed(&mut self, e: io::Error) -> io::Error {
        self.buf.clear();
        self.units.clear();
        self.noted_to = 0;
        if e.kind() == io::ErrorKind::NotFound {
            let _ = self.recreate();
        }
        e
    }

    /// Writes the buffered lines; first, at most once a second, recreates the file if its path
    /// no longer names it (checking before writing sends those lines to the new file).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.wait_for_writer()?;
        self.recreate_if_moved()?;
        self.write_buffer()
    }

    /// At most once a second, recreates the file if its path no longer names it (checking
    /// before writing sends the buffered lines to the new file).
    fn recreate_if_moved(&mut self) -> io::Result<()> {
        if self.last_identity_check.elapsed() >= IDENTITY_CHECK_INTERVAL {
            self.last_identity_check = Instant::now();
            if !self.still_at_path() {
                // Windows keeps the name of a file deleted while open until its last handle
                // closes: ours goes first, so that the name can be taken again.
                if self
                    .file
                    .as_deref()
                    .is_some_and(identity::is_delete_pending)
                {
                    self.file = None;
                }
                // Cannot recreate it (its directory is gone too, say): report it, and check
                // again in a second.
                if let Err(e) = self.recreate() {
                    self.buf.clear();
                    self.units.clear();
                    self.noted_to = 0;
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "{} was deleted and cannot be recreated: {e}",
                            self.path.display()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Opens the path again, creating the file, and goes on there with the buffered lines and
    /// the writing thread.
    fn recreate(&mut self) -> io::Result<()> {
        let mut recreated = AppendFile::open_following(&self.path, self.follow_link)?;
        recreated.buf = std::mem::take(&mut self.buf);
        recreated.units = std::mem::take(&mut self.units);
        recreated.noted_to = self.noted_to;
        recreated.writer = self.writer.take();
        *self = recreated;
        Ok(())
    }

    /// [`AppendFile::flush`] without waiting for the write: the buffered lines go to the
    /// writing thread (once the batch before is written), and [`AppendFile::finish_flush`]
    /// waits for them.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn start_flush(&mut self) -> io::Result<()> {
        self.wait_for_writer()?;
        self.recreate_if_moved()?;
        if self.buf.is_empty() {
            return Ok(());
        }
        self.hand_off_buffer()
    }

    /// Waits until what [`AppendFile::start_flush`] handed over is written.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn finish_flush(&mut self) -> io::Result<()> {
        self.wait_for_writer()
    }

    /// Writes what is buffered, then opens the path again (a new file if it was moved away).
    pub(crate) fn reopen(&mut self) -> io::Result<()> {
        self.wait_for_writer()?;
        self.write_buffer()?;
        self.recreate()
    }

    fn write_buffer(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let journal = lock::active_journal();
        let mut result = match &self.file {
            Some(file) => lock::append_locked(
                file,
                &self.buf,
                lock::journaling(&journal, &self.units, &self.path),
            ),
            None => Err(self.closed_error()),
        };
        if result
            .as_ref()
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
        {
            // Removed while open (see `lock::append_locked`): the lines go to the file created
            // again at the path.
            result = self.recreate().and_then(|()| {
                lock::append_locked(
                    self.file()?,
                    &self.buf,
                    lock::journaling(&journal, &self.units, &self.path),
                )
            });
        }
        if result.is_ok() {
            self.written_len += self.buf.len() as u64;
        }
        // Lines that failed are counted as lost by the caller; keeping them would make the
        // buffer grow without bound while the disk is full.
        self.buf.clear();
        self.units.clear();
        self.noted_to = 0;
        result
    }

    /// The open file, unless a deleted one was closed and not yet recreated.
    fn file(&self) -> io::Result<&Arc<File>> {
        self.file.as_ref().ok_or_else(|| self.closed_error())
    }

    fn closed_error(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{} was deleted and cannot be recreated yet",
                self.path.display()
            ),
        )
    }

    fn still_at_path(&self) -> bool {
        let Some(file) = &self.file else {
            return false;
        };
        if identity::is_delete_pending(file) {
            return false;
        }
        match identity::of_path(&self.path) {
            Ok(id) => id == self.identity,
            // Gone, or its directory is: recreate. Any other error (permissions on a parent):
            // keep writing to the open file rather than lose lines.
            Err(e) => e.kind() != io::ErrorKind::NotFound,
        }
    }
}

/// Notes the unit `start..end` of a batch for the journal (see
/// `queue::spool::journal::note_unit`): nothing without a spool.
#[inline(always)]
fn note_unit(units: &mut Vec<u64>, start: usize, end: usize) {
    #[cfg(all(unix, not(loom)))]
    crate::queue::spool::journal::note_unit(units, start, end);
    #[cfg(not(all(unix, not(loom))))]
    let _ = (units, start, end);
}

/// Opens `path` with `O_APPEND | O_CREAT`, mode 0640 (on Windows: append access, shared for
/// reading, writing and deleting, std's default), creating missing parent directories. Several
/// processes may do this at once: neither call fails because of the other.
///
/// On Unix the open itself never waits: a FIFO with no reader would block it (and with it
/// `init`, or the back end reopening the file) until some process opened the FIFO for reading.
/// Such a FIFO is an error that says so; the file is then put back in blocking mode, so that a
/// FIFO's slow reader slows the writing thread as a slow disk would, and loses nothing. Unless
/// `follow_link`, a symbolic link at `path` is an error too (Unix).
pub(crate) fn open_append(path: &Path, follow_link: bool) -> io::Result<File> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow_link { 0 } else { libc::O_NOFOLLOW };
        options
            .mode(0o640)
            .custom_flags(libc::O_NONBLOCK | no_follow);
    }
    #[cfg(unix)]
    let opened = match options.open(path) {
        Ok(file) => clear_nonblocking(file),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Err(io::Error::new(
            e.kind(),
            format!("{e} (a FIFO that no process has open for reading)"),
        )),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) && !follow_link => Err(io::Error::new(
            e.kind(),
            "a symbolic link where the pattern names a log file, which tachylog does not follow",
        )),
        Err(e) => Err(e),
    };
    #[cfg(not(unix))]
    let opened = {
        let _ = follow_link;
        options.open(path)
    };
    // Windows says only "access denied" for a directory in the way, where Unix says what it is.
    #[cfg(windows)]
    let opened = opened.map_err(|e| match path.is_dir() {
        true => io::Error::new(e.kind(), format!("{e} (it is a directory)")),
        false => e,
    });
    opened
}

/// `file` in blocking mode, as [`open_append`] opened it without.
#[cfg(unix)]
fn clear_nonblocking(file: File) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is `file`'s, open for the whole call; F_GETFL and F_SETFL read and set the
    // status flags of this open file description only, which no one else shares yet.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    match cleared {
        true => Ok(file),
        false => Err(io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of `len` bytes, newline included.
    fn line(len: usize) -> Vec<u8> {
        let mut line = vec![b'x'; len - 1];
        line.push(b'\n');
        line
    }

    #[test]
    fn full_batches_reach_the_file_in_order_through_the_writing_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batches.log");
        let mut file = AppendFile::open(&path).unwrap();
        let lines = 3 * BATCH / 100 + 7;
        for i in 0..lines {
            let mut text = format!("{i:08} ").into_bytes();
            text.extend_from_slice(&line(91));
            file.write_line(&text).unwrap();
        }
        assert!(
            file.writer.is_some(),
            "more than one batch started the writing thread"
        );
        #[cfg(feature = "rolling")]
        assert_eq!(
            file.len(),
            lines as u64 * 100,
            "the length counts the batch in flight"
        );
        file.flush().unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        let numbers: Vec<usize> = written.lines().map(|l| l[..8].parse().unwrap()).collect();
        assert_eq!(numbers, (0..lines).collect::<Vec<_>>());
        // Lines formatted straight into the buffer go the same way.
        for _ in 0..(BATCH / 100 + 1) {
            file.line_buffer().extend_from_slice(&line(100));
            file.line_appended().unwrap();
        }
        file.flush().unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            (lines + BATCH / 100 + 1) as u64 * 100
        );
    }

    /// `/dev/full` takes the open and fails every write with ENOSPC: the error of a batch written
    /// on the writing thread comes back at the next hand-over or flush, and the lines it held
    /// are dropped, not kept growing.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_is_reported_from_the_writing_thread() {
        let mut file = AppendFile::open(Path::new("/dev/full")).unwrap();
        let mut first_error = None;
        for _ in 0..(3 * BATCH / 100) {
            if let Err(e) = file.write_line(&line(100)) {
                first_error = Some(e);
                break;
            }
        }
        let error = first_error.expect("a failed batch is reported at the next hand-over");
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC), "{error}");
        assert!(file.buf.len() < BATCH, "failed lines are not kept");
        file.write_line(&line(100)).unwrap();
        let error = file.flush().expect_err("the flush writes and fails too");
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC), "{error}");
        assert!(file.buf.is_empty());
    }

    #[test]
    fn a_huge_line_does_not_keep_its_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.log");
        let mut file = AppendFile::open(&path).unwrap();
        file.line_buffer().extend_from_slice(&line(10 * BATCH));
        file.line_appended().unwrap();
        // Enough lines for one more hand-over, which gets the huge buffer back as the spare.
        let lines = BATCH / 100 + 1;
        for _ in 0..lines {
            file.write_line(&line(100)).unwrap();
        }
        assert!(
            file.buf.capacity() <= 4 * BATCH,
            "the huge batch's buffer came back for reuse"
        );
        file.flush().unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            (10 * BATCH + lines * 100) as u64
        );
    }
}
