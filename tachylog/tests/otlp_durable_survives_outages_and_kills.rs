//! A durable `OtlpSink` (`OtlpBuilder::durable`) against a real OpenTelemetry Collector
//! (`otlp/collector.rs`, built by `.ci/build-otelcol.sh`): what the sink took reaches the
//! collector although the collector is down for longer than any retry budget, restarts again
//! and again, or the application is SIGKILLed while it is down; a full outbox applies its
//! policy and counts every record it loses; and the caller never waits on the network.
//! Records are numbered; the receiver behind the collector counts each number's arrivals, so a
//! duplicate is seen, and the tests bound them as the documentation does.
#![cfg(all(feature = "otlp", unix))]

// Shared with the other collector tests: the TLS and proxy helpers are not used here.
#[allow(dead_code)]
#[path = "otlp/collector.rs"]
mod collector;
mod common;
#[path = "otlp/receiver.rs"]
mod receiver;

use collector::{free_port, Collector};
use receiver::{body, Receiver};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tachylog::{OtlpBuilder, OtlpSink, OutboxFull};

/// Records per request: also the most a crash may send twice (one request in flight).
const BATCH: usize = 100;

fn durable(port: u16, outbox: &Path, max_bytes: u64) -> OtlpBuilder {
    OtlpSink::builder(format!("http://127.0.0.1:{port}"))
        .durable(outbox, max_bytes)
        .batch_timeout(Duration::from_millis(50))
        .max_batch_records(BATCH)
        // A budget far shorter than the outages: a durable sink does not spend one.
        .max_retry_time(Duration::from_secs(1))
        .timeouts(Duration::from_millis(500), Duration::from_secs(5))
        .shutdown_timeout(Duration::from_secs(2))
}

fn init(sink: OtlpSink, spool: Option<&Path>) -> tachylog::Guard {
    let mut builder = tachylog::builder().sink(sink);
    if let Some(spool) = spool {
        builder = builder.spool(spool);
    }
    common::expect_init(builder.init())
}

/// How many times each `record N` arrived.
fn arrivals(receiver: &Receiver) -> HashMap<u64, u32> {
    let mut seen = HashMap::new();
    for record in receiver.delivered() {
        if let Some(n) = body(&record).strip_prefix("record ") {
            *seen.entry(n.parse().unwrap()).or_default() += 1;
        }
    }
    seen
}

