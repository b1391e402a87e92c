//! The record-rate tables: throughput until the logger's shutdown returns (with the floor
//! under tachylog's own lines), scaling over producer threads, and the back end alone. Each
//! peer row is set beside tachylog's as `compare` says.

use std::fmt::Write as _;

use super::compare::{self, ratio, versus_tachylog, with_spread};
use super::markdown::{group_digits, rss};
use super::noise;
use super::spread::Better;
use super::{Row, Summary};
use crate::workloads::Workload;

/// `bytes` per `seconds` in MB/s (10^6 bytes).
fn mb_per_s(bytes: u64, seconds: f64) -> String {
    if seconds > 0.0 {
        format!("{:.1}", bytes as f64 / seconds / 1e6)
    } else {
        "–".into()
    }
}

/// CPU seconds, or `–` where not measured.
fn cpu(cpu_s: Option<f64>) -> String {
    cpu_s.map_or("–".into(), |c| format!("{c:.3}"))
}

/// The rate of a throughput row: records per second until shutdown returned.
fn rate(rows: &[Row], logger: &str, workload: &str) -> Option<(f64, u64, f64)> {
    rows.iter().find_map(|r| match r.summary {
        Summary::Throughput {
            lines,
            total_s,
            bytes,
            ..
        } if r.logger == logger && r.workload == workload && total_s > 0.0 => {
            Some((lines as f64 / total_s, bytes, total_s))
        }
        _ => None,
    })
}

/// tachylog's end-to-end `throughput` rows as a percentage of their floors.
fn floor_section(rows: &[Row]) -> String {
    let pairs = [
        ("default", "throughput", "floor"),
        (
            "like spdlog-rs",
            "throughput_like_spdlog",
            "floor_like_spdlog",
        ),
    ];
    let mut out = String::new();
    for (pattern, ours, floor) in pairs {
        let Some((floor_rate, floor_bytes, floor_s)) = rate(rows, "tachylog", floor) else {
            continue;
        };
        if out.is_empty() {
            out.push_str(
                "\n## The floor: tachylog's own bytes, already formatted, written by one thread \
                 in its file sink's batches\n\n\
                 | pattern | floor records/s | floor MB/s | tachylog end to end records/s | tachylog MB/s | tachylog, % of the floor |\n\
                 |---|--:|--:|--:|--:|--:|\n",
            );
        }
        let (ours_rate, ours_mb, pct) = match rate(rows, "tachylog", ours) {
            Some((r, b, s)) => (
                group_digits(r.round() as u64),
                mb_per_s(b, s),
                format!("{:.1} %", r / floor_rate * 100.0),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let _ = writeln!(
            out,
            "| {pattern} (`{ours}` vs `{floor}`) | {} | {} | {ours_rate} | {ours_mb} | {pct} |",
            group_digits(floor_rate.round() as u64),
            mb_per_s(floor_bytes, floor_s),
        );
    }
    out
}

/// Seconds to three decimals.
fn secs(x: f64) -> String {
    format!("{x:.3}")
}

pub(super) fn throughput_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Throughput: whole run until the logger's shutdown returns\n\n\
         | logger | workload | lines | bytes/line | MB/s | caller loop s | total s | lines/s (total) | µs/record | CPU s | total ÷ tachylog | tachylog vs this row | peak RSS MiB |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n",
    );
    for row in rows {
        let base = compare::tachylog_row(rows, &row.workload).and_then(|r| match r.summary {
            Summary::Throughput { total_s, .. } => Some(total_s),
            _ => None,
        });
        match row.summary {
            Summary::Throughput {
                lines,
                bytes_per_line,
                loop_s,
                total_s,
                bytes,
                cpu_s,
            } => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.0} | {} | {:.3} | {} | {} | {:.3} | {} | {} | {} | {} |",
                    row.logger,
                    row.workload,
                    group_digits(lines),
                    bytes_per_line,
                    mb_per_s(bytes, total_s),
                    loop_s,
                    with_spread(row.spread(compare::total_s), total_s, secs),
                    group_digits((lines as f64 / total_s).round() as u64),
                    total_s * 1e6 / lines.max(1) as f64,
                    cpu(cpu_s),
                    ratio(total_s, base),
                    versus_on_total_time(rows, row),
                    rss(row),
                );
            }
            Summary::Failed => {
                let _ = writeln!(
                    out,
                    "| {} | {} | FAILED | | | | | | | | | | |",
                    row.logger, row.workload
                );
            }
            _ => {}
        }
    }
    out.push_str(&floor_section(rows));
    out
}

