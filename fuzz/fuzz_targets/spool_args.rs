//! A record read back from its call site's format string, its arguments' shape and its argument
//! bytes, as recovering a spool reads what a killed process left (`format/shaped/`,
//! `codec/shape.rs`), on untrusted bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::spool_args(bytes);
});
