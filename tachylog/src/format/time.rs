//! The date-time column, formatted once per second and reused.
//!
//! Converting a timestamp to a civil date in a time zone costs far more than the rest of a line;
//! records arrive in time order, so the `YYYY-MM-DD HH:MM:SS` prefix is rebuilt only when the
//! second changes and the microseconds are appended with a table-free digit loop. Time-zone
//! rules come from [`TimeZone`] (the system tz database, read once), which is sound in threaded
//! programs, unlike `localtime_r` with a changing `TZ`.

use crate::zone::TimeZone;

/// `00`, `01`, .. `99`, back to back.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Formats `YYYY-MM-DD HH:MM:SS.ffffff` in a fixed time zone.
pub(crate) struct TimeCache {
    zone: TimeZone,
    /// The first nanosecond of the second `prefix` shows; 128 bits, because the first second
    /// of `i64`'s range starts before `i64::MIN`.
    second_start: i128,
    prefix: [u8; 19],
    /// The UTC offset of that second in RFC 3339 form: `Z` or `+01:00`.
    offset: String,
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// `YYYY-MM-DD HH:MM:SS.ffffff`: 26 bytes.
const COLUMN: usize = 26;

impl TimeCache {
    /// A cache for `zone`.
    pub(crate) fn new(zone: TimeZone) -> Self {
        let mut cache = TimeCache {
            zone,
            second_start: 0,
            prefix: [0; 19],
            offset: String::new(),
        };
        // Valid from the start, so `write` needs no "nothing cached yet" case.
        cache.refresh(0);
        cache
    }

    /// Appends the date-time of `unix_nanos` to `out`.
    pub(crate) fn write(&mut self, unix_nanos: i64, out: &mut Vec<u8>) {
        // The nanoseconds into the cached second: a subtraction and one unsigned compare for
        // nearly every record, where a Euclidean division and remainder by 10^9 would take a
        // third of this function's instructions.
        let mut into = (i128::from(unix_nanos) - self.second_start) as u128;
        if into >= NANOS_PER_SECOND as u128 {
            self.refresh(unix_nanos.div_euclid(NANOS_PER_SECOND));
            into = (i128::from(unix_nanos) - self.second_start) as u128;
        }
        // Below 10^9 now: a 64-bit division (a 128-bit one is a call into compiler-rt).
        let micros = (into as u64 / 1_000) as u32;
        // Three pairs of digits from a table: two divisions instead of six.
        let (high, rest) = (micros / 10_000, micros % 10_000);
        let pairs = [high, rest / 100, rest % 100].map(|pair| pair as usize * 2);
        out.reserve(COLUMN);
        // SAFETY: `reserve` made room for `COLUMN` (26) bytes after `out.len()`; the stores
        // below cover exactly that range (19 prefix bytes, the point at 19, three pairs at 20,
        // 22 and 24) before `set_len` exposes it, and they are all ASCII bytes copied from
        // `self.prefix` and `DIGIT_PAIRS` at `2 * p`, `p < 100` (each pair is below 100:
        // `micros < 10^6`). Written in place: building the column on the stack and copying it
        // out costs an extra copy, ~15 instructions per record.
        unsafe {
            let column = out.as_mut_ptr().add(out.len());
            std::ptr::copy_nonoverlapping(self.prefix.as_ptr(), column, 19);
            *column.add(19) = b'.';
            for (i, pair) in pairs.into_iter().enumerate() {
                std::ptr::copy_nonoverlapping(
                    DIGIT_PAIRS.as_ptr().add(pair),
                    column.add(20 + 2 * i),
                    2,
                );
            }
            out.set_len(out.len() + COLUMN);
        }
    }

    /// Appends the RFC 3339 date-time of `unix_nanos` with microseconds and the zone's offset:
    /// `2026-11-21T16:04:05.125049Z`, `2026-11-21T11:04:05.125049-05:00`.
    pub(crate) fn write_rfc3339(&mut self, unix_nanos: i64, out: &mut Vec<u8>) {
        let start = out.len();
        self.write(unix_nanos, out);
        out[start + 10] = b'T';
        out.extend_from_slice(self.offset.as_bytes());
    }

