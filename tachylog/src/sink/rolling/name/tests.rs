use super::*;

const SEC: i64 = 1_000_000_000;
/// 2026-11-21T00:00:00Z.
const NOV_21: i64 = 1_795_219_200 * SEC;

fn pattern(p: &str) -> NamePattern {
    NamePattern::parse(p).unwrap()
}

/// US Eastern time from its POSIX rule, so the tests need no time-zone database.
fn eastern() -> TimeZone {
    TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap()
}

fn base(p: &NamePattern, at: i64, zone: &TimeZone) -> String {
    p.period_file(at, zone).base.display().to_string()
}

#[test]
fn the_smallest_field_sets_the_period() {
    assert_eq!(pattern("app.%Y%m%d.log").period(), Period::Day);
    assert_eq!(pattern("logs/%Y/%m/%d/app-%H.log").period(), Period::Hour);
    assert_eq!(pattern("app.%F.log").period(), Period::Day);
    assert_eq!(pattern("app.%Y-%m.log").period(), Period::Month);
    assert_eq!(pattern("app.%y.log").period(), Period::Year);
    assert_eq!(pattern("app.%j.%M.log").period(), Period::Minute);
    assert_eq!(pattern("t/%S.log").period(), Period::Second);
    assert_eq!(pattern("app.log").period(), Period::Never);
    assert_eq!(pattern("100%%.log").period(), Period::Never);
}

#[test]
fn bad_patterns_are_refused_with_the_reason() {
    for (bad, reason) in [
        ("", "empty"),
        ("logs/", "directory"),
        ("app.%Q.log", "unsupported field %Q"),
        ("app.log.%", "lone %"),
        ("logs/%Y/../app.log", "`..`"),
        ("logs/..", "file name"),
        // Only `.` components: nothing is left once they are dropped (found by fuzzing).
        (".", "file name"),
        ("./.", "file name"),
    ] {
        let error = NamePattern::parse(bad).unwrap_err().to_string();
        assert!(error.contains(reason), "{bad:?}: {error}");
        assert!(error.contains(&format!("{bad:?}")), "{error}");
    }
}

#[test]
fn names_and_day_bounds_in_utc() {
    let p = pattern("logs/%Y/%m/%d/app.%F.log");
    let file = p.period_file(NOV_21 + 3600 * SEC, &TimeZone::utc());
    assert_eq!(
        file.base,
        PathBuf::from("logs/2026/11/21/app.2026-11-21.log")
    );
    assert_eq!((file.start, file.end), (NOV_21, NOV_21 + 86_400 * SEC));
    assert!(file.contains(NOV_21) && !file.contains(NOV_21 + 86_400 * SEC));
    assert_eq!(
        pattern("/var/log/x-%j-%H%M%S")
            .period_file(NOV_21 - 1, &TimeZone::utc())
            .base,
        PathBuf::from("/var/log/x-324-235959")
    );
}

#[test]
fn the_last_microsecond_of_a_day_belongs_to_that_day() {
    let p = pattern("app.%Y%m%d.log");
    assert_eq!(
        base(&p, NOV_21 - 1_000, &TimeZone::utc()),
        "app.20261120.log"
    );
    assert_eq!(base(&p, NOV_21, &TimeZone::utc()), "app.20261121.log");
}

#[test]
fn a_day_with_a_dst_change_is_one_file_of_25_or_23_hours() {
    let p = pattern("app.%Y%m%d.log");
    // 2026-11-01, clocks go back at 02:00 EDT: the day runs 04:00Z to 05:00Z next day.
    let fall = p.period_file(1_793_511_000 * SEC, &eastern());
    assert_eq!(fall.base, PathBuf::from("app.20261101.log"));
    // The range stops at the transition (06:00Z), then the same name continues.
    assert_eq!(
        (fall.start, fall.end),
        (1_793_505_600 * SEC, 1_793_512_800 * SEC)
    );
    let after = p.period_file(fall.end, &eastern());
    assert_eq!(after.base, fall.base);
    assert_eq!(after.end, 1_793_595_600 * SEC);
    // 2026-03-08, clocks go forward at 02:00 EST: the day ends 04:00Z on the 9th.
    let spring = p.period_file(1_772_953_200 * SEC, &eastern());
    assert_eq!(spring.base, PathBuf::from("app.20260308.log"));
    assert_eq!(spring.end, 1_773_028_800 * SEC);
}

#[test]
fn the_repeated_hour_of_fall_back_shares_one_hourly_file() {
    let p = pattern("app.%Y%m%d-%H.log");
    let edt = p.period_file(1_793_511_000 * SEC, &eastern()); // 01:30 EDT
    let est = p.period_file(1_793_514_600 * SEC, &eastern()); // 01:30 EST
    assert_eq!(edt.base, PathBuf::from("app.20261101-01.log"));
    assert_eq!(est.base, edt.base);
    assert_eq!(est.end, 1_793_516_400 * SEC, "02:00 EST");
    // Minute files: 01:59 EDT is followed by 01:00 EST, at the transition.
    let minutes = pattern("m.%H%M.log");
    let last = minutes.period_file(1_793_512_800 * SEC - 1, &eastern());
    assert_eq!(last.base, PathBuf::from("m.0159.log"));
    assert_eq!(last.end, 1_793_512_800 * SEC);
    assert_eq!(base(&minutes, last.end, &eastern()), "m.0100.log");
}

