//! Entry points for the fuzz targets in `fuzz/`, compiled only under `--cfg fuzzing` (what
//! cargo-fuzz builds with). Each takes untrusted bytes or text, runs one of the crate's private
//! parsers or decoders on it, and panics if a property the back end relies on does not hold;
//! the public parsers (`Filter`, `Pattern`, `TimeZone::posix`, the `OTEL_*` variables read by
//! `OtlpSink::builder`) are fuzzed through the public API directly.

use std::fmt::Write as _;
use std::mem::MaybeUninit;

use crate::codec::render::{self, Applied};
use crate::codec::{
    CopyCodec, Decoder, ListCodec, LossyCodec, PreformattedCodec, StrCodec, TextBuf,
};
use crate::fields::Fields;

/// Decodes `bytes` as a structured-fields item stream (`fields/wire.rs`, the encoding the
/// facades write into dynamic records) and renders what it got. Malformed input must stop the
/// decoding, never panic.
pub fn fields_wire(bytes: &[u8]) {
    let mut fields = Fields::new();
    crate::fields::wire::decode(bytes, &mut fields);
    let mut out = String::new();
    let _ = write!(out, "{fields:?}");
}

/// Walks `bytes` as a record's argument bytes with the codecs and specs the first bytes choose,
/// as the back end does with a call site's `Decode`: no input may panic or read out of
/// bounds, and what is rendered must be UTF-8.
///
/// Layout: `bytes[0] % 17` steps, then two bytes per step (which read, which spec), then the
/// argument bytes. Only `Copy` types valid for every bit pattern are read, since a `CopyCodec`
/// payload is trusted to hold the type its `Decode` names (the codec is chosen by the crate,
/// never by the bytes).
pub fn decoder(bytes: &[u8]) {
    let Some((&steps, rest)) = bytes.split_first() else {
        return;
    };
    let steps = usize::from(steps % 17);
    if rest.len() < 2 * steps {
        return;
    }
    let (program, args) = rest.split_at(2 * steps);
    let args: Vec<MaybeUninit<u8>> = args.iter().map(|&b| MaybeUninit::new(b)).collect();
    let mut decoder = Decoder::new(&args);
    let mut out = Vec::new();
    let mut fields = Fields::new();
    for step in program.chunks_exact(2) {
        let (op, spec) = (step[0], step[1]);
        let spec = Applied {
            width: (spec & 1 != 0).then_some(usize::from(spec >> 4)),
            precision: (spec & 2 != 0).then_some(usize::from((spec >> 2) & 3)),
            flags: None,
        };
        let mut text = TextBuf::new(&mut out);
        let _ = match op % 20 {
            0 => render::display::<StrCodec>(&mut decoder, &spec, &mut text),
            1 => render::debug::<StrCodec>(&mut decoder, &spec, &mut text),
            2 => render::display::<LossyCodec>(&mut decoder, &spec, &mut text),
            3 => render::debug::<LossyCodec>(&mut decoder, &spec, &mut text),
            4 => render::display::<PreformattedCodec>(&mut decoder, &spec, &mut text),
            5 => render::lower_hex::<PreformattedCodec>(&mut decoder, &spec, &mut text),
            6 => render::display::<CopyCodec<u64>>(&mut decoder, &spec, &mut text),
            7 => render::lower_hex::<CopyCodec<u64>>(&mut decoder, &spec, &mut text),
            8 => render::debug::<CopyCodec<i64>>(&mut decoder, &spec, &mut text),
            9 => render::display::<CopyCodec<f64>>(&mut decoder, &spec, &mut text),
            10 => render::debug::<CopyCodec<f32>>(&mut decoder, &spec, &mut text),
            11 => render::lower_exp::<CopyCodec<f64>>(&mut decoder, &spec, &mut text),
            12 => render::binary::<CopyCodec<i128>>(&mut decoder, &spec, &mut text),
            13 => render::debug::<ListCodec<StrCodec>>(&mut decoder, &spec, &mut text),
            14 => render::debug::<ListCodec<CopyCodec<u32>>>(&mut decoder, &spec, &mut text),
            15 => render::debug::<ListCodec<CopyCodec<f64>>>(&mut decoder, &spec, &mut text),
            16 => {
                let _ = decoder.count();
                Ok(())
            }
            17 => {
                render::push_native::<CopyCodec<i64>>(&mut decoder, "n", &mut fields);
                Ok(())
            }
            18 => {
                render::push_native::<StrCodec>(&mut decoder, "s", &mut fields);
                Ok(())
            }
            _ => {
                render::push_debug::<LossyCodec>(&mut decoder, "l", &mut fields);
                Ok(())
            }
        };
    }
    assert!(
        std::str::from_utf8(&out).is_ok(),
        "rendered arguments are not UTF-8: {out:?}"
    );
    let _ = format!("{fields:?}");
}

