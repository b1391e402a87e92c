//! A `RollingFile` driven directly through the `Sink` trait with chosen instants: the records'
//! timestamps and the back end's timer are the injectable clock, so midnight, DST changes and
//! restarts are tested without waiting for them. Every file is real.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;
use tachylog::{Level, Line, RollingFile, Sink};

const SEC: i64 = 1_000_000_000;
/// 2026-11-21T00:00:00Z.
const NOV_21: i64 = 1_795_219_200 * SEC;

fn line(sink: &mut RollingFile, at: i64, text: &str) {
    let text = format!("{text}\n");
    sink.write_line(&Line::new(Level::Info, at, text.as_bytes()))
        .unwrap_or_else(|e| panic!("write {text:?}: {e}"));
}

fn read(path: impl AsRef<Path>) -> String {
    common::read_log(path.as_ref())
}

fn daily(dir: &Path) -> tachylog::RollingFileBuilder {
    RollingFile::builder(dir.join("app.%Y%m%d.log").to_str().unwrap()).utc(true)
}

#[test]
fn records_cross_midnight_into_the_next_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = daily(dir.path()).open_at(NOV_21 - 2 * SEC).unwrap();
    line(&mut sink, NOV_21 - 2 * SEC, "a");
    line(&mut sink, NOV_21 - 1_000, "b"); // 23:59:59.999999
    line(&mut sink, NOV_21, "c");
    line(&mut sink, NOV_21 + 1_000, "d");
    sink.flush().unwrap();
    assert_eq!(read(dir.path().join("app.20261120.log")), "a\nb\n");
    assert_eq!(read(dir.path().join("app.20261121.log")), "c\nd\n");
}

#[test]
fn the_timer_opens_the_next_file_at_the_boundary_with_no_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = daily(dir.path()).open_at(NOV_21 - 10 * SEC).unwrap();
    line(&mut sink, NOV_21 - 10 * SEC, "last of the day");
    assert_eq!(sink.next_deadline(), Some(NOV_21));
    sink.tick(NOV_21 - 1).unwrap(); // early ticks change nothing
    assert_eq!(common::sorted_file_names(dir.path()), ["app.20261120.log"]);
    sink.tick(NOV_21).unwrap();
    // Yesterday's file is complete and today's exists, before any record of today.
    assert_eq!(
        read(dir.path().join("app.20261120.log")),
        "last of the day\n"
    );
    assert_eq!(read(dir.path().join("app.20261121.log")), "");
    assert_eq!(sink.next_deadline(), Some(NOV_21 + 86_400 * SEC));
    assert_eq!(sink.current_path(), dir.path().join("app.20261121.log"));
}

#[test]
fn a_record_stamped_before_midnight_and_written_after_goes_to_its_own_day() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = daily(dir.path()).open_at(NOV_21 - SEC).unwrap();
    sink.tick(NOV_21).unwrap();
    line(&mut sink, NOV_21 + 5, "today");
    line(&mut sink, NOV_21 - 1_000, "late: 23:59:59.999999");
    line(&mut sink, NOV_21 + 10, "today again");
    sink.flush().unwrap();
    assert_eq!(
        read(dir.path().join("app.20261120.log")),
        "late: 23:59:59.999999\n"
    );
    assert_eq!(
        read(dir.path().join("app.20261121.log")),
        "today\ntoday again\n"
    );
}

