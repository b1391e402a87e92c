//! A durable OTLP sink's outbox segment read back as an adopting sink reads it
//! (`sink/otlp/outbox.rs`), on untrusted bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::otlp_outbox(bytes);
});
