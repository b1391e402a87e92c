//! The fast path of the back end's formatting: numbers, `bool`, `char` and text written
//! straight into the message buffer, with `std`'s exact output, for the placeholders that carry
//! no spec beyond `{}`, `{:?}` and a literal `{:.N}`.
//!
//! `core::fmt` costs a `Formatter`, a trait-object call per piece and, for floats, Grisu with a
//! Dragon fallback: about half of the back end's time per record when every value goes through
//! it (`tachylog-bench --only tachylog,backend_iteration`).
//! Integers up to 64 bits are written in place (`codec::decimal`), 128-bit ones through `itoa`.
//! A float that is a short decimal (`12.5`, `0.75`: at most four places, see
//! [`push_short_decimal`]) is written through the integer path. Other floats go through `zmij`
//! (shortest round-trip digits, the same digits `std` prints: the shortest string that reads
//! back as the value, the closest one on a tie), then are laid out here as `std` lays them out:
//! - `{}`: always positional, `1e20` as `100000000000000000000`, `-0.0` as `-0`;
//! - `{:?}`: positional with at least one fractional digit when `1e-4 <= |x| < 1e16` (or zero),
//!   else `1e16`, `1.5e-7`;
//! - `{:.N}`: the exact value rounded half to even at `N` digits. Only the cases where rounding
//!   the shortest digits is provably the same as rounding the exact binary value take the
//!   fast path (see [`push_fixed`]); the rest return `false` and `core::fmt` does them.
//!
//! Byte identity with `format!` is checked by property tests (`tests/plain_formatting_matches_std.rs`).
//!
//! Runs on the back end only; allocates only by growing the caller's `String`.

use super::decimal::{append_u64, append_with_point, POWERS_OF_TEN};
use super::TextBuf;

/// A float's shortest decimal form: `0.DIGITS × 10^exponent`, digits without leading or
/// trailing zeros (empty for zero).
pub(crate) struct Decimal {
    digits: [u8; 24],
    len: usize,
    exponent: i32,
}

impl Decimal {
    fn digits(&self) -> &[u8] {
        &self.digits[..self.len]
    }
}

