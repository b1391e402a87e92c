//! A recovery whose sink fails (the disk is full) removes nothing: the dead process's spool
//! stays, a warning says so, and the next start, once there is room, writes what did not
//! arrive, each record once.
//!
//! The log is on a small tmpfs mounted for the test (root only: elsewhere the test says it
//! did not run, unless `TACHYLOG_REQUIRE_TMPFS` is set, as CI sets it, which makes that a
//! failure). A child logs 3,000 numbered records of about 200 bytes while its back end is
//! held, and is killed; the tmpfs is filled to within 100 KiB; a second child recovers into it
//! and fails; the filler is removed; a third child recovers the rest.
// Unix only: SIGKILL and the spool are Unix-only; the tmpfs is Linux's.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const RECORDS: u64 = 3_000;

fn spool_dir(log: &Path) -> PathBuf {
    log.parent().unwrap().parent().unwrap().join("spool")
}

fn builder(log: &Path) -> tachylog::Builder {
    tachylog::builder()
        .file(log)
        .spool(spool_dir(log))
        .ring_capacity(4 << 20)
}

#[test]
fn full_disk_writer() {
    if let Some(log) = common::child_role("full_disk_writer") {
        std::mem::forget(common::expect_init(builder(&log).init()));
        tachylog::__private::hold_backend(true);
        let padding = "p".repeat(150);
        for i in 0..RECORDS {
            tachylog::info!("full {} of the held {}", i, padding);
        }
        // SAFETY: killing our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        common::await_fatal_signal(Duration::from_secs(30));
    }
}

#[test]
fn full_disk_recoverer() {
    if let Some(log) = common::child_role("full_disk_recoverer") {
        let guard = common::expect_init(builder(&log).init());
        let recovery = guard.recovery().expect("a spool was given");
        println!("recovery warnings: {:?}", recovery.warnings);
        drop(guard);
    }
}

/// A tmpfs of `size` mounted at `at`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system of `dir` until fewer than `room` bytes are free.
fn fill(dir: &Path, room: u64) -> PathBuf {
    use std::io::Write;
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let chunk = vec![b'f'; 4096];
    loop {
        // SAFETY: a zeroed `statvfs` is a valid out-value; the path is NUL-terminated.
        let free = unsafe {
            let mut stat: libc::statvfs = std::mem::zeroed();
            let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(libc::statvfs(path.as_ptr(), &mut stat), 0);
            stat.f_bavail * stat.f_frsize
        };
        if free < room || file.write_all(&chunk).is_err() {
            break;
        }
    }
    file.sync_all().ok();
    filler
}

#[test]
fn recovery_into_a_full_disk_keeps_the_spool_and_the_next_start_writes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), "2m") else {
        assert!(
            std::env::var_os("TACHYLOG_REQUIRE_TMPFS").is_none(),
            "a tmpfs could not be mounted (run as root)"
        );
        eprintln!("not run: mounting a tmpfs needs root");
        return;
    };
    let log = disk.0.join("app.log");
    let writer = common::run_child_with_log("full_disk_writer", &log, Duration::from_secs(60));
    assert_eq!(writer.status.signal(), Some(libc::SIGKILL), "{writer}");
    let filler = fill(&disk.0, 100 << 10);

    let failed = common::run_child_with_log("full_disk_recoverer", &log, Duration::from_secs(60));
    assert!(failed.status.success(), "{failed}");
    assert!(
        failed.stdout.contains("the spool is kept"),
        "the warning says the spool is kept: {failed}"
    );
    let kept = common::process_dirs(&spool_dir(&log));
    assert!(
        kept.iter()
            .any(|d| d.join("ring-0").exists() || d.join("state").exists()),
        "the dead process's directory is kept: {kept:?}"
    );
    // The disk filled in the middle of a line: only whole lines count.
    let text = common::read_log(&log);
    let partial = numbered(&text[..text.rfind('\n').map_or(0, |i| i + 1)]);
    assert!(
        (partial.len() as u64) < RECORDS,
        "the disk was full: {} records written",
        partial.len()
    );

    std::fs::remove_file(filler).unwrap();
    let second = common::run_child_with_log("full_disk_recoverer", &log, Duration::from_secs(60));
    assert!(second.status.success(), "{second}");
    let mut all = numbered(&common::read_log(&log));
    all.sort_unstable();
    assert_eq!(
        all,
        (0..RECORDS).collect::<Vec<_>>(),
        "every record once after the second start ({} before it)",
        partial.len()
    );
    assert!(
        common::process_dirs(&spool_dir(&log)).is_empty(),
        "the spool is removed once everything is written"
    );
    eprintln!(
        "{} of {RECORDS} records written into the full disk; the rest by the next start",
        partial.len()
    );
}

/// The numbers of the `full N` records in `text`.
fn numbered(text: &str) -> Vec<u64> {
    common::parse_log(text)
        .iter()
        .filter_map(|l| {
            let message = l.message.trim_start_matches("[recovered] ");
            message
                .strip_prefix("full ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}
