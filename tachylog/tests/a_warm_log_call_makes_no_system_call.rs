//! A log call on a warm thread at a server's rate makes no system call and no allocation: the
//! calling thread only copies its record into its ring. Proved from outside for the system
//! calls: the child process runs under `strace -f -ff`, which writes each thread's calls to a
//! file of its own, and the calling thread marks the start and the end of its 100,000 timed
//! calls with a `getppid` of its own; nothing may lie between the two marks. The allocations
//! are counted by the child's global allocator for that thread alone over the same calls.
//!
//! The thread first logs at the same rate for two seconds, as a server's thread would have:
//! its ring has grown to what the rate needs. Both back ends: the default one, which sleeps
//! when idle (no call may wake it: the ring is large enough by then), and the spinning one
//! (`Builder::spin_backend`), which no call ever needs to wake. A spinning back end's rings
//! fill whenever it loses its CPU for a while (here, on two CPUs shared with strace, it does:
//! a ring of the first size, 8 KiB, holds 6 ms at this rate), and a full ring is replaced by a
//! larger one that the back end allocated beforehand: the caller still allocates nothing.
//! Both with the builder's defaults.
// strace and `getppid` as a marker: Linux only.
#![cfg(target_os = "linux")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts the allocations of the thread that set [`WATCHED`].
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards every call to `System` unchanged; the counting touches only an atomic and a
// `const`-initialised thread-local without a destructor, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if WATCHED.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if WATCHED.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Records a second: a busy server's thread.
const RATE: u64 = 20_000;
const WARM_UP: u64 = 2 * RATE;
const TIMED: u64 = 100_000;

/// The child: logs at [`RATE`] from one thread, warm first, then [`TIMED`] calls between two
/// `getppid` marks; prints the thread's id and the allocations it made in between.
#[test]
fn steady_caller() {
    let Some(log) = common::child_role("steady_caller") else {
        return;
    };
    let spin = std::env::var_os("TACHYLOG_TEST_SPIN").is_some();
    let guard = common::expect_init(tachylog::builder().file(&log).spin_backend(spin).init());
    let (tid, allocations) = std::thread::spawn(|| {
        let pace = Duration::from_nanos(1_000_000_000 / RATE);
        let mut next = Instant::now();
        let mut call = |i: u64| {
            tachylog::info!(
                "request {} took {:.3} ms: {}",
                i,
                i as f64 / 7.0,
                "/index.html"
            );
            next += pace;
            while Instant::now() < next {
                std::hint::spin_loop();
            }
        };
        for i in 0..WARM_UP {
            call(i);
        }
        // SAFETY: a system call with no arguments and no effect.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        WATCHED.with(|w| w.set(true));
        // SAFETY: as above; the start mark.
        unsafe { libc::syscall(libc::SYS_getppid) };
        for i in WARM_UP..WARM_UP + TIMED {
            call(i);
        }
        // SAFETY: as above; the end mark.
        unsafe { libc::syscall(libc::SYS_getppid) };
        WATCHED.with(|w| w.set(false));
        (tid, ALLOCATIONS.load(Ordering::Relaxed))
    })
    .join()
    .unwrap();
    drop(guard);
    println!("\ncaller {tid} allocations {allocations}");
}

#[test]
fn a_warm_call_makes_no_system_call_and_no_allocation() {
    if common::child_role("steady_caller").is_some() {
        return;
    }
    let strace = ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("strace is installed (Debian's strace; .ci/run installs it)");
    for spin in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("trace");
        let mut command = Command::new(strace);
        command
            .args(["-f", "-ff", "-o"])
            .arg(&prefix)
            .arg(std::env::current_exe().unwrap())
            .args([
                "steady_caller",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TACHYLOG_TEST_CHILD_SCENARIO", "steady_caller")
            .env("TACHYLOG_TEST_CHILD_LOG", dir.path().join("child.log"));
        if spin {
            command.env("TACHYLOG_TEST_SPIN", "1");
        }
        let out = command.output().expect("runs strace");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = stdout
            .lines()
            .find_map(|l| l.strip_prefix("caller "))
            .unwrap_or_else(|| panic!("no report from the child:\n{stdout}"));
        let (tid, allocations) = report.split_once(" allocations ").unwrap();
        let trace = std::fs::read_to_string(format!("{}.{tid}", prefix.display()))
            .expect("the calling thread's trace");
        let marks: Vec<usize> = trace
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("getppid("))
            .map(|(i, _)| i)
            .collect();
        let [start, end] = marks[..] else {
            panic!("two marks expected in the calling thread's trace:\n{trace}");
        };
        let between: Vec<&str> = trace
            .lines()
            .skip(start + 1)
            .take(end - start - 1)
            .collect();
        let back_end = if spin { "spinning" } else { "sleeping" };
        assert!(
            between.is_empty(),
            "{back_end} back end: system calls on the calling thread in {TIMED} warm calls:\n{}",
            between.join("\n")
        );
        assert_eq!(
            allocations, "0",
            "{back_end} back end: allocations on the calling thread in {TIMED} warm calls"
        );
        let log = common::read_log(&dir.path().join("child.log"));
        assert_eq!(
            log.lines().count() as u64,
            WARM_UP + TIMED,
            "{back_end} back end: every record written"
        );
    }
}
