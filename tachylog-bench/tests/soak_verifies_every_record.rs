//! The soak binary end to end, shortened: 4 threads for 3 s into a file per second. It exits
//! non-zero if any record is missing, duplicated, reordered, torn or in the wrong file; the
//! full run is `cargo run --release -p tachylog-bench --bin soak` (8 threads, 60 s).

use std::process::Command;

#[test]
fn a_short_soak_verifies_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_soak"))
        .args(["--seconds", "3", "--threads", "4", "--dir"])
        .arg(dir.path().join("soak"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "soak failed\n{stdout}\n{stderr}");
    assert!(stdout.contains("every record verified"), "{stdout}");
    let files: u64 = stdout
        .split(" files of one second")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no file count in {stdout:?}"));
    assert!(files >= 3, "rotation every second: {stdout}");
}

#[test]
fn bad_options_are_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_soak"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown option --bogus"));
}
