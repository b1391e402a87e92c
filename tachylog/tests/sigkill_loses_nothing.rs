//! With a spool (`Builder::spool`), a process killed by SIGKILL at any moment loses no record
//! whose log call returned: the next process that starts with the same spool writes them, each
//! once, whole, with its own timestamp, marked `[recovered]`.
//!
//! Each run is a real child process in which four threads log numbered records at full speed
//! (one in fifty larger than a quarter of the ring, which travels outside it) and note, in a
//! shared file mapping, how many of their calls have returned; a fifth thread sends the
//! process SIGKILL after a random delay. A second child then starts a logger with the same
//! sink and spool and ends cleanly. The files must then hold every noted record of every
//! thread exactly once, in whole lines, each thread's in time order. Once with a `FileSink`,
//! once with a `RollingFile` that starts a new file every second and every 256 KiB. The
//! number of runs is `TACHYLOG_SIGKILL_RUNS` (default 20; the goal is 100 of 100).
// Unix only: SIGKILL and the spool are Unix-only.
#![cfg(unix)]

mod common;

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

const THREADS: usize = 4;

/// Each thread's ring: small, so that a record of [`LARGE`] bytes is larger than a quarter of
/// it.
const RING: usize = 64 << 10;
/// The text of the large records, one in [`LARGE_EVERY`].
const LARGE: usize = 20 << 10;
const LARGE_EVERY: u64 = 50;

/// Which sink the children use: `file` or `rolling` (`TACHYLOG_TEST_SINK`).
fn builder(log: &Path) -> tachylog::Builder {
    let builder = tachylog::builder()
        .spool(spool_dir(log))
        .ring_capacity(RING);
    match std::env::var("TACHYLOG_TEST_SINK").as_deref() {
        #[cfg(feature = "rolling")]
        Ok("rolling") => {
            let pattern = log.with_file_name("app.%Y%m%d-%H%M%S.log");
            let sink = tachylog::RollingFile::builder(pattern.to_str().unwrap())
                .max_size(256 << 10)
                .open()
                .expect("rolling file");
            builder.sink(sink)
        }
        _ => builder.file(log),
    }
}

/// The text of every file the sink wrote (a rolling sink's in the order of their names:
/// period, then index).
fn read_logs(log: &Path) -> Vec<String> {
    let dir = log.parent().unwrap();
    let mut names: Vec<(String, u32, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".log")?;
            let (period, index) = match stem.rsplit_once('.') {
                Some((period, index)) if period.contains('.') => {
                    (period.to_string(), index.parse().ok()?)
                }
                _ => (stem.to_string(), 0),
            };
            Some((period, index, name))
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|(_, _, name)| common::read_log(&dir.join(name)))
        .collect()
}

fn spool_dir(log: &Path) -> PathBuf {
    log.with_extension("spool")
}

fn progress_path(log: &Path) -> PathBuf {
    log.with_extension("progress")
}

/// The child that logs and is killed (a no-op in the parent).
#[test]
fn sigkill_writer() {
    if let Some(log) = common::child_role("sigkill_writer") {
        let progress = common::shared_counters(&progress_path(&log), THREADS, false);
        std::mem::forget(common::expect_init(builder(&log).init()));
        let delay: u64 = std::env::var("TACHYLOG_TEST_KILL_AFTER_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50_000);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(delay));
            // SAFETY: killing our own process.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        });
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                std::thread::Builder::new()
                    .name(format!("writer-{t}"))
                    .spawn(move || {
                        let large = "x".repeat(LARGE);
                        for seq in 0u64.. {
                            let extra = if seq % LARGE_EVERY == 7 {
                                &large[..]
                            } else {
                                ""
                            };
                            tachylog::info!(
                                "t{} seq {} {}payload {:.3}",
                                t,
                                seq,
                                extra,
                                seq as f64 / 7.0
                            );
                            progress[t].store(seq + 1, Ordering::Release);
                        }
                    })
                    .expect("spawn a writer")
            })
            .collect();
        for worker in workers {
            let _ = worker.join();
        }
        common::await_fatal_signal(Duration::from_secs(30));
    }
}

/// The child that starts a logger on the dead one's spool (a no-op in the parent).
#[test]
fn sigkill_recoverer() {
    if let Some(log) = common::child_role("sigkill_recoverer") {
        let guard = common::expect_init(builder(&log).init());
        tachylog::info!("recovery done");
        drop(guard);
    }
}

