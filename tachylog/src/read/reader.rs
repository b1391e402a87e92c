//! [`Reader`]: the framing of a binary log (blocks behind a sync marker, with a length and a
//! CRC-32), resynchronising at the next intact block after damage.

use super::{ReadError, Record};
use crate::binary::decoder::BlockDecoder;
use crate::binary::{HEADER, MAX_PAYLOAD, OLDEST_VERSION, SYNC, VERSION};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::path::Path;

/// A block whose length runs past the end of the source, with nothing after its header that
/// looks like another block.
const CUT_SHORT_IN_BLOCK: &str = "a file cut short in a block";
/// A block whose length runs past the end of the source while another block marker follows
/// its header.
const DAMAGED_LENGTH: &str = "a damaged block length: it runs past the end of the file, \
                              and blocks follow";
/// Bytes asked of the source per read.
const CHUNK: usize = 256 << 10;

/// What the reader may spend on checksums that fail: [`CHECK_PER_BYTE`] bytes for each byte
/// it has read. A block is checked whole before a byte of it is used, so a file of crafted
/// headers, each claiming a long block that fails its check and starting inside the last
/// one's, would make the work grow with the square of its size; with the allowance spent, such
/// a block is damage without its check, and reading stays linear. A check that passes costs
/// nothing, and a block is read whole before it is checked, so an intact block is always
/// checked unless failed checks spent the allowance just before it.
const CHECK_PER_BYTE: u64 = 16;

/// Reads the records of a binary log from any [`Read`], in file order.
///
/// [`Reader::next_record`] lends each record (its buffers are reused: the fast way);
/// the [`Iterator`] impl yields owned copies. A damaged stretch yields one
/// [`ReadError::Damaged`] and the reader goes on at the next intact block; an I/O error ends
/// the reading.
///
/// ```
/// let damaged = [0xF7, b'T', b'L', b'B', b'L', b'K', 1, 0, 9, 0, 0, 0];
/// let mut reader = tachylog::read::Reader::new(&damaged[..]);
/// assert!(matches!(
///     reader.next(),
///     Some(Err(tachylog::read::ReadError::Damaged { offset: 0, .. }))
/// ));
/// assert!(reader.next().is_none());
/// ```
pub struct Reader<R> {
    source: R,
    /// Bytes read but not consumed are `buf[pos..end]`; the rest of `buf` is room for the next
    /// read, zeroed once when it is grown rather than at every read.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The offset in the source of `buf[pos]`.
    offset: u64,
    eof: bool,
    /// The current block's payload, where it stands in `buf` (which is not refilled before the
    /// block is done), its decoder and the payload's offset in the source.
    payload: Range<usize>,
    block: Option<(BlockDecoder, u64)>,
    record: Record,
    /// A source still being written: a block cut short at its end is waited for, not damage.
    follow: bool,
    /// Bytes of failing checksums still allowed (see [`CHECK_PER_BYTE`]).
    check_allowance: u64,
    /// Bytes moved in the buffer and checksummed: what the tests and the fuzz target bound.
    #[cfg(any(test, fuzzing))]
    work: u64,
}

impl Reader<BufReader<File>> {
    /// Opens the binary log at `path`.
    ///
    /// ```
    /// let missing = tachylog::read::Reader::open("/nonexistent/app.tlog");
    /// assert!(missing.is_err());
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ReadError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| ReadError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Reader::new(BufReader::with_capacity(0, file)))
    }
}

impl<R: Read> Reader<R> {
    /// Reads a binary log from `source`.
    pub fn new(source: R) -> Self {
        Reader {
            source,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            offset: 0,
            eof: false,
            payload: 0..0,
            block: None,
            record: Record::default(),
            follow: false,
            check_allowance: 0,
            #[cfg(any(test, fuzzing))]
            work: 0,
        }
    }

