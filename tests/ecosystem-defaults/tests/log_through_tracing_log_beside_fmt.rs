//! tracing-subscriber's `fmt()` subscriber, with its default features, started by `.init()`
//! beside tachylog's layer (tachylog leaves the `log` slot, as the README says): `.init()` does
//! not panic, and `log::info!` records reach tachylog exactly once, through tracing-log, with
//! their own target, file and line rather than tracing-log's `log` target.

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[test]
fn fmt_init_beside_the_layer_gets_log_records_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let guard = tachylog::builder()
        .file(&path)
        .log_facade(tachylog::LogFacade::Off)
        .init()
        .expect("tachylog starts");
    tracing_subscriber::fmt()
        .finish()
        .with(tachylog::tracing_layer())
        .init();

    let log_line = line!() + 1;
    log::info!(target: "shop::db", "from the log crate {}", 7);
    log::debug!("below fmt's default INFO: filtered before it is built");
    tracing::info!(rows = 3, "from tracing");
    drop(guard);

    let text = std::fs::read_to_string(&path).unwrap();
    let from_log: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("from the log crate 7"))
        .collect();
    assert_eq!(from_log.len(), 1, "one line per log record:\n{text}");
    let line = from_log[0];
    assert!(line.contains(" INFO "), "{line}");
    assert!(
        line.contains(" shop::db: from the log crate 7"),
        "its own target: {line}"
    );
    let location = format!("log_through_tracing_log_beside_fmt.rs:{log_line})");
    assert!(line.ends_with(&location), "its own file and line: {line}");
    assert!(
        !line.contains("log.target"),
        "the origin fields are not fields: {line}"
    );
    assert_eq!(text.matches("from tracing rows=3").count(), 1, "{text}");
    assert!(!text.contains("below fmt's default"), "{text}");
}
