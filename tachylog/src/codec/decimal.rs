//! Integers up to 64 bits written as decimal digits straight into the message, two digits at a
//! time from the end.
//!
//! Why by hand, when `itoa` is in the tree: `itoa` writes into its own buffer, which the caller
//! then copies. That copy reads back, in 4- to 16-byte loads, bytes that were just stored one or
//! two at a time, and such a load waits until the stores have left the store buffer (a failed
//! store-to-load forward): `perf annotate` puts 59% of the `u64` renderer's samples on the
//! instruction after that load (`tachylog-bench --only tachylog,backend_iteration`). Counting
//! the digits first (`ilog10`) lets the digits go to their final place with nothing read back.
//! `u128` and `i128` keep `itoa`.
//!
//! Back end only.

use super::TextBuf;

/// `"00" "01" … "99"`: the two digits of every value below 100.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `10^i` for every `i` a `u64` holds.
pub(crate) const POWERS_OF_TEN: [u64; 20] = {
    let mut powers = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// How many decimal digits `n` has (1 for zero).
///
/// Why not `checked_ilog10`: std computes it with a chain of comparisons and divisions by
/// constants, about 31 instructions per integer (callgrind,
/// `tachylog-bench --only tachylog,backend_iteration`); this is a bit count, a multiply and one
/// table compare. `log10(2)` is a little above `1233 / 4096`, so `bits * 1233 >> 12` is the
/// digit count of the smallest number of that bit length, or one less; the table says which.
#[inline(always)]
fn decimal_digits(n: u64) -> usize {
    // `| 1`: zero has the bit length, and the digit count, of one.
    let n = n | 1;
    let bits = u64::BITS - n.leading_zeros();
    let below = ((bits * 1233) >> 12) as usize;
    below + usize::from(n >= POWERS_OF_TEN[below])
}

/// Appends the decimal digits of `n` to `out`, as `{}` writes them.
#[inline]
pub(crate) fn append_u64(out: &mut TextBuf<'_>, n: u64) {
    let len = decimal_digits(n);
    // SAFETY: only ASCII digits are appended.
    let out = unsafe { out.as_mut_vec() };
    out.reserve(len);
    // SAFETY: `reserve` made room for the `len` bytes that `write_digits` stores from
    // `out.len()` on; they are all written before `set_len` exposes them.
    unsafe {
        write_digits(out.as_mut_ptr().add(out.len()), len, n);
        out.set_len(out.len() + len);
    }
}

/// Appends `n`'s digits with a point before the last `decimals` of them (1 to 4), zero-padded
/// to more digits than that: `(1255, 2)` is `12.55`, `(5, 3)` is `0.005`.
///
/// The integer part, the point and the fraction are each stored in their place, with nothing
/// read back: writing all the digits first and sliding the last few right loads bytes still in
/// the store buffer, a stall this module avoids everywhere else.
#[inline]
pub(crate) fn append_with_point(out: &mut TextBuf<'_>, n: u64, decimals: u32) {
    debug_assert!((1..=4).contains(&decimals));
    // Divisions by constants: a multiply and a shift each.
    let (whole, fraction) = match decimals {
        1 => (n / 10, n % 10),
        2 => (n / 100, n % 100),
        3 => (n / 1_000, n % 1_000),
        _ => (n / 10_000, n % 10_000),
    };
    let len = decimal_digits(whole);
    let pair = |i: u64| {
        let i = 2 * i as usize;
        u16::from_le_bytes([PAIRS[i], PAIRS[i + 1]])
    };
    // The fraction's four digits, zero-padded, in memory order.
    let digits = u32::from(pair(fraction / 100)) | u32::from(pair(fraction % 100)) << 16;
    // SAFETY: only ASCII digits and a point are appended.
    let out = unsafe { out.as_mut_vec() };
    out.reserve(len + 5);
    // SAFETY: `reserve` made room for `len + 5` bytes from `out.len()` on: `write_digits`
    // stores `len` digits, then the point at `len` and at most 4 fraction digits after it, all
    // before `set_len` exposes the `len + 1 + decimals` bytes.
    unsafe {
        let start = out.as_mut_ptr().add(out.len());
        write_digits(start, len, whole);
        let point = start.add(len);
        *point = b'.';
        let at = point.add(1);
        match decimals {
            1 => *at = (digits >> 24) as u8,
            2 => at.cast::<u16>().write_unaligned((digits >> 16) as u16),
            3 => {
                at.cast::<u16>().write_unaligned((digits >> 8) as u16);
                *at.add(2) = (digits >> 24) as u8;
            }
            _ => at.cast::<u32>().write_unaligned(digits),
        }
        out.set_len(out.len() + len + 1 + decimals as usize);
    }
}

/// Writes the `len` decimal digits of `n` at `start`, from the last place back to the first.
///
/// # Safety
/// `len` is `decimal_digits(n)` and `start` is writable for `len` bytes.
#[inline(always)]
unsafe fn write_digits(start: *mut u8, len: usize, n: u64) {
    // SAFETY: `n` has exactly `len` digits (1 for zero), and the loop writes one byte per
    // digit, from the last place back to the first, so every store lands in
    // `[start, start + len)`. Reads are of `PAIRS` at `2 * r`, `r < 100` (`high` and `low` of
    // a remainder below 10,000 are both below 100).
    unsafe {
        let mut end = start.add(len);
        let mut n = n;
        // Four digits per step: one 64-bit division by a constant, then two pairs from a
        // 32-bit remainder, where two steps of two digits took two 64-bit divisions.
        while n >= 10_000 {
            let r = (n % 10_000) as u32;
            n /= 10_000;
            let (high, low) = ((r / 100) as usize, (r % 100) as usize);
            end = end.sub(4);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(2 * high), end, 2);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(2 * low), end.add(2), 2);
        }
        if n >= 100 {
            let r = (n % 100) as usize;
            n /= 100;
            end = end.sub(2);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(2 * r), end, 2);
        }
        if n >= 10 {
            end = end.sub(2);
            std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(2 * n as usize), end, 2);
        } else {
            end = end.sub(1);
            *end = b'0' + n as u8;
        }
        debug_assert_eq!(end, start);
    }
}