#[test]
fn dst_changes_follow_the_local_clock() {
    let dir = tempfile::tempdir().unwrap();
    let eastern = tachylog::TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
    let pattern = dir.path().join("app.%Y%m%d-%H.log");
    // Fall back, 2026-11-01: 00:30 EDT, 01:30 EDT, 01:30 EST (same hour file), 02:30 EST.
    let fall = 1_793_511_000 * SEC; // 05:30Z = 01:30 EDT
    let mut sink = RollingFile::builder(pattern.to_str().unwrap())
        .time_zone(eastern.clone())
        .open_at(fall - 3600 * SEC)
        .unwrap();
    for (at, text) in [
        (fall - 3600 * SEC, "00:30 EDT"),
        (fall, "01:30 EDT"),
        (fall + 3600 * SEC, "01:30 EST"),
        (fall + 7200 * SEC, "02:30 EST"),
    ] {
        line(&mut sink, at, text);
    }
    // Spring forward, 2026-03-08: 01:30 EST, then 03:30 EDT one hour later; no 02 file.
    let spring = 1_772_951_400 * SEC; // 06:30Z = 01:30 EST
    line(&mut sink, spring, "01:30 EST");
    sink.tick(spring + 1800 * SEC).unwrap(); // 07:00Z = 03:00 EDT: the timer opens hour 03
    line(&mut sink, spring + 3600 * SEC, "03:30 EDT");
    sink.flush().unwrap();
    assert_eq!(read(dir.path().join("app.20261101-00.log")), "00:30 EDT\n");
    assert_eq!(
        read(dir.path().join("app.20261101-01.log")),
        "01:30 EDT\n01:30 EST\n"
    );
    assert_eq!(read(dir.path().join("app.20261101-02.log")), "02:30 EST\n");
    assert_eq!(read(dir.path().join("app.20260308-01.log")), "01:30 EST\n");
    assert_eq!(read(dir.path().join("app.20260308-03.log")), "03:30 EDT\n");
    assert!(!dir.path().join("app.20260308-02.log").exists());
}

#[test]
fn a_restart_mid_period_appends_to_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = daily(dir.path()).open_at(NOV_21 + 100 * SEC).unwrap();
    line(&mut first, NOV_21 + 100 * SEC, "first run");
    drop(first);
    let mut second = daily(dir.path()).open_at(NOV_21 + 200 * SEC).unwrap();
    line(&mut second, NOV_21 + 200 * SEC, "second run");
    drop(second);
    assert_eq!(common::sorted_file_names(dir.path()), ["app.20261121.log"]);
    assert_eq!(
        read(dir.path().join("app.20261121.log")),
        "first run\nsecond run\n"
    );
}

#[test]
fn the_size_limit_is_exact_and_never_splits_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = daily(dir.path()).max_size(20).open_at(NOV_21).unwrap();
    let t = NOV_21 + SEC;
    line(&mut sink, t, "123456789"); // 10 bytes
    line(&mut sink, t, "abcdefghi"); // 20: exactly the limit, stays
    line(&mut sink, t, "x"); // 22 would pass it: next file
    line(&mut sink, t, &"L".repeat(49)); // 50 bytes, larger than the limit: a file of its own
    line(&mut sink, t, "y");
    drop(sink);
    assert_eq!(
        read(dir.path().join("app.20261121.log")),
        "123456789\nabcdefghi\n"
    );
    assert_eq!(read(dir.path().join("app.20261121.1.log")), "x\n");
    assert_eq!(
        read(dir.path().join("app.20261121.2.log")),
        format!("{}\n", "L".repeat(49))
    );
    assert_eq!(read(dir.path().join("app.20261121.3.log")), "y\n");
    // A restart continues in the highest index while it has room, then goes on from there.
    let mut again = daily(dir.path())
        .max_size(20)
        .open_at(NOV_21 + 2 * SEC)
        .unwrap();
    assert_eq!(again.current_path(), dir.path().join("app.20261121.3.log"));
    line(&mut again, t, "0123456789abcdef"); // 2 + 17 = 19: fits
    line(&mut again, t, "z"); // 21: next
    drop(again);
    assert_eq!(
        read(dir.path().join("app.20261121.3.log")),
        "y\n0123456789abcdef\n"
    );
    assert_eq!(read(dir.path().join("app.20261121.4.log")), "z\n");
    let full = daily(dir.path())
        .max_size(2)
        .open_at(NOV_21 + 3 * SEC)
        .unwrap();
    assert_eq!(
        full.current_path(),
        dir.path().join("app.20261121.5.log"),
        "index 4 is full"
    );
}

#[test]
fn retention_holds_across_restarts_and_spares_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.log"), "someone else's").unwrap();
    std::fs::write(dir.path().join("app.2026112.log"), "not our pattern").unwrap();
    let day = 86_400 * SEC;
    let run = |from: i64, days: i64| {
        let mut sink = daily(dir.path()).max_files(3).open_at(from).unwrap();
        for d in 0..days {
            sink.tick(from + d * day).unwrap();
            line(&mut sink, from + d * day, "x");
            // Distinct modification times, oldest first, as on a real calendar: retention
            // orders files by that time, and a file system's clock advances in steps of a few
            // milliseconds. Part of the scenario, not a wait for anything.
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(sink);
    };
    run(NOV_21, 5);
    assert_eq!(
        common::sorted_file_names(dir.path()),
        [
            "app.2026112.log",
            "app.20261123.log",
            "app.20261124.log",
            "app.20261125.log",
            "app.log"
        ]
    );
    run(NOV_21 + 5 * day, 2);
    assert_eq!(
        common::sorted_file_names(dir.path()),
        [
            "app.2026112.log",
            "app.20261125.log",
            "app.20261126.log",
            "app.20261127.log",
            "app.log"
        ]
    );
}

