//! Standard output and standard error.
//!
//! Lines are buffered here and written with `write(2)` on the raw descriptor in large batches,
//! bypassing `std::io::Stdout`'s line buffering (one system call per line) and its lock. A slow
//! terminal slows only the back end; callers keep logging into their rings.

use super::{Line, Sink};
use std::fs::File;
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

const BATCH: usize = 64 * 1024;

struct RawFd {
    fd: i32,
    buf: Vec<u8>,
}

impl RawFd {
    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(line);
        if self.buf.len() >= BATCH {
            return self.flush();
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // SAFETY: the descriptor is the process's stdout or stderr, open for its lifetime; the
        // `File` is never dropped, so it is never closed here.
        let mut file = ManuallyDrop::new(unsafe { File::from_raw_fd(self.fd) });
        let result = file.write_all(&self.buf);
        self.buf.clear();
        result
    }
}

macro_rules! console_sink {
    ($(#[$doc:meta])* $name:ident, $fd:expr, $describe:expr) => {
        $(#[$doc])*
        pub struct $name(RawFd);

        impl $name {
            #[doc = concat!("A sink for ", $describe, ".")]
            pub fn new() -> Self {
                $name(RawFd {
                    fd: $fd,
                    buf: Vec::with_capacity(BATCH),
                })
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl Sink for $name {
            fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
                self.0.write_line(line.text)
            }
            fn flush(&mut self) -> io::Result<()> {
                self.0.flush()
            }
            fn describe(&self) -> String {
                $describe.into()
            }
        }
    };
}

console_sink!(
    /// Writes lines to standard output.
    ///
    /// ```
    /// let guard = tachylog::builder().sink(tachylog::Stdout::new()).init().unwrap();
    /// # drop(guard);
    /// ```
    Stdout, 1, "stdout"
);

console_sink!(
    /// Writes lines to standard error.
    ///
    /// ```
    /// let guard = tachylog::builder().sink(tachylog::Stderr::new()).init().unwrap();
    /// # drop(guard);
    /// ```
    Stderr, 2, "stderr"
);
