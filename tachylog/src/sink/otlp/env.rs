//! The OpenTelemetry environment variables an [`OtlpBuilder`](super::OtlpBuilder) starts from,
//! read once when the builder is made, on the thread that makes it.
//!
//! Precedence, as the OpenTelemetry specification puts it: what the code sets on the builder
//! wins; then the variable for the logs signal (`OTEL_EXPORTER_OTLP_LOGS_*`); then the
//! generic one (`OTEL_EXPORTER_OTLP_*`); then the default. `OTEL_SERVICE_NAME` wins over a
//! `service.name` in `OTEL_RESOURCE_ATTRIBUTES`. A value that cannot be used is ignored with a
//! warning on stderr when the sink is built, as the specification asks, rather than failing
//! the program's start; certificate files that cannot be read are an error of `build`, since
//! the user asked for that trust.

use std::path::PathBuf;
use std::time::Duration;

/// Where the collector is when no variable says: the OTLP/HTTP default.
pub(super) const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The variables that choose a proxy, kept for [`super::http::proxy_for`].
const PROXY_VARIABLES: [&str; 8] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// What the environment says, parsed.
#[derive(Debug, Clone, Default)]
pub(super) struct EnvConfig {
    /// The endpoint and whether it is used exactly as given (the signal's own variable).
    pub(super) endpoint: Option<(String, bool)>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) gzip: Option<bool>,
    pub(super) timeout: Option<Duration>,
    pub(super) ca_file: Option<PathBuf>,
    pub(super) client_files: Option<(PathBuf, PathBuf)>,
    /// `OTEL_RESOURCE_ATTRIBUTES`, with `OTEL_SERVICE_NAME` as its `service.name`.
    pub(super) resource: Vec<(String, String)>,
    /// The proxy variables that are set, for choosing the proxy at build time.
    pub(super) proxy: Vec<(&'static str, String)>,
    /// Values ignored, and why; printed by `build`.
    pub(super) warnings: Vec<String>,
}

impl EnvConfig {
    /// Reads the variables through `var` (the process environment, or a table in tests).
    pub(super) fn read(var: &dyn Fn(&str) -> Option<String>) -> EnvConfig {
        let mut config = EnvConfig::default();
        // The signal's variable if set and not empty, else the generic one.
        let pick = |suffix: &str| -> Option<(String, String)> {
            [
                format!("OTEL_EXPORTER_OTLP_LOGS_{suffix}"),
                format!("OTEL_EXPORTER_OTLP_{suffix}"),
            ]
            .into_iter()
            .find_map(|name| {
                var(&name)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (name, v.trim().to_string()))
            })
        };
        config.endpoint = pick("ENDPOINT").map(|(name, url)| (url, name.contains("_LOGS_")));
        if let Some((name, value)) = pick("HEADERS") {
            config.headers = config.key_values(&name, &value);
        }
        if let Some((name, value)) = pick("COMPRESSION") {
            match value.to_ascii_lowercase().as_str() {
                "gzip" => config.gzip = Some(true),
                "none" => config.gzip = Some(false),
                _ => config.warn(&name, &value, "only gzip and none are supported"),
            }
        }
        if let Some((name, value)) = pick("TIMEOUT") {
            match value.parse::<u64>() {
                Ok(ms) if ms > 0 => config.timeout = Some(Duration::from_millis(ms)),
                _ => config.warn(&name, &value, "expected a number of milliseconds above 0"),
            }
        }
        if let Some((name, value)) = pick("PROTOCOL") {
            if value != "http/protobuf" {
                config.warn(&name, &value, "tachylog sends http/protobuf only");
            }
        }
        let ca = pick("CERTIFICATE");
        let client = (pick("CLIENT_CERTIFICATE"), pick("CLIENT_KEY"));
        if cfg!(feature = "otlp-tls") {
            config.ca_file = ca.map(|(_, path)| PathBuf::from(path));
            match client {
                (Some((_, cert)), Some((_, key))) => config.client_files = Some((cert.into(), key.into())),
                (Some((name, value)), None) | (None, Some((name, value))) => config.warn(
                    &name,
                    &value,
                    "a client certificate needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY",
                ),
                (None, None) => {}
            }
        } else if let Some((name, value)) = ca.or(client.0).or(client.1) {
            config.warn(
                &name,
                &value,
                "certificates need tachylog's `otlp-tls` feature",
            );
        }
        if let Some(value) = var("OTEL_RESOURCE_ATTRIBUTES").filter(|v| !v.trim().is_empty()) {
            config.resource = config.key_values("OTEL_RESOURCE_ATTRIBUTES", &value);
        }
        if let Some(name) = var("OTEL_SERVICE_NAME").filter(|v| !v.trim().is_empty()) {
            config.resource.retain(|(k, _)| k != "service.name");
            config
                .resource
                .push(("service.name".into(), name.trim().to_string()));
        }
        config.proxy = PROXY_VARIABLES
            .iter()
            .filter_map(|name| Some((*name, var(name)?)))
            .collect();
        config
    }

    /// The proxy variables as a lookup, for [`super::http::proxy_for`].
    pub(super) fn proxy_var(&self, name: &str) -> Option<String> {
        self.proxy
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }

    fn warn(&mut self, name: &str, value: &str, why: &str) {
        self.warnings
            .push(format!("ignoring {name}={value:?}: {why}"));
    }

    /// `key1=value1,key2=value2` with percent-encoded values (W3C Baggage, as the OTLP
    /// specification says for headers and resource attributes); a malformed entry is skipped
    /// with a warning.
    fn key_values(&mut self, name: &str, value: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for entry in value.split(',').filter(|e| !e.trim().is_empty()) {
            match entry.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => match percent_decode(v.trim()) {
                    Some(v) => out.push((k.trim().to_string(), v)),
                    None => self.warn(name, entry, "the value is not valid percent-encoded UTF-8"),
                },
                _ => self.warn(name, entry, "expected key=value"),
            }
        }
        out
    }
}