#[cfg(feature = "zstd")]
#[test]
fn compressed_files_hold_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let hour = 3600 * SEC;
    let mut sink = RollingFile::builder(dir.path().join("app.%Y%m%d%H.log").to_str().unwrap())
        .utc(true)
        .max_size(64 * 1024)
        .compress(tachylog::Compression::Zstd)
        .open_at(NOV_21)
        .unwrap();
    let mut written = 0u64;
    for h in 0..3 {
        for i in 0..5_000 {
            line(
                &mut sink,
                NOV_21 + h * hour + i,
                &format!("hour {h} line {i}"),
            );
            written += 1;
        }
    }
    drop(sink); // finishes the pending compressions
    let mut lines = 0u64;
    let mut compressed = 0;
    for name in common::sorted_file_names(dir.path()) {
        let path = dir.path().join(&name);
        let text = if name.ends_with(".zst") {
            compressed += 1;
            String::from_utf8(zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap())
                .unwrap()
        } else {
            assert_eq!(
                name, "app.2026112102.1.log",
                "only the current file stays plain"
            );
            read(&path)
        };
        assert!(text.ends_with('\n'));
        lines += text.lines().count() as u64;
    }
    assert!(
        compressed >= 4,
        "hours 00 and 01 span at least two files each: {:?}",
        common::sorted_file_names(dir.path())
    );
    assert_eq!(lines, written);
}

#[test]
fn a_directory_in_the_way_fails_its_lines_and_writing_resumes_when_it_clears() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = daily(dir.path()).open_at(NOV_21 - SEC).unwrap();
    let blocker: PathBuf = dir.path().join("app.20261121.log");
    std::fs::create_dir(&blocker).unwrap();
    let at = NOV_21 + SEC;
    let error = sink
        .write_line(&Line::new(Level::Info, at, b"lost\n"))
        .unwrap_err();
    assert!(error.to_string().contains("directory"), "{error}");
    // Reports name the sink by its current file.
    assert!(
        sink.describe().ends_with("app.20261121.log"),
        "{}",
        sink.describe()
    );
    // Retries are rate-limited: the next line fails at once with the same error.
    assert!(sink
        .write_line(&Line::new(Level::Info, at, b"lost too\n"))
        .is_err());
    std::fs::remove_dir(&blocker).unwrap();
    // The sink retries the open at most once a second; a line it cannot write yet is lost.
    common::wait_until(
        "the sink to open its file again",
        Duration::from_secs(30),
        || {
            sink.write_line(&Line::new(Level::Info, at, b"back\n"))
                .is_ok()
        },
    );
    sink.flush().unwrap();
    assert_eq!(read(&blocker), "back\n");
}

/// A symbolic link put where the pattern names a file (by another process that may write the
/// directory, before the period began) is not followed: its target, which a logger running as
/// root could otherwise append to whatever it is, stays as it was, at open and at rotation.
#[cfg(unix)]
#[test]
fn a_symbolic_link_where_the_pattern_names_a_file_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("passwd");
    std::fs::write(&victim, "root:x:0:0\n").unwrap();
    let today = dir.path().join("app.20261121.log");
    std::os::unix::fs::symlink(&victim, &today).unwrap();
    let error = daily(dir.path()).open_at(NOV_21).err().expect("must fail");
    assert!(error.to_string().contains("symbolic link"), "{error}");

    let mut sink = daily(dir.path()).open_at(NOV_21 - SEC).unwrap();
    line(&mut sink, NOV_21 - SEC, "yesterday");
    let error = sink
        .write_line(&Line::new(Level::Info, NOV_21, b"today\n"))
        .unwrap_err();
    assert!(error.to_string().contains("symbolic link"), "{error}");
    // The day left was flushed when the sink moved on.
    assert_eq!(read(dir.path().join("app.20261120.log")), "yesterday\n");
    assert_eq!(read(&victim), "root:x:0:0\n");
}