/// The floats the fast path knows: their shortest digits (through `zmij`) and the size of their
/// last place, to decide when rounding those digits is exact.
pub(crate) trait PlainFloat: Copy {
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn is_zero(self) -> bool;
    /// `|self| < 1e16 && (|self| >= 1e-4 || self == 0)`: where `{:?}` stays positional.
    fn debug_is_positional(self) -> bool;
    /// The exponent of the value's last place: one unit in the last place is `2^ulp_exponent`.
    fn ulp_exponent(self) -> i32;
    /// Shortest digits of `|self|`, finite and non-zero.
    fn shortest(self) -> Decimal;
    /// `zmij`'s own rendering of `|self|`, finite and non-zero, into `buffer`.
    fn render_abs(self, buffer: &mut zmij::Buffer) -> &str;
    /// The same value as an `f64` (exact for both types).
    fn to_f64(self) -> f64;
    /// `std`'s own `{}` (or `{:?}`), for the rare values the fast path leaves to it.
    fn push_std(self, debug: bool, out: &mut TextBuf<'_>);
    /// `|self|` as `n / 10^k` with `k <= MAX_SHORT_DECIMALS` when that is its shortest form
    /// (see [`push_short_decimal`]), finite and non-zero.
    fn short_decimal(self) -> Option<(u64, u32)>;
}

/// `zmij`'s rendering split at its exponent: the mantissa's bytes (digits, maybe a `.`) and the
/// position of the `e`, if there is one (`zmij` writes a lowercase `e`). One byte scan, shared
/// by the tie check and the layout: separate scans of these few bytes (a `char` pattern search
/// for `e` or `E`, then two more) would be most of the per-float work of `{}`.
#[inline]
fn split_exponent(text: &str) -> (&[u8], Option<usize>) {
    let bytes = text.as_bytes();
    match bytes.iter().position(|&b| b == b'e') {
        Some(e) => (&bytes[..e], Some(e)),
        None => (bytes, None),
    }
}

/// Parses `zmij`'s rendering of a positive finite float (`123.45`, `1e20`, `1.5e-7`, `0.001`)
/// into digits and exponent. Its layout is its own business; only the digits and the point's
/// position are taken from it.
fn parse_shortest(text: &str) -> Decimal {
    let (mantissa, exp10) = match split_exponent(text) {
        (mantissa, Some(e)) => (mantissa, text[e + 1..].parse::<i32>().unwrap_or(0)),
        (mantissa, None) => (mantissa, 0),
    };
    let point = mantissa
        .iter()
        .position(|&b| b == b'.')
        .unwrap_or(mantissa.len()) as i32;
    let mut decimal = Decimal {
        digits: [0; 24],
        len: 0,
        exponent: point + exp10,
    };
    let mut leading = true;
    for &b in mantissa {
        if b == b'.' {
            continue;
        }
        if leading && b == b'0' {
            decimal.exponent -= 1;
            continue;
        }
        leading = false;
        if decimal.len < decimal.digits.len() {
            decimal.digits[decimal.len] = b;
            decimal.len += 1;
        }
    }
    while decimal.len > 0 && decimal.digits[decimal.len - 1] == b'0' {
        decimal.len -= 1;
    }
    decimal
}

macro_rules! plain_float {
    ($t:ty, $bits:ty, $mantissa_bits:expr, $bias:expr) => {
        impl PlainFloat for $t {
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn debug_is_positional(self) -> bool {
                let abs = self.abs();
                abs < 1e16 && (abs >= 1e-4 || abs == 0.0)
            }
            fn ulp_exponent(self) -> i32 {
                let biased = ((self.to_bits() >> $mantissa_bits)
                    & ((1 << (<$bits>::BITS - 1 - $mantissa_bits)) - 1))
                    as i32;
                biased.max(1) - $bias - $mantissa_bits
            }
            fn shortest(self) -> Decimal {
                parse_shortest(zmij::Buffer::new().format_finite(self.abs()))
            }
            fn render_abs(self, buffer: &mut zmij::Buffer) -> &str {
                buffer.format_finite(self.abs())
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn short_decimal(self) -> Option<(u64, u32)> {
                let abs = self.abs();
                // Below 2^(mantissa bits - 1) after scaling, one unit in the last place of
                // `abs` is below 10^-k (see `push_short_decimal`).
                let limit = (1u64 << ($mantissa_bits - 1)) as $t;
                if abs >= limit {
                    return None;
                }
                // A whole number (`k = 0`), without the loop's division: by one, it could only
                // give `abs` back. Skipping it saves its latency and 12 instructions per record
                // where half the `double`s are whole (callgrind,
                // `tachylog-bench --only tachylog,backend_iteration`).
                let signed = abs as i64;
                if signed as $t == abs {
                    return Some((signed as u64, 0));
                }
                let mut scale: $t = 10.0;
                for k in 1..=MAX_SHORT_DECIMALS {
                    let scaled = abs * scale;
                    if scaled >= limit {
                        return None;
                    }
                    // `scaled < 2^52`, so the conversions are exact; a whole `scaled` that
                    // divides back to `abs` (both exact operands, one correctly rounded
                    // division: what parsing the decimal gives) is the value's decimal.
                    // Through `i64`: one instruction each way, where `u64` takes several.
                    let signed = scaled as i64;
                    if signed as $t == scaled && scaled / scale == abs {
                        let mut whole = signed as u64;
                        // A rounded product can miss at a smaller `k` (`1.001 * 1e3` is
                        // `1000.9999999999999`) and hit later with trailing zeros.
                        let mut k = k;
                        while k > 0 && whole % 10 == 0 {
                            whole /= 10;
                            k -= 1;
                        }
                        return Some((whole, k));
                    }
                    scale *= 10.0;
                }
                None
            }
            #[cold]
            fn push_std(self, debug: bool, out: &mut TextBuf<'_>) {
                use std::fmt::Write as _;
                let _ = if debug {
                    write!(out, "{self:?}")
                } else {
                    write!(out, "{self}")
                };
            }
        }
    };
}
plain_float!(f64, u64, 52, 1023);
plain_float!(f32, u32, 23, 127);

/// Whether `zmij`'s shortest digits may differ from `std`'s: when the exact value lies
/// exactly halfway between two shortest candidates, `zmij` picks the even one and `std` the
/// one further from zero. A tie needs the exact binary value to have exactly one significant
/// digit more than the shortest form; the last digit of `zmij`'s pick is then even.
fn may_be_a_tie<F: PlainFloat>(value: F, mantissa: &[u8]) -> bool {
    let non_zero = |b: &u8| (b'1'..=b'9').contains(b);
    // The last digit's parity first, from the end: half of all values stop here.
    let Some(last) = mantissa.iter().rposition(non_zero) else {
        return false;
    };
    if (mantissa[last] - b'0') % 2 == 1 {
        return false;
    }
    let first = mantissa.iter().position(non_zero).unwrap_or(last);
    let significant = mantissa[first..=last]
        .iter()
        .filter(|b| b.is_ascii_digit())
        .count() as u32;
    match exact_significant_digits(value.to_f64()) {
        Some(exact) => exact == significant + 1,
        None => true,
    }
}

/// The number of significant decimal digits of `x`'s exact value (finite, non-zero), when it
/// can be found with 128-bit integers: `Some(20)` stands for "20 or more"; `None` for a huge
/// integer value where it is not worth finding out.
fn exact_significant_digits(x: f64) -> Option<u32> {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mut mantissa, mut exponent) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), biased - 1075),
    };
    let zeros = mantissa.trailing_zeros();
    mantissa >>= zeros;
    exponent += zeros as i32;
    if exponent < 0 {
        // x = mantissa * 5^n / 10^n: the digits of mantissa * 5^n, which is odd, so ends in 5.
        let n = -exponent as u32;
        if n > 27 {
            return Some(20);
        }
        let digits = (mantissa as u128).checked_mul(5u128.pow(n))?;
        return Some(if digits >= 10u128.pow(19) {
            20
        } else {
            digits.ilog10() + 1
        });
    }
    if exponent > 74 {
        return None;
    }
    let mut value = (mantissa as u128) << exponent;
    // Whole numbers below 2^64 (`3.0`, `1234.0`: the common case) in 64 bits: a 128-bit
    // division is a call into compiler-rt.
    if let Ok(mut small) = u64::try_from(value) {
        while small % 10 == 0 {
            small /= 10;
        }
        return Some(small.ilog10() + 1);
    }
    while value % 10 == 0 {
        value /= 10;
    }
    Some(value.ilog10() + 1)
}