/// Parses `pattern` as a rolling file name pattern. When it parses, the file of the period
/// holding `unix_nanos` must hold that instant, and the pattern must recognise the file's own
/// name as its base file (index 0, not compressed), or retention would never find it.
#[cfg(feature = "rolling")]
pub fn rolling_name(pattern: &str, unix_nanos: i64) {
    let Ok(parsed) = crate::sink::FuzzedNamePattern::parse(pattern) else {
        return;
    };
    let _ = parsed.period();
    let zone = crate::zone::TimeZone::utc();
    let period = parsed.period_file(unix_nanos, &zone);
    assert!(
        period.contains(unix_nanos),
        "{pattern:?} at {unix_nanos}: period {period:?} does not contain the instant"
    );
    let _ = parsed.fixed_root();
    let _ = parsed.indexed(&period.base, 3);
    if let Some(name) = period.base.file_name().and_then(|name| name.to_str()) {
        let recognised = parsed.recognise_file(name);
        assert!(
            recognised
                .as_ref()
                .is_some_and(|r| r.index == 0 && !r.compressed),
            "{pattern:?}: its own file {name:?} is recognised as {recognised:?}"
        );
    }
}

/// Reads `bytes` as a TZif file, which `TZ`, `TZDIR` or whoever wrote `/etc/localtime` may fill
/// with anything. A zone that parses must date every instant: the time column with its RFC 3339
/// offset stays ASCII of the column's width, and (with `rolling`) the hourly and the daily file
/// of `unix_nanos` and of the epoch hold their instant.
pub fn tzif(bytes: &[u8], unix_nanos: i64) {
    let Ok(zone) = crate::zone::TimeZone::from_tzif(bytes) else {
        return;
    };
    let mut column = crate::format::time::TimeCache::new(zone.clone());
    for at in [unix_nanos, 0, -1, i64::MIN, i64::MAX] {
        let mut out = Vec::new();
        column.write_rfc3339(at, &mut out);
        assert!(
            out.is_ascii() && out.len() > 26 && out[..26].iter().all(|b| *b != 0),
            "{at}: {out:?}"
        );
    }
    #[cfg(feature = "rolling")]
    for pattern in ["app.%Y-%m-%d-%H.log", "app.%Y%m%d.log"] {
        let Ok(parsed) = crate::sink::FuzzedNamePattern::parse(pattern) else {
            unreachable!("{pattern} is a valid pattern");
        };
        for at in [unix_nanos, 0] {
            let period = parsed.period_file(at, &zone);
            assert!(
                period.contains(at),
                "{pattern:?} at {at}: period {period:?} does not contain the instant"
            );
        }
    }
}

/// Reads `bytes` as a binary log: as they are (the framing: sync markers, lengths, checksums,
/// resynchronisation), and wrapped in one block with a valid header and checksum (the payload's
/// tables and records, which random bytes would not otherwise reach). No input may panic; every
/// record must render as UTF-8 text, JSON and logfmt lines; the reader must consume its whole
/// input; and its work (bytes moved and checksummed) must stay within [`WORK_PER_BYTE`] times
/// the input's length.
///
/// One input in [`TIMED_ONE_IN`] is also repeated to [`TILED`] bytes and read against a floor
/// of [`FLOOR_BYTES_PER_SECOND`]: work that grows faster than the input anywhere in the
/// reader (headers that make it move or check its buffer again and again) shows there, where a
/// few kilobytes would hide it.
pub fn binary_reader(bytes: &[u8]) {
    read_binary_log(bytes);
    if bytes.is_empty() || crc32fast::hash(bytes) % TIMED_ONE_IN != 0 {
        return;
    }
    let tiled: Vec<u8> = bytes.iter().copied().cycle().take(TILED).collect();
    let started = std::time::Instant::now();
    let mut reader = crate::read::Reader::new(&tiled[..]);
    while reader.next_record().is_some() {}
    let elapsed = started.elapsed().as_secs_f64();
    let floor = GRACE_SECONDS + TILED as f64 / FLOOR_BYTES_PER_SECOND;
    assert!(
        elapsed < floor,
        "{TILED} bytes read in {elapsed:.2} s: slower than {FLOOR_BYTES_PER_SECOND} bytes/s"
    );
}