/// Appends `n` as `{}` writes it: a `-` for a negative value, then its magnitude's digits.
#[inline]
pub(crate) fn append_i64(out: &mut TextBuf<'_>, n: i64) {
    if n < 0 {
        out.push('-');
    }
    append_u64(out, n.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn digit_counts_at_every_power_of_ten() {
        assert_eq!(decimal_digits(0), 1);
        assert_eq!(decimal_digits(u64::MAX), 20);
        for (i, &power) in POWERS_OF_TEN.iter().enumerate() {
            assert_eq!(decimal_digits(power), i + 1, "{power}");
            assert_eq!(decimal_digits(power - 1), i.max(1), "{}", power - 1);
            assert_eq!(decimal_digits(power + 1), i + 1, "{}", power + 1);
        }
        for bits in 0..64 {
            let n = 1u64 << bits;
            assert_eq!(decimal_digits(n), n.to_string().len(), "{n}");
            assert_eq!(
                decimal_digits(n - 1),
                (n - 1).to_string().len().max(1),
                "{}",
                n - 1
            );
        }
    }

    #[test]
    fn every_length_and_edge() {
        let mut values = vec![0u64, 1, 9, 10, 99, 100, 101, u64::MAX, u64::MAX - 1];
        for p in 1..20 {
            let power = 10u64.pow(p);
            values.extend([power - 1, power, power + 1]);
        }
        for v in values {
            let mut out = String::from("x=");
            append_u64(&mut TextBuf::of_string(&mut out), v);
            assert_eq!(out, format!("x={v}"));
        }
        for v in [0i64, -1, 1, -9, -10, i64::MIN, i64::MAX, i64::MIN + 1] {
            let mut out = String::new();
            append_i64(&mut TextBuf::of_string(&mut out), v);
            assert_eq!(out, v.to_string());
        }
    }

    #[test]
    fn points_before_the_last_digits() {
        for (n, decimals, text) in [
            (15u64, 1, "1.5"),
            (10, 1, "1.0"),
            (12345, 4, "1.2345"),
            (10001, 4, "1.0001"),
            (123, 2, "1.23"),
            (1000, 3, "1.000"),
            (u64::MAX, 4, "1844674407370955.1615"),
            (u64::MAX, 1, "1844674407370955161.5"),
            (5, 3, "0.005"),
            (0, 1, "0.0"),
            (25, 2, "0.25"),
            (9999, 4, "0.9999"),
        ] {
            let mut out = String::from("v=");
            append_with_point(&mut TextBuf::of_string(&mut out), n, decimals);
            assert_eq!(out, format!("v={text}"), "{n} {decimals}");
        }
    }

    proptest! {
        #[test]
        fn a_point_is_a_division_by_a_power_of_ten(n in any::<u64>(), small in 0u64..100_000, decimals in 1u32..=4) {
            for n in [n, small] {
                let scale = POWERS_OF_TEN[decimals as usize];
                let mut out = String::from("v=");
                append_with_point(&mut TextBuf::of_string(&mut out), n, decimals);
                let expected = format!("v={}.{:0width$}", n / scale, n % scale, width = decimals as usize);
                prop_assert_eq!(out, expected);
            }
        }
    }

    proptest! {
        #[test]
        fn writes_what_display_writes(u in any::<u64>(), i in any::<i64>(), prefix in ".{0,8}") {
            let mut out = prefix.clone();
            append_u64(&mut TextBuf::of_string(&mut out), u);
            out.push(' ');
            append_i64(&mut TextBuf::of_string(&mut out), i);
            prop_assert_eq!(out, format!("{prefix}{u} {i}"));
        }
    }
}
