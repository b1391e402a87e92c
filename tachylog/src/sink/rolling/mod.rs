//! Log files that manage themselves: a file-name pattern with time fields (cronolog style), an
//! optional size limit, retention, compression and a `latest` symlink.
//!
//! Runs on the back end's thread like every sink; compression and pruning run on a
//! housekeeping thread of their own (see [`housekeeping`]) so that they never delay the
//! back end's writes.
//!
//! How a record finds its file: its own timestamp, formatted through the pattern in the
//! configured time zone, names it. The period the current file covers is cached as a range of
//! instants, so the usual record costs two comparisons. The back end's timer calls
//! [`Sink::tick`] at the period's end, which opens the next period's file even when no record
//! arrives; a late record stamped before the boundary still goes to the file of its own period.

mod housekeeping;
mod latest;
mod name;

pub use name::{FileNamePatternError, Period};
// The file-name pattern parser, for the fuzz targets (`crate::__fuzz`) only.
#[cfg(fuzzing)]
pub(crate) use name::NamePattern as FuzzedNamePattern;

use super::append::AppendFile;
use super::{Line, RecordDropped, Sink};
use crate::zone::TimeZone;
use crate::Error;
use housekeeping::{Housekeeper, Retention};
use name::{NamePattern, PeriodFile};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long after leaving a period's file it is compressed: records stamped before the
/// boundary that were still in the queues (the back end holds a stalled thread back for at
/// most 50 ms) land in it first.
const COMPRESS_GRACE: Duration = Duration::from_secs(1);

/// How many periods' files a recovery looks through for records a dead process had written
/// (see [`Sink::recovery_files`]): its records after its last cut span a few batches' time.
#[cfg(all(unix, not(loom)))]
const MAX_RECOVERY_PERIODS: usize = 64;

/// How often, at most, opening a file that failed is tried again.
const REOPEN_RETRY: Duration = Duration::from_secs(1);

/// How rotated files are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// Rotated files stay as they are (the default).
    #[default]
    None,
    /// gzip (`.gz`), level 6.
    #[cfg(feature = "gzip")]
    Gzip,
    /// Zstandard (`.zst`), level 3: faster and smaller than gzip.
    #[cfg(feature = "zstd")]
    Zstd,
}

impl Compression {
    /// The suffix added to a compressed file's name.
    pub fn suffix(self) -> &'static str {
        match self {
            Compression::None => "",
            #[cfg(feature = "gzip")]
            Compression::Gzip => ".gz",
            #[cfg(feature = "zstd")]
            Compression::Zstd => ".zst",
        }
    }
}

/// The time zone in which file names are formatted.
#[derive(Clone, Debug)]
enum Zone {
    Local,
    Utc,
    Given(TimeZone),
}

/// Configures a [`RollingFile`]; get one with [`RollingFile::builder`].
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until .open() is called"]
pub struct RollingFileBuilder {
    pattern: String,
    zone: Zone,
    max_size: Option<u64>,
    retention: Retention,
    compression: Compression,
    latest_symlink: Option<PathBuf>,
}

