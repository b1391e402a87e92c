//! The settings of an [`OtlpSink`] and the errors of building one. Runs on the thread that
//! builds the sink; [`OtlpBuilder::build`] starts the exporter's thread. A builder starts from
//! the OpenTelemetry environment variables (`env.rs`); what the code sets wins.

use super::encode::{self, Value};
use super::env::{EnvConfig, DEFAULT_ENDPOINT};
use super::export::{self, Exporter, Settings, Shared};
use super::http::{self, Client, Endpoint, Pem, TlsFiles};
use super::OtlpSink;
use crate::OutboxFull;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Why an [`OtlpSink`] could not be built.
///
/// ```
/// let err = tachylog::OtlpSink::builder("collector:4318").build().unwrap_err();
/// assert!(err.to_string().contains("collector:4318"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The endpoint is not an `http[s]://host[:port][/path]` URL, or is `https://` without the
    /// `otlp-tls` feature.
    #[error("invalid OTLP endpoint {url:?}: {reason} (expected http://host:port or https://host:port, such as http://127.0.0.1:4318)")]
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
    /// The proxy, a certificate or a key cannot be used: a file that cannot be read, PEM
    /// without a certificate or key, a malformed proxy URL.
    #[error("cannot connect to OTLP endpoint {url} as configured: {reason}")]
    Transport {
        /// The endpoint.
        url: String,
        /// What is wrong, with the file or URL involved.
        reason: String,
    },
    /// The outbox of a [durable](OtlpBuilder::durable) sink cannot be used: its directory
    /// cannot be made, is not private to this user, or cannot be written; or this platform
    /// has none (durable sinks are Unix only).
    #[error("cannot keep an outbox for OTLP endpoint {url} in {path}: {source}")]
    Outbox {
        /// The endpoint.
        url: String,
        /// The outbox's directory.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
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
    /// The endpoint came from `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`: no `/v1/logs` is appended.
    endpoint_exact: bool,
    service_name: Option<String>,
    resource_attributes: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    /// The proxy set by the code (`Some("")`: none); `None`: the environment's.
    proxy: Option<String>,
    tls: TlsFiles,
    /// What the environment said, for what the code did not set.
    env: EnvConfig,
    gzip: bool,
    max_batch_records: usize,
    batch_timeout: Duration,
    queue_batches: usize,
    queue_bytes: usize,
    connect_timeout: Duration,
    request_timeout: Duration,
    max_retry_time: Duration,
    shutdown_timeout: Duration,
    /// The outbox's directory and size limit, for a durable sink.
    durable: Option<(std::path::PathBuf, u64)>,
    when_full: OutboxFull,
}