    /// Reads a source still being written (`tail -f`): at its end, [`Reader::next_record`]
    /// returns `None` for now, and a block cut short there is left to be completed rather than
    /// reported; the next call reads on from where it stopped.
    ///
    /// ```
    /// let mut reader = tachylog::read::Reader::new(&[0xF7, b'T'][..]).following(true);
    /// assert!(reader.next_record().is_none(), "a block begun, not damage");
    /// ```
    pub fn following(mut self, follow: bool) -> Self {
        self.follow = follow;
        self
    }

    /// Bytes of the source consumed so far (whole blocks, and skipped damage).
    ///
    /// ```
    /// let mut reader = tachylog::read::Reader::new(&b"not a binary log"[..]);
    /// while reader.next_record().is_some() {}
    /// assert_eq!(reader.offset(), 16);
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes moved in the buffer and checksummed so far.
    #[cfg(fuzzing)]
    pub(crate) fn work(&self) -> u64 {
        self.work
    }

    /// The next record, lent until the next call; `None` at the end of the source.
    ///
    /// ```
    /// let mut reader = tachylog::read::Reader::new(&b""[..]);
    /// assert!(reader.next_record().is_none());
    /// ```
    pub fn next_record(&mut self) -> Option<Result<&Record, ReadError>> {
        if self.follow && self.block.is_none() {
            // What was the end may have grown since.
            self.eof = false;
        }
        loop {
            if let Some((decoder, at)) = &mut self.block {
                let payload = &self.buf[self.payload.clone()];
                match next_in_block(decoder, payload, *at, &mut self.record) {
                    Some(Ok(())) => return Some(Ok(&self.record)),
                    Some(Err(e)) => {
                        self.block = None;
                        return Some(Err(e));
                    }
                    None => self.block = None,
                }
            }
            if let Err(e) = self.load_block()? {
                return Some(Err(e));
            }
        }
    }

    /// The next block whole, to be decoded on its own (on another thread, say): what is left of
    /// the block [`Reader::next_record`] is in, else the next intact block. `None` at the end
    /// of the source; an error for the damage skipped to reach a block, which the next call
    /// returns.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("tachylog-doc-next-block");
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// # let options = tachylog::SinkOptions::new().format(tachylog::Format::Binary);
    /// # let guard = tachylog::builder().file_with(dir.join("a.tlog"), options).init().unwrap();
    /// tachylog::info!("served {} items", 3u64);
    /// # drop(guard);
    /// let mut reader = tachylog::read::Reader::open(dir.join("a.tlog")).unwrap();
    /// let mut block = reader.next_block().unwrap().unwrap();
    /// let lines = std::thread::spawn(move || {
    ///     let mut messages = Vec::new();
    ///     while let Some(record) = block.next_record() {
    ///         messages.push(record.unwrap().message().to_string());
    ///     }
    ///     messages
    /// });
    /// assert_eq!(lines.join().unwrap(), ["served 3 items"]);
    /// assert!(reader.next_block().is_none());
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn next_block(&mut self) -> Option<Result<Block, ReadError>> {
        if self.follow && self.block.is_none() {
            self.eof = false;
        }
        if self.block.is_none() {
            if let Err(e) = self.load_block()? {
                return Some(Err(e));
            }
        }
        let (decoder, offset) = self.block.take()?;
        Some(Ok(Block {
            payload: self.buf[self.payload.clone()].to_vec(),
            decoder,
            offset,
            record: Record::default(),
        }))
    }

