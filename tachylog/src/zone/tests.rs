//! The zone arithmetic against `jiff`, a full time-zone library used here as the oracle:
//! calendar conversions, offsets, transitions and the resolution of wall-clock times, for
//! zones of the system database and for POSIX rules, at random instants.

use super::civil::{date_from_days, days_from_date, days_in_month, weekday};
use super::*;
use proptest::prelude::*;

/// Zones with the shapes that break naive code: northern and southern DST, half-hour and
/// 45-minute offsets, a 30-minute DST (Lord Howe), a zone that skipped a whole day (Apia,
/// 2011), a negative DST (Dublin), and zones without DST.
const NAMED: [&str; 12] = [
    "America/New_York",
    "Europe/Paris",
    "Europe/Dublin",
    "Europe/London",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Pacific/Apia",
    "America/Sao_Paulo",
    "Africa/Casablanca",
    "UTC",
];

/// POSIX rules in the three day notations (`Mm.w.d`, `Jn`, `n`), both hemispheres.
const RULES: [&str; 6] = [
    "EST5EDT,M3.2.0,M11.1.0",
    "CET-1CEST,M3.5.0,M10.5.0/3",
    "AEST-10AEDT,M10.1.0,M4.1.0/3",
    "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
    "XXX3YYY,J60/2,J300/2",
    "XXX3YYY,59/2,299/2",
];

/// 1900-01-01 to 2100-01-01: the table of every zone and years of its rule.
const SPAN: std::ops::Range<i64> = -2_208_988_800..4_102_444_800;

fn zones() -> Vec<(String, TimeZone, jiff::tz::TimeZone)> {
    let mut zones = Vec::new();
    for name in NAMED {
        let ours = TimeZone::get(name).unwrap_or_else(|e| {
            panic!("{e}: the tests need the system's time-zone database (Debian: tzdata)")
        });
        zones.push((
            name.to_string(),
            ours,
            jiff::tz::TimeZone::get(name).unwrap(),
        ));
    }
    for rule in RULES {
        zones.push((
            rule.to_string(),
            TimeZone::posix(rule).unwrap(),
            jiff::tz::TimeZone::posix(rule).unwrap(),
        ));
    }
    zones
}

fn jiff_second(t: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(t).unwrap()
}

/// Whether a transition of jiff's changes what is in effect (TZif files hold no-op entries,
/// such as a sentinel at 2^31 - 1, which jiff reports in one direction only).
fn changes_something(zone: &jiff::tz::TimeZone, transition: &jiff::tz::TimeZoneTransition) -> bool {
    let before = zone.to_offset_info(transition.timestamp() - jiff::SignedDuration::from_nanos(1));
    (before.offset(), before.dst(), before.abbreviation())
        != (
            transition.offset(),
            transition.dst(),
            transition.abbreviation(),
        )
}

/// jiff's answer to [`TimeZone::transition_after`].
fn jiff_after(zone: &jiff::tz::TimeZone, t: i64) -> Option<i64> {
    zone.following(jiff_second(t))
        .find(|tr| changes_something(zone, tr))
        .map(|tr| tr.timestamp().as_second())
}

/// jiff's answer to [`TimeZone::transition_at_or_before`].
fn jiff_at_or_before(zone: &jiff::tz::TimeZone, t: i64) -> Option<i64> {
    zone.preceding(jiff_second(t + 1))
        .find(|tr| changes_something(zone, tr))
        .map(|tr| tr.timestamp().as_second())
}

#[test]
fn calendar_days_match_jiff_over_twenty_thousand_years() {
    let mut days = days_from_date(-9999, 1, 1);
    let last = days_from_date(9999, 12, 31);
    let mut date = jiff::civil::date(-9999, 1, 1);
    while days <= last {
        let (y, m, d) = date_from_days(days);
        assert_eq!(
            (y, m, d),
            (i64::from(date.year()), date.month() as u8, date.day() as u8),
            "day {days}"
        );
        assert_eq!(days_from_date(y, m, d), days);
        assert_eq!(
            weekday(days),
            date.weekday().to_sunday_zero_offset() as u8,
            "{date}"
        );
        if days < last {
            date = date.tomorrow().unwrap();
        }
        days += 1;
    }
}

#[test]
fn day_of_year_and_month_lengths() {
    let civil = |y, m, d| Civil {
        year: y,
        month: m,
        day: d,
        hour: 0,
        minute: 0,
        second: 0,
    };
    assert_eq!(civil(2024, 12, 31).day_of_year(), 366);
    assert_eq!(civil(2026, 12, 31).day_of_year(), 365);
    assert_eq!(civil(2026, 3, 1).day_of_year(), 60);
    assert_eq!(
        (
            days_in_month(2000, 2),
            days_in_month(1900, 2),
            days_in_month(2024, 2)
        ),
        (29, 28, 29)
    );
}

