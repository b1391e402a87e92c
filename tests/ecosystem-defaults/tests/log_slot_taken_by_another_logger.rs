//! Another `log` logger was set before tachylog's `init`: with the default
//! (`LogFacade::Required`) `init` fails with `Error::LogSlotTaken` and starts nothing; with
//! `LogFacade::BestEffort` it starts and its first line is a WARN saying where `log` records
//! go. `log::info!` records are never silently lost: they reach the other logger.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the records it gets.
struct Counting(AtomicUsize);

impl log::Log for Counting {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, _: &log::Record<'_>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn flush(&self) {}
}

static OTHER: Counting = Counting(AtomicUsize::new(0));

#[test]
fn required_fails_and_best_effort_warns() {
    log::set_logger(&OTHER).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");

    let error = match tachylog::builder().file(&path).init() {
        Err(error) => error,
        Ok(_) => panic!("init must fail while another logger holds the log slot"),
    };
    assert!(matches!(error, tachylog::Error::LogSlotTaken), "{error:?}");
    assert!(
        error.to_string().contains("log_facade"),
        "the error says what to do: {error}"
    );

    let guard = tachylog::builder()
        .file(&path)
        .log_facade(tachylog::LogFacade::BestEffort)
        .init()
        .expect("best effort starts");
    log::info!("goes to the other logger");
    tachylog::info!("tachylog's own record");
    drop(guard);

    assert_eq!(OTHER.0.load(Ordering::SeqCst), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains(" WARN  ") && lines[0].contains("another logger already holds"),
        "{text}"
    );
    assert!(lines[1].contains("tachylog's own record"), "{text}");
}
