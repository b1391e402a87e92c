//! `tachylog cat` on a binary log made by an attacker: every line it prints, in every format,
//! is one line with no raw control, separator or bidi character, whatever the file's thread
//! names, targets, file names, format text and keys hold.

#[path = "../../tachylog/tests/common/forged_tlog.rs"]
mod forged_tlog;

use std::process::Command;

#[test]
fn cat_prints_a_crafted_log_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.tlog");
    std::fs::write(&path, forged_tlog::forged_log()).unwrap();
    for format in ["text", "json", "logfmt"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tachylog"))
            .args(["cat", "--utc", "--format", format])
            .arg(&path)
            .output()
            .expect("runs tachylog cat");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(lines.len(), 2, "{format}: one line per record: {text:?}");
        for line in lines {
            assert!(forged_tlog::is_inert(line), "{format}: {line:?}");
        }
    }
}