/// See [`binary_reader`].
const WORK_PER_BYTE: u64 = 32;
const TIMED_ONE_IN: u32 = 64;
const TILED: usize = 1 << 20;
/// A linear reader reads tens of megabytes a second in a fuzzing build (instrumented,
/// sanitised).
const FLOOR_BYTES_PER_SECOND: f64 = 4e6;
/// Time any input may take beside that (a cold cache, a busy machine).
const GRACE_SECONDS: f64 = 0.5;

fn read_binary_log(bytes: &[u8]) {
    // The bytes as the payload of a block of each version a reader reads.
    let block = |version: u8| {
        let mut block = Vec::with_capacity(bytes.len() + crate::binary::HEADER);
        block.extend_from_slice(&crate::binary::SYNC);
        block.push(version);
        block.push(0);
        block.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        block.extend_from_slice(&crc32fast::hash(bytes).to_le_bytes());
        block.extend_from_slice(bytes);
        block
    };
    let (old, current) = (
        block(crate::binary::OLDEST_VERSION),
        block(crate::binary::VERSION),
    );
    let zone = crate::zone::TimeZone::utc();
    let mut renderers = [
        crate::read::Renderer::text(crate::Pattern::default(), zone.clone()),
        crate::read::Renderer::json(zone.clone()),
        crate::read::Renderer::logfmt(zone),
    ];
    // What each record and damage report of the raw input reads as, for the same on two
    // threads below (the raw input is the one with framing to get wrong).
    let mut raw_one_by_one = None;
    for input in [bytes, &old[..], &current[..]] {
        let mut reader = crate::read::Reader::new(input);
        let mut line = Vec::new();
        let mut one_by_one = Vec::new();
        while let Some(item) = reader.next_record() {
            let record = match item {
                Ok(record) => record,
                Err(damage) => {
                    one_by_one.extend_from_slice(format!("{damage}\n").as_bytes());
                    continue;
                }
            };
            one_by_one.extend_from_slice(record.message().as_bytes());
            one_by_one.push(b'\n');
            for renderer in &mut renderers {
                line.clear();
                renderer.render(record, &mut line);
                assert!(
                    std::str::from_utf8(&line).is_ok(),
                    "a line that is not UTF-8"
                );
            }
        }
        assert_eq!(reader.offset(), input.len() as u64, "input left unread");
        assert!(
            reader.work() <= WORK_PER_BYTE * input.len() as u64 + 4096,
            "{} bytes of work for {} bytes",
            reader.work(),
            input.len()
        );
        raw_one_by_one.get_or_insert(one_by_one);
    }
    let mut in_parallel = Vec::new();
    let make_line = || {
        |record: &crate::read::Record, out: &mut Vec<u8>| {
            out.extend_from_slice(record.message().as_bytes());
            out.push(b'\n');
        }
    };
    let threads = std::num::NonZeroUsize::new(2).expect("two");
    let mut reader = crate::read::Reader::new(bytes);
    crate::read::lines_in_parallel(&mut reader, threads, make_line, |block| {
        in_parallel.extend_from_slice(block.lines);
        if let Some(damage) = block.damage {
            in_parallel.extend_from_slice(format!("{damage}\n").as_bytes());
        }
        Ok(())
    })
    .expect("no write fails");
    assert!(
        raw_one_by_one.is_some_and(|one_by_one| in_parallel == one_by_one),
        "two threads read otherwise"
    );
}

