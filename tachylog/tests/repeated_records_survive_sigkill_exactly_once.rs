//! With a spool, SIGKILL loses no record and writes none twice when every record of a thread
//! looks the same: recovery decides from the facts the writer noted (see
//! `queue::spool::journal`), never from what a line says. The lines here have no time column
//! (`{level} [{thread}] {message}`), so each thread's lines are byte for byte the same.
//!
//! Each round is a real child process in which two threads log one repeated record each at
//! full speed and note, in a shared file mapping, how many of their calls returned; it dies
//! by SIGKILL, sent in one of three ways: by this process from outside (`kill -9`) after a
//! random delay, by the test hook that kills it between a batch's write and its commit, or by
//! the one that tears a batch's `write(2)` at a page boundary, as a death inside it does. Then
//! a second child recovers the spool. Each thread's lines must number the calls that returned
//! (plus, at most, the one call the death interrupted after its record was published).
//!
//! Shapes: the same text; a value of the program's own `CopyArg` type that renders the same;
//! a binary log; and a sibling process logging the same lines into the same file with a spool
//! of its own under the same root, from before the death until after the recovery.
//! `TACHYLOG_REPEAT_ROUNDS` rounds per shape and way of dying (default 2);
//! `TACHYLOG_REPEAT_KILLS` picks ways of dying (`external,commit,tear`; default all).
// Unix only: SIGKILL and the spool are Unix-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tachylog::{Format, SinkOptions};

const THREADS: usize = 2;
/// The pattern: no time, so that a thread's lines are the same bytes.
const PATTERN: &str = "{level} [{thread}] {message}";

fn spool_dir(log: &Path) -> PathBuf {
    log.with_file_name("spool")
}

fn progress_path(log: &Path) -> PathBuf {
    log.with_file_name("progress")
}

fn shape() -> String {
    std::env::var("TACHYLOG_TEST_SHAPE").unwrap_or_default()
}

fn builder(log: &Path) -> tachylog::Builder {
    let builder = tachylog::builder()
        .spool(spool_dir(log))
        .ring_capacity(64 << 10)
        .pattern(PATTERN);
    match shape().as_str() {
        "binary" => builder.file_with(log, SinkOptions::new().format(Format::Binary)),
        _ => builder.file(log),
    }
}

/// `THREADS` counters and the process id, shared with the children (made by the parent).
fn progress(path: &Path, create: bool) -> &'static [AtomicU64] {
    common::shared_counters(path, THREADS + 1, create)
}

/// A type only the writing program can format; every value renders the same.
#[derive(Clone, Copy)]
#[repr(C)]
struct Beat {
    lane: u32,
}

impl std::fmt::Display for Beat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "lane {}", self.lane)
    }
}

impl tachylog::CopyArg for Beat {}

/// A small pseudo-random number from the clock: the delays of one round.
fn random_below(bound: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let mut x = nanos ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x % bound.max(1)
}

/// The child that logs and dies.
#[test]
fn repeat_writer() {
    let Some(log) = common::child_role("repeat_writer") else {
        return;
    };
    let progress = progress(&progress_path(&log), false);
    progress[THREADS].store(std::process::id() as u64, Ordering::Release);
    std::mem::forget(common::expect_init(builder(&log).init()));
    let hook = std::env::var("TACHYLOG_TEST_KILL").unwrap_or_default();
    if hook != "external" {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20 + random_below(60)));
            match hook.as_str() {
                "tear" => tachylog::__private::tear_next_write(),
                _ => tachylog::__private::kill_before_next_commit(),
            }
        });
    }
    let copy_arg = shape() == "copyarg";
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            std::thread::Builder::new()
                .name(format!("writer-{t}"))
                .spawn(move || {
                    for seq in 0u64.. {
                        if copy_arg {
                            tachylog::info!("heartbeat {}", Beat { lane: 7 });
                        } else {
                            tachylog::info!("GET /health 200");
                        }
                        progress[t].store(seq + 1, Ordering::Release);
                    }
                })
                .expect("spawn a writer")
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
}

/// The child that starts a logger on the dead one's spool.
#[test]
fn repeat_recoverer() {
    if let Some(log) = common::child_role("repeat_recoverer") {
        drop(common::expect_init(builder(&log).init()));
    }
}

/// The sibling: logs the writer's lines into the same file, with a spool of its own under the
/// same root, until the file `stop` appears; then says how many of each thread's it logged.
#[test]
fn repeat_sibling() {
    let Some(log) = common::child_role("repeat_sibling") else {
        return;
    };
    let guard = common::expect_init(
        builder(&log)
            .flush_interval(Duration::from_millis(1))
            .init(),
    );
    let stop = log.with_file_name("stop");
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(format!("writer-{t}"))
                .spawn(move || {
                    let mut count = 0u64;
                    while !stop.exists() {
                        for _ in 0..100 {
                            tachylog::info!("GET /health 200");
                        }
                        count += 100;
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    count
                })
                .expect("spawn a sibling writer")
        })
        .collect();
    let counts: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    drop(guard);
    println!("sibling counts {counts:?}");
}

