//! The `tachylog` command against real files: `cat` prints exactly the text file (and the JSON
//! file) that the logger wrote beside the binary log; `--merge` orders files by time; the
//! filters; damage is reported with its offset, exits with 1 and loses only what is damaged.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;
use tachylog::{Format, Level, SinkOptions};

/// One logger per process at a time.
static LOGGER: Mutex<()> = Mutex::new(());

fn tachylog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tachylog"))
        .args(args)
        .output()
        .expect("runs tachylog")
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("UTF-8 output")
}

fn log_some(scope: &str) {
    for i in 0..40u64 {
        tachylog::info!(
            "{} iteration: {} int: {} double: {}",
            scope,
            i,
            -(i as i64),
            i as f64 / 4.0
        );
        if i % 10 == 0 {
            tachylog::error!(attempt = i; "{} failed {:?} \"quoted\"\nnext line", scope, Some(i));
        }
    }
    tachylog::warn!("{} done", scope);
}

/// Logs `scope`'s records to `binary`, and the same as text to `text` and JSON to `json`.
fn run_logger(binary: &Path, text: &Path, json: &Path, scope: &str) {
    let guard = tachylog::builder()
        .utc(true)
        .file(text)
        .file_with(json, SinkOptions::new().format(Format::Json))
        .file_with(binary, SinkOptions::new().format(Format::Binary))
        .init()
        .expect("logger starts");
    log_some(scope);
    drop(guard);
}

#[test]
fn cat_prints_the_files_merges_them_filters_and_reports_damage() {
    let _lock = LOGGER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let s = |name: &str| path(name).to_str().unwrap().to_string();
    run_logger(
        &path("a.tlog"),
        &path("all.log"),
        &path("all.jsonl"),
        "first",
    );
    run_logger(
        &path("b.tlog"),
        &path("all.log"),
        &path("all.jsonl"),
        "second",
    );
    let all = std::fs::read_to_string(path("all.log")).unwrap();
    let json = std::fs::read_to_string(path("all.jsonl")).unwrap();

    // Byte for byte, in the order given.
    let out = tachylog(&["cat", "--utc", &s("a.tlog"), &s("b.tlog")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), all);
    let out = tachylog(&[
        "cat",
        "--utc",
        "--format",
        "json",
        &s("a.tlog"),
        &s("b.tlog"),
    ]);
    assert_eq!(text(&out.stdout), json);

    // Merged by time whatever the order of the arguments.
    let out = tachylog(&["cat", "--utc", "-m", &s("b.tlog"), &s("a.tlog")]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), all);
    let out = tachylog(&["cat", "--utc", &s("b.tlog"), &s("a.tlog")]);
    assert_ne!(
        text(&out.stdout),
        all,
        "without --merge the files are not interleaved"
    );

    // Filters.
    let out = tachylog(&[
        "cat",
        "--utc",
        "--level",
        "warn",
        "--grep",
        "second",
        &s("a.tlog"),
        &s("b.tlog"),
    ]);
    let expected: String = all
        .lines()
        .filter(|l| (l.contains(" ERROR ") || l.contains(" WARN ")) && l.contains("second"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(expected.lines().count(), 5);
    assert_eq!(text(&out.stdout), expected);
    let out = tachylog(&["cat", "--utc", "--target", "nothing_here", &s("a.tlog")]);
    assert!(out.stdout.is_empty());
    let out = tachylog(&[
        "cat",
        "--utc",
        "--pattern",
        "{level} {message}",
        &s("a.tlog"),
    ]);
    assert!(text(&out.stdout).starts_with("INFO  first iteration: 0 int: 0 double: 0\n"));
    let out = tachylog(&[
        "cat",
        "--utc",
        "--since",
        "2200-01-01T00:00:00Z",
        &s("a.tlog"),
    ]);
    assert!(out.status.success() && out.stdout.is_empty());

    // Damage: a flipped byte in the first file's block and bytes of garbage after it.
    let mut bytes = std::fs::read(path("a.tlog")).unwrap();
    let clean_len = bytes.len();
    bytes[40] ^= 0x55;
    bytes.extend_from_slice(b"not a block at all");
    bytes.extend_from_slice(&std::fs::read(path("b.tlog")).unwrap());
    std::fs::write(path("damaged.tlog"), &bytes).unwrap();
    let out = tachylog(&["cat", "--utc", &s("damaged.tlog")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("damaged binary log at byte 0:"), "{stderr}");
    assert!(
        stderr.lines().count() == 1,
        "one report for one damaged stretch: {stderr}"
    );
    assert!(
        stderr.contains(&format!("{} bytes skipped", clean_len + 18)),
        "{stderr}"
    );
    let second: String = all
        .lines()
        .filter(|l| l.contains("second"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text(&out.stdout), second);

    // stats counts.
    let out = tachylog(&["stats", &s("a.tlog")]);
    assert!(out.status.success());
    let stats = text(&out.stdout);
    assert!(stats.contains("records      45\n"), "{stats}");
    assert!(stats.contains("error        4\n"), "{stats}");
    assert!(stats.contains("call sites   3\n"), "{stats}");

    // A missing file is a usage error, not damage; so is a directory, reported once.
    let out = tachylog(&["cat", &s("missing.tlog")]);
    assert_eq!(out.status.code(), Some(2));
    let out = tachylog(&["cat", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "reported once: {stderr}");
    assert!(stderr.contains(&*dir.path().to_string_lossy()), "{stderr}");
    let _ = Level::Info;
}
