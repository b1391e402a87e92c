//! The outbox: a network sink's batches on disk until its collector acknowledges them, so that
//! neither an outage of any length nor a SIGKILL loses them. A public capability, so that any
//! sink can be durable as [`OtlpSink`](crate::OtlpSink)'s `durable` mode is; the sink brings
//! what only it knows, in an [`OutboxFormat`]: how to count the records in a payload and check
//! the metadata its requests need (for OTLP, the encoded `Resource`), so that bytes read back
//! are checked before they go on the wire.
//!
//! Under the directory the application names (the *root*, private to its user like a spool:
//! `queue::spool::private_dir`), each process that sends keeps its own directory,
//! `<pid>.<start time in ns>`, made as `<name>.new` and given its name only once its `lock` is
//! held:
//! - `lock`: an exclusive `flock` while the process sends, so that nobody adopts the directory
//!   of a live sender. `flock` belongs to the open file, so a second sink in the same process
//!   cannot take it either;
//! - `resource`: the sink's metadata for the records (for OTLP, the `Resource` they were logged
//!   under; a `u32` length, a CRC-32, the bytes), so that a later process sends them as the
//!   process they came from;
//! - `seg-<16 hex digits>`: segments, numbered upwards, each a 16-byte header (`TLOUTBX1`, its
//!   number) and then frames: a `u32` payload length, a `u32` record count, a CRC-32 of those
//!   eight bytes and the payload, the magic `TLFR`, then the payload (for OTLP, encoded `LogRecord`s).
//!   A frame is written by one `write(2)`, so a SIGKILL leaves it whole or absent;
//! - `acked`: how far the collector acknowledged, as (segment, offset), in two 32-byte slots
//!   written in turn, each with a serial and a CRC-32, so a torn write leaves the other.
//!
//! A batch is retired by acknowledgement only: `acked` moves first, then the segments wholly
//! before it are removed, so a crash between the two leaves segments that the next reader
//! skips, never a position in a file that will not come. A reader starts at the acknowledged
//! position, or at the first segment that exists past it.
//!
//! The directory of a process that is gone (its lock free) is *adopted* by the next sink on
//! the same root: its records go first, under their own resource, and the directory is removed
//! once they are acknowledged (renamed to `<name>.removing` first, so a crash during the
//! removal leaves a name that says so).
//!
//! Everything read back is checked as hostile input: files are reached through the
//! directory's descriptor and must be the user's regular files of bounded size; a frame with a
//! wrong magic, length, CRC-32, or a payload that the format does not count as exactly its
//! `count` records, ends what is read of its segment, with a warning saying how many bytes were
//! passed over.

#[cfg(all(unix, not(loom)))]
use std::time::Duration;

#[cfg(all(unix, not(loom)))]
pub(crate) mod store;

/// What an [`Outbox`] does when a batch would take it past its size limit.
///
/// ```
/// let builder = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
///     .durable("/var/spool/shop/otlp", 256 << 20)
///     .when_full(tachylog::OutboxFull::DropOldest);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OutboxFull {
    /// Keep what is on disk and refuse the new batch (the default): the start of an outage,
    /// which usually explains it, survives the longest one.
    #[default]
    DropNewest,
    /// Remove the oldest segments not being sent, with their records, to make room.
    DropOldest,
}

/// What a sink tells its [`Outbox`] about its payloads, to check what is read back before it is
/// sent: bytes on disk are hostile input.
///
/// ```
/// /// Payloads of newline-terminated lines, one record each.
/// let format = tachylog::OutboxFormat {
///     count_records: |payload| {
///         payload.ends_with(b"\n").then(|| payload.iter().filter(|&&b| b == b'\n').count() as u64)
///     },
///     check_meta: |meta| meta.is_empty(),
/// };
/// assert_eq!((format.count_records)(b"a\nb\n"), Some(2));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OutboxFormat {
    /// How many records `payload` holds, if it is a valid payload of this sink; a frame read
    /// back whose payload does not count as its record count is not sent.
    pub count_records: fn(&[u8]) -> Option<u64>,
    /// Whether the metadata read back from another process's directory may be used.
    pub check_meta: fn(&[u8]) -> bool,
}

/// What an [`Outbox`] lost or found wrong since it was last asked
/// ([`Outbox::take_report`]): records lost, of which those removed to make room
/// ([`OutboxFull::DropOldest`]), and warnings naming the files involved.
///
/// ```
/// let report = tachylog::OutboxReport::default();
/// assert_eq!((report.lost, report.removed_for_room), (0, 0));
/// ```
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct OutboxReport {
    /// Records lost: removed to make room, or unreadable on disk.
    pub lost: u64,
    /// Of those, records of segments removed to make room.
    pub removed_for_room: u64,
    /// What was passed over or could not be done, one sentence each.
    pub warnings: Vec<String>,
}

#[cfg(all(unix, not(loom)))]
impl OutboxReport {
    fn merge(&mut self, other: OutboxReport) {
        self.lost += other.lost;
        self.removed_for_room += other.removed_for_room;
        self.warnings.extend(other.warnings);
    }
}

