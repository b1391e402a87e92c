//! Comments in the library say why, never when: no issue numbers, no dates, no commit hashes in
//! `tachylog/src` or `tachylog-macros/src`. A comment keeps the reason and, where a figure
//! justifies a choice, one figure and the bench that reproduces it; the history of how a figure
//! moved belongs in the commit log and `BENCHMARKS.md`, where it cannot go stale in the code.
//!
//! What is read: the text of every comment (`//`, `///`, `//!` and `/* */`), found by a small
//! lexer that steps over string, raw-string and character literals, so a `//` inside a string
//! is not a comment and code is never checked. What fails, with `file:line`:
//! - `issue 12`, `issues #12`: an issue number;
//! - `#12` after a space or an opening bracket, or at the start of the comment: an issue or
//!   pull-request reference (`PKCS#8` is a name, `{:#010x}` a format spec: neither is preceded
//!   by a space);
//! - `2025-03-14`, a date of this century: when something happened. Exempt, because they are
//!   data the comment explains, not a diary: a date followed by a time of day
//!   (`2026-11-21T16:04:05Z`, `2026-11-21 16:04:05`), which is what a sample line or a
//!   timestamp looks like; and a date on a line, or just above a line of code, holding a Unix
//!   time of nine digits or more (`offset_at(1_795_219_200) // 2026-11-21`), which the date
//!   names. Dates outside 2000-2099 (`1970-01-01`, the epoch; `2100-01-01`, a table's bound)
//!   are calendar facts and pass;
//! - a word of 7 to 40 lowercase hex digits with at least one digit and one letter: a commit
//!   hash. A hex literal is no such word (`0x5bc3b64a` holds an `x`), and test vectors live in
//!   code, which is not read.
//!
//! No file is skipped: none of the sources holds such data in a comment.

use std::path::{Path, PathBuf};

#[test]
fn library_comments_hold_no_issue_numbers_dates_or_commit_hashes() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("tachylog/ sits in the workspace");
    let mut files = Vec::new();
    for dir in [manifest.join("src"), workspace.join("tachylog-macros/src")] {
        collect_rust_files(&dir, &mut files);
    }
    files.sort();
    assert!(
        files.len() > 50,
        "found only {} source files: is the walk looking in the right place?",
        files.len()
    );
    let mut report = String::new();
    for file in &files {
        let source = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let shown = file.strip_prefix(workspace).unwrap_or(file).display();
        // The lexer kept in step with the file: every line that starts as a comment was read
        // as one (a literal it misread would have swallowed them, and their text gone unread).
        let lines = split(&source);
        for (number, text) in source.lines().enumerate() {
            if text.trim_start().starts_with("//") {
                assert!(
                    lines[number].comment.trim_start().starts_with("//"),
                    "{shown}:{}: not read as a comment; the lexer lost its place",
                    number + 1
                );
            }
        }
        for finding in findings(&source) {
            report.push_str(&format!(
                "{shown}:{}: {}: {}\n",
                finding.line, finding.what, finding.text
            ));
        }
    }
    assert!(
        report.is_empty(),
        "comments that say when instead of why (keep the reason and at most one figure with \
         the bench that reproduces it; move the history to the commit message or \
         BENCHMARKS.md):\n{report}"
    );
}

/// The checks themselves: each diary form is caught, each kind of data is spared.
#[test]
fn the_checks_catch_diary_lines_and_spare_data() {
    let flagged = [
        "// Fixed for issue 42: the ring no longer stalls.",
        "// See issues #7 and #8.",
        "/// The drain is faster since #123.",
        "fn f() {} // (#9)",
        "//! Measured 2025-03-14 on the bench VM.",
        "// 1141 instructions per record at 5bc3b64, 1053 at 9e0f1a2.",
        "/* block comment\n   naming issue 3 on its second line */",
        "fn f<'a>(x: &'a str) -> &'a str { x } // issue 5, after lifetimes",
        "let c = '\\''; // issue 6, after an escaped quote",
        "let s = \"a \\\" b\"; // issue 7, after an escaped double quote",
        "let r = r#\"raw \" string\"#; // issue 8, after a raw string",
    ];
    for source in flagged {
        assert!(!findings(source).is_empty(), "not caught: {source:?}");
    }
    let last = findings("/* block comment\n   naming issue 3 on its second line */");
    assert_eq!(
        last[0].line, 2,
        "a block comment's finding is on its own line"
    );

    let spared = [
        "let x = 0x5bc3_b64a; let y = 0x5bc3b64a;",
        "let s = \"issue 42, #12, 2025-03-14, 5bc3b64\";",
        "let s = \"http://example.com/5bc3b64\"; // a URL in a string is no comment",
        "let r = r#\"// issue 42 \"# ;",
        "let c = '#'; let d = '\"'; // plain",
        "/// PKCS#8, PKCS#1 or SEC1 keys.",
        "// `{:#010x}` pads to ten characters.",
        "//! `{\"timestamp\":\"2026-11-21T16:04:05.125049Z\"}`",
        "// 2026-11-21 16:04:05.125049 UTC",
        "/// assert_eq!(z.offset_at(1_795_219_200), 3600); // 2026-11-21: CET",
        "// 2026-11-01, clocks go back at 02:00 EDT.\nlet fall = f(1_793_511_000 * SEC);",
        "/// Days since 1970-01-01; the table covers 1900-01-01 to 2100-01-01.",
        "// U+2028 / U+2029 are E2 80 A8 / E2 80 A9; CPUID leaf 0x8000_0007.",
        "// A deadbeef word, 1234567 and 12345678 are not hashes; 0b1010_0101 is a literal.",
        "/// # Panics",
    ];
    for source in spared {
        let found = findings(source);
        assert!(found.is_empty(), "flagged data: {source:?}: {found:?}");
    }
}

