//! A real OpenTelemetry Collector for the tests, on loopback: the `otelcol` that
//! `.ci/build-otelcol.sh` builds (OTLP receiver, debug exporter, OTLP/HTTP exporter), found
//! through `TACHYLOG_OTELCOL`. Each test starts its own on a free port with a config written to
//! a temporary directory; the collector forwards what it accepts, synchronously (no queue, no
//! retry), to the test's loopback receiver (`receiver.rs`), and its debug exporter writes
//! every record in detail to `collector-PORT.log`. Also here: a certificate authority made by
//! the test (`rcgen`) and a CONNECT proxy. Every loop is bounded; a collector is killed when its
//! handle is dropped.

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The collector to run: `TACHYLOG_OTELCOL`, else the one `.ci/build-otelcol.sh` leaves in the
/// workspace's `target/otelcol`. Never skips: without a collector the test fails, saying how
/// to build one.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("TACHYLOG_OTELCOL") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "TACHYLOG_OTELCOL={} is not a file: build the collector with .ci/build-otelcol.sh",
            path.display()
        );
        return path;
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/otelcol/otelcol");
    if default.is_file() {
        return default;
    }
    panic!(
        "these tests send to a real OpenTelemetry Collector, and none was found: run \
         `.ci/build-otelcol.sh` from the repository (needs Go 1.24+ and the Go module proxy; a \
         few minutes on 2 cores), then set TACHYLOG_OTELCOL to the path it prints (it builds \
         target/otelcol/otelcol, which is also looked for when the variable is unset). \
         `.ci/run` does both."
    )
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The collector's TLS settings for its OTLP/HTTP receiver.
pub struct ServerTls {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// Set: the collector requires a client certificate signed by this CA.
    pub client_ca: Option<PathBuf>,
}

/// A running collector.
pub struct Collector {
    child: Option<Child>,
    pub port: u16,
    config: PathBuf,
    log: PathBuf,
}

impl Collector {
    /// Starts a collector receiving OTLP/HTTP on 127.0.0.1:`port` (with `tls` if given) and
    /// forwarding to `forward_to`; waits until it accepts connections.
    pub fn start(
        dir: &Path,
        port: u16,
        forward_to: SocketAddr,
        tls: Option<&ServerTls>,
    ) -> Collector {
        let tls_block = match tls {
            None => String::new(),
            Some(tls) => {
                let mut block = format!(
                    "        tls:\n          cert_file: {}\n          key_file: {}\n",
                    tls.cert.display(),
                    tls.key.display()
                );
                if let Some(ca) = &tls.client_ca {
                    block.push_str(&format!("          client_ca_file: {}\n", ca.display()));
                }
                block
            }
        };
        let config = dir.join(format!("collector-{port}.yaml"));
        fs::write(
            &config,
            format!(
                "receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
{tls_block}exporters:
  debug:
    verbosity: detailed
  otlphttp:
    endpoint: http://{forward_to}
    compression: none
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [debug, otlphttp]
"
            ),
        )
        .unwrap();
        let mut collector = Collector {
            child: None,
            port,
            config,
            log: dir.join(format!("collector-{port}.log")),
        };
        collector.restart();
        collector
    }

    /// Starts the collector again (after [`stop`](Collector::stop)) on the same port.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the collector is running");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(binary())
            .arg("--config")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the collector {}: {e}", binary().display()));
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                panic!(
                    "the collector exited at start ({status}):\n{}",
                    self.output()
                );
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the collector did not listen within 30 s:\n{}",
                self.output()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the collector as an operator would (SIGTERM: it finishes the requests in flight),
    /// killing it if it takes more than 10 s.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SAFETY: signalling our own child, which has not been waited for.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the collector ignored SIGTERM for 10 s:\n{}", self.output());
            }
            thread::sleep(Duration::from_millis(10));
        }
        // The port is free once the process is gone.
    }

    /// What the collector wrote: its own log and the debug exporter's records.
    pub fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A certificate authority made for one test, and certificates it signed, as PEM files in