#[test]
fn the_skipped_hour_of_spring_forward_has_no_file() {
    let p = pattern("app.%Y%m%d-%H.log");
    let one_am = p.period_file(1_772_951_400 * SEC, &eastern()); // 01:30 EST
    assert_eq!(one_am.base, PathBuf::from("app.20260308-01.log"));
    assert_eq!(
        one_am.end,
        1_772_953_200 * SEC,
        "the next hour starts at 03:00 EDT"
    );
    assert_eq!(base(&p, one_am.end, &eastern()), "app.20260308-03.log");
}

#[test]
fn indices_go_before_the_extension() {
    let p = pattern("logs/app.%Y%m%d.log");
    let b = PathBuf::from("logs/app.20261121.log");
    assert_eq!(p.indexed(&b, 0), b);
    assert_eq!(p.indexed(&b, 2), PathBuf::from("logs/app.20261121.2.log"));
    let bare = pattern("logs/app-%Y%m%d");
    assert_eq!(
        bare.indexed(Path::new("logs/app-20261121"), 3),
        PathBuf::from("logs/app-20261121.3")
    );
    let fixed = pattern("app.log");
    assert_eq!(
        fixed.indexed(Path::new("app.log"), 1),
        PathBuf::from("app.1.log")
    );
}

#[test]
fn our_files_are_recognised_and_nothing_else() {
    let p = pattern("logs/app.%Y%m%d.log");
    let ours = |name: &str, index, compressed, temporary| {
        assert_eq!(
            p.recognise_file(name),
            Some(Recognised {
                index,
                compressed,
                temporary
            }),
            "{name}"
        );
    };
    ours("app.20261121.log", 0, false, false);
    ours("app.20261121.7.log", 7, false, false);
    ours("app.20261121.12.log.zst", 12, true, false);
    ours("app.20261121.log.gz", 0, true, false);
    ours("app.20261121.log.gz.tmp", 0, true, true);
    for foreign in [
        "app.2026112.log",
        "app.20261121.log.bak",
        "app.20261121.0.log",
        "app.20261121.x.log",
        "app.2026112a.log",
        "app.20261121.log.tmp",
        "other.20261121.log",
        "app.20261121.logx",
    ] {
        assert_eq!(p.recognise_file(foreign), None, "{foreign}");
    }
}

#[test]
fn directories_of_the_pattern_are_walked_from_the_fixed_root() {
    let p = pattern("/var/log/svc/%Y/%m/%d/app.log");
    assert_eq!(p.fixed_root(), PathBuf::from("/var/log/svc"));
    assert_eq!(p.varying_depth(), 4);
    assert!(p.matches_directory(0, "2026"));
    assert!(p.matches_directory(2, "21"));
    assert!(!p.matches_directory(0, "20261"));
    assert!(!p.matches_directory(1, "x1"));
    assert!(
        !p.matches_directory(3, "app.log"),
        "the last component is the file"
    );
    let flat = pattern("./logs/app.%Y%m%d.log");
    assert_eq!(flat.fixed_root(), PathBuf::from("./logs"));
    assert_eq!(flat.varying_depth(), 1);
    assert_eq!(
        flat.period_file(NOV_21, &TimeZone::utc()).base,
        PathBuf::from("logs/app.20261121.log")
    );
}

#[test]
#[cfg(unix)]
fn a_relative_pattern_is_placed_under_the_directory_given() {
    let under = |p: &str, dir: &str| NamePattern::parse_under(p, Some(Path::new(dir))).unwrap();
    // The directory's `%` is a character of its name, not a field.
    let p = under("logs/app.%Y%m%d.log", "/srv/100%Y");
    assert_eq!(p.fixed_root(), PathBuf::from("/srv/100%Y/logs"));
    assert_eq!(p.period(), Period::Day);
    assert_eq!(
        p.period_file(NOV_21, &TimeZone::utc()).base,
        PathBuf::from("/srv/100%Y/logs/app.20261121.log")
    );
    assert_eq!(
        under("../app.log", "/srv/")
            .period_file(NOV_21, &TimeZone::utc())
            .base,
        PathBuf::from("/srv/../app.log")
    );
    // An absolute pattern stays as it is; a refusal names the pattern as given.
    let absolute = under("/var/log/app.%Y.log", "/srv");
    assert_eq!(absolute.fixed_root(), PathBuf::from("/var/log"));
    let error = NamePattern::parse_under("logs/", Some(Path::new("/srv")))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"logs/\"") && error.contains("directory"),
        "{error}"
    );
    // Without a directory (unreadable, or not UTF-8) the pattern stays relative.
    let relative = NamePattern::parse_under("logs/app.log", None).unwrap();
    assert_eq!(relative.fixed_root(), PathBuf::from("./logs"));
}