    /// Loads the next intact block: `None` at a clean end, an error for the damage skipped to
    /// reach it (the block, if any, is then read after it).
    fn load_block(&mut self) -> Option<Result<(), ReadError>> {
        let mut damaged: Option<(u64, &'static str)> = None;
        loop {
            let here = self.offset;
            let outcome = match self.try_block() {
                Ok(outcome) => outcome,
                Err(e) => {
                    self.stop();
                    return Some(Err(ReadError::Io(e)));
                }
            };
            let damage = |(offset, reason), to_end| ReadError::Damaged {
                offset,
                reason,
                skipped: here - offset,
                to_end,
            };
            match outcome {
                Some(Ok(())) => return Some(damaged.map_or(Ok(()), |d| Err(damage(d, false)))),
                None => return damaged.map(|d| Err(damage(d, true))),
                Some(Err(reason)) => {
                    let first = damaged.get_or_insert((here, reason));
                    self.consume(1);
                    if let Err(e) = self.skip_to_sync() {
                        self.stop();
                        return Some(Err(ReadError::Io(e)));
                    }
                    // A block that seemed to run past the end, with a block marker after its
                    // header: not a file cut short, but a length field that lies.
                    let marker_follows = self.end > self.pos;
                    if first.0 == here && reason == CUT_SHORT_IN_BLOCK && marker_follows {
                        first.1 = DAMAGED_LENGTH;
                    }
                }
            }
        }
    }

    /// The block at the current offset: loaded (`Ok`), not one (`Err`, nothing consumed), or
    /// the end of the source (`None`).
    fn try_block(&mut self) -> io::Result<Option<Result<(), &'static str>>> {
        self.fill(HEADER)?;
        let available = self.end - self.pos;
        if available == 0 {
            return Ok(None);
        }
        let head = &self.buf[self.pos..self.end];
        let waiting = self.follow && self.eof;
        if waiting && available < HEADER && SYNC.starts_with(&head[..available.min(SYNC.len())]) {
            return Ok(None);
        }
        if head.len() < SYNC.len() || head[..SYNC.len()] != SYNC {
            return Ok(Some(Err(if available < SYNC.len() {
                "a file cut short in a block header"
            } else {
                "not a block header"
            })));
        }
        if available < HEADER {
            return Ok(Some(Err("a file cut short in a block header")));
        }
        let version = head[6];
        if !(OLDEST_VERSION..=VERSION).contains(&version) || head[7] != 0 {
            return Ok(Some(Err("a block of an unknown format version")));
        }
        let len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        let crc = u32::from_le_bytes([head[12], head[13], head[14], head[15]]);
        if !(8..=MAX_PAYLOAD).contains(&len) {
            return Ok(Some(Err("an impossible block length")));
        }
        self.fill(HEADER + len)?;
        if self.end - self.pos < HEADER + len {
            if self.follow {
                return Ok(None);
            }
            return Ok(Some(Err(CUT_SHORT_IN_BLOCK)));
        }
        if len as u64 > self.check_allowance {
            return Ok(Some(Err(
                "a block header among too many that fail their checks to check them all",
            )));
        }
        #[cfg(any(test, fuzzing))]
        {
            self.work += len as u64;
        }
        let payload = self.pos + HEADER..self.pos + HEADER + len;
        if crc32fast::hash(&self.buf[payload.clone()]) != crc {
            self.check_allowance -= len as u64;
            return Ok(Some(Err("a block whose checksum does not match")));
        }
        let at = self.offset + HEADER as u64;
        self.consume(HEADER + len);
        // The length check above leaves room for the base time.
        self.block =
            BlockDecoder::new(&self.buf[payload.clone()], version).map(|decoder| (decoder, at));
        self.payload = payload;
        Ok(Some(Ok(())))
    }

    /// Consumes bytes up to the next sync marker, or to the end.
    fn skip_to_sync(&mut self) -> io::Result<()> {
        loop {
            let window = &self.buf[self.pos..self.end];
            if let Some(i) = window.windows(SYNC.len()).position(|w| w == SYNC) {
                self.consume(i);
                return Ok(());
            }
            // A marker may straddle what was read and what is not read (or, following, not
            // written) yet.
            let keep = if self.eof && !self.follow {
                0
            } else {
                SYNC.len() - 1
            };
            self.consume(window.len().saturating_sub(keep));
            if self.eof {
                return Ok(());
            }
            let want = self.end - self.pos + 1;
            self.fill(want.max(SYNC.len()))?;
        }
    }

