//! The soak run: 8 threads log as fast as they can for 60 s into a file per second, and every
//! record is verified: present exactly once, in order per thread, in the file of its own
//! second, on a whole line.
//!
//! `cargo run --release -p tachylog-bench --bin soak [-- --seconds N --threads N --dir PATH]`
//!
//! Files are verified and deleted as soon as they are complete (two seconds after their
//! period), so a minute at full speed needs a few hundred MB of disk at most, not tens of GB.
//! Exits non-zero, naming the first problem, if any record is missing, duplicated, reordered,
//! torn or in the wrong file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `--name value` options with their defaults.
struct Options {
    seconds: u64,
    threads: usize,
    dir: PathBuf,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        seconds: 60,
        threads: 8,
        dir: PathBuf::from("target/soak"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--seconds" => {
                options.seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?
            }
            "--threads" => {
                options.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?
            }
            "--dir" => options.dir = PathBuf::from(value()?),
            "--help" | "-h" => {
                return Err(
                    "usage: soak [--seconds N (60)] [--threads N (8)] [--dir PATH (target/soak)]"
                        .into(),
                )
            }
            other => return Err(format!("unknown option {other}; try --help")),
        }
    }
    Ok(options)
}

/// Checks files in name (= time) order, carrying each thread's next expected sequence number
/// from one file to the next.
struct Verifier {
    next: Vec<u64>,
    files: u64,
    bytes: u64,
}

impl Verifier {
    /// Verifies one complete file, then deletes it.
    fn check_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        let text =
            String::from_utf8(text).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?;
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(format!("{}: the last line is torn", path.display()));
        }
        let second = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.get(8..14))
            .ok_or_else(|| format!("unexpected file name {}", path.display()))?;
        for line in text.lines() {
            self.check_line(line, second)
                .map_err(|e| format!("{}: {e}: {line:?}", path.display()))?;
        }
        self.files += 1;
        self.bytes += text.len() as u64;
        std::fs::remove_file(path).map_err(|e| format!("remove {}: {e}", path.display()))
    }

    /// `2026-11-21 05:22:45.123456 t3 seq 12345 <payload>`
    fn check_line(&mut self, line: &str, second: &str) -> Result<(), String> {
        let hhmmss: String = line
            .get(11..19)
            .unwrap_or("")
            .chars()
            .filter(|c| *c != ':')
            .collect();
        if hhmmss != second {
            return Err(format!("a record of {hhmmss} in the file of {second}"));
        }
        let mut words = line.get(27..).unwrap_or("").split(' ');
        let (Some(thread), Some("seq"), Some(seq), Some(payload)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err("malformed line".into());
        };
        let thread: usize = thread
            .strip_prefix('t')
            .and_then(|t| t.parse().ok())
            .filter(|t| *t < self.next.len())
            .ok_or("bad thread field")?;
        let seq: u64 = seq.parse().map_err(|_| "bad sequence number")?;
        if seq != self.next[thread] {
            return Err(format!(
                "thread {thread}: expected seq {}, found {seq}",
                self.next[thread]
            ));
        }
        if payload != PAYLOAD {
            return Err("payload damaged".into());
        }
        self.next[thread] += 1;
        Ok(())
    }
}

const PAYLOAD: &str = "the-quick-brown-fox-jumps-over-the-lazy-dog";

/// The complete files (older than the current second by at least two), in time order.
fn complete_files(dir: &Path, all: bool) -> Vec<PathBuf> {
    let now = jiff::Timestamp::now().as_second();
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let Ok(time) = jiff::civil::DateTime::strptime("%Y%m%d%H%M%S", stem) else {
            continue;
        };
        let Ok(at) = time.to_zoned(jiff::tz::TimeZone::UTC) else {
            continue;
        };
        if all || at.timestamp().as_second() + 2 <= now {
            files.insert(name, entry.path());
        }
    }
    files.into_values().collect()
}

fn run(options: &Options) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(&options.dir);
    std::fs::create_dir_all(&options.dir)
        .map_err(|e| format!("create {}: {e}", options.dir.display()))?;
    let pattern = options.dir.join("%Y%m%d%H%M%S.log");
    let sink = tachylog::RollingFile::builder(pattern.to_string_lossy())
        .utc(true)
        .open()
        .map_err(|e| e.to_string())?;
    let guard = tachylog::builder()
        .sink(sink)
        .utc(true)
        .pattern("{time} {message}")
        .init()
        .map_err(|e| e.to_string())?;

    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..options.threads)
        .map(|t| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut seq = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    tachylog::info!("t{} seq {} {}", t, seq, PAYLOAD);
                    seq += 1;
                }
                seq
            })
        })
        .collect();

    let mut verifier = Verifier {
        next: vec![0; options.threads],
        files: 0,
        bytes: 0,
    };
    let start = Instant::now();
    let deadline = start + Duration::from_secs(options.seconds);
    let mut failure = None;
    while Instant::now() < deadline && failure.is_none() {
        std::thread::sleep(Duration::from_millis(250));
        for file in complete_files(&options.dir, false) {
            if let Err(e) = verifier.check_file(&file) {
                failure = Some(e);
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let logged: Vec<u64> = producers
        .into_iter()
        .map(|p| p.join().unwrap_or(0))
        .collect();
    let elapsed = start.elapsed();
    drop(guard);
    if let Some(failure) = failure {
        return Err(failure);
    }
    for file in complete_files(&options.dir, true) {
        verifier.check_file(&file)?;
    }
    for (thread, (&logged, &seen)) in logged.iter().zip(&verifier.next).enumerate() {
        if logged != seen {
            return Err(format!(
                "thread {thread}: logged {logged}, found {seen} on disk"
            ));
        }
    }
    let total: u64 = logged.iter().sum();
    println!(
        "soak: OK: {} threads, {:.1} s, {total} records ({:.2} M/s), {} files of one second, {:.1} MB, every record verified",
        options.threads,
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64() / 1e6,
        verifier.files,
        verifier.bytes as f64 / 1e6
    );
    Ok(())
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> Verifier {
        Verifier {
            next: vec![0; 2],
            files: 0,
            bytes: 0,
        }
    }

    fn line(second: &str, thread: usize, seq: u64) -> String {
        format!("2026-11-21 {second}.123456 t{thread} seq {seq} {PAYLOAD}")
    }

    #[test]
    fn good_lines_pass_and_advance_the_sequence() {
        let mut v = verifier();
        v.check_line(&line("05:22:45", 0, 0), "052245").unwrap();
        v.check_line(&line("05:22:45", 1, 0), "052245").unwrap();
        v.check_line(&line("05:22:45", 0, 1), "052245").unwrap();
        assert_eq!(v.next, [2, 1]);
    }

    #[test]
    fn every_kind_of_damage_is_caught() {
        let mut v = verifier();
        assert!(v
            .check_line(&line("05:22:46", 0, 0), "052245")
            .unwrap_err()
            .contains("in the file of"));
        assert!(v
            .check_line(&line("05:22:45", 0, 1), "052245")
            .unwrap_err()
            .contains("expected seq 0"));
        assert!(
            v.check_line(&line("05:22:45", 5, 0), "052245").is_err(),
            "unknown thread"
        );
        let torn = line("05:22:45", 0, 0);
        assert!(
            v.check_line(&torn[..torn.len() - 3], "052245").is_err(),
            "damaged payload"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("20261121052245.log");
        std::fs::write(
            &file,
            format!("{}\n{}", line("05:22:45", 0, 0), line("05:22:45", 0, 1)),
        )
        .unwrap();
        assert!(v.check_file(&file).unwrap_err().contains("torn"));
    }
}
