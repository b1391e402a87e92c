//! A spool that cannot be used never stops logging and never panics: a path that is a file, a
//! file system that refuses a ring's file, a dead process's directory with a damaged state. Each
//! is a WARN record that names the spool and says what is not protected, and every record is
//! still written.
// Unix only: the spool is Unix-only.
#![cfg(unix)]

mod common;

use std::time::Duration;

#[test]
fn a_spool_path_that_is_a_file_is_a_warning() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let spool = dir.path().join("spool");
    std::fs::write(&spool, b"not a directory").unwrap();
    let guard = common::expect_init(tachylog::builder().file(&log).spool(&spool).init());
    common::log_numbered("kept", 100);
    drop(guard);
    let text = common::read_log(&log);
    let lines = common::parse_log(&text);
    let warning = lines
        .iter()
        .find(|l| l.level == "WARN" && l.message.contains("cannot be used"))
        .unwrap_or_else(|| panic!("no warning:\n{text}"));
    assert!(warning.message.contains(&spool.display().to_string()));
    assert!(warning.message.contains("not protected against SIGKILL"));
    common::assert_numbered(&lines, "kept", 100);
}

#[test]
fn a_damaged_dead_spool_is_set_aside_with_a_warning() {
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let spool = dir.path().join("spool");
    let dead = spool.join("4242.1234567890");
    std::fs::create_dir_all(&dead).unwrap();
    std::fs::write(dead.join("lock"), b"").unwrap();
    std::fs::write(dead.join("state"), vec![0x5a; 8192]).unwrap();
    std::fs::write(dead.join("ring-1"), vec![0xa5; 100]).unwrap();
    let guard = common::expect_init(tachylog::builder().file(&log).spool(&spool).init());
    common::log_numbered("kept", 100);
    drop(guard);
    let text = common::read_log(&log);
    let lines = common::parse_log(&text);
    assert!(
        lines.iter().any(|l| l.level == "WARN"
            && l.message.contains("4242.1234567890")
            && l.message.contains("renamed to .damaged")),
        "no warning:\n{text}"
    );
    assert!(
        spool.join("4242.1234567890.damaged").is_dir(),
        "set aside for a person to look at"
    );
    common::assert_numbered(&lines, "kept", 100);
}

#[test]
fn a_file_system_that_refuses_a_ring_is_a_warning() {
    if let Some(log) = common::child_role("a_file_system_that_refuses_a_ring_is_a_warning") {
        // Files past 64 KiB are refused (EFBIG, SIGXFSZ ignored): the spool's state fits, a
        // 1 MiB ring does not; the log file is opened before the limit.
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .spool(log.with_extension("spool"))
                .init(),
        );
        // SAFETY: ignoring a signal and lowering a resource limit of our own process.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 64 << 10,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
        }
        std::thread::spawn(|| common::log_numbered("kept", 100))
            .join()
            .unwrap();
        // SAFETY: as above, the limit lifted so the log can grow.
        unsafe {
            let limit = libc::rlimit {
                rlim_cur: libc::RLIM_INFINITY,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
        }
        drop(guard);
        return;
    }
    let child = common::run_child(
        "a_file_system_that_refuses_a_ring_is_a_warning",
        Duration::from_secs(60),
    );
    assert!(child.status.success(), "{child}");
    let lines = common::parse_log(&child.log);
    assert!(
        lines.iter().any(|l| l.level == "WARN"
            && l.message.contains("no ring for thread")
            && l.message.contains("not protected against SIGKILL")),
        "no warning: {child}"
    );
    common::assert_numbered(&lines, "kept", 100);
}