    /// Reads until `n` bytes are available past `pos`, or to the end.
    ///
    /// What was consumed is dropped from the buffer only when it is at least half of it: a
    /// move of the rest for every block tried would make a file of headers that claim more
    /// than the file holds take time in the square of its size.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n || self.eof {
            return Ok(());
        }
        if self.pos > 0 && self.pos >= self.end / 2 {
            #[cfg(any(test, fuzzing))]
            {
                self.work += (self.end - self.pos) as u64;
            }
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n && !self.eof {
            let start = self.end;
            // Grown a chunk at a time, as bytes arrive: a damaged length field cannot make the
            // reader allocate more than the source holds.
            let wanted = self.pos + n;
            let room = start + CHUNK.min(wanted - start).max(CHUNK / 4);
            if self.buf.len() < room {
                self.buf.resize(room, 0);
            }
            match self.source.read(&mut self.buf[start..room]) {
                Ok(0) => self.eof = true,
                Ok(read) => {
                    self.end = start + read;
                    self.check_allowance = self
                        .check_allowance
                        .saturating_add(read as u64 * CHECK_PER_BYTE);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.pos);
        self.pos += n;
        self.offset += n as u64;
    }

    /// After an I/O error: nothing more is read.
    fn stop(&mut self) {
        self.eof = true;
        self.buf = Vec::new();
        self.pos = 0;
        self.end = 0;
        self.block = None;
    }
}

/// One block of a binary log, checked whole, with what it takes to decode its records without
/// the [`Reader`] that read it, on any thread ([`Reader::next_block`]).
pub struct Block {
    payload: Vec<u8>,
    decoder: BlockDecoder,
    /// The payload's offset in the source.
    offset: u64,
    record: Record,
}

impl Block {
    /// The block's next record, lent until the next call: `None` at its end. A damaged entry
    /// is an error, after which the rest of the block is unreadable (`None`).
    ///
    /// See [`Reader::next_block`] for an example.
    pub fn next_record(&mut self) -> Option<Result<&Record, ReadError>> {
        match next_in_block(
            &mut self.decoder,
            &self.payload,
            self.offset,
            &mut self.record,
        )? {
            Ok(()) => Some(Ok(&self.record)),
            Err(e) => Some(Err(e)),
        }
    }

    /// The payload's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.payload.len()
    }
}

