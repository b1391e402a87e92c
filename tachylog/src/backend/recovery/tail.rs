//! What a sink's files hold past a dead process's last cut, to be compared with its recovered
//! records: the lines (or binary records) there, each of which may stand for one record, and
//! the piece of a line a death tore at a file's end.
//!
//! A recovered record is looked for as the sink would have written it, marked or not (the dead
//! process wrote it unmarked; a recovery killed halfway, marked). A value the dead program
//! formatted with its own code (a `CopyArg` of its own type) is a hole in that line
//! (`format::shaped::HOLE`), which any text without a line break fills; each byte of its
//! date-time column is any byte ([`ANY_BYTE`]): the dead process may have written a later time
//! than the record's own (the column is kept monotonic) or converted it with an older
//! calibration. A binary log's records are compared by thread, level, line and message.

use crate::format::shaped::HOLE;

/// A byte that stands for any byte in a line rendered for comparison: each byte of its
/// date-time column (see `Output::render_line_for_matching`). Never in UTF-8 text.
pub(super) const ANY_BYTE: u8 = 0xFF;
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

/// Where a binary record was logged: thread, level, line.
pub(super) type RecordKey = (u64, Level, u32);

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

/// The lines of one sink's files past the cut, each taken by at most one record.
pub(super) struct SinkTail {
    regions: Vec<Region>,
    /// Sorted, so that the lines that begin with a given text are together.
    lines: Vec<Vec<u8>>,
    taken: Vec<bool>,
    /// Indices into `lines`, sorted by each line read backwards: the lines that end with a
    /// given text are together (a line's date-time, a hole, often comes first).
    by_end: Vec<u32>,
    /// A binary log's records, by where they were logged: their messages, and whether a
    /// recovered record took each.
    records: HashMap<RecordKey, Vec<(String, bool)>>,
}

