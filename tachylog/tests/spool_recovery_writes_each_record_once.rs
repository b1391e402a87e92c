//! The spool's exactly-once cases, each in real child processes killed by a real SIGKILL:
//! - killed after a batch reached the file and before its cut was committed (a test hook): the
//!   batch is in the file but not in the ledger, and recovery must not write it twice;
//! - killed while the back end was held, every record still in the rings: all of them are
//!   recovered, those of the `log` facade too, with their levels, targets and fields;
//! - killed at a cut while its thread was still logging (the back end writing one batch while
//!   it formats the next, the ring filling behind them): each record up to the last one
//!   published once, none lost, none twice;
//! - recovered twice (the first recovery killed before it removed the spool): still once, also
//!   for a process killed before its back end ran.
// Unix only: SIGKILL and the spool are Unix-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn spool_dir(log: &Path) -> PathBuf {
    log.with_extension("spool")
}

fn recover(log: &Path) -> String {
    let child = common::run_child_with_log("spool_recoverer", log, Duration::from_secs(60));
    assert!(child.status.success(), "{child}");
    common::read_log(log)
}

/// The numbered records of `scope` in `lines`, with whether each was recovered.
fn numbered<'a>(lines: &[common::Line<'a>], scope: &str) -> Vec<(u64, bool)> {
    let prefix = format!("{scope} ");
    lines
        .iter()
        .filter_map(|l| {
            let (message, recovered) = match l.message.strip_prefix("[recovered] ") {
                Some(rest) => (rest, true),
                None => (l.message, false),
            };
            let n = message
                .strip_prefix(&prefix)?
                .split(' ')
                .next()?
                .parse()
                .ok()?;
            Some((n, recovered))
        })
        .collect()
}

fn assert_once_each(records: &[(u64, bool)], count: u64, context: &str) {
    let mut numbers: Vec<u64> = records.iter().map(|(n, _)| *n).collect();
    numbers.sort_unstable();
    let expected: Vec<u64> = (0..count).collect();
    assert_eq!(
        numbers, expected,
        "{context}: not every record exactly once"
    );
}

/// Child roles, each a no-op in the parent.
#[test]
fn spool_recoverer() {
    if let Some(log) = common::child_role("spool_recoverer") {
        // The writers' level: recovered records go to the sinks whose level takes them.
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .spool(spool_dir(&log))
                .level(tachylog::Level::Debug)
                .init(),
        );
        drop(guard);
    }
}

/// A recovery killed (SIGKILL) while it removed the spool: after it renamed the directory and
/// removed its first file.
#[test]
fn killed_removing() {
    if let Some(log) = common::child_role("killed_removing") {
        recover_and_be_killed(&log, true);
    }
}

/// A recovery killed while it removes the spool leaves no false alarm: the next start finds
/// a directory whose removal began, finishes it without a word, sets nothing aside, and every
/// record is in the file once. `TACHYLOG_CLEANUP_ROUNDS` rounds (default 5).
#[test]
fn a_recovery_killed_while_removing_the_spool_leaves_no_false_alarm() {
    let rounds: usize = std::env::var("TACHYLOG_CLEANUP_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        let writer = common::run_child_with_log("killed_while_held", &log, Duration::from_secs(60));
        assert_eq!(writer.status.signal(), Some(libc::SIGKILL), "{writer}");
        let killed = common::run_child_with_log("killed_removing", &log, Duration::from_secs(60));
        assert_eq!(killed.status.signal(), Some(libc::SIGKILL), "{killed}");
        let removing: Vec<_> = common::process_dirs(&spool_dir(&log))
            .into_iter()
            .filter(|d| d.to_string_lossy().ends_with(".removing"))
            .collect();
        assert_eq!(removing.len(), 1, "round {round}: the removal had begun");
        let recovery = common::run_child_with_log("spool_recoverer", &log, Duration::from_secs(60));
        assert!(recovery.status.success(), "{recovery}");
        let text = common::read_log(&log);
        let lines = common::parse_log(&text);
        assert_once_each(&numbered(&lines, "held"), 1_000, &format!("round {round}"));
        let warnings: Vec<_> = lines
            .iter()
            .filter(|l| l.level == "WARN" && l.module == "tachylog")
            .collect();
        assert!(warnings.is_empty(), "round {round}: {warnings:#?}");
        assert!(
            !recovery.stderr.contains("damaged"),
            "round {round}: {recovery}"
        );
        let left: Vec<_> = std::fs::read_dir(spool_dir(&log))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "locks")
            .collect();
        assert!(left.is_empty(), "round {round}: {left:?} left in the spool");
    }
}

