//! A placeholder's spec (`>8.3`, `#010x`, `+.*e`, `x?`) interpreted at run time, with the output
//! of `std::format!` for the same value and spec.
//!
//! `core::fmt` takes width and precision at run time but fill, alignment, sign, `#` and `0`
//! only from a literal, which a reader of another build's records does not have. So the value's
//! *core* (sign, `0x` prefix, digits, with the precision) is formatted by `std` with the one
//! literal spec of its (sign, `#`, precision) combination, and the padding is applied here, as
//! `Formatter::pad_integral`, `pad_formatted_parts` and `pad` apply it: the digits are `std`'s,
//! only the padding rule is restated. The property test in `tests.rs` checks the result against
//! `format!` for random numbers and specs.

use crate::codec::plain::{push_fixed, PlainFloat};
use crate::codec::TextBuf;
use crate::error::ShapeError;
use std::fmt::{self, Write as _};

/// The largest width or precision: `core::fmt` panics on anything wider than 16 bits.
pub(crate) const MAX_COUNT: usize = u16::MAX as usize;

/// The largest width or precision under which the binary log keeps a value typed. A reader
/// writes the padding or digits of a typed value from a byte or two of it, so a larger one
/// (up to [`MAX_COUNT`]) would let a forged file make a reader write thousands of bytes per
/// byte read; under it, the value is kept as its text.
pub(crate) const MAX_TYPED_COUNT: usize = 32;

/// A width or precision as the spec gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    None,
    Literal(usize),
    /// `N$`, `name$` or `*`: the record's next count slot.
    Arg,
}

/// Where padding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Not given: left for text, right for numbers.
    Default,
    Left,
    Center,
    Right,
}

/// The type part of a spec: which trait formats the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Display,
    Debug,
    /// `x?`: `Debug`, with integers in lower-case hex.
    DebugLowerHex,
    /// `X?`.
    DebugUpperHex,
    LowerHex,
    UpperHex,
    Octal,
    Binary,
    LowerExp,
    UpperExp,
    Pointer,
}

/// A parsed spec: `[[fill]align][sign]['#']['0'][width]['.' precision][type]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    pub(crate) fill: char,
    pub(crate) align: Align,
    /// `+`: a sign on non-negative numbers too. (`-` is accepted and means nothing, as in std.)
    pub(crate) plus: bool,
    /// `#`.
    pub(crate) alternate: bool,
    /// `0`: sign-aware zero padding for numbers.
    pub(crate) zero: bool,
    pub(crate) width: Count,
    pub(crate) precision: Count,
    pub(crate) ty: Ty,
}

impl Spec {
    /// `{}`.
    pub(crate) const PLAIN: Spec = Spec {
        fill: ' ',
        align: Align::Default,
        plus: false,
        alternate: false,
        zero: false,
        width: Count::None,
        precision: Count::None,
        ty: Ty::Display,
    };

    /// Whether this is `{}` (what the live back end's fast path handles without `core::fmt`).
    pub(crate) fn is_plain(&self) -> bool {
        *self == Spec::PLAIN
    }

    /// Whether this is `{}` but perhaps for its trait (`{:?}`, `{:x}`), as a `Placeholder` is
    /// `plain`: no fill, alignment, sign, `#`, `0`, width or precision, nor the hex flag of
    /// `{:x?}`.
    pub(crate) fn is_plain_but_for_trait(&self) -> bool {
        !matches!(self.ty, Ty::DebugLowerHex | Ty::DebugUpperHex)
            && Spec {
                ty: Ty::Display,
                ..self.clone()
            } == Spec::PLAIN
    }

    /// `N` for `{:.N}` with nothing else that changes a float's text (a fill, an alignment
    /// or `0` mean nothing without a width).
    pub(crate) fn places_only(&self) -> Option<usize> {
        match (
            self.ty,
            self.plus,
            self.alternate,
            self.width,
            self.precision,
        ) {
            (Ty::Display, false, false, Count::None, Count::Literal(places)) => Some(places),
            _ => None,
        }
    }

