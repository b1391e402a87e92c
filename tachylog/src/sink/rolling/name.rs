//! File-name patterns: `logs/%Y/%m/%d/app.log`, `app.%Y%m%d-%H.log`.
//!
//! A pattern is a path with strftime-style fields. Formatting it at a record's time gives the
//! record's file; the smallest field gives the rotation period. A numeric index for size
//! rotation goes before the last extension of the file name (`app.20261121.log`,
//! `app.20261121.1.log`, `app.20261121.2.log`, …), and compressed files add `.gz` or `.zst`.
//! The same pattern, read backwards, recognises our own files for retention, so pruning never
//! touches a file the pattern could not have produced.

use crate::zone::{Civil, TimeZone};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A field of a file-name pattern, in ascending order of period length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Field {
    /// `%S`
    Second,
    /// `%M`
    Minute,
    /// `%H`
    Hour,
    /// `%d`
    Day,
    /// `%j`: day of the year, 001–366.
    DayOfYear,
    /// `%m`
    Month,
    /// `%y`: two-digit year.
    Year2,
    /// `%Y`
    Year,
}

impl Field {
    fn width(self) -> usize {
        match self {
            Field::Year => 4,
            Field::DayOfYear => 3,
            _ => 2,
        }
    }

    fn value(self, dt: Civil) -> i64 {
        match self {
            Field::Second => dt.second.into(),
            Field::Minute => dt.minute.into(),
            Field::Hour => dt.hour.into(),
            Field::Day => dt.day.into(),
            Field::DayOfYear => dt.day_of_year().into(),
            Field::Month => dt.month.into(),
            Field::Year2 => dt.year.rem_euclid(100),
            Field::Year => dt.year,
        }
    }
}

/// How long one file of a pattern covers: the span of its smallest field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    /// `%S`: a file per second (mostly for tests and soak runs).
    Second,
    /// `%M`: a file per minute.
    Minute,
    /// `%H`: a file per hour.
    Hour,
    /// `%d` or `%j`: a file per day.
    Day,
    /// `%m`: a file per month.
    Month,
    /// `%Y` or `%y`: a file per year.
    Year,
    /// No time field: one file name, rotated by size only.
    Never,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Literal(String),
    Field(Field),
}

pub use crate::error::FileNamePatternError;

/// A parsed file-name pattern.
#[derive(Clone, Debug)]
pub(crate) struct NamePattern {
    source: String,
    /// One entry per path component.
    components: Vec<Vec<Token>>,
    /// Where an absolute pattern starts, as written: `/` on Unix; on Windows also a drive
    /// (`C:\`, `C:/`) or a share (`\\server\share\`). Empty for a relative pattern.
    root: String,
    period: Period,
}

/// The file of one period: its name without index, and the instants it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeriodFile {
    /// The pattern formatted at the period's time: the path of index 0.
    pub(crate) base: PathBuf,
    /// First instant covered, nanoseconds since the epoch (inclusive).
    pub(crate) start: i64,
    /// First instant not covered (exclusive); `i64::MAX` for a pattern with no time field.
    pub(crate) end: i64,
}

impl PeriodFile {
    pub(crate) fn contains(&self, unix_nanos: i64) -> bool {
        (self.start..self.end).contains(&unix_nanos)
    }
}

/// What a file name found on disk is, relative to the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Recognised {
    /// The size-rotation index (0 for the base name).
    pub(crate) index: u32,
    /// Compressed (`.gz`, `.zst`).
    pub(crate) compressed: bool,
    /// A compression still being written (`.gz.tmp`, `.zst.tmp`), or abandoned by a crash.
    pub(crate) temporary: bool,
}

