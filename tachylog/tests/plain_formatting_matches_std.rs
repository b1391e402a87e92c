//! The back end's fast path (numbers, floats, `bool`, `char` and text written without
//! `core::fmt`) is byte for byte what `format!` writes, for every type it handles and every
//! spec it takes (`{}`, `{:?}`, `{:.N}`), on edge values and on random bit patterns. The
//! records go through the real logger: the macro's table, the ring, the renderers.

use proptest::prelude::*;
use std::sync::Mutex;

mod common;
use common::CollectLines;

/// Logs with tachylog and records what `format!` makes of the same call.
macro_rules! both {
    ($expected:expr, $($arg:tt)+) => {{
        tachylog::info!($($arg)+);
        $expected.lock().unwrap().push(format!($($arg)+));
    }};
}

fn f64_edges() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.2,
        0.3,
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        1e-4,
        9.999e-5,
        1e-5,
        1e-7,
        1e15,
        1e16,
        9.999999999999998e15,
        1e17,
        1e20,
        1e21,
        1e22,
        1e23,
        123456789.0,
        4503599627370496.0,
        9007199254740992.0,
        9007199254740993.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        5e-324,
        2.225073858507201e-308,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1 + 0.2,
        1.0 / 3.0,
        2.0 / 3.0,
        299792458.0,
        6.02214076e23,
        1.005,
        2.675,
        0.045,
        1.0000000000000002,
        0.9999999999999999,
    ];
    let negatives: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negatives);
    v
}

fn f32_edges() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        0.1,
        0.2,
        0.5,
        2.5,
        1e-4,
        9.999e-5,
        1e-7,
        1e15,
        1e16,
        16777216.0,
        16777217.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        1e-45,
        f32::NAN,
        f32::INFINITY,
        1.0 / 3.0,
        3.4028235e38,
        1.1754944e-38,
    ];
    let negatives: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(negatives);
    v
}

#[test]
fn the_fast_path_writes_what_format_writes() {
    let lines = CollectLines::default();
    let guard = tachylog::builder()
        .sink(lines.clone())
        .pattern("{message}")
        .escape_control_chars(false)
        .init()
        .unwrap();
    let expected = Mutex::new(Vec::new());

    // Integers: every width and both ends.
    both!(
        expected,
        "{} {} {} {} {} {}",
        u8::MAX,
        u16::MAX,
        u32::MAX,
        u64::MAX,
        u128::MAX,
        usize::MAX
    );
    both!(
        expected,
        "{} {} {} {} {} {}",
        i8::MIN,
        i16::MIN,
        i32::MIN,
        i64::MIN,
        i128::MIN,
        isize::MIN
    );
    both!(
        expected,
        "{:?} {:?} {:?} {:?}",
        0u8,
        -1i32,
        i64::MIN,
        u128::MAX
    );
    // Integers with a precision: `core::fmt` decides (it ignores it).
    both!(expected, "{:.3} {:.0}", 5u32, -7i64);
    // bool, char, text.
    both!(
        expected,
        "{} {:?} {} {:?} {:.2}",
        true,
        false,
        'é',
        true,
        false
    );
    both!(expected, "{} {} {} {}", 'a', '\u{10FFFF}', '✓', '\0');
    both!(
        expected,
        "[{}] [{}] [{}] [{:.3}]",
        "",
        "multi-byte ✓ é 日本",
        String::from("owned"),
        "truncated"
    );

    // Floats: every edge value through every spec.
    for v in f64_edges() {
        both!(
            expected,
            "{v} {v:?} {v:.0} {v:.1} {v:.2} {v:.3} {v:.6} {v:.10} {v:.17} {v:.20} {v:.40}"
        );
    }
    for v in f32_edges() {
        both!(
            expected,
            "{v} {v:?} {v:.0} {v:.1} {v:.2} {v:.3} {v:.6} {v:.9} {v:.20}"
        );
    }

    // Random bit patterns (every float, not only "nice" ones) and random precisions.
    proptest!(ProptestConfig::with_cases(3000), |(bits in any::<u64>(), bits32 in any::<u32>(), n in 0usize..=24)| {
        let v = f64::from_bits(bits);
        let w = f32::from_bits(bits32);
        both!(expected, "{v} {v:?} {v:.n$} {w} {w:?} {w:.n$}");
    });
    // Random values of ordinary magnitudes, where ties and carries happen.
    proptest!(ProptestConfig::with_cases(3000), |(v in -1e6f64..1e6, cents in -100_000i64..100_000, n in 0usize..=8)| {
        let c = cents as f64 / 100.0;
        let q = cents as f64 / 1000.0;
        both!(expected, "{v} {v:?} {v:.n$} {c} {c:.1} {c:.2} {q:.2}");
    });
    proptest!(ProptestConfig::with_cases(1000), |(a in any::<u64>(), b in any::<i64>(), c in any::<u128>(), d in any::<i128>(), e in any::<char>(), s in ".{0,30}", t in any::<bool>())| {
        both!(expected, "{a} {b} {c} {d} {e} {s} {t} {a:?} {b:?} {t:?}");
    });

    tachylog::flush();
    let got = lines.lines();
    drop(guard);
    let expected = expected.into_inner().unwrap();
    assert_eq!(got.len(), expected.len());
    let mismatches: Vec<String> = got
        .iter()
        .zip(&expected)
        .filter(|(g, e)| g != e)
        .map(|(g, e)| format!("tachylog: {g}\nformat!:  {e}"))
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} lines differ:\n{}",
        mismatches.len(),
        expected.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );
}
