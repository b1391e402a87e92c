//! Rate limits and sampling at the call site (`every = ...`, `sample = ...`, `key = ...`):
//! the calls let through carry `suppressed = N`, the skipped calls since the previous one, and
//! skipped calls that no later call reports are reported by the back end (a summary record at
//! the call site's level, target, file and line, with `suppressed` and `limit` fields): at `flush()`, when the
//! guard drops, on a SIGTERM's drain (in a child process), and by itself once a period ends
//! with no call passing. So the lines a site wrote plus all the `suppressed` counts are exactly
//! the calls made, across threads too, with no later call. Skipped calls evaluate none of their
//! arguments.
//!
//! The floods end on events (a number of calls that passed), not after a time; no assertion
//! depends on how fast anything runs.

mod common;

use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

static EVALUATED: AtomicU64 = AtomicU64::new(0);

fn expensive() -> u64 {
    EVALUATED.fetch_add(1, Ordering::Relaxed)
}

/// The tests of this file each run a logger of their own, one at a time.
fn logger_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn json_logger(path: &Path) -> tachylog::Guard {
    tachylog::builder()
        .file_with(
            path,
            tachylog::SinkOptions::new().format(tachylog::Format::Json),
        )
        .init()
        .unwrap()
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn suppressed(record: &Value) -> u64 {
    record["fields"]["suppressed"]
        .as_u64()
        .unwrap_or_else(|| panic!("a numeric suppressed field: {record}"))
}

/// One rate-limited call site's calls, counted by the test: all of them, and those that passed
/// (counted by an argument, which only a call that passes evaluates).
struct Site {
    calls: AtomicU64,
    passed: AtomicU64,
}

impl Site {
    const fn new() -> Self {
        Site {
            calls: AtomicU64::new(0),
            passed: AtomicU64::new(0),
        }
    }

    /// The argument of the site's call: evaluated only if the call passes.
    fn pass(&self) -> u64 {
        self.passed.fetch_add(1, Ordering::Relaxed)
    }

    fn called(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }

    fn passed(&self) -> u64 {
        self.passed.load(Ordering::Relaxed)
    }
}

/// What the log holds for one site: its own lines (found by `marker`, how their message
/// starts) and the back end's summaries at the same file and line.
struct Accounted {
    lines: u64,
    summaries: u64,
    suppressed: u64,
}

fn accounted(records: &[Value], marker: &str) -> Accounted {
    let own: Vec<&Value> = records
        .iter()
        .filter(|r| r["message"].as_str().is_some_and(|m| m.starts_with(marker)))
        .collect();
    let Some(first) = own.first() else {
        return Accounted {
            lines: 0,
            summaries: 0,
            suppressed: 0,
        };
    };
    let at_the_site = |r: &Value| r["file"] == first["file"] && r["line"] == first["line"];
    assert!(
        own.iter().all(|r| at_the_site(r)),
        "{marker}: lines from more than one call site"
    );
    let summaries: Vec<&Value> = records
        .iter()
        .filter(|r| r["fields"]["limit"].is_string() && at_the_site(r))
        .collect();
    for summary in &summaries {
        // The summary goes where the site's records go: same level, same target.
        assert_eq!(summary["target"], first["target"], "{summary}");
        assert_eq!(summary["level"], first["level"], "{summary}");
        assert!(
            summary["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("rate limit summary: ")),
            "{summary}"
        );
    }
    Accounted {
        lines: own.len() as u64,
        summaries: summaries.len() as u64,
        suppressed: own.iter().chain(&summaries).map(|r| suppressed(r)).sum(),
    }
}

/// Every call of `site` is a line of its own or counted in a `suppressed`; returns how many
/// summaries the back end wrote for it.
fn assert_every_call_accounted(records: &[Value], marker: &str, site: &Site) -> u64 {
    assert_calls_accounted(
        records,
        marker,
        site.calls.load(Ordering::Relaxed),
        site.passed(),
    )
}

/// [`assert_every_call_accounted`] for a site that made `calls` calls, `passed` of which passed.
fn assert_calls_accounted(records: &[Value], marker: &str, calls: u64, passed: u64) -> u64 {
    let found = accounted(records, marker);
    assert_eq!(
        found.lines, passed,
        "{marker}: one line per call that passed"
    );
    assert_eq!(
        found.lines + found.suppressed,
        calls,
        "{marker}: {} lines and {} suppressed ({} summaries) for {calls} calls",
        found.lines,
        found.suppressed,
        found.summaries
    );
    found.summaries
}

/// Runs `iteration` on three threads (which then exit) and on the calling one (which goes on),
/// each passing its index, until `done` holds; then each calls `last` with its index.
fn flood(iteration: fn(u32), done: fn() -> bool, last: fn(u32)) {
    // Plain threads, joined: `join` returns after a thread's thread-locals are gone, which is
    // when it hands its counts over (a scope may return a little before that).
    let threads: Vec<_> = (1..4)
        .map(|i| {
            std::thread::spawn(move || {
                while !done() {
                    iteration(i);
                }
                last(i);
            })
        })
        .collect();
    while !done() {
        iteration(0);
    }
    last(0);
    for thread in threads {
        thread.join().unwrap();
    }
}

#[test]
fn limited_calls_report_every_call_they_skipped() {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    let guard = json_logger(&path);
    let read = |marker: &str| -> Vec<Value> {
        tachylog::flush();
        records(&path)
            .into_iter()
            .filter(|r| r["message"].as_str().is_some_and(|m| m.contains(marker)))
            .collect()
    };

    // Sampling: one call in ten passes, the first included; the others evaluate nothing.
    for i in 0..100u64 {
        tachylog::info!(sample = 10; "sampled {} {}", i, expensive());
    }
    let sampled = read("sampled");
    assert_eq!(sampled.len(), 10);
    assert_eq!(
        EVALUATED.load(Ordering::Relaxed),
        10,
        "skipped calls evaluated their arguments"
    );
    assert_eq!(suppressed(&sampled[0]), 0);
    assert!(sampled[1..].iter().all(|r| suppressed(r) == 9));
    assert_eq!(sampled[1]["message"], "sampled 10 1");

    // A disabled level neither passes nor counts.
    for _ in 0..5 {
        tachylog::debug!(sample = 2; "never {}", expensive());
    }
    assert_eq!(EVALUATED.load(Ordering::Relaxed), 10);

    // `every`, from four threads at once, over several periods: the records that passed carry
    // the counts handed over at each period's end, and the calls skipped after the last one
    // that passed come in a summary at `flush()`.
    static BUSY: Site = Site::new();
    fn busy(_: u32) {
        tachylog::warn!(every = Duration::from_millis(20); "busy {}", BUSY.pass());
        BUSY.called();
    }
    flood(busy, || BUSY.passed() >= 3, |_| {});
    tachylog::flush();
    assert_every_call_accounted(&records(&path), "busy ", &BUSY);

    // Per key: each key has its own limit.
    for round in 0..5 {
        for peer in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] {
            tachylog::error!(every = Duration::from_secs(3600), key = peer, peer; "refused {}", round);
        }
    }
    let refused = read("refused");
    assert_eq!(refused.len(), 3, "{refused:#?}");
    for (record, peer) in refused.iter().zip(["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
        assert_eq!(record["fields"]["peer"], peer, "{record}");
        assert_eq!(suppressed(record), 0);
    }
    drop(guard);
}

/// Every kind of limit, flooded by threads that exit and by one that does not: `every` over
/// several periods and within one that outlasts the test (the calls after the first can only
/// be reported by the back end), `every` per key, and `sample`. Each ends with skipped calls
/// that no later call reports.
mod at_flush {
    use super::Site;
    use std::time::Duration;

    pub static SHORT: Site = Site::new();
    pub static HOUR: Site = Site::new();
    pub static KEYED: Site = Site::new();
    pub static SAMPLED: Site = Site::new();

    pub fn iteration(thread: u32) {
        tachylog::warn!(every = Duration::from_millis(20); "flush-short {}", SHORT.pass());
        SHORT.called();
        tachylog::warn!(every = Duration::from_secs(3600); "flush-hour {}", HOUR.pass());
        HOUR.called();
        let peer = thread % 2;
        tachylog::warn!(every = Duration::from_secs(3600), key = peer; "flush-keyed {}", KEYED.pass());
        KEYED.called();
        sampled();
    }

    fn sampled() {
        tachylog::info!(sample = 7; "flush-sampled {}", SAMPLED.pass());
        SAMPLED.called();
        SAMPLED_ON_THIS_THREAD.set(SAMPLED_ON_THIS_THREAD.get() + 1);
    }

    pub fn done() -> bool {
        SHORT.passed() >= 3
    }

    /// Three more sampled calls than a whole number of samples: three skipped calls per thread
    /// that no later call reports.
    pub fn last(_: u32) {
        while SAMPLED_ON_THIS_THREAD.get() % 7 != 4 {
            sampled();
        }
    }

    thread_local! {
        static SAMPLED_ON_THIS_THREAD: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
}

/// A sink that keeps only ERROR records, and a filter that keeps only this crate's target, still
/// get the summaries of an `error!` site: they carry its level and target, not a WARN of
/// tachylog's own.
#[test]
fn a_summary_reaches_the_sinks_that_keep_its_sites_records() {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("errors.jsonl");
    let guard = tachylog::builder()
        .filter(format!("off,{}=error", module_path!()))
        .file_with(
            &path,
            tachylog::SinkOptions::new()
                .format(tachylog::Format::Json)
                .level(tachylog::Level::Error),
        )
        .init()
        .unwrap();
    static ERRORS: Site = Site::new();
    for _ in 0..50 {
        tachylog::error!(every = Duration::from_secs(3600); "only-errors {}", ERRORS.pass());
        ERRORS.called();
        tachylog::error!(sample = 8; "only-errors-sampled");
    }
    tachylog::flush();
    let records = records(&path);
    assert_eq!(
        assert_every_call_accounted(&records, "only-errors ", &ERRORS),
        1,
        "{records:?}"
    );
    let sampled = assert_calls_accounted(&records, "only-errors-sampled", 50, 7);
    assert_eq!(sampled, 1, "{records:?}");
    let summaries: Vec<&Value> = records
        .iter()
        .filter(|r| r["fields"]["limit"].is_string())
        .collect();
    assert_eq!(summaries.len(), 2, "{records:?}");
    for summary in summaries {
        assert_eq!(summary["level"], "ERROR", "{summary}");
        assert_eq!(summary["target"], module_path!(), "{summary}");
    }
    drop(guard);
}

#[test]
fn skipped_calls_no_later_call_reports_are_written_at_flush() {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    let guard = json_logger(&path);
    use at_flush::*;
    flood(iteration, done, last);
    tachylog::flush();
    let records = records(&path);
    assert_every_call_accounted(&records, "flush-short ", &SHORT);
    assert!(assert_every_call_accounted(&records, "flush-hour ", &HOUR) >= 1);
    assert!(assert_every_call_accounted(&records, "flush-keyed ", &KEYED) >= 1);
    assert!(assert_every_call_accounted(&records, "flush-sampled ", &SAMPLED) >= 1);
    drop(guard);
}

/// The same sites as [`at_flush`], for the tests that end the logger: by dropping the guard,
/// and by a signal (in a child process of its own, where these sites start fresh).
mod until_the_end {
    use super::Site;
    use std::time::Duration;

    pub static SHORT: Site = Site::new();
    pub static HOUR: Site = Site::new();
    pub static KEYED: Site = Site::new();
    pub static SAMPLED: Site = Site::new();

    pub fn iteration(thread: u32) {
        tachylog::warn!(every = Duration::from_millis(20); "end-short {}", SHORT.pass());
        SHORT.called();
        tachylog::warn!(every = Duration::from_secs(3600); "end-hour {}", HOUR.pass());
        HOUR.called();
        let peer = thread % 2;
        tachylog::warn!(every = Duration::from_secs(3600), key = peer; "end-keyed {}", KEYED.pass());
        KEYED.called();
        sampled();
    }

    fn sampled() {
        tachylog::info!(sample = 7; "end-sampled {}", SAMPLED.pass());
        SAMPLED.called();
        SAMPLED_ON_THIS_THREAD.set(SAMPLED_ON_THIS_THREAD.get() + 1);
    }

    pub fn done() -> bool {
        SHORT.passed() >= 3
    }

    /// As in [`super::at_flush`]: three skipped `sample` calls per thread left unreported.
    pub fn last(_: u32) {
        while SAMPLED_ON_THIS_THREAD.get() % 7 != 4 {
            sampled();
        }
    }

    thread_local! {
        static SAMPLED_ON_THIS_THREAD: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
}

#[test]
fn skipped_calls_no_later_call_reports_are_written_when_the_guard_drops() {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    let guard = json_logger(&path);
    use until_the_end::*;
    flood(iteration, done, last);
    drop(guard);
    let records = records(&path);
    assert_every_call_accounted(&records, "end-short ", &SHORT);
    assert!(assert_every_call_accounted(&records, "end-hour ", &HOUR) >= 1);
    assert!(assert_every_call_accounted(&records, "end-keyed ", &KEYED) >= 1);
    assert!(assert_every_call_accounted(&records, "end-sampled ", &SAMPLED) >= 1);
}

/// Sites flooded by threads that all exit: nothing is left on a running thread, so the back end
/// reports it all by itself, with no `flush()`.
mod unattended {
    use super::Site;
    use std::time::Duration;

    pub static SHORT: Site = Site::new();
    pub static KEYED: Site = Site::new();
    pub static SAMPLED: Site = Site::new();

    pub fn iteration(thread: u32) {
        tachylog::warn!(every = Duration::from_millis(20); "unattended-short {}", SHORT.pass());
        SHORT.called();
        let peer = thread % 2;
        tachylog::warn!(every = Duration::from_millis(20), key = peer; "unattended-keyed {}", KEYED.pass());
        KEYED.called();
        // Sampled with one in a million: only the first call of each thread passes.
        tachylog::info!(sample = 1_000_000; "unattended-sampled {}", SAMPLED.pass());
        SAMPLED.called();
    }
}

#[test]
fn a_period_that_ends_with_no_call_passing_is_reported_without_a_flush() {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    let guard = json_logger(&path);
    use unattended::*;
    let threads: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                while SHORT.passed() < 3 || KEYED.passed() < 4 {
                    iteration(i);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let total = |site: &Site| site.calls.load(Ordering::Relaxed);
    let complete = |marker: &str, site: &Site| {
        let found = accounted(&records(&path), marker);
        found.lines + found.suppressed == total(site)
    };
    // No later call and no flush: wait for the back end's own report (the limit only turns a
    // hang into a failure).
    common::wait_until(
        "the back end's report of what no later call did",
        Duration::from_secs(60),
        || {
            complete("unattended-short ", &SHORT)
                && complete("unattended-keyed ", &KEYED)
                && complete("unattended-sampled ", &SAMPLED)
        },
    );
    let records = records(&path);
    assert_every_call_accounted(&records, "unattended-short ", &SHORT);
    assert_every_call_accounted(&records, "unattended-keyed ", &KEYED);
    assert!(assert_every_call_accounted(&records, "unattended-sampled ", &SAMPLED) >= 1);
    drop(guard);
}

/// The sites of [`until_the_end`], in the order [`a_signals_drain_writes_the_skipped_calls_no_later_call_reports`]'s child prints them.
#[cfg(unix)]
const SIGNAL_SITES: [&str; 4] = ["end-short ", "end-hour ", "end-keyed ", "end-sampled "];

/// SIGTERM to a process whose threads flooded limited call sites and stopped: the handler's
/// drain writes the skipped calls that no later call reports, then the process dies of the
/// signal. The child prints its counts before it sends the signal.
// Unix only: SIGTERM and its handler.
#[cfg(unix)]
#[test]
fn a_signals_drain_writes_the_skipped_calls_no_later_call_reports() {
    use std::os::unix::process::ExitStatusExt;
    const SCENARIO: &str = "a_signals_drain_writes_the_skipped_calls_no_later_call_reports";
    if let Some(log) = common::child_role(SCENARIO) {
        use until_the_end::*;
        let _guard = json_logger(&log);
        flood(iteration, done, last);
        let counts: Vec<String> = [&SHORT, &HOUR, &KEYED, &SAMPLED]
            .iter()
            .map(|site| format!("{}/{}", site.calls.load(Ordering::Relaxed), site.passed()))
            .collect();
        println!("COUNTS {}", counts.join(" "));
        // SAFETY: sending a signal to our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        common::await_fatal_signal(Duration::from_secs(60));
    }
    let run = common::run_child(SCENARIO, Duration::from_secs(120));
    assert_eq!(run.status.signal(), Some(libc::SIGTERM), "{run}");
    let counts = run
        .stdout
        .lines()
        .find_map(|l| l.split_once("COUNTS ").map(|(_, counts)| counts))
        .unwrap_or_else(|| panic!("the child printed no counts: {run}"));
    let records: Vec<Value> = run
        .log
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    for (marker, counts) in SIGNAL_SITES.iter().zip(counts.split(' ')) {
        let (calls, passed) = counts.split_once('/').expect("calls/passed");
        let summaries = assert_calls_accounted(
            &records,
            marker,
            calls.parse().unwrap(),
            passed.parse().unwrap(),
        );
        if *marker != "end-short " {
            assert!(summaries >= 1, "{marker}: no summary\n{run}");
        }
    }
}
