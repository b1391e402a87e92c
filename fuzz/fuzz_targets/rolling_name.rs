//! Rolling file-name patterns (`RollingFile::builder("app.%Y-%m-%d.log")`): parsing, the period
//! file at an instant, and recognising the names the pattern makes (what retention relies on).
//! The first 8 bytes are the instant, the rest the pattern.

#![no_main]

use libfuzzer_sys::fuzz_target;

/// 2200-01-01T00:00:00Z in nanoseconds: instants from 1970 to then.
const UNTIL: i64 = 7_258_118_400_000_000_000;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (instant, pattern) = data.split_at(8);
    let unix_nanos = (i64::from_le_bytes(instant.try_into().unwrap()) % UNTIL).abs();
    if let Ok(pattern) = std::str::from_utf8(pattern) {
        tachylog::__fuzz::rolling_name(pattern, unix_nanos);
    }
});