/// `NaN`, `inf`, `-inf`, as `std` writes them; `true` if `value` was one of them.
fn push_non_finite<F: PlainFloat>(value: F, out: &mut TextBuf<'_>) -> bool {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value.is_sign_negative() {
            "-inf"
        } else {
            "inf"
        });
    } else {
        return false;
    }
    true
}

/// Digits `0.D × 10^exponent` laid out positionally with at least `min_fraction` fractional
/// digits (zeros added).
fn push_positional(digits: &[u8], exponent: i32, min_fraction: usize, out: &mut TextBuf<'_>) {
    let mut buf = [0u8; 400];
    let mut n = 0;
    let mut push = |b: u8| {
        buf[n] = b;
        n += 1;
    };
    let fraction;
    if digits.is_empty() {
        push(b'0');
        fraction = 0;
    } else if exponent <= 0 {
        push(b'0');
        push(b'.');
        for _ in 0..-exponent {
            push(b'0');
        }
        digits.iter().for_each(|&d| push(d));
        fraction = digits.len() + (-exponent) as usize;
    } else if (exponent as usize) < digits.len() {
        let (int, frac) = digits.split_at(exponent as usize);
        int.iter().for_each(|&d| push(d));
        push(b'.');
        frac.iter().for_each(|&d| push(d));
        fraction = frac.len();
    } else {
        digits.iter().for_each(|&d| push(d));
        for _ in digits.len()..exponent as usize {
            push(b'0');
        }
        fraction = 0;
    }
    if fraction < min_fraction {
        if fraction == 0 {
            push(b'.');
        }
        for _ in fraction..min_fraction {
            push(b'0');
        }
    }
    // Only ASCII digits and '.' were pushed, so this never fails.
    out.push_str(std::str::from_utf8(&buf[..n]).unwrap_or_default());
}

