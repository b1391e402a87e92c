//! Recovery shares a file with the processes that append to it: it never cuts what another
//! process wrote. Each round, a process with a spool dies inside the `write(2)` of its last
//! batch, which the death cuts short at a 4 KiB boundary of the file, in the middle of a line
//! (the test hook `tear_next_write`); then, while this process (a live sibling, a plain
//! logger) appends to the same file as fast as it flushes, a third process recovers the
//! spool. Recovery knows from the dead process's journal where its batch began and how far it
//! went; it cuts off the torn piece only under the file's exclusive `flock`, which a sibling
//! holding it excludes, and only if it is still the end of the file; otherwise the sibling's
//! next line was written after it, and both stay.
//!
//! After each round, every record of the sibling is in the file once, whole, every record of
//! the dead process once, as a whole line, and every line parses; the torn piece is either cut
//! off or followed by the sibling's whole line. `TACHYLOG_SIBLING_ROUNDS` rounds (default
//! 100).
// Unix only: the spool is Unix-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn spool_dir(log: &Path) -> PathBuf {
    log.with_extension("spool")
}

#[test]
fn dies_after_writing_its_last_batch() {
    if let Some(log) = common::child_role("dies_after_writing_its_last_batch") {
        std::mem::forget(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
        for i in 0..300u64 {
            tachylog::info!("dead {} of the committed cut", i);
        }
        tachylog::flush();
        tachylog::__private::tear_next_write();
        tachylog::__private::hold_backend(true);
        for i in 300..600u64 {
            tachylog::info!("dead {} written, never committed", i);
        }
        tachylog::__private::hold_backend(false);
        tachylog::flush();
        common::await_fatal_signal(Duration::from_secs(30))
    }
}

#[test]
fn recovers() {
    if let Some(log) = common::child_role("recovers") {
        drop(common::expect_init(
            tachylog::builder().file(&log).spool(spool_dir(&log)).init(),
        ));
    }
}

#[test]
fn a_live_sibling_keeps_every_line_while_a_dead_process_is_recovered() {
    if common::child_role("dies_after_writing_its_last_batch").is_some()
        || common::child_role("recovers").is_some()
    {
        return;
    }
    let _serial = common::logger_lock();
    let rounds: usize = std::env::var("TACHYLOG_SIBLING_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let (mut cut, mut glued_count) = (0, 0);
    let mut recovery_takes = Duration::from_millis(100);
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("shared.log");
        let child = common::run_child_with_log(
            "dies_after_writing_its_last_batch",
            &log,
            Duration::from_secs(60),
        );
        assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
        // The death tore a line: the file ends inside it, at a 4 KiB boundary.
        let text = common::read_log(&log);
        assert_eq!(
            text.len() % 4096,
            0,
            "round {round}: torn at a page boundary"
        );
        let torn = text.rsplit('\n').next().unwrap().to_string();
        assert!(!torn.is_empty(), "round {round}: the last line is torn");
        let torn_at = text.len() - torn.len();

        // The sibling: this process, appending and flushing until the recovery is over.
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .flush_interval(Duration::from_millis(1))
                .init(),
        );
        // The recovering process starts; the sibling begins to append a moment later, spread
        // over the time a recovery took in the last round: from before that process has looked
        // at the file to after it is done.
        let started = std::time::Instant::now();
        let recovery = {
            let log = log.clone();
            // This process appends to the log until the recovering one has exited, and its
            // lines hold `…` (its thread's long name, shortened).
            std::thread::spawn(move || {
                common::run_child_leaving_log("recovers", &log, |_| {}, Duration::from_secs(60))
            })
        };
        std::thread::sleep(recovery_takes * (round % 8) as u32 / 7);
        let mut i = 0u64;
        while !recovery.is_finished() || i < 8 {
            tachylog::info!("sibling {} of the live", i);
            i += 1;
            if i % 4 == 0 {
                tachylog::flush();
            }
        }
        let recovery = recovery.join().unwrap();
        recovery_takes = started.elapsed();
        assert!(recovery.status.success(), "round {round}: {recovery}");
        drop(guard);
        let sibling_count = i;

        let text = common::read_log(&log);
        let mut dead = vec![0u32; 600];
        let mut live = vec![0u32; sibling_count as usize];
        let mut unparsed = Vec::new();
        for line in text.lines() {
            for i in numbers(line, "sibling ", " of the live") {
                live[i] += 1;
            }
            match common::parse_line(line) {
                Ok(parsed) => {
                    let message = parsed.message.trim_start_matches("[recovered] ");
                    let n = numbers(message, "dead ", " of the committed cut").chain(numbers(
                        message,
                        "dead ",
                        " written, never committed",
                    ));
                    for i in n {
                        dead[i] += 1;
                    }
                }
                Err(_) => unparsed.push(line),
            }
        }
        let context = || format!("round {round}:\n{}", common::tail(&text, 3_000));
        assert!(
            live.iter().all(|&n| n == 1),
            "a sibling line lost or doubled: {}",
            context()
        );
        assert!(
            dead.iter().all(|&n| n == 1),
            "a dead record lost or doubled: {}",
            context()
        );
        // Where the torn piece was, a whole line now starts (the piece was cut off), or the
        // piece still is, followed by the sibling's line, written after it before recovery
        // looked: the piece is not the end of the file, and stays. That line parses only when
        // the tear fell inside the message; it is checked here, every other line must parse.
        let line = &text[torn_at..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let glued = line
            .strip_prefix(torn.as_str())
            .filter(|rest| common::parse_line(rest).is_ok());
        if glued.is_some() {
            unparsed.retain(|&unparsed| unparsed != line);
        }
        assert!(
            unparsed.is_empty(),
            "lines that do not parse: {unparsed:?}\n{}",
            context()
        );
        match glued {
            None => cut += 1,
            Some(rest) => {
                assert!(rest.contains(" sibling "), "{}", context());
                glued_count += 1;
            }
        }
    }
    eprintln!(
        "{rounds} rounds: the torn piece cut by recovery in {cut}, followed by the sibling's \
         line before recovery looked in {glued_count}"
    );
    assert!(cut > 0, "recovery never had a torn piece to cut");
}

/// The numbers `n` of each `{prefix}{n}{suffix}` in `text`.
fn numbers<'a>(
    text: &'a str,
    prefix: &'a str,
    suffix: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(prefix).filter_map(move |(at, _)| {
        let rest = &text[at + prefix.len()..];
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        rest[digits..]
            .starts_with(suffix)
            .then(|| rest[..digits].parse().ok())
            .flatten()
    })
}