/// Compression suffixes recognised as ours.
pub(crate) const COMPRESSED_SUFFIXES: [&str; 2] = [".gz", ".zst"];
/// Suffix of a compression in progress.
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// The start of `pattern` that names where an absolute path begins (`NamePattern::root`), or
/// `""`. Read with `Path`'s own parser, so it is what the platform takes as a root.
fn root_of(pattern: &str) -> &str {
    use std::path::Component;
    let mut len = 0;
    for component in std::path::Path::new(pattern).components() {
        match component {
            Component::Prefix(prefix) => len += prefix.as_os_str().len(),
            // One separator, however many follow (they are dropped as empty components).
            Component::RootDir => len += 1,
            _ => break,
        }
    }
    &pattern[..len]
}

impl NamePattern {
    /// [`NamePattern::parse`], with a relative pattern placed under the working directory of
    /// this call: the sink makes names from it for as long as it runs, and a name relative to
    /// a later working directory (a daemon's `chdir("/")`) would move the log there. A working
    /// directory that cannot be read or is not UTF-8 leaves the pattern relative.
    pub(crate) fn parse_anchored(pattern: &str) -> Result<NamePattern, FileNamePatternError> {
        NamePattern::parse_under(pattern, std::env::current_dir().ok().as_deref())
    }

    fn parse_under(pattern: &str, dir: Option<&Path>) -> Result<NamePattern, FileNamePatternError> {
        let parsed = NamePattern::parse(pattern)?;
        let Some(dir) = dir
            .and_then(Path::to_str)
            .filter(|_| parsed.root.is_empty())
        else {
            return Ok(parsed);
        };
        // The directory's own `%` are literal characters, not fields.
        let mut anchored = dir.replace('%', "%%");
        if !anchored.ends_with(std::path::is_separator) {
            anchored.push(std::path::MAIN_SEPARATOR);
        }
        anchored.push_str(pattern);
        NamePattern::parse(&anchored).map_err(|e| FileNamePatternError {
            pattern: pattern.to_string(),
            reason: e.reason,
        })
    }

    pub(crate) fn parse(pattern: &str) -> Result<NamePattern, FileNamePatternError> {
        let fail = |reason: String| FileNamePatternError {
            pattern: pattern.to_string(),
            reason,
        };
        if pattern.is_empty() {
            return Err(fail("it is empty".into()));
        }
        if pattern.ends_with(std::path::is_separator) {
            return Err(fail("it names a directory; end it with a file name".into()));
        }
        let root = root_of(pattern);
        let mut components = Vec::new();
        let below_root = pattern[root.len()..].split(std::path::is_separator);
        for component in below_root.filter(|c| !c.is_empty() && *c != ".") {
            let tokens = parse_component(component).map_err(fail)?;
            if tokens == [Token::Literal("..".into())]
                && components.iter().any(|c: &Vec<Token>| has_field(c))
            {
                return Err(fail("`..` after a time field is not supported".into()));
            }
            components.push(tokens);
        }
        let period = components
            .iter()
            .flatten()
            .filter_map(|t| match t {
                Token::Field(f) => Some(*f),
                Token::Literal(_) => None,
            })
            .min()
            .map_or(Period::Never, |f| match f {
                Field::Second => Period::Second,
                Field::Minute => Period::Minute,
                Field::Hour => Period::Hour,
                Field::Day | Field::DayOfYear => Period::Day,
                Field::Month => Period::Month,
                Field::Year | Field::Year2 => Period::Year,
            });
        // `.` components are dropped above, so `.` or `./.` leave none.
        let names_a_file = components.last().is_some_and(
            |last| !matches!(last.as_slice(), [Token::Literal(l)] if l == "." || l == ".."),
        );
        if !names_a_file {
            return Err(fail("it must end with a file name".into()));
        }
        Ok(NamePattern {
            source: pattern.to_string(),
            components,
            root: root.to_string(),
            period,
        })
    }

    pub(crate) fn period(&self) -> Period {
        self.period
    }

