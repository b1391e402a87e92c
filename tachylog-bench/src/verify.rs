//! The line count that makes every run honest: after a child exits, the parent reads every
//! file it wrote and counts whole lines containing the workload's marker text. A logger that
//! lost, tore or never flushed a line fails its run, whatever its timing. A binary log
//! (tachylog's `Format::Binary`, known by its first bytes) is read back with `tachylog::read`
//! and its records counted as the default pattern's text lines; its damaged bytes count as
//! torn.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use memchr::memmem::Finder;

use crate::error::BenchError;
use crate::report::Verification;

/// What a run must have left on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// Text every line of the workload contains.
    pub marker: &'static str,
    /// How many such lines.
    pub lines: u64,
    /// An exact message, arguments rendered, that must appear `probe_count` times.
    pub probe: String,
    /// How many times.
    pub probe_count: u64,
}

impl Expected {
    /// The same workload's lines, none of which may be on disk (a run that logs nothing).
    pub fn nothing(self) -> Expected {
        Expected {
            lines: 0,
            probe_count: 0,
            ..self
        }
    }
}

/// Counts the lines of every regular file directly in `dir`.
pub fn count_lines(dir: &Path, expected: &Expected) -> Result<Verification, BenchError> {
    let marker = Finder::new(expected.marker.as_bytes());
    let probe = Finder::new(expected.probe.as_bytes());
    let mut v = Verification {
        expected: expected.lines,
        probe: expected.probe.clone(),
        probe_expected: expected.probe_count,
        ..Verification::default()
    };
    let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| BenchError::io(dir, e))?.path();
        if !path.is_file() {
            continue;
        }
        v.files += 1;
        if is_binary_log(&path)? {
            count_binary_records(&path, &marker, &probe, &mut v)?;
            continue;
        }
        let file = File::open(&path).map_err(|e| BenchError::io(&path, e))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::with_capacity(256);
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| BenchError::io(&path, e))?;
            if n == 0 {
                break;
            }
            v.bytes += n as u64;
            if line.last() == Some(&b'\n') {
                v.lines += 1;
                if marker.find(&line).is_some() {
                    v.marked_lines += 1;
                    if probe.find(&line).is_some() {
                        v.probe_found += 1;
                    }
                }
            } else {
                v.trailing_bytes += line.len() as u64;
            }
        }
    }
    Ok(v)
}

/// The first bytes of every block of a binary log.
const BINARY_SYNC: &[u8] = b"\xF7TLBLK";

/// Whether `path` starts like a binary log.
fn is_binary_log(path: &Path) -> Result<bool, BenchError> {
    let mut head = [0u8; 6];
    let mut file = File::open(path).map_err(|e| BenchError::io(path, e))?;
    let read = std::io::Read::read(&mut file, &mut head).map_err(|e| BenchError::io(path, e))?;
    Ok(&head[..read] == BINARY_SYNC)
}

/// Counts a binary log's records as the text lines they render to.
fn count_binary_records(
    path: &Path,
    marker: &Finder<'_>,
    probe: &Finder<'_>,
    v: &mut Verification,
) -> Result<(), BenchError> {
    let mut reader = tachylog::read::Reader::open(path)
        .map_err(|e| BenchError::io(path, std::io::Error::other(e.to_string())))?;
    let mut renderer =
        tachylog::read::Renderer::text(tachylog::Pattern::default(), tachylog::TimeZone::utc());
    let mut line = Vec::with_capacity(256);
    while let Some(record) = reader.next_record() {
        match record {
            Ok(record) => {
                line.clear();
                renderer.render(record, &mut line);
                v.lines += 1;
                if marker.find(&line).is_some() {
                    v.marked_lines += 1;
                    if probe.find(&line).is_some() {
                        v.probe_found += 1;
                    }
                }
            }
            Err(tachylog::read::ReadError::Damaged { skipped, .. }) => {
                v.trailing_bytes += skipped.max(1)
            }
            Err(e) => return Err(BenchError::io(path, std::io::Error::other(e.to_string()))),
        }
    }
    v.bytes += reader.offset();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_marked_whole_lines_across_files() {
        let dir =
            std::env::temp_dir().join(format!("tachylog-bench-verify-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("subdir-ignored")).unwrap();
        std::fs::write(
            dir.join("a.log"),
            "12:00 INFO Hello World! 7\nbanner line\n12:01 INFO Hello World! 8\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.log"), "Hello World! 7\nHello Wor").unwrap();

        let expected = Expected {
            marker: "Hello World!",
            lines: 3,
            probe: "World! 7".into(),
            probe_count: 2,
        };
        let v = count_lines(&dir, &expected).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();

        assert_eq!(
            v,
            Verification {
                expected: 3,
                files: 2,
                bytes: 64 + 24,
                lines: 4,
                marked_lines: 3,
                trailing_bytes: 9,
                probe: "World! 7".into(),
                probe_expected: 2,
                probe_found: 2,
            }
        );
        assert!(!v.ok(), "a torn last line must fail the run");
    }
}