/// A log file named by a time pattern, with an optional size limit, retention, compression
/// and `latest` symlink.
///
/// # Naming
/// The pattern is a path (on Windows `\` separates its parts too, and it may start with a
/// drive or a share) whose strftime fields (`%Y %y %m %d %j %H %M %S %F`, `%%` for a percent
/// sign) may appear in directories and in the file name: `logs/%Y/%m/%d/app.log`,
/// `app.%Y%m%d.log`, `app.%Y%m%d-%H.log`. The smallest field sets the period. Nothing is ever
/// renamed: a new period opens a new file, at the boundary even when no record arrives, and
/// each record goes to the file of its own timestamp's period. Names are formatted in local
/// time by default (from the system time-zone database, DST included), or UTC, or any zone.
/// A relative pattern (and a relative [`latest_symlink`](RollingFileBuilder::latest_symlink))
/// is taken from the working directory at [`open`](RollingFileBuilder::open): a later change of
/// directory does not move the files (unless that directory's path is not UTF-8).
///
/// # Size limit
/// With [`max_size`](RollingFileBuilder::max_size), when the next line would take the file past
/// the limit, the next file of the period is opened; a line is never split, and a line larger
/// than the limit gets a file of its own. Index *n* goes before the file name's last extension:
/// `app.20261121.log`, then `app.20261121.1.log`, `app.20261121.2.log`, … (a name with no
/// extension gets `.1`, `.2`, … appended). A restarted process continues in the highest index
/// of the period (appending while it has room), so no file is ever overwritten.
///
/// # Retention and compression
/// [`max_files`](RollingFileBuilder::max_files), [`max_age`](RollingFileBuilder::max_age) and
/// [`max_total_size`](RollingFileBuilder::max_total_size) prune the oldest files (by
/// modification time, across restarts) that the pattern could have produced, compressed or
/// not; nothing else is touched, and the current file is always kept.
/// [`compress`](RollingFileBuilder::compress) compresses each file a second after it is left,
/// on a separate thread, writing `name.gz.tmp` and linking it to `name.gz` only when complete;
/// the original is removed after that, under the file's exclusive lock and only if no process
/// appended to it meanwhile (else the copy is dropped and the file stays whole). A process that
/// still writes late records of that period finds the file removed at its next write and
/// creates it again: no line goes into a removed file.
///
/// # Other processes and tools
/// The file is opened with `O_APPEND`: processes sharing a pattern append whole-line batches
/// without tearing lines. With a size limit, each process checks the file's real size before
/// rotating, so the limit holds approximately; do not combine it with compression across
/// processes, since one process leaving a full file does not stop another from appending to
/// it. A deleted or moved current file is recreated within a second; [`reopen`](crate::reopen)
/// does it at once.
///
/// The names the pattern makes are the logger's own: on Unix, a symbolic link found at one (put
/// there by another process that may write the directory) is never followed, neither to write
/// nor to compress, and its lines fail with an error that says so, as a directory in the way
/// would. Directories along the path may be links.
///
/// ```
/// # #[cfg(feature = "zstd")] {
/// use std::time::Duration;
/// use tachylog::{Compression, RollingFile};
///
/// let dir = std::env::temp_dir().join("tachylog-doc-rolling");
/// let sink = RollingFile::builder(dir.join("app.%Y%m%d.log").to_str().unwrap())
///     .max_size(64 << 20)
///     .max_files(30)
///     .max_age(Duration::from_secs(14 * 24 * 3600))
///     .compress(Compression::Zstd)
///     .latest_symlink(dir.join("app.log"))
///     .open()?;
/// let guard = tachylog::builder().sink(sink).init()?;
/// tachylog::info!("into today's file");
/// drop(guard);
/// assert!(std::fs::read_to_string(dir.join("app.log"))?.contains("into today's file"));
/// # std::fs::remove_dir_all(dir)?;
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RollingFile {
    pattern: Arc<NamePattern>,
    zone: TimeZone,
    max_size: Option<u64>,
    latest_symlink: Option<PathBuf>,
    /// The period of the file in use (or of the file that failed to open).
    period: PeriodFile,
    /// The size-rotation index of the file in use.
    index: u32,
    /// `None` while the current file cannot be opened.
    file: Option<AppendFile>,
    /// Why the last open failed, returned for each line until a retry succeeds.
    open_error: Option<(io::ErrorKind, String)>,
    last_open_attempt: Instant,
    /// Compression and retention; `None` when neither is configured.
    housekeeper: Option<Housekeeper>,
}

impl RollingFile {
    /// Starts configuring a rolling file named by `pattern`.
    ///
    /// ```
    /// let builder = tachylog::RollingFile::builder("logs/%Y/%m/%d/app.log").utc(true);
    /// # let _ = builder;
    /// ```
    pub fn builder(pattern: impl Into<String>) -> RollingFileBuilder {
        RollingFileBuilder {
            pattern: pattern.into(),
            zone: Zone::Local,
            max_size: None,
            retention: Retention::default(),
            compression: Compression::None,
            latest_symlink: None,
        }
    }

