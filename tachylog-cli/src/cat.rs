//! `tachylog cat`: files one after the other, their blocks decoded on every core
//! (`tachylog::read::lines_in_parallel`) and printed in order, or merged by time (`--merge`: a
//! k-way merge that holds one record per file), through the filters, rendered by
//! `tachylog::read`'s [`Renderer`].

use crate::filter::Filter;
use crate::progress::Progress;
use crate::time::parse_instant;
use crate::{LineFormat, Outcome};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use tachylog::read::{lines_in_parallel, BlockLines, ReadError, Reader, Record, Renderer};
use tachylog::{Level, Pattern, TimeZone};

#[derive(clap::Args)]
pub(crate) struct CatArgs {
    /// Binary log files, read in the order given (or merged with `--merge`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The text line's pattern, as given to `Builder::pattern`.
    #[arg(long, default_value = tachylog::DEFAULT_PATTERN)]
    pattern: String,
    /// The line format.
    #[arg(long, value_enum, default_value_t = LineFormat::Text)]
    format: LineFormat,
    /// Times in UTC (the default is the system's time zone, as the logger's).
    #[arg(long, conflicts_with = "tz")]
    utc: bool,
    /// Times in this zone: a time-zone database name, as `Builder::time_zone` takes.
    #[arg(long)]
    tz: Option<String>,
    /// Only records of this level or more severe (error, warn, info, debug, trace).
    #[arg(long)]
    level: Option<Level>,
    /// Only records whose target is this module path or under it.
    #[arg(long)]
    target: Option<String>,
    /// Only records at or after this instant (RFC 3339 or Unix seconds).
    #[arg(long, value_parser = parse_instant)]
    since: Option<i64>,
    /// Only records before this instant (RFC 3339 or Unix seconds).
    #[arg(long, value_parser = parse_instant)]
    until: Option<i64>,
    /// Only lines that contain this text.
    #[arg(long)]
    grep: Option<String>,
    /// Merges the files by time instead of reading them one after the other.
    #[arg(short, long)]
    merge: bool,
    /// Keeps reading one file as it grows (`tail -f`), and the new file at its path after a
    /// rotation or a truncation; stops only when killed.
    #[arg(short, long, conflicts_with = "merge")]
    follow: bool,
    /// Threads that decode a file's blocks (the default: one per core). `--merge` and
    /// `--follow` decode on one.
    #[arg(long)]
    threads: Option<NonZeroUsize>,
}

pub(crate) fn run(args: CatArgs) -> Result<Outcome, String> {
    let zone = if args.utc {
        TimeZone::utc()
    } else if let Some(name) = &args.tz {
        TimeZone::get(name).map_err(|e| e.to_string())?
    } else {
        TimeZone::system().map_err(|e| e.to_string())?
    };
    let pattern = Pattern::parse(&args.pattern).map_err(|e| e.to_string())?;
    let lines = Lines {
        format: args.format,
        pattern,
        zone,
        filter: Filter {
            level: args.level,
            target: args.target,
            since: args.since,
            until: args.until,
            grep: args.grep,
        },
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN));
    let progress = if args.follow {
        Progress::hidden()
    } else {
        Progress::on_stderr(crate::progress::total_bytes(&args.files))
    };
    let mut printer = Printer {
        line: lines.maker(),
        out: io::stdout().lock(),
        pending: Vec::with_capacity(OUTPUT_BUFFER + 4096),
        damaged: false,
        progress,
    };
    let result = if args.follow {
        match &args.files[..] {
            [file] => follow(file, &mut printer),
            _ => return Err("--follow takes one file".into()),
        }
    } else if args.merge {
        merge(&args.files, &mut printer)
    } else {
        let mut done_before = 0;
        args.files.iter().try_for_each(|file| {
            one_file(file, &mut printer, &lines, threads, done_before)
                .map(|read| done_before += read)
        })
    };
    printer.progress.erase();
    let flushed = printer.flush();
    match result.and(flushed) {
        Ok(()) => {}
        // `tachylog cat ... | head`: the reader went away; not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(e.to_string()),
    }
    Ok(if printer.damaged {
        Outcome::Damaged
    } else {
        Outcome::Clean
    })
}

/// Bytes of lines gathered before they are written out.
const OUTPUT_BUFFER: usize = 1 << 20;

/// How `cat` lines a record: its format and filters, from which each decoding thread makes
/// its own [`LineMaker`].
struct Lines {
    format: LineFormat,
    pattern: Pattern,
    zone: TimeZone,
    filter: Filter,
}

impl Lines {
    fn maker(&self) -> LineMaker {
        let zone = self.zone.clone();
        LineMaker {
            renderer: match self.format {
                LineFormat::Text => Renderer::text(self.pattern.clone(), zone),
                LineFormat::Json => Renderer::json(zone),
                LineFormat::Logfmt => Renderer::logfmt(zone),
            },
            filter: self.filter.clone(),
        }
    }
}

/// Lines records through the filters.
struct LineMaker {
    renderer: Renderer,
    filter: Filter,
}

impl LineMaker {
    /// Appends `record`'s line to `out`, if it passes the filters.
    fn line(&mut self, record: &Record, out: &mut Vec<u8>) {
        if !self.filter.takes(record) {
            return;
        }
        let start = out.len();
        self.renderer.render(record, out);
        if !self.filter.takes_line(&out[start..]) {
            out.truncate(start);
        }
    }
}

