//! The system's zone on Windows, which has no `/etc/localtime`: the zone set in Settings, read
//! with `GetDynamicTimeZoneInformation` and turned into a POSIX rule (`windows_rule.rs`).

use windows_sys::Win32::Foundation::SYSTEMTIME;
use windows_sys::Win32::System::Time::{
    GetDynamicTimeZoneInformation, DYNAMIC_TIME_ZONE_INFORMATION, TIME_ZONE_ID_INVALID,
};

use super::windows_rule::{posix_rule, Transition, WindowsZone};
use super::TimeZone;
use crate::error::Error;

/// The zone in effect, with its current rules only (Windows keeps some zones' history too,
/// but a log line needs the clock of the present).
pub(super) fn current_zone() -> Result<TimeZone, Error> {
    let mut info = DYNAMIC_TIME_ZONE_INFORMATION::default();
    // SAFETY: `info` is a valid, writable DYNAMIC_TIME_ZONE_INFORMATION that the call fills.
    let id = unsafe { GetDynamicTimeZoneInformation(&mut info) };
    if id == TIME_ZONE_ID_INVALID {
        return Err(Error::TimeZone(format!(
            "GetDynamicTimeZoneInformation: {}",
            std::io::Error::last_os_error()
        )));
    }
    let zone = WindowsZone {
        bias: info.Bias,
        standard_bias: info.StandardBias,
        daylight_bias: info.DaylightBias,
        standard_date: transition(&info.StandardDate),
        daylight_date: transition(&info.DaylightDate),
        daylight_disabled: info.DynamicDaylightTimeDisabled,
    };
    let rule = posix_rule(&zone);
    TimeZone::posix(&rule).map_err(|e| {
        let name = &info.TimeZoneKeyName;
        let key = String::from_utf16_lossy(
            &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())],
        );
        Error::TimeZone(format!("the Windows zone {key:?} ({zone:?}): {e}"))
    })
}

fn transition(at: &SYSTEMTIME) -> Transition {
    Transition {
        year: at.wYear,
        month: at.wMonth,
        day_of_week: at.wDayOfWeek,
        day: at.wDay,
        hour: at.wHour,
        minute: at.wMinute,
        second: at.wSecond,
        milliseconds: at.wMilliseconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The zone Windows reports, against jiff's reading of the same setting: jiff maps the
    /// zone's key name (`W. Europe Standard Time`) to a zone of the database, where this code
    /// reads the offsets and transitions; both must give the same offsets this year. Under
    /// Wine the setting follows the host's zone (its `TZ` or `/etc/localtime`); `TZ` reaches
    /// the Windows environment too, so `wine cmd /c "set TZ=&& tachylog-….exe zone::windows"`
    /// with the host's `TZ` set checks `TimeZone::system` as well.
    #[test]
    fn the_system_zone_has_the_offsets_of_the_zone_windows_names() {
        let ours = current_zone().unwrap();
        // jiff reads `TZ` first, as `TimeZone::system` does.
        let theirs = jiff::tz::TimeZone::system();
        let via_system = std::env::var_os("TZ")
            .is_none()
            .then(|| TimeZone::system().unwrap());
        // This year, every quarter of an hour: a date Windows gives with its year (instead of
        // a yearly rule) holds for that year only.
        let year = jiff::Timestamp::now()
            .to_zoned(jiff::tz::TimeZone::UTC)
            .year();
        let start = jiff::civil::date(year, 1, 1)
            .to_zoned(jiff::tz::TimeZone::UTC)
            .unwrap();
        let end = start.checked_add(jiff::Span::new().years(1)).unwrap();
        let range = start.timestamp().as_second()..end.timestamp().as_second();
        for t in range.step_by(900) {
            let expected = theirs
                .to_offset(jiff::Timestamp::from_second(t).unwrap())
                .seconds();
            assert_eq!(ours.offset_at(t), expected, "{theirs:?} at {t}");
            if let Some(system) = &via_system {
                assert_eq!(system.offset_at(t), expected, "{theirs:?} at {t}");
            }
        }
    }
}
