//! `init` reports what went wrong as an `Err`, never a panic: a log file that cannot be
//! created names its path, and a second logger while one is alive is `AlreadyInitialized`.
//! A failed `init` leaves nothing behind: the next good one succeeds.

mod common;

use std::error::Error as _;
use std::fs;
use std::path::Path;

fn assert_open_error(path: &Path) {
    let result = std::panic::catch_unwind(|| tachylog::builder().file(path).init());
    let result = result.unwrap_or_else(|_| panic!("init panicked for {}", path.display()));
    match result {
        Ok(_guard) => panic!("init succeeded with unwritable path {}", path.display()),
        Err(e) => {
            let shown = e.to_string();
            assert!(
                shown.contains(&path.display().to_string())
                    || path
                        .parent()
                        .is_some_and(|p| shown.contains(&p.display().to_string())),
                "error does not name the path {}: {shown}",
                path.display()
            );
            assert!(e.source().is_some(), "error hides the I/O cause: {shown}");
        }
    }
}

#[test]
fn unwritable_path_is_an_error_naming_it() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();

    // A parent "directory" that is a regular file: directories cannot be created under it.
    let regular = dir.path().join("regular-file");
    fs::write(&regular, b"not a directory").unwrap();
    assert_open_error(&regular.join("sub").join("app.log"));
    assert_open_error(&regular.join("app.log"));

    // The log path is an existing directory.
    let directory = dir.path().join("a-directory");
    fs::create_dir(&directory).unwrap();
    assert_open_error(&directory);
    match tachylog::builder().file(&directory).init() {
        Err(tachylog::Error::OpenFile { .. }) => {}
        Err(e) => panic!("a directory as log file should be Error::OpenFile, got: {e}"),
        Ok(_) => panic!("init succeeded on a directory"),
    }

    // An empty path names no file.
    match tachylog::builder().file("").init() {
        Err(e @ tachylog::Error::OpenFile { .. }) => {
            let shown = e.to_string();
            assert!(shown.contains("empty"), "the cause is named: {shown}");
        }
        Err(e) => panic!("an empty path should be Error::OpenFile, got: {e}"),
        Ok(_) => panic!("init succeeded with an empty path"),
    }

    // Nothing was left initialised by the failures.
    let good = dir.path().join("logs").join("good.log");
    let guard = common::expect_init(tachylog::builder().file(&good).init());
    tachylog::info!("after failed inits");
    drop(guard);
    let text = common::read_log(&good);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0].message, "after failed inits");
}

#[test]
fn second_init_while_guard_alive_is_already_initialized() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.log");
    let second = dir.path().join("second.log");

    let guard = common::expect_init(tachylog::builder().file(&first).init());
    match tachylog::builder().file(&second).init() {
        Err(tachylog::Error::AlreadyInitialized) => {}
        Err(e) => panic!("expected Error::AlreadyInitialized, got: {e}"),
        Ok(_) => panic!("a second logger was initialised while the first is alive"),
    }
    tachylog::info!("to the first logger");
    drop(guard);

    // After the guard is dropped, init works again and records go to the new file only.
    let guard = common::expect_init(tachylog::builder().file(&second).init());
    tachylog::info!("to the second logger");
    drop(guard);

    let first_text = common::read_log(&first);
    let first_lines = common::parse_log(&first_text);
    let first_messages: Vec<&str> = first_lines.iter().map(|l| l.message).collect();
    assert_eq!(first_messages, ["to the first logger"]);
    let second_text = common::read_log(&second);
    let second_lines = common::parse_log(&second_text);
    let second_messages: Vec<&str> = second_lines.iter().map(|l| l.message).collect();
    assert_eq!(second_messages, ["to the second logger"]);
}
