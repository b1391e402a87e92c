//! Permission errors on log files: a clear error at startup, and at run time a report on
//! stderr, counted losses, and writing that resumes by itself once the directory is writable.
//!
//! Root ignores directory permissions, so when the tests run as root the scenario runs in a
//! child process that first drops to the `nobody` user: the errors are the kernel's own.
// Unix only: permission errors are made with Unix modes (`chmod`) and a dropped root.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// In the child: gives up root, if it has it, so that permissions apply.
fn drop_root() {
    // SAFETY: plain system calls with constant arguments; a failure is checked.
    unsafe {
        if libc::geteuid() == 0 {
            assert_eq!(libc::setgid(65534), 0, "setgid(nobody)");
            assert_eq!(libc::setuid(65534), 0, "setuid(nobody)");
        }
    }
}

/// A directory anyone may use, for a child that may run as `nobody`.
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o777);
    dir
}

#[test]
fn a_read_only_directory_fails_init_with_the_path() {
    if let Some(log) = common::child_role("a_read_only_directory_fails_init_with_the_path") {
        drop_root();
        let read_only = log.parent().unwrap().join("read-only");
        let error = tachylog::FileSink::open(read_only.join("app.log"))
            .err()
            .expect("must fail");
        println!("\nFileSink: {error}");
        let pattern = read_only.join("app.%Y%m%d.log");
        let error = tachylog::RollingFile::builder(pattern.to_str().unwrap())
            .open()
            .err()
            .expect("must fail");
        println!("\nRollingFile: {error}");
        return;
    }
    let child = run_child_in_shared_dir("a_read_only_directory_fails_init_with_the_path", |dir| {
        let read_only = dir.join("read-only");
        std::fs::create_dir(&read_only).unwrap();
        chmod(&read_only, 0o555);
    });
    assert!(child.status.success(), "{}", child.stderr);
    for sink in ["FileSink", "RollingFile"] {
        let line = child
            .stdout
            .lines()
            .find(|l| l.starts_with(sink))
            .unwrap_or_else(|| panic!("no {sink} line:\n{}", child.stdout));
        assert!(line.contains("read-only/app."), "the path is named: {line}");
        assert!(
            line.contains("ermission denied"),
            "the cause is named: {line}"
        );
    }
}

/// A FIFO as the log file. With no process reading it, opening it must fail at once and say
/// why: a plain open would wait for a reader forever, and `init` with it. With a reader, it is
/// a log file like any other: every line reaches the reader, in order.
#[test]
fn a_fifo_without_a_reader_is_an_error_and_one_with_a_reader_gets_every_line() {
    const SCENARIO: &str =
        "a_fifo_without_a_reader_is_an_error_and_one_with_a_reader_gets_every_line";
    const RECORDS: u64 = 20_000;
    if let Some(log) = common::child_role(SCENARIO) {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let fifo = log.parent().unwrap().join("lines.fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `name` is a NUL-terminated path; the result is checked.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
        let error = tachylog::FileSink::open(&fifo)
            .err()
            .expect("a FIFO with no reader must fail to open");
        println!("\nno reader: {error}");
        // The reader opens first without waiting for a writer, then reads in blocking mode.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let sink = tachylog::FileSink::open(&fifo).expect("a FIFO with a reader opens");
        // SAFETY: `reader` is open; F_SETFL changes only its own status flags.
        assert_eq!(
            unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) },
            0
        );
        let read = std::thread::spawn(move || {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut { reader }, &mut text).map(|_| text)
        });
        let guard = common::expect_init(tachylog::builder().sink(sink).init());
        common::log_numbered("fifo", RECORDS);
        // The logger's end closes the FIFO: the reader's end of file.
        drop(guard);
        let text = read.join().unwrap().expect("read the FIFO");
        common::assert_numbered(&common::parse_log(&text), "fifo", RECORDS);
        println!("\nwith a reader: {RECORDS} lines");
        return;
    }
    let child = common::run_child(SCENARIO, Duration::from_secs(60));
    assert!(child.status.success(), "{child}");
    let line = child
        .stdout
        .lines()
        .find(|l| l.starts_with("no reader"))
        .unwrap_or_else(|| panic!("no error for the FIFO without a reader:\n{child}"));
    assert!(line.contains("lines.fifo"), "the path is named: {line}");
    assert!(line.contains("FIFO"), "the cause is named: {line}");
    assert!(
        !line.contains("directory is writable"),
        "no hint about directories: {line}"
    );
    assert!(
        child
            .stdout
            .contains(&format!("with a reader: {RECORDS} lines")),
        "{child}"
    );
}

