//! The binary log's reader (`read/`, `binary/decoder.rs`): block framing, resynchronisation
//! after damage, and the payload's tables and records, on untrusted bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::binary_reader(bytes);
});
