//! Log files that manage themselves: a file per day under `logs/`, at most 10 MiB each, zstd
//! compression of every file left behind, and 14 days or 1 GiB kept, whichever is smaller.
//! A `logs/app.log` symlink always points at the file in use.
//!
//! `cargo run --release -p tachylog --example rotating`
//!
//! It writes 300,000 records (about 35 MiB), so the size limit rolls the day's file a few
//! times, and lists what is in `logs/` at the end.

use std::time::{Duration, Instant};
use tachylog::{Compression, RollingFile};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sink = RollingFile::builder("logs/%Y/%m/app.%Y%m%d.log")
        .max_size(10 << 20)
        .max_age(Duration::from_secs(14 * 86_400))
        .max_total_size(1 << 30)
        .compress(Compression::Zstd)
        .latest_symlink("logs/app.log")
        .open()?;
    let first_file = sink.current_path();
    let guard = tachylog::builder().sink(sink).init()?;

    let start = Instant::now();
    for i in 0..300_000u64 {
        tachylog::info!(
            "request {} from {} took {:.3} ms: GET /api/v1/items/{}",
            i,
            "203.0.113.7",
            (i % 1000) as f64 * 0.013,
            i % 977
        );
    }
    let logged = start.elapsed();
    drop(guard); // drains, flushes, and waits for the pending compressions
    println!(
        "logged 300,000 records in {logged:?} (caller time); started in {}",
        first_file.display()
    );

    let dir = first_file.parent().expect("the pattern has directories");
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| (e.file_name(), e.metadata().map(|m| m.len()).unwrap_or(0))))
        .collect::<Result<_, _>>()?;
    files.sort();
    for (name, len) in files {
        println!(
            "{:>12} bytes  {}/{}",
            len,
            dir.display(),
            name.to_string_lossy()
        );
    }
    println!(
        "logs/app.log -> {}",
        std::fs::read_link("logs/app.log")?.display()
    );
    Ok(())
}
