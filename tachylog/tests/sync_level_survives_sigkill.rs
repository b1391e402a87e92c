//! SIGKILL cannot be handled: records still in the rings die with the process. With
//! `sync_level(Level::Error)`, an `error!` call returns only once its record is written to the
//! kernel, so every ERROR record logged before a SIGKILL is in the file, even when thousands of
//! INFO records around it are lost. Real child processes killed by a real SIGKILL, 10 times.
// Unix only: SIGKILL is Unix-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

const ERRORS: u64 = 200;

#[test]
fn error_records_survive_sigkill() {
    if let Some(log) = common::child_role("error_records_survive_sigkill") {
        std::mem::forget(common::expect_init(
            tachylog::builder()
                .file(&log)
                .sync_level(tachylog::Level::Error)
                .init(),
        ));
        for i in 0..ERRORS {
            common::log_numbered(&format!("noise-{i}"), 100);
            tachylog::error!("kept record {} of {}", i, ERRORS);
            log::error!("facade record {} of {}", i, ERRORS); // through the `log` crate too
        }
        common::log_numbered("after", 10_000);
        // SAFETY: killing our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        std::process::exit(99);
    }
    for _ in 0..10 {
        let child = common::run_child("error_records_survive_sigkill", Duration::from_secs(60));
        assert_eq!(child.status.signal(), Some(libc::SIGKILL), "{child}");
        // The file may end in a torn INFO line: SIGKILL can land mid-write. Check whole lines.
        let whole = match child.log.rfind('\n') {
            Some(end) => &child.log[..=end],
            None => "",
        };
        let lines = common::parse_log(whole);
        let errors: Vec<_> = lines
            .iter()
            .filter(|l| l.level == "ERROR")
            .copied()
            .collect();
        common::assert_numbered(&errors, "kept", ERRORS);
        common::assert_numbered(&errors, "facade", ERRORS);
    }
}
