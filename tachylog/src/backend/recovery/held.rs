//! Which recovered records a sink's files already hold, from the facts the dead process (and
//! any recovery of it killed halfway) noted for each write (`queue::spool::journal`), never
//! from what the lines say:
//! - a write whose landing was noted: the units inside each landed piece are in the file;
//! - a write noted as intended and never as landed (the process died inside it): how much of
//!   it landed is what its settlement says (the file's length, less the write's start, when
//!   the next process took the file's stripe: see `queue::spool::journal`), settled here if
//!   nobody did yet; its pieces are compared, by checksum, with the file's bytes from its
//!   start up to there, one 4 KiB piece after the other, and the units inside the pieces that
//!   match arrived. A unit the death tore is cut off when nothing follows it.
//!
//! A write to a file none of this logger's sinks would write the records to (rotated away,
//! deleted) counts for nothing: its records are written again, in this logger's files.
//! Whatever is uncertain makes a record be written twice, never lost.

use crate::queue::spool::journal::{self, JournaledWrite, RecordId};
use crate::queue::spool::PrivateDir;
use crate::sink::append::lock;
use crate::sink::SinkSlot;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::time::Duration;

/// How long a recovery waits for a file's writers to let it mend the file's end.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A file the recovering logger's sinks write, and what the journals say it holds.
struct FileFacts {
    path: PathBuf,
    /// Whether a binary log's sink writes it (else text lines).
    binary: bool,
    /// Records its landed units hold.
    held: HashSet<RecordId>,
    /// Where a unit the dead process's death tore begins, if the file ends inside it.
    torn: Option<Torn>,
}

/// What of a journaled write is in its file.
struct Landed {
    /// Ranges of the batch, in order.
    ranges: Vec<(u64, u64)>,
    /// Where the last of it ends, in the batch and in the file, when that is known to be the
    /// writer's own last byte there.
    last: Option<(u64, u64)>,
    /// After the last line break verified (a write with no landing, compared with the file).
    line_end: Option<u64>,
}

struct Torn {
    /// Where the torn unit starts: the file is cut back to here.
    at: u64,
    /// The file's length when it was read: the cut is made only if it still is.
    len: u64,
}

