//! `throughput_mix`, `throughput_mix_binary` and `cat_mix_binary`: the records a web back end
//! writes, four call sites from one thread, into text lines and into the binary log, and that
//! binary log read back as text lines. Unlike `Iteration` (three plain `{}` numbers), these
//! carry a `{:.3}` float, strings, a negative integer and structured fields. tachylog only:
//! the pairs compare its two formats in the same run. `throughput_user` and
//! `throughput_user_binary` do the same with a user's own types (see [`log_user_types`]), whose
//! text only their `Display` and `Debug` impls know, so the binary log stores it rendered.
//!
//! Per 20 records: 16 × `info!("request {} took {:.3} ms: {}", u64, f64, &str)`, 2 ×
//! `warn!("request scanned table {}: {} rows", &str, u64)`, 1 ×
//! `info!(user_id = u64, cache = &str; "request served from cache")`, 1 ×
//! `error!("request to {} failed with {}: {}", &str, i64, &str)`. Every message holds
//! "request ", the marker the parent counts.

use std::fmt;

use super::Scale;
use crate::report::group_digits;

/// Which records a mix workload logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// [`log`]: a web back end's four call sites.
    Web,
    /// [`log_user_types`]: a user's own types.
    UserTypes,
}

impl Mix {
    /// The text workload's name; the binary one adds `_binary`.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Web => "throughput_mix",
            Mix::UserTypes => "throughput_user",
        }
    }
}

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

/// An order number, copied raw ([`tachylog::CopyArg`]) and written by its `Display` on the back
/// end, as `ord-` and eight digits.
#[derive(Clone, Copy)]
pub struct OrderId(u64);

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ord-{:08}", self.0)
    }
}

impl tachylog::CopyArg for OrderId {}

/// An order's state, copied raw and written by its derived `Debug` on the back end.
#[derive(Clone, Copy, Debug)]
pub enum Status {
    Placed,
    Paid,
    Shipped {
        #[expect(dead_code, reason = "read only by the derived `Debug`, as a log would")]
        parcels: u8,
    },
}

impl tachylog::CopyArg for Status {}

/// A customer, borrowed: not `'static`, so not a `CopyArg`; its `Display` runs on the calling
/// thread, as it does for any type of a user's that borrows or owns heap data.
pub struct Customer<'a>(&'a str);

impl fmt::Display for Customer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "customer:{}", self.0)
    }
}

const CUSTOMERS: [&str; 3] = ["ann", "bob", "chandra"];

/// The user-type mix's record number `i`: 3 in 4 an order's `Display` and `Debug` values
/// (`CopyArg`), 1 in 4 with a borrowed customer (its `Display` on the calling thread).
#[inline]
pub fn log_user_types(i: u64) {
    let status = match i % 3 {
        0 => Status::Placed,
        1 => Status::Paid,
        _ => Status::Shipped {
            parcels: (i % 5) as u8,
        },
    };
    if i % 4 == 3 {
        let customer = Customer(CUSTOMERS[i as usize % CUSTOMERS.len()]);
        tachylog::info!("request order {} placed by {}", OrderId(i), customer);
    } else {
        tachylog::info!("request order {} is {:?}", OrderId(i), status);
    }
}

/// Record 1's message, which the run must leave exactly once.
pub fn probe(mix: Mix) -> String {
    match mix {
        Mix::Web => format!("request 1 took {:.3} ms: {}", 0.0173, PATHS[1]),
        Mix::UserTypes => format!("request order {} is {:?}", OrderId(1), Status::Paid),
    }
}

/// One line for the report header.
pub fn describe(name: &str, scale: Scale) -> String {
    let records = group_digits(super::seed::throughput_lines(scale));
    match name {
        "cat_mix_binary" => format!(
            "cat_mix_binary: the binary log of `throughput_mix_binary` ({records} records), \
             written untimed, then read back as `cat_binary` reads; tachylog only"
        ),
        "throughput_user" | "throughput_user_binary" => format!(
            "{name}: {records} records from one thread of a user's own types (3 in 4 \
             info!(\"request order {{}} is {{:?}}\", OrderId, Status), both `CopyArg`, written \
             by their impls on the back end; 1 in 4 info!(\"request order {{}} placed by {{}}\", \
             OrderId, Customer<'_>), the borrowed customer written on the calling thread) into \
             {}; tachylog only",
            if name.ends_with("binary") {
                "a binary log"
            } else {
                "text lines"
            }
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