/// A durable queue of a network sink's batches, on disk under a directory private to its user,
/// retired only by acknowledgement; what a process that ended left is adopted by the next
/// outbox on the same directory and comes out first. Unix only. See the module documentation
/// in `src/sink/outbox/mod.rs` for the format.
///
/// One thread may write (`push`) while another sends (`take`, then `retire` or `put_back`):
/// share it behind a mutex; only one batch is out at a time.
///
/// ```
/// # #[cfg(unix)] {
/// use std::time::Duration;
/// use tachylog::{Outbox, OutboxFormat, OutboxFull};
///
/// let format = OutboxFormat {
///     count_records: |payload| Some(payload.split(|&b| b == b'\n').count() as u64 - 1),
///     check_meta: |_| true,
/// };
/// let dir = tempfile::tempdir().unwrap();
/// let mut outbox = Outbox::open(dir.path(), b"", 1 << 20, OutboxFull::DropNewest, format).unwrap();
/// assert!(outbox.push(b"one\ntwo\n", 2).unwrap());
/// assert_eq!(outbox.due_in(100, Duration::ZERO, false), Some(Duration::ZERO));
/// let batch = outbox.take(100, 1 << 20).unwrap();
/// assert_eq!((batch.payload(), batch.count()), (&b"one\ntwo\n"[..], 2));
/// // ... sent, and the collector said yes:
/// outbox.retire(&batch);
/// assert_eq!(outbox.records(), 0);
/// assert_eq!(outbox.close().0, 0);
/// # }
/// ```
#[cfg(all(unix, not(loom)))]
pub struct Outbox {
    store: store::Outbox,
    report: OutboxReport,
}

/// A batch [`Outbox::take`] read: the payloads of its frames, back to back.
///
/// ```
/// # #[cfg(unix)] {
/// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
/// # let dir = tempfile::tempdir().unwrap();
/// # let mut outbox = tachylog::Outbox::open(dir.path(), b"meta", 1 << 20, Default::default(), format).unwrap();
/// outbox.push(b"abc", 3).unwrap();
/// let batch = outbox.take(10, 1 << 20).unwrap();
/// assert_eq!((batch.payload(), batch.count(), batch.meta()), (&b"abc"[..], 3, &b"meta"[..]));
/// # }
/// ```
#[cfg(all(unix, not(loom)))]
pub struct OutboxBatch(store::DiskBatch);

#[cfg(all(unix, not(loom)))]
impl OutboxBatch {
    /// The payloads, back to back.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"ab", 2).unwrap();
    /// outbox.push(b"c", 1).unwrap();
    /// assert_eq!(outbox.take(10, 1 << 20).unwrap().payload(), b"abc");
    /// # }
    /// ```
    pub fn payload(&self) -> &[u8] {
        &self.0.records
    }

    /// The records in it.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"ab", 2).unwrap();
    /// assert_eq!(outbox.take(10, 1 << 20).unwrap().count(), 2);
    /// # }
    /// ```
    pub fn count(&self) -> u64 {
        self.0.count
    }

    /// The metadata of the process that pushed it (its own, or that of the process whose
    /// directory was adopted).
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"pid 7", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"ab", 2).unwrap();
    /// assert_eq!(outbox.take(10, 1 << 20).unwrap().meta(), b"pid 7");
    /// # }
    /// ```
    pub fn meta(&self) -> &[u8] {
        &self.0.resource
    }
}

#[cfg(all(unix, not(loom)))]
impl Outbox {
    /// Opens the outbox under `dir` (made if missing, mode `0700`; refused unless private to
    /// this user), adopts the directories of processes that are gone, and makes this process's
    /// own, whose batches carry `meta`. At most `max_bytes` of batches are kept, `when_full`
    /// deciding past that. What was passed over is in [`Outbox::take_report`].
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// let dir = tempfile::tempdir().unwrap();
    /// let outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert_eq!(outbox.adopted_records(), 0);
    /// # }
    /// ```
    pub fn open(
        dir: impl AsRef<std::path::Path>,
        meta: &[u8],
        max_bytes: u64,
        when_full: OutboxFull,
        format: OutboxFormat,
    ) -> std::io::Result<Outbox> {
        let mut report = OutboxReport::default();
        let store = store::Outbox::open(
            dir.as_ref(),
            meta,
            max_bytes,
            when_full,
            format,
            &mut report,
        )?;
        Ok(Outbox { store, report })
    }

    /// Writes `payload`, `count` records, as one frame (one `write(2)`), making room first as
    /// the [`OutboxFull`] policy says. `Ok(false)`: no room, nothing written.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut outbox = tachylog::Outbox::open(dir.path(), b"", 64, Default::default(), format).unwrap();
    /// assert!(!outbox.push(&[0; 100], 100).unwrap());
    /// # }
    /// ```
    pub fn push(&mut self, payload: &[u8], count: u64) -> std::io::Result<bool> {
        let mut report = OutboxReport::default();
        let fits = self.store.make_room(payload.len(), &mut report);
        self.report.merge(report);
        if !fits {
            return Ok(false);
        }
        self.store.append(payload, count).map(|()| true)
    }

