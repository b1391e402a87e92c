//! `RUST_LOG`-style directives: `info,my_crate::net=debug,hyper=warn`.
//!
//! Parsed once (at `init` or `set_filter`), then resolved once per call site; nothing here runs
//! on the hot path.

use crate::Level;
use std::fmt;

/// A parsed set of directives: a default level and per-target levels.
///
/// A directive is `level`, `target=level` or `target` (everything from that target); `off`
/// disables. A target matches itself and its submodules (`my_crate::net` matches
/// `my_crate::net::tcp`, not `my_crate::network`); the longest matching target wins, and the
/// last of two equal directives. Without a bare level the default is `error`: other targets'
/// errors still pass (env_logger would pass nothing of them; write `off,my_crate=debug` for
/// that). The README lists every difference from env_logger and tracing-subscriber.
///
/// ```
/// use tachylog::{Filter, Level};
/// let filter: Filter = "info,my_crate::net=debug,hyper=off".parse().unwrap();
/// assert_eq!(filter.level_for("my_crate::net::tcp"), Some(Level::Debug));
/// assert_eq!(filter.level_for("my_crate::db"), Some(Level::Info));
/// assert_eq!(filter.level_for("hyper::proto"), None);
/// assert_eq!(filter.max_level(), Some(Level::Debug));
///
/// let only_mine: Filter = "my_crate=debug".parse().unwrap();
/// assert_eq!(only_mine.level_for("hyper"), Some(Level::Error));
/// let silent: Filter = "off,my_crate=debug".parse().unwrap();
/// assert_eq!(silent.level_for("hyper"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The level for targets no directive names; `None` is off.
    default: Option<Level>,
    /// `(target, level)`, longest target first.
    targets: Vec<(String, Option<Level>)>,
}

pub use crate::error::FilterError;

impl Filter {
    /// A filter passing `level` and everything more severe, for every target.
    pub fn new(level: Level) -> Filter {
        Filter {
            default: Some(level),
            targets: Vec::new(),
        }
    }

    /// Raises the default level to at least `level` (the backtrace ring's kept level: those
    /// records must reach the back end). Per-target directives stay as written.
    pub(crate) fn widen_default(&mut self, level: Level) {
        self.default = Some(self.default.map_or(level, |current| current.max(level)));
    }

    /// Parses `spec`, skipping (and returning) the directives that do not parse, the way a
    /// program should treat an environment variable: a typo must not stop it from starting.
    ///
    /// ```
    /// let (filter, errors) = tachylog::Filter::parse_lenient("warn,db=verbose,net=debug");
    /// assert_eq!(filter.level_for("net"), Some(tachylog::Level::Debug));
    /// assert_eq!(errors.len(), 1);
    /// assert!(errors[0].to_string().contains("db=verbose"));
    /// ```
    pub fn parse_lenient(spec: &str) -> (Filter, Vec<FilterError>) {
        let mut filter = Filter {
            default: None,
            targets: Vec::new(),
        };
        let mut errors = Vec::new();
        let mut saw_default = false;
        for directive in spec.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            match parse_directive(directive) {
                Ok((None, level)) => {
                    filter.default = level;
                    saw_default = true;
                }
                Ok((Some(target), level)) => {
                    filter.targets.retain(|(t, _)| *t != target);
                    filter.targets.push((target, level));
                }
                Err(reason) => errors.push(FilterError {
                    directive: directive.to_string(),
                    reason,
                }),
            }
        }
        if !saw_default {
            // Only per-target directives (`my_app=debug`): every other target still passes
            // its errors, where env_logger and tracing-subscriber pass nothing else. A logger
            // that promises never to lose a line silently must not hide a dependency's errors
            // because the user asked for more of their own crate; `off,my_app=debug` is there
            // for whoever wants the silence.
            filter.default = Some(Level::Error);
        }
        // Longest first, so the first match is the most specific; then by name, so that the
        // order the directives were written in does not make equal filters differ (two
        // targets of one length never match the same name).
        filter
            .targets
            .sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        (filter, errors)
    }

    /// [`Filter::parse_lenient`] of an environment variable's value, which need not be UTF-8:
    /// a directive that is not is reported and skipped like one that does not parse, and the
    /// others still apply.
    pub(crate) fn parse_env(value: &std::ffi::OsStr) -> (Filter, Vec<FilterError>) {
        let mut valid = String::new();
        let mut errors = Vec::new();
        // `,` is ASCII, so it never splits a character of UTF-8 (nor of Windows' WTF-8).
        for directive in value.as_encoded_bytes().split(|&byte| byte == b',') {
            match std::str::from_utf8(directive) {
                Ok(directive) => {
                    valid.push_str(directive);
                    valid.push(',');
                }
                Err(_) => errors.push(FilterError {
                    directive: String::from_utf8_lossy(directive).trim().to_string(),
                    reason: "not valid UTF-8".into(),
                }),
            }
        }
        let (filter, more) = Filter::parse_lenient(&valid);
        errors.extend(more);
        (filter, errors)
    }

    /// The most verbose level passed for `target` (a module path or a `log` target); `None`
    /// when the target is off.
    pub fn level_for(&self, target: &str) -> Option<Level> {
        self.targets
            .iter()
            .find(|(t, _)| matches_target(t, target))
            .map_or(self.default, |(_, level)| *level)
    }

    /// Whether some directive names a target (otherwise one level applies to all).
    pub(crate) fn has_targets(&self) -> bool {
        !self.targets.is_empty()
    }

    /// The most verbose level passed for any target.
    pub fn max_level(&self) -> Option<Level> {
        self.targets
            .iter()
            .map(|(_, level)| *level)
            .chain([self.default])
            .max()
            .flatten()
    }
}

