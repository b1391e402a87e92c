//! `tachylog recover DIR` writes what a killed process left in its spool, though it is another
//! program (this test's binary wrote the spool; the `tachylog` binary reads it): the call sites
//! and argument lists come from the spool's definitions, not from addresses. A value of the
//! writer's own `CopyArg` type, whose `Display` only the writer has, is shown as its type name
//! and raw bytes. The writer's back end is held, so every record is still in its rings when it
//! is killed.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

/// A type only this program can format.
#[derive(Clone, Copy)]
#[repr(C)]
struct Ticket {
    id: u32,
    lane: u16,
    open: u16,
}

impl std::fmt::Display for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ticket {}/{}", self.id, self.lane)
    }
}

impl tachylog::CopyArg for Ticket {}

const ROLE: &str = "TACHYLOG_TEST_SPOOL_WRITER";

fn write_and_die(dir: &Path) -> ! {
    let log = dir.join("app.log");
    let json = dir.join("app.jsonl");
    std::mem::forget(
        tachylog::builder()
            .utc(true)
            .file(&log)
            .file_with(
                &json,
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .spool(dir.join("spool"))
            .init()
            .expect("logger starts"),
    );
    tachylog::__private::hold_backend(true);
    for i in 0..100u64 {
        tachylog::info!(
            "order {} of {:>8.2} EUR for {:?} by {}",
            i,
            i as f64 * 1.5,
            "ada",
            Ticket {
                id: 7,
                lane: 3,
                open: 1
            }
        );
        tachylog::warn!(attempt = i, ok = false; "retry {:#x}", i);
    }
    // SAFETY: killing our own process.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    std::thread::sleep(std::time::Duration::from_secs(30));
    std::process::exit(99);
}

#[test]
fn recover_reads_a_spool_of_another_build() {
    if let Some(dir) = std::env::var_os(ROLE) {
        write_and_die(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "recover_reads_a_spool_of_another_build",
            "--exact",
            "--nocapture",
        ])
        .env(ROLE, dir.path())
        .status()
        .expect("runs the writer");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_eq!(std::fs::read(dir.path().join("app.log")).unwrap(), b"");

    let out = Command::new(env!("CARGO_BIN_EXE_tachylog"))
        .arg("recover")
        .arg(dir.path().join("spool"))
        .arg("--utc")
        .arg("--file")
        .arg(dir.path().join("app.log"))
        .arg("--json")
        .arg(dir.path().join("app.jsonl"))
        .output()
        .expect("runs tachylog recover");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("recovered 200 record(s) of 1 process(es)"),
        "{stderr}"
    );

    let text = std::fs::read_to_string(dir.path().join("app.log")).unwrap();
    let (lines, notices): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.contains("[recovered] "));
    assert_eq!(lines.len(), 200, "{text}");
    // What recovery did is said after the records, in the same file.
    assert_eq!(notices.len(), 1, "{text}");
    assert!(notices[0].contains("recovered 200 record(s) of 1 process(es)"));
    let order_7 = lines
        .iter()
        .find(|l| l.contains("order 7 "))
        .expect("record 7");
    // The writer's `Ticket` is 8 bytes: id 7, lane 3, open 1, little-endian.
    assert!(
        order_7.contains(
            "[recovered] order 7 of    10.50 EUR for \"ada\" by \
             recover_reads_a_spool_of_another_build::Ticket(0x0700000003000100)"
        ),
        "{order_7}"
    );
    let retry_26 = lines
        .iter()
        .find(|l| l.contains("retry 0x1a"))
        .expect("record 26");
    assert!(retry_26.contains(" WARN "), "{retry_26}");
    assert!(
        retry_26.contains("[recovered] retry 0x1a attempt=26 ok=false"),
        "{retry_26}"
    );

    let json = std::fs::read_to_string(dir.path().join("app.jsonl")).unwrap();
    assert_eq!(
        json.lines()
            .filter(|l| l.contains("\"recovered\":true"))
            .count(),
        200,
        "{json}"
    );
    assert!(
        json.contains("\"fields\":{\"attempt\":26,\"ok\":false}"),
        "fields keep their types: {json}"
    );
    // The lock stripes stay: the spool root's, shared by its processes.
    let leftover: Vec<_> = std::fs::read_dir(dir.path().join("spool"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "locks")
        .collect();
    assert!(
        leftover.is_empty(),
        "the dead process's spool directory is removed: {leftover:?}"
    );
}

/// `tachylog recover` writes only where its command line says: with no destination named, it
/// writes nothing, says why, and exits 2.
#[test]
fn recover_needs_its_destinations_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tachylog"))
        .arg("recover")
        .arg(dir.path().join("spool"))
        .output()
        .expect("runs tachylog recover");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("name where the records go"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
