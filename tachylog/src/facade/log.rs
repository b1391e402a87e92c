//! The `log` crate facade: `log::info!` and friends go through tachylog once `init` ran.
//!
//! `log` hands over `fmt::Arguments`, whose types are erased, so these records are formatted on
//! the calling thread (into a reused thread-local buffer) and travel as text. Calls whose message
//! is a plain literal skip formatting.

use crate::frontend::producer::log_dynamic;
use std::cell::RefCell;
use std::fmt::Write as _;

struct Facade;

static FACADE: Facade = Facade;

thread_local! {
    static MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

impl log::Log for Facade {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        crate::filter::wanted_dynamic(metadata.level().into(), metadata.target())
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = record.level().into();
        let file = record.file().unwrap_or("?");
        let line = record.line().unwrap_or(0);
        if let Some(text) = record.args().as_str() {
            return log_dynamic(level, record.target(), file, line, text);
        }
        let format = |message: &mut String| {
            message.clear();
            let outcome = crate::lifecycle::catch_user_panic(|| write!(message, "{}", record.args()));
            if let Err(panic) = outcome {
                message.clear();
                let _ = write!(message, "<formatting panicked: {panic}>");
            }
        };
        // A `Display` impl that logs re-enters here with the buffer borrowed: use a fresh one.
        let reused = MESSAGE.try_with(|m| {
            m.try_borrow_mut().map(|mut m| {
                format(&mut m);
                log_dynamic(level, record.target(), file, line, &m);
            })
        });
        if !matches!(reused, Ok(Ok(()))) {
            let mut message = String::new();
            format(&mut message);
            log_dynamic(level, record.target(), file, line, &message);
        }
    }

    fn flush(&self) {
        crate::flush();
    }
}

/// Routes the `log` crate to tachylog, once per process. If the application installed another
/// `log` logger first, that one stays and `false` is returned.
pub(crate) fn install() -> bool {
    *INSTALLED.get_or_init(|| log::set_logger(&FACADE).is_ok())
}

static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Mirrors tachylog's most verbose level into `log`'s global filter, if `log` is routed to us
/// (another `log` logger installed first keeps its own).
pub(crate) fn set_max_level(level: Option<crate::Level>) {
    if INSTALLED.get() != Some(&true) {
        return;
    }
    log::set_max_level(match level {
        None => log::LevelFilter::Off,
        Some(l) => log::Level::from(l).to_level_filter(),
    });
}
