//! A [`Pattern`](super::pattern::Pattern) compiled for the back end: runs of pieces that
//! depend only on the thread (`[{thread}/{tid}] `) or only on the call site (`{target}: `,
//! ` ({file}:{line})`) are rendered once and cached, so a line is a handful of copies: the
//! cached date-time prefix, the level, the thread's run, the site's runs and the message.
//!
//! A thread's run is keyed by its OS id and checked against its name (ids are reused after a
//! thread exits); a site's run by the `&'static Site` address, which never changes. Records
//! without a call site (the `log` facade, `tracing`, tachylog's own notices) render their runs
//! each time, escaping their run-time metadata. Memory: one short line per (thread, run) and
//! (site, run); the thread cache is cleared when it passes [`MAX_THREADS`] entries, so thread
//! churn cannot grow it without bound.
//!
//! Back end only.

use super::escape::EscapingWriter;
use super::pattern::Piece;
use super::view::{Message, RecordView, SiteMessage};
use crate::codec::short_copy::append_bytes;
use crate::queue::registry::ThreadInfo;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

/// Thread runs kept before the cache starts over.
const MAX_THREADS: usize = 4096;

/// One step of a compiled pattern.
pub(crate) enum Segment {
    Text(Box<str>),
    Time,
    Level,
    Message,
    /// Pieces that depend on nothing but the thread.
    Thread(Run<ThreadKey>),
    /// Pieces that depend on nothing but the call site.
    Site(Run<usize>),
}

/// What a piece depends on.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Depends {
    Nothing,
    Thread,
    Site,
    Record,
}

fn depends(piece: &Piece) -> Depends {
    match piece {
        Piece::Text(_) => Depends::Nothing,
        Piece::Thread | Piece::ThreadId => Depends::Thread,
        Piece::Target | Piece::File | Piece::Line => Depends::Site,
        Piece::Time | Piece::Level | Piece::Message => Depends::Record,
    }
}

/// Groups the pieces: literal text joins the run it borders, a thread piece or a site piece
/// starts a run of its kind, the time, level and message stand alone.
pub(crate) fn compile(pieces: &[Piece]) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut run: Vec<Piece> = Vec::new();
    let mut kind = Depends::Nothing;
    let close = |run: &mut Vec<Piece>, kind: Depends, segments: &mut Vec<Segment>| {
        if run.is_empty() {
            return;
        }
        let pieces = std::mem::take(run);
        segments.push(match kind {
            Depends::Thread => Segment::Thread(Run::new(pieces)),
            Depends::Site => Segment::Site(Run::new(pieces)),
            _ => Segment::Text(
                pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.as_str(),
                        _ => "",
                    })
                    .collect::<String>()
                    .into(),
            ),
        });
    };
    for piece in pieces {
        match depends(piece) {
            Depends::Nothing => run.push(piece.clone()),
            Depends::Record => {
                close(&mut run, kind, &mut segments);
                kind = Depends::Nothing;
                segments.push(match piece {
                    Piece::Time => Segment::Time,
                    Piece::Level => Segment::Level,
                    _ => Segment::Message,
                });
            }
            needs => {
                if kind != Depends::Nothing && kind != needs {
                    close(&mut run, kind, &mut segments);
                }
                kind = needs;
                run.push(piece.clone());
            }
        }
    }
    close(&mut run, kind, &mut segments);
    segments
}

/// A thread's cache key: its OS id; a hit is checked by the registration's serial, then by name
/// (ids are reused; a new registration with the same name renders the same text).
pub(crate) type ThreadKey = u64;

/// A run of pieces and its rendered text per key.
pub(crate) struct Run<K> {
    pieces: Vec<Piece>,
    /// Key to index in `rendered`.
    index: HashMap<K, usize, BuildHasherDefault<AddressHasher>>,
    rendered: Vec<Rendered>,
    /// The last key looked up and its index: consecutive records mostly share thread and site.
    last: Option<(K, usize)>,
}

struct Rendered {
    /// The thread's registration serial and name when rendered (a thread run's check); 0 and
    /// empty for site runs.
    serial: u64,
    name: Box<str>,
    text: Box<[u8]>,
}

impl<K: Copy + Eq + std::hash::Hash> Run<K> {
    fn new(pieces: Vec<Piece>) -> Self {
        Run {
            pieces,
            index: HashMap::default(),
            rendered: Vec::new(),
            last: None,
        }
    }

    /// The rendering cached under `key`, if any.
    #[inline]
    fn lookup(&mut self, key: K) -> Option<&Rendered> {
        let i = match self.last {
            Some((last, i)) if last == key => i,
            _ => {
                let i = *self.index.get(&key)?;
                self.last = Some((key, i));
                i
            }
        };
        self.rendered.get(i)
    }

    /// Renders the run into `out` and caches it under `key`.
    fn render(
        &mut self,
        key: K,
        thread: Option<&ThreadInfo>,
        record: &RecordView<'_>,
        escape: bool,
        out: &mut Vec<u8>,
    ) {
        let start = out.len();
        write_pieces(&self.pieces, record, escape, out);
        let rendered = Rendered {
            serial: thread.map_or(0, |t| t.serial),
            name: thread.map_or("", |t| t.name.as_str()).into(),
            text: out[start..].into(),
        };
        match self.index.get(&key) {
            Some(&i) => self.rendered[i] = rendered,
            None => {
                self.index.insert(key, self.rendered.len());
                self.rendered.push(rendered);
            }
        }
        self.last = None;
    }
}