/// The most decimals the short-decimal path tries (`12.5`, `0.75`, `101.25`, `3.1416`): the
/// floats that people log most are short decimals, and for them this is a few multiplications
/// and the integer path instead of `zmij` and its checks.
const MAX_SHORT_DECIMALS: u32 = 4; // `append_with_point` takes at most 4

/// Writes `|value|` as `n / 10^k` (`k` decimals, no trailing zero) if that is its shortest
/// round-trip form, which is `std`'s `{}`; `false` (nothing written) otherwise.
///
/// Why this is the shortest form: the decimal `n / 10^k` reads back as `value` (checked by
/// dividing: both operands are exact, and IEEE division rounds correctly, as parsing does).
/// Any other decimal with at most `k` places differs from it by at least `10^-k`, and every
/// decimal that reads back as `value` lies within one unit in its last place, which is below
/// `10^-k` because `|value| * 10^k < 2^(mantissa bits - 1)`. So it is the only decimal with at
/// most `k` places that reads back (trailing zeros are dropped, so none with fewer places
/// does either). A decimal with more places but fewer significant digits cannot lie that
/// close to `value`, since near `value` it has the same leading place. Checked against
/// `format!` by the tests of this module and `plain_formatting_matches_std`.
#[inline]
fn push_short_decimal<F: PlainFloat>(value: F, debug: bool, out: &mut TextBuf<'_>) -> bool {
    let Some((whole, decimals)) = value.short_decimal() else {
        return false;
    };
    if decimals == 0 {
        super::decimal::append_u64(out, whole);
        if debug {
            out.push_str(".0");
        }
        return true;
    }
    super::decimal::append_with_point(out, whole, decimals);
    true
}

/// `{}` of a float, as `std` writes it.
pub(crate) fn push_display<F: PlainFloat>(value: F, out: &mut TextBuf<'_>) {
    if push_non_finite(value, out) {
        return;
    }
    if value.is_sign_negative() {
        out.push('-');
    }
    if value.is_zero() {
        out.push('0');
        return;
    }
    if push_short_decimal(value, false, out) {
        return;
    }
    // Most values: `zmij` writes them positionally (`12.5`, `0.001`, `3.0`), which is `std`'s
    // layout but for the `.0` of whole numbers. Only its exponent form needs laying out again.
    let mut buffer = zmij::Buffer::new();
    let text = value.render_abs(&mut buffer);
    let (mantissa, exponent) = split_exponent(text);
    if may_be_a_tie(value, mantissa) {
        out.truncate(out.len() - value.is_sign_negative() as usize);
        return value.push_std(false, out);
    }
    if exponent.is_none() {
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
        return;
    }
    let d = parse_shortest(text);
    push_positional(d.digits(), d.exponent, 0, out);
}

