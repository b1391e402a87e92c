//! The `log` crate facade: `log::info!` and friends go through tachylog once `init` ran.
//!
//! `log` hands over `fmt::Arguments`, whose types are erased, so these records are formatted on
//! the calling thread (into a reused thread-local buffer) and travel as text. Calls whose message
//! is a plain literal skip formatting. Key-values (`log::info!(user = 42; "...")`) become
//! structured fields, typed where `log` says what they are (integers, floats, booleans, text)
//! and formatted with their `Display` otherwise.

use crate::fields::wire::FieldWriter;
use crate::fields::FieldValue;
use crate::frontend::producer::log_dynamic;
use log::kv::{self, VisitSource, VisitValue};
use std::fmt::Write as _;

struct Facade;

static FACADE: Facade = Facade;

/// Encodes a record's key-values.
struct Pairs<'a, 'b>(&'a mut FieldWriter<'b>);

impl<'kvs> VisitSource<'kvs> for Pairs<'_, '_> {
    fn visit_pair(&mut self, key: kv::Key<'kvs>, value: kv::Value<'kvs>) -> Result<(), kv::Error> {
        let mut typed = Typed {
            key: key.as_str(),
            writer: self.0,
        };
        if value.visit(&mut typed).is_err() {
            typed.writer.formatted(key.as_str(), &value);
        }
        Ok(())
    }
}

/// One key-value, by the type `log` reports for it.
struct Typed<'a, 'b> {
    key: &'a str,
    writer: &'a mut FieldWriter<'b>,
}

impl<'v> VisitValue<'v> for &mut Typed<'_, '_> {
    fn visit_any(&mut self, value: kv::Value<'_>) -> Result<(), kv::Error> {
        self.writer.formatted(self.key, &value);
        Ok(())
    }
    fn visit_null(&mut self) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::Null);
        Ok(())
    }
    fn visit_u64(&mut self, value: u64) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::U64(value));
        Ok(())
    }
    fn visit_i64(&mut self, value: i64) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::I64(value));
        Ok(())
    }
    fn visit_u128(&mut self, value: u128) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::U128(value));
        Ok(())
    }
    fn visit_i128(&mut self, value: i128) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::I128(value));
        Ok(())
    }
    fn visit_f64(&mut self, value: f64) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::F64(value));
        Ok(())
    }
    fn visit_bool(&mut self, value: bool) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::Bool(value));
        Ok(())
    }
    fn visit_str(&mut self, value: &str) -> Result<(), kv::Error> {
        self.writer.value(self.key, FieldValue::Str(value));
        Ok(())
    }
    fn visit_char(&mut self, value: char) -> Result<(), kv::Error> {
        self.writer
            .value(self.key, FieldValue::Str(value.encode_utf8(&mut [0; 4])));
        Ok(())
    }
}

/// Encodes the record's key-values into `out` (cleared first).
fn encode_fields(record: &log::Record<'_>, out: &mut Vec<u8>) {
    out.clear();
    let source = record.key_values();
    if source.count() == 0 {
        return;
    }
    let mut writer = FieldWriter::new(out);
    let _ = source.visit(&mut Pairs(&mut writer));
}

impl log::Log for Facade {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        // What a sink's own threads log (an exporter's HTTP stack) would feed that sink.
        if crate::frontend::mute::current_thread_muted() {
            return false;
        }
        crate::filter::wanted_dynamic(metadata.level().into(), metadata.target())
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = record.level().into();
        let file = record.file().unwrap_or("?");
        let line = record.line().unwrap_or(0);
        let format = |message: &mut String| {
            message.clear();
            let outcome =
                crate::panic_guard::catch_user_panic(|| write!(message, "{}", record.args()));
            if let Err(panic) = outcome {
                message.clear();
                let _ = write!(message, "<formatting panicked: {panic}>");
            }
        };
        let send = |message: &mut String, fields: &mut Vec<u8>| {
            encode_fields(record, fields);
            let text = match record.args().as_str() {
                Some(text) => text,
                None => {
                    format(message);
                    message
                }
            };
            log_dynamic(
                level,
                record.target(),
                file,
                line,
                text,
                fields,
                crate::frontend::trace::current(),
            );
        };
        super::with_scratch(send);
    }

    fn flush(&self) {
        crate::flush();
    }
}

/// Whether [`Builder::init`](crate::Builder::init) makes tachylog the `log` crate's logger.
///
/// The `log` crate has one global logger slot per process, and whoever sets it first keeps it
/// for good. tachylog takes it by default, so that `log::info!` calls from the application and
/// its libraries reach tachylog, exactly once each, with their target and key-values.
///
/// Leave it ([`LogFacade::Off`]) when something else should own it. The usual case is a
/// `tracing` application whose `tracing_subscriber` stack is started with `.init()`: with
/// tracing-subscriber's default features that call also takes the `log` slot (through
/// `tracing-log`) and panics if it is taken. `log` records then reach tachylog through that
/// bridge and `tracing_layer()` (feature `tracing`), once each, with their target, file and
/// line; `tracing-log` does not carry `log`'s key-values.
///
/// ```
/// let guard = tachylog::builder()
///     .stdout()
///     .log_facade(tachylog::LogFacade::BestEffort)
///     .init()?;
/// log::info!("reaches tachylog unless another `log` logger was set first");
/// # drop(guard);
/// # Ok::<(), tachylog::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFacade {
    /// Take the slot; if another logger already holds it, `init` fails with
    /// [`Error::LogSlotTaken`](crate::Error::LogSlotTaken) and starts nothing (the default).
    #[default]
    Required,
    /// Take the slot if it is free; if it is not, `init` succeeds and the first line tachylog
    /// writes is a WARN saying that `log` records go to the other logger.
    BestEffort,
    /// Leave the slot alone: `log` records go wherever the application sends them.
    Off,
}

/// Routes the `log` crate to tachylog, once per process. Returns whether tachylog holds the
/// slot (it may from an earlier `init` in this process).
pub(crate) fn install() -> bool {
    *INSTALLED.get_or_init(|| log::set_logger(&FACADE).is_ok())
}

/// Whether tachylog holds the `log` slot, without trying to take it.
pub(crate) fn installed() -> bool {
    INSTALLED.get() == Some(&true)
}

static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Mirrors tachylog's most verbose level into `log`'s global filter, if `log` is routed to us
/// (another `log` logger installed first keeps its own).
pub(crate) fn set_max_level(level: Option<crate::Level>) {
    if !installed() {
        return;
    }
    log::set_max_level(match level {
        None => log::LevelFilter::Off,
        Some(l) => log::Level::from(l).to_level_filter(),
    });
}
