//! The exporter's HTTP client: `POST` one body to the collector, read the status, `Retry-After`
//! and a bounded piece of the response body, all before a deadline. Runs on the exporter's
//! thread only.
//!
//! The transport is `ureq` (blocking, keep-alive pool, one timeout for the whole request,
//! CONNECT and SOCKS proxies), and with the `otlp-tls` feature rustls with the `ring` provider,
//! joined in the connector chain of `transport.rs`, which reads the collector's answer even when
//! it closed the connection before reading the whole request. A client of our own would have
//! to grow TLS and proxy support. This file keeps what is ours: parsing the endpoint, choosing
//! the proxy from the environment, loading the certificates, and sorting errors into retryable
//! (the network, the collector restarting) and final (the certificate is not trusted: retrying
//! cannot fix it).

use std::io::{self, Read};
use std::time::{Duration, Instant};

/// At most this much of a response body is kept (for error reports and `partial_success`).
const BODY_KEPT: usize = 64 * 1024;

/// A parsed `http[s]://host:port/path` URL.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    /// Whether the scheme is `https`.
    pub(super) tls: bool,
    /// `host` or `[v6]`, as written.
    pub(super) host: String,
    pub(super) port: u16,
    /// The request path, such as `/v1/logs`.
    pub(super) path: String,
}

impl Endpoint {
    /// Parses `url`; unless `exact`, appends `/v1/logs` to its path when it does not already
    /// end so (`exact` is for `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, which the specification says
    /// is used as is). `Err` says what is wrong.
    pub(super) fn parse(url: &str, exact: bool) -> Result<Endpoint, &'static str> {
        let (tls, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
            if !cfg!(feature = "otlp-tls") {
                return Err("https needs tachylog's `otlp-tls` feature (rustls)");
            }
            (true, rest)
        } else if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
            (false, rest)
        } else {
            return Err("the URL must start with http:// or https://");
        };
        let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        if path.contains(['?', '#']) {
            return Err("a query or fragment is not supported");
        }
        if authority.contains('@') {
            return Err("credentials in the URL are not supported: use a header");
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = match authority.rfind(':') {
            // `[::1]` alone has colons but no port.
            Some(i) if !authority[i..].contains(']') => {
                let port = authority[i + 1..]
                    .parse::<u16>()
                    .map_err(|_| "the port is not a number from 1 to 65535")?;
                (&authority[..i], port)
            }
            _ => (authority, default_port),
        };
        if host.is_empty() || port == 0 {
            return Err("the host or port is missing");
        }
        if host.starts_with('[') != host.ends_with(']') || host.contains(char::is_whitespace) {
            return Err("the host is malformed");
        }
        let path = if exact {
            if path.is_empty() {
                "/".to_string()
            } else {
                path.to_string()
            }
        } else {
            let base = path.trim_end_matches('/');
            if base.ends_with("/v1/logs") {
                base.to_string()
            } else {
                format!("{base}/v1/logs")
            }
        };
        Ok(Endpoint {
            tls,
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The URL requests go to, such as `https://collector:4318/v1/logs`.
    pub(super) fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}{}", self.host, self.port, self.path)
    }

    /// The host without the brackets of an IPv6 literal, for `NO_PROXY` matching.
    fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .filter(|p| p.eq_ignore_ascii_case(prefix))
        .map(|_| &s[prefix.len()..])
}

