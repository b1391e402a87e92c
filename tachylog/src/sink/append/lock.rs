//! How the processes that write one log file agree with a recovery that may cut it (see
//! `backend::recovery`): every tachylog writer holds a shared `flock` on the file while its
//! `write(2)` runs, and a recovery holds the exclusive one while it checks the end of the file
//! and cuts off a line a dead process tore. So no tachylog process appends between the check
//! and the cut, and a sibling's line is never cut. Writers do not exclude each other (shared),
//! and `O_APPEND` keeps their batches whole as before.
//!
//! A process that holds the lock for long (a stuck recovery, or anyone who may open the file:
//! `flock` needs only read access) must not stall the back end: a writer waits for the lock at
//! most [`WRITER_WAIT`], then writes without it and says so once on standard error.
//!
//! `flock` locks belong to the open file description, not to the process, so the application
//! opening and closing the same file does not release ours (unlike `fcntl` locks). Writers that
//! are not tachylog (`echo >>`) take no lock; the cut is still done only if the end of the file
//! is what it was when checked (see `backend::recovery`).

use std::fs::File;
use std::io::{self, Write};
#[cfg(unix)]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(unix)]
use std::time::{Duration, Instant};

/// The longest a writer waits for the shared lock.
#[cfg(unix)]
const WRITER_WAIT: Duration = Duration::from_secs(2);

/// Writes all of `bytes` to `file` (opened for appending), holding the shared lock; writes
/// nothing, and fails with [`io::ErrorKind::NotFound`], if the file was removed while open (a
/// sibling process compressed the file of a period this one still writes late records to):
/// the lines would go nowhere. Its owner creates the file again at the path.
pub(crate) fn append_locked(file: &File, bytes: &[u8]) -> io::Result<()> {
    #[cfg(unix)]
    let locked = shared_lock(file);
    #[cfg(unix)]
    let written = match rustix::fs::fstat(file) {
        Ok(stat) if stat.st_nlink == 0 => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the file was removed while open",
        )),
        _ => (&*file).write_all(bytes),
    };
    #[cfg(not(unix))]
    let written = (&*file).write_all(bytes);
    #[cfg(unix)]
    if locked {
        let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
    }
    written
}

/// Takes the shared lock, waiting at most [`WRITER_WAIT`]; `false` when it could not be taken
/// (reported once per process, unless the file system has no locks at all).
#[cfg(unix)]
fn shared_lock(file: &File) -> bool {
    use rustix::fs::{flock, FlockOperation};
    static REPORTED: AtomicBool = AtomicBool::new(false);
    let started = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        match flock(file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => return true,
            Err(rustix::io::Errno::WOULDBLOCK) if started.elapsed() < WRITER_WAIT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                if !REPORTED.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "tachylog: another process has held an exclusive lock on a log file for \
                         over {} s; writing to it without the shared lock",
                        WRITER_WAIT.as_secs()
                    );
                }
                return false;
            }
            Err(rustix::io::Errno::INTR) => {}
            // No locks here (some network file systems): nothing to agree on.
            Err(_) => return false,
        }
    }
}

/// Takes the exclusive lock on `file`, waiting at most `wait`; `false` if it could not.
#[cfg(unix)]
pub(crate) fn exclusive_lock(file: &File, wait: Duration) -> bool {
    use rustix::fs::{flock, FlockOperation};
    let started = Instant::now();
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR)
                if started.elapsed() < wait =>
            {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(_) => return false,
        }
    }
}

/// Lets go of the lock `file` holds.
#[cfg(unix)]
pub(crate) fn unlock(file: &File) {
    let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
}