/// The next record of a block's `payload`, which starts at `at` in the source, into `record`:
/// `None` at the block's end, an error for a damaged entry (the rest of the block with it).
fn next_in_block(
    decoder: &mut BlockDecoder,
    payload: &[u8],
    at: u64,
    record: &mut Record,
) -> Option<Result<(), ReadError>> {
    Some(match decoder.next(payload, &mut record.0)? {
        Ok(()) => Ok(()),
        Err((entry, reason)) => Err(ReadError::Damaged {
            offset: at + entry as u64,
            reason,
            skipped: (payload.len() - entry) as u64,
            to_end: false,
        }),
    })
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_record()?.cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// One block holding one text record, "hi", from thread 7 named "t".
    fn block() -> Vec<u8> {
        let mut payload = 0i64.to_le_bytes().to_vec();
        payload.extend_from_slice(&[0x02, 0, 7, 1, b't']);
        payload.extend_from_slice(&[0x11, 0, 0, 0, 3, 1, b'a', 1, b'f', 1, 2, b'h', b'i', 0, 0]);
        framed(VERSION, &payload)
    }

    /// `payload` as a block of format `version`: header, checksum, payload.
    fn framed(version: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = SYNC.to_vec();
        out.extend_from_slice(&[version, 0]);
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// A block of format `version` holding one record of the call site `hex {:x} {:>4}`, its
    /// values the u64 10 and the u64 7, as a writer of version 1 keeps `{:x}` of 16 ("10").
    fn call_site_block(version: u8) -> Vec<u8> {
        call_site_block_with(version, &[0x04, 10, 0x04, 7])
    }

    /// [`call_site_block`] with other bytes for the record's two values.
    fn call_site_block_with(version: u8, values: &[u8]) -> Vec<u8> {
        use crate::binary::wire::{put_str, put_varint};
        let mut payload = 0i64.to_le_bytes().to_vec();
        payload.extend_from_slice(&[0x02, 0, 7, 1, b't']);
        payload.extend_from_slice(&[0x01, 0, 3]);
        for text in ["a", "f"] {
            put_str(&mut payload, text);
        }
        put_varint(&mut payload, 1);
        put_str(&mut payload, "hex {:x} {:>4}");
        put_varint(&mut payload, 2);
        put_str(&mut payload, "hex ");
        put_str(&mut payload, " ");
        put_str(&mut payload, "");
        put_varint(&mut payload, 0);
        payload.extend_from_slice(&[0x10, 0, 0, 0, 0]);
        payload.extend_from_slice(values);
        framed(version, &payload)
    }

    #[test]
    fn a_version_1_block_writes_typed_values_as_plain_and_version_2_applies_the_spec() {
        let message = |version| {
            let mut reader = Reader::new(std::io::Cursor::new(call_site_block(version)));
            let record = reader.next_record().unwrap().unwrap();
            record.message().to_string()
        };
        assert_eq!(message(1), "hex 10 7");
        assert_eq!(message(2), "hex a    7");
        let mut reader = Reader::new(std::io::Cursor::new(call_site_block(VERSION + 1)));
        match reader.next_record() {
            Some(Err(e)) => assert!(e.to_string().contains("unknown format version"), "{e}"),
            _ => panic!("a block of a later version was read"),
        }
    }

    #[test]
    fn texts_are_defined_once_per_block_and_forged_references_are_refused() {
        let read = |version, values: &[u8]| {
            let mut reader =
                Reader::new(std::io::Cursor::new(call_site_block_with(version, values)));
            match reader.next_record() {
                Some(Ok(record)) => Ok(record.message().to_string()),
                Some(Err(e)) => Err(e.to_string()),
                None => Err("nothing".into()),
            }
        };
        // A text defined (0x0A), then referred to (0x0B 0): a `{:x}` of text is not possible,
        // but the reader takes what the format says and writes texts as they are.
        let defined = [0x0A, 2, b'a', b'b', 0x0B, 0];
        assert_eq!(read(2, &defined).unwrap(), "hex ab ab");
        let forged = read(2, &[0x0A, 2, b'a', b'b', 0x0B, 1]).unwrap_err();
        assert!(forged.contains("undefined text"), "{forged}");
        let in_version_1 = read(1, &defined).unwrap_err();
        assert!(in_version_1.contains("malformed text"), "{in_version_1}");
        // A typed value under a spec its type lacks: `{:x}` of a bool.
        let no_trait = read(2, &[0x01, 0x04, 7]).unwrap_err();
        assert!(no_trait.contains("no such formatting trait"), "{no_trait}");
    }

    /// A source that another party appends to, as a log file being written.
    struct Growing(Rc<RefCell<Vec<u8>>>, usize);
    impl Read for Growing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let data = self.0.borrow();
            let n = buf.len().min(data.len() - self.1);
            buf[..n].copy_from_slice(&data[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn a_follower_waits_for_a_block_being_written_and_reads_it_whole() {
        let block = block();
        for cut in 1..block.len() {
            let data = Rc::new(RefCell::new(block[..cut].to_vec()));
            let mut reader = Reader::new(Growing(data.clone(), 0)).following(true);
            assert!(reader.next_record().is_none(), "cut at {cut}");
            data.borrow_mut().extend_from_slice(&block[cut..]);
            data.borrow_mut().extend_from_slice(&block);
            for _ in 0..2 {
                let record = reader.next_record().unwrap().unwrap();
                assert_eq!((record.message(), record.thread_id()), ("hi", 7));
            }
            assert!(reader.next_record().is_none());
        }
    }

    /// Reads all of `input` through a source that hands out at most 4 KiB a call; returns the
    /// reader's work (bytes moved and checksummed) and the records read.
    fn work_to_read(input: &[u8]) -> (u64, usize) {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(4096);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut reader = Reader::new(Trickle(input));
        let mut records = 0;
        while let Some(item) = reader.next_record() {
            records += item.is_ok() as usize;
        }
        assert_eq!(reader.offset(), input.len() as u64, "every byte consumed");
        (reader.work, records)
    }

    /// A block header with the given payload length and a checksum that does not match.
    fn lying_header(len: u32) -> Vec<u8> {
        let mut header = SYNC.to_vec();
        header.extend_from_slice(&[VERSION, 0]);
        header.extend_from_slice(&len.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        header
    }

    /// Headers that lie about their lengths cost the reader work in proportion to the file,
    /// whether they claim more than the file holds (each used to move the whole buffer) or
    /// less (each used to be checksummed over what follows it), and the intact blocks among
    /// them are still read.
    #[test]
    fn headers_that_lie_about_lengths_take_linear_work() {
        for claim in [u32::MAX >> 2, 512 << 10, 64 << 10] {
            let mut input = Vec::new();
            input.extend_from_slice(&block());
            while input.len() < 1 << 20 {
                input.extend_from_slice(&lying_header(claim));
            }
            input.extend_from_slice(&block());
            let (work, records) = work_to_read(&input);
            assert_eq!(records, 2, "claim {claim}: the intact blocks around them");
            let bound = (CHECK_PER_BYTE + 4) * input.len() as u64;
            assert!(
                work <= bound,
                "claim {claim}: {work} bytes of work for {} bytes of input",
                input.len()
            );
        }
    }

    /// The damage reports of `input`, as `(offset, reason, to_end)`, and the records read.
    fn damage_in(input: &[u8]) -> (Vec<(u64, &'static str, bool)>, usize) {
        let mut reader = Reader::new(input);
        let (mut damage, mut records) = (Vec::new(), 0);
        while let Some(next) = reader.next_record() {
            match next {
                Ok(_) => records += 1,
                Err(ReadError::Damaged {
                    offset,
                    reason,
                    to_end,
                    ..
                }) => damage.push((offset, reason, to_end)),
                Err(e) => panic!("{e}"),
            }
        }
        (damage, records)
    }

    #[test]
    fn a_length_field_that_lies_is_not_called_a_file_cut_short() {
        let mut input = block();
        input[8..12].copy_from_slice(&(1u32 << 20).to_le_bytes());
        input.extend_from_slice(&block());
        assert_eq!(damage_in(&input), (vec![(0, DAMAGED_LENGTH, false)], 1));

        // The same block cut short, with nothing after it: that is a file cut short.
        let block = block();
        assert_eq!(
            damage_in(&block[..block.len() - 3]),
            (vec![(0, CUT_SHORT_IN_BLOCK, true)], 0)
        );
    }

    #[test]
    fn junk_at_the_end_is_not_said_to_be_followed_by_a_block() {
        let mut input = block();
        input.extend_from_slice(b"junk where a block should be");
        let (damage, records) = damage_in(&input);
        assert_eq!(records, 1);
        assert_eq!(damage.len(), 1);
        assert!(damage[0].2, "{damage:?}");
        let mut reader = Reader::new(&input[..]);
        let _ = reader.next_record();
        let message = reader.next_record().unwrap().unwrap_err().to_string();
        assert!(message.contains("no intact block follows"), "{message}");

        // Junk between blocks: skipped to the next one, which is read.
        let mut input = block();
        input.extend_from_slice(b"junk");
        input.extend_from_slice(&block());
        let (damage, records) = damage_in(&input);
        assert_eq!(records, 2);
        assert_eq!(damage.len(), 1);
        assert!(!damage[0].2, "{damage:?}");
    }

    #[test]
    fn a_reader_that_does_not_follow_reports_the_cut_block() {
        let block = block();
        let mut reader = Reader::new(&block[..block.len() - 1]);
        assert!(matches!(
            reader.next_record(),
            Some(Err(ReadError::Damaged { offset: 0, .. }))
        ));
        assert!(reader.next_record().is_none());
    }
}