impl Run<ThreadKey> {
    pub(crate) fn write(&mut self, record: &RecordView<'_>, escape: bool, out: &mut Vec<u8>) {
        let thread = record.thread;
        if let Some(hit) = self.lookup(thread.id) {
            // The serial settles the common case without comparing the name.
            if hit.serial == thread.serial || *hit.name == *thread.name {
                append_bytes(out, &hit.text);
                return;
            }
        }
        if self.rendered.len() >= MAX_THREADS {
            self.index.clear();
            self.rendered.clear();
            self.last = None;
        }
        self.render(thread.id, Some(thread), record, escape, out);
    }
}

impl Run<usize> {
    pub(crate) fn write(&mut self, record: &RecordView<'_>, escape: bool, out: &mut Vec<u8>) {
        let Message::Site(SiteMessage { site, .. }) = &record.message else {
            return write_pieces(&self.pieces, record, escape, out);
        };
        let key = *site as *const _ as usize;
        if let Some(hit) = self.lookup(key) {
            append_bytes(out, &hit.text);
            return;
        }
        self.render(key, None, record, escape, out);
    }
}

/// Renders `run`'s pieces for `record`, without its cache (for [`super::site_lines`], which
/// keeps the result).
pub(crate) fn write_run<K>(run: &Run<K>, record: &RecordView<'_>, escape: bool, out: &mut Vec<u8>) {
    write_pieces(&run.pieces, record, escape, out);
}

/// Renders thread and site pieces, and literal text.
fn write_pieces(pieces: &[Piece], record: &RecordView<'_>, escape: bool, out: &mut Vec<u8>) {
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.extend_from_slice(t.as_bytes()),
            Piece::Thread => out.extend_from_slice(record.thread.name.as_bytes()),
            Piece::ThreadId => {
                out.extend_from_slice(itoa::Buffer::new().format(record.thread.id).as_bytes())
            }
            // A call site's target and file come from `module_path!()` and `file!()`, compiled
            // into the program, not from input: only run-time metadata (the `log` facade's
            // targets) needs the escaping scan.
            Piece::Target if record.static_metadata => {
                out.extend_from_slice(record.target.as_bytes())
            }
            Piece::File if record.static_metadata => out.extend_from_slice(record.file.as_bytes()),
            Piece::Target => escaped(record.target, escape, out),
            Piece::File => escaped(record.file, escape, out),
            Piece::Line => {
                out.extend_from_slice(itoa::Buffer::new().format(record.line).as_bytes())
            }
            Piece::Time | Piece::Level | Piece::Message => {}
        }
    }
}

fn escaped(text: &str, escape: bool, out: &mut Vec<u8>) {
    let _ = EscapingWriter { out, escape }.write_str(text);
}

/// Keys are addresses and thread ids, already spread: one multiply mixes them enough, where
/// SipHash would cost more than the copy it saves.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not used by the keys above (integers); a byte-wise FNV step for completeness.
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // Mixed into what came before, for keys of two integers (a thread and a site).
        self.0 = (self.0 ^ n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::pattern::{Pattern, DEFAULT_PATTERN};
    use crate::Level;

    fn kinds(pattern: &str) -> Vec<&'static str> {
        let pattern = Pattern::parse(pattern).unwrap();
        compile(pattern.pieces())
            .iter()
            .map(|s| match s {
                Segment::Text(_) => "text",
                Segment::Time => "time",
                Segment::Level => "level",
                Segment::Message => "message",
                Segment::Thread(_) => "thread",
                Segment::Site(_) => "site",
            })
            .collect()
    }

    #[test]
    fn the_default_pattern_is_seven_copies() {
        assert_eq!(
            kinds(DEFAULT_PATTERN),
            ["time", "text", "level", "thread", "site", "message", "site"]
        );
        assert_eq!(kinds("{message}"), ["message"]);
        assert_eq!(kinds("<{tid}{line}>"), ["thread", "site"]);
        assert_eq!(kinds("a{level}b"), ["text", "level", "text"]);
    }

    #[test]
    fn a_reused_thread_id_with_another_name_is_rendered_again() {
        let pattern = Pattern::parse("[{thread}/{tid}]").unwrap();
        let mut segments = compile(pattern.pieces());
        let Segment::Thread(run) = &mut segments[0] else {
            panic!("not a thread run")
        };
        let render = |run: &mut Run<ThreadKey>, name: &str| {
            let thread = ThreadInfo::new(name.into(), 42);
            let record = RecordView {
                unix_nanos: 0,
                level: Level::Info,
                target: "t",
                file: "f",
                line: 1,
                thread: &thread,
                message: Message::Text("m"),
                static_metadata: true,
                backtrace: false,
                recovered: false,
                trace: None,
            };
            let mut out = Vec::new();
            run.write(&record, true, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(render(run, "first"), "[first/42]");
        assert_eq!(render(run, "first"), "[first/42]");
        assert_eq!(render(run, "second"), "[second/42]");
        assert_eq!(render(run, "second"), "[second/42]");
    }
}
