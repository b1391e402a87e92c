//! `RUST_LOG`-style filter directives (`tachylog::Filter`), strict and lenient. A filter that
//! parses must print back to text that parses to the same filter, and the lenient parser must
//! agree with the strict one on input the strict one accepts.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tachylog::Filter;

fuzz_target!(|spec: &str| {
    let (lenient, errors) = Filter::parse_lenient(spec);
    for error in &errors {
        let _ = error.to_string();
    }
    let _ = lenient.max_level();
    if let Ok(strict) = spec.parse::<Filter>() {
        assert!(
            errors.is_empty(),
            "{spec:?}: strict parse ok, lenient errors {errors:?}"
        );
        assert_eq!(
            strict, lenient,
            "{spec:?}: strict and lenient parses differ"
        );
        let printed = strict.to_string();
        let reparsed = printed.parse::<Filter>().unwrap_or_else(|e| {
            panic!("{spec:?} printed as {printed:?}, which does not parse: {e}")
        });
        assert_eq!(reparsed, strict, "{spec:?} printed as {printed:?}");
        // Targets taken from the input: a directive's own target, and a child of it.
        for target in spec.split([',', '=']).take(4) {
            let _ = strict.level_for(target);
            let _ = strict.level_for(&format!("{target}::child"));
        }
    }
});
