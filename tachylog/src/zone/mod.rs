//! Time zones: the rules that turn an instant into the wall-clock time of the time column and
//! of rolling file names.
//!
//! The rules come from the system's time-zone database (TZif files, parsed by `tz-rs`) or from
//! a POSIX `TZ` rule. They are read once, when a logger or a sink is built, so the back end
//! never touches the environment: unlike `localtime_r`, this is sound while another thread
//! changes `TZ`. The calendar arithmetic, the transitions around an instant and the resolution
//! of a wall-clock time back to an instant are small and live here.
//!
//! Why not `jiff`, a fuller library: its code is most of what a user's debug binary carries
//! for tachylog (3.7 MB of 19.8 MB for the 1000-call crate of `compile-cost`), and we need
//! only offsets and transitions, about once a second.

mod civil;

pub(crate) use civil::Civil;

use crate::error::Error;
use civil::{date_from_days, days_from_date, days_in_month, is_leap_year, weekday};
use tz::timezone::{AlternateTime, RuleDay, TransitionRule};

/// A time zone: UTC, the system's, a named zone of the time-zone database, a POSIX rule or a
/// fixed offset.
///
/// The time column of text lines is formatted in the system's zone unless
/// [`Builder::utc`](crate::Builder::utc) asks for UTC; rolling file names take any zone
/// (`RollingFileBuilder::time_zone`).
///
/// ```
/// use tachylog::TimeZone;
///
/// let utc = TimeZone::utc();
/// assert_eq!(utc.offset_at(1_795_219_200), 0);
/// let eastern = TimeZone::posix("EST5EDT,M3.2.0,M11.1.0")?;
/// assert_eq!(eastern.offset_at(1_795_219_200), -5 * 3600); // 2026-11-21: standard time
/// assert_eq!(eastern.offset_at(1_783_000_000), -4 * 3600); // 2026-07-02: daylight time
/// assert_eq!(TimeZone::fixed(5 * 3600 + 1800)?.offset_at(0), 19_800);
/// # Ok::<(), tachylog::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TimeZone {
    rules: tz::TimeZone,
    /// The instants of the table's transitions that change something (offset, DST or
    /// abbreviation): TZif files also hold no-op entries, such as a sentinel at 2^31 - 1.
    changes: Vec<i64>,
}

/// Where named zones are looked for after `$TZDIR`: Debian, Alpine and most others, then
/// older layouts.
const ZONEINFO_DIRECTORIES: [&str; 3] = ["/usr/share/zoneinfo", "/share/zoneinfo", "/etc/zoneinfo"];

/// Names that mean UTC even where the database is not installed (many containers).
const UTC_NAMES: [&str; 9] = [
    "UTC",
    "Etc/UTC",
    "UCT",
    "Etc/UCT",
    "GMT",
    "Etc/GMT",
    "Zulu",
    "Universal",
    "Etc/Universal",
];

impl TimeZone {
    /// Coordinated Universal Time.
    ///
    /// ```
    /// assert_eq!(tachylog::TimeZone::utc().offset_at(0), 0);
    /// ```
    pub fn utc() -> TimeZone {
        TimeZone::from_rules(tz::TimeZone::utc())
    }

    /// The system's zone, as the C library would choose it: `TZ` when it is set (a zone name
    /// such as `Europe/Paris`, `:Europe/Paris`, a TZif file's absolute path or a POSIX rule;
    /// empty means UTC), otherwise `/etc/localtime`, otherwise UTC (a system with no zone
    /// configured, as in many containers).
    ///
    /// Fails with [`Error::TimeZone`] when `TZ` names nothing usable or `/etc/localtime`
    /// cannot be read or parsed.
    ///
    /// ```
    /// let zone = tachylog::TimeZone::system()?;
    /// let offset = zone.offset_at(1_795_219_200);
    /// assert!((-12 * 3600..=14 * 3600).contains(&offset));
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn system() -> Result<TimeZone, Error> {
        match std::env::var("TZ") {
            Ok(value) => {
                let value = value.trim();
                let spec = value.strip_prefix(':').unwrap_or(value);
                if spec.is_empty() {
                    return Ok(TimeZone::utc());
                }
                TimeZone::get(spec)
                    .or_else(|named| {
                        // Not a zone of the database: a POSIX rule such as `CET-1CEST`?
                        TimeZone::posix(spec).map_err(|_| named)
                    })
                    .map_err(|e| Error::TimeZone(format!("TZ={value:?}: {e}")))
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(Error::TimeZone("TZ is not valid UTF-8".into()))
            }
            Err(std::env::VarError::NotPresent) => match std::fs::read("/etc/localtime") {
                Ok(bytes) => tz::TimeZone::from_tz_data(&bytes)
                    .map(TimeZone::from_rules)
                    .map_err(|e| Error::TimeZone(format!("/etc/localtime: {e}"))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TimeZone::utc()),
                Err(e) => Err(Error::TimeZone(format!("/etc/localtime: {e}"))),
            },
        }
    }

