//! [`lines_in_parallel`]: a binary log's blocks decoded and lined on several threads, the
//! lines handed on in file order. Blocks are independent (each defines the call sites, threads
//! and texts its records use), so a reader of a large log can use every core: `tachylog cat`
//! does.

use super::{Block, ReadError, Reader, Record};
use std::any::Any;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;

/// Payload bytes of the blocks being decoded at once, beyond the first: a few large blocks
/// (a writer may make them up to 1 GiB) must not all be in memory together.
const IN_FLIGHT_BYTES: usize = 64 << 20;

/// A block's worth of [`lines_in_parallel`]'s output, in file order.
#[derive(Debug)]
pub struct BlockLines<'a> {
    /// What `line` appended for the block's records.
    pub lines: &'a [u8],
    /// The damage after those lines: a damaged entry that ended the block, or damage the
    /// reader skipped before the next block (then `lines` is empty). An I/O error comes last.
    pub damage: Option<ReadError>,
    /// Bytes of the source read by then (for a progress display).
    pub read: u64,
}

/// What a decoding thread returns for a block: its lines and damage, or its panic.
type Decoded = Result<(Vec<u8>, Option<ReadError>), Box<dyn Any + Send>>;

/// Lines every record of `reader` on `threads` threads and hands the lines to `write` a block
/// at a time, in file order: this thread reads and checks the blocks, the others decode them
/// ([`Reader::next_block`]) and line their records with a `line` of their own, made by
/// `make_line`, which appends a record's line to a buffer (or nothing, to leave it out). With
/// one thread, everything runs on this one.
///
/// Stops at the first error `write` returns, and returns it; a panic of `line` is resumed on
/// this thread. Memory: at most twice `threads` blocks are decoded at once, and no more than
/// 64 MiB of them beyond the first; a block's lines are held until they are written, after
/// those of the blocks before it.
///
/// ```
/// # let dir = std::env::temp_dir().join("tachylog-doc-parallel");
/// # let _ = std::fs::remove_dir_all(&dir);
/// # let options = tachylog::SinkOptions::new().format(tachylog::Format::Binary);
/// # let guard = tachylog::builder().utc(true).file_with(dir.join("a.tlog"), options).init().unwrap();
/// for i in 0..1000u64 {
///     tachylog::info!("request {} served", i);
/// }
/// # drop(guard);
/// use tachylog::read::{lines_in_parallel, Reader, Renderer};
/// let mut reader = Reader::open(dir.join("a.tlog")).unwrap();
/// let make_line = || {
///     let mut renderer = Renderer::text(tachylog::Pattern::parse("{message}").unwrap(), tachylog::TimeZone::utc());
///     move |record: &tachylog::read::Record, out: &mut Vec<u8>| renderer.render(record, out)
/// };
/// let mut text = Vec::new();
/// let threads = std::num::NonZeroUsize::new(2).unwrap();
/// lines_in_parallel(&mut reader, threads, make_line, |block| {
///     assert!(block.damage.is_none());
///     text.extend_from_slice(block.lines);
///     Ok(())
/// })
/// .unwrap();
/// let text = String::from_utf8(text).unwrap();
/// assert_eq!(text.lines().count(), 1000);
/// assert_eq!(text.lines().nth(999), Some("request 999 served"));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub fn lines_in_parallel<R, M, L, W>(
    reader: &mut Reader<R>,
    threads: NonZeroUsize,
    make_line: M,
    mut write: W,
) -> io::Result<()>
where
    R: Read,
    M: Fn() -> L + Sync,
    L: FnMut(&Record, &mut Vec<u8>),
    W: FnMut(BlockLines<'_>) -> io::Result<()>,
{
    if threads.get() == 1 {
        let mut line = make_line();
        let mut buffer = Vec::new();
        while let Some(block) = reader.next_block() {
            let (lines, damage) = match block {
                Ok(block) => decode(block, &mut line, buffer),
                Err(damage) => (buffer, Some(damage)),
            };
            let read = reader.offset();
            write(BlockLines {
                lines: &lines,
                damage,
                read,
            })?;
            buffer = lines_buffer(lines);
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let (done_sender, done) = mpsc::channel::<(u64, Decoded)>();
        let mut workers = Vec::with_capacity(threads.get());
        let mut handles = Vec::with_capacity(threads.get());
        for _ in 0..threads.get() {
            let (jobs, inbox) = mpsc::channel::<(u64, Block, Vec<u8>)>();
            let done_sender = done_sender.clone();
            let make_line = &make_line;
            handles.push(scope.spawn(move || {
                let mut line = make_line();
                for (sequence, block, lines) in inbox {
                    let result =
                        panic::catch_unwind(AssertUnwindSafe(|| decode(block, &mut line, lines)));
                    let failed = result.is_err();
                    if done_sender.send((sequence, result)).is_err() || failed {
                        break;
                    }
                }
            }));
            workers.push(jobs);
        }
        drop(done_sender);
        let outcome = hand_out(reader, threads, &workers, &done, &mut write);
        // Joined, not only waited for: each thread is gone, its thread-locals freed, when this
        // returns.
        drop(workers);
        drop(done);
        for handle in handles {
            // A panic was caught on the thread and sent.
            let _ = handle.join();
        }
        outcome
    })
}

/// The reading thread's part of [`lines_in_parallel`]: hands the blocks to the `workers` in
/// turn, at most twice `threads` at once, and writes their lines in order.
fn hand_out<R: Read, W: FnMut(BlockLines<'_>) -> io::Result<()>>(
    reader: &mut Reader<R>,
    threads: NonZeroUsize,
    workers: &[mpsc::Sender<(u64, Block, Vec<u8>)>],
    done: &mpsc::Receiver<(u64, Decoded)>,
    write: &mut W,
) -> io::Result<()> {
    let mut order = InOrder::default();
    let mut sent = 0u64;
    loop {
        // Room for one more block: the oldest results first.
        while order.decoding >= 2 * threads.get()
            || (order.decoding > 0 && order.bytes > IN_FLIGHT_BYTES)
        {
            order.receive(done)?;
            order.write_ready(write)?;
        }
        let Some(next) = reader.next_block() else {
            break;
        };
        let read = reader.offset();
        let pending = match next {
            Ok(block) => {
                let bytes = block.len();
                let lines = order.spare.pop().unwrap_or_default();
                let worker = &workers[(sent % workers.len() as u64) as usize];
                if worker.send((sent, block, lines)).is_err() {
                    // It stopped on a panic, which it sent first: resumed on its receipt.
                    loop {
                        order.receive(done)?;
                    }
                }
                order.decoding += 1;
                order.bytes += bytes;
                Pending::Decoding { read, bytes }
            }
            Err(damage) => Pending::Done(Vec::new(), Some(damage), read),
        };
        order.pending.insert(sent, pending);
        sent += 1;
        order.write_ready(write)?;
    }
    while order.decoding > 0 {
        order.receive(done)?;
        order.write_ready(write)?;
    }
    order.write_ready(write)
}

/// Decodes `block`, lining its records into `lines` (cleared first).
fn decode<L: FnMut(&Record, &mut Vec<u8>)>(
    mut block: Block,
    line: &mut L,
    mut lines: Vec<u8>,
) -> (Vec<u8>, Option<ReadError>) {
    lines.clear();
    while let Some(record) = block.next_record() {
        match record {
            Ok(record) => line(record, &mut lines),
            Err(damage) => return (lines, Some(damage)),
        }
    }
    (lines, None)
}

/// `lines` for reuse, unless one large block grew it.
fn lines_buffer(mut lines: Vec<u8>) -> Vec<u8> {
    if lines.capacity() > IN_FLIGHT_BYTES {
        lines = Vec::new();
    }
    lines.clear();
    lines
}

/// A block handed out, in the order of the file.
enum Pending {
    Decoding { read: u64, bytes: usize },
    Done(Vec<u8>, Option<ReadError>, u64),
}

/// The blocks handed out and not written yet, by their place in the file.
#[derive(Default)]
struct InOrder {
    pending: BTreeMap<u64, Pending>,
    /// The next block to write.
    next: u64,
    /// Blocks being decoded, and their payload bytes.
    decoding: usize,
    bytes: usize,
    /// Buffers of written blocks, for the next ones.
    spare: Vec<Vec<u8>>,
}

impl InOrder {
    /// Waits for one decoded block; resumes a decoding thread's panic.
    fn receive(&mut self, done: &mpsc::Receiver<(u64, Decoded)>) -> io::Result<()> {
        let Ok((sequence, result)) = done.recv() else {
            return Err(io::Error::other("the decoding threads stopped"));
        };
        let (lines, damage) = result.unwrap_or_else(|payload| panic::resume_unwind(payload));
        if let Some(Pending::Decoding { read, bytes }) = self.pending.remove(&sequence) {
            self.decoding -= 1;
            self.bytes -= bytes;
            self.pending
                .insert(sequence, Pending::Done(lines, damage, read));
        }
        Ok(())
    }

    /// Writes the blocks that are done, in order, up to the first that is not.
    fn write_ready<W: FnMut(BlockLines<'_>) -> io::Result<()>>(
        &mut self,
        write: &mut W,
    ) -> io::Result<()> {
        while let Some(Pending::Done(..)) = self.pending.get(&self.next) {
            let Some(Pending::Done(lines, damage, read)) = self.pending.remove(&self.next) else {
                break;
            };
            self.next += 1;
            write(BlockLines {
                lines: &lines,
                damage,
                read,
            })?;
            self.spare.push(lines_buffer(lines));
        }
        Ok(())
    }
}