/// Reads a record the way recovering a spool does (`format::shaped`): a format string, a shape
/// and argument bytes, all untrusted. Layout: `bytes[0]` the format string's length `f`, then
/// its bytes; then a byte `s`, the shape's length, then its bytes; the rest are the argument
/// bytes. The shape is read as it is and again behind a valid header (this target's `usize`,
/// little-endian, the slot count from its first byte), so random bytes reach the slots. No
/// input may panic; an error must leave the message and fields as they were.
pub fn spool_args(bytes: &[u8]) {
    use crate::codec::shape::Shape;
    use crate::format::shaped::{decode, SiteText};
    let take = |bytes: &[u8], at: usize| -> Option<(usize, usize)> {
        let len = usize::from(*bytes.get(at)?);
        (at + 1 + len <= bytes.len()).then_some((at + 1, at + 1 + len))
    };
    let Some((format_start, format_end)) = take(bytes, 0) else {
        return;
    };
    let Some((shape_start, shape_end)) = take(bytes, format_end) else {
        return;
    };
    let Ok(format) = std::str::from_utf8(&bytes[format_start..format_end]) else {
        return;
    };
    let shape = &bytes[shape_start..shape_end];
    let args = &bytes[shape_end..];
    let keys = vec!["a".to_string(), "b".to_string()];
    let sites = [0, 1, 2].map(|k| SiteText::parse(format, keys[..k].to_vec()));
    let mut headed = vec![1, std::mem::size_of::<usize>() as u8, 0];
    headed.extend_from_slice(shape);
    for candidate in [shape, &headed[..]] {
        let Ok(shape) = Shape::parse(candidate) else {
            continue;
        };
        for site in sites.iter().flatten() {
            let mut message = String::from("before");
            let mut fields = Fields::new();
            if decode(
                site,
                &shape,
                args,
                message.len() % 2 == 0,
                &mut message,
                &mut fields,
            )
            .is_err()
            {
                assert_eq!(message, "before", "an error left part of a message");
                assert!(fields.is_empty(), "an error left fields");
            }
        }
    }
}

/// Recovers a dead process's spool made from untrusted bytes (`read/spool.rs`), in a private
/// directory of its own under `/dev/shm` (or the temporary directory): `bytes[0..2]` the
/// length of a `defs` file (LE), then those bytes, then a ring's frames, whose last
/// [`SPOOL_CONTROL`] bytes (when there are that many) say how the rest of the directory looks:
/// which entries are replaced by a symbolic link to `/dev/zero`, a FIFO, a directory or a file
/// of another mode; the clock's calibration; the committed cut and position, and where the
/// ring's head is; whether a large record's body is saved. No input may panic or hang, and
/// every recovered record must render as UTF-8 text, JSON and logfmt lines.
#[cfg(unix)]
pub fn spool_recovery(bytes: &[u8]) {
    let Some(len) = bytes.get(..2) else {
        return;
    };
    let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
    let rest = &bytes[2..];
    let (defs, rest) = rest.split_at(len.min(rest.len()));
    let (storage, control) = match rest.len().checked_sub(SPOOL_CONTROL) {
        Some(at) => rest.split_at(at),
        None => (rest, &[0u8; SPOOL_CONTROL][..]),
    };
    let base = ["/dev/shm", "/tmp"]
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.is_dir())
        .map_or_else(std::env::temp_dir, |p| p.to_path_buf());
    let Ok(root) = tempfile_dir(&base) else {
        return;
    };
    if build_spool(root.path(), defs, storage, control).is_ok() {
        let records = crate::read::fuzz_spool(root.path());
        render_every_way(&records);
    }
}

/// Bytes at the end of a `spool_recovery` input that shape the directory.
#[cfg(unix)]
const SPOOL_CONTROL: usize = 40;

/// A private directory removed when dropped.
#[cfg(unix)]
struct TempDir(std::path::PathBuf);

