//! Every message comes out exactly as `format!` renders the same format string and arguments:
//! every argument kind (raw text, `Copy` values, opted-in types, the caller-side fallback),
//! every spec feature (width, precision, alignment, fill, sign, `#`, `0`, `$` and `.*` counts,
//! every formatting trait), inline captures and named arguments, including randomised values.

use proptest::prelude::*;
use std::sync::{Arc, Mutex};

mod common;
use common::CollectLines;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    x: i32,
    y: i32,
}
impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}
impl tachylog::CopyArg for Point {}

/// Not `CopyArg`: goes through the caller-side fallback.
#[derive(Debug)]
struct Heap {
    names: Vec<String>,
}
impl std::fmt::Display for Heap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.names.join("+"))
    }
}

/// Logs with tachylog and records what `format!` makes of the same call.
macro_rules! both {
    ($expected:ident, $($arg:tt)+) => {{
        tachylog::info!($($arg)+);
        $expected.push(format!($($arg)+));
    }};
}

#[test]
fn messages_match_format() {
    let lines = CollectLines::default();
    let guard = tachylog::builder()
        .sink(lines.clone())
        .pattern("{message}")
        .escape_control_chars(false)
        .init()
        .unwrap();
    let mut expected: Vec<String> = Vec::new();

    let (id, ms, path) = (42u64, 1.23456f64, "/index.html");
    both!(expected, "request {} took {:.3} ms: {}", id, ms, path);
    both!(expected, "static text with {{braces}}");
    let user = String::from("ada");
    let addr: std::net::SocketAddr = "127.0.0.1:80".parse().unwrap();
    both!(expected, "user {user} from {addr:?} and {addr}");
    both!(
        expected,
        "{:>8}|{:<8}|{:^8}|{:*^9}|{:+}|{:#x}|{:#X}|{:#o}|{:#b}|{:08.2}|{:e}|{:E}",
        "r",
        "l",
        "c",
        "fill",
        5,
        255u8,
        255u16,
        8,
        5u8,
        -5.55555,
        1234.5f32,
        0.00012
    );
    both!(
        expected,
        "[{:>1$}] [{:.*}] [{:>w$.p$}] [{0}]",
        "x",
        6,
        1.23456,
        9.87654,
        w = 10,
        p = 1
    );
    both!(expected, "named {a} {b:?} {a}", a = 1, b = "two");
    both!(expected, "{0} {1} {0} {}", 'a', true);
    both!(
        expected,
        "{} {:?} {:5}|{:<5}|",
        Point { x: 1, y: -2 },
        Point { x: 3, y: 4 },
        'c',
        true
    );
    let heap = Heap {
        names: vec!["a".into(), "b".into()],
    };
    both!(
        expected,
        "{} {:?} [{:>7}] {:#?}",
        heap,
        heap,
        heap,
        vec![1, 2]
    );
    both!(
        expected,
        "{:?} {:?} {:?} {:?}",
        Some(5u8),
        None::<u32>,
        (1u8, 'x'),
        [1u16, 2, 3]
    );
    // Lists travel element by element (`ListArg`) and format as `{:?}` of the slice.
    let names = vec![
        String::from("a"),
        String::from("b \"quoted\""),
        String::new(),
    ];
    let strs: &[&str] = &["x", "y\n"];
    let floats = [0.1f64, -0.0, 1e20];
    let boxed: Box<[u16]> = vec![1, 2, 3].into_boxed_slice();
    let empty: Vec<u64> = Vec::new();
    both!(
        expected,
        "{:?} {:?} {:?} {:?} {:?}",
        names,
        strs,
        floats,
        boxed,
        empty
    );
    both!(
        expected,
        "{:#?} {:x?} {:?}",
        &names[..1],
        [255u8, 16],
        vec![Point { x: 1, y: 2 }]
    );
    both!(
        expected,
        "{:?} {:?}",
        vec![Some(1u8), None],
        [['a', 'b'], ['c', 'd']]
    );
    both!(expected, "{} {} {}", u128::MAX, i128::MIN, usize::MAX);
    both!(
        expected,
        "{} {} {} {}",
        f64::NAN,
        f64::INFINITY,
        -0.0f64,
        f32::MIN_POSITIVE
    );
    both!(
        expected,
        "{:?} {:?}",
        std::time::Duration::from_millis(1500),
        std::cmp::Ordering::Less
    );
    let cow: std::borrow::Cow<str> = "cow".into();
    let boxed: Box<str> = "boxed".into();
    let arc: Arc<str> = "arc".into();
    both!(
        expected,
        "{} {} {} {} {:?}",
        cow,
        boxed,
        arc,
        &&"refref",
        &user
    );
    let n = 7u32;
    let r = &n;
    both!(expected, "{} {:>4} {:?}", r, &r, &&n);
    both!(expected, "unicode ✓ {} {:^5}|", "é", "ü");
    both!(expected, "{:p}", &n as *const u32);
    // One call site in a generic function, several argument types.
    log_generic(7u8, &mut expected);
    log_generic("text", &mut expected);
    log_generic(-1.5f64, &mut expected);
    log_generic(Point { x: 1, y: 2 }, &mut expected);
    log_generic(String::from("owned"), &mut expected);
    log_generic(
        Heap {
            names: vec!["h".into()],
        },
        &mut expected,
    );
    log_generic(7u8, &mut expected);

    let randomised = Mutex::new(Vec::new());
    proptest!(ProptestConfig::with_cases(200), |(a in any::<u64>(), b in any::<i16>(), c in any::<f64>(), d in ".{0,40}", e in any::<char>(), w in 0usize..20)| {
        tachylog::info!("{a} {b:+} {c:?} {c:.3} {d:?} [{d:>w$}] {e:?}");
        randomised.lock().unwrap().push(format!("{a} {b:+} {c:?} {c:.3} {d:?} [{d:>w$}] {e:?}"));
    });
    proptest!(ProptestConfig::with_cases(200), |(texts in proptest::collection::vec(".{0,12}", 0..6), numbers in proptest::collection::vec(any::<i32>(), 0..8), floats in proptest::collection::vec(any::<f32>(), 0..4))| {
        tachylog::info!("{texts:?} {numbers:?} {floats:?} {:?}", &texts[..texts.len() / 2]);
        randomised.lock().unwrap().push(format!("{texts:?} {numbers:?} {floats:?} {:?}", &texts[..texts.len() / 2]));
    });
    expected.extend(randomised.into_inner().unwrap());

    tachylog::flush();
    let got = lines.lines();
    drop(guard);
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
}

/// A log call in a generic function is one call site (one `static`) for every type it is
/// instantiated with; each record carries how to read its own arguments.
fn log_generic<T: std::fmt::Display + std::fmt::Debug>(value: T, expected: &mut Vec<String>) {
    tachylog::info!("generic {} {:?}", value, value);
    expected.push(format!("generic {} {:?}", value, value));
}
