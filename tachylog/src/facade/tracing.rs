//! The `tracing` facade (feature `tracing`): a [`tracing_subscriber::Layer`] that sends
//! `tracing` events, their fields and the fields of the spans they happen in through
//! tachylog's queue.
//!
//! **Which thread.** Everything here runs on the thread that creates a span or emits an event,
//! inside `tracing`'s dispatch; the back end only decodes what arrives. `tracing` hands over
//! its values type-erased behind a visitor, so, like the `log` facade, an event's message is
//! formatted here (into a reused thread-local `String`) and its fields are encoded here (into
//! a reused thread-local buffer) with [`FieldWriter`]: integers, floats, booleans and text keep
//! their type, `?`/`%` values are formatted right away.
//!
//! **Spans** have their fields encoded once, when they open (and again on `span.record`),
//! into a byte string kept in the span's extensions in the registry; an event copies the
//! encoded fields of each span it is in, outermost first. An event costs: one filter check,
//! one read lock per enclosing span (the registry's own, to reach its extensions), the
//! formatting of the message and of any `?`/`%` fields, and one [`log_dynamic`] call. No
//! allocation once the thread's buffers have grown to the largest event (opening a span and
//! `span.record` do allocate: the registry stores what they produce).
//!
//! **Filtering.** This layer never tells `tracing` that it is not interested in a call site
//! or an event: in a [`Layered`](tracing_subscriber::layer::Layered) stack that verdict would
//! disable it for every other layer too (an `fmt` layer stacked beside it would lose it).
//! Instead tachylog's own filter ([`Builder::filter`](crate::Builder::filter),
//! [`set_filter`](crate::set_filter), the level) is checked at the top of `on_event`, before
//! any work. To keep events from being built at all, put an `EnvFilter` or a `LevelFilter` in
//! the stack: those filter for every layer, as `tracing` intends. Events logged while no
//! tachylog logger runs are dropped by that same check, quietly.
//!
//! **Never.** Nothing here waits for the back end (except under `OnFull::Block` with a full
//! ring, as every log call does), and no user `Debug`/`Display` impl runs while a lock is held
//! or a buffer is borrowed in a way that its own logging could trip over: a panicking impl
//! leaves a `<formatting panicked: ...>` marker in place of its value.

use crate::fields::wire::{decode, FieldWriter};
use crate::fields::{FieldValue, Fields};
use crate::frontend::producer::log_dynamic;
use crate::frontend::scope::{self, ScopeBuilder};
use crate::Level;
use std::fmt::{self, Write as _};
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// A [`tracing_subscriber::Layer`] that writes `tracing` events, with their fields and the
/// names and fields of the spans they happen in, through tachylog (feature `tracing`).
///
/// Add it to a [`tracing_subscriber::registry()`](tracing_subscriber::registry()) next to
/// any other layers. Events go to tachylog's sinks in every [`Format`](crate::Format): the
/// field named `message` is the record's message, the others are its
/// [`Fields`](crate::Fields), and the spans read `outer{id=7}:inner` in text and `"spans"` in
/// JSON. tachylog's own filter applies on top of whatever the stack filters; it never hides
/// events from the other layers. Nothing is written while no tachylog logger runs.
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
///
/// let dir = std::env::temp_dir().join("tachylog-doc-tracing-layer");
/// let guard = tachylog::builder().file(dir.join("app.log")).init()?;
/// let subscriber = tracing_subscriber::registry().with(tachylog::tracing_layer());
/// tracing::subscriber::with_default(subscriber, || {
///     let span = tracing::info_span!("request", id = 7u64);
///     let _entered = span.enter();
///     tracing::info!(rows = 3, "query {} done", "users");
/// });
/// drop(guard);
/// let text = std::fs::read_to_string(dir.join("app.log")).unwrap();
/// assert!(text.contains("request{id=7}: query users done rows=3"), "{text}");
/// # std::fs::remove_dir_all(dir).unwrap();
/// # Ok::<(), tachylog::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingLayer {
    /// Spans of this name open a request scope each.
    scope_span: Option<&'static str>,
    scope: ScopeBuilder,
}