/// A recovery killed (SIGKILL) once it wrote the records, before it removed the spool.
#[test]
fn killed_recovering() {
    if let Some(log) = common::child_role("killed_recovering") {
        recover_and_be_killed(&log, false);
    }
}

/// Recovers the spool beside `log` with the test hook set to kill the recovery before it
/// removes the spool (`during`: once it began to).
fn recover_and_be_killed(log: &Path, during: bool) {
    tachylog::__private::kill_recovery_before_cleanup(during);
    let guard = common::expect_init(
        tachylog::builder()
            .file(log)
            .spool(spool_dir(log))
            .level(tachylog::Level::Debug)
            .init(),
    );
    drop(guard);
    panic!("the recovery was to be killed");
}

#[test]
fn killed_before_commit() {
    if let Some(log) = common::child_role("killed_before_commit") {
        std::mem::forget(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
        for i in 0..1_000u64 {
            tachylog::info!("batch {} of the committed cut", i);
        }
        tachylog::flush();
        common::log_uncommitted_and_die(|| {
            for i in 1_000..2_000u64 {
                tachylog::info!("batch {} written, never committed", i);
            }
        });
    }
}

/// More records than the child can log before the back end's next cut: the loop never ends by
/// itself, so the kill comes while the thread logs.
const STREAM_BOUND: u64 = 50_000_000;
/// Records waiting when the back end is let go: more than two of its batches (4,096 records
/// each), so that it takes one, hands it to the file while it takes the next, and dies at the
/// first batch's cut with records it never took still in the ring.
const WAITING: u64 = 10_000;

#[test]
fn killed_at_a_cut_while_logging() {
    if let Some(log) = common::child_role("killed_at_a_cut_while_logging") {
        std::mem::forget(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
        for i in 0..1_000u64 {
            tachylog::info!("stream {} before the hook", i);
        }
        tachylog::flush();
        tachylog::__private::kill_before_next_commit();
        tachylog::__private::hold_backend(true);
        for i in 1_000..1_000 + WAITING {
            tachylog::info!("stream {} waiting for the back end", i);
        }
        tachylog::__private::hold_backend(false);
        for i in 1_000 + WAITING..STREAM_BOUND {
            tachylog::info!("stream {} logged while cuts are taken", i);
        }
        tachylog::flush();
        common::await_fatal_signal(Duration::from_secs(30));
    }
}

/// A type only the writing program can format.
#[derive(Clone, Copy)]
#[repr(C)]
struct Ticket {
    id: u32,
    lane: u32,
}

impl std::fmt::Display for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ticket {}/{}", self.id, self.lane)
    }
}

impl tachylog::CopyArg for Ticket {}

/// One call site for every `T`: each type's argument list is its own.
fn generic<T: std::fmt::Display + std::fmt::Debug>(n: u64, value: T) {
    tachylog::info!("generic {} holds {} ({:?})", n, value, value);
}