    /// Whether a value the binary log keeps typed may be written with it: its width and
    /// precision are written in it, and at most [`MAX_TYPED_COUNT`].
    pub(crate) fn takes_typed(&self) -> bool {
        let small = |count| match count {
            Count::None => true,
            Count::Literal(n) => n <= MAX_TYPED_COUNT,
            Count::Arg => false,
        };
        small(self.width) && small(self.precision)
    }

    /// Parses the text between `:` and `}` as the macro's parser does
    /// (`tachylog-macros/src/format_string.rs`): a width or precision is a number, `N$` or
    /// `name$` (an argument, which travels as a count slot), a precision may be `*`.
    /// `placeholder` only names the placeholder in the error.
    pub(crate) fn parse(text: &str, placeholder: usize) -> Result<Spec, ShapeError> {
        let fail = |reason| ShapeError::Spec {
            placeholder,
            spec: text.to_string(),
            reason,
        };
        let chars: Vec<char> = text.chars().collect();
        let mut spec = Spec::PLAIN;
        let mut i = 0;
        let align = |c: char| match c {
            '<' => Some(Align::Left),
            '^' => Some(Align::Center),
            '>' => Some(Align::Right),
            _ => None,
        };
        if let Some(a) = chars.get(1).copied().and_then(align) {
            spec.fill = chars[0];
            spec.align = a;
            i = 2;
        } else if let Some(a) = chars.first().copied().and_then(align) {
            spec.align = a;
            i = 1;
        }
        if let Some('+' | '-') = chars.get(i) {
            spec.plus = chars[i] == '+';
            i += 1;
        }
        if chars.get(i) == Some(&'#') {
            spec.alternate = true;
            i += 1;
        }
        if chars.get(i) == Some(&'0') && chars.get(i + 1) != Some(&'$') {
            spec.zero = true;
            i += 1;
        }
        if let Some((count, next)) = count(&chars, i).map_err(fail)? {
            spec.width = count;
            i = next;
        }
        if chars.get(i) == Some(&'.') {
            i += 1;
            if chars.get(i) == Some(&'*') {
                spec.precision = Count::Arg;
                i += 1;
            } else if let Some((count, next)) = count(&chars, i).map_err(fail)? {
                spec.precision = count;
                i = next;
            } else {
                return Err(fail("`.` without a precision"));
            }
        }
        let ty: String = chars[i..].iter().collect();
        spec.ty = match ty.trim() {
            "" => Ty::Display,
            "?" => Ty::Debug,
            "x?" => Ty::DebugLowerHex,
            "X?" => Ty::DebugUpperHex,
            "x" => Ty::LowerHex,
            "X" => Ty::UpperHex,
            "o" => Ty::Octal,
            "b" => Ty::Binary,
            "e" => Ty::LowerExp,
            "E" => Ty::UpperExp,
            "p" => Ty::Pointer,
            _ => return Err(fail("an unknown type")),
        };
        Ok(spec)
    }
}

/// A width or precision at `chars[i..]`: digits (a literal), or digits or an identifier
/// followed by `$` (an argument). `None` when there is none (an identifier without `$` is
/// the type, as in `x`).
fn count(chars: &[char], i: usize) -> Result<Option<(Count, usize)>, &'static str> {
    let mut j = i;
    while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
        j += 1;
    }
    if j == i {
        return Ok(None);
    }
    if chars.get(j) == Some(&'$') {
        return Ok(Some((Count::Arg, j + 1)));
    }
    let digits = chars[i..j]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return Ok(None);
    }
    let mut n = 0usize;
    for c in &chars[i..i + digits] {
        n = n * 10 + (*c as usize - '0' as usize);
        if n > MAX_COUNT {
            return Err("a width or precision past 65535");
        }
    }
    Ok(Some((Count::Literal(n), i + digits)))
}

