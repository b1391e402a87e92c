//! Line patterns (`tachylog::Pattern`, `{time} {level} {message}` and friends): any text parses
//! or fails with an error that renders, and a pattern that parses can start a logger's
//! formatter (through `Builder::pattern`, checked at `init`, which the round-trip target uses).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tachylog::Pattern;

fuzz_target!(|pattern: &str| {
    match Pattern::parse(pattern) {
        Ok(parsed) => {
            let _ = format!("{parsed:?}");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(!message.is_empty(), "{pattern:?}: an empty error message");
        }
    }
});
