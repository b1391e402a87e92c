//! `throughput_mix`, `throughput_mix_binary` and `cat_mix_binary`: the records a web back end
//! writes, four call sites from one thread, into text lines and into the binary log, and that
//! binary log read back as text lines. Unlike `Iteration` (three plain `{}` numbers), these
//! carry a `{:.3}` float, strings, a negative integer and structured fields. tachylog only:
//! the pairs compare its two formats in the same run.
//!
//! Per 20 records: 16 × `info!("request {} took {:.3} ms: {}", u64, f64, &str)`, 2 ×
//! `warn!("request scanned table {}: {} rows", &str, u64)`, 1 ×
//! `info!(user_id = u64, cache = &str; "request served from cache")`, 1 ×
//! `error!("request to {} failed with {}: {}", &str, i64, &str)`. Every message holds
//! "request ", the marker the parent counts.

use super::Scale;
use crate::report::group_digits;

const PATHS: [&str; 4] = [
    "/api/v1/orders",
    "/api/v1/users/me",
    "/healthz",
    "/static/app.js",
];
const TABLES: [&str; 3] = ["orders", "order_items", "sessions"];
const HOSTS: [&str; 2] = ["db-2.internal:5432", "cache-1.internal:6379"];

/// The mix's record number `i`.
#[inline]
pub fn log(i: u64) {
    let k = i as usize;
    match i % 20 {
        0..=15 => tachylog::info!(
            "request {} took {:.3} ms: {}",
            i,
            (i % 10_007) as f64 * 0.0173,
            PATHS[k % PATHS.len()]
        ),
        16 | 17 => tachylog::warn!(
            "request scanned table {}: {} rows",
            TABLES[k % TABLES.len()],
            i * 7 % 100_003
        ),
        18 => tachylog::info!(user_id = i, cache = "hit"; "request served from cache"),
        _ => tachylog::error!(
            "request to {} failed with {}: {}",
            HOSTS[k % HOSTS.len()],
            -((i % 200) as i64),
            "connection reset by peer"
        ),
    }
}

/// Record 1's message, which the run must leave exactly once.
pub fn probe() -> String {
    format!("request 1 took {:.3} ms: {}", 0.0173, PATHS[1])
}

/// One line for the report header.
pub fn describe(name: &str, scale: Scale) -> String {
    let records = group_digits(super::seed::throughput_lines(scale));
    match name {
        "cat_mix_binary" => format!(
            "cat_mix_binary: the binary log of `throughput_mix_binary` ({records} records), \
             written untimed, then read back as `cat_binary` reads; tachylog only"
        ),
        _ => format!(
            "{name}: {records} records from one thread, a web back end's mix of four call sites \
             (16 in 20 info!(\"request {{}} took {{:.3}} ms: {{}}\", u64, f64, &str); 2 a warn! \
             with a table name and a row count; 1 an info! with two fields; 1 an error! with a \
             host, a negative integer and an error text) into {}; tachylog only",
            if name.ends_with("binary") {
                "a binary log"
            } else {
                "text lines"
            }
        ),
    }
}
