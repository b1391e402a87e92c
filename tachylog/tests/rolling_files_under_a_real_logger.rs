//! Rolling files and external rotation with the whole logger running on the real clock:
//! per-second files, files deleted or moved while logging, `reopen()`.

mod common;

use std::thread;
use std::time::{Duration, Instant};
use tachylog::RollingFile;

/// Two threads log for about 2.5 s into a file per second: every record is in the file named
/// after its own timestamp's second, none is lost, and a second with no record still gets its
/// file from the back end's timer.
#[test]
fn per_second_files_hold_exactly_their_seconds_records() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("per-second rotation", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let sink = RollingFile::builder(dir.path().join("%H%M%S.log").to_str().unwrap())
        .utc(true)
        .open()
        .unwrap();
    let guard = common::expect_init(tachylog::builder().sink(sink).utc(true).init());
    let log_for = |scope: &'static str| {
        move || {
            let start = Instant::now();
            let mut count = 0u64;
            while start.elapsed() < Duration::from_millis(2500) {
                tachylog::info!("{} record {}", scope, count);
                count += 1;
                if count % 64 == 0 {
                    // Pacing, not synchronisation: records spread over the seconds of the run.
                    thread::sleep(Duration::from_micros(200));
                }
            }
            count
        }
    };
    let a = thread::spawn(log_for("a"));
    let b = thread::spawn(log_for("b"));
    let (count_a, count_b) = (a.join().unwrap(), b.join().unwrap());
    // Every record is stamped before now, so the next second has none: the back end's timer
    // alone must open its file.
    let idle = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1))
        .strftime("%H%M%S.log")
        .to_string();
    common::wait_until(
        format_args!("the timer to open {idle} for a second with no record"),
        Duration::from_secs(30),
        || dir.path().join(&idle).exists(),
    );
    drop(guard);

    let files = common::sorted_file_names(dir.path());
    let mut seen = [0u64; 2];
    let mut empty = 0;
    for name in &files {
        let text = common::read_log(&dir.path().join(name));
        empty += text.is_empty() as usize;
        for line in common::parse_log(&text) {
            let hhmmss: String = line.timestamp[11..19]
                .chars()
                .filter(|c| *c != ':')
                .collect();
            assert_eq!(
                format!("{hhmmss}.log"),
                *name,
                "record {line:?} in the wrong file"
            );
            let (scope, n) = line.message.split_once(" record ").unwrap();
            let slot = &mut seen[(scope == "b") as usize];
            assert_eq!(
                n.parse::<u64>().unwrap(),
                *slot,
                "{scope}: lost or reordered"
            );
            *slot += 1;
        }
    }
    assert_eq!(seen, [count_a, count_b]);
    assert!(files.len() >= 4, "{files:?}");
    assert!(empty >= 1, "the idle seconds got no file: {files:?}");
}

#[cfg(unix)]
fn assert_recreated_after_deletion(
    dir: &std::path::Path,
    path: &std::path::Path,
    guard: tachylog::Guard,
) {
    tachylog::info!("before the deletion");
    tachylog::flush();
    std::fs::remove_file(path).unwrap();
    // The check runs at most once a second, when a flush has lines to write, and sends those
    // lines to the new file; until then they go to the deleted one. Log and flush until it
    // has run: the new file then holds the one record whose flush ran it.
    common::wait_until(
        "the deleted file to be recreated",
        Duration::from_secs(30),
        || {
            tachylog::info!("after the deletion");
            tachylog::flush();
            path.exists()
        },
    );
    drop(guard);
    let text = common::read_log(path);
    let lines = common::parse_log(&text);
    assert_eq!(
        lines.len(),
        1,
        "{text}\nfiles: {:?}",
        common::sorted_file_names(dir)
    );
    assert_eq!(lines[0].message, "after the deletion");
}

// Unix only: Wine keeps a deleted file's name, and its identity, until the last handle closes
// and reports no pending delete, so there is nothing to notice (Windows 10 1903 and later
// release the name at once; older Windows report the pending delete).
#[cfg(unix)]
#[test]
fn a_deleted_plain_file_is_recreated() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    assert_recreated_after_deletion(dir.path(), &path, guard);
}