#[test]
fn records_whose_call_returned_survive_sigkill() {
    survive_sigkill("file");
}

#[cfg(feature = "rolling")]
#[test]
fn records_whose_call_returned_survive_sigkill_into_rolling_files() {
    survive_sigkill("rolling");
}

fn survive_sigkill(sink: &str) {
    if common::child_role("sigkill_writer").is_some()
        || common::child_role("sigkill_recoverer").is_some()
    {
        return;
    }
    let runs: usize = std::env::var("TACHYLOG_SIGKILL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let mut recovered_total = 0usize;
    let mut returned_total = 0u64;
    for run in 0..runs {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("app.log");
        let progress = common::shared_counters(&progress_path(&log), THREADS, true);
        // Spread the kill over start-up, the first drains and steady logging.
        let delay = 1_000 + (run as u64 * 7_919 + 13) % 150_000;
        let writer = common::run_child_with_command(
            "sigkill_writer",
            &log,
            |command| {
                command.env("TACHYLOG_TEST_KILL_AFTER_US", delay.to_string());
                command.env("TACHYLOG_TEST_SINK", sink);
            },
            Duration::from_secs(60),
        );
        assert_eq!(
            writer.status.signal(),
            Some(libc::SIGKILL),
            "run {run}: {writer}"
        );
        let returned: Vec<u64> = progress.iter().map(|c| c.load(Ordering::Acquire)).collect();
        let recoverer = common::run_child_with_command(
            "sigkill_recoverer",
            &log,
            |command| {
                command.env("TACHYLOG_TEST_SINK", sink);
            },
            Duration::from_secs(60),
        );
        assert!(recoverer.status.success(), "run {run}: {recoverer}");
        let files = read_logs(&log);
        let text = files.concat();
        let mut seen: HashMap<(usize, u64), usize> = HashMap::new();
        let mut last_seq: [Option<(usize, u64)>; THREADS] = [None; THREADS];
        for (file, line) in files
            .iter()
            .enumerate()
            .flat_map(|(i, text)| common::parse_log(text).into_iter().map(move |l| (i, l)))
        {
            let (message, recovered) = match line.message.strip_prefix("[recovered] ") {
                Some(rest) => (rest, true),
                None => (line.message, false),
            };
            recovered_total += recovered as usize;
            let Some(rest) = message.strip_prefix('t') else {
                continue;
            };
            let mut parts = rest.split(' ');
            let (Some(t), Some("seq"), Some(seq)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (t, seq): (usize, u64) = (t.parse().unwrap(), seq.parse().unwrap());
            *seen.entry((t, seq)).or_default() += 1;
            // In each file, a thread's records in the order it logged them. (Not their times:
            // a record held back past the merge's stall limit is written with the time column
            // kept monotonic, while recovery writes each record's own time.)
            let last = &mut last_seq[t];
            assert!(
                last.is_none_or(|(f, s)| f != file || s < seq),
                "run {run}: thread {t}'s records out of order at seq {seq} after {last:?}"
            );
            *last = Some((file, seq));
            let large = if seq % LARGE_EVERY == 7 { LARGE } else { 0 };
            assert!(
                message.ends_with(&format!("payload {:.3}", seq as f64 / 7.0))
                    && message.len() > large,
                "run {run}: {}",
                &message[..message.len().min(200)]
            );
        }
        let duplicates: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            duplicates.is_empty(),
            "run {run}: written twice: {duplicates:?}"
        );
        for (t, returned) in returned.iter().enumerate() {
            returned_total += returned;
            let missing: Vec<u64> = (0..*returned)
                .filter(|seq| !seen.contains_key(&(t, *seq)))
                .take(10)
                .collect();
            assert!(
                missing.is_empty(),
                "run {run} (kill after {delay} µs): thread {t} returned from {returned} calls, \
                 missing {missing:?}...\n{}",
                common::tail(&text, 2_000)
            );
        }
        assert!(
            text.contains("recovery done"),
            "run {run}: the recovering process's own record"
        );
        let leftover = common::process_dirs(&spool_dir(&log)).len();
        assert_eq!(leftover, 0, "run {run}: spool directories left behind");
    }
    eprintln!(
        "{sink}: {runs} runs: {returned_total} records returned before SIGKILL, all written \
         once; {recovered_total} of them by recovery"
    );
}
