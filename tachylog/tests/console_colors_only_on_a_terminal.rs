//! The console sink colours the level on a real terminal (a pseudo-terminal here) and never in
//! a pipe, and honours `NO_COLOR` and `CLICOLOR_FORCE`; without the `color` feature it never
//! colours. Each case is a child process (the test itself, run again) whose standard output is
//! the pty or a pipe.
// Unix only: a pseudo-terminal (`openpty`) stands in for the terminal; Windows consoles have none.
#![cfg(unix)]

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCENARIO: &str = "TACHYLOG_TEST_COLOR_CHILD";
#[cfg(feature = "color")]
const GREEN_INFO: &str = "\u{1b}[32mINFO \u{1b}[0m";

/// In the child (the test run again by [`run`]): logs one line to stdout and says so, and the
/// test returns at once. In a normal run: false, and the test spawns its children.
fn child_logs_one_line_to_stdout() -> bool {
    if std::env::var_os(SCENARIO).is_none() {
        return false;
    }
    let guard = tachylog::builder().stdout().init().unwrap();
    tachylog::info!("hello terminal");
    drop(guard);
    true
}

/// Runs the test named `test` again as a child, with stdout on a new pseudo-terminal (`pty`)
/// or a pipe, with `env` set.
fn run<V: AsRef<std::ffi::OsStr>>(test: &str, pty: bool, env: &[(&str, V)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, "1")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm")
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    if !pty {
        let output = command.stdout(Stdio::piped()).output().unwrap();
        assert!(output.status.success());
        return String::from_utf8_lossy(&output.stdout).into_owned();
    }
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: `openpty` fills the two descriptors; the null pointers ask for no name and default
    // terminal settings.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by `openpty` and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = command.stdout(Stdio::from(slave)).spawn().unwrap();
    // `Command` holds the parent's copy of the slave: drop it, so that the master reports EIO
    // once the child has exited and closed its copy.
    drop(command);
    // SAFETY: `fcntl` on a descriptor owned here; non-blocking so every read below returns.
    unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let mut master = std::fs::File::from(master);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    // Reads until EIO, which the master reports once the child has exited and closed the last
    // slave descriptor (after everything it wrote); `poll` waits for output or that hang-up.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match master.read(&mut buf) {
            Ok(n) if n > 0 => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                assert!(
                    !left.is_zero(),
                    "the child's terminal still open after 30 s: {:?}",
                    String::from_utf8_lossy(&out)
                );
                let mut ready = libc::pollfd {
                    fd: master.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one `pollfd` for a descriptor owned here; the timeout is in ms.
                unsafe { libc::poll(&mut ready, 1, left.as_millis().min(1_000) as libc::c_int) };
            }
            _ => break, // EIO (or end of file): the last slave descriptor is closed
        }
    }
    assert!(child.wait().unwrap().success());
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(feature = "color")]
#[test]
fn a_terminal_gets_colour_and_a_pipe_does_not() {
    if child_logs_one_line_to_stdout() {
        return;
    }
    const NAME: &str = "a_terminal_gets_colour_and_a_pipe_does_not";
    let terminal = run::<&str>(NAME, true, &[]);
    assert!(
        terminal.contains(GREEN_INFO) && terminal.contains("hello terminal"),
        "{terminal:?}"
    );
    let pipe = run::<&str>(NAME, false, &[]);
    assert!(
        pipe.contains("hello terminal") && !pipe.contains('\u{1b}'),
        "{pipe:?}"
    );
}

#[cfg(feature = "color")]
#[test]
fn no_color_and_clicolor_force_are_respected() {
    if child_logs_one_line_to_stdout() {
        return;
    }
    const NAME: &str = "no_color_and_clicolor_force_are_respected";
    let off = run(NAME, true, &[("NO_COLOR", "1")]);
    assert!(
        off.contains("hello terminal") && !off.contains('\u{1b}'),
        "{off:?}"
    );
    let forced = run(NAME, false, &[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains(GREEN_INFO), "{forced:?}");
    let dumb = run(NAME, true, &[("TERM", "dumb")]);
    assert!(!dumb.contains('\u{1b}'), "{dumb:?}");
    // Set is set, whatever the value: bytes that are not UTF-8 too.
    use std::os::unix::ffi::OsStrExt;
    let latin1 = run(
        NAME,
        true,
        &[("NO_COLOR", std::ffi::OsStr::from_bytes(b"\xe9"))],
    );
    assert!(
        latin1.contains("hello terminal") && !latin1.contains('\u{1b}'),
        "{latin1:?}"
    );
}

#[cfg(not(feature = "color"))]
#[test]
fn without_the_color_feature_a_terminal_gets_no_colour() {
    if child_logs_one_line_to_stdout() {
        return;
    }
    const NAME: &str = "without_the_color_feature_a_terminal_gets_no_colour";
    for (pty, env) in [(true, &[][..]), (true, &[("CLICOLOR_FORCE", "1")][..])] {
        let out = run(NAME, pty, env);
        assert!(
            out.contains("hello terminal") && !out.contains('\u{1b}'),
            "{out:?}"
        );
    }
}
