//! `tachylog cat` decodes a file's blocks on every core: on a real log of many blocks it prints
//! the text file the logger wrote beside it, byte for byte, whatever `--threads` says; on a
//! damaged copy every thread count prints the same lines and the same damage reports, in order.

use std::process::{Command, Output};
use tachylog::{Format, SinkOptions};

fn tachylog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tachylog"))
        .args(args)
        .output()
        .expect("runs tachylog")
}

/// Where each block of a clean log starts.
fn block_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 16 <= bytes.len() {
        starts.push(at);
        at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    starts
}

#[test]
fn every_thread_count_prints_the_same_lines_and_reports_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let s = |name: &str| path(name).to_str().unwrap().to_string();
    let guard = tachylog::builder()
        .utc(true)
        .file(path("app.log"))
        .file_with(path("app.tlog"), SinkOptions::new().format(Format::Binary))
        .init()
        .expect("logger starts");
    for block in 0..16u64 {
        for i in 0..(block * 53 % 300 + 1) {
            match i % 2 {
                0 => tachylog::info!(
                    "block {} request {} took {:.3} ms",
                    block,
                    i,
                    i as f64 / 3.0
                ),
                _ => tachylog::warn!(rows = i; "block {} scanned {}", block, "orders"),
            }
        }
        tachylog::flush();
    }
    drop(guard);
    let text = std::fs::read(path("app.log")).unwrap();
    let clean = std::fs::read(path("app.tlog")).unwrap();
    let starts = block_starts(&clean);
    assert!(starts.len() >= 16, "{} blocks", starts.len());

    for threads in ["1", "2", "5"] {
        let out = tachylog(&["cat", "--utc", "--threads", threads, &s("app.tlog")]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == text, "{threads} threads: not the text file");
    }

    // A flipped byte in block 4 and garbage before block 11: two reports, lines around them.
    let mut damaged = clean.clone();
    damaged[starts[4] + 40] ^= 0x55;
    damaged.splice(starts[11]..starts[11], b"not a block".iter().copied());
    std::fs::write(path("damaged.tlog"), &damaged).unwrap();
    let one = tachylog(&["cat", "--utc", "--threads", "1", &s("damaged.tlog")]);
    assert_eq!(one.status.code(), Some(1));
    let reports = String::from_utf8(one.stderr.clone()).unwrap();
    assert_eq!(reports.lines().count(), 2, "{reports}");
    assert!(
        reports.contains(&format!("at byte {}:", starts[4])),
        "{reports}"
    );
    assert!(!one.stdout.is_empty() && one.stdout.len() < text.len());
    for threads in ["2", "3", "8"] {
        let many = tachylog(&["cat", "--utc", "--threads", threads, &s("damaged.tlog")]);
        assert_eq!(many.status.code(), Some(1));
        assert!(many.stdout == one.stdout, "{threads} threads: other lines");
        assert_eq!(many.stderr, one.stderr, "{threads} threads: other reports");
    }
}