    /// The path of the file in use.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("tachylog-doc-rolling-path");
    /// let sink = tachylog::RollingFile::builder(dir.join("static.log").to_str().unwrap())
    ///     .open()
    ///     .unwrap();
    /// assert_eq!(sink.current_path(), dir.join("static.log"));
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn current_path(&self) -> PathBuf {
        self.pattern.indexed(&self.period.base, self.index)
    }

    /// The rotation period the pattern implies.
    pub fn period(&self) -> Period {
        self.pattern.period()
    }

    /// Moves to the file of the period holding `unix_nanos` (forward at a boundary, or back
    /// for a late record).
    fn enter_period(&mut self, unix_nanos: i64) -> io::Result<()> {
        let period = self.pattern.period_file(unix_nanos, &self.zone);
        let index = self.choose_index(&period.base, None);
        self.switch_file(period, index, unix_nanos)
    }

    /// Opens the next index of the current period because `incoming` more bytes would take
    /// the file past the size limit.
    fn next_index(&mut self, incoming: u64, unix_nanos: i64) -> io::Result<()> {
        let base = self.period.base.clone();
        let index = self.choose_index(&base, Some((self.index, incoming)));
        self.switch_file(self.period.clone(), index, unix_nanos)
    }

    /// The index to write in period `base`: the highest one on disk while it is uncompressed
    /// and has room, otherwise the one after. `leaving` is the index being left for lack of
    /// room and the size of the line that did not fit.
    fn choose_index(&self, base: &Path, leaving: Option<(u32, u64)>) -> u32 {
        let highest = housekeeping::highest_index(&self.pattern, base);
        let Some(highest) = highest else {
            return leaving.map_or(0, |(index, _)| index.saturating_add(1));
        };
        let room = |size: u64, incoming: u64| {
            self.max_size
                .is_none_or(|max| size + incoming <= max || size == 0)
        };
        let reuse = match (highest.uncompressed_size, leaving) {
            (Some(size), None) => room(size, 1),
            (Some(size), Some((left, incoming))) => highest.index > left && room(size, incoming),
            (None, _) => false,
        };
        // Saturating: a file of the last index (4294967295, which anyone may create) is written
        // on past the size limit rather than panicking the back end.
        let floor = leaving.map_or(0, |(index, _)| index.saturating_add(1));
        if reuse {
            highest.index.max(floor)
        } else {
            highest.index.saturating_add(1).max(floor)
        }
    }

    fn switch_file(&mut self, period: PeriodFile, index: u32, unix_nanos: i64) -> io::Result<()> {
        let left = self.file.take().map(|mut file| {
            let flushed = file.flush();
            (file.path().to_path_buf(), flushed)
        });
        let forward = unix_nanos >= self.period.start;
        self.period = period;
        self.index = index;
        let opened = self.open_current();
        if let Some((left_path, flushed)) = left {
            if let Some(housekeeper) = &self.housekeeper {
                // A file left going back in time (for a late record) will be entered again,
                // and left again, going forward: compress it then.
                if forward && left_path != self.current_path() {
                    housekeeper.file_left(left_path, Instant::now() + COMPRESS_GRACE);
                }
                housekeeper.prune(self.current_path());
            }
            flushed?;
        }
        opened.map_err(only_this_record)
    }

    fn open_current(&mut self) -> io::Result<()> {
        let path = self.current_path();
        self.last_open_attempt = Instant::now();
        match AppendFile::open_generated(&path) {
            Ok(mut file) => {
                // The next file writes through the previous one's thread: no thread per file.
                if let Some(previous) = &mut self.file {
                    file.take_writer_from(previous);
                }
                self.file = Some(file);
                self.open_error = None;
                if let Some(link) = &self.latest_symlink {
                    if let Err(e) = latest::point_link(link, &path) {
                        eprintln!(
                            "tachylog: cannot point {} at {}: {e}",
                            link.display(),
                            path.display()
                        );
                    }
                }
                Ok(())
            }
            Err(e) => {
                // The sink's description (its current path) names the file in reports.
                self.open_error = Some((e.kind(), e.to_string()));
                Err(e)
            }
        }
    }

