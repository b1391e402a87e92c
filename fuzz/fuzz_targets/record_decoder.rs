//! A record's argument bytes walked by the back end's `Decoder`, views and renderers
//! (`codec/`), which never trust the bytes: see `tachylog::__fuzz::decoder` for the layout.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::decoder(bytes);
});