    /// A zone of the time-zone database by name (`Europe/Paris`, `America/New_York`), looked
    /// up in `$TZDIR`, then `/usr/share/zoneinfo`, `/share/zoneinfo` and `/etc/zoneinfo`; or a
    /// TZif file by absolute path. `UTC`, `GMT` and their aliases work without a database.
    ///
    /// ```
    /// # if std::path::Path::new("/usr/share/zoneinfo/Europe/Paris").exists() {
    /// let paris = tachylog::TimeZone::get("Europe/Paris")?;
    /// assert_eq!(paris.offset_at(1_795_219_200), 3600); // 2026-11-21: CET
    /// # }
    /// assert!(tachylog::TimeZone::get("Mars/Olympus_Mons").is_err());
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn get(name: &str) -> Result<TimeZone, Error> {
        let fail = |reason: String| Error::BadTimeZone {
            zone: name.to_string(),
            reason,
        };
        if name.is_empty() {
            return Err(fail("the name is empty".into()));
        }
        let bytes = if name.starts_with('/') {
            std::fs::read(name).map_err(|e| fail(e.to_string()))?
        } else {
            let tzdir = std::env::var("TZDIR").ok().filter(|dir| !dir.is_empty());
            let found = tzdir
                .iter()
                .map(String::as_str)
                .chain(ZONEINFO_DIRECTORIES)
                .find_map(|dir| std::fs::read(std::path::Path::new(dir).join(name)).ok());
            match found {
                Some(bytes) => bytes,
                None if UTC_NAMES.contains(&name) => return Ok(TimeZone::utc()),
                None => {
                    return Err(fail(format!(
                        "no such zone in the time-zone database ({}{})",
                        tzdir.map(|d| format!("{d}, ")).unwrap_or_default(),
                        ZONEINFO_DIRECTORIES.join(", ")
                    )))
                }
            }
        };
        tz::TimeZone::from_tz_data(&bytes)
            .map(TimeZone::from_rules)
            .map_err(|e| fail(format!("not a TZif file: {e}")))
    }

    /// A zone from a POSIX `TZ` rule: `EST5EDT,M3.2.0,M11.1.0` (US Eastern), `CET-1CEST,M3.5.0,M10.5.0/3`
    /// (central Europe), `IST-5:30` (India). The offsets are west of Greenwich, as POSIX has it.
    ///
    /// ```
    /// let india = tachylog::TimeZone::posix("IST-5:30")?;
    /// assert_eq!(india.offset_at(0), 5 * 3600 + 1800);
    /// assert!(tachylog::TimeZone::posix("Europe/Paris").is_err()); // a name, not a rule
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn posix(rule: &str) -> Result<TimeZone, Error> {
        // No directories and no file reading: the text is read as a rule and nothing else.
        fn no_files(_: &str) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
            Err("not read".into())
        }
        tz::TimeZoneSettings::new(&[], no_files)
            .parse_posix_tz(rule)
            .map(TimeZone::from_rules)
            .map_err(|_| Error::BadTimeZone {
                zone: rule.to_string(),
                reason: "not a POSIX TZ rule (such as EST5EDT,M3.2.0,M11.1.0)".into(),
            })
    }

    /// A fixed offset, in seconds east of UTC (India is `5 * 3600 + 1800`), within ±25:59:59.
    ///
    /// ```
    /// assert_eq!(tachylog::TimeZone::fixed(-3 * 3600)?.offset_at(0), -10_800);
    /// assert!(tachylog::TimeZone::fixed(26 * 3600).is_err());
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn fixed(seconds_east: i32) -> Result<TimeZone, Error> {
        const LIMIT: i32 = 26 * 3600 - 1;
        if !(-LIMIT..=LIMIT).contains(&seconds_east) {
            return Err(Error::BadTimeZone {
                zone: format!("UTC{seconds_east:+}s"),
                reason: "an offset is at most 25:59:59 either way".into(),
            });
        }
        tz::TimeZone::fixed(seconds_east)
            .map(TimeZone::from_rules)
            .map_err(|e| Error::BadTimeZone {
                zone: format!("UTC{seconds_east:+}s"),
                reason: e.to_string(),
            })
    }

    fn from_rules(rules: tz::TimeZone) -> TimeZone {
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
        TimeZone { rules, changes }
    }

    /// The UTC offset in seconds (east positive) in effect at `unix_seconds`.
    ///
    /// ```
    /// let eastern = tachylog::TimeZone::posix("EST5EDT,M3.2.0,M11.1.0")?;
    /// assert_eq!(eastern.offset_at(1_793_512_799), -4 * 3600); // 2026-11-01 01:59:59 EDT
    /// assert_eq!(eastern.offset_at(1_793_512_800), -5 * 3600); // then 01:00:00 EST
    /// # Ok::<(), tachylog::Error>(())
    /// ```
    pub fn offset_at(&self, unix_seconds: i64) -> i32 {
        // Only out-of-range instants (far beyond any real timestamp) fail; they keep UTC.
        self.rules
            .find_local_time_type(unix_seconds)
            .map_or(0, |local| local.ut_offset())
    }

    /// The wall-clock time at `unix_seconds`.
    pub(crate) fn to_civil(&self, unix_seconds: i64) -> Civil {
        Civil::from_local_seconds(unix_seconds.saturating_add(i64::from(self.offset_at(unix_seconds))))
    }

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
            .filter(|&t| t <= unix_seconds && from_table.is_none_or(|last| t > last) && self.rule_applies(t))
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
        rule.into_iter()
            .flat_map(move |rule| (year - 1..=year + 1).flat_map(move |y| daylight_changes(rule, y)))
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

#[cfg(test)]
mod tests;