/// A spec with its width and precision resolved for one record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved<'s> {
    pub(crate) spec: &'s Spec,
    pub(crate) width: Option<usize>,
    pub(crate) precision: Option<usize>,
}

impl Resolved<'_> {
    /// `spec` with its literal counts (for a spec without count arguments).
    pub(crate) fn literal(spec: &Spec) -> Resolved<'_> {
        let literal = |c: Count| match c {
            Count::Literal(n) => Some(n),
            _ => None,
        };
        Resolved {
            spec,
            width: literal(spec.width),
            precision: literal(spec.precision),
        }
    }
}

/// Appends `count` copies of `fill`.
fn fill(out: &mut String, fill: char, count: usize) {
    out.extend(std::iter::repeat_n(fill, count));
}

/// Appends `text` padded to the width, `align` when the spec gives none (`Formatter::padding`:
/// a centred text gets the extra fill on the right).
fn pad_to_width(out: &mut String, text: &str, r: &Resolved<'_>, default: Align) {
    let len = text.chars().count();
    let Some(width) = r.width.filter(|&w| w > len) else {
        out.push_str(text);
        return;
    };
    let padding = width - len;
    let (before, after) = match (r.spec.align, default) {
        (Align::Left, _) | (Align::Default, Align::Left) => (0, padding),
        (Align::Center, _) | (Align::Default, Align::Center) => (padding / 2, padding.div_ceil(2)),
        _ => (padding, 0),
    };
    fill(out, r.spec.fill, before);
    out.push_str(text);
    fill(out, r.spec.fill, after);
}

/// `Formatter::pad`: text (`str`, `char`, `bool`, `()`): cut to the precision in characters,
/// then padded, left-aligned unless the spec says otherwise; `+`, `#` and `0` do nothing.
pub(crate) fn pad_text(out: &mut String, text: &str, r: &Resolved<'_>) {
    let text = match r.precision {
        Some(p) => match text.char_indices().nth(p) {
            Some((cut, _)) => &text[..cut],
            None => text,
        },
        None => text,
    };
    pad_to_width(out, text, r, Align::Left);
}

/// `Formatter::pad_integral` and `pad_formatted_parts`: a number's core (sign, prefix, digits,
/// as `std` wrote it without a width), padded right-aligned unless the spec says otherwise, or
/// with `0`, zeros between the sign and `0x`-style prefix (`prefix_len` bytes of `core`) and the
/// digits, whatever the fill and alignment.
pub(crate) fn pad_number(out: &mut String, core: &str, prefix_len: usize, r: &Resolved<'_>) {
    let len = core.chars().count();
    match r.width {
        Some(width) if r.spec.zero && width > len => {
            out.push_str(&core[..prefix_len]);
            fill(out, '0', width - len);
            out.push_str(&core[prefix_len..]);
        }
        _ => pad_to_width(out, core, r, Align::Right),
    }
}

/// Writes `value` with `std`'s literal spec for `$ty` and the resolved (sign, `#`, precision),
/// no width: a number's core.
macro_rules! std_core {
    ($out:expr, $value:expr, $r:expr, $ty:literal) => {{
        let (plus, alternate) = ($r.spec.plus, $r.spec.alternate);
        match ($r.precision, plus, alternate) {
            (None, false, false) => write!($out, concat!("{:", $ty, "}"), $value),
            (None, true, false) => write!($out, concat!("{:+", $ty, "}"), $value),
            (None, false, true) => write!($out, concat!("{:#", $ty, "}"), $value),
            (None, true, true) => write!($out, concat!("{:+#", $ty, "}"), $value),
            (Some(p), false, false) => write!($out, concat!("{:.1$", $ty, "}"), $value, p),
            (Some(p), true, false) => write!($out, concat!("{:+.1$", $ty, "}"), $value, p),
            (Some(p), false, true) => write!($out, concat!("{:#.1$", $ty, "}"), $value, p),
            (Some(p), true, true) => write!($out, concat!("{:+#.1$", $ty, "}"), $value, p),
        }
    }};
}

