//! The seed workload on its own, for profiling: 1,000,000 x `info!("Hello World!")` to a file,
//! timed until the guard's drop returns (everything handed to the kernel).
//!
//! `cargo run --release -p tachylog --example seed [-- COUNT]`

use std::time::Instant;

fn main() -> Result<(), tachylog::Error> {
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = std::env::temp_dir().join(format!("tachylog-seed-{}", std::process::id()));
    let path = dir.join("seed.log");
    let guard = tachylog::builder().file(&path).init()?;
    let start = Instant::now();
    for _ in 0..count {
        tachylog::info!("Hello World!");
    }
    let caller = start.elapsed();
    drop(guard);
    let total = start.elapsed();
    let lines = std::fs::read_to_string(&path)
        .map(|s| s.lines().count())
        .unwrap_or(0);
    println!(
        "{count} records: caller loop {:.3} s, on disk after {:.3} s, {lines} lines in {}",
        caller.as_secs_f64(),
        total.as_secs_f64(),
        path.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(lines as u64, count, "lines missing");
    Ok(())
}