#[test]
fn writing_resumes_when_the_directory_becomes_writable() {
    if let Some(log) = common::child_role("writing_resumes_when_the_directory_becomes_writable") {
        drop_root();
        let base = log.parent().unwrap().join("logs");
        std::fs::create_dir(&base).unwrap();
        // A directory per second: each new second needs a new directory in `base`.
        let pattern = base.join("%H%M%S/app.log");
        let sink = tachylog::RollingFile::builder(pattern.to_str().unwrap())
            .utc(true)
            .open()
            .unwrap();
        let guard = common::expect_init(tachylog::builder().sink(sink).init());
        let start = Instant::now();
        let mut logged = 0u64;
        let mut phase = 0;
        while start.elapsed() < Duration::from_millis(4500) {
            let elapsed = start.elapsed();
            if phase == 0 && elapsed > Duration::from_millis(1000) {
                chmod(&base, 0o555);
                phase = 1;
            } else if phase == 1 && elapsed > Duration::from_millis(2600) {
                chmod(&base, 0o755);
                phase = 2;
            }
            tachylog::info!("record {}", logged);
            logged += 1;
            // Pacing, not synchronisation: a steady trickle through the three phases.
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(guard);
        let mut on_disk = 0u64;
        for second in std::fs::read_dir(&base).unwrap() {
            let text = common::read_log(&second.unwrap().path().join("app.log"));
            // Only our records: the sink's recovery also writes a WARN line of its own.
            on_disk += common::parse_log(&text)
                .iter()
                .filter(|l| l.message.starts_with("record "))
                .count() as u64;
        }
        println!("\nlogged {logged} on disk {on_disk}");
        return;
    }
    let child = run_child_in_shared_dir(
        "writing_resumes_when_the_directory_becomes_writable",
        |_| {},
    );
    assert!(child.status.success(), "{}", child.stderr);
    let counts: Vec<u64> = child
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("logged "))
        .expect("the child reports its counts")
        .split(" on disk ")
        .map(|n| n.parse().unwrap())
        .collect();
    let (logged, on_disk) = (counts[0], counts[1]);
    let failures: Vec<&str> = child
        .stderr
        .lines()
        .filter(|l| l.contains(" failed: "))
        .collect();
    assert_eq!(failures.len(), 1, "reported once:\n{}", child.stderr);
    assert!(
        failures[0].contains("ermission denied") && failures[0].contains("app.log"),
        "{}",
        failures[0]
    );
    let lost: u64 = child
        .stderr
        .lines()
        .find_map(|l| l.split_once("works again; ").map(|(_, rest)| rest))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no recovery report:\n{}", child.stderr));
    assert!(lost > 0, "the read-only second lost lines");
    assert_eq!(
        on_disk + lost,
        logged,
        "every record is either on disk or counted as lost"
    );
}

/// Runs the child scenario with its log path in a directory `nobody` can write; `prepare` sets
/// the directory up first.
fn run_child_in_shared_dir(scenario: &str, prepare: impl FnOnce(&Path)) -> common::ChildRun {
    let dir = shared_dir();
    prepare(dir.path());
    common::run_child_with_log(
        scenario,
        &dir.path().join("child.log"),
        Duration::from_secs(60),
    )
}
