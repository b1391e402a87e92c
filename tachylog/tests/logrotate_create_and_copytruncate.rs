//! The real `logrotate` rotating a file that a child process logs into from two threads at a
//! steady rate (about 20,000 records a second), three times:
//!
//! - `create`, `compress` with `delaycompress`, and a `postrotate` script sending SIGHUP, with
//!   [`reopen_on_sighup(true)`](tachylog::Builder::reopen_on_sighup): every record is in
//!   exactly one of the files, whole and in order. The lines written between the rename and
//!   the reopen go to the renamed file, which the process still holds open; `delaycompress`
//!   leaves that file alone until the next rotation. (Without it and without the SIGHUP, gzip
//!   compresses and removes the renamed file while tachylog, which notices the rename within a
//!   second, still writes to it: up to a second of records is lost, and this test fails.)
//! - `copytruncate`: what `O_APPEND` guarantees holds (every line that reaches a file is whole,
//!   the truncated file starts at its first byte with no hole of NUL bytes, no record is
//!   written twice, each thread's records keep their order), but the records written between
//!   logrotate's copy and its truncate are lost, as logrotate's manual warns: each thread's
//!   records in a file are consecutive, so its losses are at most one gap per rotation. The
//!   loss is measured and printed, not asserted (it depends on timing). The copy may also end
//!   in the first part of a line: a read racing a write that spans pages can see it cut at a page
//!   boundary, and the rest is truncated away; that fragment is tolerated at the end of a copy
//!   only, and counted with the losses.
//!
//! `logrotate` must be installed (Debian: `apt-get install logrotate`; `.ci/run` does it):
//! without it these tests fail, they do not skip.
#![cfg(unix)]

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use std::{env, fs, thread};

/// The logging threads of the child, which are also the scopes of their messages.
const THREADS: [&str; 2] = ["t0", "t1"];
/// Each thread logs this many records per tick: 10,000 a second each.
const RECORDS_PER_TICK: u64 = 10;
const TICK: Duration = Duration::from_millis(1);
/// How many times logrotate rotates the file.
const ROTATIONS: usize = 3;
/// How much the live file grows between two rotations (about half a second of logging), so
/// that each rotation happens while both threads are writing.
const GROWTH_BETWEEN_ROTATIONS: u64 = 1024 * 1024;
/// The back end writes what it has at least this often. The default (100 ms) leaves the file
/// untouched for most of each interval at this rate, so a rotation would usually fall between
/// two writes; a busy server, whose batches fill before the interval ends, writes all the time,
/// and so does this child.
const FLUSH_INTERVAL: Duration = Duration::from_millis(1);
/// Environment variable giving the child the directory of its pid file and stop file.
const CONTROL_DIR: &str = "TACHYLOG_TEST_LOGROTATE_CONTROL";
/// The child stops logging after this long even if the parent never says so.
const CHILD_DEADLINE: Duration = Duration::from_secs(20);