    /// The file for the record stamped `unix_nanos` in `zone`, with the instants it covers.
    pub(crate) fn period_file(&self, unix_nanos: i64, zone: &TimeZone) -> PeriodFile {
        const NANOS: i64 = 1_000_000_000;
        let second = unix_nanos.div_euclid(NANOS);
        let civil = zone.to_civil(second);
        let base = self.format(civil);
        if self.period == Period::Never {
            return PeriodFile {
                base,
                start: i64::MIN,
                end: i64::MAX,
            };
        }
        let (civil_start, civil_end) = self.civil_bounds(civil);
        // A change of UTC offset (DST) can change the name in the middle of a civil period (a
        // repeated hour) or move its edges, so the covered range also stops at transitions.
        let nanos = |seconds: i64| seconds.saturating_mul(NANOS);
        let previous_transition = zone.transition_at_or_before(second).map_or(i64::MIN, nanos);
        let next_transition = zone.transition_after(second).map_or(i64::MAX, nanos);
        let start = nanos(zone.to_instant(civil_start))
            .max(previous_transition)
            .min(unix_nanos);
        let mut end = nanos(zone.to_instant(civil_end)).min(next_transition);
        if end <= unix_nanos {
            // Only reachable with pathological zone data; never let the range be empty.
            end = unix_nanos.saturating_add(NANOS);
        }
        PeriodFile { base, start, end }
    }

    /// The civil start of `civil`'s period and of the next one.
    fn civil_bounds(&self, civil: Civil) -> (Civil, Civil) {
        let after = |start: Civil, seconds: i64| {
            (
                start,
                Civil::from_local_seconds(start.to_local_seconds() + seconds),
            )
        };
        let first_of = |year: i64, month: u8| Civil {
            year,
            month,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
        };
        match self.period {
            Period::Second => after(civil, 1),
            Period::Minute => after(Civil { second: 0, ..civil }, 60),
            Period::Hour => after(
                Civil {
                    minute: 0,
                    second: 0,
                    ..civil
                },
                3600,
            ),
            Period::Day => after(civil.start_of_day(), 86_400),
            Period::Month => {
                let next = if civil.month == 12 {
                    first_of(civil.year + 1, 1)
                } else {
                    first_of(civil.year, civil.month + 1)
                };
                (first_of(civil.year, civil.month), next)
            }
            Period::Year | Period::Never => (first_of(civil.year, 1), first_of(civil.year + 1, 1)),
        }
    }

    fn format(&self, civil: Civil) -> PathBuf {
        let mut out = String::with_capacity(self.source.len() + 8);
        out.push_str(&self.root);
        for (i, component) in self.components.iter().enumerate() {
            if i > 0 {
                out.push(std::path::MAIN_SEPARATOR);
            }
            for token in component {
                match token {
                    Token::Literal(text) => out.push_str(text),
                    Token::Field(field) => {
                        let _ =
                            write!(out, "{:0width$}", field.value(civil), width = field.width());
                    }
                }
            }
        }
        PathBuf::from(out)
    }

