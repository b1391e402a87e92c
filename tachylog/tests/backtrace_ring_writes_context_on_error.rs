//! The backtrace ring (`Builder::backtrace`): debug records are kept, not written; an error
//! writes the last N of them first, marked, in order, with their own timestamps; a dump writes
//! them on demand; nothing kept leaks out without a trigger, and ordinary records still flush
//! at exit. One logger per process, so the behaviours are phases of one test, each asserting
//! on the lines the phase added.

use std::path::Path;

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `2026-11-21 16:04:05.125049` at the start of a text line, as microseconds of the day
/// (enough to compare lines of one test run).
fn time_of(line: &str) -> u64 {
    let t = &line[11..26];
    let (h, m, s, us) = (&t[0..2], &t[3..5], &t[6..8], &t[9..15]);
    ((h.parse::<u64>().unwrap() * 60 + m.parse::<u64>().unwrap()) * 60 + s.parse::<u64>().unwrap())
        * 1_000_000
        + us.parse::<u64>().unwrap()
}

#[test]
fn kept_records_are_written_only_when_something_goes_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("app.log");
    let json = dir.path().join("app.jsonl");
    let logfmt = dir.path().join("app.logfmt");
    let guard = tachylog::builder()
        .file(&text)
        .file_with(
            &json,
            tachylog::SinkOptions::new().format(tachylog::Format::Json),
        )
        .file_with(
            &logfmt,
            tachylog::SinkOptions::new().format(tachylog::Format::Logfmt),
        )
        .utc(true)
        // Trace records pass the filter; the ring keeps Debug and everything more verbose.
        .level(tachylog::Level::Trace)
        .backtrace(tachylog::Level::Debug, 4)
        .init()
        .unwrap();
    let mut seen = 0;
    let mut new_lines = |path: &Path| {
        tachylog::flush();
        let all = lines(path);
        let fresh = all[seen..].to_vec();
        seen = all.len();
        fresh
    };

    // 1. Nothing kept is written without a trigger; other records are.
    for i in 0..10 {
        tachylog::debug!("step {}", i);
        tachylog::trace!("detail {}", i);
    }
    tachylog::info!("served");
    tachylog::warn!("slow");
    let phase = new_lines(&text);
    assert_eq!(phase.len(), 2, "{phase:#?}");
    assert!(phase[0].contains("served") && phase[1].contains("slow"));

    // 2. A trigger writes exactly the last 4 kept, oldest first, marked, with their own
    //    (earlier, ordered) timestamps, then the trigger.
    tachylog::error!("payment failed");
    let phase = new_lines(&text);
    assert_eq!(phase.len(), 5, "{phase:#?}");
    let expected = ["step 8", "detail 8", "step 9", "detail 9"];
    for (line, text) in phase.iter().zip(expected) {
        assert!(line.contains(&format!("[backtrace] {text}")), "{line}");
    }
    assert!(
        phase[4].contains("ERROR")
            && phase[4].contains("payment failed")
            && !phase[4].contains("[backtrace]")
    );
    let times: Vec<u64> = phase.iter().map(|l| time_of(l)).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "kept records keep their order and time: {phase:#?}"
    );

    // 3. A trigger with an empty ring writes nothing extra.
    tachylog::error!("second failure");
    let phase = new_lines(&text);
    assert_eq!(phase.len(), 1, "{phase:#?}");

    // 4. On demand, across threads, in the order they were logged.
    let worker = std::thread::Builder::new()
        .name("pool-1".into())
        .spawn(|| tachylog::debug!("from the pool"))
        .unwrap();
    worker.join().unwrap();
    tachylog::debug!("from main");
    tachylog::dump_backtrace();
    let phase = new_lines(&text);
    assert_eq!(phase.len(), 2, "{phase:#?}");
    assert!(
        phase[0].contains("[pool-1/") && phase[0].contains("[backtrace] from the pool"),
        "{}",
        phase[0]
    );
    assert!(phase[1].contains("[backtrace] from main"), "{}", phase[1]);
    // A dump empties the ring.
    tachylog::dump_backtrace();
    assert!(new_lines(&text).is_empty());

    // 5. Kept records are not written at exit; ordinary ones are.
    tachylog::debug!("never written");
    tachylog::info!("last words");
    drop(guard);
    let phase = new_lines(&text);
    assert_eq!(phase.len(), 1, "{phase:#?}");
    assert!(phase[0].contains("last words"));

    // The other formats mark kept records their own way.
    let json_lines = lines(&json);
    let marked: Vec<&String> = json_lines
        .iter()
        .filter(|l| l.contains("\"backtrace\":true"))
        .collect();
    assert_eq!(marked.len(), 6, "{json_lines:#?}");
    for line in &json_lines {
        serde_json::from_str::<serde_json::Value>(line).expect("valid JSON");
    }
    let logfmt_lines = lines(&logfmt);
    assert_eq!(
        logfmt_lines
            .iter()
            .filter(|l| l.contains(" backtrace=true"))
            .count(),
        6
    );
    assert!(!logfmt_lines.iter().any(|l| l.contains("never written")));
}
