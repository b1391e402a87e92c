//! tachylog with an `OtlpSink` beside its file sink, plain (`tachylog_otlp`) and durable
//! (`tachylog_otlp_durable`, `OtlpBuilder::durable`: every batch written to an outbox on disk
//! before it is sent, and removed once acknowledged). Set beside the `tachylog` row in
//! `latency` and `throughput`: what sending to a collector costs the caller and the whole run,
//! and what the outbox adds to that.
//!
//! The collector is a loopback HTTP server in the benchmark's process that answers every
//! request `200 OK` with an empty body (an `ExportLogsServiceResponse` with nothing rejected):
//! the rows measure the logger, not a collector, and both rows send to the same one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{log_calls, logger_err, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The loopback collector's base URL, started on first use.
fn collector() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        std::thread::Builder::new()
            .name("bench-collector".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    std::thread::spawn(move || answer(stream));
                }
            })
            .expect("spawn the collector thread");
        url
    })
}

/// Answers each request on a kept-alive connection with `200 OK`, until it closes.
fn answer(stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    let mut body = Vec::new();
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        body.resize(length, 0);
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// The installed logger: its file sink and an OTLP sink, durable with `DURABLE`.
pub struct TachylogOtlp<const DURABLE: bool> {
    guard: ::tachylog::Guard,
    outbox: Option<PathBuf>,
}

impl<const DURABLE: bool> BenchLogger for TachylogOtlp<DURABLE> {
    const NAME: &'static str = if DURABLE {
        "tachylog_otlp_durable"
    } else {
        "tachylog_otlp"
    };
    const CRATES: &'static [&'static str] = &["tachylog"];
    const CONFIG: &'static str = if DURABLE {
        "builder().file(..).sink(OtlpSink::builder(loopback).durable(dir beside the file, \
         1 GiB)).on_full(OnFull::Block), sink defaults otherwise"
    } else {
        "builder().file(..).sink(OtlpSink::builder(loopback)).on_full(OnFull::Block), sink \
         defaults"
    };

    fn init(file: &Path) -> Result<Self, BenchError> {
        let outbox =
            DURABLE.then(|| file.with_file_name(format!("otlp-outbox-{}", std::process::id())));
        let mut sink = ::tachylog::OtlpSink::builder(collector());
        if let Some(outbox) = &outbox {
            sink = sink.durable(outbox, 1 << 30);
        }
        let sink = sink.build().map_err(logger_err(Self::NAME))?;
        let guard = ::tachylog::builder()
            .file(file)
            .sink(sink)
            .on_full(::tachylog::OnFull::Block)
            .init()
            .map_err(logger_err(Self::NAME))?;
        Ok(TachylogOtlp { guard, outbox })
    }

    super::tachylog::tachylog_calls!();

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        if let Some(outbox) = self.outbox {
            let _ = std::fs::remove_dir_all(outbox);
        }
        Ok(())
    }

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(super::tachylog::backend_stats())
    }
}
