//! The bench-only hook `__private::hold_backend`: while held the back end writes nothing, even
//! past its flush interval; after the release `flush()` writes every record; and dropping the
//! guard while still held drains instead of hanging.

mod common;

use std::time::Duration;

fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[test]
fn held_back_end_writes_nothing_until_released() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "held_back_end_writes_nothing_until_released",
        Duration::from_secs(60),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .flush_interval(Duration::from_millis(1))
            .init(),
    );
    tachylog::__private::hold_backend(true);
    for i in 0..1_000u32 {
        tachylog::info!("held record {}", i);
    }
    // What is checked is an absence, and a held worker leaves no trace to wait for (it counts
    // no wake-up and answers no flush until released), so the test watches for a while: 200
    // flush intervals, in which a worker that ignored the hold would have written.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(lines(&path), 0, "the back end wrote while held");
    tachylog::__private::hold_backend(false);
    tachylog::flush();
    assert_eq!(lines(&path), 1_000);

    tachylog::__private::hold_backend(true);
    tachylog::info!("logged while held, written by the guard's drop");
    drop(guard);
    tachylog::__private::hold_backend(false);
    assert_eq!(lines(&path), 1_001);
}