/// Waits until every record of `0..count` arrived, failing after `limit` with what is missing.
fn wait_for_all(receiver: &Receiver, count: u64, limit: Duration) -> HashMap<u64, u32> {
    let started = Instant::now();
    loop {
        let seen = arrivals(receiver);
        let missing: Vec<u64> = (0..count).filter(|n| !seen.contains_key(n)).collect();
        if missing.is_empty() {
            return seen;
        }
        assert!(
            started.elapsed() < limit,
            "{} of {count} records never arrived, such as {:?}",
            missing.len(),
            &missing[..missing.len().min(10)]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Records that arrived more than once.
fn duplicates(seen: &HashMap<u64, u32>) -> u64 {
    seen.values().map(|&n| u64::from(n - 1)).sum()
}

/// Logs `record from..to` at `per_second`, returning the longest call.
fn log_paced(from: u64, to: u64, per_second: u64) -> Duration {
    let started = Instant::now();
    let mut longest = Duration::ZERO;
    for i in from..to {
        let call = Instant::now();
        tachylog::info!(n = i; "record {}", i);
        longest = longest.max(call.elapsed());
        let due = Duration::from_secs_f64((i - from + 1) as f64 / per_second as f64);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    longest
}

/// A receiver, a running collector forwarding to it, and a logger with a durable sink sending
/// to the collector (its outbox in `dir`, 1 GiB).
fn collector_and_durable_logger(
    dir: &Path,
) -> (Receiver, Collector, tachylog::OtlpStats, tachylog::Guard) {
    let receiver = Receiver::start();
    let collector = Collector::start(dir, free_port(), receiver.addr, None);
    let sink = durable(collector.port, &dir.join("outbox"), 1 << 30)
        .build()
        .unwrap();
    let stats = sink.stats();
    (receiver, collector, stats, init(sink, None))
}

fn outage_seconds() -> u64 {
    std::env::var("TACHYLOG_OUTAGE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

/// The collector stops for a minute (by default; `TACHYLOG_OUTAGE_SECS`) while the
/// application logs 500 records a second, sixty times the retry budget: once it is back every
/// record arrives, none is lost or dropped, and no log call waited on the network.
#[test]
fn an_outage_longer_than_any_retry_budget_loses_nothing() {
    let _lock = common::logger_lock();
    let outage = outage_seconds();
    let _dog = common::watchdog("outage test", Duration::from_secs(outage + 180));
    let dir = tempfile::tempdir().unwrap();
    let (receiver, mut collector, stats, guard) = collector_and_durable_logger(dir.path());
    let rate = 500;
    let before = log_paced(0, 2 * rate, rate);
    collector.stop();
    let down_until = 2 * rate + outage * rate;
    let during = log_paced(2 * rate, down_until, rate);
    let on_disk_in_outage = stats.on_disk();
    collector.restart();
    let total = down_until + 2 * rate;
    let after = log_paced(down_until, total, rate);
    let seen = wait_for_all(&receiver, total, Duration::from_secs(120));
    drop(guard);
    println!(
        "outage {outage} s: {total} records, duplicates {}, {on_disk_in_outage} on disk at its \
         end, longest call before/during/after {before:?}/{during:?}/{after:?}, {} requests",
        duplicates(&seen),
        stats.requests()
    );
    assert!(
        on_disk_in_outage >= outage * rate / 2,
        "only {on_disk_in_outage} records waited on disk during the outage"
    );
    assert_eq!((stats.lost(), stats.dropped()), (0, 0), "{stats:?}");
    assert_eq!(stats.accepted(), total);
    assert_eq!(stats.exported(), total + duplicates(&seen));
    // No process died: only a request in flight when the collector stopped may come twice.
    assert!(duplicates(&seen) <= BATCH as u64, "{}", duplicates(&seen));
}

/// The collector restarts five times at random short intervals while the application logs:
/// every record arrives.
#[test]
fn five_quick_collector_restarts_lose_nothing() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("restart test", Duration::from_secs(240));
    let dir = tempfile::tempdir().unwrap();
    let (receiver, mut collector, stats, guard) = collector_and_durable_logger(dir.path());
    let mut seed = std::process::id() as u64 | 1;
    let mut next = 0;
    for _ in 0..5 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let up = 200 + seed % 1500;
        let down = 200 + (seed >> 20) % 1500;
        log_paced(next, next + up, 1000);
        next += up;
        collector.stop();
        log_paced(next, next + down, 1000);
        next += down;
        collector.restart();
    }
    log_paced(next, next + 500, 1000);
    next += 500;
    let seen = wait_for_all(&receiver, next, Duration::from_secs(120));
    drop(guard);
    println!(
        "5 restarts: {next} records, duplicates {}, {:?}",
        duplicates(&seen),
        stats
    );
    assert_eq!((stats.lost(), stats.dropped()), (0, 0), "{stats:?}");
    // A request the collector took just as it was stopped may have been answered too late:
    // sent again, at most one request per restart.
    assert!(
        duplicates(&seen) <= 5 * BATCH as u64,
        "{}",
        duplicates(&seen)
    );
}

/// The child: logs numbered records with a spool and a durable sink to a collector that is
/// down, noting in a shared counter how many calls returned, until another thread SIGKILLs
/// the process at a moment set by the parent.
#[test]
fn killed_while_the_collector_is_down() {
    let Some(_) = common::child_role("killed_while_the_collector_is_down") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let dir = std::path::PathBuf::from(var("DURABLE_DIR"));
    let port: u16 = var("DURABLE_PORT").parse().unwrap();
    let kill_after: u64 = var("DURABLE_KILL_MS").parse().unwrap();
    let returned = &common::shared_counters(&dir.join("progress"), 1, false)[0];
    let sink = durable(port, &dir.join("outbox"), 1 << 30).build().unwrap();
    let _guard = init(sink, Some(&dir.join("spool")));
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(kill_after));
        // SAFETY: signals this process; no memory is involved.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    });
    for i in 0.. {
        tachylog::info!(n = i; "record {}", i);
        returned.store(i + 1, std::sync::atomic::Ordering::SeqCst);
        if i % 64 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A receiver, a collector forwarding to it that is stopped, and a child that logged to it
/// through a durable sink (outbox, spool and progress counter in `dir`) until it was SIGKILLed
/// after `kill_after` ms: what the child left, and how many of its calls returned.
fn a_writer_killed_while_down(dir: &Path, kill_after: u64) -> (Receiver, Collector, u64) {
    let receiver = Receiver::start();
    let mut collector = Collector::start(dir, free_port(), receiver.addr, None);
    collector.stop();
    let returned = &common::shared_counters(&dir.join("progress"), 1, true)[0];
    let port = collector.port.to_string();
    let child = common::run_child_with_env(
        "killed_while_the_collector_is_down",
        &dir.join("child.log"),
        &[
            ("DURABLE_DIR", Some(dir.to_str().unwrap())),
            ("DURABLE_PORT", Some(&port)),
            ("DURABLE_KILL_MS", Some(&kill_after.to_string())),
        ],
        Duration::from_secs(60),
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
    let logged = returned.load(std::sync::atomic::Ordering::SeqCst);
    assert!(logged > 0, "{child}");
    (receiver, collector, logged)
}

/// The collector is down; the application is SIGKILLed (at a different moment each round)
/// while it logs; the collector comes back and the application starts again with the same
/// spool and outbox: every record whose call returned arrives, each at most twice, and no
/// more of them twice than the documentation allows (the request in flight, and the records
/// of the back end's last flush, which the spool gives back).
#[test]
fn sigkill_while_the_collector_is_down_loses_no_returned_record() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("durable kill test", Duration::from_secs(600));
    let rounds: u64 = std::env::var("TACHYLOG_DURABLE_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let kill_after = 300 + round * 400;
        let (receiver, mut collector, logged) = a_writer_killed_while_down(dir.path(), kill_after);

        collector.restart();
        let sink = durable(collector.port, &dir.path().join("outbox"), 1 << 30)
            .build()
            .unwrap();
        let stats = sink.stats();
        let guard = init(sink, Some(&dir.path().join("spool")));
        let seen = wait_for_all(&receiver, logged, Duration::from_secs(120));
        drop(guard);
        let twice = duplicates(&seen);
        println!(
            "round {round}: killed after {kill_after} ms, {logged} calls returned, all arrived, \
             {twice} twice, {stats:?}"
        );
        assert!(seen.values().all(|&n| n <= 2), "a record came three times");
        // The request in flight, plus the back end's last flush (at most two of its batches
        // of 4,096 records, with a spool).
        assert!(
            twice <= BATCH as u64 + 2 * 4096,
            "{twice} records came twice"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("outbox"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            leftovers.is_empty(),
            "the outbox keeps {leftovers:?} after everything was acknowledged"
        );
    }
}

/// An outbox of 256 KiB fills during an outage: with `DropNewest` the oldest records stay
/// and the newest are dropped; with `DropOldest` the newest stay. Either way every record
/// logged is delivered once or counted lost or dropped.
#[test]
fn a_full_outbox_applies_its_policy_and_counts_every_loss() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("full outbox test", Duration::from_secs(300));
    for policy in [OutboxFull::DropNewest, OutboxFull::DropOldest] {
        let dir = tempfile::tempdir().unwrap();
        let receiver = Receiver::start();
        let mut collector = Collector::start(dir.path(), free_port(), receiver.addr, None);
        collector.stop();
        let sink = durable(collector.port, &dir.path().join("outbox"), 256 << 10)
            .when_full(policy)
            .build()
            .unwrap();
        let stats = sink.stats();
        let guard = init(sink, None);
        let count = 20_000;
        for i in 0..count {
            tachylog::info!(n = i, padding = "x".repeat(64); "record {}", i);
        }
        tachylog::flush();
        collector.restart();
        assert!(
            common::poll_until(Duration::from_secs(60), || stats.on_disk() == 0),
            "{stats:?}"
        );
        drop(guard);
        let seen = arrivals(&receiver);
        assert_eq!(duplicates(&seen), 0);
        let delivered = seen.len() as u64;
        println!("{policy:?}: delivered {delivered} of {count}, {stats:?}");
        assert_eq!(
            delivered + stats.lost() + stats.dropped(),
            count,
            "{policy:?}: {stats:?}"
        );
        assert!(
            delivered < count / 2,
            "{policy:?}: the bound held nothing back"
        );
        match policy {
            OutboxFull::DropNewest => {
                assert!(stats.dropped() > 0 && stats.lost() == 0, "{stats:?}");
                assert!(seen.contains_key(&0), "the oldest record was not kept");
            }
            _ => {
                assert!(stats.lost() > 0, "{stats:?}");
                let announced: u64 = receiver
                    .delivered()
                    .iter()
                    .filter(|r| body(r).contains(" records lost while otlp "))
                    .map(|r| body(r).split(' ').next().unwrap().parse::<u64>().unwrap())
                    .sum();
                assert_eq!(
                    announced,
                    stats.lost(),
                    "the losses announced to the collector"
                );
                assert!(
                    seen.contains_key(&(count - 1)),
                    "the newest record was not kept"
                );
            }
        }
    }
}

/// Directories that look like a dead process's outbox but are not what a sink wrote: frames
/// with a wrong checksum, a length past the end, a count that does not match, a segment that
/// is a FIFO or a symbolic link, an `acked` that points at a segment that does not exist. A new
/// sink sends the valid frames of a real dead outbox beside them, passes over the rest with a
/// warning, and neither hangs nor panics.
#[test]
fn a_forged_outbox_is_passed_over_and_the_real_one_sent() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("forged outbox test", Duration::from_secs(240));
    let dir = tempfile::tempdir().unwrap();
    let outbox = dir.path().join("outbox");
    // A real outbox left by a process that died with the collector down.
    let (receiver, mut collector, logged) = a_writer_killed_while_down(dir.path(), 500);
    let real: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(real.len(), 1, "{real:?}");
    let real = &real[0];
    let segment = std::fs::read_dir(real)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("seg-"))
        .unwrap();
    let bytes = std::fs::read(&segment).unwrap();
    let first_frame_end = 16 + 16 + u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;

    let forge = |name: &str, files: &[(&str, Vec<u8>)]| {
        let d = outbox.join(name);
        std::fs::create_dir(&d).unwrap();
        for (file, content) in files {
            std::fs::write(d.join(file), content).unwrap();
        }
        d
    };
    let mut flipped = bytes[..first_frame_end].to_vec();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    let mut past_end = bytes[..first_frame_end].to_vec();
    past_end[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut wrong_count = bytes[..first_frame_end].to_vec();
    wrong_count[20..24].copy_from_slice(&7u32.to_le_bytes());
    let lock = ("lock", Vec::new());
    let segment_name = segment.file_name().unwrap().to_str().unwrap().to_string();
    forge("1.1", &[lock.clone(), (&segment_name, flipped)]);
    forge("2.2", &[lock.clone(), (&segment_name, past_end)]);
    forge("3.3", &[lock.clone(), (&segment_name, wrong_count)]);
    let fifo = forge("4.4", std::slice::from_ref(&lock));
    let fifo_path = std::ffi::CString::new(fifo.join(&segment_name).to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo_path.as_ptr(), 0o600) }, 0);
    let link = forge("5.5", std::slice::from_ref(&lock));
    std::os::unix::fs::symlink(&segment, link.join(&segment_name)).unwrap();
    let mut acked = vec![0u8; 64];
    acked[8..16].copy_from_slice(&99u64.to_le_bytes());
    forge(
        "6.6",
        &[lock.clone(), ("acked", acked), ("resource", vec![0xff; 40])],
    );
    forge("7.7", &[("resource", vec![1, 2, 3])]);

    collector.restart();
    let sink = durable(collector.port, &outbox, 1 << 30).build().unwrap();
    let stats = sink.stats();
    let guard = init(sink, Some(&dir.path().join("spool")));
    let seen = wait_for_all(&receiver, logged, Duration::from_secs(120));
    assert!(
        common::poll_until(Duration::from_secs(30), || stats.on_disk() == 0),
        "{stats:?}"
    );
    drop(guard);
    println!(
        "forged outbox: {logged} real records arrived, {} twice, {stats:?}",
        duplicates(&seen)
    );
    assert!(seen.values().all(|&n| n <= 2));
    assert!(duplicates(&seen) <= BATCH as u64 + 2 * 4096);
    assert!(!real.exists(), "the real outbox was not removed once sent");
}