#[cfg(unix)]
impl TempDir {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

#[cfg(unix)]
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(unix)]
fn tempfile_dir(base: &std::path::Path) -> std::io::Result<TempDir> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = base.join(format!("tachylog-fuzz-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::DirBuilder::new().mode(0o700).create(&path)?;
    Ok(TempDir(path))
}

/// Makes the dead process's directory `1.1` under `root` (see [`spool_recovery`]).
#[cfg(unix)]
fn build_spool(
    root: &std::path::Path,
    defs: &[u8],
    storage: &[u8],
    control: &[u8],
) -> std::io::Result<()> {
    use crate::queue::spool::layout::*;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let word = |at: usize| u64::from_le_bytes(control[at..at + 8].try_into().unwrap_or([0; 8]));
    let flags = control[0];
    let dir = root.join("1.1");
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let hostile = |name: &str, how: u8| -> std::io::Result<()> {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        match how % 4 {
            0 => std::os::unix::fs::symlink("/dev/zero", &path),
            1 => {
                let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                    .map_err(std::io::Error::other)?;
                // SAFETY: a valid NUL-terminated path.
                match unsafe { libc::mkfifo(c.as_ptr(), 0o600) } {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            }
            2 => std::fs::create_dir(&path),
            _ => {
                std::fs::write(&path, b"")?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))
            }
        }
    };
    if flags & 0x80 == 0 {
        std::fs::write(dir.join(LOCK), b"")?;
    }
    // The state: magic, widths, cut 1 committed, the clock and one ledger entry from `control`.
    let mut state = vec![0u8; STATE_BYTES];
    state[..8].copy_from_slice(&STATE_MAGIC);
    state[8..12].copy_from_slice(&8u32.to_le_bytes());
    state[12..16].copy_from_slice(&8u32.to_le_bytes());
    state[STATE_CURRENT..STATE_CURRENT + 8].copy_from_slice(&1u64.to_le_bytes());
    state[STATE_CLOCK..STATE_CLOCK + 8].copy_from_slice(&2u64.to_le_bytes());
    state[STATE_CLOCK + 8..STATE_CLOCK + 32].copy_from_slice(&control[1..25]);
    let slot = STATE_SLOTS + SLOT_BYTES;
    state[slot..slot + 8].copy_from_slice(&1u64.to_le_bytes());
    state[slot + 8..slot + 16].copy_from_slice(&1u64.to_le_bytes());
    state[slot + 16..slot + 40].copy_from_slice(&control[8..32]);
    std::fs::write(dir.join(STATE), &state)?;
    std::fs::write(dir.join(DEFS), defs)?;
    // The ring: its storage from `storage`, its committed position and head from `control`.
    let capacity = storage.len().clamp(64, 1 << 16).next_power_of_two();
    let mut ring = vec![0u8; PAGE + capacity];
    ring[PAGE..PAGE + storage.len().min(capacity)]
        .copy_from_slice(&storage[..storage.len().min(capacity)]);
    let committed = word(25) & !7 & (capacity as u64 * 4 - 1);
    let head = committed.wrapping_add(u64::from(control[33]) * 8 % (capacity as u64 + 64));
    let h = RING_HEADER;
    ring[h..h + 8].copy_from_slice(&RING_MAGIC);
    ring[h + RH_USIZE_BYTES..h + RH_USIZE_BYTES + 4].copy_from_slice(&8u32.to_le_bytes());
    ring[h + RH_CAPACITY..h + RH_CAPACITY + 8].copy_from_slice(&(capacity as u64).to_le_bytes());
    ring[h + RH_HEAD_OFFSET..h + RH_HEAD_OFFSET + 8].copy_from_slice(&0u64.to_le_bytes());
    ring[..8].copy_from_slice(&head.to_le_bytes());
    ring[h + RH_SERIAL..h + RH_SERIAL + 8].copy_from_slice(&1u64.to_le_bytes());
    ring[h + RH_COMMITTED..h + RH_COMMITTED + 8].copy_from_slice(&1u64.to_le_bytes());
    ring[h + RH_COMMITTED + 8..h + RH_COMMITTED + 16].copy_from_slice(&committed.to_le_bytes());
    let name_len = usize::from(control[34] % 16);
    ring[h + RH_NAME..h + RH_NAME + 2].copy_from_slice(&(name_len as u16).to_le_bytes());
    ring[h + RH_NAME + 2..h + RH_NAME + 2 + name_len]
        .copy_from_slice(&control[35..35 + name_len.min(5)].repeat(4)[..name_len]);
    std::fs::write(dir.join(format!("{RING_PREFIX}1")), &ring)?;
    if flags & 0x01 != 0 {
        std::fs::write(dir.join(large_name(1, committed)), defs)?;
    }
    // Entries that are not what their names say.
    for (bit, name) in [
        (0x02, "ring-2"),
        (0x04, "ring-1"),
        (0x08, STATE),
        (0x10, DEFS),
        (0x20, LOCK),
    ] {
        if flags & bit != 0 {
            hostile(name, control[36].wrapping_add(bit))?;
        }
    }
    if flags & 0x40 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))?;
    }
    Ok(())
}