/// `{:?}` of a float, as `std` writes it.
pub(crate) fn push_debug<F: PlainFloat>(value: F, out: &mut TextBuf<'_>) {
    if push_non_finite(value, out) {
        return;
    }
    if value.is_sign_negative() {
        out.push('-');
    }
    if value.is_zero() {
        out.push_str("0.0");
        return;
    }
    // A short decimal is at least 1e-4 and below 2^51: positional, as `{:?}` lays it out there.
    if push_short_decimal(value, true, out) {
        return;
    }
    let mut buffer = zmij::Buffer::new();
    let text = value.render_abs(&mut buffer);
    let (mantissa, exponent) = split_exponent(text);
    if may_be_a_tie(value, mantissa) {
        out.truncate(out.len() - value.is_sign_negative() as usize);
        return value.push_std(true, out);
    }
    let positional = value.debug_is_positional();
    if positional && exponent.is_none() {
        // `zmij`'s positional form keeps the `.0` of whole numbers, as `{:?}` does.
        out.push_str(text);
        return;
    }
    let d = parse_shortest(text);
    if positional {
        push_positional(d.digits(), d.exponent, 1, out);
        return;
    }
    // `1e16`, `1.5e-7`: one digit before the point, the exponent without a `+`.
    let digits = d.digits();
    out.push(digits[0] as char);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[1..]).unwrap_or_default());
    }
    out.push('e');
    out.push_str(itoa::Buffer::new().format(d.exponent - 1));
}

/// The largest `{:.N}` the fast path takes; more digits than that are rare enough for
/// `core::fmt`.
const MAX_FAST_PRECISION: usize = 40;

/// `{:.N}` of a float, as `std` writes it (the exact binary value rounded half to even), when
/// that can be decided from the shortest digits; `false` (nothing written) otherwise.
///
/// Rounding the shortest digits `s` at `N` places gives the rounding of the exact value `x`
/// unless the dropped digits are exactly `5`: a rounding midpoint strictly between `s` and `x`
/// would lie inside `x`'s round-trip interval with no more digits than `s`, and the shortest
/// form would have been that midpoint. When `s` has no more than `N` places, `s` itself is
/// the answer if one unit in `x`'s last place is below `10^-N`, since `|x - s|` is at most half
/// of it.
pub(crate) fn push_fixed<F: PlainFloat>(value: F, precision: usize, out: &mut TextBuf<'_>) -> bool {
    if precision > MAX_FAST_PRECISION {
        return false;
    }
    if push_non_finite(value, out) {
        return true;
    }
    let negative = value.is_sign_negative();
    if value.is_zero() {
        if negative {
            out.push('-');
        }
        push_positional(&[], 0, precision, out);
        return true;
    }
    if push_fixed_exact(value.to_f64(), precision, out) {
        return true;
    }
    let d = value.shortest();
    let digits = d.digits();
    let places = digits.len() as i32 - d.exponent;
    if places <= precision as i32 {
        // Sufficient for "one ulp < 10^-N": ulp_exponent < -N * log2(10), with a margin.
        let bound = -(precision as f64) * std::f64::consts::LOG2_10;
        if (value.ulp_exponent() as f64) + 0.01 >= bound {
            return false;
        }
        if negative {
            out.push('-');
        }
        push_positional(digits, d.exponent, precision, out);
        return true;
    }
    // Digits kept: those before the (N+1)th place.
    let kept = d.exponent + precision as i32;
    let mut rounded = [0u8; 48];
    let (mut len, mut exponent) = (0usize, d.exponent);
    if kept >= 0 {
        let kept = kept as usize;
        let first_dropped = digits[kept];
        if first_dropped == b'5' && kept + 1 == digits.len() {
            return false; // a tie in the shortest digits: the exact value decides
        }
        rounded[..kept].copy_from_slice(&digits[..kept]);
        len = kept;
        if first_dropped >= b'5' {
            // Carry up through the kept digits.
            let mut i = len;
            loop {
                if i == 0 {
                    rounded.copy_within(0..len, 1);
                    rounded[0] = b'1';
                    len += 1;
                    exponent += 1;
                    break;
                }
                i -= 1;
                if rounded[i] == b'9' {
                    rounded[i] = b'0';
                } else {
                    rounded[i] += 1;
                    break;
                }
            }
        }
    }
    while len > 0 && rounded[len - 1] == b'0' {
        len -= 1;
    }
    if negative {
        out.push('-');
    }
    if len == 0 {
        exponent = 0;
    }
    push_positional(&rounded[..len], exponent, precision, out);
    true
}