/// Appends every `.rs` file under `dir`.
fn collect_rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// One comment that says when.
#[derive(Debug)]
struct Finding {
    /// 1-based line number.
    line: usize,
    /// Which rule it breaks.
    what: &'static str,
    /// The comment text of that line, trimmed.
    text: String,
}

/// A source line split into the text of its comments and the rest (code, with the contents of
/// string and character literals left out).
#[derive(Default)]
struct Line {
    comment: String,
    code: String,
}

/// Every rule broken by a comment in `source`.
fn findings(source: &str) -> Vec<Finding> {
    let lines = split(source);
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let comment = line.comment.as_str();
        let mut report = |what| {
            found.push(Finding {
                line: index + 1,
                what,
                text: comment.trim().to_owned(),
            })
        };
        if has_issue_word(comment) {
            report("issue number");
        }
        if has_hash_reference(comment) {
            report("`#N` issue or pull-request reference");
        }
        if has_diary_date(comment) && !names_a_unix_time(&lines, index) {
            report("date");
        }
        if has_commit_hash(comment) {
            report("commit hash");
        }
    }
    found
}

/// Lexes `source` just enough to tell comments from code: line, doc and (nested) block
/// comments, string literals with escapes, raw strings (`r"..."`, `r#"..."#`, also with a `b`
/// or `c` prefix), character literals, and lifetimes (a `'` that opens no literal).
fn split(source: &str) -> Vec<Line> {
    enum State {
        Code,
        LineComment,
        BlockComment(usize),
        Str,
        RawStr(usize),
    }
    let chars: Vec<char> = source.chars().collect();
    let mut lines = vec![Line::default()];
    let mut state = State::Code;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            lines.push(Line::default());
            if let State::LineComment = state {
                state = State::Code;
            }
            i += 1;
            continue;
        }
        let line = lines.last_mut().expect("never empty");
        match state {
            State::Code => {
                if c == '/' && next == Some('/') {
                    state = State::LineComment;
                    line.comment.push_str("//");
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    state = State::BlockComment(1);
                    line.comment.push_str("/*");
                    i += 2;
                } else if c == '"' {
                    state = State::Str;
                    line.code.push(c);
                    i += 1;
                } else if c == 'r' && starts_token(&chars, i) {
                    let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        state = State::RawStr(hashes);
                        line.code.push_str("r\"");
                        i += 2 + hashes;
                    } else {
                        line.code.push(c);
                        i += 1;
                    }
                } else if c == '\'' {
                    // A character literal is `'x'` or starts with an escape; anything else
                    // (`'a`, `'static`, a loop label) is a lifetime, and only the quote goes.
                    if next == Some('\\') {
                        // Past the backslash and the character it escapes (maybe a quote).
                        let mut end = i + 3;
                        while end < chars.len() && chars[end] != '\'' && chars[end] != '\n' {
                            end += 1;
                        }
                        i = end + 1;
                    } else if chars.get(i + 2) == Some(&'\'') {
                        i += 3;
                    } else {
                        i += 1;
                    }
                    line.code.push_str("''");
                } else {
                    line.code.push(c);
                    i += 1;
                }
            }
            State::LineComment => {
                line.comment.push(c);
                i += 1;
            }
            State::BlockComment(depth) => {
                if c == '/' && next == Some('*') {
                    state = State::BlockComment(depth + 1);
                    line.comment.push_str("/*");
                    i += 2;
                } else if c == '*' && next == Some('/') {
                    state = if depth == 1 {
                        State::Code
                    } else {
                        State::BlockComment(depth - 1)
                    };
                    line.comment.push_str("*/");
                    i += 2;
                } else {
                    line.comment.push(c);
                    i += 1;
                }
            }
            State::Str => {
                if c == '\\' {
                    // The escaped character may be a newline (a line continuation): leave it
                    // to the loop so the line count stays right.
                    i += if next == Some('\n') { 1 } else { 2 };
                } else {
                    if c == '"' {
                        state = State::Code;
                        line.code.push(c);
                    }
                    i += 1;
                }
            }
            State::RawStr(hashes) => {
                let closes = c == '"'
                    && chars.len() >= i + 1 + hashes
                    && chars[i + 1..i + 1 + hashes].iter().all(|&h| h == '#');
                if closes {
                    state = State::Code;
                    line.code.push('"');
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
            }
        }
    }
    lines
}

