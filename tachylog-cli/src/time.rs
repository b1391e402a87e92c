//! The instants `--since` and `--until` take: RFC 3339 (`2026-11-27T09:30:00Z`, a space for
//! the `T`, an optional fraction, `Z` or `±HH:MM`; UTC when no offset is given) or seconds
//! since the Unix epoch (`1795771800.5`).

/// Nanoseconds since the Unix epoch, or why `text` is not an instant.
pub(crate) fn parse_instant(text: &str) -> Result<i64, String> {
    let bad = || {
        format!("{text:?} is not an instant: write RFC 3339 (2026-11-27T09:30:00Z) or Unix seconds")
    };
    if let Ok(seconds) = text.parse::<f64>() {
        if seconds.is_finite() && seconds.abs() < 9.2e9 {
            return Ok((seconds * 1e9).round() as i64);
        }
        return Err(bad());
    }
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let (year, month, day) = (
        digits(0..4).ok_or_else(bad)?,
        digits(5..7).ok_or_else(bad)?,
        digits(8..10).ok_or_else(bad)?,
    );
    let (hour, minute, second) = (
        digits(11..13).ok_or_else(bad)?,
        digits(14..16).ok_or_else(bad)?,
        digits(17..19).ok_or_else(bad)?,
    );
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad());
    }
    let mut rest = &text[19..];
    let mut nanos = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return Err(bad());
        }
        for (i, c) in fraction[..len].bytes().take(9).enumerate() {
            nanos += i64::from(c - b'0') * 10i64.pow(8 - i as u32);
        }
        rest = &fraction[len..];
    }
    let offset = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(bad()),
            };
            let r = rest.as_bytes();
            if r.len() != 6 || r[3] != b':' {
                return Err(bad());
            }
            let hours: i64 = rest[1..3].parse().map_err(|_| bad())?;
            let minutes: i64 = rest[4..6].parse().map_err(|_| bad())?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    seconds
        .checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(nanos))
        .ok_or_else(|| format!("{text:?} is outside the years 1678 to 2262 that nanoseconds reach"))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::parse_instant;

    #[test]
    fn rfc3339_and_unix_seconds_name_the_same_instants() {
        assert_eq!(parse_instant("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(
            parse_instant("2000-03-01 00:00:00"),
            Ok(951_868_800_000_000_000)
        );
        assert_eq!(
            parse_instant("2026-11-27T10:30:00.25+01:00"),
            parse_instant("2026-11-27T09:30:00.250Z")
        );
        assert_eq!(parse_instant("951868800.5"), Ok(951_868_800_500_000_000));
        assert!(parse_instant("2999-01-01T00:00:00Z").is_err());
        for bad in [
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-11-27T09:30",
            "2026-11-27T09:30:00+1",
        ] {
            assert!(parse_instant(bad).is_err(), "{bad}");
        }
    }
}
