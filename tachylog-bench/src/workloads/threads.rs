//! `threads_100`, `threads_1000`, `threads_2000`: what a logger holds per thread that logs.
//! The child installs the logger and starts N threads (std's default spawn, the same for every
//! logger). Once all of them exist they each log 100 `request` records, then wait until every
//! other thread has logged too, so all N are alive, each with whatever the logger keeps for it,
//! at the same moment. Then they exit, the logger finishes, and the child reads its peak
//! resident set (`VmHWM`). `nolog` runs the same threads without logging: the threads' own
//! stacks and the harness, which the report subtracts.

use std::path::Path;
use std::sync::{Barrier, Condvar, Mutex};
use std::time::Instant;

use super::{latency, Scale};
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::machine::{peak_rss_kib, Usage};
use crate::report::ThreadsRun;

/// The thread counts.
pub const COUNTS: [u32; 3] = [100, 1_000, 2_000];

/// Records each thread logs.
pub const RECORDS_PER_THREAD: u64 = 100;

/// Threads at `scale`: N, or a hundredth of it (at least 4) in the smoke test.
pub fn threads(n: u32, scale: Scale) -> u32 {
    match scale {
        Scale::Smoke => (n / 100).max(4),
        Scale::Quick | Scale::Full => n,
    }
}

/// Records per thread at `scale`.
pub fn records_per_thread(scale: Scale) -> u64 {
    scale.count(RECORDS_PER_THREAD)
}

/// One line for the report header.
pub fn describe(name: &str, n: u32, scale: Scale) -> String {
    format!(
        "{name}: {} threads alive at once, each logging {} x info!(\"request {{}} took {{:.3}} \
         ms: {{}}\", u64, f64, &str) and waiting until all have logged; peak RSS (VmHWM) after \
         the logger's finish, `nolog`'s subtracted",
        threads(n, scale),
        records_per_thread(scale)
    )
}

/// Runs the workload in this (child) process.
pub fn run<L: BenchLogger>(file: &Path, n: u32, scale: Scale) -> Result<ThreadsRun, BenchError> {
    let threads = threads(n, scale);
    let per_thread = records_per_thread(scale);
    let logger = L::init(file)?;
    let rss_before_kib = peak_rss_kib();
    let usage_before = Usage::process();
    let t0 = Instant::now();
    let gate = Gate::default();
    let all_logged = Barrier::new(threads as usize);
    let spawned = std::thread::scope(|s| {
        for _ in 0..threads {
            let spawned = std::thread::Builder::new().spawn_scoped(s, || {
                if !gate.wait() {
                    return;
                }
                for k in 1..=per_thread {
                    let (id, ms, path) = latency::request_args(k);
                    logger.request(id, ms, path);
                }
                all_logged.wait();
            });
            if let Err(e) = spawned {
                // The threads already started would wait at the barrier for the missing ones.
                gate.open(false);
                return Err(e);
            }
        }
        gate.open(true);
        Ok(())
    });
    spawned.map_err(|e| BenchError::io(format!("<spawning {threads} threads>"), e))?;
    logger.finish()?;
    let used = Usage::process().since(usage_before);
    Ok(ThreadsRun {
        threads,
        records_per_thread: per_thread,
        peak_rss_kib: peak_rss_kib(),
        rss_before_kib,
        wall_s: t0.elapsed().as_secs_f64(),
        cpu_s: used.cpu_s,
    })
}

/// Holds the threads until every one of them exists, or sends them home if one could not be
/// started.
#[derive(Default)]
struct Gate {
    /// `None` while closed; then whether to go on.
    state: Mutex<Option<bool>>,
    opened: Condvar,
}

impl Gate {
    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.opened.notify_all();
    }

    /// Waits until opened; returns whether to go on.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_gate_sends_every_waiting_thread_home() {
        for go in [true, false] {
            let gate = Gate::default();
            let went = std::thread::scope(|s| {
                let waiting: Vec<_> = (0..4).map(|_| s.spawn(|| gate.wait())).collect();
                gate.open(go);
                waiting
                    .into_iter()
                    .map(|t| t.join().unwrap())
                    .collect::<Vec<_>>()
            });
            assert_eq!(went, [go; 4]);
        }
    }
}