/// Lines, filters and writes records; reports damage.
struct Printer<W> {
    line: LineMaker,
    out: W,
    /// Lines not written yet: each is rendered at its end, so a line is copied once, by the
    /// write.
    pending: Vec<u8>,
    damaged: bool,
    progress: Progress,
}

impl<W: Write> Printer<W> {
    fn record(&mut self, record: &Record) -> io::Result<()> {
        self.line.line(record, &mut self.pending);
        if self.pending.len() >= OUTPUT_BUFFER {
            self.out.write_all(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Writes a block's lines, then reports the damage after them.
    fn block(&mut self, file: &Path, block: BlockLines<'_>, done_before: u64) -> io::Result<()> {
        if !block.lines.is_empty() {
            if !self.pending.is_empty() {
                self.out.write_all(&self.pending)?;
                self.pending.clear();
            }
            self.out.write_all(block.lines)?;
        }
        if let Some(damage) = block.damage {
            self.error(file, damage)?;
        }
        self.progress.record(|| done_before + block.read);
        Ok(())
    }

    /// Writes out the lines gathered so far.
    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.pending)?;
        self.pending.clear();
        self.out.flush()
    }

    /// Reports damage on standard error and reads on; any other error ends the command,
    /// reported once, by `main`.
    fn error(&mut self, file: &Path, error: ReadError) -> io::Result<()> {
        self.damaged = true;
        self.progress.erase();
        match error {
            ReadError::Damaged { .. } => {
                eprintln!("tachylog: {}: {error}", file.display());
                Ok(())
            }
            other => Err(io::Error::other(format!("{}: {other}", file.display()))),
        }
    }
}

fn open(file: &Path) -> io::Result<Reader<io::BufReader<std::fs::File>>> {
    Reader::open(file).map_err(|e| io::Error::other(e.to_string()))
}

/// Prints one file, its blocks decoded on `threads` threads; returns the bytes it read.
/// `done_before`: bytes of the files before it, for the progress line.
fn one_file<W: Write>(
    file: &Path,
    printer: &mut Printer<W>,
    lines: &Lines,
    threads: NonZeroUsize,
    done_before: u64,
) -> io::Result<u64> {
    let mut reader = open(file)?;
    let make_line = || {
        let mut maker = lines.maker();
        move |record: &Record, out: &mut Vec<u8>| maker.line(record, out)
    };
    lines_in_parallel(&mut reader, threads, make_line, |block| {
        printer.block(file, block, done_before)
    })?;
    Ok(reader.offset())
}

/// How often `--follow` looks for more bytes and for a rotation.
const FOLLOW_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// `--follow`: reads `file` as it grows; when another file takes its path (a rotation) or it
/// shrinks below what was read (`copytruncate`), reads what the old one still holds, then the
/// new one from its start.
fn follow<W: Write>(file: &Path, printer: &mut Printer<W>) -> io::Result<()> {
    let mut reader = open(file)?.following(true);
    let mut id = file_identity(file);
    let drain = |reader: &mut Reader<_>, printer: &mut Printer<W>| -> io::Result<()> {
        while let Some(item) = reader.next_record() {
            match item {
                Ok(record) => printer.record(record)?,
                Err(e) => printer.error(file, e)?,
            }
        }
        printer.flush()
    };
    loop {
        drain(&mut reader, printer)?;
        std::thread::sleep(FOLLOW_POLL);
        let now = file_identity(file);
        let replaced = match (now, id) {
            (Some((inode, len)), Some((old_inode, _))) => {
                inode != old_inode || len < reader.offset()
            }
            (Some(_), None) => true,
            (None, _) => false,
        };
        if replaced {
            drain(&mut reader, printer)?;
            reader = open(file)?.following(true);
            id = now;
        }
    }
}

/// The file at `path` now: its inode (0 where there is none) and length.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((inode, meta.len()))
}

/// A k-way merge by time: a heap of each file's next record; equal times keep file order.
fn merge<W: Write>(files: &[PathBuf], printer: &mut Printer<W>) -> io::Result<()> {
    let mut readers = files
        .iter()
        .map(|file| open(file))
        .collect::<io::Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::new();
    let next = |i: usize,
                readers: &mut [Reader<_>],
                printer: &mut Printer<W>|
     -> io::Result<Option<Record>> {
        for record in readers[i].by_ref() {
            match record {
                Ok(record) => return Ok(Some(record)),
                Err(e) => printer.error(&files[i], e)?,
            }
        }
        Ok(None)
    };
    let mut heads: Vec<Option<Record>> = Vec::with_capacity(files.len());
    for i in 0..files.len() {
        let head = next(i, &mut readers, printer)?;
        if let Some(record) = &head {
            heap.push(Reverse((record.unix_nanos(), i)));
        }
        heads.push(head);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        if let Some(record) = heads[i].take() {
            printer.record(&record)?;
        }
        printer
            .progress
            .record(|| readers.iter().map(Reader::offset).sum());
        heads[i] = next(i, &mut readers, printer)?;
        if let Some(record) = &heads[i] {
            heap.push(Reverse((record.unix_nanos(), i)));
        }
    }
    Ok(())
}