#[test]
fn own_types_and_generic_sites_before_commit() {
    if let Some(log) = common::child_role("own_types_and_generic_sites_before_commit") {
        std::mem::forget(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
        for n in 0..200u64 {
            tachylog::info!(
                "own {} is {}",
                n,
                Ticket {
                    id: n as u32,
                    lane: 3
                }
            );
        }
        tachylog::flush();
        // The next batch reaches the file and its cut is never committed.
        common::log_uncommitted_and_die(|| {
            for n in 200..400u64 {
                tachylog::info!(
                    "own {} is {}",
                    n,
                    Ticket {
                        id: n as u32,
                        lane: 3
                    }
                );
            }
        });
    }
}

#[test]
fn generic_sites_killed_while_held() {
    if let Some(log) = common::child_role("generic_sites_killed_while_held") {
        std::mem::forget(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
        tachylog::__private::hold_backend(true);
        for n in 0..100u64 {
            generic(n, n * 7);
            generic(n, "text");
            generic(n, n as f64 / 4.0);
        }
        // SAFETY: killing our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        common::await_fatal_signal(Duration::from_secs(30));
    }
}

/// Lines the dead process wrote with a value of its own type are found in the file, though
/// recovery can show that value only as its type name and bytes: none is written twice.
#[test]
fn a_value_of_the_programs_own_type_is_not_written_twice() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let child = common::run_child_with_log(
        "own_types_and_generic_sites_before_commit",
        &log,
        Duration::from_secs(60),
    );
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    let before = common::read_log(&log);
    assert!(
        before.contains("own 399 is ticket 399/3"),
        "the batch reached the file"
    );
    let text = recover(&log);
    assert!(text.starts_with(&before));
    let lines = common::parse_log(&text);
    assert_once_each(&numbered(&lines, "own"), 400, "own types");
    assert!(
        lines
            .iter()
            .all(|l| !l.message.starts_with("[recovered] own")),
        "a line already in the file was written again:\n{}",
        common::tail(&text, 1_000)
    );
}

/// A call site in a generic function logged with three argument types: each type's records
/// are recovered with their values.
#[test]
fn a_generic_site_recovers_the_values_of_every_type() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let child = common::run_child_with_log(
        "generic_sites_killed_while_held",
        &log,
        Duration::from_secs(60),
    );
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    let text = recover(&log);
    for n in [0u64, 1, 57, 99] {
        for expected in [
            format!("[recovered] generic {n} holds {} ({})", n * 7, n * 7),
            format!("[recovered] generic {n} holds text (\"text\")"),
            format!(
                "[recovered] generic {n} holds {} ({:?})",
                n as f64 / 4.0,
                n as f64 / 4.0
            ),
        ] {
            assert!(text.contains(&expected), "{expected} missing:\n{text}");
        }
    }
    assert!(!text.contains("<?>"), "{text}");
    assert_eq!(
        common::parse_log(&text).len(),
        301,
        "300 records and the notice"
    );
}

#[test]
fn killed_while_held() {
    if let Some(log) = common::child_role("killed_while_held") {
        log_held_and_die(&log, false);
    }
}

/// Held before `init`: the back end never ran, the ledger is only what `init` committed.
#[test]
fn killed_before_the_back_end_ran() {
    if let Some(log) = common::child_role("killed_before_the_back_end_ran") {
        log_held_and_die(&log, true);
    }
}

/// Logs 1,000 numbered records ("held N") while the back end is held, then SIGKILLs itself.
fn log_held_and_die(log: &Path, hold_before_init: bool) {
    if hold_before_init {
        tachylog::__private::hold_backend(true);
    }
    std::mem::forget(common::expect_init(
        tachylog::builder()
            .file(log)
            .spool(spool_dir(log))
            .level(tachylog::Level::Debug)
            .init(),
    ));
    tachylog::__private::hold_backend(true);
    for i in 0..500u64 {
        tachylog::warn!(user = "ada", attempt = i; "held {} at {:>6.2}%", i, i as f64 / 5.0);
        log::debug!(target: "facade", "held {} through log", i + 500);
    }
    // SAFETY: killing our own process.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    common::await_fatal_signal(Duration::from_secs(30));
}

#[test]
fn a_batch_written_but_not_committed_is_written_once() {
    for run in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        let child =
            common::run_child_with_log("killed_before_commit", &log, Duration::from_secs(60));
        assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
        let before = common::read_log(&log);
        let text = recover(&log);
        let lines = common::parse_log(&text);
        let records = numbered(&lines, "batch");
        assert_once_each(&records, 2_000, &format!("run {run}"));
        // The killed cut's batch was in the file before recovery: the hook fires after the
        // write. It holds the first of the uncommitted records, or all of them when the back
        // end took them in one batch. Recovery found those lines there and left them as they
        // were, and wrote the rest, marked.
        let written: std::collections::HashSet<u64> =
            numbered(&common::parse_log(&before), "batch")
                .into_iter()
                .map(|(n, _)| n)
                .collect();
        let uncommitted_written = written.iter().filter(|&&n| n >= 1_000).count();
        assert!(
            uncommitted_written > 0,
            "run {run}: the uncommitted batch was not in the file before recovery"
        );
        assert!(
            text.starts_with(&before),
            "run {run}: recovery changed what the dead process had written"
        );
        for &(n, recovered) in &records {
            assert_eq!(
                recovered,
                !written.contains(&n),
                "run {run}: record {n} was in the file before recovery: {}, and recovered: \
                 {recovered}",
                written.contains(&n)
            );
        }
        assert!(
            text.contains(&format!("({uncommitted_written} already in their files)")),
            "run {run}: {}",
            common::tail(&text, 1_000)
        );
    }
}