/// Each thread's records in the file: lines (or binary records, for the `binary` shape) of
/// `[writer-t]`.
fn counts(log: &Path, shape: &str) -> Vec<u64> {
    let mut counts = vec![0u64; THREADS];
    if shape == "binary" {
        let mut reader = tachylog::read::Reader::open(log).expect("open the binary log");
        while let Some(record) = reader.next_record() {
            let record = record.expect("every block of the binary log reads back");
            if let Some(t) = record.thread_name().strip_prefix("writer-") {
                counts[t.parse::<usize>().unwrap()] += 1;
            }
        }
        return counts;
    }
    let text = common::read_log(log);
    let mut torn = 0;
    for line in text.lines() {
        if line.contains("tachylog") {
            continue; // the recovery's own notice
        }
        // A line the death tore, that a sibling's line followed before recovery looked at
        // the file, stays, glued to that line (see RELIABILITY.md); the record is written
        // again, whole.
        let at = line.rfind("INFO  [writer-").unwrap_or(0);
        let (piece, record) = line.split_at(at);
        if !piece.is_empty() {
            torn += 1;
            assert!(
                piece.starts_with("INFO  [writer-") || "INFO  [writer-".starts_with(piece),
                "a torn piece: {line:?}"
            );
        }
        let t: usize = record
            .strip_prefix("INFO  [writer-")
            .and_then(|r| r.split(']').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("a line that is not a whole record: {line:?}"));
        counts[t] += 1;
    }
    assert!(torn <= 1, "{torn} torn lines");
    counts
}

/// One round: a writer killed as `kill` says, recovered; with a sibling beside it if asked.
fn round(shape: &str, kill: &str, sibling: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let vars = [
        ("TACHYLOG_TEST_SHAPE", Some(shape)),
        ("TACHYLOG_TEST_KILL", Some(kill)),
    ];
    let progress = progress(&progress_path(&log), true);
    let sibling = sibling.then(|| {
        let log = log.clone();
        let shape = shape.to_string();
        std::thread::spawn(move || {
            let vars = [("TACHYLOG_TEST_SHAPE", Some(shape.as_str()))];
            run("repeat_sibling", &log, &vars)
        })
    });
    let killer = (kill == "external").then(|| {
        std::thread::spawn(move || {
            let started = Instant::now();
            while progress[0].load(Ordering::Acquire) < 1_000
                && started.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_micros(random_below(40_000)));
            let pid = progress[THREADS].load(Ordering::Acquire) as i32;
            // SAFETY: a signal to the child process this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        })
    });
    let writer = run("repeat_writer", &log, &vars);
    if let Some(killer) = killer {
        killer.join().unwrap();
    }
    assert_eq!(writer.status.signal(), Some(libc::SIGKILL), "{writer}");
    let returned: Vec<u64> = progress[..THREADS]
        .iter()
        .map(|p| p.load(Ordering::Acquire))
        .collect();
    let recovery = run("repeat_recoverer", &log, &vars);
    assert!(recovery.status.success(), "{recovery}");
    let mut expected = returned.clone();
    if let Some(sibling) = sibling {
        std::fs::write(log.with_file_name("stop"), b"").unwrap();
        let sibling = sibling.join().unwrap();
        assert!(sibling.status.success(), "{sibling}");
        let logged: Vec<u64> = sibling
            .stdout
            .lines()
            .find_map(|l| Some(l.split_once("sibling counts ")?.1))
            .map(|counts| {
                counts
                    .trim_matches(['[', ']'])
                    .split(", ")
                    .map(|n| n.parse().unwrap())
                    .collect()
            })
            .unwrap_or_else(|| panic!("the sibling's counts: {sibling}"));
        for (expected, logged) in expected.iter_mut().zip(logged) {
            *expected += logged;
        }
    }
    let found = counts(&log, shape);
    for t in 0..THREADS {
        assert!(
            found[t] == expected[t] || found[t] == expected[t] + 1,
            "{shape}, killed by {kill}: thread {t} returned from {} calls (with the sibling's: \
             {}), the file holds {} of its records\n{}",
            returned[t],
            expected[t],
            found[t],
            match shape {
                "binary" => String::new(),
                _ => common::tail(&common::read_log(&log), 2_000).to_string(),
            }
        );
    }
    assert!(
        common::process_dirs(&spool_dir(&log)).is_empty(),
        "{shape}, {kill}: spool directories left behind"
    );
    format!("{returned:?}")
}

/// Runs the child `scenario` with `vars` set, not reading its log back (a binary log is no
/// text).
fn run(scenario: &str, log: &Path, vars: &[(&str, Option<&str>)]) -> common::ChildRun {
    common::run_child_leaving_log(
        scenario,
        log,
        |command| {
            for (name, value) in vars {
                if let Some(value) = value {
                    command.env(name, value);
                }
            }
        },
        Duration::from_secs(120),
    )
}

fn rounds() -> usize {
    std::env::var("TACHYLOG_REPEAT_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

fn each_way_of_dying(shape: &str, sibling: bool) {
    let only = std::env::var("TACHYLOG_REPEAT_KILLS").unwrap_or_default();
    for kill in ["external", "commit", "tear"] {
        if !only.is_empty() && !only.split(',').any(|k| k == kill) {
            continue;
        }
        let mut returned = Vec::new();
        for _ in 0..rounds() {
            returned.push(round(shape, kill, sibling));
        }
        eprintln!("{shape}, killed by {kill}, sibling {sibling}: returned {returned:?}, each once");
    }
}

#[test]
fn the_same_text_over_and_over() {
    each_way_of_dying("text", false);
}

#[test]
fn a_value_of_the_programs_own_type_that_renders_the_same() {
    each_way_of_dying("copyarg", false);
}

#[test]
fn the_same_record_in_a_binary_log() {
    each_way_of_dying("binary", false);
}

#[test]
fn a_sibling_writing_the_same_lines_into_the_same_file() {
    each_way_of_dying("text", true);
}
