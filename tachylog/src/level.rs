//! Severity levels and the global level check that every log call starts with.
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports nothing from the crate.

use std::fmt;
use std::str::FromStr;

/// The severity of a record. Ordered from the most severe (`Error`) to the most verbose
/// (`Trace`): `Level::Error < Level::Trace`.
///
/// ```
/// use tachylog::Level;
/// assert!(Level::Error < Level::Warn);
/// assert_eq!("debug".parse::<Level>().unwrap(), Level::Debug);
/// assert_eq!(Level::Info.as_str(), "INFO");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Something failed.
    Error = 1,
    /// Something unexpected that the program handled.
    Warn = 2,
    /// Normal operation worth recording.
    Info = 3,
    /// Detail for developers.
    Debug = 4,
    /// Very fine detail.
    Trace = 5,
}

impl Level {
    /// The upper-case name, as written in log lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        }
    }

    /// The name padded to five characters, for aligned columns.
    pub(crate) fn padded(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN ",
            Level::Info => "INFO ",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        }
    }

    pub(crate) fn from_u8(value: u8) -> Option<Level> {
        Some(match value {
            1 => Level::Error,
            2 => Level::Warn,
            3 => Level::Info,
            4 => Level::Debug,
            5 => Level::Trace,
            _ => return None,
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The error of parsing a [`Level`] from a string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level {0:?}: expected one of error, warn, info, debug, trace")]
pub struct ParseLevelError(String);

impl FromStr for Level {
    type Err = ParseLevelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "error" => Level::Error,
            "warn" | "warning" => Level::Warn,
            "info" => Level::Info,
            "debug" => Level::Debug,
            "trace" => Level::Trace,
            _ => return Err(ParseLevelError(s.to_string())),
        })
    }
}

impl From<Level> for log::Level {
    fn from(level: Level) -> Self {
        match level {
            Level::Error => log::Level::Error,
            Level::Warn => log::Level::Warn,
            Level::Info => log::Level::Info,
            Level::Debug => log::Level::Debug,
            Level::Trace => log::Level::Trace,
        }
    }
}

impl From<log::Level> for Level {
    fn from(level: log::Level) -> Self {
        match level {
            log::Level::Error => Level::Error,
            log::Level::Warn => Level::Warn,
            log::Level::Info => Level::Info,
            log::Level::Debug => Level::Debug,
            log::Level::Trace => Level::Trace,
        }
    }
}
