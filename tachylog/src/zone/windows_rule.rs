//! The Windows zone as a POSIX `TZ` rule: Windows describes the zone in effect by a bias and
//! two yearly transitions (`DYNAMIC_TIME_ZONE_INFORMATION`), which is exactly what a POSIX
//! rule says, so `tz-rs` reads the rule built here like any `TZ` value.
//!
//! Pure and built on every platform so its tests run everywhere; the system call that fills
//! [`WindowsZone`] is in `windows.rs`.

use std::fmt::Write as _;

use super::civil::days_from_date;

/// The fields of a `DYNAMIC_TIME_ZONE_INFORMATION` that decide offsets: UTC = local time +
/// bias, all in minutes.
#[derive(Clone, Copy, Debug)]
pub(super) struct WindowsZone {
    /// `Bias`: minutes west of UTC (Eastern US is 300, India -330).
    pub(super) bias: i32,
    /// `StandardBias`: added to `bias` outside daylight time (usually 0).
    pub(super) standard_bias: i32,
    /// `DaylightBias`: added to `bias` during daylight time (usually -60).
    pub(super) daylight_bias: i32,
    /// `StandardDate`: when daylight time ends, in daylight (local) time.
    pub(super) standard_date: Transition,
    /// `DaylightDate`: when daylight time starts, in standard (local) time; `month == 0`
    /// when the zone has no daylight time.
    pub(super) daylight_date: Transition,
    /// `DynamicDaylightTimeDisabled`: the user turned daylight time off (Settings, "Adjust
    /// for daylight saving time automatically"); the clock then keeps standard time all year.
    pub(super) daylight_disabled: bool,
}

/// A `SYSTEMTIME` used as a transition. With `year == 0` (the usual case) it recurs yearly:
/// `day` is the week of the month (1 to 4, 5 the last) and `day_of_week` the weekday
/// (0 Sunday); otherwise it is a date of that year only.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Transition {
    pub(super) year: u16,
    pub(super) month: u16,
    pub(super) day_of_week: u16,
    pub(super) day: u16,
    pub(super) hour: u16,
    pub(super) minute: u16,
    pub(super) second: u16,
    pub(super) milliseconds: u16,
}

/// The POSIX rule of `zone`, such as `<+01>-1<+02>-2,M3.5.0/2,M10.5.0/3` for Western Europe.
///
/// Both use offsets west of UTC and transition times in the local time in effect before the
/// transition, and Windows' week 5 is POSIX's "last", so the fields carry over as they are.
/// Windows names ("W. Europe Standard Time") are not abbreviations: the names here are the
/// offsets east of UTC, as the time-zone database writes zones without an abbreviation.
pub(super) fn posix_rule(zone: &WindowsZone) -> String {
    let standard = zone.bias + zone.standard_bias;
    let daylight = zone.bias + zone.daylight_bias;
    let mut rule = String::new();
    push_name(&mut rule, standard);
    push_minutes(&mut rule, standard);
    let has_daylight = !zone.daylight_disabled
        && zone.daylight_date.month != 0
        && zone.standard_date.month != 0
        && daylight != standard;
    if has_daylight {
        push_name(&mut rule, daylight);
        push_minutes(&mut rule, daylight);
        push_transition(&mut rule, &zone.daylight_date);
        push_transition(&mut rule, &zone.standard_date);
    }
    rule
}

/// `<+0530>` for 330 minutes east: the POSIX quoted form, which allows digits and signs.
fn push_name(rule: &mut String, minutes_west: i32) {
    let east = -minutes_west;
    let sign = if east < 0 { '-' } else { '+' };
    let (hours, minutes) = (east.abs() / 60, east.abs() % 60);
    let _ = write!(rule, "<{sign}{hours:02}");
    if minutes != 0 {
        let _ = write!(rule, "{minutes:02}");
    }
    rule.push('>');
}

/// A POSIX offset: `5`, `-5:30`.
fn push_minutes(rule: &mut String, minutes_west: i32) {
    if minutes_west < 0 {
        rule.push('-');
    }
    let (hours, minutes) = (minutes_west.abs() / 60, minutes_west.abs() % 60);
    let _ = write!(rule, "{hours}");
    if minutes != 0 {
        let _ = write!(rule, ":{minutes:02}");
    }
}

