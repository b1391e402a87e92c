//! Time zones: the rules that turn an instant into the wall-clock time of the time column and
//! of rolling file names.
//!
//! The rules come from the system's time-zone database (TZif files, parsed by `tz-rs`) or from
//! a POSIX `TZ` rule (on Windows without `TZ`, one built from the system's settings). They are
//! read once, when a logger or a sink is built, so the back end never touches the environment:
//! unlike `localtime_r`, this is sound while another thread changes `TZ`. The calendar
//! arithmetic, the transitions around an instant and the resolution of a wall-clock time back
//! to an instant are small and live here.
//!
//! Why not `jiff`, a fuller library: its code would be most of what a user's debug binary
//! carries for tachylog (3.7 MB of a 19.8 MB binary with 1000 log calls, measured with
//! `cargo run --release -p tachylog-bench --bin compile-cost`), and we need only offsets and
//! transitions, about once a second.

mod civil;
mod named_file;
/// What rolling file names need beyond the time column: transitions and wall-clock times.
#[cfg(any(feature = "rolling", test))]
mod transitions;
/// The system's zone on Windows.
#[cfg(windows)]
mod windows;
/// The Windows zone as a POSIX rule: pure, so its tests run on every platform.
#[cfg(any(windows, test))]
mod windows_rule;

pub(crate) use civil::Civil;

use crate::error::Error;

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
    #[cfg(any(feature = "rolling", test))]
    changes: Vec<i64>,
}

/// The largest TZif file read: the database's largest are about 4 KiB (tzdata 2025, the
/// `right/` zones), so a larger file named by `TZ` is no time zone; room for 256 times that.
const MAX_TZIF_BYTES: u64 = 1 << 20;

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
    /// On Windows, without `TZ`, the zone set in the system's settings
    /// (`GetDynamicTimeZoneInformation`), with its current rules only: Windows gives the
    /// offsets and the yearly daylight-time transitions in effect now, not the zone's history,
    /// so instants of years whose rules differed get today's rules. Right for stamping the
    /// present; name a zone ([`TimeZone::get`], with a time-zone database) for past dates.
    ///
    /// Fails with [`Error::TimeZone`] when `TZ` names nothing usable, `/etc/localtime`
    /// cannot be read or parsed, or Windows cannot tell its zone.
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
            Err(std::env::VarError::NotPresent) => TimeZone::configured(),
        }
    }

    /// The zone the system is set to, when `TZ` does not say.
    #[cfg(not(windows))]
    fn configured() -> Result<TimeZone, Error> {
        match named_file::read_regular_file("/etc/localtime".as_ref(), MAX_TZIF_BYTES) {
            Ok(bytes) => TimeZone::from_tzif(&bytes)
                .map_err(|e| Error::TimeZone(format!("/etc/localtime: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TimeZone::utc()),
            Err(e) => Err(Error::TimeZone(format!("/etc/localtime: {e}"))),
        }
    }

    /// The zone the system is set to, when `TZ` does not say.
    #[cfg(windows)]
    fn configured() -> Result<TimeZone, Error> {
        windows::current_zone()
    }

    /// A zone of the time-zone database by name (`Europe/Paris`, `America/New_York`), looked
    /// up in `$TZDIR`, then `/usr/share/zoneinfo`, `/share/zoneinfo` and `/etc/zoneinfo`; or a
    /// TZif file by absolute path. `UTC`, `GMT` and their aliases work without a database.
    /// Only a regular file of at most 1 MiB is read (`TZ=/dev/zero` or a FIFO fails at once),
    /// and a name with a `..` component is refused.
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
        let read = |path: &std::path::Path| named_file::read_regular_file(path, MAX_TZIF_BYTES);
        let bytes = if name.starts_with('/') {
            read(name.as_ref()).map_err(|e| fail(e.to_string()))?
        } else {
            // A zone's name stays inside the database: `../../etc/passwd` is no zone.
            if name.split(['/', '\\']).any(|part| part == "..") {
                return Err(fail("a zone name has no `..` component".into()));
            }
            // A path, which need not be UTF-8.
            let tzdir = std::env::var_os("TZDIR").filter(|dir| !dir.is_empty());
            let found = tzdir
                .iter()
                .map(std::path::Path::new)
                .chain(ZONEINFO_DIRECTORIES.iter().map(std::path::Path::new))
                .find_map(|dir| read(&dir.join(name)).ok());
            match found {
                Some(bytes) => bytes,
                None if UTC_NAMES.contains(&name) => return Ok(TimeZone::utc()),
                None => {
                    return Err(fail(format!(
                        "no such zone in the time-zone database ({}{})",
                        tzdir
                            .map(|d| format!("{}, ", std::path::Path::new(&d).display()))
                            .unwrap_or_default(),
                        ZONEINFO_DIRECTORIES.join(", ")
                    )))
                }
            }
        };
        TimeZone::from_tzif(&bytes).map_err(|e| fail(format!("not a TZif file: {e}")))
    }

    /// A zone from the bytes of a TZif file, which `TZ`, `TZDIR` or whoever wrote
    /// `/etc/localtime` chose: parsed by `tz-rs`, then its transitions listed.
    pub(crate) fn from_tzif(bytes: &[u8]) -> Result<TimeZone, tz::error::TzError> {
        tz::TimeZone::from_tz_data(bytes).map(TimeZone::from_rules)
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
        TimeZone {
            #[cfg(any(feature = "rolling", test))]
            changes: transitions::changes(&rules),
            rules,
        }
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
        Civil::from_local_seconds(
            unix_seconds.saturating_add(i64::from(self.offset_at(unix_seconds))),
        )
    }
}

#[cfg(test)]
mod tests;
