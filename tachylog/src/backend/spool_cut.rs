//! The back end's side of the spool (see `queue::spool`): a cut after every batch it hands to
//! the sinks. Once the sinks' `write(2)`s returned, the cut records how far each spooled ring
//! was read, commits that with one store, and only then gives the rings' space back to the
//! producers. A process killed at any moment leaves either the previous cut or this one
//! committed; recovery reads every record after the committed ring positions, and the write
//! journal (`queue::spool::journal`) says which of them reached each file: each is written
//! once, whole.

use super::clock::WallClock;
use super::merge::{HeldMark, Merger};
use crate::queue::spool::Spool;
use crate::sink::SinkSlot;
#[cfg(feature = "testing")]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Test hook: when set, the next cut kills the process with SIGKILL after its batch was written
/// and before it is committed, the moment when a file holds records its ledger does not.
#[cfg(feature = "testing")]
static KILL_BEFORE_NEXT_COMMIT: AtomicBool = AtomicBool::new(false);

/// Tests only (feature `testing`): the next cut (see the module documentation) sends the
/// process SIGKILL between the `write(2)` of its batch and its commit.
///
/// ```no_run
/// tachylog::__private::kill_before_next_commit();
/// ```
#[cfg(feature = "testing")]
pub fn kill_before_next_commit() {
    KILL_BEFORE_NEXT_COMMIT.store(true, Ordering::SeqCst);
}

/// With the test hook set: SIGKILL between a batch's write and its commit.
fn kill_if_asked() {
    #[cfg(feature = "testing")]
    if KILL_BEFORE_NEXT_COMMIT.load(Ordering::Relaxed) {
        // SAFETY: sends our own process a signal; no memory is involved.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// The open spool and the next cut's number.
pub(crate) struct SpoolCut {
    spool: Arc<Spool>,
    seq: u64,
    /// Records handed to the sinks since the last cut.
    pending: bool,
    /// The batch the sinks are writing now ([`SpoolCut::overlap`]): the next cut, once that
    /// write is done.
    writing: Option<Handed>,
}

/// Where the rings stood when a batch was handed over.
struct Handed {
    marks: Vec<HeldMark>,
}

impl SpoolCut {
    pub(crate) fn new(spool: Arc<Spool>) -> Self {
        SpoolCut {
            spool,
            seq: 1,
            pending: false,
            writing: None,
        }
    }

    /// Notes that records went to the sinks since the last cut.
    pub(crate) fn records_written(&mut self) {
        self.pending = true;
    }

    /// Whether a cut has something to commit.
    pub(crate) fn pending(&self) -> bool {
        self.pending
    }

    /// Commits what the sinks were just flushed with (call right after they were): every
    /// record read so far.
    pub(crate) fn commit(&mut self, merger: &mut Merger) {
        kill_if_asked();
        merger.commit_held(self.seq);
        self.spool.commit(self.seq);
        merger.release_held();
        self.seq += 1;
        self.pending = false;
        self.writing = None;
    }

    /// The cut of a batch written while the next is formatted: waits for the batch the sinks
    /// are writing (handed to them by the last call), then commits the rings' positions as
    /// they were when it was handed over, and gives that much ring space back; then notes them
    /// again and hands the sinks what was formatted since, without waiting. The rings hold two
    /// batches' records at most. Which of the records after the committed positions reached
    /// a file, the journal says (`queue::spool::journal`).
    pub(crate) fn overlap(&mut self, merger: &mut Merger, sinks: &mut [SinkSlot]) {
        for sink in sinks.iter_mut() {
            sink.flush_finish();
        }
        if let Some(handed) = self.writing.take() {
            kill_if_asked();
            merger.commit_marks(self.seq, &handed.marks);
            self.spool.commit(self.seq);
            merger.release_marks(&handed.marks);
            self.seq += 1;
        }
        self.writing = Some(Handed {
            marks: merger.held_marks(),
        });
        for sink in sinks.iter_mut() {
            sink.flush_start();
        }
    }

    /// The journal the file sinks' writes are noted in.
    pub(crate) fn journal(&self) -> Arc<crate::queue::spool::journal::Journal> {
        self.spool.journal()
    }

    /// Publishes the clock's calibration, which recovery needs to date the records.
    pub(crate) fn publish_clock(&self, clock: &WallClock) {
        let (ticks, wall, nanos_per_tick) = clock.calibration();
        self.spool.publish_clock(ticks, wall, nanos_per_tick);
    }

    /// The logger ends cleanly: everything was committed, the directory may go.
    pub(crate) fn finish(self) {
        self.spool.mark_clean();
        if let Some(installed) = crate::queue::spool::uninstall() {
            drop(installed);
        }
    }
}
