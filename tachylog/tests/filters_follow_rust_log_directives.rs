//! `RUST_LOG`-style filters: per-module levels from code, from an environment variable and at
//! run time, for our macros (resolved once per call site) and for the `log` facade.

mod common;

use std::sync::{Arc, Mutex};
use tachylog::Level;

#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<String>>>);

impl tachylog::Sink for Collect {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(line.text);
        let message = common::parse_line(text.trim_end())
            .unwrap()
            .message
            .to_string();
        self.0.lock().unwrap().push(message);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Collect {
    fn take(&self) -> Vec<String> {
        tachylog::flush();
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

mod net {
    pub fn log_all() {
        tachylog::error!("net error");
        tachylog::info!("net info");
        tachylog::debug!("net debug {}", 1);
        tachylog::trace!("net trace");
    }

    pub mod tcp {
        pub fn log_all() {
            tachylog::debug!("tcp debug");
            tachylog::trace!("tcp trace {}", 2);
        }
    }
}

fn log_top() {
    tachylog::warn!("top warn");
    tachylog::info!("top info {}", 3);
}

fn log_everything() {
    log_top();
    net::log_all();
    net::tcp::log_all();
    log::info!(target: "hyper::proto", "hyper info");
    log::warn!(target: "hyper::proto", "hyper warn");
}

#[test]
fn directives_set_levels_per_module_and_change_at_run_time() {
    let _lock = common::logger_lock();
    let sink = Collect::default();
    let krate = module_path!();
    let guard = common::expect_init(
        tachylog::builder()
            .sink(sink.clone())
            .filter(format!(
                "warn,{krate}::net=debug,{krate}::net::tcp=trace,hyper=error"
            ))
            .init(),
    );
    log_everything();
    assert_eq!(
        sink.take(),
        [
            "top warn",
            "net error",
            "net info",
            "net debug 1",
            "tcp debug",
            "tcp trace 2"
        ]
    );

    // Changed from another thread: call sites resolved before see the new verdicts.
    std::thread::spawn(move || {
        tachylog::set_filter(&format!("info,{krate}::net=off,hyper=warn")).unwrap()
    })
    .join()
    .unwrap();
    log_everything();
    assert_eq!(sink.take(), ["top warn", "top info 3", "hyper warn"]);

    tachylog::set_level(Level::Trace);
    log_everything();
    assert_eq!(sink.take().len(), 10);
    drop(guard);
}

#[test]
fn a_bad_directive_in_code_fails_init() {
    let _lock = common::logger_lock();
    let error = tachylog::builder()
        .filter("info,net=loud")
        .init()
        .err()
        .unwrap();
    assert!(matches!(error, tachylog::Error::Filter(_)), "{error:?}");
    assert!(error.to_string().contains("net=loud"), "{error}");
    assert!(tachylog::set_filter("x=y").is_err());
}

/// Runs `role`'s test in a child process whose `APP_LOG` is `value`, under a logger with
/// the code's filter `trace` and `env_filter("APP_LOG")` that logs everything: in the child
/// `None`, in the test the messages the child wrote and the child.
fn log_under_app_log(
    role: &str,
    value: impl FnOnce() -> std::ffi::OsString,
) -> Option<(Vec<String>, common::ChildRun)> {
    if let Some(log) = common::child_role(role) {
        // SAFETY: the child runs this one test on its only test thread, before any other
        // thread of its own exists.
        unsafe { std::env::set_var("APP_LOG", value()) };
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .filter("trace")
                .env_filter("APP_LOG")
                .init(),
        );
        log_everything();
        drop(guard);
        return None;
    }
    let child = common::run_child(role, std::time::Duration::from_secs(30));
    assert!(child.status.success(), "{child}");
    let messages = common::parse_log(&child.log)
        .iter()
        .map(|l| l.message.to_string())
        .collect();
    Some((messages, child))
}

/// The environment wins over the code, and a typo in it is reported, not fatal.
#[test]
fn the_environment_variable_takes_precedence_and_typos_are_skipped() {
    let krate = module_path!();
    let Some((messages, child)) = log_under_app_log(
        "the_environment_variable_takes_precedence_and_typos_are_skipped",
        || format!("error,{krate}::net=loud,{krate}::net::tcp=debug").into(),
    ) else {
        return;
    };
    assert_eq!(messages, ["net error", "tcp debug"], "{child}");
    assert!(
        child.stderr.contains("$APP_LOG") && child.stderr.contains("net=loud"),
        "{child}"
    );
}

/// A directive that is not UTF-8 (a byte of Latin-1 in the environment) is reported and
/// skipped like a typo; the others still apply.
#[cfg(unix)]
#[test]
fn a_directive_that_is_not_utf8_is_skipped_and_the_others_apply() {
    use std::os::unix::ffi::OsStringExt;
    let krate = module_path!();
    let Some((messages, child)) = log_under_app_log(
        "a_directive_that_is_not_utf8_is_skipped_and_the_others_apply",
        || {
            let mut value = format!("error,{krate}::net::tcp=debug,caf").into_bytes();
            value.extend_from_slice(b"\xe9=trace");
            std::ffi::OsString::from_vec(value)
        },
    ) else {
        return;
    };
    assert_eq!(messages, ["net error", "tcp debug"], "{child}");
    assert!(
        child.stderr.contains("$APP_LOG")
            && child.stderr.contains("caf\u{fffd}=trace")
            && child.stderr.contains("not valid UTF-8"),
        "{child}"
    );
}

/// `target: "..."` names a call site's target like `log` and `tracing` do: the filter and the
/// line both use it.
#[test]
fn an_explicit_target_is_filtered_and_written_as_given() {
    const AUDIT: &str = "audit::login";
    let _lock = common::logger_lock();
    let targets = Arc::new(Mutex::new(Vec::new()));

    struct Targets(Arc<Mutex<Vec<(String, String)>>>);
    impl tachylog::Sink for Targets {
        fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
            let pair = (line.target.to_string(), line.message.to_string());
            self.0.lock().unwrap().push(pair);
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let guard = common::expect_init(
        tachylog::builder()
            .sink(Targets(targets.clone()))
            .filter("warn,audit=info,audit::noisy=off")
            .init(),
    );
    tachylog::info!(target: AUDIT, user = 7u32; "login {}", 1);
    tachylog::info!(target: "audit::noisy", "never");
    tachylog::info!("module info, below the default warn");
    tachylog::warn!(target: "elsewhere", "warn {}", 2);
    drop(guard);
    let got = targets.lock().unwrap().clone();
    let expected =
        [(AUDIT, "login 1"), ("elsewhere", "warn 2")].map(|(t, m)| (t.to_string(), m.to_string()));
    assert_eq!(got, expected);
}