/// Whether `ty` does not apply to a kind of value (its type has no such trait).
#[derive(Debug)]
pub(crate) struct NoSuchTrait;

/// Appends an integer with `r`, as `format!` would.
pub(crate) fn integer<T>(out: &mut String, value: T, r: &Resolved<'_>) -> Result<(), NoSuchTrait>
where
    T: fmt::Display
        + fmt::Debug
        + fmt::LowerHex
        + fmt::UpperHex
        + fmt::Octal
        + fmt::Binary
        + fmt::LowerExp
        + fmt::UpperExp,
{
    let start = out.len();
    // Writing into a `String` cannot fail.
    let _: fmt::Result = match r.spec.ty {
        // Integers' `Debug` is their `Display`, whatever `#` says.
        Ty::Display | Ty::Debug => std_core!(out, value, r, ""),
        Ty::LowerHex | Ty::DebugLowerHex => std_core!(out, value, r, "x"),
        Ty::UpperHex | Ty::DebugUpperHex => std_core!(out, value, r, "X"),
        Ty::Octal => std_core!(out, value, r, "o"),
        Ty::Binary => std_core!(out, value, r, "b"),
        Ty::LowerExp => std_core!(out, value, r, "e"),
        Ty::UpperExp => std_core!(out, value, r, "E"),
        Ty::Pointer => return Err(NoSuchTrait),
    };
    let has_radix_prefix = r.spec.alternate
        && matches!(
            r.spec.ty,
            Ty::LowerHex
                | Ty::UpperHex
                | Ty::DebugLowerHex
                | Ty::DebugUpperHex
                | Ty::Octal
                | Ty::Binary
        );
    let prefix = sign_len(&out[start..]) + if has_radix_prefix { 2 } else { 0 };
    pad_core(out, start, prefix, r);
    Ok(())
}

/// Appends a float with `r`, as `format!` would.
pub(crate) fn float<T>(out: &mut String, value: T, r: &Resolved<'_>) -> Result<(), NoSuchTrait>
where
    T: fmt::Display + fmt::Debug + fmt::LowerExp + fmt::UpperExp + PlainFloat,
{
    let start = out.len();
    let _: fmt::Result = match r.spec.ty {
        // `{:.3}` (the usual spec of a float), by the live back end's fast path where it can
        // decide the digits: `core::fmt` often falls back to exact big-number arithmetic
        // there (`dragon::format_exact`, the largest part of reading a `{:.3}` in `perf`).
        Ty::Display
            if !r.spec.plus
                && !r.spec.alternate
                && r.precision
                    .is_some_and(|p| push_fixed(value, p, &mut TextBuf::of_string(out))) =>
        {
            Ok(())
        }
        Ty::Display => std_core!(out, value, r, ""),
        // Floats have no hex `Debug`: `{:x?}` is `{:?}`.
        Ty::Debug | Ty::DebugLowerHex | Ty::DebugUpperHex => std_core!(out, value, r, "?"),
        Ty::LowerExp => std_core!(out, value, r, "e"),
        Ty::UpperExp => std_core!(out, value, r, "E"),
        _ => return Err(NoSuchTrait),
    };
    let prefix = sign_len(&out[start..]);
    pad_core(out, start, prefix, r);
    Ok(())
}

/// [`pad_number`] of the core already written at `out[start..]`: padded where it stands, so
/// that a number without a width (most, such as `{:.3}`) is written with no copy.
fn pad_core(out: &mut String, start: usize, prefix_len: usize, r: &Resolved<'_>) {
    if r.width
        .is_some_and(|width| width > out[start..].chars().count())
    {
        let core = out.split_off(start);
        pad_number(out, &core, prefix_len.min(core.len()), r);
    }
}

/// Bytes of the sign at the front of a number's core.
fn sign_len(core: &str) -> usize {
    usize::from(core.starts_with(['+', '-']))
}
