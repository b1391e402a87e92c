//! How a batch goes into a log file that other processes may append to, compress or mend.
//!
//! - **No wait that another process controls.** A writer tries the file's shared `flock` once,
//!   without waiting, and writes with or without it: `flock` needs only read access to the
//!   file, and logs are often readable by a group, so a lock any reader can hold must never
//!   stall the back end (and, through full rings, the callers). A sibling's compression and a
//!   recovery's mending of a torn end hold the exclusive lock for a few microseconds, and
//!   check the file's length under it, so a writer holding the shared lock is never cut.
//!   A writer that had no lock checks after its write that the file was not removed meanwhile,
//!   and says so (`NotFound`) if it was: its owner creates the file again and writes there.
//! - **Facts for recovery.** With a spool, the batch is journaled (`queue::spool::journal`):
//!   the file's lock stripe in the spool root is taken (only processes of the spool's user can
//!   open it), the file's length read, the intent noted, the batch written, its landing noted.
//!   The stripe makes the length read the batch's exact start among the spool's processes.

#[cfg(all(unix, not(loom)))]
use crate::queue::spool::journal::Journal;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
#[cfg(all(unix, not(loom)))]
use std::sync::Arc;

/// The journal a batch is noted in, with its units (see `queue::spool::journal`).
#[cfg(all(unix, not(loom)))]
pub(crate) type Journaling<'a> = Option<(&'a Arc<Journal>, &'a [u64], &'a Path)>;
/// No spool here: nothing is journaled.
#[cfg(not(all(unix, not(loom))))]
pub(crate) type Journaling<'a> = Option<(&'a (), &'a [u64], &'a Path)>;

/// The journal this thread's writes are noted in, when a spool is open.
#[cfg(all(unix, not(loom)))]
pub(crate) type JournalRef = Option<Arc<Journal>>;
/// No spool here: nothing is journaled.
#[cfg(not(all(unix, not(loom))))]
pub(crate) type JournalRef = Option<()>;

/// The journal this thread's file writes are noted in now (see `queue::spool::journal`).
pub(crate) fn active_journal() -> JournalRef {
    #[cfg(all(unix, not(loom)))]
    return crate::queue::spool::journal::active();
    #[cfg(not(all(unix, not(loom))))]
    return None;
}

/// What [`append_locked`] notes a batch of the file at `path` with.
pub(crate) fn journaling<'a>(
    journal: &'a JournalRef,
    units: &'a [u64],
    path: &'a Path,
) -> Journaling<'a> {
    journal.as_ref().map(|j| (j, units, path))
}

/// Writes all of `bytes` to `file` (opened for appending), noting it in the journal if one is
/// given; writes nothing, and fails with [`io::ErrorKind::NotFound`], if the file was removed
/// while open (a sibling process compressed the file of a period this one still writes late
/// records to): the lines would go nowhere. Its owner creates the file again at the path.
pub(crate) fn append_locked(file: &File, bytes: &[u8], journal: Journaling<'_>) -> io::Result<()> {
    #[cfg(unix)]
    {
        // The stripe first, then the `flock`, as a recovery mending the file takes them: a
        // writer never waits for the stripe while it holds the `flock` the mending waits for.
        #[cfg(not(loom))]
        let stripe = match journal {
            Some((journal, ..)) => {
                use std::os::unix::fs::MetadataExt;
                let identity = file.metadata()?;
                journal.lock_stripe(identity.dev(), identity.ino())
            }
            None => None,
        };
        #[cfg(loom)]
        let stripe = None::<()>;
        let locked =
            rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockShared).is_ok();
        let result = append_unix(file, bytes, journal, stripe.as_ref(), locked);
        if locked {
            let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
        }
        drop(stripe);
        result
    }
    #[cfg(not(unix))]
    {
        let _ = journal;
        (&*file).write_all(bytes)
    }
}

/// A lock stripe held, or nothing where there are none.
#[cfg(all(unix, not(loom)))]
type Held<'a> = crate::queue::spool::journal::Stripe<'a>;
#[cfg(loom)]
type Held<'a> = ();

#[cfg(unix)]
fn append_unix(
    file: &File,
    bytes: &[u8],
    journal: Journaling<'_>,
    stripe: Option<&Held<'_>>,
    locked: bool,
) -> io::Result<()> {
    if removed(file) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the file was removed while open",
        ));
    }
    #[cfg(not(loom))]
    let written = match journal {
        Some((journal, units, path)) => {
            journaled_write(file, bytes, (journal, units, path), stripe)
        }
        None => (&*file).write_all(bytes),
    };
    #[cfg(loom)]
    let written = {
        let _ = (journal, stripe);
        (&*file).write_all(bytes)
    };
    written?;
    if !locked && removed(file) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the file was removed while this batch was written to it",
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn removed(file: &File) -> bool {
    rustix::fs::fstat(file).is_ok_and(|stat| stat.st_nlink == 0)
}

/// The batch written under its stripe, between its intent and its landings: each `write(2)`
/// that returns notes how much went and where it ended (the file offset after it).
#[cfg(all(unix, not(loom)))]
fn journaled_write(
    file: &File,
    bytes: &[u8],
    (journal, units, path): (&Arc<Journal>, &[u64], &Path),
    stripe: Option<&Held<'_>>,
) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // Read under the stripe: where the batch lands, if every writer holds it.
    let meta = file.metadata()?;
    let start = meta.len();
    let write = journal.next_write();
    if let Some(stripe) = stripe {
        stripe.begin(write, meta.dev(), meta.ino(), start, path);
    }
    let mut noted = journal.intend(write, &meta, start, stripe.is_some(), bytes, units);
    if let Some(torn) = crate::queue::spool::journal::torn_length(start, bytes.len()) {
        let _ = (&*file).write_all(&bytes[..torn]);
        // SAFETY: sends our own process a signal; no memory is involved.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
    let mut rest = bytes;
    let result = loop {
        if rest.is_empty() {
            break Ok(());
        }
        match (&*file).write(rest) {
            Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                // Where it went is not known if the seek fails: no landing, so recovery
                // compares.
                let end = rustix::fs::seek(file, rustix::fs::SeekFrom::Current(0));
                if let (Some(noted), Ok(end)) = (&mut noted, end) {
                    noted.landed(n as u64, end);
                }
                // Bytes no stripe covered: a recovery must not take them for a dead
                // process's whose write it compares there.
                if let (None, Ok(end)) = (stripe, end) {
                    journal.note_unlocked(meta.dev(), meta.ino(), end, n as u64);
                }
                rest = &rest[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    if let Some(stripe) = stripe {
        stripe.end();
    }
    result
}

/// Takes the exclusive lock on `file`, waiting at most `wait`; `false` if it could not.
#[cfg(unix)]
pub(crate) fn exclusive_lock(file: &File, wait: std::time::Duration) -> bool {
    use rustix::fs::{flock, FlockOperation};
    let started = std::time::Instant::now();
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR)
                if started.elapsed() < wait =>
            {
                std::thread::sleep(std::time::Duration::from_millis(1))
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
