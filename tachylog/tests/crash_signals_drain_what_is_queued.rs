//! A process that crashes (SIGSEGV from a null write, SIGBUS from a truncated mapping, SIGILL
//! from `ud2`, SIGFPE, SIGABRT from `std::process::abort`, a stack overflow) right after logging,
//! without any flush: the crash handler's bounded drain gets every completely logged record to
//! disk, and the process still dies of its signal. Each scenario runs in a real child process,
//! several times. (Without the handler, most of these records are still in the rings when the
//! process dies: see the `handle_crashes(false)` control scenario.)
// Unix only: crash signals and their handlers are Linux-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

const RECORDS: u64 = 20_000;
const RUNS: usize = 5;

/// Logs from two threads, makes sure no core file is written, then crashes with `crash`.
fn log_then_crash(log: &std::path::Path, handle_crashes: bool, crash: fn()) -> ! {
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setting a resource limit of our own process from a valid struct.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
    std::mem::forget(common::expect_init(
        tachylog::builder()
            .file(log)
            .handle_crashes(handle_crashes)
            .init(),
    ));
    common::log_numbered_from_two_threads("other", RECORDS);
    crash();
    std::process::exit(99); // the crash did not happen
}

fn assert_drained(scenario: &str, sig: libc::c_int) {
    common::assert_killed_by_after_writing_all(scenario, sig, RUNS, RECORDS);
}

fn null_write() {
    // SAFETY: none: this is the crash under test.
    unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
}

fn truncated_mapping() {
    let file = tempfile::tempfile().unwrap();
    file.set_len(4096).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: mapping a page of our own file; the crash comes after we shrink it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        file.set_len(0).unwrap();
        std::ptr::read_volatile(p as *const u8);
    }
}

#[cfg(target_arch = "x86_64")]
fn illegal_instruction() {
    // SAFETY: none: `ud2` raises SIGILL, the crash under test.
    unsafe { std::arch::asm!("ud2") };
}

#[cfg(not(target_arch = "x86_64"))]
fn illegal_instruction() {
    // SAFETY: raising a signal at ourselves.
    unsafe { libc::raise(libc::SIGILL) };
}

#[cfg(target_arch = "x86_64")]
fn divide_by_zero() {
    // SAFETY: none: an integer division by zero traps with SIGFPE, the crash under test.
    unsafe {
        std::arch::asm!(
            "xor edx, edx",
            "div {d}",
            d = in(reg) 0u64,
            inout("rax") 1u64 => _,
            out("rdx") _,
        )
    };
}

#[cfg(not(target_arch = "x86_64"))]
fn divide_by_zero() {
    // SAFETY: raising a signal at ourselves.
    unsafe { libc::raise(libc::SIGFPE) };
}

#[allow(unconditional_recursion)]
fn overflow(depth: u64) -> u64 {
    let frame = [depth; 64];
    std::hint::black_box(&frame);
    overflow(depth + 1) + frame[3]
}

fn stack_overflow() {
    std::hint::black_box(overflow(0));
}

macro_rules! crash_scenarios {
    ($($name:ident: $crash:expr => $sig:expr;)*) => {$(
        #[test]
        fn $name() {
            if let Some(log) = common::child_role(stringify!($name)) {
                log_then_crash(&log, true, $crash);
            }
            assert_drained(stringify!($name), $sig);
        }
    )*};
}

crash_scenarios! {
    sigsegv_null_write: null_write => libc::SIGSEGV;
    sigbus_truncated_mapping: truncated_mapping => libc::SIGBUS;
    sigill_ud2: illegal_instruction => libc::SIGILL;
    sigfpe_divide_by_zero: divide_by_zero => libc::SIGFPE;
    sigabrt_process_abort: || std::process::abort() => libc::SIGABRT;
    // The runtime's stack-overflow reporter (chained after the drain) ends with abort().
    stack_overflow_then_abort: stack_overflow => libc::SIGABRT;
}

/// Control: the same crash with the handler off still dies of SIGSEGV, and the file lacks
/// records in at least one of the runs, which shows the scenarios above test the handler.
#[test]
fn without_the_handler_records_are_lost() {
    if let Some(log) = common::child_role("without_the_handler_records_are_lost") {
        log_then_crash(&log, false, null_write);
    }
    let mut complete = 0;
    for _ in 0..RUNS {
        let child = common::run_child(
            "without_the_handler_records_are_lost",
            Duration::from_secs(60),
        );
        assert_eq!(child.status.signal(), Some(libc::SIGSEGV), "{child}");
        // Without the handler, the crash can kill the process while the writing thread is
        // inside `write(2)`: Linux stops copying a write at a page boundary once a fatal
        // signal is pending, so the file may end in a torn line. That is the loss this test
        // expects; the complete lines before it must still parse.
        let complete_part = match child.log.rfind('\n') {
            Some(end) => &child.log[..=end],
            None => "",
        };
        let lines = common::parse_log(complete_part);
        if lines.len() as u64 == 2 * RECORDS {
            complete += 1;
        }
    }
    assert!(
        complete < RUNS,
        "every run was complete even without the crash handler"
    );
}