/// The proxy for requests to `endpoint`, as curl and most clients read the environment:
/// `HTTPS_PROXY` (or `https_proxy`) for an `https://` endpoint, `HTTP_PROXY` (or `http_proxy`)
/// for an `http://` one, else `ALL_PROXY`; none if `NO_PROXY` names the host (exactly, as a
/// domain suffix, or `*`). `explicit` (from the builder) wins over the environment; an empty
/// value means no proxy. Returns the proxy URL and the variable it came from.
pub(super) fn proxy_for(
    endpoint: &Endpoint,
    explicit: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<(String, &'static str)> {
    if let Some(proxy) = explicit {
        return (!proxy.is_empty()).then(|| (proxy.to_string(), "the builder's proxy"));
    }
    let names: &[&'static str] = if endpoint.tls {
        &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    let (proxy, name) = names
        .iter()
        .find_map(|n| env(n).filter(|v| !v.trim().is_empty()).map(|v| (v, *n)))?;
    let no_proxy = env("NO_PROXY")
        .or_else(|| env("no_proxy"))
        .unwrap_or_default();
    let host = endpoint.bare_host().to_ascii_lowercase();
    let bypass = no_proxy
        .split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .any(|entry| {
            let entry = entry.trim_start_matches("*.").trim_start_matches('.');
            let entry = entry.trim_start_matches('[').trim_end_matches(']');
            entry == "*"
                || (!entry.is_empty() && (host == entry || host.ends_with(&format!(".{entry}"))))
        });
    (!bypass).then(|| (proxy.trim().to_string(), name))
}

/// Where the trusted roots and the client certificate come from, read by [`Client::new`].
#[derive(Debug, Clone, Default)]
pub(super) struct TlsFiles {
    /// PEM: the CAs to trust instead of the system's roots.
    pub(super) ca: Option<Pem>,
    /// PEM: the client's certificate chain and its private key (mTLS).
    pub(super) client: Option<(Pem, Pem)>,
}

/// PEM text, given as such or as a file to read at build time. Read only with `otlp-tls`.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
pub(super) enum Pem {
    Text(Vec<u8>),
    File(std::path::PathBuf),
}

/// The largest PEM file read: a system's whole CA bundle is a few hundred KiB.
#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
const MAX_PEM_BYTES: u64 = 16 << 20;

#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
impl Pem {
    /// The text, and where it came from (for errors).
    fn read(&self, what: &str) -> Result<(Vec<u8>, String), String> {
        match self {
            Pem::Text(text) => Ok((text.clone(), format!("the {what} given as PEM"))),
            Pem::File(path) => read_pem_file(path)
                .map(|text| (text, path.display().to_string()))
                .map_err(|e| format!("cannot read the {what} {}: {e}", path.display())),
        }
    }
}

/// A PEM file's bytes. The variable naming it may name anything: a device or a FIFO is never
/// opened (a FIFO with no writer would block the exporter), and no more than
/// [`MAX_PEM_BYTES`] are read.
#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
fn read_pem_file(path: &std::path::Path) -> io::Result<Vec<u8>> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {MAX_PEM_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// What the collector answered.
#[derive(Debug)]
pub(super) struct Response {
    pub(super) status: u16,
    /// The `Retry-After` header, if present and readable.
    pub(super) retry_after: Option<Duration>,
    /// The body's first [`BODY_KEPT`] bytes.
    pub(super) body: Vec<u8>,
}

/// Why a request got no response.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) message: String,
    /// A transport error worth retrying (no connection, a timeout, a broken response); `false`
    /// when retrying cannot help, such as a certificate the sink does not trust.
    pub(super) retryable: bool,
}

/// An agent with its pool of kept-alive connections to the collector (or the proxy).
pub(super) struct Client {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    gzip: bool,
}

impl Client {
    /// `headers` are already validated. `Err` says what is wrong with the proxy or the TLS
    /// files.
    pub(super) fn new(
        endpoint: &Endpoint,
        headers: &[(String, String)],
        gzip: bool,
        connect_timeout: Duration,
        proxy: Option<&str>,
        tls: &TlsFiles,
    ) -> Result<Client, String> {
        let proxy = match proxy {
            Some(url) => {
                Some(ureq::Proxy::new(url).map_err(|e| format!("invalid proxy {url:?}: {e}"))?)
            }
            None => None,
        };
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirect is the collector's misconfiguration: report it, do not POST elsewhere.
            .max_redirects(0)
            .user_agent(concat!("tachylog/", env!("CARGO_PKG_VERSION")))
            .timeout_connect(Some(connect_timeout.min(super::NEVER)))
            .proxy(proxy)
            .max_idle_connections_per_host(2);
        let config = tls_config(config, tls)?;
        Ok(Client {
            agent: ureq::Agent::with_parts(
                config.build(),
                super::transport::connector(),
                ureq::unversioned::resolver::DefaultResolver::default(),
            ),
            url: endpoint.url(),
            headers: headers.to_vec(),
            gzip,
        })
    }

    /// Sends `body` and reads the response, all before `deadline`.
    pub(super) fn post(&mut self, body: &[u8], deadline: Instant) -> Result<Response, Failure> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure {
                message: "timed out".into(),
                retryable: true,
            });
        }
        let mut request = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(left))
            .build()
            .header("content-type", "application/x-protobuf");
        if self.gzip {
            request = request.header("content-encoding", "gzip");
        }
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = request.send(body).map_err(failure)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let mut kept = Vec::new();
        // A body longer than what we keep is not read to its end: ureq then closes that
        // connection instead of pooling it. A body that breaks off does not undo the status.
        let _ = response
            .body_mut()
            .as_reader()
            .take(BODY_KEPT as u64)
            .read_to_end(&mut kept);
        Ok(Response {
            status,
            retry_after,
            body: kept,
        })
    }
}