/// For each sink of `sinks`, the records among those of the dead process that its files hold
/// (`None`: a sink with no file); torn ends of the dead process's writes cut off, and a file
/// whose last line has no end given one (text sinks), so that recovered lines start lines.
pub(super) fn held_by_sinks(
    writes: &[JournaledWrite],
    sinks: &mut [SinkSlot],
    span: (i64, i64),
    stripes: Option<&PrivateDir>,
    warnings: &mut Vec<String>,
) -> Vec<Option<HashSet<RecordId>>> {
    let settled = stripes.map(read_settlements).unwrap_or_default();
    let mut files: HashMap<(u64, u64), FileFacts> = HashMap::new();
    let mut of_sink: Vec<Vec<(u64, u64)>> = Vec::with_capacity(sinks.len());
    for sink in sinks.iter_mut() {
        let binary = sink.format() == crate::Format::Binary;
        let mut ids = Vec::new();
        for tail in sink.recovery_files(span) {
            let Ok(meta) = std::fs::symlink_metadata(&tail.path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let id = (meta.dev(), meta.ino());
            files.entry(id).or_insert_with(|| FileFacts {
                path: tail.path,
                binary,
                held: HashSet::new(),
                torn: None,
            });
            ids.push(id);
        }
        of_sink.push(ids);
    }
    for write in writes {
        if let Some(facts) = files.get_mut(&(write.dev, write.ino)) {
            let landed = match write.landed.is_empty() && write.exact {
                true => settled
                    .landed
                    .get(&(write.owner.clone(), write.write))
                    .copied()
                    .or_else(|| stripes.and_then(|dir| settle_now(dir, write)))
                    // Bytes a writer without the stripe put there may be anyone's: the write's
                    // records are written again rather than taken for landed.
                    .map(|landed| {
                        let to = write.start.saturating_add(landed);
                        match settled.unlocked_within(write.dev, write.ino, write.start, to) {
                            true => 0,
                            false => landed,
                        }
                    })
                    // No settlement to be had (the log could not be written): nothing is
                    // known to have landed.
                    .or(Some(0)),
                false => None,
            };
            let landed = landed.map(|l| if l == journal::UNKNOWN { 0 } else { l });
            if let Err(e) = facts.take(write, landed) {
                warnings.push(format!(
                    "{}: cannot be read to tell which records it holds: {e}; they are written \
                     again",
                    facts.path.display()
                ));
            }
        }
    }
    for facts in files.values_mut() {
        facts.mend_end(stripes, warnings);
    }
    of_sink
        .iter()
        .map(|ids| {
            (!ids.is_empty()).then(|| {
                ids.iter()
                    .filter_map(|id| files.get(id))
                    .flat_map(|facts| facts.held.iter().copied())
                    .collect()
            })
        })
        .collect()
}

impl FileFacts {
    /// Adds what `write` put in this file; `settled`: how much of it landed, by its
    /// settlement, when it has no landing.
    fn take(&mut self, write: &JournaledWrite, settled: Option<u64>) -> io::Result<()> {
        // What landed, as ranges of the batch; and where the last of it ends, in the batch
        // and in the file, when that is known to be the writer's own last byte there.
        let Landed {
            ranges: landed,
            last,
            line_end,
        } = if write.landed.is_empty() {
            let (verified, last_line_end) = self.verified(write, settled)?;
            // The write died inside its first `write(2)`: with the stripe held its start
            // is exact, so the bytes verified there are the dead process's.
            Landed {
                ranges: vec![(0, verified)],
                last: write.exact.then_some((verified, write.start + verified)),
                line_end: Some(last_line_end),
            }
        } else {
            let ranges = write
                .landed
                .iter()
                .map(|&(offset, count, _)| (offset, offset + count))
                .collect();
            Landed {
                ranges,
                last: write
                    .landed
                    .last()
                    .map(|&(offset, count, end)| (offset + count, end)),
                line_end: None,
            }
        };
        for unit in &write.units {
            if landed
                .iter()
                .any(|&(from, to)| from <= unit.start && unit.end <= to)
            {
                self.held.extend(unit.records.iter().copied());
            }
        }
        // A unit cut short (by a death, or a full disk) at the file's end is cut off: its
        // records are written again, whole. A binary block is always a unit; a text line of no
        // record (a notice) is none, so the last line break verified counts too.
        if let Some((rel_end, file_end)) = last.filter(|&(rel_end, _)| rel_end < write.len) {
            let straddling = write
                .units
                .iter()
                .find(|u| u.start < rel_end && rel_end < u.end)
                .map(|u| u.start);
            let line = line_end.filter(|&l| !self.binary && l < rel_end);
            if let Some(cut) = straddling.max(line) {
                let len = std::fs::metadata(&self.path)?.len();
                if len == file_end && file_end >= rel_end - cut {
                    self.torn = Some(Torn {
                        at: file_end - (rel_end - cut),
                        len,
                    });
                }
            }
        }
        Ok(())
    }

    /// How many bytes of `write` are in the file at its start (at most `settled`), piece by
    /// matching piece; and where the last line break among them ends.
    fn verified(&self, write: &JournaledWrite, settled: Option<u64>) -> io::Result<(u64, u64)> {
        let file = File::open(&self.path)?;
        let len = file.metadata()?.len();
        // Without the stripe the start is only a bound: bytes found there may be a sibling's
        // that look the same, so nothing is compared (the records are written again). With
        // it, no further than the settlement says the dead process wrote.
        let bound = match write.exact {
            true => settled.unwrap_or(0),
            false => 0,
        };
        let available = len.saturating_sub(write.start).min(write.len).min(bound);
        let mut bytes = vec![0u8; available as usize];
        file.read_exact_at(&mut bytes, write.start)?;
        let mut at = 0u64;
        for &crc in &write.crcs {
            let offset = write.start + at;
            let end = write
                .len
                .min(at + (journal::PIECE - offset % journal::PIECE));
            if end > available || crc32fast::hash(&bytes[at as usize..end as usize]) != crc {
                break;
            }
            at = end;
        }
        let last_line_end = bytes[..at as usize]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i as u64 + 1);
        Ok((at, last_line_end))
    }

    /// Cuts off a torn unit of the dead process's at the file's end; in a text file, ends a
    /// last line that has no end (a piece some other writer's death left). Either only if the
    /// file is still as long as when it was read, under the file's stripe and its exclusive
    /// `flock` (see `sink::append::lock`).
    fn mend_end(&mut self, stripes: Option<&PrivateDir>, warnings: &mut Vec<String>) {
        let (torn, binary) = (self.torn.take(), self.binary);
        let result = (|| -> io::Result<Option<String>> {
            let file = OpenOptions::new().read(true).write(true).open(&self.path)?;
            let meta = file.metadata()?;
            let len = meta.len();
            let unended = !binary && len > 0 && {
                let mut last = [0u8];
                file.read_exact_at(&mut last, len - 1)?;
                last[0] != b'\n'
            };
            if torn.is_none() && !unended {
                return Ok(None);
            }
            let _stripe =
                stripes.and_then(|dir| journal::stripe(dir, meta.dev(), meta.ino(), LOCK_WAIT));
            if !lock::exclusive_lock(&file, LOCK_WAIT) {
                return Err(io::Error::other(
                    "another process held its lock for over 5 s",
                ));
            }
            let result = (|| {
                if file.metadata()?.len() != len {
                    return Ok(None);
                }
                match &torn {
                    Some(torn) if torn.len == len => {
                        file.set_len(torn.at)?;
                        Ok(None)
                    }
                    _ if unended => {
                        (&file).write_all(b"\n")?;
                        Ok(Some(
                            "its last line, cut short by a process's death, was ended where it \
                             stops"
                                .to_string(),
                        ))
                    }
                    _ => Ok(None),
                }
            })();
            lock::unlock(&file);
            result
        })();
        match result {
            Ok(Some(what)) => warnings.push(format!("{}: {what}", self.path.display())),
            Ok(None) => {}
            Err(e) => warnings.push(format!(
                "{}: the end of the file, torn by a process's death, was left as it is: {e}",
                self.path.display()
            )),
        }
    }
}

/// The settlements in the spool root's log (see `queue::spool::journal`).
fn read_settlements(stripes: &PrivateDir) -> journal::Settlements {
    use std::io::Read;
    let mut bytes = Vec::new();
    match stripes.open_file(journal::SETTLED, false, journal::MAX_SETTLED) {
        Ok(file) => {
            let _ = file.take(journal::MAX_SETTLED).read_to_end(&mut bytes);
        }
        Err(_) => return journal::Settlements::default(),
    }
    journal::read_settled(&bytes)
}

/// Settles `write` now, if its file's stripe still names it as not done: nobody took the
/// stripe since its owner died.
fn settle_now(stripes: &PrivateDir, write: &JournaledWrite) -> Option<u64> {
    let held = journal::stripe(stripes, write.dev, write.ino, LOCK_WAIT)?;
    let (settled, landed) = journal::settle_dead_holder(stripes, &held, None)?;
    let _ = rustix::fs::flock(&held, rustix::fs::FlockOperation::Unlock);
    ((settled.owner.as_str(), settled.write) == (write.owner.as_str(), write.write))
        .then_some(landed)
}