/// `dir`: `ca.pem`; `server.pem` and `server.key` for `localhost` and 127.0.0.1; `client.pem`
/// and `client.key`; and `other-ca.pem`, a CA that signed nothing here.
pub struct Pki {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    pub other_ca: PathBuf,
}

impl Pki {
    pub fn make(dir: &Path) -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let ca_params = |name: &str| {
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            params
        };
        let write = |name: &str, pem: String| {
            let path = dir.join(name);
            fs::write(&path, pem).unwrap();
            path
        };
        let ca_key = KeyPair::generate().unwrap();
        let params = ca_params("tachylog test CA");
        let ca = write("ca.pem", params.self_signed(&ca_key).unwrap().pem());
        let issuer = Issuer::new(params, ca_key);
        let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose, stem: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(DnType::CommonName, stem);
            params.extended_key_usages = vec![usage];
            params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
            let cert = params.signed_by(&key, &issuer).unwrap();
            (
                write(&format!("{stem}.pem"), cert.pem()),
                write(&format!("{stem}.key"), key.serialize_pem()),
            )
        };
        let (server_cert, server_key) = leaf(
            vec!["localhost".into(), "127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
            "server",
        );
        let (client_cert, client_key) = leaf(
            vec!["tachylog-test-client".into()],
            ExtendedKeyUsagePurpose::ClientAuth,
            "client",
        );
        let other_key = KeyPair::generate().unwrap();
        let other_ca = write(
            "other-ca.pem",
            ca_params("another CA")
                .self_signed(&other_key)
                .unwrap()
                .pem(),
        );
        Pki {
            ca,
            server_cert,
            server_key,
            client_cert,
            client_key,
            other_ca,
        }
    }
}

/// A CONNECT proxy on 127.0.0.1 that tunnels to wherever it is asked and remembers where; it
/// stops accepting after 60 s, and each tunnel ends with its connections.
pub struct ConnectProxy {
    pub addr: SocketAddr,
    pub tunnels: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    pub fn start() -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let tunnels = Arc::new(Mutex::new(Vec::new()));
        let seen = tunnels.clone();
        thread::spawn(move || {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(60) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let seen = seen.clone();
                        thread::spawn(move || tunnel(client, &seen));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        ConnectProxy { addr, tunnels }
    }
}

fn tunnel(client: TcpStream, seen: &Mutex<Vec<String>>) {
    client.set_nonblocking(false).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
        let _ =
            (&client).write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    seen.lock().unwrap().push(target.to_string());
    let Ok(upstream) = TcpStream::connect(target) else {
        let _ = (&client).write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    upstream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    (&client)
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .unwrap();
    // Bytes the client sent after its request head (none: it waits for our answer).
    assert!(
        reader.buffer().is_empty(),
        "the client spoke before the tunnel was up"
    );
    let (mut up_w, mut down_r) = (upstream.try_clone().unwrap(), upstream);
    let (mut client_r, mut client_w) = (client.try_clone().unwrap(), client);
    let up = thread::spawn(move || {
        let _ = std::io::copy(&mut client_r, &mut up_w);
        let _ = up_w.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut down_r, &mut client_w);
    let _ = client_w.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

/// A real SOCKS5 proxy (`microsocks`, the Debian package `.ci/run` installs) on a free
/// loopback port, killed when dropped. Never skips: without `microsocks` the test fails,
/// saying how to install it.
pub struct SocksProxy {
    pub port: u16,
    child: std::process::Child,
}

impl SocksProxy {
    pub fn start() -> SocksProxy {
        let port = free_port();
        let child = std::process::Command::new("microsocks")
            .args(["-i", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "the SOCKS test runs a real proxy, `microsocks`, which could not be \
                     started ({e}): `apt-get install microsocks` (`.ci/run` does)"
                )
            });
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "microsocks did not listen on port {port} within 10 s"
            );
            thread::sleep(Duration::from_millis(20));
        }
        SocksProxy { port, child }
    }

    /// The proxy's open sockets besides the one it listens on: two per connection it carries
    /// (the client's and the one to the destination).
    pub fn connection_sockets(&self) -> usize {
        let sockets = std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count();
        sockets.saturating_sub(1)
    }
}

impl Drop for SocksProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
