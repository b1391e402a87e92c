//! Which records `cat` prints: `--level`, `--target`, `--since`, `--until` on the record,
//! `--grep` on the printed line.

use tachylog::read::Record;
use tachylog::Level;

/// The record filters of `cat`; every one given must hold.
#[derive(Clone, Default)]
pub(crate) struct Filter {
    /// The most verbose level printed.
    pub(crate) level: Option<Level>,
    /// A target prefix on `::` boundaries (`app` takes `app` and `app::net`, not `apple`).
    pub(crate) target: Option<String>,
    /// Nanoseconds since the Unix epoch, inclusive.
    pub(crate) since: Option<i64>,
    /// Nanoseconds since the Unix epoch, exclusive.
    pub(crate) until: Option<i64>,
    /// Text the printed line must contain.
    pub(crate) grep: Option<String>,
}

impl Filter {
    /// Whether `record` passes the filters on the record itself.
    pub(crate) fn takes(&self, record: &Record) -> bool {
        if self.level.is_some_and(|level| record.level() > level) {
            return false;
        }
        if let Some(prefix) = &self.target {
            let target = record.target();
            let under = target
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"));
            if !under {
                return false;
            }
        }
        let time = record.unix_nanos();
        !(self.since.is_some_and(|since| time < since)
            || self.until.is_some_and(|until| time >= until))
    }

    /// Whether the printed `line` passes `--grep`.
    pub(crate) fn takes_line(&self, line: &[u8]) -> bool {
        match &self.grep {
            None => true,
            Some(needle) => line
                .windows(needle.len().max(1))
                .any(|window| window == needle.as_bytes()),
        }
    }
}
