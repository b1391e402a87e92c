//! JSON lines to a file, text to stdout: the same records in both, then the file read back and
//! every line parsed with `serde_json` to show it stays valid JSON whatever the message holds
//! (quotes, newlines, invalid UTF-8), and structured fields with their native JSON types.
//!
//! `cargo run -p tachylog --example json_lines [PATH]`
//!
//! Without `PATH` the file goes to a temporary directory that is removed at the end; with it,
//! lines are appended to `PATH` (parent directories are created) and the file is kept.

use serde_json::Value;
use std::path::PathBuf;
use tachylog::{Format, Level, SinkOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Held until the end of `main`: dropping it deletes the temporary directory.
    let mut temp_dir = None;
    let path = match std::env::args_os().nth(1) {
        Some(path) => PathBuf::from(path),
        None => temp_dir
            .insert(tempfile::tempdir()?)
            .path()
            .join("app.jsonl"),
    };

    let guard = tachylog::builder()
        .level(Level::Debug)
        .utc(true)
        .stdout() // text lines, the default format
        .file_with(&path, SinkOptions::new().format(Format::Json)) // this file gets one JSON object per line
        .init()?;
    let (id, ms) = (42u64, 1.25f64);
    tachylog::info!("request {} took {:.3} ms", id, ms);
    tachylog::debug!("cache miss for key {:?}", "user:7");
    tachylog::warn!("client sent \"quotes\" and a\nnewline");
    tachylog::error!("undecodable bytes: {}", tachylog::lossy(b"ok \xff done"));
    log::info!(target: "legacy", "through the log crate: {}", 5);
    // Structured fields keep their types in JSON: numbers, booleans, null, strings.
    let retries: Option<u8> = None;
    tachylog::info!(user_id = id, cached = false, retries, path = "/a b"; "served");
    log::info!(target: "legacy", user = 7, admin = true; "log key-values too");
    // Drains the queues, flushes both sinks and stops the back end: the file is complete.
    drop(guard);

    let text = std::fs::read_to_string(&path)?;
    println!("\n{}:", path.display());
    for (i, line) in text.lines().enumerate() {
        let record: Value = serde_json::from_str(line)
            .map_err(|e| format!("line {} is not valid JSON: {e}: {line}", i + 1))?;
        assert!(record["message"].is_string(), "no message: {line}");
        println!("{line}");
    }
    println!("{} lines, every one valid JSON", text.lines().count());
    Ok(())
}
