//! Records from the `log` crate go through tachylog once `init` ran: same file, same line
//! format, the `log` level and target in place of tachylog's level and module path, and the
//! global minimum level applies to them too.

mod common;

use std::time::Duration;

#[test]
fn log_facade() {
    let _watchdog = common::watchdog("log_facade", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("facade.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    assert!(
        log::log_enabled!(log::Level::Info),
        "log's max level not raised by init"
    );
    let info_line = line!() + 1;
    log::info!(target: "facade::target", "from the log crate {} {:?}", 7, "quoted");
    log::warn!("warning with the default target");
    log::debug!("below the default Info level: must not appear");
    log::error!("error with\na newline");
    tachylog::info!("and one from tachylog itself");
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), 4, "expected 4 lines:\n{text}");

    assert_eq!(lines[0].level, "INFO");
    assert_eq!(lines[0].module, "facade::target");
    assert_eq!(lines[0].message, "from the log crate 7 \"quoted\"");
    assert!(
        lines[0].file.ends_with("log_facade.rs") && lines[0].line == info_line,
        "location: {:?}",
        lines[0]
    );

    assert_eq!(lines[1].level, "WARN");
    assert_eq!(lines[1].module, "log_facade");
    assert_eq!(lines[1].message, "warning with the default target");

    assert_eq!(lines[2].level, "ERROR");
    assert_eq!(lines[2].message, r"error with\na newline");

    assert_eq!(lines[3].level, "INFO");
    assert_eq!(lines[3].message, "and one from tachylog itself");
    assert_eq!(lines[0].thread_name, lines[3].thread_name);
}
