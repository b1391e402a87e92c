//! UTC calendar time from `SystemTime`, with std only: the report's date line and the
//! `mutex_file` baseline's timestamps (what a logger with no date crate has to do).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A `SystemTime` displayed as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC.
#[derive(Clone, Copy, Debug)]
pub struct UtcMicros(pub SystemTime);

/// A `SystemTime` displayed as `YYYY-MM-DD HH:MM:SS UTC`.
#[derive(Clone, Copy, Debug)]
pub struct UtcSeconds(pub SystemTime);

/// Splits a time into (year, month, day, seconds of day, microseconds); times before 1970
/// are clamped to the epoch.
fn civil(t: SystemTime) -> (i64, u32, u32, u64, u32) {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    (y, m, d, secs % 86_400, since.subsec_micros())
}

impl fmt::Display for UtcMicros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, sod, us) = civil(self.0);
        write!(
            f,
            "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}.{us:06}",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

impl fmt::Display for UtcSeconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, mo, d, sod, _) = civil(self.0);
        write!(
            f,
            "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day); Howard Hinnant's
/// `civil_from_days`, which works on 400-year eras so no table or loop is needed.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March-based
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn formats_micro_and_second_precision() {
        // 2024-02-29 13:05:09.000042 UTC
        let t = UNIX_EPOCH
            + Duration::from_micros((19_782 * 86_400 + 13 * 3600 + 5 * 60 + 9) * 1_000_000 + 42);
        assert_eq!(UtcMicros(t).to_string(), "2024-02-29 13:05:09.000042");
        assert_eq!(UtcSeconds(t).to_string(), "2024-02-29 13:05:09 UTC");
    }
}
