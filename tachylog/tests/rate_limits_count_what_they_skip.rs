//! Rate limits and sampling at the call site (`every = ...`, `sample = ...`, `key = ...`):
//! the calls let through carry `suppressed = N`, the skipped calls since the previous one, and
//! with a final call after the period the counts add up exactly to the calls made, across
//! threads too. Skipped calls evaluate none of their arguments.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

static EVALUATED: AtomicU64 = AtomicU64::new(0);

fn expensive() -> u64 {
    EVALUATED.fetch_add(1, Ordering::Relaxed)
}

/// One call site for the flood and for the last call after it.
fn busy() {
    tachylog::warn!(every = Duration::from_millis(100); "busy");
}

fn suppressed(line: &str) -> u64 {
    let json: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    json["fields"]["suppressed"]
        .as_u64()
        .expect("a numeric suppressed field")
}

#[test]
fn limited_calls_report_every_call_they_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.jsonl");
    let guard = tachylog::builder()
        .file(&path)
        .sink_format(tachylog::Format::Json)
        .init()
        .unwrap();
    let read = |marker: &str| -> Vec<String> {
        tachylog::flush();
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| l.contains(marker))
            .map(str::to_string)
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
    assert!(sampled[1..].iter().all(|l| suppressed(l) == 9));
    assert!(
        sampled[1].contains("\"message\":\"sampled 10 1\""),
        "{}",
        sampled[1]
    );

    // A disabled level neither passes nor counts.
    for _ in 0..5 {
        tachylog::debug!(sample = 2; "never {}", expensive());
    }
    assert_eq!(EVALUATED.load(Ordering::Relaxed), 10);

    // `every`, from four threads at once: a few records, and the counts they carry plus the
    // records themselves are exactly the calls made (the threads hand their counts over as
    // they exit; the last call, after the period, reports the rest).
    static CALLS: AtomicU64 = AtomicU64::new(0);
    // Plain threads, joined: `join` returns after a thread's thread-locals are gone, which is
    // when it hands its count over (a scope may return a little before that).
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let start = std::time::Instant::now();
                while start.elapsed() < Duration::from_millis(400) {
                    busy();
                    CALLS.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let calls = &CALLS;
    std::thread::sleep(Duration::from_millis(150));
    busy();
    calls.fetch_add(1, Ordering::Relaxed);
    let busy = read("\"busy\"");
    let reported: u64 = busy.iter().map(|l| suppressed(l)).sum();
    let calls = calls.load(Ordering::Relaxed);
    assert!(
        busy.len() >= 3 && busy.len() <= 12,
        "{} records for a 400 ms flood at 100 ms",
        busy.len()
    );
    assert_eq!(
        reported + busy.len() as u64,
        calls,
        "every call is either logged or counted"
    );

    // Per key: each key has its own limit.
    for round in 0..5 {
        for peer in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] {
            tachylog::error!(every = Duration::from_secs(3600), key = peer, peer; "refused {}", round);
        }
    }
    let refused = read("refused");
    assert_eq!(refused.len(), 3, "{refused:#?}");
    for (line, peer) in refused.iter().zip(["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
        assert!(line.contains(&format!("\"peer\":\"{peer}\"")), "{line}");
        assert_eq!(suppressed(line), 0);
    }
    drop(guard);
}