impl OtlpBuilder {
    /// Settings from the environment, with `endpoint` if given (else the environment's, else
    /// `http://localhost:4318`).
    pub(super) fn new(endpoint: Option<String>) -> OtlpBuilder {
        // A variable that is not UTF-8 is ignored with a warning, as any unusable value is:
        // not read as unset without a word.
        let not_utf8 = std::cell::RefCell::new(Vec::new());
        let mut env = EnvConfig::read(&|name| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotUnicode(value)) => {
                let warning = format!("ignoring {name}={value:?}: not valid UTF-8");
                not_utf8.borrow_mut().push(warning);
                None
            }
            Err(std::env::VarError::NotPresent) => None,
        });
        env.warnings.extend(not_utf8.into_inner());
        let (endpoint, endpoint_exact) = match endpoint {
            Some(endpoint) => (endpoint, false),
            None => env
                .endpoint
                .clone()
                .unwrap_or_else(|| (DEFAULT_ENDPOINT.to_string(), false)),
        };
        let mut tls = TlsFiles::default();
        if let Some(ca) = &env.ca_file {
            tls.ca = Some(Pem::File(ca.clone()));
        }
        if let Some((cert, key)) = &env.client_files {
            tls.client = Some((Pem::File(cert.clone()), Pem::File(key.clone())));
        }
        OtlpBuilder {
            endpoint,
            endpoint_exact,
            service_name: None,
            resource_attributes: Vec::new(),
            headers: Vec::new(),
            proxy: None,
            tls,
            gzip: env.gzip.unwrap_or(true),
            max_batch_records: 512,
            batch_timeout: Duration::from_secs(1),
            queue_batches: 64,
            queue_bytes: 32 << 20,
            connect_timeout: Duration::from_secs(2),
            request_timeout: env.timeout.unwrap_or(Duration::from_secs(10)),
            max_retry_time: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(5),
            durable: None,
            when_full: OutboxFull::default(),
            env,
        }
    }

    /// The `service.name` resource attribute (default: `OTEL_SERVICE_NAME`, else a
    /// `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else the executable's file name).
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318").service_name("shop");
    /// ```
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// Adds a string attribute to the resource of every batch, or replaces one of the
    /// defaults (`service.name`, `host.name`, `process.pid`, `telemetry.sdk.*`) or of
    /// `OTEL_RESOURCE_ATTRIBUTES`.
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
    ///     .resource_attribute("service.version", "1.4.2");
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.resource_attributes.push((key.into(), value.into()));
        self
    }

    /// Adds a header to every request, such as `authorization`; it replaces a header of the
    /// same name from `OTEL_EXPORTER_OTLP_[LOGS_]HEADERS`. Checked by
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

    /// Whether request bodies are gzip-compressed (`Content-Encoding: gzip`; default on, or
    /// as `OTEL_EXPORTER_OTLP_[LOGS_]COMPRESSION` says: `gzip` or `none`).
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

    /// How long a connect may take (TCP, proxy and TLS handshakes), and one whole request
    /// (connect, send, response; default 2 s, and 10 s or
    /// `OTEL_EXPORTER_OTLP_[LOGS_]TIMEOUT` milliseconds). A request that times out is retried.
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

    /// Sends through this proxy instead of the one the environment names (`HTTPS_PROXY` for an
    /// `https://` endpoint, `HTTP_PROXY` for `http://`, else `ALL_PROXY`, unless `NO_PROXY`
    /// names the host). An `http://` proxy is asked to `CONNECT` to the collector, so TLS goes
    /// end to end; `socks5://` works too. An empty string means no proxy at all.
    ///
    /// ```
    /// let b = tachylog::OtlpSink::builder("http://collector.internal:4318").proxy("http://proxy:3128");
    /// let direct = tachylog::OtlpSink::builder("http://127.0.0.1:4318").proxy("");
    /// ```
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(url.into());
        self
    }

    /// Trusts only the CA certificates in `pem` (one or more `-----BEGIN CERTIFICATE-----`
    /// blocks) for an `https://` endpoint, instead of the system's roots. The default is
    /// `OTEL_EXPORTER_OTLP_[LOGS_]CERTIFICATE`, a file, else the system's roots.
    ///
    /// ```no_run
    /// let ca = std::fs::read("/etc/otel/ca.pem").unwrap();
    /// let sink = tachylog::OtlpSink::builder("https://collector:4318").ca_certificate_pem(ca).build().unwrap();
    /// ```
    #[cfg(feature = "otlp-tls")]
    pub fn ca_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.ca = Some(Pem::Text(pem.into()));
        self
    }

    /// Like [`ca_certificate_pem`](OtlpBuilder::ca_certificate_pem), reading the file when the
    /// sink is built.
    ///
    /// ```no_run
    /// let sink = tachylog::OtlpSink::builder("https://collector:4318")
    ///     .ca_certificate_file("/etc/otel/ca.pem")
    ///     .build()
    ///     .unwrap();
    /// ```
    #[cfg(feature = "otlp-tls")]
    pub fn ca_certificate_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.tls.ca = Some(Pem::File(path.into()));
        self
    }

    /// Presents this client certificate (PEM chain, leaf first) with its private key (PEM:
    /// PKCS#8, PKCS#1 or SEC1) to a collector that asks for one (mutual TLS). The default is
    /// `OTEL_EXPORTER_OTLP_[LOGS_]CLIENT_CERTIFICATE` and `..._CLIENT_KEY`, files.
    ///
    /// ```no_run
    /// let cert = std::fs::read("/etc/otel/client.pem").unwrap();
    /// let key = std::fs::read("/etc/otel/client.key").unwrap();
    /// let sink = tachylog::OtlpSink::builder("https://collector:4318")
    ///     .client_certificate_pem(cert, key)
    ///     .build()
    ///     .unwrap();
    /// ```
    #[cfg(feature = "otlp-tls")]
    pub fn client_certificate_pem(
        mut self,
        chain: impl Into<Vec<u8>>,
        key: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client = Some((Pem::Text(chain.into()), Pem::Text(key.into())));
        self
    }

    /// Like [`client_certificate_pem`](OtlpBuilder::client_certificate_pem), reading the files
    /// when the sink is built.
    ///
    /// ```no_run
    /// let sink = tachylog::OtlpSink::builder("https://collector:4318")
    ///     .client_certificate_files("/etc/otel/client.pem", "/etc/otel/client.key")
    ///     .build()
    ///     .unwrap();
    /// ```
    #[cfg(feature = "otlp-tls")]
    pub fn client_certificate_files(
        mut self,
        chain: impl Into<std::path::PathBuf>,
        key: impl Into<std::path::PathBuf>,
    ) -> Self {
        self.tls.client = Some((Pem::File(chain.into()), Pem::File(key.into())));
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

    /// Makes the sink durable: every record it takes is written to an outbox under `dir` (made
    /// if missing, mode `0700`, refused unless private to this user) and leaves it only when
    /// the collector acknowledged it, so that no outage and no crash loses it. Unix only.
    ///
    /// - **Outages of any length**: nothing is given up after
    ///   [`max_retry_time`](OtlpBuilder::max_retry_time); batches are retried (backing off to
    ///   one attempt every 5 s) until the collector answers. A status that retrying cannot
    ///   change (400, say) retires the batch as [rejected](super::OtlpStats::rejected).
    /// - **Crashes**: a batch is on disk once the logger's back end flushed (the moment a
    ///   [spool](crate::Builder::spool) lets go of its records), so a SIGKILL loses nothing that
    ///   was flushed; with a spool, nothing at all. The next process that makes a durable sink
    ///   on the same `dir` (or the same process, after the logger stopped) sends what a process
    ///   that is gone left, first, under that process's resource.
    /// - **Duplicates**: at least once. After a crash, at most the one request that was in
    ///   flight ([`max_batch_records`](OtlpBuilder::max_batch_records) records, 1 MiB) is sent
    ///   again; with a spool too, also the records of the back end's last flush (the spool
    ///   gives them back although they were in the outbox). A request that timed out may have
    ///   been taken: it is sent again.
    /// - **Bounded**: at most `max_bytes` of records on disk (the sink's and those it adopted);
    ///   then [`when_full`](OtlpBuilder::when_full) decides, every record dropped counted.
    ///   While the outbox takes nothing (full, or its disk failing), up to 4 batches wait in
    ///   memory, and a SIGKILL then loses them: the one case where it loses records it took.
    /// - **Shutdown**: the logger's stop and `exit` wait up to the
    ///   [`shutdown_timeout`](OtlpBuilder::shutdown_timeout) for the collector; what is left
    ///   stays on disk for the next start and is not counted lost.
    ///
    /// Several processes may share `dir`: each writes its own directory in it, locked while it
    /// runs. See `tachylog/src/sink/otlp/outbox.rs` for the format.
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
    ///     .durable(dir.path().join("otlp"), 256 << 20)
    ///     .build()
    ///     .unwrap();
    /// let stats = sink.stats();
    /// assert_eq!(stats.on_disk(), 0);
    /// # }
    /// ```
    pub fn durable(mut self, dir: impl Into<std::path::PathBuf>, max_bytes: u64) -> Self {
        self.durable = Some((dir.into(), max_bytes));
        self
    }

    /// What a [durable](OtlpBuilder::durable) sink does when its outbox reaches its size limit
    /// (default [`OutboxFull::DropNewest`]).
    ///
    /// ```
    /// let builder = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
    ///     .when_full(tachylog::OutboxFull::DropOldest);
    /// ```
    pub fn when_full(mut self, policy: OutboxFull) -> Self {
        self.when_full = policy;
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
        let endpoint = Endpoint::parse(&self.endpoint, self.endpoint_exact).map_err(|reason| {
            OtlpError::InvalidEndpoint {
                url: url.clone(),
                reason,
            }
        })?;
        for (name, value) in &self.headers {
            if let Some(reason) = header_problem(name, value) {
                return Err(OtlpError::InvalidHeader {
                    url,
                    name: name.clone(),
                    reason,
                });
            }
        }
        let mut warnings = self.env.warnings.clone();
        let headers: Vec<(String, String)> = self
            .headers()
            .into_iter()
            .filter(|(name, value)| match header_problem(name, value) {
                // Only the environment's can be wrong here: ignored, as the specification asks.
                Some(reason) => {
                    warnings.push(format!("ignoring the header {name:?} from OTEL_EXPORTER_OTLP_[LOGS_]HEADERS: {reason}"));
                    false
                }
                None => true,
            })
            .collect();
        let describe = format!("otlp {}", endpoint.url());
        for warning in &warnings {
            eprintln!("tachylog: sink {describe}: {warning}");
        }
        let proxy = http::proxy_for(&endpoint, self.proxy.as_deref(), &|name| {
            self.env.proxy_var(name)
        });
        let client = Client::new(
            &endpoint,
            &headers,
            self.gzip,
            self.connect_timeout,
            proxy.as_ref().map(|(proxy, _)| proxy.as_str()),
            &self.tls,
        )
        .map_err(|reason| {
            let reason = match &proxy {
                Some((_, from)) if reason.starts_with("invalid proxy") => {
                    format!("{reason} (from {from})")
                }
                _ => reason,
            };
            OtlpError::Transport {
                url: url.clone(),
                reason,
            }
        })?;
        let shared = Arc::new(Shared::new(self.queue_batches, self.queue_bytes));
        let resource = self.resource();
        if let Some((path, max_bytes)) = &self.durable {
            self.open_outbox(&shared, path, *max_bytes, &resource, &describe)
                .map_err(|source| OtlpError::Outbox {
                    url: url.clone(),
                    path: path.clone(),
                    source,
                })?;
        }
        let exporter = Exporter {
            shared: shared.clone(),
            client,
            settings: Settings {
                describe: describe.clone(),
                resource,
                scope: encode::scope(),
                gzip: self.gzip,
                request_timeout: self.request_timeout,
                max_retry_time: self.max_retry_time,
                durable: self.durable.is_some().then_some(export::Durable {
                    max_records: self.max_batch_records as u64,
                    batch_timeout: self.batch_timeout,
                }),
            },
            body: Vec::new(),
            compressed: Vec::new(),
            rng: export::seed(),
            failing: None,
            retry_reported: false,
            outage_since: None,
        };
        let (done_tx, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("tachylog-otlp".into())
            .spawn(move || {
                // What `ureq` and `rustls` log here would come back to this sink.
                crate::mute_current_thread();
                exporter.run();
                let _ = done_tx.send(());
            })
            .map_err(|source| OtlpError::SpawnExporter { url, source })?;
        let mut sink = OtlpSink::new(
            describe,
            shared,
            (handle, done),
            self.max_batch_records as u64,
            self.batch_timeout,
            self.shutdown_timeout,
        );
        sink.durable = self.durable.is_some();
        Ok(sink)
    }

    /// Opens the outbox (adopting what processes that are gone left) and hands it to `shared`.
    #[cfg(unix)]
    fn open_outbox(
        &self,
        shared: &Shared,
        path: &std::path::Path,
        max_bytes: u64,
        resource: &[u8],
        describe: &str,
    ) -> std::io::Result<()> {
        let format = crate::OutboxFormat {
            count_records: encode::count_log_records,
            check_meta: encode::is_message,
        };
        let mut outbox = crate::Outbox::open(path, resource, max_bytes, self.when_full, format)?;
        for warning in &outbox.take_report().warnings {
            eprintln!("tachylog: sink {describe}: {warning}");
        }
        let adopted = outbox.adopted_records();
        if adopted > 0 {
            eprintln!(
                "tachylog: sink {describe}: {adopted} record(s) that processes which ended left \
                 in {} are sent first",
                path.display()
            );
        }
        shared.set_outbox(outbox);
        Ok(())
    }

    #[cfg(not(unix))]
    fn open_outbox(
        &self,
        _: &Shared,
        _: &std::path::Path,
        _: u64,
        _: &[u8],
        _: &str,
    ) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "durable OTLP sinks are available on Unix only",
        ))
    }

    /// The headers of every request: the environment's, less those the code replaces, then the
    /// code's.
    fn headers(&self) -> Vec<(String, String)> {
        let replaced = |key: &str| {
            self.headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case(key))
        };
        let env = self.env.headers.iter().filter(|(k, _)| !replaced(k));
        env.chain(&self.headers).cloned().collect()
    }

    /// The encoded resource: the default attributes, less those the environment or the code
    /// replaces, then the environment's (`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`) less
    /// those the code replaces, then the code's.
    fn resource(&self) -> Vec<u8> {
        let by_code = |key: &str| self.resource_attributes.iter().any(|(k, _)| k == key);
        let env_service = self
            .env
            .resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone());
        let service = self
            .service_name
            .clone()
            .or(env_service)
            .unwrap_or_else(|| {
                std::env::current_exe()
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_else(|| "unknown_service".to_string())
            });
        let host = gethostname::gethostname().to_string_lossy().into_owned();
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
        let by_env =
            |key: &str| key != "service.name" && self.env.resource.iter().any(|(k, _)| k == key);
        let from_env = self
            .env
            .resource
            .iter()
            .filter(|(k, _)| k != "service.name" && !by_code(k));
        let attributes: Vec<(&str, Value<'_>)> = defaults
            .into_iter()
            .filter(|(key, _)| !by_code(key) && !by_env(key))
            .chain(from_env.map(|(k, v)| (k.as_str(), Value::Str(v))))
            .chain(
                self.resource_attributes
                    .iter()
                    .map(|(k, v)| (k.as_str(), Value::Str(v))),
            )
            .collect();
        encode::resource(&attributes)
    }
}

/// Why a header cannot be sent, if it cannot.
fn header_problem(name: &str, value: &str) -> Option<&'static str> {
    const RESERVED: [&str; 6] = [
        "content-length",
        "content-type",
        "content-encoding",
        "host",
        "transfer-encoding",
        "connection",
    ];
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        Some("the name must be a non-empty HTTP token (letters, digits, !#$%&'*+-.^_`|~)")
    } else if value.chars().any(|c| c.is_control() && c != '\t') {
        Some("the value may not hold control characters such as CR or LF")
    } else if RESERVED
        .iter()
        .any(|reserved| name.eq_ignore_ascii_case(reserved))
    {
        Some("this header is set by the sink itself")
    } else {
        None
    }
}

/// A `tchar` of RFC 9110: the bytes allowed in a header name.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
