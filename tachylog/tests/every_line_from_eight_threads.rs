//! 8 threads × 200,000 records into one file: after the guard is dropped every line is present
//! exactly once, none is torn (each parses in the default format and its message is whole), each
//! thread's lines are in the order it logged them, and the date-time prefix never goes
//! backwards across the whole file.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

const THREADS: usize = 8;
const PER_THREAD: u64 = 200_000;

/// A value derived from (thread, seq) that a torn or mixed-up record would not reproduce.
fn check(t: usize, seq: u64) -> u64 {
    (seq ^ 0x9e37_79b9).wrapping_mul(t as u64 * 2 + 1) % 1_000_003
}

/// `(thread, seq)` from `writer {t} seq {seq} check {c}` if the check value matches.
fn parse_message(message: &str) -> Option<(usize, u64)> {
    let mut fields = message.split(' ');
    let mut next = || fields.next();
    let (w, t, s, seq, c, check_value, end) =
        (next(), next(), next(), next(), next(), next(), next());
    if (w, s, c, end) != (Some("writer"), Some("seq"), Some("check"), None) {
        return None;
    }
    let t = t?.parse::<usize>().ok()?;
    let seq = seq?.parse::<u64>().ok()?;
    let check_value = check_value?.parse::<u64>().ok()?;
    (t < THREADS && check_value == check(t, seq)).then_some((t, seq))
}

#[test]
fn every_line_from_eight_threads() {
    let _watchdog = common::watchdog("every_line_from_eight_threads", Duration::from_secs(600));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eight.log");
    // UTC: a daylight-saving change during the run must not look like time going backwards.
    let guard = common::expect_init(tachylog::builder().file(&path).utc(true).init());

    let started = Instant::now();
    let start = Arc::new(Barrier::new(THREADS));
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let start = Arc::clone(&start);
            thread::Builder::new()
                .name(format!("writer-{t}"))
                .spawn(move || {
                    start.wait();
                    for seq in 0..PER_THREAD {
                        tachylog::info!("writer {} seq {} check {}", t, seq, check(t, seq));
                    }
                })
                .unwrap()
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let logged = started.elapsed();
    drop(guard);
    let drained = started.elapsed();
    eprintln!("logged {THREADS}x{PER_THREAD} in {logged:?}, guard dropped at {drained:?}");

    let text = common::read_log(&path);
    let problems = problems(&text, PER_THREAD);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Everything wrong with a log that should hold `per_thread` records from each of `THREADS`
/// writers (at most 20 problems are itemised, then the totals).
fn problems(text: &str, per_thread: u64) -> Vec<String> {
    let mut errors: Vec<String> = Vec::new();
    if !text.ends_with('\n') {
        errors.push(format!("last line torn: {:?}", common::tail(text, 200)));
    }
    let names: Vec<String> = (0..THREADS).map(|t| format!("writer-{t}")).collect();
    let mut next_seq = [0u64; THREADS];
    let mut tids = [None::<u64>; THREADS];
    let mut previous_timestamp = "";
    let report = |errors: &mut Vec<String>, n: usize, what: String| {
        if errors.len() < 20 {
            errors.push(format!("line {}: {what}", n + 1));
        }
    };
    let mut count = 0usize;
    for (n, raw) in text.lines().enumerate() {
        count += 1;
        let line = match common::parse_line(raw) {
            Ok(line) => line,
            Err(e) => {
                report(&mut errors, n, e);
                continue;
            }
        };
        if line.timestamp < previous_timestamp {
            report(
                &mut errors,
                n,
                format!("timestamp {} after {previous_timestamp}", line.timestamp),
            );
        }
        previous_timestamp = line.timestamp;

        let parsed = parse_message(line.message);
        let Some((t, seq)) = parsed else {
            report(&mut errors, n, format!("unexpected message {raw:?}"));
            continue;
        };
        if line.level != "INFO"
            || line.module != "every_line_from_eight_threads"
            || !line.file.ends_with("every_line_from_eight_threads.rs")
        {
            report(&mut errors, n, format!("wrong level/module/file: {raw:?}"));
        }
        if line.thread_name != names[t] {
            report(
                &mut errors,
                n,
                format!("thread name does not match: {raw:?}"),
            );
        }
        match tids[t] {
            None => tids[t] = Some(line.tid),
            Some(tid) if tid != line.tid => {
                report(&mut errors, n, format!("tid changed from {tid}: {raw:?}"))
            }
            Some(_) => {}
        }
        if seq != next_seq[t] {
            let what = if seq < next_seq[t] {
                "duplicate or out of order"
            } else {
                "gap: records missing before"
            };
            report(
                &mut errors,
                n,
                format!(
                    "writer {t}: expected seq {}, got {seq} ({what})",
                    next_seq[t]
                ),
            );
        }
        next_seq[t] = next_seq[t].max(seq + 1);
    }
    for (t, &next) in next_seq.iter().enumerate() {
        if next != per_thread {
            errors.push(format!(
                "writer {t}: last seq seen {next}, expected {per_thread}"
            ));
        }
    }
    if count != THREADS * per_thread as usize {
        errors.push(format!(
            "{count} lines in the file, expected {}",
            THREADS * per_thread as usize
        ));
    }
    errors
}

/// The checker above is what makes the test able to fail: show that it does, on a small log
/// built by hand and then damaged in each way the test must catch.
#[test]
fn checker_catches_damaged_logs() {
    let line = |ts: u32, t: usize, seq: u64| {
        format!(
            "2026-11-21 16:04:05.{ts:06} INFO  [writer-{t}/{}] every_line_from_eight_threads: \
             writer {t} seq {seq} check {} (tachylog/tests/every_line_from_eight_threads.rs:1)",
            100 + t,
            check(t, seq)
        )
    };
    let mut good = Vec::new();
    for seq in 0..3 {
        for t in 0..THREADS {
            good.push(line(good.len() as u32, t, seq));
        }
    }
    let join = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    assert_eq!(problems(&join(&good), 3), Vec::<String>::new());

    let mut missing = good.clone();
    missing.remove(9);
    let mut duplicated = good.clone();
    duplicated.insert(12, good[11].clone());
    let mut swapped = good.clone();
    swapped.swap(1, 9); // same thread's records out of order, and time going backwards
    let mut torn = good.clone();
    torn[5].truncate(60);
    let mut mixed = good.clone();
    mixed[4] = mixed[4].replace("check", "chekc");
    let mut unterminated = join(&good);
    unterminated.pop();
    for (what, text) in [
        ("missing", join(&missing)),
        ("duplicated", join(&duplicated)),
        ("swapped", join(&swapped)),
        ("torn", join(&torn)),
        ("mixed", join(&mixed)),
        ("unterminated", unterminated),
    ] {
        assert!(
            !problems(&text, 3).is_empty(),
            "checker missed a {what} log"
        );
    }
}