/// `,M3.5.0/2` (a yearly rule) or `,59/2` (one year's date as a zero-based day of the year,
/// kept for every year: only the current rules are known anyway).
fn push_transition(rule: &mut String, at: &Transition) {
    if at.year == 0 {
        let _ = write!(rule, ",M{}.{}.{}", at.month, at.day, at.day_of_week);
    } else {
        let (year, month, day) = (i64::from(at.year), at.month as u8, at.day as u8);
        let day_of_year = days_from_date(year, month, day) - days_from_date(year, 1, 1);
        let _ = write!(rule, ",{day_of_year}");
    }
    // Some zones change at 23:59:59.999: the new offset is in effect from the next second on,
    // midnight, which POSIX writes 24.
    let seconds = u32::from(at.hour) * 3600
        + u32::from(at.minute) * 60
        + u32::from(at.second)
        + u32::from(at.milliseconds > 0);
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let _ = write!(rule, "/{hours}");
    if minutes != 0 || seconds != 0 {
        let _ = write!(rule, ":{minutes:02}");
    }
    if seconds != 0 {
        let _ = write!(rule, ":{seconds:02}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::TimeZone;
    use super::*;

    /// A yearly transition: the `week`-th (5: last) `weekday` of `month` at `hour:minute`.
    fn yearly(month: u16, week: u16, weekday: u16, hour: u16, minute: u16) -> Transition {
        Transition {
            month,
            day: week,
            day_of_week: weekday,
            hour,
            minute,
            ..Transition::default()
        }
    }

    fn zone(
        bias: i32,
        daylight_bias: i32,
        daylight: Transition,
        standard: Transition,
    ) -> WindowsZone {
        WindowsZone {
            bias,
            standard_bias: 0,
            daylight_bias,
            standard_date: standard,
            daylight_date: daylight,
            daylight_disabled: false,
        }
    }

    fn no_daylight(bias: i32) -> WindowsZone {
        zone(bias, 0, Transition::default(), Transition::default())
    }

    /// Real zones, with the values of their `TZI` in the registry (HKLM\SOFTWARE\Microsoft\
    /// Windows NT\CurrentVersion\Time Zones), the rule built from them and the zone of the
    /// time-zone database that follows the same rules today.
    fn real_zones() -> Vec<(&'static str, WindowsZone, &'static str, &'static str)> {
        vec![
            (
                "W. Europe Standard Time",
                zone(-60, -60, yearly(3, 5, 0, 2, 0), yearly(10, 5, 0, 3, 0)),
                "<+01>-1<+02>-2,M3.5.0/2,M10.5.0/3",
                "Europe/Berlin",
            ),
            (
                "GMT Standard Time",
                zone(0, -60, yearly(3, 5, 0, 1, 0), yearly(10, 5, 0, 2, 0)),
                "<+00>0<+01>-1,M3.5.0/1,M10.5.0/2",
                "Europe/London",
            ),
            (
                "Eastern Standard Time",
                zone(300, -60, yearly(3, 2, 0, 2, 0), yearly(11, 1, 0, 2, 0)),
                "<-05>5<-04>4,M3.2.0/2,M11.1.0/2",
                "America/New_York",
            ),
            (
                "AUS Eastern Standard Time",
                zone(-600, -60, yearly(10, 1, 0, 2, 0), yearly(4, 1, 0, 3, 0)),
                "<+10>-10<+11>-11,M10.1.0/2,M4.1.0/3",
                "Australia/Sydney",
            ),
            (
                "Lord Howe Standard Time",
                zone(-630, -30, yearly(10, 1, 0, 2, 0), yearly(4, 1, 0, 2, 0)),
                "<+1030>-10:30<+11>-11,M10.1.0/2,M4.1.0/2",
                "Australia/Lord_Howe",
            ),
            (
                "Newfoundland Standard Time",
                zone(210, -60, yearly(3, 2, 0, 2, 0), yearly(11, 1, 0, 2, 0)),
                "<-0330>3:30<-0230>2:30,M3.2.0/2,M11.1.0/2",
                "America/St_Johns",
            ),
            (
                "India Standard Time",
                no_daylight(-330),
                "<+0530>-5:30",
                "Asia/Kolkata",
            ),
            (
                "Nepal Standard Time",
                no_daylight(-345),
                "<+0545>-5:45",
                "Asia/Kathmandu",
            ),
            ("UTC", no_daylight(0), "<+00>0", "UTC"),
        ]
    }

    /// 2026-01-01 to 2031-01-01: years whose rules Windows and the database agree on.
    const PRESENT: std::ops::Range<i64> = 1_767_225_600..1_924_992_000;

    #[test]
    fn real_zones_give_the_rules_and_transitions_of_the_database() {
        for (name, windows, expected, database) in real_zones() {
            let rule = posix_rule(&windows);
            assert_eq!(rule, expected, "{name}");
            let ours = TimeZone::posix(&rule).unwrap_or_else(|e| panic!("{name}: {e}"));
            let theirs = jiff::tz::TimeZone::get(database).unwrap_or_else(|e| {
                panic!("{e}: the tests need the system's time-zone database (Debian: tzdata)")
            });
            let offset = |t: i64| {
                let ts = jiff::Timestamp::from_second(t).unwrap();
                theirs.to_offset(ts).seconds()
            };
            // Every transition of the database in the span, to the second, and the offsets on
            // either side of it; then every six hours in between.
            let start = jiff::Timestamp::from_second(PRESENT.start).unwrap();
            let mut transitions = 0;
            for transition in theirs.following(start) {
                let t = transition.timestamp().as_second();
                if t >= PRESENT.end {
                    break;
                }
                for instant in [t - 1, t, t + 1] {
                    assert_eq!(
                        ours.offset_at(instant),
                        offset(instant),
                        "{name} at {instant}"
                    );
                }
                assert_eq!(ours.transition_after(t - 1), Some(t), "{name}");
                transitions += 1;
            }
            let has_daylight = windows.daylight_date.month != 0;
            assert_eq!(transitions, if has_daylight { 10 } else { 0 }, "{name}");
            for t in PRESENT.step_by(6 * 3600) {
                assert_eq!(ours.offset_at(t), offset(t), "{name} at {t}");
            }
        }
    }

    #[test]
    fn known_offsets_without_a_database() {
        let at = |windows: &WindowsZone, t: i64| {
            TimeZone::posix(&posix_rule(windows)).unwrap().offset_at(t)
        };
        let zones = real_zones();
        let by_name = |name: &str| zones.iter().find(|z| z.0 == name).unwrap().1;
        // 2026-07-02 and 2026-11-21 (UTC midnight).
        let (july, november) = (1_783_000_000, 1_795_219_200);
        assert_eq!(at(&by_name("W. Europe Standard Time"), july), 2 * 3600);
        assert_eq!(at(&by_name("W. Europe Standard Time"), november), 3600);
        assert_eq!(at(&by_name("Eastern Standard Time"), july), -4 * 3600);
        assert_eq!(at(&by_name("Eastern Standard Time"), november), -5 * 3600);
        assert_eq!(at(&by_name("AUS Eastern Standard Time"), july), 10 * 3600);
        assert_eq!(
            at(&by_name("AUS Eastern Standard Time"), november),
            11 * 3600
        );
        assert_eq!(at(&by_name("India Standard Time"), july), 5 * 3600 + 1800);
        assert_eq!(
            at(&by_name("Newfoundland Standard Time"), november),
            -(3 * 3600 + 1800)
        );
        // 2026-11-01 05:59:59 UTC is 01:59:59 EDT, a second later 01:00:00 EST.
        assert_eq!(
            at(&by_name("Eastern Standard Time"), 1_793_512_799),
            -4 * 3600
        );
        assert_eq!(
            at(&by_name("Eastern Standard Time"), 1_793_512_800),
            -5 * 3600
        );
    }

    #[test]
    fn daylight_time_turned_off_or_without_effect_keeps_standard_time() {
        let mut eastern = zone(300, -60, yearly(3, 2, 0, 2, 0), yearly(11, 1, 0, 2, 0));
        eastern.daylight_disabled = true;
        assert_eq!(posix_rule(&eastern), "<-05>5");
        eastern.daylight_disabled = false;
        eastern.daylight_bias = 0;
        assert_eq!(posix_rule(&eastern), "<-05>5");
    }

    #[test]
    fn standard_bias_one_year_dates_and_last_millisecond_transitions() {
        // A nonzero standard bias shifts the standard offset as well.
        let mut shifted = zone(300, -60, yearly(3, 2, 0, 2, 0), yearly(11, 1, 0, 2, 0));
        shifted.standard_bias = 30;
        assert_eq!(posix_rule(&shifted), "<-0530>5:30<-04>4,M3.2.0/2,M11.1.0/2");
        // Transitions at 23:59:59.999 (the last Thursday of March, the last Friday of
        // October) take effect at midnight.
        let last_millisecond = Transition {
            hour: 23,
            minute: 59,
            second: 59,
            milliseconds: 999,
            ..yearly(3, 5, 4, 0, 0)
        };
        let end = Transition {
            hour: 0,
            minute: 59,
            second: 59,
            milliseconds: 999,
            ..yearly(10, 5, 5, 0, 0)
        };
        let zone_with_odd_times = zone(-120, -60, last_millisecond, end);
        let rule = posix_rule(&zone_with_odd_times);
        assert_eq!(rule, "<+02>-2<+03>-3,M3.5.4/24,M10.5.5/1");
        assert!(TimeZone::posix(&rule).is_ok(), "{rule}");
        // One year's dates (29 March and 25 October of 2026, a leap-free year, then 1 March of
        // 2028, a leap year): zero-based days of the year.
        let dated = |year, month, day| Transition {
            year,
            month,
            day,
            hour: 2,
            minute: 30,
            ..Transition::default()
        };
        let one_year = zone(-60, -60, dated(2026, 3, 29), dated(2026, 10, 25));
        assert_eq!(posix_rule(&one_year), "<+01>-1<+02>-2,87/2:30,297/2:30");
        let leap = zone(-60, -60, dated(2028, 3, 1), dated(2028, 10, 1));
        assert_eq!(posix_rule(&leap), "<+01>-1<+02>-2,60/2:30,274/2:30");
    }
}
