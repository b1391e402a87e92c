//! POSIX TZ rules (`TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3")`): any rule parses or is
//! refused, and a zone that parses gives an offset within a day for any instant, the
//! extremes included. The first 8 bytes are an instant, the rest the rule.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tachylog::TimeZone;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (instant, rule) = data.split_at(8);
    let instant = i64::from_le_bytes(instant.try_into().unwrap());
    let Ok(rule) = std::str::from_utf8(rule) else {
        return;
    };
    let Ok(zone) = TimeZone::posix(rule) else {
        return;
    };
    for at in [instant, 0, i64::MIN, i64::MAX, instant / 1_000_000_000] {
        let offset = zone.offset_at(at);
        assert!(
            offset.abs() < 86_400 * 7,
            "{rule:?} at {at}: offset {offset} s"
        );
    }
});
