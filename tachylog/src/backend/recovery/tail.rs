//! What a sink's files hold past a dead process's last cut, to be compared with its recovered
//! records: the lines (or binary records) there, each of which may stand for one record, and
//! the piece of a line a death tore at a file's end.
//!
//! A recovered record is looked for as the sink would have written it, marked or not (the dead
//! process wrote it unmarked; a recovery killed halfway, marked). A value the dead program
//! formatted with its own code (a `CopyArg` of its own type) is a hole in that line
//! (`format::shaped::HOLE`), which any text without a line break fills. A binary log's records
//! are compared by time, thread, level and line, which its encoder keeps whatever the values.

use crate::format::shaped::HOLE;
use crate::read::Reader;
use crate::sink::append::lock;
use crate::sink::TailFile;
use crate::Level;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::PathBuf;
use std::time::Duration;

/// The most bytes read from one file.
const MAX_TAIL: u64 = 64 << 20;

/// How long a recovery waits for the other writers of a file to let it cut a torn line.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A binary record's identity: time, thread, level, line.
pub(super) type RecordKey = (i64, u64, Level, u32);

/// One file's part past the cut.
struct Region {
    path: PathBuf,
    /// The file's length when it was read: a torn piece is cut only if it is still the end.
    end: u64,
    /// A piece of a line (or of a binary block) at the end, from this offset on.
    torn: Option<Torn>,
}

struct Torn {
    start: u64,
    /// Its text (empty for a binary block): compared with the records' lines.
    bytes: Vec<u8>,
    /// A recovered record's line begins with it: the dead process tore it.
    ours: bool,
}

/// The lines of one sink's files past the cut, sorted, each taken by at most one record.
pub(super) struct SinkTail {
    regions: Vec<Region>,
    lines: Vec<Vec<u8>>,
    taken: Vec<bool>,
    keys: HashMap<RecordKey, u32>,
}

impl SinkTail {
    /// Reads `files` (text lines, or binary records with `binary`), at most [`MAX_TAIL`] bytes
    /// of each.
    pub(super) fn read(files: Vec<TailFile>, binary: bool, warnings: &mut Vec<String>) -> Self {
        let mut tail = SinkTail {
            regions: Vec::new(),
            lines: Vec::new(),
            taken: Vec::new(),
            keys: HashMap::new(),
        };
        for file in files {
            match read_region(&file) {
                Ok((bytes, end)) if binary => tail.add_binary(file, &bytes, end),
                Ok((bytes, end)) => tail.add_text(file, &bytes, end),
                Err(e) => warnings.push(format!(
                    "{}: cannot be read to tell which records it holds already: {e}",
                    file.path.display()
                )),
            }
        }
        tail.lines.sort_unstable();
        tail.taken = vec![false; tail.lines.len()];
        tail
    }

    fn add_text(&mut self, file: TailFile, bytes: &[u8], end: u64) {
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.lines.extend(
            bytes[..whole]
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec),
        );
        let torn = (whole < bytes.len() && file.from + bytes.len() as u64 == end).then(|| Torn {
            start: file.from + whole as u64,
            bytes: bytes[whole..].to_vec(),
            ours: false,
        });
        self.regions.push(Region {
            path: file.path,
            end,
            torn,
        });
    }

    fn add_binary(&mut self, file: TailFile, bytes: &[u8], end: u64) {
        let mut reader = Reader::new(bytes);
        let mut torn = None;
        while let Some(item) = reader.next_record() {
            match item {
                Ok(record) => {
                    torn = None;
                    let key = (
                        record.unix_nanos(),
                        record.thread_id(),
                        record.level(),
                        record.line(),
                    );
                    *self.keys.entry(key).or_default() += 1;
                }
                // Damage that runs to the end of the file: a block torn by a death, cut
                // whoever tore it (no live writer leaves part of a block).
                Err(crate::read::ReadError::Damaged {
                    offset, skipped, ..
                }) if offset + skipped == bytes.len() as u64
                    && file.from + bytes.len() as u64 == end =>
                {
                    torn = Some(Torn {
                        start: file.from + offset,
                        bytes: Vec::new(),
                        ours: true,
                    });
                }
                Err(_) => {}
            }
        }
        self.regions.push(Region {
            path: file.path,
            end,
            torn,
        });
    }

    /// Whether the sink has a part past the cut to compare with.
    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
            && self.keys.is_empty()
            && self.regions.iter().all(|r| r.torn.is_none())
    }

    /// Takes the binary record `key` if it is there.
    pub(super) fn take_key(&mut self, key: RecordKey) -> bool {
        match self.keys.get_mut(&key) {
            Some(count) if *count > 0 => {
                *count -= 1;
                true
            }
            _ => false,
        }
    }

    /// Takes a line that `rendered` (a line with holes) matches, if there is one not taken;
    /// and notes a torn piece it begins with.
    pub(super) fn take_line(&mut self, rendered: &[u8]) -> bool {
        let pieces = holed_pieces(rendered);
        for region in &mut self.regions {
            if let Some(torn) = &mut region.torn {
                torn.ours = torn.ours || is_prefix_of(&torn.bytes, &pieces);
            }
        }
        let first = pieces[0];
        // Lines that begin with the first piece are together in sorted order.
        let from = self.lines.partition_point(|l| l.as_slice() < first);
        let to = from + self.lines[from..].partition_point(|l| l.starts_with(first));
        for i in from..to {
            if !self.taken[i] && matches(&self.lines[i], &pieces) {
                self.taken[i] = true;
                return true;
            }
        }
        false
    }

    /// Lines there that no record took: another process's.
    pub(super) fn foreign(&self) -> usize {
        self.taken.iter().filter(|t| !**t).count()
    }

    /// Cuts off the torn pieces the dead process left, and ends any other with a line break
    /// (so that what follows starts a line), each only if it is still the file's end, under
    /// the file's exclusive lock (see `sink::append::lock`).
    pub(super) fn mend_torn_ends(&self, warnings: &mut Vec<String>) {
        for region in &self.regions {
            let Some(torn) = &region.torn else { continue };
            if let Err(e) = mend(region, torn) {
                warnings.push(format!(
                    "{}: the end of the file, torn by a process's death, was left as it is: {e}",
                    region.path.display()
                ));
            } else if !torn.ours {
                warnings.push(format!(
                    "{}: a line cut short by a process's death ({} bytes) is not one of this \
                     recovery's; it was ended where it stops",
                    region.path.display(),
                    torn.bytes.len()
                ));
            }
        }
    }
}

