//! A spool's write journal, settlement log and stripe record read back as recovery reads
//! them (`queue/spool/journal.rs`), on untrusted bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::spool_journal(bytes);
});
