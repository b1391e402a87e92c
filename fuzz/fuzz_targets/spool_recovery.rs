//! A dead process's spool recovered from untrusted bytes: its definitions and a ring's frames,
//! decoded, merged and rendered as `init` with `Builder::spool` and `tachylog recover` do.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::spool_recovery(bytes);
});
