//! `fork()` while another thread logs: the child never deadlocks, whatever lock that thread
//! held, and logging is cleanly disabled in it (calls do nothing, `flush` and `reopen` return,
//! dropping the inherited guard returns, SIGTERM still ends it); the parent keeps logging and
//! loses nothing. 20 forks, each child bounded by a 30 s limit.
// Unix only: `fork()` is Unix-only.
#![cfg(unix)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

#[test]
fn forked_children_neither_deadlock_nor_log() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("fork test", Duration::from_secs(300));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fork.log");
    let mut guard = Some(common::expect_init(tachylog::builder().file(&path).init()));
    let stop = Arc::new(AtomicBool::new(false));
    let noise = {
        let stop = stop.clone();
        thread::Builder::new()
            .name("noise".into())
            .spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    tachylog::info!("noise {}", i);
                    i += 1;
                    if i % 1000 == 0 {
                        tachylog::flush(); // also fork while this thread is inside flush()
                    }
                }
                i
            })
            .unwrap()
    };
    for round in 0..20 {
        // SAFETY: the child below only logs, flushes, drops the guard and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = !tachylog::enabled(tachylog::Level::Error);
            for i in 0..1000 {
                tachylog::error!("child {} record {}", round, i);
            }
            tachylog::flush();
            tachylog::reopen();
            drop(guard.take());
            if ok && round % 2 == 1 {
                // The parent's signal thread is not in the child: SIGTERM must still end it.
                // SAFETY: sending a signal to our own process.
                unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
                // Within the parent's 30 s limit, so that a signal that does not end the
                // child shows as the wrong status, not as a hang.
                common::await_fatal_signal(Duration::from_secs(10));
            }
            // SAFETY: leaving the child without running the parent's atexit hooks or harness.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child without blocking.
        let reaped = || pid == unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if !common::poll_until(Duration::from_secs(30), reaped) {
            // SAFETY: killing our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("forked child {round} hung: deadlock after fork");
        }
        let expected = if round % 2 == 1 {
            libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTERM
        } else {
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        };
        assert!(
            expected,
            "child {round} ended with status {status:#x} (exit 1: logging still enabled)"
        );
        tachylog::info!("parent after fork {}", round);
    }
    stop.store(true, Ordering::Relaxed);
    let noise_count = noise.join().unwrap();
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert!(
        !text.contains("child "),
        "a forked child's record reached the parent's log"
    );
    let noise_lines: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.message.strip_prefix("noise ")?.parse().ok())
        .collect();
    assert_eq!(
        noise_lines,
        (0..noise_count).collect::<Vec<u64>>(),
        "parent lost records"
    );
    for round in 0..20 {
        assert!(text.contains(&format!(": parent after fork {round} (")));
    }
}
