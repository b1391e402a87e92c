//! The transitions of a zone around an instant and the instant of a wall-clock time: what a
//! rolling file's period needs to know where it starts and ends.

use super::civil::{date_from_days, days_from_date, days_in_month, is_leap_year, weekday};
use super::{Civil, TimeZone};
use tz::timezone::{AlternateTime, RuleDay, TransitionRule};

/// The instants of the table's transitions that change something (offset, DST or
/// abbreviation); TZif files also hold no-op entries, such as a sentinel at 2^31 - 1.
pub(super) fn changes(rules: &tz::TimeZone) -> Vec<i64> {
    let zone = rules.as_ref();
    let types = zone.local_time_types();
    let mut in_effect = types.first();
    let mut changes = Vec::new();
    for transition in zone.transitions() {
        let next = types.get(transition.local_time_type_index());
        if next != in_effect {
            changes.push(transition.unix_leap_time());
            in_effect = next;
        }
    }
    changes
}

impl TimeZone {
    /// The instant of a wall-clock time: the earlier one when the time occurs twice (the hour
    /// repeated when clocks go back), and for a time skipped when clocks go forward, the
    /// instant it names with the offset in effect before the jump (02:30 in a 02:00 → 03:00
    /// jump is 03:30 after it). This is what `mktime` and most libraries call "compatible".
    pub(crate) fn to_instant(&self, civil: Civil) -> i64 {
        let local = civil.to_local_seconds();
        // An offset in effect within a day of `local` (offsets never exceed ±25 h, and
        // transitions are far more than a day apart), tried from the earliest instant on.
        let before = self.offset_at(local.saturating_sub(2 * 86_400));
        let after = self.offset_at(local.saturating_add(2 * 86_400));
        let fits = |offset: i32| {
            let instant = local.saturating_sub(i64::from(offset));
            (self.offset_at(instant) == offset).then_some(instant)
        };
        let mut candidates = [before, after, self.offset_at(local)]
            .into_iter()
            .filter_map(fits)
            .collect::<Vec<_>>();
        candidates.sort_unstable();
        match candidates.first() {
            Some(&earliest) => earliest,
            // Skipped: read it with the offset of just before the jump.
            None => local.saturating_sub(i64::from(before)),
        }
    }

    /// The last change of rules at or before `unix_seconds`.
    pub(crate) fn transition_at_or_before(&self, unix_seconds: i64) -> Option<i64> {
        let table = &self.changes;
        let after = table.partition_point(|&t| t <= unix_seconds);
        let from_table = after.checked_sub(1).map(|i| table[i]);
        let from_rule = self
            .rule_transitions_near(unix_seconds)
            .filter(|&t| {
                t <= unix_seconds && from_table.is_none_or(|last| t > last) && self.rule_applies(t)
            })
            .max();
        from_rule.or(from_table)
    }

    /// The first change of rules after `unix_seconds`.
    pub(crate) fn transition_after(&self, unix_seconds: i64) -> Option<i64> {
        let table = &self.changes;
        let after = table.partition_point(|&t| t <= unix_seconds);
        if let Some(&next) = table.get(after) {
            return Some(next);
        }
        self.rule_transitions_near(unix_seconds)
            .filter(|&t| t > unix_seconds && self.rule_applies(t))
            .min()
    }

    /// Whether the zone's POSIX rule (not the table) governs `unix_seconds`.
    fn rule_applies(&self, unix_seconds: i64) -> bool {
        self.rules
            .as_ref()
            .transitions()
            .last()
            .is_none_or(|last| unix_seconds > last.unix_leap_time())
    }

    /// The transitions of the zone's daylight-saving rule in the years around `unix_seconds`
    /// (the one before, its own and the one after, which always hold the nearest ones).
    fn rule_transitions_near(&self, unix_seconds: i64) -> impl Iterator<Item = i64> + '_ {
        let rule = match self.rules.as_ref().extra_rule() {
            Some(TransitionRule::Alternate(rule)) => Some(rule),
            _ => None,
        };
        let (year, _, _) = date_from_days(unix_seconds.div_euclid(86_400));
        rule.into_iter().flat_map(move |rule| {
            (year - 1..=year + 1).flat_map(move |y| daylight_changes(rule, y))
        })
    }
}

/// The two instants at which `rule` starts and ends daylight time in `year`.
fn daylight_changes(rule: &AlternateTime, year: i64) -> [i64; 2] {
    // The start is given in standard time, the end in daylight time; the times of day may be
    // negative or past 24 h (RFC 8536), so they are added as seconds.
    let start = rule_day(rule.dst_start(), year) * 86_400 + i64::from(rule.dst_start_time())
        - i64::from(rule.std().ut_offset());
    let end = rule_day(rule.dst_end(), year) * 86_400 + i64::from(rule.dst_end_time())
        - i64::from(rule.dst().ut_offset());
    [start, end]
}

/// The day (since 1970-01-01) a POSIX rule day names in `year`.
fn rule_day(day: &RuleDay, year: i64) -> i64 {
    let january_1 = days_from_date(year, 1, 1);
    match day {
        // `Jn`: 1–365, February 29 never counted.
        RuleDay::Julian1WithoutLeap(n) => {
            let n = i64::from(n.get());
            january_1 + n - 1 + i64::from(is_leap_year(year) && n > 59)
        }
        // `n`: 0–365, February 29 counted.
        RuleDay::Julian0WithLeap(n) => january_1 + i64::from(n.get()),
        // `Mm.w.d`: weekday d of week w (5 = the last) of month m.
        RuleDay::MonthWeekDay(mwd) => {
            let first = days_from_date(year, mwd.month(), 1);
            let first_match = first + i64::from((7 + mwd.week_day() - weekday(first)) % 7);
            let mut day = first_match + 7 * i64::from(mwd.week() - 1);
            if day >= first + i64::from(days_in_month(year, mwd.month())) {
                day -= 7;
            }
            day
        }
    }
}
