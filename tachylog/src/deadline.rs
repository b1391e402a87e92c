//! Instants and wall-clock times a duration from now, for durations a user chose:
//! `Duration::MAX` is how Rust code says "never", and `Instant + Duration` panics past what the
//! clock can hold, which on the back end's or an exporter's thread would stop logging.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A century: "never" for a deadline.
pub(crate) const NEVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `now + duration`, at most a century ahead.
pub(crate) fn instant_after(now: Instant, duration: Duration) -> Instant {
    now + duration.min(NEVER)
}

/// The wall-clock time `delay` from now, in nanoseconds since the Unix epoch, saturated at
/// `i64::MAX` (the year 2262).
pub(crate) fn unix_nanos_in(delay: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.saturating_add(delay).as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_of_forever_is_a_century_not_a_panic() {
        let now = Instant::now();
        assert_eq!(instant_after(now, Duration::MAX) - now, NEVER);
        assert_eq!(
            instant_after(now, Duration::from_millis(5)) - now,
            Duration::from_millis(5)
        );
        assert_eq!(unix_nanos_in(Duration::MAX), i64::MAX);
        let in_a_second = unix_nanos_in(Duration::from_secs(1));
        let now_nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i64;
        assert!((in_a_second - now_nanos - 1_000_000_000).abs() < 100_000_000);
    }
}
