//! TZif files (`TZ=/path`, a zone under `TZDIR`, `/etc/localtime`): any bytes parse or are
//! refused, and a zone that parses dates any instant (see `tachylog::__fuzz::tzif`). The first
//! 8 bytes are an instant between 1970 and 2200, the rest the file.

#![no_main]

use libfuzzer_sys::fuzz_target;

/// 2200-01-01T00:00:00Z in nanoseconds.
const UNTIL: i64 = 7_258_118_400_000_000_000;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (instant, file) = data.split_at(8);
    let unix_nanos = (i64::from_le_bytes(instant.try_into().unwrap()) % UNTIL).abs();
    tachylog::__fuzz::tzif(file, unix_nanos);
});
