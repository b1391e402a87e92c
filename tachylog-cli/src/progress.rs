//! How far a long read has come, on standard error, when that is a terminal: one line
//! rewritten in place about four times a second, erased when the read ends. Never shown for
//! small inputs (they end before anyone would look), for `--follow` (it has no end), or when
//! standard error goes to a file or a pipe (a log of progress lines helps nobody).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// The bytes of `files` together, as far as they can be known (one that cannot be opened
/// counts 0: its error comes when it is read).
pub(crate) fn total_bytes(files: &[std::path::PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .sum()
}

/// Inputs smaller than this read in well under a second: no progress line.
const SHOWN_FROM_BYTES: u64 = 64 << 20;

/// Records between two looks at the clock: the check costs nothing per record.
const RECORDS_PER_CHECK: u32 = 1 << 14;

/// The time between two redraws.
const REDRAW: Duration = Duration::from_millis(250);

/// A progress line over `total` bytes.
pub(crate) struct Progress {
    out: Option<Box<dyn Write>>,
    total: u64,
    countdown: u32,
    next_redraw: Instant,
    shown: bool,
}

impl Progress {
    /// A progress line on standard error for reading `total` bytes, or one that shows
    /// nothing (standard error not a terminal, or a small input).
    pub(crate) fn on_stderr(total: u64) -> Self {
        let stderr = std::io::stderr();
        let out: Option<Box<dyn Write>> = (total >= SHOWN_FROM_BYTES && stderr.is_terminal())
            .then(|| Box::new(stderr) as Box<dyn Write>);
        Self::to(out, total)
    }

    /// One that shows nothing.
    pub(crate) fn hidden() -> Self {
        Self::to(None, 0)
    }

    fn to(out: Option<Box<dyn Write>>, total: u64) -> Self {
        Progress {
            out,
            total,
            countdown: RECORDS_PER_CHECK,
            next_redraw: Instant::now() + REDRAW,
            shown: false,
        }
    }

    /// One more record read; `done` gives the bytes read so far, asked for only when a redraw
    /// may be due.
    #[inline]
    pub(crate) fn record(&mut self, done: impl FnOnce() -> u64) {
        if self.out.is_none() {
            return;
        }
        self.countdown -= 1;
        if self.countdown > 0 {
            return;
        }
        self.countdown = RECORDS_PER_CHECK;
        let now = Instant::now();
        if now >= self.next_redraw {
            self.next_redraw = now + REDRAW;
            let line = line(done(), self.total);
            if let Some(out) = &mut self.out {
                let _ = write!(out, "\r\x1b[K{line}");
                let _ = out.flush();
                self.shown = true;
            }
        }
    }

    /// Erases the line, before a message on standard error or at the end.
    pub(crate) fn erase(&mut self) {
        if let (Some(out), true) = (&mut self.out, self.shown) {
            let _ = write!(out, "\r\x1b[K");
            let _ = out.flush();
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.erase();
    }
}

/// `tachylog: 42 % of 1.2 GB read`.
fn line(done: u64, total: u64) -> String {
    let percent = (done.min(total) as f64 * 100.0 / total.max(1) as f64).floor();
    format!(
        "tachylog: {percent:.0} % of {:.1} GB read",
        total as f64 / 1e9
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read after handing it over.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_line_says_how_much_of_what_total() {
        assert_eq!(line(0, 2_000_000_000), "tachylog: 0 % of 2.0 GB read");
        assert_eq!(line(999, 1_000), "tachylog: 99 % of 0.0 GB read");
        assert_eq!(line(5_000, 1_000), "tachylog: 100 % of 0.0 GB read");
    }

    #[test]
    fn redraws_in_place_and_erases_itself() {
        let shared = Shared::default();
        let mut progress = Progress::to(Some(Box::new(shared.clone())), 1_000_000_000);
        progress.next_redraw = Instant::now();
        for _ in 0..RECORDS_PER_CHECK {
            progress.record(|| 500_000_000);
        }
        drop(progress);
        let written = String::from_utf8(shared.0.lock().unwrap().clone()).unwrap();
        assert_eq!(written, "\r\x1b[Ktachylog: 50 % of 1.0 GB read\r\x1b[K");
    }

    #[test]
    fn hidden_asks_for_nothing() {
        let mut progress = Progress::hidden();
        for _ in 0..2 * RECORDS_PER_CHECK {
            progress.record(|| unreachable!("a hidden line never asks how far"));
        }
    }

    #[test]
    fn a_small_input_shows_nothing_even_at_a_terminal() {
        assert!(Progress::on_stderr(SHOWN_FROM_BYTES - 1).out.is_none());
    }
}