/// Renders `records` as every sink would: text, JSON and logfmt lines (which must be UTF-8),
/// and a binary log.
#[cfg(unix)]
fn render_every_way(records: &[crate::binary::decoder::Decoded]) {
    let zone = crate::zone::TimeZone::utc();
    let mut renderers = [
        crate::read::Renderer::text(crate::Pattern::default(), zone.clone()),
        crate::read::Renderer::json(zone.clone()),
        crate::read::Renderer::logfmt(zone),
    ];
    let mut line = Vec::new();
    let mut encoder = crate::binary::encoder::Encoder::new(usize::MAX);
    for record in records {
        for renderer in &mut renderers {
            line.clear();
            renderer.render_decoded(record, &mut line);
            assert!(
                std::str::from_utf8(&line).is_ok(),
                "a line that is not UTF-8"
            );
        }
        if encoder.encode(&crate::read::view_of(record)) {
            encoder.close_block(|_| ());
        }
    }
    encoder.close_block(|_| ());
}

/// Reads a spool's write journal, settlement log and stripe record (`queue/spool/journal.rs`)
/// from untrusted bytes: once as they are, and once framed as valid entries (their lengths and
/// checksums made right), so that random bytes reach the payload parsers behind the CRC. Input:
/// chunks of `[kind, length, bytes…]`. No input may panic, and what is read must add up: every
/// unit inside its batch, every landing inside its batch.
#[cfg(unix)]
pub fn spool_journal(bytes: &[u8]) {
    use crate::queue::spool::journal;
    let mut framed = Vec::new();
    let mut rest = bytes;
    while let [kind, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let payload = &tail[..len];
        framed.extend_from_slice(&u32::from(*kind % 4).to_le_bytes());
        framed.extend_from_slice(&(len as u32).to_le_bytes());
        framed.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        framed.extend_from_slice(payload);
        rest = &tail[len..];
    }
    for input in [bytes, &framed[..]] {
        for write in journal::read(input) {
            assert!(write
                .units
                .iter()
                .all(|u| u.start <= u.end && u.end <= write.len));
            assert!(write
                .landed
                .iter()
                .all(|&(offset, count, _)| offset + count <= write.len));
        }
        let _ = journal::read_settled(input);
        let _ = journal::parse_current_write(input);
    }
}

/// An outbox segment (`sink/outbox/`) read back as an adopting outbox reads it, on untrusted
/// bytes: as they are, and as frames with valid checksums built from chunks `[count, length,
/// bytes…]` (so that the format's count is reached). The format counts one record per byte
/// 0x12, as OTLP's counts one per `log_records` tag. No input may panic; the valid frames must
/// end inside the input and hold no more records than it has bytes.
#[cfg(unix)]
pub fn outbox_segment(bytes: &[u8]) {
    use crate::sink::outbox::store;
    let format = crate::OutboxFormat {
        count_records: |payload| Some(payload.iter().filter(|&&b| b == 0x12).count() as u64),
        check_meta: |_| true,
    };
    let mut framed = Vec::new();
    let mut rest = bytes;
    while let [count, len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        framed.extend_from_slice(&store::frame(&tail[..len], u32::from(*count)));
        rest = &tail[len..];
    }
    for input in [bytes, &framed[..]] {
        let (end, records) = store::scan(input, 0, input.len() as u64, format);
        assert!(end <= input.len() as u64);
        assert!(records <= input.len() as u64);
    }
}