impl std::str::FromStr for Filter {
    type Err = FilterError;

    /// Parses `spec` strictly: the first bad directive is an error.
    fn from_str(spec: &str) -> Result<Filter, FilterError> {
        let (filter, mut errors) = Filter::parse_lenient(spec);
        match errors.is_empty() {
            true => Ok(filter),
            false => Err(errors.swap_remove(0)),
        }
    }
}

impl fmt::Display for Filter {
    /// Writes the filter back as directives.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |level: Option<Level>| {
            level.map_or("off".to_string(), |l| l.as_str().to_ascii_lowercase())
        };
        f.write_str(&name(self.default))?;
        for (target, level) in self.targets.iter().rev() {
            write!(f, ",{target}={}", name(*level))?;
        }
        Ok(())
    }
}

/// `target` matches `directive` and its submodules.
fn matches_target(directive: &str, target: &str) -> bool {
    match target.strip_prefix(directive) {
        Some(rest) => rest.is_empty() || rest.starts_with("::"),
        None => false,
    }
}

/// One directive: `(target, level)`, target `None` for the default.
fn parse_directive(directive: &str) -> Result<(Option<String>, Option<Level>), String> {
    if directive.contains('/') {
        return Err("message filters (`/regex`) are not supported".into());
    }
    let parse_level = |text: &str| -> Result<Option<Level>, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(None),
            other => other.parse::<Level>().map(Some).map_err(|e| e.to_string()),
        }
    };
    match directive.split_once('=') {
        Some((target, level)) => {
            let target = target.trim();
            if target.is_empty() {
                return Err("the target before `=` is empty".into());
            }
            check_target(target)?;
            Ok((Some(target.to_string()), parse_level(level)?))
        }
        None => match parse_level(directive) {
            Ok(level) => Ok((None, level)),
            // Not a level: a bare target, which enables everything from it.
            Err(_) => {
                check_target(directive)?;
                Ok((Some(directive.to_string()), Some(Level::Trace)))
            }
        },
    }
}

fn check_target(target: &str) -> Result<(), String> {
    if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a target cannot contain spaces or control characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(spec: &str) -> Filter {
        spec.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_longest_matching_target_wins() {
        let f = filter("warn,a=debug,a::b=error,a::b::c=trace");
        assert_eq!(f.level_for("a"), Some(Level::Debug));
        assert_eq!(f.level_for("a::x"), Some(Level::Debug));
        assert_eq!(f.level_for("a::b"), Some(Level::Error));
        assert_eq!(f.level_for("a::b::c::d"), Some(Level::Trace));
        assert_eq!(
            f.level_for("ab"),
            Some(Level::Warn),
            "a prefix that is not a module"
        );
        assert_eq!(f.level_for("other"), Some(Level::Warn));
        assert_eq!(f.max_level(), Some(Level::Trace));
    }

    #[test]
    fn env_logger_conventions() {
        assert_eq!(
            filter("").level_for("x"),
            Some(Level::Error),
            "empty: errors only"
        );
        assert_eq!(
            filter("net").level_for("net::tcp"),
            Some(Level::Trace),
            "bare target"
        );
        assert_eq!(
            filter("net").level_for("db"),
            Some(Level::Error),
            "other targets keep their errors (unlike env_logger)"
        );
        assert_eq!(filter("off").max_level(), None);
        assert_eq!(
            filter("INFO, net = Debug ,").level_for("net"),
            Some(Level::Debug)
        );
        assert_eq!(
            filter("net=info,net=warn").level_for("net"),
            Some(Level::Warn),
            "last wins"
        );
        assert_eq!(
            filter("debug,info").level_for("x"),
            Some(Level::Info),
            "last default wins"
        );
    }

    #[test]
    fn bad_directives_are_named() {
        for (spec, reason) in [
            ("info,net=loud", "unknown log level"),
            ("=debug", "empty"),
            ("info/foo", "not supported"),
            ("my crate=info", "spaces"),
        ] {
            let error = spec.parse::<Filter>().unwrap_err().to_string();
            assert!(error.contains(reason), "{spec}: {error}");
        }
        let (lenient, errors) = Filter::parse_lenient("debug,x=loud,y=warn");
        assert_eq!(errors.len(), 1);
        assert_eq!(lenient.level_for("y"), Some(Level::Warn));
        assert_eq!(
            lenient.level_for("x"),
            Some(Level::Debug),
            "the bad directive is skipped"
        );
    }

    #[test]
    fn display_round_trips() {
        let f = filter("info,a=debug,a::b=off");
        assert_eq!(f.to_string().parse::<Filter>().unwrap(), f);
        // Targets of one length, which `Display` writes in the reverse of the stored order
        // (found by fuzzing).
        let f = filter("urace,tokio=off,my_app::http=debug");
        assert_eq!(f.to_string().parse::<Filter>().unwrap(), f);
    }

    #[test]
    fn the_order_of_directives_does_not_matter() {
        assert_eq!(filter("warn,a=debug,b=off"), filter("b=off,a=debug,warn"));
    }
}
