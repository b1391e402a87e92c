//! Proleptic Gregorian calendar arithmetic on "local seconds": seconds since 1970-01-01
//! 00:00:00 of a wall clock, whatever its UTC offset.
//!
//! The day-number conversions are the well-known era-based algorithms (a 400-year era holds
//! exactly 146 097 days, and a year counted from March puts the leap day last), so they are
//! branch-light and exact over the whole `i64` day range used here.

const SECONDS_PER_DAY: i64 = 86_400;
/// Days from 0000-03-01 to 1970-01-01.
const EPOCH_SHIFT: i64 = 719_468;
const DAYS_PER_ERA: i64 = 146_097;

/// A wall-clock date and time, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    /// 1–12.
    pub(crate) month: u8,
    /// 1–31.
    pub(crate) day: u8,
    pub(crate) hour: u8,
    pub(crate) minute: u8,
    pub(crate) second: u8,
}

impl Civil {
    /// The wall-clock fields of `local_seconds`.
    pub(crate) fn from_local_seconds(local_seconds: i64) -> Civil {
        let days = local_seconds.div_euclid(SECONDS_PER_DAY);
        let in_day = local_seconds.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = date_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (in_day / 3600) as u8,
            minute: (in_day / 60 % 60) as u8,
            second: (in_day % 60) as u8,
        }
    }

    /// The local seconds of these fields.
    #[cfg(any(feature = "rolling", test))]
    pub(crate) fn to_local_seconds(self) -> i64 {
        days_from_date(self.year, self.month, self.day) * SECONDS_PER_DAY
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    /// Midnight of the same day.
    #[cfg(feature = "rolling")]
    pub(crate) fn start_of_day(self) -> Civil {
        Civil {
            hour: 0,
            minute: 0,
            second: 0,
            ..self
        }
    }

    /// Day of the year, 1–366.
    #[cfg(any(feature = "rolling", test))]
    pub(crate) fn day_of_year(self) -> u16 {
        (days_from_date(self.year, self.month, self.day) - days_from_date(self.year, 1, 1) + 1)
            as u16
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
#[cfg(any(feature = "rolling", windows, test))]
pub(crate) fn days_from_date(year: i64, month: u8, day: u8) -> i64 {
    // Count years from March, so that February (and its leap day) ends the year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (i64::from(month) + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * DAYS_PER_ERA + day_of_era - EPOCH_SHIFT
}

/// The proleptic Gregorian date of `days` since 1970-01-01: (year, month 1–12, day 1–31).
pub(crate) fn date_from_days(days: i64) -> (i64, u8, u8) {
    let shifted = days + EPOCH_SHIFT;
    let era = shifted.div_euclid(DAYS_PER_ERA);
    let day_of_era = shifted.rem_euclid(DAYS_PER_ERA);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u8;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u8;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(any(feature = "rolling", test))]
pub(crate) fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

#[cfg(any(feature = "rolling", test))]
pub(crate) fn days_in_month(year: i64, month: u8) -> u8 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(any(feature = "rolling", test))]
/// Day of the week of `days` since 1970-01-01, 0 = Sunday (1970-01-01 was a Thursday).
pub(crate) fn weekday(days: i64) -> u8 {
    (days + 4).rem_euclid(7) as u8
}
