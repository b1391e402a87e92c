//! Standard output and standard error.
//!
//! Lines are buffered here and written with `write(2)` on the raw descriptor in large batches,
//! bypassing `std::io::Stdout`'s line buffering (one system call per line) and its lock. On
//! Windows the batch goes through `std::io::Stdout` in one call instead: a console takes
//! UTF-16 (`WriteConsoleW`), which std converts to. A slow terminal slows only the back end;
//! callers keep logging into their rings.
//!
//! Colour (feature `color`; without it the console is never coloured): the level is coloured
//! when the stream is a terminal (`ColorChoice::Auto`), never when it is a pipe or a file;
//! `NO_COLOR` turns it off and `CLICOLOR_FORCE` on (<https://no-color.org>,
//! <https://bixense.com/clicolors/>). On a Windows console, colour needs its virtual-terminal
//! mode, switched on when the console is checked; a console that refuses it counts as no
//! terminal, so it gets no escape codes.

use super::{Line, Sink};
use std::io::{self, Write};

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
        let result = write_stream(self.fd, &self.buf);
        self.buf.clear();
        result
    }
}

#[cfg(unix)]
fn write_stream(fd: i32, bytes: &[u8]) -> io::Result<()> {
    use std::os::fd::FromRawFd;
    // SAFETY: the descriptor is the process's stdout or stderr, open for its lifetime; the
    // `File` is never dropped, so it is never closed here.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    file.write_all(bytes)
}

/// One `write_all` of whole lines: std's line writer passes them straight through.
#[cfg(windows)]
fn write_stream(fd: i32, bytes: &[u8]) -> io::Result<()> {
    if fd == 1 {
        let mut out = io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()
    } else {
        io::stderr().lock().write_all(bytes)
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
            fn reads_message(&self, _: crate::codec::sealed::Internal) -> bool {
                false
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

/// Whether the console sinks added with [`Builder::stdout`](crate::Builder::stdout) and
/// [`Builder::stderr`](crate::Builder::stderr) colour the level.
///
/// ```
/// let guard = tachylog::builder().stdout().color(tachylog::ColorChoice::Never).init().unwrap();
/// # drop(guard);
/// ```
#[cfg(feature = "color")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour when the stream is a terminal (and `TERM` is not `dumb`), unless `NO_COLOR` is
    /// set; always when `CLICOLOR_FORCE` is set to anything but `0`. The default.
    #[default]
    Auto,
    /// Always colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

/// Decides colour for descriptor `fd` under `choice`, reading the environment through `env`.
#[cfg(feature = "color")]
pub(crate) fn use_color(
    choice: ColorChoice,
    is_terminal: bool,
    env: impl Fn(&str) -> Option<String>,
) -> bool {
    match choice {
        ColorChoice::Never => false,
        ColorChoice::Always => true,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else {
                is_terminal && env("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

/// Whether descriptor `fd` (1 or 2) is a terminal.
#[cfg(all(feature = "color", unix))]
pub(crate) fn is_terminal(fd: i32) -> bool {
    // SAFETY: `isatty` only inspects the descriptor; an invalid one yields 0.
    unsafe { libc::isatty(fd) == 1 }
}

/// Whether standard output (`fd` 1) or error (2) is a terminal that understands ANSI colours:
/// a console whose virtual-terminal mode is on or could be switched on (Windows 10 and later),
/// or a terminal emulator's pipe (mintty, which std recognises).
#[cfg(all(feature = "color", windows))]
pub(crate) fn is_terminal(fd: i32) -> bool {
    use std::io::IsTerminal;
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::{
        GetConsoleMode, SetConsoleMode, ENABLE_VIRTUAL_TERMINAL_PROCESSING,
    };
    let (terminal, handle) = if fd == 1 {
        (io::stdout().is_terminal(), io::stdout().as_raw_handle())
    } else {
        (io::stderr().is_terminal(), io::stderr().as_raw_handle())
    };
    if !terminal {
        return false;
    }
    let mut mode = 0;
    // SAFETY: `handle` is the process's standard handle; `mode` is a valid out-pointer. A
    // handle that is not a console makes the call fail, and nothing is changed.
    if unsafe { GetConsoleMode(handle, &mut mode) } == 0 {
        return true; // a terminal emulator's pipe: it reads ANSI itself
    }
    mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
        // SAFETY: as above; only the one output mode flag is added.
        || unsafe { SetConsoleMode(handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) } != 0
}

#[cfg(all(test, feature = "color"))]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn auto_follows_the_terminal_and_the_conventions() {
        assert!(use_color(ColorChoice::Auto, true, env(&[])));
        assert!(!use_color(ColorChoice::Auto, false, env(&[])));
        assert!(!use_color(
            ColorChoice::Auto,
            true,
            env(&[("NO_COLOR", "1")])
        ));
        assert!(
            use_color(ColorChoice::Auto, true, env(&[("NO_COLOR", "")])),
            "empty NO_COLOR is unset"
        );
        assert!(use_color(
            ColorChoice::Auto,
            false,
            env(&[("CLICOLOR_FORCE", "1")])
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            false,
            env(&[("CLICOLOR_FORCE", "0")])
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            false,
            env(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")])
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            true,
            env(&[("TERM", "dumb")])
        ));
        assert!(use_color(
            ColorChoice::Always,
            false,
            env(&[("NO_COLOR", "1")])
        ));
        assert!(!use_color(
            ColorChoice::Never,
            true,
            env(&[("CLICOLOR_FORCE", "1")])
        ));
    }
}