/// Decodes `%XX` escapes; `None` if one is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> EnvConfig {
        EnvConfig::read(&|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn the_logs_variables_win_over_the_generic_ones() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                "http://logs:4318/custom",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
            ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "b=2"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
            ("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "gzip"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1000"),
            ("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "2500"),
        ]);
        assert_eq!(c.endpoint, Some(("http://logs:4318/custom".into(), true)));
        assert_eq!(c.headers, [("b".to_string(), "2".to_string())]);
        assert_eq!(
            (c.gzip, c.timeout),
            (Some(true), Some(Duration::from_millis(2500)))
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // The generic ones alone; an empty signal variable counts as unset.
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
            ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", " "),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
        ]);
        assert_eq!(c.endpoint, Some(("http://generic:4318".into(), false)));
        assert_eq!(c.gzip, Some(false));
        assert_eq!(read(&[]).endpoint, None);
    }

    #[test]
    fn headers_and_resource_attributes_are_percent_decoded() {
        let c = read(&[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                " authorization = Bearer%20abc%3D , x-tenant=shop,,broken, =v",
            ),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-attrs,deployment.environment=prod%2Ceu,bad=%zz",
            ),
        ]);
        assert_eq!(
            c.headers,
            [
                ("authorization".to_string(), "Bearer abc=".to_string()),
                ("x-tenant".into(), "shop".into())
            ]
        );
        assert_eq!(
            c.resource,
            [
                ("service.name".to_string(), "from-attrs".to_string()),
                ("deployment.environment".into(), "prod,eu".into())
            ]
        );
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(
            c.warnings[0].contains("OTEL_EXPORTER_OTLP_HEADERS=\"broken\""),
            "{:?}",
            c.warnings
        );
        // OTEL_SERVICE_NAME wins over service.name in OTEL_RESOURCE_ATTRIBUTES.
        let c = read(&[
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=a,k=v"),
            ("OTEL_SERVICE_NAME", "b"),
        ]);
        assert_eq!(
            c.resource,
            [
                ("k".to_string(), "v".to_string()),
                ("service.name".into(), "b".into())
            ]
        );
    }

    #[test]
    fn unusable_values_are_ignored_with_a_warning() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf"),
        ]);
        assert_eq!((c.gzip, c.timeout), (None, None));
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        let c = read(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        assert!(
            c.warnings[0].contains("http/protobuf only"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn certificate_files_need_the_tls_feature_and_both_halves() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/ca.pem"),
            ("OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "/client.pem"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/client.key"),
        ]);
        if cfg!(feature = "otlp-tls") {
            assert_eq!(c.ca_file, Some("/ca.pem".into()));
            assert_eq!(
                c.client_files,
                Some(("/client.pem".into(), "/client.key".into()))
            );
            let c = read(&[("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/client.key")]);
            assert_eq!((c.client_files, c.warnings.len()), (None, 1));
        } else {
            assert_eq!((c.ca_file, c.warnings.len()), (None, 1));
        }
    }

    #[test]
    fn proxy_variables_are_kept() {
        let c = read(&[("HTTPS_PROXY", "http://p:3128"), ("NO_PROXY", "localhost")]);
        assert_eq!(c.proxy_var("HTTPS_PROXY").as_deref(), Some("http://p:3128"));
        assert_eq!(c.proxy_var("NO_PROXY").as_deref(), Some("localhost"));
        assert_eq!(c.proxy_var("HTTP_PROXY"), None);
    }
}
