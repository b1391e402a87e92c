//! `page_tail`: how much of the caller's tail is the first store into each 4 KiB page of its
//! ring, with the default 1 MiB rings against 2 MiB rings on huge pages.
//! `cargo run --release -p tachylog-bench --bin page_tail -- [ROUNDS]` (default 3).
//!
//! Each round runs both configurations, each in a process of its own (a logger is installed
//! once per process), the caller pinned to CPU 1 on Linux: 1,000,000 calls of
//! `info!("request {} took {:.3} ms: {}", u64, f64, &str)` timed one by one (`rdtsc` between
//! `lfence`s), 2 µs apart, after 10,000 warm-up calls. The `&str` is 8 bytes, so every record
//! is a 64-byte frame and 64 of them fill a page: the calls that open a page are one residue
//! of the call's index modulo 64. The table gives the percentiles, the calls slower than
//! 200 ns, and how many of those fall on the residue that has the most (the calls that open a
//! page, when translation is what makes them slow).

#[path = "../clock.rs"]
#[allow(dead_code)]
mod clock;

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

const CALLS: usize = 1_000_000;
const WARM_UP: usize = 10_000;
const GAP_NS: u64 = 2_000;
const SLOW_NS: u64 = 200;
/// The default ring size, and the size from which rings ask for huge pages.
const CONFIGS: [(&str, usize); 2] = [("1 MiB rings (default)", 1 << 20), ("2 MiB rings", 2 << 20)];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, ring] = &args[..] {
        if flag == "--child" {
            return child(ring.parse().expect("a ring size"));
        }
    }
    let rounds: usize = args
        .get(1)
        .map_or(3, |r| r.parse().expect("ROUNDS, a number"));
    let exe = std::env::current_exe().expect("this program's path");
    println!(
        "| round | rings | p50 | p99 | p99.9 | p99.99 | calls ≥ {SLOW_NS} ns | on one residue |"
    );
    println!("|--:|---|--:|--:|--:|--:|--:|--:|");
    for round in 1..=rounds {
        for (name, ring) in CONFIGS {
            let out = Command::new(&exe)
                .args(["--child", &ring.to_string()])
                .output()
                .expect("the child runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            println!(
                "| {round} | {name} | {}",
                String::from_utf8_lossy(&out.stdout).trim()
            );
        }
    }
}

fn child(ring: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: `set` is a plain bit set, initialised by `CPU_ZERO`'s equivalent (zeroed) and
    // `CPU_SET`; `sched_setaffinity` reads it and changes only this thread's CPU mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(1, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    let dir = std::env::temp_dir().join(format!("tachylog-page-tail-{}", std::process::id()));
    let guard = tachylog::builder()
        .file(dir.join("page_tail.log"))
        .ring_capacity(ring)
        .init()
        .expect("a logger in a temporary directory");
    let calibration = clock::Calibration::measure(Duration::from_millis(50));
    let gap = calibration.to_ticks(GAP_NS);
    let mut samples = vec![0u64; CALLS];
    for i in 0..WARM_UP + CALLS {
        let (id, ms, path) = black_box((i as u64, (i % 5_000) as f64 * 0.0137, "/healthz"));
        let start = clock::stamp();
        tachylog::info!("request {} took {:.3} ms: {}", id, ms, path);
        let end = clock::stamp();
        if i >= WARM_UP {
            samples[i - WARM_UP] = end - start;
        }
        clock::spin_until(end + gap);
    }
    drop(guard);
    let _ = std::fs::remove_dir_all(dir);
    let slow_ticks = calibration.to_ticks(SLOW_NS);
    let mut by_residue = [0usize; 64];
    for (i, _) in samples.iter().enumerate().filter(|(_, &s)| s >= slow_ticks) {
        by_residue[i % 64] += 1;
    }
    let slow: usize = by_residue.iter().sum();
    let top = by_residue.iter().max().copied().unwrap_or(0);
    samples.sort_unstable();
    let ns = |q: f64| calibration.to_ns(samples[((CALLS as f64 * q) as usize).min(CALLS - 1)]);
    println!(
        "{} | {} | {} | {} | {slow} | {top} |",
        ns(0.5),
        ns(0.99),
        ns(0.999),
        ns(0.9999)
    );
}