#[test]
fn every_transition_of_every_zone_matches_jiff() {
    for (name, ours, theirs) in zones() {
        let mut at = SPAN.start;
        let mut count = 0;
        while let Some(next) = ours.transition_after(at).filter(|&t| t < SPAN.end) {
            assert_eq!(
                Some(next),
                jiff_after(&theirs, at),
                "{name}: transition after {at}"
            );
            assert_eq!(ours.transition_at_or_before(next), Some(next), "{name}");
            assert!(
                ours.transition_at_or_before(next - 1)
                    .is_none_or(|t| t < next),
                "{name}"
            );
            at = next;
            count += 1;
        }
        if name != "UTC" && !name.starts_with("Asia/") {
            assert!(count > 20, "{name}: only {count} transitions found");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn offsets_civil_times_and_transitions_match_jiff(t in SPAN, zone in 0..NAMED.len() + RULES.len()) {
        let (name, ours, theirs) = &zones()[zone];
        let ts = jiff_second(t);
        prop_assert_eq!(ours.offset_at(t), theirs.to_offset(ts).seconds(), "{} at {}", name, t);
        let civil = ours.to_civil(t);
        let dt = theirs.to_datetime(ts);
        prop_assert_eq!(
            (civil.year, civil.month, civil.day, civil.hour, civil.minute, civil.second),
            (i64::from(dt.year()), dt.month() as u8, dt.day() as u8, dt.hour() as u8, dt.minute() as u8, dt.second() as u8)
        );
        prop_assert_eq!(civil.day_of_year(), dt.day_of_year() as u16);
        prop_assert_eq!(ours.transition_at_or_before(t), jiff_at_or_before(theirs, t), "{} at {}", name, t);
        prop_assert_eq!(ours.transition_after(t), jiff_after(theirs, t), "{} at {}", name, t);
        // 2^31 - 1, where TZif files put a no-op sentinel, once per run.
        let sentinel = i64::from(i32::MAX);
        prop_assert_eq!(ours.transition_at_or_before(sentinel), jiff_at_or_before(theirs, sentinel), "{}", name);
    }

    /// Wall-clock times near transitions (within two hours of one) and anywhere: the gap of
    /// spring forward and the repeated hour of fall back resolve as jiff's `compatible`.
    #[test]
    fn wall_clock_times_resolve_like_jiff_compatible(
        t in SPAN,
        near in proptest::bool::ANY,
        shift in -7200i64..7200,
        zone in 0..NAMED.len() + RULES.len(),
    ) {
        let (name, ours, theirs) = &zones()[zone];
        let anchor = if near { ours.transition_after(t).unwrap_or(t) + shift } else { t };
        // A wall-clock time: the civil fields of `anchor` read in UTC, so it may fall in a gap
        // or a fold of the zone.
        let civil = Civil::from_local_seconds(anchor);
        let dt = jiff::civil::datetime(
            civil.year as i16, civil.month as i8, civil.day as i8,
            civil.hour as i8, civil.minute as i8, civil.second as i8, 0,
        );
        let expected = theirs.to_ambiguous_timestamp(dt).compatible().unwrap().as_second();
        prop_assert_eq!(ours.to_instant(civil), expected, "{} at {:?}", name, civil);
    }
}

#[test]
fn names_rules_and_offsets_that_do_not_exist_are_refused_with_the_reason() {
    let error = TimeZone::get("Mars/Olympus_Mons").unwrap_err().to_string();
    assert!(
        error.contains("Mars/Olympus_Mons") && error.contains("no such zone"),
        "{error}"
    );
    let error = TimeZone::get("").unwrap_err().to_string();
    assert!(error.contains("empty"), "{error}");
    let not_tzif = std::env::temp_dir().join(format!("tachylog-not-tzif-{}", std::process::id()));
    std::fs::write(&not_tzif, b"hello").unwrap();
    let error = TimeZone::get(not_tzif.to_str().unwrap())
        .unwrap_err()
        .to_string();
    std::fs::remove_file(&not_tzif).unwrap();
    assert!(error.contains("not a TZif file"), "{error}");
    for bad in ["Europe/Paris", "", "EST5EDT,M13.1.0,M11.1.0", "5EST"] {
        let error = TimeZone::posix(bad).unwrap_err().to_string();
        assert!(error.contains("not a POSIX TZ rule"), "{bad:?}: {error}");
    }
    let error = TimeZone::fixed(26 * 3600).unwrap_err().to_string();
    assert!(
        error.contains("25:59:59") && error.contains("UTC+93600s"),
        "{error}"
    );
    assert_eq!(
        TimeZone::fixed(-(26 * 3600 - 1)).unwrap().offset_at(0),
        -(26 * 3600 - 1)
    );
}

#[test]
fn utc_names_work_without_a_database() {
    // `get` falls back to UTC only for its names, after the directories were searched.
    for name in UTC_NAMES {
        assert_eq!(
            TimeZone::get(name).unwrap().offset_at(1_795_219_200),
            0,
            "{name}"
        );
    }
}