/// Sorts a `ureq` error; the message names the cause as the user can act on it.
fn failure(error: ureq::Error) -> Failure {
    let retryable = match &error {
        ureq::Error::Io(e) => !is_certificate_error(e),
        ureq::Error::Timeout(_)
        | ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::Protocol(_)
        | ureq::Error::ConnectProxyFailed(_)
        | ureq::Error::BodyStalled => true,
        _ => false,
    };
    Failure {
        message: error.to_string(),
        retryable,
    }
}

/// Whether an I/O error is rustls refusing the collector's certificate, or the collector
/// refusing ours (or its absence): retrying cannot fix either. rustls's errors reach us as
/// text inside `io::Error`, so this reads their `Display`.
fn is_certificate_error(error: &io::Error) -> bool {
    let text = error.to_string();
    text.contains("invalid peer certificate")
        || [
            "CertificateRequired",
            "BadCertificate",
            "UnknownCA",
            "CertificateUnknown",
            "UnsupportedCertificate",
        ]
        .iter()
        .any(|alert| text.contains(&format!("received fatal alert: {alert}")))
}

#[cfg(not(feature = "otlp-tls"))]
fn tls_config(
    config: ureq::config::ConfigBuilder<ureq::typestate::AgentScope>,
    tls: &TlsFiles,
) -> Result<ureq::config::ConfigBuilder<ureq::typestate::AgentScope>, String> {
    if tls.ca.is_some() || tls.client.is_some() {
        return Err("certificates need tachylog's `otlp-tls` feature".into());
    }
    Ok(config)
}

/// Trusts the system's roots (the platform verifier: on Linux the certificates in
/// `/etc/ssl/certs` or `SSL_CERT_FILE`), or only the given CAs; presents the client
/// certificate if one is given.
#[cfg(feature = "otlp-tls")]
fn tls_config(
    config: ureq::config::ConfigBuilder<ureq::typestate::AgentScope>,
    tls: &TlsFiles,
) -> Result<ureq::config::ConfigBuilder<ureq::typestate::AgentScope>, String> {
    use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig, TlsProvider};
    let certificates = |pem: &Pem, what: &str| -> Result<Vec<Certificate<'static>>, String> {
        let (text, source) = pem.read(what)?;
        let certs: Vec<_> = ureq::tls::parse_pem(&text)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
                Ok(_) => None,
                Err(e) => Some(Err(format!("{source}: {e}"))),
            })
            .collect::<Result<_, _>>()?;
        if certs.is_empty() {
            return Err(format!(
                "{source}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it"
            ));
        }
        Ok(certs)
    };
    let roots = match &tls.ca {
        Some(ca) => RootCerts::new_with_certs(&certificates(ca, "CA certificate")?),
        None => RootCerts::PlatformVerifier,
    };
    let client = match &tls.client {
        Some((chain, key)) => {
            let chain = certificates(chain, "client certificate")?;
            let (text, source) = key.read("client key")?;
            let key = PrivateKey::from_pem(&text).map_err(|e| {
                format!("{source}: no PEM private key (PKCS#8, PKCS#1 or SEC1): {e}")
            })?;
            Some(ClientCert::new_with_certs(&chain, key))
        }
        None => None,
    };
    let tls = TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .root_certs(roots)
        .client_cert(client)
        .build();
    Ok(config.tls_config(tls))
}

