//! Parsing of `std::fmt` format strings, as far as tachylog needs: where the placeholders are,
//! which argument each one formats, with which trait, and which arguments give widths and
//! precisions. Full validation is left to `format_args!`, which the generated code also runs on
//! the original string, so its error messages are the ones users know.

/// How a placeholder or count names its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgRef {
    /// `{}`: the next positional argument.
    Next,
    /// `{2}` or `2$`.
    Index(usize),
    /// `{name}` or `name$`.
    Name(String),
}

/// A width or precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Count {
    /// A number written in the format string; kept verbatim.
    Literal(String),
    /// Taken from an argument (`N$`, `name$`, or `.*`, which is the next positional argument).
    Arg(ArgRef),
}

/// The formatting trait a placeholder asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trait {
    Display,
    Debug,
    LowerHex,
    UpperHex,
    Octal,
    Binary,
    LowerExp,
    UpperExp,
    Pointer,
}

impl Trait {
    pub fn path(self) -> &'static str {
        match self {
            Trait::Display => "Display",
            Trait::Debug => "Debug",
            Trait::LowerHex => "LowerHex",
            Trait::UpperHex => "UpperHex",
            Trait::Octal => "Octal",
            Trait::Binary => "Binary",
            Trait::LowerExp => "LowerExp",
            Trait::UpperExp => "UpperExp",
            Trait::Pointer => "Pointer",
        }
    }
}

/// One `{...}` of the format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    pub arg: ArgRef,
    /// Fill, alignment, sign, `#` and `0` flags, verbatim.
    pub flags: String,
    pub width: Option<Count>,
    pub precision: Option<Count>,
    /// The type part verbatim (`""`, `"?"`, `"x?"`, `"x"`, ...).
    pub ty: String,
    pub trait_: Trait,
}

/// A piece of the format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text with `{{` and `}}` already unescaped.
    Text(String),
    Placeholder(Placeholder),
}

