//! The structured fields' wire format (`fields/wire.rs`): the length-prefixed items that `log`
//! key-values and `tracing` fields travel as in dynamic records, decoded on the back end.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    tachylog::__fuzz::fields_wire(bytes);
});