    /// The file to write to, retrying a failed open at most once a second.
    fn file(&mut self) -> io::Result<&mut AppendFile> {
        if self.file.is_none() {
            if self.last_open_attempt.elapsed() >= REOPEN_RETRY {
                self.open_current().map_err(only_this_record)?;
            } else if let Some((kind, message)) = &self.open_error {
                return Err(only_this_record(io::Error::new(*kind, message.clone())));
            }
        }
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the log file is not open"))
    }
}

/// A file that could not be opened loses the record at hand and nothing else: no file is open,
/// so nothing is buffered, and the file left before was flushed (a failure there is reported
/// as itself). Marked so, the error is not taken to lose every line since the last flush.
fn only_this_record(error: io::Error) -> io::Error {
    io::Error::new(error.kind(), RecordDropped(error.to_string()))
}

impl RollingFileBuilder {
    /// Formats file names in UTC (`true`) or in local time (`false`, the default).
    pub fn utc(mut self, utc: bool) -> Self {
        self.zone = if utc { Zone::Utc } else { Zone::Local };
        self
    }

    /// Formats file names in `zone`, such as `TimeZone::get("Europe/Paris")?` (see
    /// [`TimeZone`]).
    pub fn time_zone(mut self, zone: TimeZone) -> Self {
        self.zone = Zone::Given(zone);
        self
    }

    /// Starts the next file of the period before a line would take the current one past
    /// `bytes` (see [`RollingFile`] for the naming).
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_size = Some(bytes.max(1));
        self
    }

    /// Keeps at most `count` files of this pattern, the current one included (at least 1).
    pub fn max_files(mut self, count: usize) -> Self {
        self.retention.max_files = Some(count.max(1));
        self
    }

    /// Deletes files of this pattern last modified longer than `age` ago.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.retention.max_age = Some(age);
        self
    }

    /// Deletes the oldest files of this pattern while all of them together (the current one
    /// included) take more than `bytes`.
    pub fn max_total_size(mut self, bytes: u64) -> Self {
        self.retention.max_total_bytes = Some(bytes);
        self
    }

    /// Compresses files once they are left.
    pub fn compress(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Keeps a symbolic link at `link` pointing at the file in use, replaced atomically when
    /// the file changes (relative when the file is in or below the link's directory). On Unix
    /// only a symbolic link at `link` is ever replaced: a file there (the log a `FileSink`
    /// wrote before the program rolled its files, say) is left alone, and the link not made is
    /// reported on stderr.
    ///
    /// On Windows a symbolic link needs the `SeCreateSymbolicLinkPrivilege` (administrators)
    /// or Developer Mode. Without them `link` is a hard link to the file in use instead: the
    /// same file under a second name, on the same volume, which reads the same while it is
    /// current. A link that cannot be made or replaced (a reader holding `link` open without
    /// sharing it for deletion, say) is reported on stderr; logging goes on without it.
    pub fn latest_symlink(mut self, link: impl Into<PathBuf>) -> Self {
        self.latest_symlink = Some(link.into());
        self
    }

    /// Opens the file for the current time.
    pub fn open(self) -> Result<RollingFile, Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
            });
        self.open_at(now)
    }

    /// Opens the file for the instant `unix_nanos` (nanoseconds since the epoch) instead of
    /// now: for tests and replays, together with records carrying their own times.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("tachylog-doc-rolling-at");
    /// let sink = tachylog::RollingFile::builder(dir.join("app.%Y%m%d.log").to_str().unwrap())
    ///     .utc(true)
    ///     .open_at(1_795_219_200_000_000_000) // 2026-11-21T00:00:00Z
    ///     .unwrap();
    /// assert_eq!(sink.current_path(), dir.join("app.20261121.log"));
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn open_at(self, unix_nanos: i64) -> Result<RollingFile, Error> {
        let pattern = Arc::new(NamePattern::parse_anchored(&self.pattern)?);
        // The link is replaced by its path on every change of file, like the names above.
        let latest_symlink = self
            .latest_symlink
            .map(|link| std::path::absolute(&link).unwrap_or(link));
        let zone = match self.zone {
            Zone::Utc => TimeZone::utc(),
            Zone::Given(zone) => zone,
            Zone::Local => TimeZone::system()?,
        };
        let housekeeper = (self.retention.is_set() || self.compression != Compression::None)
            .then(|| Housekeeper::start(pattern.clone(), self.retention, self.compression))
            .transpose()
            .map_err(Error::SpawnWorker)?;
        let period = pattern.period_file(unix_nanos, &zone);
        let mut sink = RollingFile {
            pattern,
            zone,
            max_size: self.max_size,
            latest_symlink,
            period: period.clone(),
            index: 0,
            file: None,
            open_error: None,
            last_open_attempt: Instant::now(),
            housekeeper,
        };
        sink.index = sink.choose_index(&period.base, None);
        sink.open_current().map_err(|source| Error::OpenFile {
            path: sink.current_path(),
            source,
        })?;
        if let Some(housekeeper) = &sink.housekeeper {
            housekeeper.startup(sink.current_path(), period.start);
        }
        Ok(sink)
    }
}