/// Records/s from 1, 2, 4 and 8 threads, per core of this machine and per CPU-second used.
pub(super) fn scaling_table(rows: &[Row], cpus: usize) -> String {
    let mut out = format!(
        "## Scaling: producer threads x 1M records each, to one file\n\n\
         This machine has {cpus} logical CPU(s). An asynchronous logger's back end is a thread \
         too, so even one producer keeps {} busy; with more threads than CPUs they take turns, \
         and the figures show contention, not parallel speed-up. Per core = records/s ÷ {cpus}; \
         per CPU-second = records ÷ the process's user + system time (what the cores it \
         actually used achieved).\n\n\
         | logger | threads | records | bytes/line | MB/s | total s | records/s | records/s per core (÷ {cpus}) | CPU s | records per CPU-second | speed-up over its 1 thread | total ÷ tachylog | tachylog vs this row | peak RSS MiB |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n",
        cpus.min(2)
    );
    let cpus = cpus.max(1) as f64;
    for row in rows {
        let threads = match Workload::parse(&row.workload) {
            Some(Workload::Scaling(t)) => t,
            _ => continue,
        };
        match row.summary {
            Summary::Throughput {
                lines,
                bytes_per_line,
                total_s,
                bytes,
                cpu_s,
                ..
            } => {
                let rate = lines as f64 / total_s;
                let one = rate_of(rows, &row.logger, "scaling_t1");
                let base =
                    compare::tachylog_row(rows, &row.workload).and_then(|r| match r.summary {
                        Summary::Throughput { total_s, .. } => Some(total_s),
                        _ => None,
                    });
                let per_cpu_s = cpu_s.filter(|c| *c > 0.0).map_or("–".into(), |c| {
                    group_digits((lines as f64 / c).round() as u64)
                });
                let _ = writeln!(
                    out,
                    "| {} | {threads} | {} | {:.0} | {} | {} | {} | {} | {} | {per_cpu_s} | {} | {} | {} | {} |",
                    row.logger,
                    group_digits(lines),
                    bytes_per_line,
                    mb_per_s(bytes, total_s),
                    with_spread(row.spread(compare::total_s), total_s, secs),
                    group_digits(rate.round() as u64),
                    group_digits((rate / cpus).round() as u64),
                    cpu(cpu_s),
                    ratio(rate, one),
                    ratio(total_s, base),
                    versus_on_total_time(rows, row),
                    rss(row),
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "| {} | {threads} | FAILED | | | | | | | | | | | |",
                    row.logger
                );
            }
        }
    }
    out
}

/// Records/s of `logger`'s `workload` row, if it has a usable one.
fn rate_of(rows: &[Row], logger: &str, workload: &str) -> Option<f64> {
    rate(rows, logger, workload).map(|(r, _, _)| r)
}

/// The back end alone: ns per record drained, per line format and argument shape.
pub(super) fn backend_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## The back end alone: records queued while it was held, then the drain to disk timed\n\n\
         | workload | format | shape | records | bytes/line | drain s | ns/record | records/s | MB/s | back end thread CPU ns/record | writing thread CPU ns/record | caller ns/record (queueing, back end held) | peak RSS MiB |\n\
         |---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let Some(Workload::Backend(shape, format)) = Workload::parse(&row.workload) else {
            continue;
        };
        match row.summary {
            Summary::Backend {
                records,
                bytes_per_line,
                bytes,
                fill_s,
                drain_s,
                backend_cpu_s,
                writer_cpu_s,
            } => {
                let n = records.max(1) as f64;
                let per_record = |cpu_s: Option<f64>| {
                    cpu_s.map_or("-".to_string(), |s| format!("{:.1}", s * 1e9 / n))
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {shape:?} | {} | {:.0} | {:.3} | {} | {} | {} | {} | {} | {:.1} | {} |",
                    row.workload,
                    format.label(),
                    group_digits(records),
                    bytes_per_line,
                    drain_s,
                    with_spread(
                        row.spread(|m| compare::drain_s(m).map(|s| s * 1e9 / n)),
                        drain_s * 1e9 / n,
                        |x| format!("{x:.1}")
                    ),
                    group_digits((n / drain_s).round() as u64),
                    mb_per_s(bytes, drain_s),
                    per_record(backend_cpu_s),
                    per_record(writer_cpu_s),
                    fill_s * 1e9 / n,
                    rss(row),
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {shape:?} | FAILED | | | | | | | | | |",
                    row.workload,
                    format.label()
                );
            }
        }
    }
    out
}

/// The ranking of a whole-run row: its total time against tachylog's, with the whole-run bar.
fn versus_on_total_time(rows: &[Row], row: &Row) -> String {
    versus_tachylog(
        rows,
        row,
        &[("total", compare::total_s, &noise::WHOLE_RUN)],
        Better::Lower,
        ("faster", "slower"),
    )
}