/// The cut the process dies at is taken while its thread logs on: the records of that cut's
/// batch are in the file, the next batch is on its way there, later records are in the ring
/// (the last one possibly half-written), and the producer may be waiting for the space the cut
/// would have given back. Recovery leaves the file as it was and writes the rest: every record
/// up to the last one the thread published, each once.
#[test]
fn a_cut_taken_while_the_thread_logs_loses_nothing_and_repeats_nothing() {
    for run in 0..common::REPEATS {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        let child = common::run_child_with_log(
            "killed_at_a_cut_while_logging",
            &log,
            Duration::from_secs(60),
        );
        assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
        let before = common::read_log(&log);
        let text = recover(&log);
        assert!(
            text.starts_with(&before),
            "run {run}: recovery changed what the dead process had written"
        );
        let records = numbered(&common::parse_log(&text), "stream");
        let count = records.iter().map(|(n, _)| n + 1).max().unwrap_or(0);
        assert!(
            (1_000 + WAITING..STREAM_BOUND).contains(&count),
            "run {run}: {count} records: the kill did not come while the thread logged"
        );
        assert_once_each(&records, count, &format!("run {run}"));
        let written: std::collections::HashSet<u64> =
            numbered(&common::parse_log(&before), "stream")
                .into_iter()
                .map(|(n, _)| n)
                .collect();
        for &(n, recovered) in &records {
            assert_eq!(
                recovered,
                !written.contains(&n),
                "run {run}: record {n}: in the file before recovery: {}, recovered: {recovered}",
                written.contains(&n)
            );
        }
        assert!(
            records.iter().any(|&(_, recovered)| recovered),
            "run {run}: nothing was left in the rings at the kill"
        );
    }
}

#[test]
fn records_still_in_the_rings_are_all_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let child = common::run_child_with_log("killed_while_held", &log, Duration::from_secs(60));
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    assert!(
        !common::read_log(&log).contains("held "),
        "the back end was held: nothing may be in the file before recovery"
    );
    let text = recover(&log);
    let lines = common::parse_log(&text);
    let records = numbered(&lines, "held");
    assert_once_each(&records, 1_000, "held records");
    assert!(records.iter().all(|(_, recovered)| *recovered));
    let first = lines
        .iter()
        .find(|l| l.message.contains("held 7 at"))
        .expect("record 7");
    assert_eq!(first.level, "WARN");
    assert_eq!(
        first.message,
        "[recovered] held 7 at   1.40% user=ada attempt=7"
    );
    let facade = lines
        .iter()
        .find(|l| l.message.contains("held 507 through log"))
        .expect("record 507");
    assert_eq!((facade.level, facade.module), ("DEBUG", "facade"));
    // Each thread's records in time order, and dated before the recovery ran.
    assert!(lines.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
}

#[test]
fn a_recovery_killed_halfway_is_recovered_again_once() {
    // The dead process's back end ran (its ledger's last cut is its own) or never did (only
    // `init`'s cut is there).
    for role in ["killed_while_held", "killed_before_the_back_end_ran"] {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        let child = common::run_child_with_log(role, &log, Duration::from_secs(60));
        assert_eq!(
            child.status.signal(),
            Some(libc::SIGKILL),
            "{role}: {child}"
        );
        // A recovery that wrote the files and was killed before it removed the spool: the
        // next one knows from the first one's journal what it wrote.
        let killed = common::run_child_with_log("killed_recovering", &log, Duration::from_secs(60));
        assert_eq!(killed.status.signal(), Some(libc::SIGKILL), "{killed}");
        let first = common::read_log(&log);
        assert_eq!(numbered(&common::parse_log(&first), "held").len(), 1_000);
        assert_eq!(
            common::process_dirs(&spool_dir(&log)).len(),
            2,
            "the dead process's directory kept, and the killed recovery's own"
        );
        let text = recover(&log);
        let records = numbered(&common::parse_log(&text), "held");
        assert_once_each(&records, 1_000, &format!("{role}: after two recoveries"));
    }
}