fn mend(region: &Region, torn: &Torn) -> io::Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&region.path)?;
    if !lock::exclusive_lock(&file, LOCK_WAIT) {
        return Err(io::Error::other(
            "another process held its lock for over 5 s",
        ));
    }
    let result = (|| {
        if file.metadata()?.len() != region.end {
            return Err(io::Error::other("others wrote after it since"));
        }
        if torn.ours {
            file.set_len(torn.start)
        } else {
            let mut file = &file;
            file.seek(io::SeekFrom::End(0))?;
            file.write_all(b"\n")
        }
    })();
    lock::unlock(&file);
    result
}

/// The file's bytes from `from` (at most [`MAX_TAIL`]), and its length when read.
fn read_region(file: &TailFile) -> io::Result<(Vec<u8>, u64)> {
    let mut handle = File::open(&file.path)?;
    let end = handle.metadata()?.len();
    let mut bytes = Vec::new();
    if end > file.from {
        handle.seek(io::SeekFrom::Start(file.from))?;
        handle.take(MAX_TAIL).read_to_end(&mut bytes)?;
    }
    Ok((bytes, end))
}

/// `rendered` split at its holes. A hole takes the quotes around it (`key="…"`): the dead
/// program's text may or may not have needed them.
fn holed_pieces(rendered: &[u8]) -> Vec<&[u8]> {
    let mut hole = [0u8; 4];
    let hole = HOLE.encode_utf8(&mut hole).as_bytes();
    let mut pieces = Vec::new();
    let mut rest = rendered;
    while let Some(at) = find(rest, hole) {
        pieces.push(&rest[..at]);
        rest = &rest[at + hole.len()..];
    }
    pieces.push(rest);
    for i in 1..pieces.len() {
        if pieces[i - 1].ends_with(b"\"") && pieces[i].starts_with(b"\"") {
            pieces[i - 1] = &pieces[i - 1][..pieces[i - 1].len() - 1];
            pieces[i] = &pieces[i][1..];
        }
    }
    pieces
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether `line` is `pieces` with any text but a line break in each hole.
fn matches(line: &[u8], pieces: &[&[u8]]) -> bool {
    let [first, middle @ .., last] = pieces else {
        return pieces.first().is_some_and(|p| *p == line);
    };
    if line.len() < first.len() + last.len() || !line.starts_with(first) || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for piece in middle {
        match find(rest, piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    !rest.contains(&b'\n')
}

/// Whether `torn` is the beginning of some line that `pieces` matches.
fn is_prefix_of(torn: &[u8], pieces: &[&[u8]]) -> bool {
    let first = pieces[0];
    if torn.len() <= first.len() {
        return first.starts_with(torn) && !torn.is_empty();
    }
    // Past the first piece, a hole takes anything, and a line without holes is exact.
    torn.starts_with(first) && pieces.len() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holed(text: &str) -> Vec<u8> {
        text.replace('@', &HOLE.to_string()).into_bytes()
    }

    #[test]
    fn holes_take_any_text_on_the_line_and_the_quotes_around_them() {
        let rendered = holed("t INFO order 7 for @ done user=\"@\"\n");
        let pieces = holed_pieces(&rendered);
        assert!(matches(
            b"t INFO order 7 for ticket 7/3 done user=ada\n",
            &pieces
        ));
        assert!(matches(b"t INFO order 7 for  done user=\"a b\"\n", &pieces));
        assert!(!matches(
            b"t INFO order 8 for ticket done user=ada\n",
            &pieces
        ));
        assert!(!matches(
            b"t INFO order 7 for x\ny done user=ada\n",
            &pieces
        ));
        let exact = holed_pieces(b"t INFO plain\n");
        assert!(matches(b"t INFO plain\n", &exact));
        assert!(!matches(b"t INFO plain!\n", &exact));
    }

    #[test]
    fn a_torn_piece_is_ours_when_a_line_begins_with_it() {
        let rendered = holed("t INFO order 7 for @ done\n");
        let pieces = holed_pieces(&rendered);
        assert!(is_prefix_of(b"t INFO ord", &pieces));
        assert!(is_prefix_of(b"t INFO order 7 for ticket 7/", &pieces));
        assert!(!is_prefix_of(b"t INFO order 8", &pieces));
        let exact = holed_pieces(b"t INFO plain\n");
        assert!(is_prefix_of(b"t INFO pl", &exact));
        assert!(!is_prefix_of(b"t INFO plain and more", &exact));
        assert!(!is_prefix_of(b"", &exact));
    }
}