    /// Whether a batch should be taken now: `None` when there is nothing to send, else how long
    /// until one is due (zero: now). Batches of adopted directories are due at once; this
    /// process's when `max_records` are there, when the first has waited `timeout`, or at once
    /// when `stopping`.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # use std::time::Duration;
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert_eq!(outbox.due_in(10, Duration::from_secs(1), false), None);
    /// outbox.push(b"a", 1).unwrap();
    /// assert!(outbox.due_in(10, Duration::from_secs(1), false).unwrap() > Duration::ZERO);
    /// assert_eq!(outbox.due_in(10, Duration::from_secs(1), true), Some(Duration::ZERO));
    /// # }
    /// ```
    pub fn due_in(&self, max_records: u64, timeout: Duration, stopping: bool) -> Option<Duration> {
        self.store.due_in(max_records, timeout, stopping)
    }

    /// Reads the next batch, up to `max_records` records or `max_bytes` bytes (at least one
    /// frame), oldest directory first; `None` if there is none, or while the batch taken last
    /// is neither [`retire`](Outbox::retire)d nor [put back](Outbox::put_back): one batch is
    /// out at a time, and only that one can be retired or put back (any other `OutboxBatch`,
    /// of this outbox or another, is ignored there). It stays on disk until retired.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert!(outbox.take(10, 1 << 20).is_none());
    /// # }
    /// ```
    pub fn take(&mut self, max_records: u64, max_bytes: usize) -> Option<OutboxBatch> {
        let mut report = OutboxReport::default();
        let batch = self.store.take(max_records, max_bytes, &mut report);
        self.report.merge(report);
        batch.map(OutboxBatch)
    }

    /// The collector answered for `batch` (took it, or refused it for good): it leaves the
    /// outbox. The acknowledged position is written first, then what lies wholly before it is
    /// removed, so a crash in between leaves nothing that would be sent twice.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"a", 1).unwrap();
    /// let batch = outbox.take(10, 1 << 20).unwrap();
    /// outbox.retire(&batch);
    /// assert_eq!(outbox.records(), 0);
    /// # }
    /// ```
    pub fn retire(&mut self, batch: &OutboxBatch) {
        let mut report = OutboxReport::default();
        self.store.retire(&batch.0, &mut report);
        self.report.merge(report);
    }

    /// `batch` was not sent (the sink is stopping): it stays, and is taken again next time.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"a", 1).unwrap();
    /// let batch = outbox.take(10, 1 << 20).unwrap();
    /// outbox.put_back(&batch);
    /// assert_eq!(outbox.take(10, 1 << 20).unwrap().payload(), b"a");
    /// # }
    /// ```
    pub fn put_back(&mut self, batch: &OutboxBatch) {
        self.store.put_back(&batch.0);
    }

    /// Records not yet acknowledged, adopted ones included.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"abc", 3).unwrap();
    /// assert_eq!(outbox.records(), 3);
    /// # }
    /// ```
    pub fn records(&self) -> u64 {
        self.store.records()
    }

    /// Records adopted from processes that are gone, not yet acknowledged.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut first = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// first.push(b"abc", 3).unwrap();
    /// drop(first); // as if its process died: the directory stays, unlocked
    /// let second = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert_eq!(second.adopted_records(), 3);
    /// # }
    /// ```
    pub fn adopted_records(&self) -> u64 {
        self.store.adopted_records()
    }

    /// This process's directory in the outbox.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// let dir = tempfile::tempdir().unwrap();
    /// let outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert!(outbox.path().starts_with(dir.path()));
    /// # }
    /// ```
    pub fn path(&self) -> std::path::PathBuf {
        self.store.own_path()
    }

    /// What was lost or passed over since the last call.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// assert!(outbox.take_report().warnings.is_empty());
    /// # }
    /// ```
    pub fn take_report(&mut self) -> OutboxReport {
        std::mem::take(&mut self.report)
    }

    /// Ends this process's use of the outbox: its directory is removed if everything in it
    /// was acknowledged, else it stays (unlocked) for the next outbox on the same directory, as
    /// do adopted ones not yet sent. Returns the records left, and what was lost or passed over
    /// since [`take_report`](Outbox::take_report) was last called.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// # let format = tachylog::OutboxFormat { count_records: |p| Some(p.len() as u64), check_meta: |_| true };
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut outbox = tachylog::Outbox::open(dir.path(), b"", 1 << 20, Default::default(), format).unwrap();
    /// outbox.push(b"abc", 3).unwrap();
    /// assert_eq!(outbox.close().0, 3);
    /// # }
    /// ```
    pub fn close(self) -> (u64, OutboxReport) {
        let mut report = self.report;
        let left = self.store.close(&mut report);
        (left, report)
    }
}