impl TracingLayer {
    /// The layer. It holds no state: tachylog's logger, configured with
    /// [`builder`](crate::builder), is global.
    ///
    /// ```
    /// use tracing_subscriber::layer::SubscriberExt as _;
    /// let subscriber = tracing_subscriber::registry().with(tachylog::TracingLayer::new());
    /// # drop(subscriber);
    /// ```
    pub fn new() -> Self {
        TracingLayer::default()
    }

    /// Gives every span named `name` a request [`Scope`](crate::Scope) of its own, with the
    /// defaults: the DEBUG events (and tachylog records) logged inside it, on whatever thread
    /// and across `.await`s of an `instrument`ed future, are held and written only if an
    /// ERROR is logged inside it before it closes. A span of that name inside another opens a
    /// nested scope.
    ///
    /// ```
    /// use tracing_subscriber::layer::SubscriberExt as _;
    /// let layer = tachylog::tracing_layer().request_scope("request");
    /// let subscriber = tracing_subscriber::registry().with(layer);
    /// # drop(subscriber);
    /// ```
    pub fn request_scope(self, name: &'static str) -> Self {
        self.request_scope_with(name, crate::Scope::builder())
    }

    /// [`TracingLayer::request_scope`] with other levels or bounds.
    ///
    /// ```
    /// let layer = tachylog::tracing_layer()
    ///     .request_scope_with("request", tachylog::Scope::builder().max_records(200));
    /// # drop(layer);
    /// ```
    pub fn request_scope_with(mut self, name: &'static str, scope: ScopeBuilder) -> Self {
        self.scope_span = Some(name);
        self.scope = scope;
        self
    }
}

/// The request scope a span opened ([`TracingLayer::request_scope`]), in its extensions; it
/// ends when the span closes.
struct SpanScope(crate::Scope);

thread_local! {
    /// The scope spans this thread is in, innermost last, with the scope each one's entry
    /// replaced.
    static ENTERED_SCOPES: std::cell::RefCell<Vec<(Id, u64)>> = const {
        std::cell::RefCell::new(Vec::new())
    };
}

/// Shorthand for [`TracingLayer::new`].
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
/// let subscriber = tracing_subscriber::registry().with(tachylog::tracing_layer());
/// # drop(subscriber);
/// ```
pub fn tracing_layer() -> TracingLayer {
    TracingLayer::new()
}

/// A span's fields, encoded as [`FieldWriter`] items, stored in the span's extensions.
/// Absent for a span that has no recorded field.
struct SpanFields(Vec<u8>);

fn level_of(level: &tracing_core::Level) -> Level {
    match *level {
        tracing_core::Level::ERROR => Level::Error,
        tracing_core::Level::WARN => Level::Warn,
        tracing_core::Level::INFO => Level::Info,
        tracing_core::Level::DEBUG => Level::Debug,
        _ => Level::Trace,
    }
}

/// Encodes visited values as fields; with `message` set, the field named `message` is
/// formatted into it instead (an event's message).
struct Encoder<'a, 'b> {
    writer: &'a mut FieldWriter<'b>,
    message: Option<&'a mut String>,
    /// Leave out the `log.*` origin fields of a record bridged from `log` by `tracing-log`:
    /// they are the record's target, file and line, not fields of its own.
    skip_log_origin: bool,
}

impl Encoder<'_, '_> {
    /// A value with a native type, or the message's text.
    fn typed(&mut self, field: &Field, value: FieldValue<'_>) {
        if self.skip_log_origin && is_log_origin(field) {
            return;
        }
        match &mut self.message {
            Some(message) if field.name() == "message" => {
                let _ = write!(message, "{value}");
            }
            _ => self.writer.value(field.name(), value),
        }
    }

    /// A value only `Debug` or `Display` can show: formatted here, a panic caught.
    fn formatted(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        if self.skip_log_origin && is_log_origin(field) {
            return;
        }
        match &mut self.message {
            Some(message) if field.name() == "message" => {
                let start = message.len();
                let outcome = crate::panic_guard::catch_user_panic(|| message.write_fmt(value));
                if let Err(panic) = outcome {
                    message.truncate(start);
                    let _ = write!(message, "<formatting panicked: {panic}>");
                }
            }
            _ => self.writer.formatted(field.name(), &value),
        }
    }
}