/// Splits `s` into text and placeholders. Errors describe the first malformed placeholder.
pub fn parse(s: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if matches!(chars.peek(), Some((_, '{'))) => {
                chars.next();
                text.push('{');
            }
            '}' if matches!(chars.peek(), Some((_, '}'))) => {
                chars.next();
                text.push('}');
            }
            '}' => return Err(format!("unmatched `}}` at byte {i} of the format string")),
            '{' => {
                let start = i + 1;
                let mut end = None;
                for (j, c) in chars.by_ref() {
                    if c == '}' {
                        end = Some(j);
                        break;
                    }
                }
                let end = end.ok_or("unterminated `{` in the format string")?;
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Placeholder(parse_placeholder(&s[start..end])?));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn parse_placeholder(inner: &str) -> Result<Placeholder, String> {
    let (arg, spec) = match inner.find(':') {
        Some(colon) => (&inner[..colon], &inner[colon + 1..]),
        None => (inner, ""),
    };
    let arg = parse_arg_ref(arg.trim())?;
    let mut p = Placeholder {
        arg,
        flags: String::new(),
        width: None,
        precision: None,
        ty: String::new(),
        trait_: Trait::Display,
    };
    let spec: Vec<char> = spec.chars().collect();
    let mut i = 0;
    // [[fill]align]
    let is_align = |c: char| matches!(c, '<' | '^' | '>');
    if spec.len() >= 2 && is_align(spec[1]) {
        p.flags.push(spec[0]);
        p.flags.push(spec[1]);
        i = 2;
    } else if !spec.is_empty() && is_align(spec[0]) {
        p.flags.push(spec[0]);
        i = 1;
    }
    // [sign]['#']['0']
    if i < spec.len() && matches!(spec[i], '+' | '-') {
        p.flags.push(spec[i]);
        i += 1;
    }
    if i < spec.len() && spec[i] == '#' {
        p.flags.push('#');
        i += 1;
    }
    if i < spec.len() && spec[i] == '0' && spec.get(i + 1) != Some(&'$') {
        p.flags.push('0');
        i += 1;
    }
    // [width]
    if let Some((count, next)) = parse_count(&spec, i) {
        p.width = Some(count);
        i = next;
    }
    // ['.' precision]
    if i < spec.len() && spec[i] == '.' {
        i += 1;
        if spec.get(i) == Some(&'*') {
            p.precision = Some(Count::Arg(ArgRef::Next));
            i += 1;
        } else if let Some((count, next)) = parse_count(&spec, i) {
            p.precision = Some(count);
            i = next;
        } else {
            return Err("expected a precision after `.`".into());
        }
    }
    p.ty = spec[i..].iter().collect::<String>().trim().to_string();
    p.trait_ = match p.ty.as_str() {
        "" => Trait::Display,
        "?" | "x?" | "X?" => Trait::Debug,
        "x" => Trait::LowerHex,
        "X" => Trait::UpperHex,
        "o" => Trait::Octal,
        "b" => Trait::Binary,
        "e" => Trait::LowerExp,
        "E" => Trait::UpperExp,
        "p" => Trait::Pointer,
        other => return Err(format!("unknown format trait `{other}`")),
    };
    Ok(p)
}

fn parse_arg_ref(s: &str) -> Result<ArgRef, String> {
    if s.is_empty() {
        Ok(ArgRef::Next)
    } else if s.chars().all(|c| c.is_ascii_digit()) {
        s.parse()
            .map(ArgRef::Index)
            .map_err(|_| format!("invalid argument index `{s}`"))
    } else if is_identifier(s) {
        Ok(ArgRef::Name(s.to_string()))
    } else {
        Err(format!("invalid argument name `{s}`"))
    }
}

/// Parses `integer`, `integer$` or `identifier$` at `spec[i..]`. An identifier without `$` is
/// not a count (it is the type, e.g. `x`), so `None` is returned for it.
fn parse_count(spec: &[char], i: usize) -> Option<(Count, usize)> {
    let mut j = i;
    while j < spec.len() && (spec[j].is_alphanumeric() || spec[j] == '_') {
        j += 1;
    }
    if j == i {
        return None;
    }
    let word: String = spec[i..j].iter().collect();
    if spec.get(j) == Some(&'$') {
        let arg = if word.chars().all(|c| c.is_ascii_digit()) {
            ArgRef::Index(word.parse().ok()?)
        } else {
            ArgRef::Name(word)
        };
        return Some((Count::Arg(arg), j + 1));
    }
    if word.chars().all(|c| c.is_ascii_digit()) {
        return Some((Count::Literal(word), j));
    }
    // A leading number followed by letters (`10x`): the number is the width, the rest the type.
    let digits: String = word.chars().take_while(|c| c.is_ascii_digit()).collect();
    if !digits.is_empty() {
        let len = digits.chars().count();
        return Some((Count::Literal(digits), i + len));
    }
    None
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only_placeholder(s: &str) -> Placeholder {
        match parse(s).unwrap().as_slice() {
            [Piece::Placeholder(p)] => p.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_and_escapes() {
        assert_eq!(
            parse("a {{b}} c").unwrap(),
            vec![Piece::Text("a {b} c".into())]
        );
    }

    #[test]
    fn positional_named_and_next() {
        let pieces = parse("{} {1} {name}").unwrap();
        let args: Vec<_> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Placeholder(p) => Some(p.arg.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            args,
            vec![ArgRef::Next, ArgRef::Index(1), ArgRef::Name("name".into())]
        );
    }

    #[test]
    fn full_spec() {
        let p = only_placeholder("{x:*^+#012.3$x?}");
        assert_eq!(p.arg, ArgRef::Name("x".into()));
        assert_eq!(p.flags, "*^+#0");
        assert_eq!(p.width, Some(Count::Literal("12".into())));
        assert_eq!(p.precision, Some(Count::Arg(ArgRef::Index(3))));
        assert_eq!(p.ty, "x?");
        assert_eq!(p.trait_, Trait::Debug);
    }

    #[test]
    fn zero_dollar_is_a_width_argument_not_the_zero_flag() {
        let p = only_placeholder("{:0$}");
        assert_eq!(p.flags, "");
        assert_eq!(p.width, Some(Count::Arg(ArgRef::Index(0))));
    }

    #[test]
    fn star_precision_and_named_width() {
        let p = only_placeholder("{:>w$.*}");
        assert_eq!(p.flags, ">");
        assert_eq!(p.width, Some(Count::Arg(ArgRef::Name("w".into()))));
        assert_eq!(p.precision, Some(Count::Arg(ArgRef::Next)));
    }

    #[test]
    fn traits() {
        for (s, t) in [
            ("{:x}", Trait::LowerHex),
            ("{:X}", Trait::UpperHex),
            ("{:o}", Trait::Octal),
            ("{:b}", Trait::Binary),
            ("{:e}", Trait::LowerExp),
            ("{:E}", Trait::UpperExp),
            ("{:p}", Trait::Pointer),
            ("{:#?}", Trait::Debug),
            ("{:08.3}", Trait::Display),
        ] {
            assert_eq!(only_placeholder(s).trait_, t, "{s}");
        }
        assert_eq!(
            only_placeholder("{:10x}").width,
            Some(Count::Literal("10".into()))
        );
    }

    #[test]
    fn malformed() {
        assert!(parse("{").is_err());
        assert!(parse("}").is_err());
        assert!(parse("{:q}").is_err());
        assert!(parse("{a b}").is_err());
    }
}
