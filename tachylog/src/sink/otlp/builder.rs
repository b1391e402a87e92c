//! The settings of an [`OtlpSink`] and the errors of building one. Runs on the thread that
//! builds the sink; [`OtlpBuilder::build`] starts the exporter's thread.

use super::encode::{self, Value};
use super::export::{self, Exporter, Settings, Shared};
use super::http::{Client, Endpoint};
use super::OtlpSink;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Why an [`OtlpSink`] could not be built.
///
/// ```
/// let err = tachylog::OtlpSink::builder("https://collector:4318").build().unwrap_err();
/// assert!(err.to_string().contains("https://collector:4318"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The endpoint is not an `http://host[:port][/path]` URL.
    #[error("invalid OTLP endpoint {url:?}: {reason} (expected http://host:port, such as http://127.0.0.1:4318)")]
    InvalidEndpoint {
        /// The endpoint as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A header given with [`OtlpBuilder::header`] cannot be sent.
    #[error("invalid HTTP header {name:?} for OTLP endpoint {url}: {reason}")]
    InvalidHeader {
        /// The endpoint the header was for.
        url: String,
        /// The header's name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The exporter's thread could not be started.
    #[error("cannot start the OTLP exporter thread for {url}: {source}")]
    SpawnExporter {
        /// The endpoint.
        url: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// Settings of an [`OtlpSink`]; finish with [`build`](OtlpBuilder::build).
///
/// ```
/// use std::time::Duration;
/// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
///     .service_name("shop")
///     .resource_attribute("deployment.environment", "staging")
///     .header("authorization", "Bearer secret")
///     .gzip(true)
///     .max_batch_records(512)
///     .batch_timeout(Duration::from_secs(1))
///     .build()
///     .unwrap();
/// assert_eq!(sink.describe_target(), "otlp http://127.0.0.1:4318/v1/logs");
/// ```
#[derive(Debug, Clone)]
pub struct OtlpBuilder {
    endpoint: String,
    service_name: Option<String>,
    resource_attributes: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    gzip: bool,
    max_batch_records: usize,
    batch_timeout: Duration,
    queue_batches: usize,
    queue_bytes: usize,
    connect_timeout: Duration,
    request_timeout: Duration,
    max_retry_time: Duration,
    shutdown_timeout: Duration,
}

impl OtlpBuilder {
    pub(super) fn new(endpoint: String) -> OtlpBuilder {
        OtlpBuilder {
            endpoint,
            service_name: None,
            resource_attributes: Vec::new(),
            headers: Vec::new(),
            gzip: true,
            max_batch_records: 512,
            batch_timeout: Duration::from_secs(1),
            queue_batches: 64,
            queue_bytes: 32 << 20,
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(10),
            max_retry_time: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(5),
        }
    }

    /// The `service.name` resource attribute (default: the executable's file name).
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").service_name("shop");
    /// ```
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Adds a string attribute to the resource of every batch, or replaces one of the
    /// defaults (`service.name`, `host.name`, `process.pid`, `telemetry.sdk.*`).
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
    ///     .resource_attribute("service.version", "1.4.2");
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.resource_attributes.push((key.into(), value.into()));
        self
    }

    /// Adds a header to every request, such as `authorization`. Checked by
    /// [`build`](OtlpBuilder::build): the name must be an HTTP token, the value free of
    /// control characters.
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").header("x-tenant", "shop");
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Whether request bodies are gzip-compressed (`Content-Encoding: gzip`; default on).
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").gzip(false);
    /// ```
    pub fn gzip(mut self, gzip: bool) -> Self {
        self.gzip = gzip;
        self
    }

    /// The most records in one request (default 512). A batch also goes once it holds 1 MiB
    /// of encoded records.
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").max_batch_records(2048);
    /// ```
    pub fn max_batch_records(mut self, records: usize) -> Self {
        self.max_batch_records = records.max(1);
        self
    }

    /// How long a record may wait for its batch to fill before the batch is sent anyway
    /// (default 1 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").batch_timeout(Duration::from_millis(200));
    /// ```
    pub fn batch_timeout(mut self, timeout: Duration) -> Self {
        self.batch_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many finished batches may wait for the exporter (default 64 batches or 32 MiB of
    /// encoded records, whichever comes first), besides the one being sent and the one being
    /// filled. When both are full the newest record is dropped and counted.
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").queue_limit(16, 8 << 20);
    /// ```
    pub fn queue_limit(mut self, batches: usize, bytes: usize) -> Self {
        self.queue_batches = batches.max(1);
        self.queue_bytes = bytes.max(1);
        self
    }

    /// How long a connect may take, and one whole request (connect, send, response; default
    /// 2 s and 10 s). A request that times out is retried.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
    ///     .timeouts(Duration::from_millis(500), Duration::from_secs(5));
    /// ```
    pub fn timeouts(mut self, connect: Duration, request: Duration) -> Self {
        self.connect_timeout = connect.max(Duration::from_millis(1));
        self.request_timeout = request.max(Duration::from_millis(1));
        self
    }

    /// How long one batch may be retried, from its first attempt, before its records are
    /// counted lost (default 30 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").max_retry_time(Duration::from_secs(120));
    /// ```
    pub fn max_retry_time(mut self, budget: Duration) -> Self {
        self.max_retry_time = budget;
        self
    }

    /// How long the logger's shutdown waits for queued batches to be sent (default 5 s);
    /// records still unsent then are counted and reported on stderr.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").shutdown_timeout(Duration::from_secs(2));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Checks the settings and starts the exporter's thread. Nothing is sent until records
    /// come; an unreachable collector is not an error here.
    ///
    /// ```
    /// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap();
    /// assert!(tachylog::OtlpSink::builder("127.0.0.1:4318").build().is_err());
    /// ```
    pub fn build(self) -> Result<OtlpSink, OtlpError> {
        let url = self.endpoint.clone();
        let endpoint =
            Endpoint::parse(&self.endpoint).map_err(|reason| OtlpError::InvalidEndpoint {
                url: url.clone(),
                reason,
            })?;
        for (name, value) in &self.headers {
            let reason = if name.is_empty() || !name.bytes().all(is_token_byte) {
                Some("the name must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)")
            } else if value.chars().any(|c| c.is_control() && c != '\t') {
                Some("the value may not hold control characters such as CR or LF")
            } else if [
                "content-length",
                "content-type",
                "content-encoding",
                "host",
                "transfer-encoding",
                "connection",
            ]
            .iter()
            .any(|reserved| name.eq_ignore_ascii_case(reserved))
            {
                Some("this header is set by the sink itself")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(OtlpError::InvalidHeader {
                    url,
                    name: name.clone(),
                    reason,
                });
            }
        }
        let describe = format!(
            "otlp http://{}:{}{}",
            endpoint.host, endpoint.port, endpoint.path
        );
        let shared = Arc::new(Shared::new(
            self.queue_batches,
            self.queue_bytes,
            describe.clone(),
            self.shutdown_timeout,
        ));
        super::at_exit::register(&shared);
        let exporter = Exporter {
            shared: shared.clone(),
            client: Client::new(endpoint, &self.headers, self.gzip, self.connect_timeout),
            settings: Settings {
                describe: describe.clone(),
                resource: self.resource(),
                scope: encode::scope(),
                gzip: self.gzip,
                request_timeout: self.request_timeout,
                max_retry_time: self.max_retry_time,
            },
            body: Vec::new(),
            compressed: Vec::new(),
            rng: export::seed(),
            failing: None,
        };
        let (done_tx, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("tachylog-otlp".into())
            .spawn(move || {
                exporter.run();
                let _ = done_tx.send(());
            })
            .map_err(|source| OtlpError::SpawnExporter { url, source })?;
        Ok(OtlpSink::new(
            describe,
            shared,
            (handle, done),
            self.max_batch_records as u64,
            self.batch_timeout,
            self.shutdown_timeout,
        ))
    }

    /// The encoded resource: the default attributes, less those the user replaces, then the
    /// user's.
    fn resource(&self) -> Vec<u8> {
        let service = self.service_name.clone().unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "unknown_service".to_string())
        });
        let host = crate::sink::system_hostname();
        let defaults = [
            ("service.name", Value::Str(&service)),
            ("host.name", Value::Str(&host)),
            ("process.pid", Value::Int(i64::from(std::process::id()))),
            ("telemetry.sdk.name", Value::Str("tachylog")),
            ("telemetry.sdk.language", Value::Str("rust")),
            (
                "telemetry.sdk.version",
                Value::Str(env!("CARGO_PKG_VERSION")),
            ),
        ];
        let replaced = |key: &str| self.resource_attributes.iter().any(|(k, _)| k == key);
        let attributes: Vec<(&str, Value<'_>)> = defaults
            .into_iter()
            .filter(|(key, _)| !replaced(key))
            .chain(
                self.resource_attributes
                    .iter()
                    .map(|(k, v)| (k.as_str(), Value::Str(v))),
            )
            .collect();
        encode::resource(&attributes)
    }
}

/// A `tchar` of RFC 9110: the bytes allowed in a header name.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