/// A file of the last size index (4294967295) in the directory, which any process that may
/// write it can create: the sink writes on into it, past the size limit, rather than
/// overflowing the index (a panic of the back end in a debug build).
#[test]
fn a_file_of_the_last_index_is_written_on_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let last = dir.path().join("app.20261121.4294967295.log");
    std::fs::write(&last, "").unwrap();
    let mut sink = daily(dir.path()).max_size(20).open_at(NOV_21).unwrap();
    for i in 0..5 {
        line(&mut sink, NOV_21 + i, "twelve bytes");
    }
    sink.flush().unwrap();
    assert_eq!(read(&last), "twelve bytes\n".repeat(5));
}

#[test]
fn the_latest_symlink_follows_the_current_file() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("current.log");
    let mut sink = daily(dir.path())
        .latest_symlink(&link)
        .open_at(NOV_21 - SEC)
        .unwrap();
    // A relative symbolic link on Unix; on Windows a hard link when symbolic ones cannot be
    // made (no privilege, or Wine's, which lead nowhere): then the content shows the file.
    #[cfg(unix)]
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        PathBuf::from("app.20261120.log")
    );
    assert_eq!(read(&link), "");
    sink.tick(NOV_21).unwrap();
    line(&mut sink, NOV_21, "through the link");
    sink.flush().unwrap();
    #[cfg(unix)]
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        PathBuf::from("app.20261121.log")
    );
    assert_eq!(read(&link), "through the link\n");
}

/// A `latest` link named like a file that already holds something (the log of a `FileSink` the
/// program wrote before it rolled its files) leaves that file as it is: the sink writes its own
/// files and reports the link it could not make.
#[cfg(unix)]
#[test]
fn a_file_where_the_latest_link_goes_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("app.log");
    std::fs::write(&link, "last year's lines\n").unwrap();
    let mut sink = daily(dir.path())
        .latest_symlink(&link)
        .open_at(NOV_21)
        .unwrap();
    line(&mut sink, NOV_21, "into the rolled file");
    sink.flush().unwrap();
    assert_eq!(read(&link), "last year's lines\n");
    assert_eq!(
        read(dir.path().join("app.20261121.log")),
        "into the rolled file\n"
    );
}

/// Two processes share a compressed daily pattern (here two sinks, each with a file of its
/// own open, as two processes have). One moves on to the next day and compresses the day it
/// left, while the other keeps writing late records of that day, every 20 ms, for 3 s: each
/// line ends up once in the day's file or in its compressed copy. A line appended while the
/// copy was made keeps the file from being removed; one written after the removal goes to the
/// day's file created again at once, not into the removed one, where it would be lost.
#[cfg(all(unix, feature = "zstd"))]
#[test]
fn a_sibling_writing_late_lines_loses_none_to_compression() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        daily(dir.path())
            .compress(tachylog::Compression::Zstd)
            .open_at(NOV_21 - 10 * SEC)
            .unwrap()
    };
    let (mut leaving, mut late) = (open(), open());
    line(&mut leaving, NOV_21 - 10 * SEC, "leaving");
    leaving.flush().unwrap();
    // A sink checks at most once a second that its path still names its file (and creates it
    // again if not): half a second out of step with the compression, a second after leaving,
    // so that half a second of late lines follows the removal before that check.
    std::thread::sleep(Duration::from_millis(500));
    leaving.tick(NOV_21).unwrap();
    let mut expected = vec!["leaving".to_string()];
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        let text = format!("late {}", expected.len());
        line(&mut late, NOV_21 - SEC, &text);
        late.flush().unwrap();
        expected.push(text);
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(leaving); // finishes its compression
    drop(late);
    let mut found = Vec::new();
    for name in common::sorted_file_names(dir.path()) {
        let path = dir.path().join(&name);
        let text = match name.as_str() {
            "app.20261120.log" => read(&path),
            "app.20261120.log.zst" => {
                String::from_utf8(zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap())
                    .unwrap()
            }
            _ => continue,
        };
        found.extend(text.lines().map(str::to_string));
    }
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
}

#[test]
fn bad_patterns_fail_at_open_with_the_pattern_in_the_error() {
    let error = RollingFile::builder("logs/app.%Q.log")
        .open()
        .err()
        .unwrap();
    assert!(matches!(error, tachylog::Error::FileNamePattern(_)));
    assert!(error.to_string().contains("%Q"), "{error}");
}