fn is_log_origin(field: &Field) -> bool {
    matches!(
        field.name(),
        LOG_TARGET | LOG_FILE | LOG_LINE | LOG_MODULE_PATH
    )
}

impl Visit for Encoder<'_, '_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.typed(field, FieldValue::F64(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.typed(field, FieldValue::I64(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.typed(field, FieldValue::U64(value));
    }
    fn record_i128(&mut self, field: &Field, value: i128) {
        self.typed(field, FieldValue::I128(value));
    }
    fn record_u128(&mut self, field: &Field, value: u128) {
        self.typed(field, FieldValue::U128(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.typed(field, FieldValue::Bool(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.typed(field, FieldValue::Str(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.formatted(field, format_args!("{value}"));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.formatted(field, format_args!("{value:?}"));
    }
}

/// Encodes the fields `record` visits into a new buffer (empty if there are none).
fn encode_span_values(record: impl FnOnce(&mut dyn Visit)) -> Vec<u8> {
    let mut encoded = Vec::new();
    let mut writer = FieldWriter::new(&mut encoded);
    record(&mut Encoder {
        writer: &mut writer,
        message: None,
        skip_log_origin: false,
    });
    encoded
}

impl<S> Layer<S> for TracingLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if self.scope_span == Some(attrs.metadata().name()) {
            let scope = self.scope.begin();
            if let Some(span) = ctx.span(id) {
                span.extensions_mut().insert(SpanScope(scope));
            }
        }
        if attrs.values().is_empty() {
            return;
        }
        // Encoded before the extensions are locked: a `Debug` impl may itself use `tracing`.
        let encoded = encode_span_values(|v| attrs.record(v));
        if encoded.is_empty() {
            return;
        }
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().replace(SpanFields(encoded));
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if self.scope_span.is_none() {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let Some(scope) = span.extensions().get::<SpanScope>().map(|s| s.0.id()) else {
            return;
        };
        let previous = scope::enter_raw(scope);
        let _ = ENTERED_SCOPES.try_with(|stack| stack.borrow_mut().push((id.clone(), previous)));
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        if self.scope_span.is_none() {
            return;
        }
        let _ = ENTERED_SCOPES.try_with(|stack| {
            let mut stack = stack.borrow_mut();
            if stack.last().is_some_and(|(entered, _)| entered == id) {
                if let Some((_, previous)) = stack.pop() {
                    scope::leave_raw(previous);
                }
            }
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        // The new values first, with no lock held (user code runs here); then, under the
        // extensions' lock, the old fields that were not set again, followed by the new ones:
        // each field shows its latest value, once.
        let update = encode_span_values(|v| values.record(v));
        let updated: Vec<&'static str> = span
            .metadata()
            .fields()
            .iter()
            .filter(|f| values.contains(f))
            .map(|f| f.name())
            .collect();
        let mut extensions = span.extensions_mut();
        let mut merged = Vec::with_capacity(update.len());
        if let Some(SpanFields(old)) = extensions.get_mut::<SpanFields>() {
            let mut decoded = Fields::new();
            decode(old, &mut decoded);
            let mut writer = FieldWriter::new(&mut merged);
            for field in decoded.iter().filter(|f| !updated.contains(&f.key)) {
                writer.value(field.key, field.value);
            }
        }
        merged.extend_from_slice(&update);
        extensions.replace(SpanFields(merged));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let level = level_of(metadata.level());
        let from_log = is_bridged_log_record(metadata);
        // What a sink's own threads log (an exporter's HTTP stack) would feed that sink.
        if crate::frontend::mute::current_thread_muted() {
            return;
        }
        // tachylog's filter, here rather than in `enabled`/`event_enabled`, whose verdict would
        // hold for every layer of the stack (see the module's doc). A bridged `log` record is
        // filtered by its own target, which is only known once its fields are read.
        if !from_log && !crate::filter::wanted_dynamic(level, metadata.target()) {
            return;
        }
        let send = |message: &mut String, fields: &mut Vec<u8>| {
            message.clear();
            fields.clear();
            // A bridged record's target and file go first into the message buffer, so that
            // they need no allocation of their own; the message follows them.
            let mut origin = LogOrigin {
                text: &mut *message,
                target: 0..0,
                file: 0..0,
                line: None,
            };
            if from_log {
                event.record(&mut origin);
            }
            let LogOrigin {
                target, file, line, ..
            } = origin;
            if from_log && !crate::filter::wanted_dynamic(level, &message[target.clone()]) {
                return;
            }
            let message_start = message.len();
            let mut writer = FieldWriter::new(fields);
            if let Some(scope) = ctx.event_scope(event) {
                let mut any = false;
                for span in scope.from_root() {
                    any = true;
                    writer.span(span.name());
                    if let Some(SpanFields(own)) = span.extensions().get::<SpanFields>() {
                        writer.raw(own);
                    }
                }
                if any {
                    writer.event();
                }
            }
            event.record(&mut Encoder {
                writer: &mut writer,
                message: Some(message),
                skip_log_origin: from_log,
            });
            let (target, file, line) = if from_log {
                (&message[target], &message[file], line.unwrap_or(0))
            } else {
                (
                    metadata.target(),
                    metadata.file().unwrap_or("?"),
                    metadata.line().unwrap_or(0),
                )
            };
            let file = if file.is_empty() { "?" } else { file };
            let trace = trace_of(event, &ctx);
            log_dynamic(
                level,
                target,
                file,
                line,
                &message[message_start..],
                fields,
                trace,
            );
        };
        super::with_scratch(send);
    }
}

/// The OpenTelemetry span an event was logged in: with the `tracing-opentelemetry` feature,
/// the one `tracing-opentelemetry`'s layer keeps for the event's `tracing` span (found through
/// the current dispatcher); else, or outside any `tracing` span, the current
/// `opentelemetry::Context`'s span (feature `opentelemetry`).
fn trace_of<S>(event: &Event<'_>, ctx: &Context<'_, S>) -> Option<crate::record::TraceContext>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    #[cfg(feature = "tracing-opentelemetry")]
    if let Some(span) = ctx.event_span(event) {
        let id = span.id();
        drop(span);
        let from_span = tracing_core::dispatcher::get_default(|dispatch| {
            use opentelemetry::trace::TraceContextExt;
            tracing_opentelemetry::get_otel_context(&id, dispatch)
                .and_then(|cx| crate::frontend::trace::of_span_context(cx.span().span_context()))
        });
        if from_span.is_some() {
            return from_span;
        }
    }
    let _ = (event, ctx);
    crate::frontend::trace::current()
}

/// Whether `metadata` is the call site `tracing-log` uses for records of the `log` crate
/// (what a `tracing_subscriber` stack started with `.init()` installs with its default
/// features): target `log`, with the record's own target, file and line as fields.
fn is_bridged_log_record(metadata: &tracing_core::Metadata<'_>) -> bool {
    metadata.target() == "log" && metadata.fields().field(LOG_TARGET).is_some()
}

/// The fields `tracing-log` adds to a bridged `log` record for its origin.
const LOG_TARGET: &str = "log.target";
const LOG_FILE: &str = "log.file";
const LOG_LINE: &str = "log.line";
const LOG_MODULE_PATH: &str = "log.module_path";

/// Reads a bridged `log` record's target and file (into `text`) and its line.
struct LogOrigin<'a> {
    text: &'a mut String,
    target: std::ops::Range<usize>,
    file: std::ops::Range<usize>,
    line: Option<u32>,
}

impl Visit for LogOrigin<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let range = match field.name() {
            LOG_TARGET => &mut self.target,
            LOG_FILE => &mut self.file,
            _ => return,
        };
        let start = self.text.len();
        self.text.push_str(value);
        *range = start..self.text.len();
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == LOG_LINE {
            self.line = u32::try_from(value).ok();
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn fmt::Debug) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_one_to_one() {
        use tracing_core::Level as T;
        let pairs = [
            (T::ERROR, Level::Error),
            (T::WARN, Level::Warn),
            (T::INFO, Level::Info),
            (T::DEBUG, Level::Debug),
            (T::TRACE, Level::Trace),
        ];
        for (from, to) in pairs {
            assert_eq!(level_of(&from), to);
        }
    }
}