/// Whether the `r` at `i` can start a raw string: not inside an identifier, except after the
/// `b` or `c` of a byte or C raw string.
fn starts_token(chars: &[char], i: usize) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    match i.checked_sub(1).map(|p| chars[p]) {
        None => true,
        Some('b' | 'c') => i < 2 || !is_ident(chars[i - 2]),
        Some(before) => !is_ident(before),
    }
}

/// `issue 12`, `Issues #12`.
fn has_issue_word(comment: &str) -> bool {
    let lower = comment.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    lower.match_indices("issue").any(|(at, _)| {
        if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            return false;
        }
        let mut rest = &lower[at + "issue".len()..];
        rest = rest.strip_prefix('s').unwrap_or(rest);
        let spaced = rest.trim_start_matches([' ', '\t']);
        if spaced.len() == rest.len() {
            return false;
        }
        let number = spaced.strip_prefix('#').unwrap_or(spaced);
        number.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `#12` at the start of the comment's words, after a space or an opening bracket.
fn has_hash_reference(comment: &str) -> bool {
    let text = comment.trim_start_matches(['/', '*', '!']);
    let bytes = text.as_bytes();
    text.match_indices('#').any(|(at, _)| {
        let opens = at == 0 || matches!(bytes[at - 1], b' ' | b'\t' | b'(' | b'[');
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let ends = bytes
            .get(at + 1 + digits)
            .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
        opens && digits > 0 && ends
    })
}

/// A `20YY-MM-DD` date not followed by a time of day.
fn has_diary_date(comment: &str) -> bool {
    let b = comment.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let number = |from: usize, len: usize| -> u32 {
        b[from..from + len]
            .iter()
            .fold(0, |n, d| n * 10 + u32::from(d - b'0'))
    };
    (0..b.len().saturating_sub(9)).any(|i| {
        let shape = (i..i + 4).all(digit)
            && b[i + 4] == b'-'
            && (i + 5..i + 7).all(digit)
            && b[i + 7] == b'-'
            && (i + 8..i + 10).all(digit);
        if !shape || (i > 0 && digit(i - 1)) || digit(i + 10) {
            return false;
        }
        let (year, month, day) = (number(i, 4), number(i + 5, 2), number(i + 8, 2));
        let plausible =
            (2000..2100).contains(&year) && (1..=12).contains(&month) && (1..=31).contains(&day);
        let timestamp = (b.get(i + 10) == Some(&b'T') && digit(i + 11))
            || (b.get(i + 10) == Some(&b' ')
                && digit(i + 11)
                && digit(i + 12)
                && b.get(i + 13) == Some(&b':'));
        plausible && !timestamp
    })
}

/// Whether line `index`, or the first line of code after it, holds a number of nine digits or
/// more (a Unix time, `_` separators allowed): the date in that line's comment names it.
fn names_a_unix_time(lines: &[Line], index: usize) -> bool {
    let line = &lines[index];
    if has_long_number(&line.comment) || has_long_number(&line.code) {
        return true;
    }
    lines[index + 1..]
        .iter()
        .find(|l| !l.code.trim().is_empty())
        .is_some_and(|l| has_long_number(&l.code))
}

/// A run of digits and `_` holding nine digits or more.
fn has_long_number(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_digit() || c == '_'))
        .any(|run| run.bytes().filter(u8::is_ascii_digit).count() >= 9)
}

/// A word of 7 to 40 lowercase hex digits with a digit and a letter: a commit hash.
fn has_commit_hash(comment: &str) -> bool {
    comment
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| {
            (7..=40).contains(&word.len())
                && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                && word.bytes().any(|b| b.is_ascii_digit())
                && word.bytes().any(|b| b.is_ascii_lowercase())
        })
}