// Unix only: Wine keeps a deleted file's name, and its identity, until the last handle closes
// and reports no pending delete, so there is nothing to notice (Windows 10 1903 and later
// release the name at once; older Windows report the pending delete).
#[cfg(unix)]
#[test]
fn a_deleted_rolling_file_is_recreated() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let sink = RollingFile::builder(dir.path().join("app.%Y.log").to_str().unwrap())
        .utc(true)
        .open()
        .unwrap();
    let path = sink.current_path();
    let guard = common::expect_init(tachylog::builder().sink(sink).init());
    assert_recreated_after_deletion(dir.path(), &path, guard);
}

/// What `logrotate` does without `copytruncate`: move the file away, then ask for a reopen.
#[test]
fn reopen_after_a_move_starts_a_new_file() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let moved = dir.path().join("app.log.1");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    common::log_numbered("before", 1000);
    tachylog::flush();
    std::fs::rename(&path, &moved).unwrap();
    common::log_numbered("before the reopen", 10);
    tachylog::reopen();
    assert!(path.exists(), "reopen() returns once the new file is open");
    common::log_numbered("after", 1000);
    drop(guard);
    let old = common::read_log(&moved);
    let new = common::read_log(&path);
    common::assert_numbered(&common::parse_log(&old), "before", 1000);
    common::assert_numbered(&common::parse_log(&new), "after", 1000);
    // Logged after the move: in the old file, unless the once-a-second check noticed the
    // move first and sent them to the new one. Either way, each exactly once.
    let both = format!("{old}{new}");
    common::assert_numbered(&common::parse_log(&both), "before the reopen", 10);
    assert_eq!(common::parse_log(&both).len(), 2010);
}

/// `logrotate copytruncate`: the file is copied, then truncated in place; `O_APPEND` makes the
/// next write land at the new end instead of leaving a hole of zeros.
#[test]
fn copytruncate_leaves_no_hole() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    common::log_numbered("before", 1000);
    tachylog::flush();
    std::fs::copy(&path, dir.path().join("app.log.1")).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    common::log_numbered("after", 10);
    drop(guard);
    let text = common::read_log(&path);
    assert!(
        !text.contains('\0'),
        "a hole of zeros: the file was not opened O_APPEND"
    );
    common::assert_numbered(&common::parse_log(&text), "after", 10);
}

/// A program that opens its log files by relative paths and then changes its working directory
/// (a daemon's `chdir("/")`, a tool that enters its work directory) keeps writing the files it
/// opened: a plain file and the files a pattern makes later, each checked and recreated at
/// its path, stay in the directory that was current when they were opened. In a child process:
/// the working directory is the whole process's.
#[test]
fn relative_paths_stay_where_they_were_opened_after_a_change_of_directory() {
    const SCENARIO: &str = "relative_paths_stay_where_they_were_opened_after_a_change_of_directory";
    if let Some(log) = common::child_role(SCENARIO) {
        let root = log.parent().unwrap();
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::env::set_current_dir(root).unwrap();
        let plain = tachylog::FileSink::open("plain/app.log").unwrap();
        let rolling = RollingFile::builder("rolled/%H%M%S.log")
            .utc(true)
            .open()
            .unwrap();
        let guard = common::expect_init(
            tachylog::builder()
                .sink(plain)
                .sink(rolling)
                .utc(true)
                .init(),
        );
        common::log_numbered("before", 100);
        tachylog::flush();
        std::env::set_current_dir(&elsewhere).unwrap();
        // Past the once-a-second check of the plain file's path, and into a new second's file.
        thread::sleep(Duration::from_millis(1_500));
        common::log_numbered("after", 100);
        drop(guard);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child = common::run_child_with_log(
        SCENARIO,
        &dir.path().join("child.log"),
        Duration::from_secs(60),
    );
    assert!(child.status.success(), "{child}");
    let elsewhere = dir.path().join("elsewhere");
    assert_eq!(
        common::sorted_file_names(&elsewhere),
        Vec::<String>::new(),
        "nothing was written under the new working directory"
    );
    let plain = common::read_log(&dir.path().join("plain/app.log"));
    let lines = common::parse_log(&plain);
    common::assert_only_numbered(&lines, &["before", "after"], 100, &child);
    let rolled = dir.path().join("rolled");
    let mut text = String::new();
    for name in common::sorted_file_names(&rolled) {
        text.push_str(&common::read_log(&rolled.join(name)));
    }
    common::assert_only_numbered(&common::parse_log(&text), &["before", "after"], 100, &child);
}
