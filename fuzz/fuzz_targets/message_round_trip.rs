//! Arbitrary argument values through `info!`'s encoding and the back end's decoding and
//! rendering must come out exactly as `format!` renders them: every kind of argument the
//! crate copies (integers, floats, `bool`, `char`, `&str`) under a few specs. The logger is
//! made once per process and writes each message alone (`{message}`, no escaping) to a sink
//! that keeps the last line; `flush()` waits for it.

#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;

#[derive(Clone, Default)]
struct LastLines(Arc<Mutex<Vec<String>>>);

impl tachylog::Sink for LastLines {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        let text = String::from_utf8(line.text.to_vec()).expect("lines are UTF-8");
        let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
        self.0.lock().unwrap().push(text);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn lines() -> &'static LastLines {
    static LINES: OnceLock<LastLines> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines = LastLines::default();
        let guard = tachylog::builder()
            .sink(lines.clone())
            .pattern("{message}")
            .escape_control_chars(false)
            .init()
            .expect("the logger starts");
        // The logger lives as long as the fuzzing process.
        std::mem::forget(guard);
        lines
    })
}

/// Logs with tachylog, formats with `format!`, and compares.
macro_rules! same {
    ($($arg:tt)+) => {{
        let lines = lines();
        lines.0.lock().unwrap().clear();
        tachylog::info!($($arg)+);
        tachylog::flush();
        let expected = format!($($arg)+);
        let got = lines.0.lock().unwrap().clone();
        assert_eq!(got, [expected], "format string {:?}", stringify!($($arg)+));
    }};
}

fuzz_target!(|input: (u8, u64, i64, f64, bool, char, &str, u16)| {
    let (which, u, i, f, b, c, s, n) = input;
    match which % 12 {
        0 => same!("{} {} {} {} {} {}", u, i, f, b, c, s),
        1 => same!("{:>8}|{:<8}|{:^8}|{:>8}|{:>8}", u, i, f, c, s),
        2 => same!("{:.3}|{:.3}|{:.0}|{:.1}", f, s, f, f),
        3 => same!("{:x}|{:X}|{:#x}|{:o}|{:b}|{:#b}", u, i, n, u, i, n),
        4 => same!("{:?}|{:?}|{:?}|{:?}|{:?}|{:?}", u, i, f, b, c, s),
        5 => same!("{:e}|{:E}|{:e}", f, f, u),
        6 => same!("{:+}|{:08}|{:+08.2}|{:#010x}", i, i, f, u),
        7 => same!("{:*^9}|{:-<6}|{:>w$}", s, c, s, w = usize::from(n % 64)),
        8 => same!(
            "[{:>w$.p$}]",
            f,
            w = usize::from(n % 40),
            p = usize::from(n % 13)
        ),
        9 => same!("{s} then {c:?} and {b}: {f:?}"),
        10 => same!("{:5}|{:<5}|{:^5?}", b, b, c),
        _ => same!("{:.*}|{:10.3?}", usize::from(n % 20), f, s),
    }
});
