//! An outbox segment (`sink/outbox/`, what makes an `OtlpSink` durable) read back as an
//! adopting outbox reads it, on untrusted bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::outbox_segment(bytes);
});
