//! The binary log beside the text file, for profiling and a first look at the figures: COUNT
//! (default 2,000,000) × `info!("Iteration: {} int: {} double: {}", u64, i64, f64)` into a text
//! file, then into a binary log, each timed until the guard's drop returns (everything handed to
//! the kernel); then the binary log read back and rendered as text lines in memory, as
//! `tachylog cat` does, and compared with the text file.
//!
//! Then the back end alone, as `tachylog-bench`'s `backend_iteration` measures it: 1,000,000
//! records queued while the back end is held, the drain timed, text then binary.
//!
//! `cargo run --release -p tachylog --example binary_log [-- COUNT [keep]]` (`keep` leaves
//! both files in place, for timing `tachylog cat` on them).

use std::time::Instant;
use tachylog::read::{Reader, Renderer};
use tachylog::{Format, SinkOptions};

fn log(count: u64, options: SinkOptions, path: &std::path::Path) -> Result<f64, tachylog::Error> {
    let guard = tachylog::builder()
        .utc(true)
        .file_with(path, options)
        .init()?;
    let start = Instant::now();
    for i in 0..count {
        tachylog::info!(
            "Iteration: {} int: {} double: {}",
            i,
            -(i as i64),
            i as f64 * 0.25
        );
    }
    drop(guard);
    Ok(start.elapsed().as_secs_f64())
}

/// ns per record for the back end to drain 1M queued records into a file of `options`.
fn drain_ns(options: SinkOptions, path: &std::path::Path) -> Result<f64, tachylog::Error> {
    const RECORDS: u64 = 1_000_000;
    let guard = tachylog::builder()
        .utc(true)
        .file_with(path, options)
        .ring_capacity(256 << 20)
        .init()?;
    // A new thread: its ring is made under this logger's capacity, big enough for all.
    let ns = std::thread::spawn(|| {
        tachylog::info!("Iteration: {} int: {} double: {}", 0u64, 0i64, 0.0f64);
        tachylog::flush();
        tachylog::__private::hold_backend(true);
        std::thread::sleep(std::time::Duration::from_millis(5));
        for i in 1..=RECORDS {
            tachylog::info!(
                "Iteration: {} int: {} double: {}",
                i,
                i as i64 * 2,
                i as f64 / 2.0
            );
        }
        let start = Instant::now();
        tachylog::__private::hold_backend(false);
        tachylog::flush();
        start.elapsed().as_secs_f64() * 1e9 / RECORDS as f64
    })
    .join()
    .expect("the drain thread");
    drop(guard);
    Ok(ns)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = std::env::temp_dir().join(format!("tachylog-binary-{}", std::process::id()));
    let (text_path, binary_path) = (dir.join("app.log"), dir.join("app.tlog"));
    let text_s = log(count, SinkOptions::new(), &text_path)?;
    let binary_s = log(
        count,
        SinkOptions::new().format(Format::Binary),
        &binary_path,
    )?;
    let text_bytes = std::fs::metadata(&text_path)?.len();
    let binary_bytes = std::fs::metadata(&binary_path)?.len();
    println!(
        "text:   {:.2} M records/s end to end, {:.1} bytes/record",
        count as f64 / text_s / 1e6,
        text_bytes as f64 / count as f64
    );
    println!(
        "binary: {:.2} M records/s end to end, {:.1} bytes/record ({:.1} % of the text)",
        count as f64 / binary_s / 1e6,
        binary_bytes as f64 / count as f64,
        100.0 * binary_bytes as f64 / text_bytes as f64
    );

    let start = Instant::now();
    let mut reader = Reader::open(&binary_path)?;
    let mut renderer = Renderer::text(tachylog::Pattern::default(), tachylog::TimeZone::utc());
    let mut out = Vec::with_capacity(text_bytes as usize);
    let mut records = 0u64;
    while let Some(record) = reader.next_record() {
        renderer.render(record?, &mut out);
        records += 1;
    }
    let read_s = start.elapsed().as_secs_f64();
    println!(
        "read back as text: {:.2} M records/s ({records} records)",
        records as f64 / read_s / 1e6
    );
    // The lines carry the logging thread's name and id, the same in both runs; the times differ.
    println!(
        "read-back text equals the text file apart from times: {}",
        {
            let strip = |b: &[u8]| -> Vec<String> {
                String::from_utf8_lossy(b)
                    .lines()
                    .map(|l| l[26..].to_string())
                    .collect()
            };
            strip(&out) == strip(&std::fs::read(&text_path)?)
        }
    );
    let text_ns = drain_ns(SinkOptions::new(), &dir.join("drain.log"))?;
    let binary_ns = drain_ns(
        SinkOptions::new().format(Format::Binary),
        &dir.join("drain.tlog"),
    )?;
    println!("back end alone: text {text_ns:.1} ns/record, binary {binary_ns:.1} ns/record");
    if std::env::args().nth(2).as_deref() == Some("keep") {
        println!("kept {} and {}", text_path.display(), binary_path.display());
    } else {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
