//! `tachylog cat --follow` prints records as they are written, and goes on with the new file
//! when the log is rotated (moved away and reopened at its path).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tachylog::{Format, SinkOptions};

/// Kills the follower when the test ends, however it ends.
struct Follower(Child);
impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for a line containing `text`.
fn expect_line(lines: &mpsc::Receiver<String>, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(text) => return,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no line with {text:?} within 20 s");
}

#[test]
fn follow_prints_new_records_and_the_next_file_after_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.tlog");
    let guard = tachylog::builder()
        .utc(true)
        .file_with(&path, SinkOptions::new().format(Format::Binary))
        .init()
        .unwrap();
    tachylog::info!("before the follower {}", 1);
    tachylog::flush();

    let mut child = Command::new(env!("CARGO_BIN_EXE_tachylog"))
        .args(["cat", "--utc", "--follow"])
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _follower = Follower(child);
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    expect_line(&lines, "before the follower 1");

    tachylog::info!("while following {}", 2);
    tachylog::flush();
    expect_line(&lines, "while following 2");

    std::fs::rename(&path, dir.path().join("app.tlog.1")).unwrap();
    tachylog::reopen();
    tachylog::info!("after the rotation {}", 3);
    tachylog::flush();
    expect_line(&lines, "after the rotation 3");
    drop(guard);
}