fn logrotate_binary() -> PathBuf {
    let in_path = env::var_os("PATH")
        .map(|p| {
            env::split_paths(&p)
                .map(|d| d.join("logrotate"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    [PathBuf::from("/usr/sbin/logrotate")]
        .into_iter()
        .chain(in_path)
        .find(|p| p.is_file())
        .expect(
            "logrotate not found in /usr/sbin or PATH: these tests run the real logrotate; \
             install the logrotate package (Debian: apt-get install -y logrotate; .ci/run does \
             this)",
        )
}

/// The child's side: logs numbered records from two paced threads until the parent creates
/// the stop file, then prints how many each thread logged.
fn log_until_stopped(log: &Path, reopen_on_sighup: bool) {
    let control = PathBuf::from(
        env::var_os(CONTROL_DIR).expect("child started without its control directory"),
    );
    let guard = common::expect_init(
        tachylog::builder()
            .file(log)
            .flush_interval(FLUSH_INTERVAL)
            .reopen_on_sighup(reopen_on_sighup)
            .init(),
    );
    // Written once SIGHUP is handled, and renamed into place, so that the `postrotate` script
    // never reads a partial pid.
    let pid_tmp = control.join("child.pid.tmp");
    fs::write(&pid_tmp, std::process::id().to_string()).unwrap();
    fs::rename(&pid_tmp, control.join("child.pid")).unwrap();
    let deadline = Instant::now() + CHILD_DEADLINE;
    let stop = control.join("stop");
    let threads: Vec<_> = THREADS
        .iter()
        .map(|&name| {
            let stop = stop.clone();
            thread::Builder::new()
                .name(name.into())
                .spawn(move || log_paced(name, &stop, deadline))
                .expect("spawn a logging thread")
        })
        .collect();
    for (name, thread) in THREADS.iter().zip(threads) {
        let count = thread.join().expect("a logging thread panicked");
        println!("{name} logged {count} records");
    }
    drop(guard);
}

/// Logs `"{name} record {i}"` at a steady `RECORDS_PER_TICK` per `TICK` until `stop` exists
/// or `deadline` passes; returns how many it logged.
fn log_paced(name: &str, stop: &Path, deadline: Instant) -> u64 {
    let start = Instant::now();
    let mut logged = 0u64;
    loop {
        for _ in 0..RECORDS_PER_TICK {
            tachylog::info!("{} record {}", name, logged);
            logged += 1;
        }
        if stop.exists() || Instant::now() >= deadline {
            return logged;
        }
        let ticks = u32::try_from(logged / RECORDS_PER_TICK).unwrap_or(u32::MAX);
        if let Some(wait) = (start + TICK * ticks).checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    }
}

/// What the parent found after the rotations.
struct Rotated {
    /// Records each thread logged, in `THREADS` order.
    logged: Vec<u64>,
    /// `(name, contents)` of each file, oldest first: `app.log.3` … `app.log.1`, `app.log`;
    /// a compressed one decompressed.
    files: Vec<(String, Vec<u8>)>,
    /// The child's output, for failure messages.
    child: String,
}

/// Starts the child `scenario`, lets logrotate rotate its file `ROTATIONS` times with
/// `directives` (the body of the file's block in logrotate's configuration), stops the child
/// and reads every file, which must be `expected_files`, oldest first.
fn rotate_while_logging(scenario: &str, directives: &str, expected_files: &[&str]) -> Rotated {
    let logrotate = logrotate_binary();
    let dir = tempfile::tempdir().unwrap();
    let control = dir.path().to_path_buf();
    let logs = control.join("logs");
    fs::create_dir(&logs).unwrap();
    let log = logs.join("app.log");
    let pid_file = control.join("child.pid");
    let config = control.join("logrotate.conf");
    let directives = directives.replace("{pid_file}", &pid_file.display().to_string());
    fs::write(
        &config,
        format!("\"{}\" {{\n    rotate 10\n{directives}}}\n", log.display()),
    )
    .unwrap();

    let child = {
        let (scenario, log, control) = (scenario.to_string(), log.clone(), control.clone());
        thread::spawn(move || {
            let control = control.display().to_string();
            common::run_child_with_env(
                &scenario,
                &log,
                &[(CONTROL_DIR, Some(&control))],
                Duration::from_secs(60),
            )
        })
    };
    let size = |path: &Path| fs::metadata(path).map_or(0, |m| m.len());
    common::wait_until("the child's pid file", Duration::from_secs(20), || {
        pid_file.exists() || child.is_finished()
    });
    for rotation in 1..=ROTATIONS {
        common::wait_until(
            format_args!("{GROWTH_BETWEEN_ROTATIONS} bytes in app.log before rotation {rotation}"),
            Duration::from_secs(10),
            || size(&log) >= GROWTH_BETWEEN_ROTATIONS || child.is_finished(),
        );
        assert!(
            !child.is_finished(),
            "the child stopped before rotation {rotation}"
        );
        let out = Command::new(&logrotate)
            .arg("-f")
            .arg("-s")
            .arg(control.join("logrotate.state"))
            .arg(&config)
            .output()
            .expect("run logrotate");
        assert!(
            out.status.success(),
            "logrotate failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    common::wait_until(
        "app.log to grow after the last rotation",
        Duration::from_secs(10),
        || size(&log) >= GROWTH_BETWEEN_ROTATIONS || child.is_finished(),
    );
    fs::write(control.join("stop"), "").unwrap();
    let child = child.join().expect("the thread running the child panicked");
    assert!(child.status.success(), "{child}");

    let logged = THREADS
        .iter()
        .map(|name| {
            // Searched anywhere in a line: the first one follows the harness's `test … `.
            let prefix = format!("{name} logged ");
            child
                .stdout
                .lines()
                .find_map(|l| {
                    let (_, rest) = l.split_once(&prefix)?;
                    rest.strip_suffix(" records")?.parse().ok()
                })
                .unwrap_or_else(|| panic!("the child did not say how many {name} logged\n{child}"))
        })
        .collect();
    let mut sorted = expected_files.to_vec();
    sorted.sort_unstable();
    assert_eq!(
        common::sorted_file_names(&logs),
        sorted,
        "logrotate did not leave the expected files\n{child}"
    );
    let files = expected_files
        .iter()
        .map(|&name| {
            let file = fs::File::open(logs.join(name)).unwrap();
            let mut reader: Box<dyn Read> = match name.ends_with(".gz") {
                true => Box::new(flate2::read::GzDecoder::new(file)),
                false => Box::new(file),
            };
            let mut contents = Vec::new();
            reader
                .read_to_end(&mut contents)
                .unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
            (name.to_string(), contents)
        })
        .collect();
    Rotated {
        logged,
        files,
        child: child.to_string(),
    }
}

/// One file's records: each thread's numbers in file order, and an unterminated last line.
struct FileRecords {
    numbers: Vec<Vec<u64>>,
    torn_tail: Option<String>,
}

/// Reads one file, failing on a NUL byte, a line that is not a whole record, or another
/// message.
fn records_of(name: &str, contents: &[u8], context: &str) -> FileRecords {
    if let Some(at) = contents.iter().position(|&b| b == 0) {
        panic!("{name} has a NUL byte at offset {at} (a hole left by a truncation?)\n{context}");
    }
    let text = std::str::from_utf8(contents)
        .unwrap_or_else(|e| panic!("{name} is not UTF-8: {e}\n{context}"));
    let (whole, tail) = match text.rfind('\n') {
        Some(end) => (&text[..=end], &text[end + 1..]),
        None => ("", text),
    };
    let mut numbers = vec![Vec::new(); THREADS.len()];
    for line in whole.lines() {
        let parsed = common::parse_line(line)
            .unwrap_or_else(|e| panic!("{name}: a line that is not whole: {e}\n{context}"));
        let (scope, number) = parsed
            .message
            .split_once(" record ")
            .and_then(|(scope, n)| Some((scope, n.parse::<u64>().ok()?)))
            .unwrap_or_else(|| {
                panic!("{name}: unexpected message {:?}\n{context}", parsed.message)
            });
        let thread = THREADS
            .iter()
            .position(|&t| t == scope)
            .unwrap_or_else(|| panic!("{name}: unexpected scope {scope:?}\n{context}"));
        numbers[thread].push(number);
    }
    FileRecords {
        numbers,
        torn_tail: (!tail.is_empty()).then(|| tail.to_string()),
    }
}

/// Rename, create a new file, SIGHUP: the process reopens the path; nothing is lost.
#[test]
fn create_and_sighup_lose_nothing() {
    const SCENARIO: &str = "create_and_sighup_lose_nothing";
    if let Some(log) = common::child_role(SCENARIO) {
        log_until_stopped(&log, true);
        return;
    }
    // The configuration the README recommends. `delaycompress`: the reopen follows the
    // SIGHUP asynchronously, so lines may still reach the renamed file just after
    // `postrotate`; it is compressed one rotation later, when nothing writes to it any more.
    let rotated = rotate_while_logging(
        SCENARIO,
        "    create\n    compress\n    delaycompress\n    postrotate\n        \
         kill -HUP \"$(cat '{pid_file}')\"\n    endscript\n",
        &["app.log.3.gz", "app.log.2.gz", "app.log.1", "app.log"],
    );
    let context = &rotated.child;
    let mut all = vec![Vec::new(); THREADS.len()];
    for (name, contents) in &rotated.files {
        let records = records_of(name, contents, context);
        assert_eq!(
            records.torn_tail, None,
            "{name} ends in a torn line\n{context}"
        );
        for (thread, numbers) in records.numbers.into_iter().enumerate() {
            all[thread].extend(numbers);
        }
    }
    for (thread, numbers) in all.iter().enumerate() {
        let logged = rotated.logged[thread];
        let expected: Vec<u64> = (0..logged).collect();
        if *numbers != expected {
            let first_wrong = numbers
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(numbers.len().min(expected.len()));
            panic!(
                "{}: {} of {logged} records across the files, first difference at position \
                 {first_wrong} (found {:?}, expected {:?})\n{context}",
                THREADS[thread],
                numbers.len(),
                numbers.get(first_wrong),
                expected.get(first_wrong)
            );
        }
    }
    println!(
        "create + delaycompress + SIGHUP: all {} records in the {} files",
        rotated.logged.iter().sum::<u64>(),
        rotated.files.len()
    );
}

/// Copy, then truncate in place: whole lines, no hole, no duplicate, order kept; the records
/// written between the copy and the truncate are lost, at most one gap per thread per rotation.
#[test]
fn copytruncate_loses_only_what_is_written_between_copy_and_truncate() {
    const SCENARIO: &str = "copytruncate_loses_only_what_is_written_between_copy_and_truncate";
    if let Some(log) = common::child_role(SCENARIO) {
        log_until_stopped(&log, false);
        return;
    }
    let rotated = rotate_while_logging(
        SCENARIO,
        "    copytruncate\n",
        &["app.log.3", "app.log.2", "app.log.1", "app.log"],
    );
    let context = &rotated.child;
    let last = rotated.files.len() - 1;
    let mut torn_tails = 0;
    // Per thread: the last number seen in an earlier file, the gaps between files, the count.
    let mut previous: Vec<Option<u64>> = vec![None; THREADS.len()];
    let mut gaps: Vec<Vec<(u64, u64)>> = vec![Vec::new(); THREADS.len()];
    let mut present = vec![0u64; THREADS.len()];
    for (index, (name, contents)) in rotated.files.iter().enumerate() {
        let records = records_of(name, contents, context);
        if let Some(tail) = &records.torn_tail {
            assert!(
                index != last,
                "the live file {name} ends in a torn line {tail:?}\n{context}"
            );
            torn_tails += 1;
        }
        for (thread, numbers) in records.numbers.iter().enumerate() {
            let who = THREADS[thread];
            for pair in numbers.windows(2) {
                assert_eq!(
                    pair[1],
                    pair[0] + 1,
                    "{name}: {who}'s records are not consecutive inside one file (a loss or \
                     duplicate outside a copy window)\n{context}"
                );
            }
            let (Some(&first), Some(&end)) = (numbers.first(), numbers.last()) else {
                continue;
            };
            let expected_first = previous[thread].map_or(0, |p| p + 1);
            assert!(
                first >= expected_first,
                "{name}: {who} record {first} is a duplicate or out of order (the previous file \
                 ended at {:?})\n{context}",
                previous[thread]
            );
            if first > expected_first {
                assert!(
                    index > 0,
                    "{who}'s records 0..{first} are missing from the oldest file\n{context}"
                );
                gaps[thread].push((expected_first, first));
            }
            previous[thread] = Some(end);
            present[thread] += numbers.len() as u64;
        }
    }
    let mut lost = 0;
    for (thread, &logged) in rotated.logged.iter().enumerate() {
        let who = THREADS[thread];
        assert_eq!(
            previous[thread],
            logged.checked_sub(1),
            "{who}: the live file does not end with its last record\n{context}"
        );
        assert!(
            gaps[thread].len() <= ROTATIONS,
            "{who}: {} gaps in {ROTATIONS} rotations: {:?}\n{context}",
            gaps[thread].len(),
            gaps[thread]
        );
        lost += logged - present[thread];
    }
    println!(
        "copytruncate: {lost} of {} records lost in {ROTATIONS} rotations (missing ranges per \
         thread: {gaps:?}; {torn_tails} copies ending in a torn line)",
        rotated.logged.iter().sum::<u64>()
    );
}
