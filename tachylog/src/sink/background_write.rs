//! The writing thread behind an [`AppendFile`](super::append::AppendFile): a full batch is
//! written here while the back end formats the next one.
//!
//! Why a thread: copying a batch into the page cache costs the kernel about 60 ns per
//! 160-byte line on ext4 (block reservation, folio allocation, the copy itself), as much as
//! formatting the line: with the write on the back end's thread, `backend_static` takes
//! 191 ns/record on a 2-core VM
//! (`cargo run --release -p tachylog-bench -- --only tachylog,backend_static`). `writev` would
//! not help (the lines are already one contiguous batch), and io_uring's buffered writes to
//! ext4 go through the same copy on an io-wq worker, which is this thread with a ring in
//! between and not available everywhere.
//!
//! At most one batch is in flight: the back end waits for it before handing over the next,
//! before a flush, a reopen or a size check, so memory stays two batches, lines reach the
//! file in order, and an error is reported at the next of those calls (the lines of the
//! failed batch were counted as unflushed, so they are counted lost). Only full batches go
//! here; a flush writes the partial batch itself, so a quiet logger's lines are not delayed by
//! a hand-off.

use super::append::lock::{self, journaling, JournalRef};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A batch, its journal units, the file it goes to and the journal it is noted in.
type Job = (Arc<File>, Vec<u8>, Vec<u64>, JournalRef, Arc<Path>);
/// A batch's bytes and journal units, emptied for reuse.
pub(crate) type Buffers = (Vec<u8>, Vec<u64>);
/// A written batch's buffers, emptied, and how its write went.
type Done = (Vec<u8>, Vec<u64>, io::Result<()>);

/// The writing thread and the batch it is writing, if any.
pub(crate) struct BackgroundWriter {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    /// Bytes of the batch being written; 0 when none is.
    in_flight: usize,
    thread: Option<JoinHandle<()>>,
}

impl BackgroundWriter {
    /// Starts the thread (named `tachylog-write`).
    pub(crate) fn start() -> io::Result<BackgroundWriter> {
        let (jobs, incoming) = mpsc::sync_channel::<Job>(1);
        let (finished, done) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("tachylog-write".into())
            .spawn(move || {
                for (file, batch, units, journal, path) in incoming {
                    let journaling = journaling(&journal, &units, &path);
                    let result = lock::append_locked(&file, &batch, journaling);
                    if finished.send((batch, units, result)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(BackgroundWriter {
            jobs: Some(jobs),
            done,
            in_flight: 0,
            thread: Some(thread),
        })
    }

    /// Bytes handed over and not yet known to be written.
    #[cfg(feature = "rolling")]
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Hands `batch` to the thread. Call [`BackgroundWriter::wait`] first: one batch at a time.
    /// Returns the bytes written before returning: 0, or the batch's if the thread is gone (it
    /// panicked) and the batch was written here instead.
    pub(crate) fn write(
        &mut self,
        file: &Arc<File>,
        batch: Vec<u8>,
        units: Vec<u64>,
        journal: JournalRef,
        path: &Path,
    ) -> io::Result<u64> {
        debug_assert_eq!(self.in_flight, 0, "one batch at a time");
        let len = batch.len();
        match self
            .jobs
            .as_ref()
            .map(|jobs| jobs.send((file.clone(), batch, units, journal, Arc::from(path))))
        {
            Some(Ok(())) => {
                self.in_flight = len;
                Ok(0)
            }
            Some(Err(mpsc::SendError((file, batch, units, journal, path)))) => {
                lock::append_locked(&file, &batch, journaling(&journal, &units, &path))
                    .map(|()| len as u64)
            }
            None => unreachable!("the sender lives until drop"),
        }
    }

    /// Waits for the batch in flight, if any; returns its bytes written (0 if none) and its
    /// buffers, emptied, for reuse.
    pub(crate) fn wait(&mut self) -> io::Result<(u64, Option<Buffers>)> {
        if self.in_flight == 0 {
            return Ok((0, None));
        }
        let len = std::mem::take(&mut self.in_flight) as u64;
        match self.done.recv() {
            Ok((mut batch, mut units, result)) => {
                batch.clear();
                units.clear();
                result.map(|()| (len, Some((batch, units))))
            }
            Err(_) => Err(io::Error::other("tachylog's writing thread stopped")),
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        // The owner waited for its last batch (flush, reopen); an error now has no one to
        // report to, and the lines were counted when handed over.
        let _ = self.wait();
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