impl SinkTail {
    /// Reads `files` (text lines, or binary records with `binary`), at most [`MAX_TAIL`] bytes
    /// of each.
    pub(super) fn read(files: Vec<TailFile>, binary: bool, warnings: &mut Vec<String>) -> Self {
        let mut tail = SinkTail {
            regions: Vec::new(),
            lines: Vec::new(),
            taken: Vec::new(),
            by_end: Vec::new(),
            records: HashMap::new(),
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
        tail.by_end = (0..tail.lines.len() as u32).collect();
        let lines = &tail.lines;
        tail.by_end.sort_unstable_by(|&a, &b| {
            backwards(&lines[a as usize]).cmp(&backwards(&lines[b as usize]))
        });
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
                    let key = (record.thread_id(), record.level(), record.line());
                    self.records
                        .entry(key)
                        .or_default()
                        .push((record.message().to_string(), false));
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
            && self.records.is_empty()
            && self.regions.iter().all(|r| r.torn.is_none())
    }

    /// Takes a binary record logged at `key` whose message `message` (with holes) matches,
    /// if there is one not taken.
    pub(super) fn take_record(&mut self, key: RecordKey, message: &str) -> bool {
        let pieces = holed_pieces(message.as_bytes());
        let Some(candidates) = self.records.get_mut(&key) else {
            return false;
        };
        for (text, taken) in candidates.iter_mut() {
            if !*taken && matches(text.as_bytes(), &pieces) {
                *taken = true;
                return true;
            }
        }
        false
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
        let first = plain_start(pieces[0]);
        let last = plain_end(pieces[pieces.len() - 1]);
        let lines = &self.lines;
        let found = if first.len() >= last.len() {
            // The lines that begin with the first piece, together in sorted order.
            let from = lines.partition_point(|l| l.as_slice() < first);
            let to = from + lines[from..].partition_point(|l| l.starts_with(first));
            (from..to).find(|&i| !self.taken[i] && matches(&lines[i], &pieces))
        } else {
            // Those that end with the last piece, together read backwards.
            let end = backwards(last);
            let by_end = &self.by_end;
            let from = by_end.partition_point(|&i| backwards(&lines[i as usize]) < end);
            let to = from
                + by_end[from..]
                    .partition_point(|&i| backwards(&lines[i as usize]).starts_with(end));
            by_end[from..to]
                .iter()
                .map(|&i| i as usize)
                .find(|&i| !self.taken[i] && matches(&lines[i], &pieces))
        };
        match found {
            Some(i) => {
                self.taken[i] = true;
                true
            }
            None => false,
        }
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

/// `bytes` read from the end, comparable as a whole.
fn backwards(bytes: &[u8]) -> Backwards<'_> {
    Backwards(bytes)
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Backwards<'a>(&'a [u8]);

impl Backwards<'_> {
    fn starts_with(&self, other: Backwards<'_>) -> bool {
        self.0.ends_with(other.0)
    }
}

impl PartialOrd for Backwards<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Backwards<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

/// `rendered` split at its holes. A hole takes the quotes around it (`key="…"`): the dead
/// program's text may or may not have needed them.
fn holed_pieces(rendered: &[u8]) -> Vec<&[u8]> {
    let mut hole = [0u8; 4];
    let hole = HOLE.encode_utf8(&mut hole).as_bytes();
    let mut pieces = Vec::new();
    let mut rest = rendered;
    while let Some(at) = rest.windows(hole.len()).position(|w| w == hole) {
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

/// Whether `text` is `piece`, where [`ANY_BYTE`] in `piece` stands for any byte.
fn same(text: &[u8], piece: &[u8]) -> bool {
    text.len() == piece.len()
        && text
            .iter()
            .zip(piece)
            .all(|(&t, &p)| p == ANY_BYTE || t == p)
}

/// Where `piece` (see [`same`]) first occurs in `haystack`.
fn find(haystack: &[u8], piece: &[u8]) -> Option<usize> {
    haystack.windows(piece.len()).position(|w| same(w, piece))
}

/// The part of `piece` before its first [`ANY_BYTE`]: what a sorted search may use.
fn plain_start(piece: &[u8]) -> &[u8] {
    &piece[..piece
        .iter()
        .position(|&b| b == ANY_BYTE)
        .unwrap_or(piece.len())]
}

/// The part of `piece` after its last [`ANY_BYTE`].
fn plain_end(piece: &[u8]) -> &[u8] {
    &piece[piece
        .iter()
        .rposition(|&b| b == ANY_BYTE)
        .map_or(0, |i| i + 1)..]
}

/// Whether `line` is `pieces` with any text but a line break in each hole.
fn matches(line: &[u8], pieces: &[&[u8]]) -> bool {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    if body.contains(&b'\n') {
        return false;
    }
    let [first, middle @ .., last] = pieces else {
        return pieces.first().is_some_and(|p| same(line, p));
    };
    if line.len() < first.len() + last.len()
        || !same(&line[..first.len()], first)
        || !same(&line[line.len() - last.len()..], last)
    {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for piece in middle {
        match find(rest, piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `torn` is the beginning of some line that `pieces` matches.
fn is_prefix_of(torn: &[u8], pieces: &[&[u8]]) -> bool {
    let first = pieces[0];
    if torn.is_empty() {
        return false;
    }
    if torn.len() <= first.len() {
        return same(torn, &first[..torn.len()]);
    }
    // Past the first piece, a hole takes anything, and a line without holes is exact.
    same(&torn[..first.len()], first) && pieces.len() > 1
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

    /// The date-time column matches any time; the rest of the line must be as rendered.
    #[test]
    fn the_time_column_takes_any_time_and_nothing_else_moves() {
        let mut rendered = b"2026-11-27 20:28:41.183070 INFO  [w/7] m: t0 seq 0\n".to_vec();
        rendered[..26].fill(ANY_BYTE);
        let pieces = holed_pieces(&rendered);
        assert!(matches(
            b"2026-11-27 20:28:41.189720 INFO  [w/7] m: t0 seq 0\n",
            &pieces
        ));
        assert!(!matches(
            b"2026-11-27 20:28:41.189720 INFO  [w/7] m: t0 seq 1\n",
            &pieces
        ));
        assert!(!matches(
            b"2026-11-27 20:28:41.18972 INFO  [w/7] m: t0 seq 0\n",
            &pieces
        ));
        assert!(is_prefix_of(b"2026-11-27 20:28:41.1", &pieces));
        assert!(is_prefix_of(
            b"2026-11-27 20:28:41.999999 INFO  [w/7] m: t0 s",
            &pieces
        ));
        assert!(!is_prefix_of(b"2026-11-27 20:28:41.999999 WARN", &pieces));
        assert_eq!(plain_end(pieces[0]), b" INFO  [w/7] m: t0 seq 0\n");
        assert_eq!(plain_start(pieces[0]), b"");
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