/// `Retry-After` as a delay: delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00
/// GMT`, or the obsolete RFC 850 and asctime forms RFC 9110 still asks a reader to accept); a
/// date in the past is no delay.
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_certificate_path_naming_a_device_is_refused_unread() {
        let error = Pem::File("/dev/zero".into())
            .read("CA certificate")
            .unwrap_err();
        assert_eq!(
            error,
            "cannot read the CA certificate /dev/zero: not a regular file"
        );
    }

    #[test]
    fn endpoints_parse_and_get_the_logs_path() {
        let e = Endpoint::parse("http://127.0.0.1:4318", false).unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 4318, "/v1/logs")
        );
        assert_eq!(e.url(), "http://127.0.0.1:4318/v1/logs");
        let e = Endpoint::parse("HTTP://collector/otlp/", false).unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("collector", 80, "/otlp/v1/logs")
        );
        let e = Endpoint::parse("http://[::1]:4318/v1/logs", false).unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("[::1]", 4318, "/v1/logs")
        );
        // A signal-specific endpoint is used as is.
        let e = Endpoint::parse("http://collector:4318/custom/logs", true).unwrap();
        assert_eq!(e.path, "/custom/logs");
        assert_eq!(
            Endpoint::parse("http://collector:4318", true).unwrap().path,
            "/"
        );
        // A multi-byte character where the scheme would end must not panic the parser.
        assert_eq!(Endpoint::parse("http://é", false).unwrap().host, "é");
        let e = Endpoint::parse("http://[::1]", false).unwrap();
        assert_eq!((e.host.as_str(), e.port), ("[::1]", 80));
        for bad in [
            "127.0.0.1:4318",
            "http://",
            "http://:4318",
            "http://x:99999",
            "http://x:0",
            "http://x:port",
            "http://u:p@x:1",
            "http://x/?q=1",
            "http://[::1:4318",
            "é",
            "httpé://x",
            "ftp://x",
            "",
        ] {
            assert!(Endpoint::parse(bad, false).is_err(), "{bad}");
        }
        let https = Endpoint::parse("https://collector", false);
        if cfg!(feature = "otlp-tls") {
            let e = https.unwrap();
            assert_eq!(
                (e.tls, e.port, e.url().as_str()),
                (true, 443, "https://collector:443/v1/logs")
            );
        } else {
            assert!(https.unwrap_err().contains("otlp-tls"));
        }
    }

    #[test]
    fn the_proxy_follows_the_scheme_and_no_proxy() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let http = Endpoint::parse("http://collector.internal:4318", false).unwrap();
        let https = Endpoint {
            tls: true,
            ..http.clone()
        };
        let vars = env(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("http_proxy", "http://plain:3128"),
        ]);
        assert_eq!(
            proxy_for(&https, None, &vars),
            Some(("http://secure:3128".into(), "HTTPS_PROXY"))
        );
        assert_eq!(
            proxy_for(&http, None, &vars),
            Some(("http://plain:3128".into(), "http_proxy"))
        );
        let all = env(&[("ALL_PROXY", "socks5://s:1080")]);
        assert_eq!(proxy_for(&https, None, &all).unwrap().0, "socks5://s:1080");
        assert_eq!(proxy_for(&https, None, &env(&[])), None);
        for no_proxy in [
            "collector.internal",
            ".internal",
            "*.internal",
            "other, internal",
            "*",
        ] {
            let vars = move |name: &str| match name {
                "HTTPS_PROXY" => Some("http://secure:3128".to_string()),
                "NO_PROXY" => Some(no_proxy.to_string()),
                _ => None,
            };
            assert_eq!(proxy_for(&https, None, &vars), None, "NO_PROXY={no_proxy}");
        }
        let vars = env(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("no_proxy", "ternal,other.internal"),
        ]);
        assert!(proxy_for(&https, None, &vars).is_some());
        assert_eq!(
            proxy_for(&https, Some("http://mine:1"), &vars).unwrap().0,
            "http://mine:1"
        );
        assert_eq!(proxy_for(&https, Some(""), &vars), None);
    }

    #[test]
    fn retry_after_takes_seconds_and_http_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = std::time::SystemTime::now() + Duration::from_secs(30);
        let date = httpdate::fmt_http_date(later);
        let delay = parse_retry_after(&date).unwrap();
        assert!(
            delay > Duration::from_secs(27) && delay <= Duration::from_secs(30),
            "{delay:?} from {date}"
        );
        // The two obsolete forms of the same past instant.
        assert_eq!(
            parse_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Wed Oct 21 07:28:00 2015"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