#[test]
fn a_live_process_keeps_its_spool_while_a_dead_one_is_recovered() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let spool = spool_dir(&log);
    // This process is the live instance: its directory's lock is held while its logger runs.
    let guard = common::expect_init(
        tachylog::builder()
            .file(dir.path().join("live.log"))
            .spool(&spool)
            .init(),
    );
    tachylog::info!("the live instance logs");
    tachylog::flush();
    let live = common::process_dirs(&spool);
    assert_eq!(live.len(), 1);
    let child = common::run_child_with_log("killed_while_held", &log, Duration::from_secs(60));
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    assert_eq!(
        common::process_dirs(&spool).len(),
        2,
        "two instances, two directories"
    );
    let text = recover(&log);
    assert_once_each(
        &numbered(&common::parse_log(&text), "held"),
        1_000,
        "the dead one",
    );
    assert!(
        live[0].join("lock").exists(),
        "the live instance's spool was left alone"
    );
    assert_eq!(common::process_dirs(&spool).len(), 1);
    drop(guard);
    assert_eq!(
        common::process_dirs(&spool).len(),
        0,
        "a clean end removes its directory"
    );
    assert!(common::read_log(&dir.path().join("live.log")).contains("the live instance logs"));
}

#[test]
fn a_file_another_process_appended_to_keeps_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let child = common::run_child_with_log("killed_before_commit", &log, Duration::from_secs(60));
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    // Another process appends to the same file after the dead one's uncommitted batch.
    let first = common::read_log(&log).lines().next().unwrap().to_string();
    let foreign: Vec<String> = (0..3)
        .map(|i| {
            first.replace(
                "batch 0 of the committed cut",
                &format!("from another process {i}"),
            )
        })
        .collect();
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        for line in &foreign {
            writeln!(file, "{line}").unwrap();
        }
    }
    let text = recover(&log);
    let lines = common::parse_log(&text);
    assert_once_each(&numbered(&lines, "batch"), 2_000, "shared file");
    for line in &foreign {
        assert!(
            text.contains(line.as_str()),
            "another process's line was cut: {line}"
        );
    }
}

#[test]
fn a_logger_does_not_recover_its_own_spool() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let spool = spool_dir(&log);
    // The logger's own directory is made before its back end recovers the spool: its lock is
    // this process's, which `fcntl` does not refuse to this process.
    let guard = common::expect_init(tachylog::builder().file(&log).spool(&spool).init());
    for i in 0..100u64 {
        tachylog::info!("live {} of the process itself", i);
    }
    let recovery = guard.recovery().expect("a spool was given");
    assert_eq!(
        (recovery.processes, recovery.records),
        (0, 0),
        "{recovery:?}"
    );
    assert_eq!(
        common::process_dirs(&spool).len(),
        1,
        "its own spool is still there"
    );
    drop(guard);
    let text = common::read_log(&log);
    let lines = common::parse_log(&text);
    assert_once_each(&numbered(&lines, "live"), 100, "the process's own records");
    assert!(lines.iter().all(|l| !l.message.starts_with("[recovered]")));
}

/// A sink that is no file (the application's own here, as syslog or OTLP would be) gets every
/// recovered record, beside the file: at least once, since nothing says what it had taken.
#[test]
fn a_sink_that_is_no_file_gets_every_recovered_record() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let child = common::run_child_with_log("killed_while_held", &log, Duration::from_secs(60));
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    let collected = common::CollectLines(Default::default());
    let lines = collected.0.clone();
    let guard = common::expect_init(
        tachylog::builder()
            .file(&log)
            .sink(collected)
            .spool(spool_dir(&log))
            .level(tachylog::Level::Debug)
            .init(),
    );
    drop(guard);
    let lines = lines.lock().unwrap();
    let held: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("[recovered] held "))
        .collect();
    assert_eq!(held.len(), 1_000, "{lines:?}");
    assert_once_each(
        &numbered(&common::parse_log(&common::read_log(&log)), "held"),
        1_000,
        "the file",
    );
}