    fn refresh(&mut self, second: i64) {
        self.second_start = i128::from(second) * i128::from(NANOS_PER_SECOND);
        let offset = self.zone.offset_at(second);
        let dt = self.zone.to_civil(second);
        if !(0..=9999).contains(&dt.year) {
            // Only instants thousands of years away; the column keeps its width.
            self.prefix = *b"????-??-?? ??:??:??";
            return;
        }
        self.offset = match offset {
            0 => "Z".to_string(),
            _ => format!(
                "{}{:02}:{:02}",
                if offset < 0 { '-' } else { '+' },
                offset.abs() / 3600,
                offset.abs() % 3600 / 60
            ),
        };
        let mut buf = Vec::with_capacity(19);
        push_padded(&mut buf, dt.year as u32, 4);
        buf.push(b'-');
        push_padded(&mut buf, dt.month.into(), 2);
        buf.push(b'-');
        push_padded(&mut buf, dt.day.into(), 2);
        buf.push(b' ');
        push_padded(&mut buf, dt.hour.into(), 2);
        buf.push(b':');
        push_padded(&mut buf, dt.minute.into(), 2);
        buf.push(b':');
        push_padded(&mut buf, dt.second.into(), 2);
        self.prefix.copy_from_slice(&buf);
    }
}

fn push_padded(out: &mut Vec<u8>, value: u32, width: usize) {
    let mut digits = itoa::Buffer::new();
    let s = digits.format(value);
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(s.len())));
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(cache: &mut TimeCache, nanos: i64) -> String {
        let mut out = Vec::new();
        cache.write(nanos, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn utc_with_microseconds() {
        let mut c = TimeCache::new(TimeZone::utc());
        // 2026-11-21 16:04:05.125049 UTC
        let nanos = 1_795_277_045_125_049_000;
        assert_eq!(render(&mut c, nanos), "2026-11-21 16:04:05.125049");
        // Same second, reusing the prefix.
        assert_eq!(render(&mut c, nanos + 1_000), "2026-11-21 16:04:05.125050");
        assert_eq!(
            render(&mut c, nanos + 1_000_000_000),
            "2026-11-21 16:04:06.125049"
        );
    }

    #[test]
    fn named_zone_applies_its_offset() {
        let zone = TimeZone::get("America/New_York").unwrap_or(TimeZone::fixed(-5 * 3600).unwrap());
        let mut c = TimeCache::new(zone);
        assert_eq!(
            render(&mut c, 1_795_277_045_000_000_000),
            "2026-11-21 11:04:05.000000"
        );
    }

    #[test]
    fn rfc3339_carries_the_offset() {
        let mut utc = TimeCache::new(TimeZone::utc());
        let mut out = Vec::new();
        utc.write_rfc3339(1_795_277_045_125_049_000, &mut out);
        assert_eq!(out, b"2026-11-21T16:04:05.125049Z");
        let mut paris = TimeCache::new(TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap());
        out.clear();
        paris.write_rfc3339(1_795_277_045_125_049_000, &mut out);
        assert_eq!(out, b"2026-11-21T17:04:05.125049+01:00");
        let mut india = TimeCache::new(TimeZone::fixed(-(9 * 3600 + 30 * 60)).unwrap());
        out.clear();
        india.write_rfc3339(0, &mut out);
        assert_eq!(out, b"1969-12-31T14:30:00.000000-09:30");
    }

    #[test]
    fn every_microsecond_of_a_second() {
        let mut c = TimeCache::new(TimeZone::utc());
        let second = 1_795_277_045_000_000_000;
        let mut out = Vec::new();
        for micros in 0..1_000_000i64 {
            out.clear();
            c.write(second + micros * 1_000 + 999, &mut out);
            assert_eq!(&out[19..], format!(".{micros:06}").as_bytes());
        }
    }

    #[test]
    fn before_the_epoch() {
        let mut c = TimeCache::new(TimeZone::utc());
        assert_eq!(render(&mut c, -1_000), "1969-12-31 23:59:59.999999");
    }

    #[test]
    fn back_in_time_and_the_ends_of_the_range() {
        let mut c = TimeCache::new(TimeZone::utc());
        // The epoch is what a new cache holds: its first second needs no refresh to be right.
        assert_eq!(render(&mut c, 999_999_999), "1970-01-01 00:00:00.999999");
        let nanos = 1_795_277_045_125_049_000;
        assert_eq!(render(&mut c, nanos), "2026-11-21 16:04:05.125049");
        // A clock stepped back by a second, then by a nanosecond past a second boundary.
        assert_eq!(
            render(&mut c, nanos - 1_000_000_000),
            "2026-11-21 16:04:04.125049"
        );
        assert_eq!(
            render(&mut c, 1_795_277_044_000_000_000 - 1),
            "2026-11-21 16:04:03.999999"
        );
        assert_eq!(render(&mut c, i64::MAX), "2262-04-11 23:47:16.854775");
        assert_eq!(render(&mut c, i64::MIN), "1677-09-21 00:12:43.145224");
        assert_eq!(
            render(&mut c, i64::MIN + 1_000),
            "1677-09-21 00:12:43.145225"
        );
    }
}
