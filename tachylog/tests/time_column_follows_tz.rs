//! The time column is in the system's zone, chosen as the C library chooses it: `TZ` when it
//! is set (a zone name, `:name`, a POSIX rule; empty means UTC), otherwise `/etc/localtime`.
//! A `TZ` that names nothing makes `init` fail with the reason instead of logging in a wrong
//! zone. Each case is a child process with its own environment, since `TZ` is process-wide:
//! it starts a logger as a user would and logs one line that says the second it logged at;
//! the expected wall-clock time comes from `jiff`, a separate time-zone library. Each test is
//! also its own child: run again, it plays the child's part and exits.

mod common;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The child's part, in each test run again by [`run`]: starts a logger writing to `log`, logs
/// one line saying the second it logged at, and exits (4 with the reason if `init` failed).
fn child_logs_one_line(log: &Path) -> ! {
    let guard = match tachylog::builder().file(log).init() {
        Ok(guard) => guard,
        Err(e) => {
            println!("init error: {e}");
            std::process::exit(4);
        }
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    tachylog::info!("logged at {} seconds", now.as_secs());
    drop(guard);
    std::process::exit(0);
}

/// Runs the test named `scenario` again as a child with `TZ` set to `tz` (or removed); returns
/// its one line's time column, read as a wall-clock time, and the UTC second it says it logged
/// at, or what it printed if `init` failed.
fn run(scenario: &str, tz: Option<&str>) -> Result<(jiff::civil::DateTime, i64), String> {
    run_with(scenario, |command| {
        match tz {
            Some(tz) => command.env("TZ", tz),
            None => command.env_remove("TZ"),
        };
        command.env_remove("TZDIR");
    })
}

/// [`run`] with the child's environment set by `configure`.
fn run_with(
    scenario: &str,
    configure: impl FnOnce(&mut std::process::Command),
) -> Result<(jiff::civil::DateTime, i64), String> {
    let dir = tempfile::tempdir().unwrap();
    let child = common::run_child_with_command(
        scenario,
        &dir.path().join("child.log"),
        configure,
        Duration::from_secs(60),
    );
    if child.status.code() == Some(4) {
        return Err(child.stdout);
    }
    assert!(child.status.success(), "{child}");
    let lines = common::parse_log(&child.log);
    assert_eq!(lines.len(), 1, "{child}");
    let column: jiff::civil::DateTime = lines[0].timestamp.parse().unwrap();
    let second: i64 = lines[0]
        .message
        .strip_prefix("logged at ")
        .and_then(|m| m.strip_suffix(" seconds"))
        .unwrap()
        .parse()
        .unwrap();
    Ok((column, second))
}

/// The column must be the wall-clock time in `zone` of the second the child read just before
/// logging, give or take a second: the record is stamped a moment later, maybe past a
/// second's edge, by a clock converted from the TSC that may differ from the system's by
/// microseconds. A wrong zone is off by whole hours or quarter hours.
fn assert_in_zone(scenario: &str, tz: Option<&str>, zone: &jiff::tz::TimeZone) {
    let run = run(scenario, tz).unwrap_or_else(|e| panic!("TZ={tz:?}: {e}"));
    assert_column_in_zone(run, tz, zone);
}

/// [`assert_in_zone`] for a child's line that says it logged at `second`.
fn assert_column_in_zone(
    (column, second): (jiff::civil::DateTime, i64),
    tz: Option<&str>,
    zone: &jiff::tz::TimeZone,
) {
    let expected = zone.to_datetime(jiff::Timestamp::from_second(second).unwrap());
    let column_second = column.with().subsec_nanosecond(0).build().unwrap();
    let ahead = column_second.duration_since(expected).as_secs_f64();
    assert!(
        (-1.0..=2.0).contains(&ahead),
        "TZ={tz:?}: the column says {column}, the zone says {expected} at that second"
    );
}

#[test]
fn named_zones_rules_and_empty_tz() {
    const NAME: &str = "named_zones_rules_and_empty_tz";
    if let Some(log) = common::child_role(NAME) {
        child_logs_one_line(&log);
    }
    let zone = |name: &str| jiff::tz::TimeZone::get(name).unwrap();
    assert_in_zone(NAME, Some("America/New_York"), &zone("America/New_York"));
    assert_in_zone(NAME, Some(":Asia/Kolkata"), &zone("Asia/Kolkata"));
    assert_in_zone(
        NAME,
        Some("/usr/share/zoneinfo/Australia/Lord_Howe"),
        &zone("Australia/Lord_Howe"),
    );
    let rule = "<+0230>-2:30";
    assert_in_zone(NAME, Some(rule), &jiff::tz::TimeZone::posix(rule).unwrap());
    assert_in_zone(NAME, Some(""), &jiff::tz::TimeZone::UTC);
}

#[test]
fn without_tz_the_zone_of_etc_localtime() {
    const NAME: &str = "without_tz_the_zone_of_etc_localtime";
    if let Some(log) = common::child_role(NAME) {
        child_logs_one_line(&log);
    }
    let zone = match std::fs::read("/etc/localtime") {
        Ok(data) => jiff::tz::TimeZone::tzif("localtime", &data).unwrap(),
        Err(_) => jiff::tz::TimeZone::UTC,
    };
    assert_in_zone(NAME, None, &zone);
}

#[test]
fn a_tz_naming_nothing_stops_init_with_the_reason() {
    const NAME: &str = "a_tz_naming_nothing_stops_init_with_the_reason";
    if let Some(log) = common::child_role(NAME) {
        child_logs_one_line(&log);
    }
    let error = run(NAME, Some("Nowhere/Atlantis")).unwrap_err();
    assert!(
        error.contains("Nowhere/Atlantis") && error.contains("utc(true)"),
        "{error}"
    );
}

/// `TZDIR` is a path, which need not be UTF-8: a zone is found in a directory whose name is
/// not.
#[cfg(unix)]
#[test]
fn a_zone_is_found_in_a_tzdir_whose_path_is_not_utf8() {
    const NAME: &str = "a_zone_is_found_in_a_tzdir_whose_path_is_not_utf8";
    if let Some(log) = common::child_role(NAME) {
        child_logs_one_line(&log);
    }
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let tzdir = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"zones-caf\xe9"));
    std::fs::create_dir_all(tzdir.join("Test")).unwrap();
    std::fs::copy("/usr/share/zoneinfo/Asia/Kolkata", tzdir.join("Test/Here")).unwrap();
    let run = run_with(NAME, |command| {
        command.env("TZ", "Test/Here").env("TZDIR", &tzdir);
    })
    .unwrap_or_else(|e| panic!("TZDIR={tzdir:?}: {e}"));
    let zone = jiff::tz::TimeZone::get("Asia/Kolkata").unwrap();
    assert_column_in_zone(run, Some("Test/Here"), &zone);
}

/// `TZ` is read from the environment of every process the logger runs in, so it may point
/// anywhere: at a device that never ends, at a FIFO no one writes to, out of the zone database.
/// Each makes `init` fail at once with the reason; none is read to the end or waited on.
#[cfg(unix)]
#[test]
fn a_tz_pointing_at_a_device_a_fifo_or_out_of_the_database_is_refused() {
    const NAME: &str = "a_tz_pointing_at_a_device_a_fifo_or_out_of_the_database_is_refused";
    if let Some(log) = common::child_role(NAME) {
        child_logs_one_line(&log);
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let huge = dir.path().join("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let fifo = fifo.to_str().unwrap();
    let huge = huge.to_str().unwrap();
    for (tz, reason) in [
        ("/dev/zero", "not a regular file"),
        (fifo, "not a regular file"),
        (huge, "larger than 1048576 bytes"),
        ("../../../../../../../../dev/zero", "no `..` component"),
    ] {
        let error = run(NAME, Some(tz)).unwrap_err();
        assert!(
            error.contains(tz) && error.contains(reason),
            "TZ={tz}: {error}"
        );
    }
}
