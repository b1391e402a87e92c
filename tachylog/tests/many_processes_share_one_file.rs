//! Several processes appending to the same file, or the same rolling pattern, never tear or
//! interleave lines: each batch of whole lines is one `write(2)` on an `O_APPEND` descriptor,
//! and creating the next period's file from several processes at once is safe.
// Unix only: Wine emulates Windows' append-only writes with a size lookup and a positioned
// write, which races between processes (NTFS appends each `WriteFile` atomically).
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCENARIO: &str = "TACHYLOG_TEST_SHARED_SCENARIO";
const TARGET: &str = "TACHYLOG_TEST_SHARED_TARGET";
const PROCESS: &str = "TACHYLOG_TEST_SHARED_PROCESS";
const PROCESSES: usize = 4;

/// In a child: which process it is and where to write.
fn child_role(scenario: &str) -> Option<(String, String)> {
    match std::env::var(SCENARIO) {
        Ok(s) if s == scenario => Some((
            std::env::var(PROCESS).unwrap(),
            std::env::var(TARGET).unwrap(),
        )),
        _ => None,
    }
}

/// Starts `PROCESSES` copies of this test binary running `scenario` against `target`, and
/// waits (bounded) for all of them to succeed.
fn run_processes(scenario: &str, target: &Path) {
    let exe = std::env::current_exe().unwrap();
    let children: Vec<Child> = (0..PROCESSES)
        .map(|i| {
            Command::new(&exe)
                .args([scenario, "--exact", "--nocapture", "--test-threads=1"])
                .env(SCENARIO, scenario)
                .env(TARGET, target)
                .env(PROCESS, format!("p{i}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(240);
    for mut child in children {
        let mut status = None;
        let left = deadline.saturating_duration_since(Instant::now());
        if !common::poll_until(left, || {
            status = child.try_wait().unwrap();
            status.is_some()
        }) {
            let _ = child.kill();
            panic!("a writer process hung");
        }
        let status = status.unwrap();
        assert!(status.success(), "a writer process failed: {status}");
    }
}

#[test]
fn four_processes_append_100k_lines_each_to_one_file() {
    const RECORDS: u64 = 100_000;
    if let Some((process, target)) = child_role("four_processes_append_100k_lines_each_to_one_file")
    {
        // A small ring keeps the back end writing in many batches, interleaved with the others.
        let guard = common::expect_init(
            tachylog::builder()
                .file(target)
                .ring_capacity(64 * 1024)
                .init(),
        );
        common::log_numbered(&process, RECORDS);
        drop(guard);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.log");
    run_processes("four_processes_append_100k_lines_each_to_one_file", &path);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text); // panics on a torn line
    for i in 0..PROCESSES {
        common::assert_numbered(&lines, &format!("p{i}"), RECORDS);
    }
    assert_eq!(lines.len() as u64, PROCESSES as u64 * RECORDS);
}

#[cfg(feature = "rolling")]
#[test]
fn four_processes_share_a_per_second_pattern() {
    if let Some((process, target)) = child_role("four_processes_share_a_per_second_pattern") {
        let sink = tachylog::RollingFile::builder(format!("{target}/%H%M%S.log"))
            .utc(true)
            .open()
            .unwrap();
        let guard = common::expect_init(tachylog::builder().sink(sink).utc(true).init());
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_millis(2200) {
            tachylog::info!("{} record {}", process, n);
            n += 1;
            if n % 32 == 0 {
                // Pacing, not synchronisation: records spread over the seconds of the run.
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        tachylog::info!("{} wrote {}", process, n);
        drop(guard);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    run_processes("four_processes_share_a_per_second_pattern", dir.path());
    let mut next = [0u64; PROCESSES];
    let mut totals = [None; PROCESSES];
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in names {
        let text = common::read_log(&dir.path().join(&name));
        for line in common::parse_log(&text) {
            let hhmmss: String = line.timestamp[11..19]
                .chars()
                .filter(|c| *c != ':')
                .collect();
            assert_eq!(format!("{hhmmss}.log"), name, "{line:?} in the wrong file");
            let process: usize = line.message[1..2].parse().unwrap();
            if let Some((_, total)) = line.message.split_once(" wrote ") {
                totals[process] = Some(total.parse::<u64>().unwrap());
            } else {
                let (_, n) = line.message.split_once(" record ").unwrap();
                assert_eq!(n.parse::<u64>().unwrap(), next[process], "{line:?}");
                next[process] += 1;
            }
        }
    }
    for (process, total) in totals.iter().enumerate() {
        assert_eq!(Some(next[process]), *total, "p{process}: records missing");
    }
}