impl Sink for RollingFile {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        if !self.period.contains(line.unix_nanos) {
            self.enter_period(line.unix_nanos)?;
        }
        let incoming = line.text.len() as u64;
        if let Some(max) = self.max_size {
            let file = self.file()?;
            if file.len() > 0 && file.len() + incoming > max {
                // Other processes may append to the same file: decide on its real size.
                file.refresh_len()?;
                if file.len() + incoming > max {
                    self.next_index(incoming, line.unix_nanos)?;
                }
            }
        }
        self.file()?.write_line(line.text)
    }

    fn flush(&mut self) -> io::Result<()> {
        match (&mut self.file, &self.open_error) {
            (Some(file), _) => file.flush(),
            // Still failing: saying Ok here would announce a recovery that did not happen.
            (None, Some((kind, message))) => Err(io::Error::new(*kind, message.clone())),
            (None, None) => Ok(()),
        }
    }

    fn describe(&self) -> String {
        self.current_path().display().to_string()
    }

    fn reads_message(&self, _: crate::codec::sealed::Internal) -> bool {
        false
    }

    fn reopen(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.reopen(),
            None => self.open_current(),
        }
    }

    fn next_deadline(&self) -> Option<i64> {
        (self.period.end != i64::MAX).then_some(self.period.end)
    }

    #[cfg(all(unix, not(loom)))]
    fn flush_start(&mut self, _: crate::codec::sealed::Internal) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.start_flush(),
            None => self.flush(),
        }
    }

    #[cfg(all(unix, not(loom)))]
    fn flush_finish(&mut self, _: crate::codec::sealed::Internal) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.finish_flush(),
            None => Ok(()),
        }
    }

    /// Every file of the periods from `span.0` to `span.1` (at most [`MAX_RECOVERY_PERIODS`]
    /// of them, from the first): the dead process may have written records of those periods
    /// into any of them.
    #[cfg(all(unix, not(loom)))]
    fn recovery_files(
        &mut self,
        span: (i64, i64),
        _: crate::codec::sealed::Internal,
    ) -> Vec<super::TailFile> {
        let mut files = Vec::new();
        let mut at = span.0;
        for _ in 0..MAX_RECOVERY_PERIODS {
            let period = self.pattern.period_file(at, &self.zone);
            let on_disk = housekeeping::indexes_on_disk(&self.pattern, &period.base);
            for index in on_disk.iter().map(|&(index, _)| index) {
                let path = self.pattern.indexed(&period.base, index);
                // Regular files only, as the sink writes them: a link or a FIFO at the name
                // is not this logger's (and opening a FIFO would wait).
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                files.push(super::TailFile { path });
            }
            if period.end > span.1 || period.end <= at {
                break;
            }
            at = period.end;
        }
        files
    }

    fn tick(&mut self, now_unix_nanos: i64) -> io::Result<()> {
        if now_unix_nanos >= self.period.end {
            self.enter_period(now_unix_nanos)?;
        }
        Ok(())
    }
}

impl Drop for RollingFile {
    fn drop(&mut self) {
        if let Some(file) = &mut self.file {
            let _ = file.flush();
        }
        // Joins the housekeeping thread after it has finished pending compressions.
        self.housekeeper.take();
    }
}
