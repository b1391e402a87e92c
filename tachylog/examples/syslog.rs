//! Records sent to a syslog collector as RFC 5424 messages, over UDP (default) or TCP.
//!
//! `cargo run -p tachylog --example syslog [--tcp] [HOST:PORT]`
//!
//! The address comes from the argument, else from `TACHYLOG_SYSLOG_ADDR`, else is
//! `127.0.0.1:5514`. The records also go to stdout as text, and the program says what it sent.
//!
//! To watch them arrive, run a private `rsyslogd` in the foreground (no root needed, nothing
//! outside `/tmp/tachylog-syslog` is touched). `mkdir -p /tmp/tachylog-syslog` and save this as
//! `/tmp/tachylog-syslog/rsyslog.conf`:
//!
//! ```text
//! global(workDirectory="/tmp/tachylog-syslog")
//! module(load="imtcp")
//! module(load="imudp")
//! input(type="imtcp" address="127.0.0.1" port="5514")
//! input(type="imudp" address="127.0.0.1" port="5514")
//! template(name="raw" type="string" string="%rawmsg%\n")
//! action(type="omfile" file="/tmp/tachylog-syslog/out.log" template="raw")
//! ```
//!
//! then, in one terminal:
//!
//! ```sh
//! rsyslogd -n -f /tmp/tachylog-syslog/rsyslog.conf -i /tmp/tachylog-syslog/rsyslogd.pid
//! ```
//!
//! and in another `cargo run -p tachylog --example syslog -- --tcp` (or without `--tcp` for
//! UDP), then `cat /tmp/tachylog-syslog/out.log`: one RFC 5424 message per line, exactly as
//! sent (`%rawmsg%`). `imtcp` understands the octet-counted framing the TCP sink uses.
//!
//! With nothing listening the program still ends normally; what happens to the records
//! depends on the transport:
//! - **UDP** has no connection and no acknowledgement: the datagrams vanish. The kernel turns
//!   the ICMP "port unreachable" one send provokes into an error on the next send, so about
//!   every other record is counted lost and reported on stderr; the rest go unreported.
//! - **TCP**: the first connect is refused, so the sink starts disconnected and keeps the
//!   records in memory (up to 10,000 records or 4 MiB; past that the newest is dropped and
//!   counted), retrying the connection with backoff from 100 ms up to 10 s. When the guard is
//!   dropped the waiting records get one last attempt; those that still cannot go out are
//!   reported on stderr as not delivered (`N record(s) could not be delivered ...`).

use std::time::Instant;
use tachylog::{Facility, Level, SyslogSink};

const USAGE: &str = "usage: syslog [--tcp] [HOST:PORT]   (default address: $TACHYLOG_SYSLOG_ADDR or 127.0.0.1:5514)";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut tcp = false;
    let mut addr = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--tcp" => tcp = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if arg.starts_with('-') => {
                return Err(format!("unknown option {arg}\n{USAGE}").into())
            }
            _ => addr = Some(arg),
        }
    }
    let addr = addr
        .or_else(|| std::env::var("TACHYLOG_SYSLOG_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:5514".to_string());

    let builder = SyslogSink::builder()
        .facility(Facility::Local0)
        .app_name("tachylog-example");
    // Both fail only if the address does not resolve: an unreachable TCP collector is not an
    // error here, the sink starts disconnected and buffers.
    let sink = if tcp {
        builder.tcp(addr.as_str())?
    } else {
        builder.udp(addr.as_str())?
    };
    let target = sink.describe_target();
    println!("sending 5 records to {target} (and to stdout as text)");

    let guard = tachylog::builder()
        .level(Level::Debug)
        .sink(sink)
        .stdout()
        .init()?;
    let started = Instant::now();
    tachylog::info!("service started, pid {}", std::process::id());
    tachylog::debug!("config loaded from {:?}", "/etc/shop.toml");
    tachylog::warn!("disk {:.1}% full", 93.25);
    tachylog::error!("payment {} failed: \"card declined\"\nretrying", 42);
    log::info!(target: "legacy", "through the log crate: {}", 5);
    // Structured fields become a second STRUCTURED-DATA element, `[fields@32473 ...]`.
    tachylog::info!(order_id = 42u64, amount = 19.99, currency = "EUR"; "order shipped");
    // Drains the queues and stops the back end; a TCP sink makes its last delivery attempt.
    drop(guard);

    println!(
        "done in {:?}: 6 records handed to {target}; undelivered or lost records, if any, are \
         reported on stderr above",
        started.elapsed()
    );
    Ok(())
}