    /// The directory where matching files start: the pattern's leading components that hold no
    /// field.
    pub(crate) fn fixed_root(&self) -> PathBuf {
        let fixed = self
            .components
            .iter()
            .take(self.components.len() - 1)
            .take_while(|c| !has_field(c));
        let mut root = if self.root.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(&self.root)
        };
        for component in fixed {
            root.push(literal_text(component));
        }
        root
    }

    /// The components below [`NamePattern::fixed_root`] that vary, the last being the file name.
    pub(crate) fn varying_depth(&self) -> usize {
        let fixed = self
            .components
            .iter()
            .take(self.components.len() - 1)
            .take_while(|c| !has_field(c))
            .count();
        self.components.len() - fixed
    }

    /// Whether `name` could be the directory at `depth` below the fixed root (0 = first).
    pub(crate) fn matches_directory(&self, depth: usize, name: &str) -> bool {
        let offset = self.components.len() - self.varying_depth();
        let Some(tokens) = self.components.get(offset + depth) else {
            return false;
        };
        offset + depth + 1 < self.components.len() && match_tokens(tokens, name) == Some("")
    }

    /// Recognises a file name produced by this pattern (any time, any index, compressed or
    /// not).
    pub(crate) fn recognise_file(&self, name: &str) -> Option<Recognised> {
        let tokens = self.components.last()?;
        let (stem_tokens, extension) = split_extension(tokens);
        let rest = match_tokens(&stem_tokens, name)?;
        let (index, rest) = match rest.strip_prefix('.') {
            Some(after_dot) => {
                let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
                match after_dot[..digits].parse::<u32>() {
                    Ok(n) if digits > 0 && after_dot[digits..].starts_with(&extension) && n > 0 => {
                        (n, &after_dot[digits..])
                    }
                    _ => (0, rest),
                }
            }
            None => (0, rest),
        };
        let rest = rest.strip_prefix(extension.as_str())?;
        let (temporary, rest) = match rest.strip_suffix(TEMP_SUFFIX) {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let compressed = match rest {
            "" => false,
            r if COMPRESSED_SUFFIXES.contains(&r) => true,
            _ => return None,
        };
        if temporary && !compressed {
            return None;
        }
        Some(Recognised {
            index,
            compressed,
            temporary,
        })
    }

    /// The path of size-rotation `index` of the period file `base`.
    pub(crate) fn indexed(&self, base: &Path, index: u32) -> PathBuf {
        if index == 0 {
            return base.to_path_buf();
        }
        let name = base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tokens = self.components.last().map(Vec::as_slice).unwrap_or(&[]);
        let extension = split_extension(tokens).1;
        let stem = name.strip_suffix(extension.as_str()).unwrap_or(&name);
        base.with_file_name(format!("{stem}.{index}{extension}"))
    }
}

/// Splits a file-name component into the tokens before its extension and the extension (the
/// literal text from the last `.` of the trailing literal, if that literal holds a dot).
fn split_extension(tokens: &[Token]) -> (Vec<Token>, String) {
    let mut stem = tokens.to_vec();
    if let Some(Token::Literal(text)) = stem.last_mut() {
        if let Some(dot) = text.rfind('.') {
            let extension = text[dot..].to_string();
            text.truncate(dot);
            if text.is_empty() {
                stem.pop();
            }
            return (stem, extension);
        }
    }
    (stem, String::new())
}

/// Matches `tokens` against the start of `text`; returns the unmatched rest.
fn match_tokens<'t>(tokens: &[Token], mut text: &'t str) -> Option<&'t str> {
    for token in tokens {
        match token {
            Token::Literal(lit) => text = text.strip_prefix(lit.as_str())?,
            Token::Field(field) => {
                let width = field.width();
                let digits = text.get(..width)?;
                if !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                text = &text[width..];
            }
        }
    }
    Some(text)
}

fn has_field(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| matches!(t, Token::Field(_)))
}

fn literal_text(tokens: &[Token]) -> String {
    tokens
        .iter()
        .map(|t| match t {
            Token::Literal(text) => text.as_str(),
            Token::Field(_) => "",
        })
        .collect()
}

fn parse_component(component: &str) -> Result<Vec<Token>, String> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut literal = String::new();
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        let fields: &[Field] = match chars.next() {
            Some('%') => {
                literal.push('%');
                continue;
            }
            Some('Y') => &[Field::Year],
            Some('y') => &[Field::Year2],
            Some('m') => &[Field::Month],
            Some('d') => &[Field::Day],
            Some('j') => &[Field::DayOfYear],
            Some('H') => &[Field::Hour],
            Some('M') => &[Field::Minute],
            Some('S') => &[Field::Second],
            Some('F') => &[Field::Year, Field::Month, Field::Day],
            Some(other) => {
                return Err(format!(
                    "unsupported field %{other}; use %Y %y %m %d %j %H %M %S %F or %%"
                ))
            }
            None => return Err("it ends with a lone %; write %% for a percent sign".into()),
        };
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                literal.push('-'); // %F is %Y-%m-%d
            }
            if !literal.is_empty() {
                tokens.push(Token::Literal(std::mem::take(&mut literal)));
            }
            tokens.push(Token::Field(*field));
        }
    }
    if !literal.is_empty() {
        tokens.push(Token::Literal(literal));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests;