/// The largest precision [`push_fixed_exact`] takes: `10^19` fits a `u64`, and a 53-bit
/// significand times it fits a `u128`.
const MAX_EXACT_PRECISION: usize = 19;

/// `{:.N}` of a finite, non-zero `value` below 2^52 in magnitude (every `f32` and `f64` with a
/// fraction), by integer arithmetic on its exact binary value `m × 2^-s`: `m × 10^N` shifted
/// right by `s`, rounded half to even, is the value's `N`-place rounding, digit for digit what
/// `std` writes. `false` (nothing written) for a larger value or precision. Written by hand
/// because the shortest digits plus a rounding step cost three times as many instructions
/// (callgrind, `tachylog cat` of a log of `{:.3}` floats), and `core::fmt`'s exact mode more.
fn push_fixed_exact(value: f64, precision: usize, out: &mut TextBuf<'_>) -> bool {
    const MANTISSA_BITS: u32 = 52;
    let bits = value.to_bits();
    let biased = ((bits >> MANTISSA_BITS) & 0x7ff) as i32;
    let fraction = bits & ((1 << MANTISSA_BITS) - 1);
    let (mantissa, shift) = match biased {
        0 => (fraction, 1074),
        _ => (fraction | 1 << MANTISSA_BITS, 1075 - biased),
    };
    if precision > MAX_EXACT_PRECISION || shift <= 0 || mantissa == 0 {
        return false;
    }
    let shift = shift as u32;
    let unit = POWERS_OF_TEN[precision];
    // Most values (such as a latency in milliseconds to 3 places) scale within 64 bits: their
    // arithmetic is not `u128`'s.
    let rounded = match mantissa.checked_mul(unit) {
        Some(scaled) if shift < 64 => {
            let (quotient, rest) = (scaled >> shift, scaled & ((1u64 << shift) - 1));
            let half = 1u64 << (shift - 1);
            u128::from(quotient + u64::from(rest > half || (rest == half && quotient & 1 == 1)))
        }
        // `scaled < 2^117`: shifted by 118 or more it is below one half, and rounds to zero.
        _ if shift >= 118 => 0,
        _ => {
            let scaled = u128::from(mantissa) * u128::from(unit);
            let (quotient, rest) = (scaled >> shift, scaled & ((1u128 << shift) - 1));
            let half = 1u128 << (shift - 1);
            quotient + u128::from(rest > half || (rest == half && quotient & 1 == 1))
        }
    };
    if value.is_sign_negative() {
        out.push('-');
    }
    // The rounded value's digits once, split at the point: no division by `10^N` (a slow
    // instruction) and one conversion, not one for each side. Up to 4 places (`{:.3}` of a
    // latency), straight into `out` with the integer writers.
    match u64::try_from(rounded) {
        Ok(rounded) if precision == 0 => {
            append_u64(out, rounded);
            return true;
        }
        Ok(rounded) if precision <= 4 => {
            append_with_point(out, rounded, precision as u32);
            return true;
        }
        _ => {}
    }
    let mut buffer = itoa::Buffer::new();
    let digits = match u64::try_from(rounded) {
        Ok(rounded) => buffer.format(rounded),
        Err(_) => buffer.format(rounded),
    };
    let whole = digits.len().saturating_sub(precision);
    out.push_str(if whole == 0 { "0" } else { &digits[..whole] });
    if precision > 0 {
        out.push('.');
        out.push_str(&"0000000000000000000"[..precision - (digits.len() - whole)]);
        out.push_str(&digits[whole..]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn display<F: PlainFloat>(v: F) -> String {
        let mut s = String::new();
        push_display(v, &mut TextBuf::of_string(&mut s));
        s
    }

    fn debug<F: PlainFloat>(v: F) -> String {
        let mut s = String::new();
        push_debug(v, &mut TextBuf::of_string(&mut s));
        s
    }

    fn fixed<F: PlainFloat>(v: F, n: usize) -> Option<String> {
        let mut s = String::new();
        push_fixed(v, n, &mut TextBuf::of_string(&mut s)).then_some(s)
    }

    #[test]
    fn shortest_digits_are_parsed_from_any_layout() {
        let d = parse_shortest("123.45");
        assert_eq!((d.digits(), d.exponent), (&b"12345"[..], 3));
        let d = parse_shortest("1e20");
        assert_eq!((d.digits(), d.exponent), (&b"1"[..], 21));
        let d = parse_shortest("0.00015");
        assert_eq!((d.digits(), d.exponent), (&b"15"[..], -3));
        let d = parse_shortest("1.5e-7");
        assert_eq!((d.digits(), d.exponent), (&b"15"[..], -6));
        let d = parse_shortest("100.0");
        assert_eq!((d.digits(), d.exponent), (&b"1"[..], 3));
    }

    #[test]
    fn edge_values_match_std() {
        for v in [
            0.0f64,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e20,
            1e-7,
            1e16,
            9.999e15,
            1e-4,
            9.99e-5,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            123456.789,
        ] {
            assert_eq!(display(v), format!("{v}"), "{{}} of {v:e}");
            assert_eq!(debug(v), format!("{v:?}"), "{{:?}} of {v:e}");
            for n in [0, 1, 2, 3, 6, 17, 20] {
                if let Some(s) = fixed(v, n) {
                    assert_eq!(s, format!("{v:.n$}"), "{{:.{n}}} of {v:e}");
                }
            }
        }
    }

    /// Whole numbers take the 64-bit path of the tie check below 2^64 and the 128-bit one
    /// above: around every power of two and of ten on both sides of that line.
    #[test]
    fn whole_numbers_on_both_sides_of_64_bits_match_std() {
        let mut values = Vec::new();
        for p in 0..80 {
            let two = 2f64.powi(p);
            let ten = 10f64.powi(p / 3);
            values.extend([two, two * 1.5, ten, ten * 2.0, ten * 4.0]);
            values.extend([two, ten].iter().flat_map(|&x| {
                [
                    f64::from_bits(x.to_bits() - 1),
                    f64::from_bits(x.to_bits() + 1),
                ]
            }));
        }
        for v in values.into_iter().filter(|v| v.fract() == 0.0) {
            assert_eq!(display(v), format!("{v}"), "{{}} of {v:e}");
            assert_eq!(debug(v), format!("{v:?}"), "{{:?}} of {v:e}");
            assert_eq!(display(-v), format!("{}", -v), "{{}} of {:e}", -v);
        }
    }

    /// Short decimals of every length and scale, on both sides of the limit where the
    /// short-decimal path stops, and values one unit in the last place away from them.
    #[test]
    fn short_decimals_match_std() {
        let mut values = Vec::new();
        for k in 0..=6 {
            let unit = 10f64.powi(k);
            for n in [
                1u64,
                5,
                9,
                12,
                99,
                125,
                1001,
                12345,
                999_999,
                1 << 40,
                (1 << 51) - 1,
                1 << 51,
                1 << 52,
                (1 << 53) - 1,
            ] {
                let v = n as f64 / unit;
                values.extend([
                    v,
                    f64::from_bits(v.to_bits() + 1),
                    f64::from_bits(v.to_bits() - 1),
                ]);
            }
        }
        values.extend([
            0.1,
            0.2,
            0.3,
            0.1 + 0.2,
            1.0 / 3.0,
            2.675,
            1e-4,
            1.5e-4,
            0.00015,
            123.456,
            2f64.powi(51) / 1e4,
        ]);
        for v in values {
            assert_eq!(display(v), format!("{v}"), "{{}} of {v:e}");
            assert_eq!(debug(v), format!("{v:?}"), "{{:?}} of {v:e}");
            let v32 = v as f32;
            assert_eq!(display(v32), format!("{v32}"), "{{}} of {v32:e}");
            assert_eq!(debug(v32), format!("{v32:?}"), "{{:?}} of {v32:e}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 16 } else { 20_000 }))]
        /// `n / 10^k` for any `n` and `k` (the values the short-decimal path is for), and
        /// whatever is one unit in the last place away.
        #[test]
        fn decimals_of_any_size_match_std(n in 0u64..(1 << 54), k in 0i32..=8, nudge in -1i64..=1) {
            let v = n as f64 / 10f64.powi(k);
            let v = if v == 0.0 { v } else { f64::from_bits((v.to_bits() as i64 + nudge) as u64) };
            proptest::prop_assert_eq!(display(v), format!("{v}"));
            proptest::prop_assert_eq!(debug(-v), format!("{:?}", -v));
            let v32 = (n % (1 << 26)) as f32 / 10f32.powi(k);
            proptest::prop_assert_eq!(display(v32), format!("{v32}"));
        }
    }

    /// `{:.N}` of any finite float, by its bits: below 2^52 (where the exact path works) and
    /// above, every precision up to past that path's limit, `f64` and `f32`.
    fn fixed_matches_std_or_declines(
        bits: u64,
        n: usize,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let v = f64::from_bits(bits);
        if v.is_finite() {
            if let Some(s) = fixed(v, n) {
                proptest::prop_assert_eq!(s, format!("{v:.n$}"));
            }
            proptest::prop_assert!(v.abs() >= 2f64.powi(52) || n > 19 || fixed(v, n).is_some());
        }
        let v32 = f32::from_bits(bits as u32);
        if let (true, Some(s)) = (v32.is_finite(), fixed(v32, n)) {
            proptest::prop_assert_eq!(s, format!("{v32:.n$}"));
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 16 } else { 20_000 }))]
        #[test]
        fn fixed_precision_of_any_float_matches_std(bits in proptest::prelude::any::<u64>(), n in 0usize..=22) {
            fixed_matches_std_or_declines(bits, n)?;
        }

        /// Measurements (`{:.3}` of a latency): the few places written straight into the
        /// line, with and without an integer part, both signs.
        #[test]
        fn fixed_precision_of_measurements_matches_std(v in -1e7f64..1e7, scale in 0i32..=8, n in 0usize..=5) {
            fixed_matches_std_or_declines((v / 10f64.powi(scale)).to_bits(), n)?;
        }

        /// Exact ties and their neighbours: `m / 2^k` with few bits, whose `N`-place rounding
        /// is often exactly half way, around the magnitudes `{:.3}` meets.
        #[test]
        fn fixed_precision_of_ties_matches_std(m in 0u64..(1 << 20), k in 0i32..=24, n in 0usize..=8, nudge in -1i64..=1) {
            let v = m as f64 / 2f64.powi(k);
            let bits = if v == 0.0 { v.to_bits() } else { (v.to_bits() as i64 + nudge) as u64 };
            fixed_matches_std_or_declines(bits, n)?;
            fixed_matches_std_or_declines(bits | 1 << 63, n)?;
        }
    }

    #[test]
    fn ties_round_to_even_and_the_rest_is_fast() {
        // 0.125 is exact in binary: a true tie, rounded to even as std does.
        assert_eq!(fixed(0.125f64, 2).as_deref(), Some("0.12"));
        assert_eq!(fixed(0.375f64, 2).as_deref(), Some("0.38"));
        assert_eq!(fixed(0.5f64, 0).as_deref(), Some("0"));
        assert_eq!(fixed(1.5f64, 0).as_deref(), Some("2"));
        assert_eq!(fixed(5e-324f64, 3).as_deref(), Some("0.000"));
        assert_eq!(fixed(0.126f64, 2).as_deref(), Some("0.13"));
        assert_eq!(fixed(2.5f64, 3).as_deref(), Some("2.500"));
        assert_eq!(fixed(99.96f64, 1).as_deref(), Some("100.0"));
        assert_eq!(fixed(0.0004f64, 3).as_deref(), Some("0.000"));
        assert_eq!(
            fixed(-0.0004f64, 3).as_deref(),
            Some(format!("{:.3}", -0.0004f64).as_str())
        );
    }
}
