//! The report as Markdown: a header saying what was measured on what, then one table for
//! per-call latency, one for throughput (with the floor under it), one for scaling over
//! producer threads, one for the back end alone, then the server, the paced and the threads
//! tables (the last two in `load`) and idle CPU. Ratios are to tachylog's row for the same
//! workload (higher = slower than tachylog); a failed row shows FAILED instead of numbers.

use std::fmt::Write as _;

use super::{Measurement, Report, Row, Summary};
use crate::workloads::Workload;

impl Report {
    /// The full Markdown report: header, tables, failures.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# tachylog-bench\n");
        if self.debug_build {
            let _ = writeln!(
                out,
                "**DEBUG BUILD: these numbers are meaningless; use `cargo run --release`.**\n"
            );
        }
        let _ = writeln!(out, "- Machine: {}", self.machine.describe());
        let _ = writeln!(out, "- Date: {}", self.date);
        let load = self
            .load_before
            .map_or("?".to_string(), |[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"));
        let _ = match self.others_cpu_share {
            Some(share) => writeln!(
                out,
                "- Other processes used {:.1} % of all CPU time during the suite (load average \
                 before: {load}){}",
                share * 100.0,
                if share > 0.05 {
                    " — **the machine was busy with other work: expect noisy figures**"
                } else {
                    ""
                }
            ),
            None => writeln!(out, "- Load average before: {load}"),
        };
        let _ = writeln!(
            out,
            "- Command: `{}`{}",
            self.command,
            if self.via_cargo {
                " (launched by cargo run)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "- Build: {}, {}",
            self.rustc,
            if self.debug_build { "debug" } else { "release" }
        );
        let _ = writeln!(
            out,
            "- Scale: {} ({} run(s) per logger and workload, each in its own process{})",
            self.scale,
            self.runs_per_pair,
            if self.runs_per_pair > 1 {
                "; medians shown, max is the worst run"
            } else {
                ""
            }
        );
        let verified = self
            .runs
            .iter()
            .filter(|r| r.verification.as_ref().is_some_and(|v| v.ok()))
            .count();
        let _ = writeln!(
            out,
            "- Verified: {verified} of {} runs left every line on disk, whole and rendered \
             right (counted by the parent after each child exited)",
            self.runs.len()
        );
        if let Some(l) = self
            .runs
            .iter()
            .find_map(|r| match r.result.as_ref()?.measurement {
                Measurement::Latency(ref l) => Some(l),
                _ => None,
            })
        {
            let _ = writeln!(
                out,
                "- Clock: {:.3} TSC ticks/ns, advancing in steps of ~{:.1} ns (the resolution \
                 of every latency figure)",
                l.ticks_per_ns, l.clock_step_ns
            );
        }
        for w in &self.workloads {
            let _ = writeln!(out, "- {w}");
        }
        for l in &self.loggers {
            let _ = writeln!(out, "- `{}` ({}): {}", l.name, l.crates, l.config);
        }
        for line in &self.not_run {
            // Each line says why: a call the logger cannot express, or a baseline that
            // could not be built.
            let _ = writeln!(out, "- Not run: {line}");
        }
        if self.suite_s > 0.0 {
            let _ = writeln!(out, "- The suite took {:.0} s", self.suite_s);
        }
        let rows = self.rows();
        out.push('\n');
        out.push_str(&super::targets::section(&rows, &self.machine));
        let of = |k: Kind| -> Vec<Row> {
            rows.iter()
                .filter(|r| kind(&r.workload) == k)
                .cloned()
                .collect()
        };
        let cpus = self.machine.logical_cpus;
        let scaling = move |rows: &[Row]| scaling_table(rows, cpus);
        let tables: [(Kind, &Table); 8] = [
            (Kind::Latency, &latency_table),
            (Kind::Throughput, &throughput_table),
            (Kind::Scaling, &scaling),
            (Kind::Backend, &backend_table),
            (Kind::Server, &server_table),
            (Kind::Paced, &super::load::paced_table),
            (Kind::Threads, &super::load::threads_table),
            (Kind::Idle, &idle_table),
        ];
        for (k, table) in tables {
            let rows = of(k);
            if !rows.is_empty() {
                out.push('\n');
                out.push_str(&table(&rows));
            }
        }
        let failures = self.failures();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n## FAILED runs\n");
            for f in failures {
                let _ = writeln!(
                    out,
                    "- {} / {} run {}: {}",
                    f.logger,
                    f.workload,
                    f.run,
                    f.failure.as_deref().unwrap_or("")
                );
            }
        }
        out
    }
}

/// Renders one table from its rows.
type Table = dyn Fn(&[Row]) -> String;

/// Which table a workload's rows go to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Latency,
    Throughput,
    Scaling,
    Backend,
    Server,
    Paced,
    Threads,
    Idle,
}

fn kind(workload: &str) -> Kind {
    match Workload::parse(workload) {
        Some(Workload::Latency(_) | Workload::Batch(_)) => Kind::Latency,
        Some(Workload::Server(_)) => Kind::Server,
        Some(Workload::Paced(_)) => Kind::Paced,
        Some(Workload::Threads(_)) => Kind::Threads,
        Some(Workload::IdleCpu) => Kind::Idle,
        Some(Workload::Scaling(_)) => Kind::Scaling,
        Some(Workload::Backend(..)) => Kind::Backend,
        _ => Kind::Throughput,
    }
}

/// Peak RSS in MiB, or `–`.
pub(super) fn rss(row: &Row) -> String {
    row.peak_rss_kib
        .map_or("–".into(), |k| format!("{:.1}", k as f64 / 1024.0))
}

/// `value / base` as `1.23×`, or `–` without a usable base.
pub fn ratio(value: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 => format!("{:.2}×", value / b),
        _ => "–".to_string(),
    }
}

/// 1234567 -> "1,234,567".
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn latency_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Per-call latency (ns, harness overhead included)\n\n\
         | logger | workload | p50 | p90 | p99 | p99.9 | max | harness p50 / p99.9 | p50 vs tachylog | p99.9 vs tachylog | peak RSS MiB |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let base = rows.iter().find_map(|r| match &r.summary {
            Summary::Latency { call, .. }
                if r.logger == "tachylog" && r.workload == row.workload =>
            {
                Some(*call)
            }
            _ => None,
        });
        match &row.summary {
            Summary::Latency { call, overhead } => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} |",
                    row.logger,
                    row.workload,
                    group_digits(call.p50),
                    group_digits(call.p90),
                    group_digits(call.p99),
                    group_digits(call.p999),
                    group_digits(call.max),
                    overhead.p50,
                    overhead.p999,
                    ratio(call.p50 as f64, base.map(|b| b.p50 as f64)),
                    ratio(call.p999 as f64, base.map(|b| b.p999 as f64)),
                    rss(row),
                );
            }
            Summary::Failed => {
                let _ = writeln!(
                    out,
                    "| {} | {} | FAILED | | | | | | | | |",
                    row.logger, row.workload
                );
            }
            _ => {}
        }
    }
    out
}

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

fn throughput_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Throughput: whole run until the logger's shutdown returns\n\n\
         | logger | workload | lines | bytes/line | MB/s | caller loop s | total s | lines/s (total) | µs/record | CPU s | total vs tachylog | peak RSS MiB |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let base = rows.iter().find_map(|r| match r.summary {
            Summary::Throughput { total_s, .. }
                if r.logger == "tachylog" && r.workload == row.workload =>
            {
                Some(total_s)
            }
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
                    "| {} | {} | {} | {:.0} | {} | {:.3} | {:.3} | {} | {:.3} | {} | {} | {} |",
                    row.logger,
                    row.workload,
                    group_digits(lines),
                    bytes_per_line,
                    mb_per_s(bytes, total_s),
                    loop_s,
                    total_s,
                    group_digits((lines as f64 / total_s).round() as u64),
                    total_s * 1e6 / lines.max(1) as f64,
                    cpu(cpu_s),
                    ratio(total_s, base),
                    rss(row),
                );
            }
            Summary::Failed => {
                let _ = writeln!(
                    out,
                    "| {} | {} | FAILED | | | | | | | | | |",
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
fn scaling_table(rows: &[Row], cpus: usize) -> String {
    let mut out = format!(
        "## Scaling: producer threads x 1M records each, to one file\n\n\
         This machine has {cpus} logical CPU(s). An asynchronous logger's back end is a thread \
         too, so even one producer keeps {} busy; with more threads than CPUs they take turns, \
         and the figures show contention, not parallel speed-up. Per core = records/s ÷ {cpus}; \
         per CPU-second = records ÷ the process's user + system time (what the cores it \
         actually used achieved).\n\n\
         | logger | threads | records | bytes/line | MB/s | total s | records/s | records/s per core (÷ {cpus}) | CPU s | records per CPU-second | vs its 1 thread | peak RSS MiB |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
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
                let per_cpu_s = cpu_s.filter(|c| *c > 0.0).map_or("–".into(), |c| {
                    group_digits((lines as f64 / c).round() as u64)
                });
                let _ = writeln!(
                    out,
                    "| {} | {threads} | {} | {:.0} | {} | {:.3} | {} | {} | {} | {per_cpu_s} | {} | {} |",
                    row.logger,
                    group_digits(lines),
                    bytes_per_line,
                    mb_per_s(bytes, total_s),
                    total_s,
                    group_digits(rate.round() as u64),
                    group_digits((rate / cpus).round() as u64),
                    cpu(cpu_s),
                    ratio(rate, one),
                    rss(row),
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "| {} | {threads} | FAILED | | | | | | | | | |",
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
fn backend_table(rows: &[Row]) -> String {
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
                    "| {} | {} | {shape:?} | {} | {:.0} | {:.3} | {:.1} | {} | {} | {} | {} | {:.1} | {} |",
                    row.workload,
                    format.label(),
                    group_digits(records),
                    bytes_per_line,
                    drain_s,
                    drain_s * 1e9 / n,
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

fn server_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Server under load (access log per request)\n\n\
         Server CPU is the process's user + system time from the server's start until the \
         logger's finish returned, minus the load generator's client threads, per request \
         answered: the server's work, the log call and the logger's back end. *Added by \
         logging* is minus `nolog`'s in this run.\n\n\
         | logger | workload | requests/s | vs nolog | server CPU µs/request | added by logging µs/request | client p50 µs | client p99 µs |\n\
         |---|---|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        let nolog = rows.iter().find_map(|r| match r.summary {
            Summary::Server {
                requests_per_s,
                cpu_us_per_request,
                ..
            } if r.logger == "nolog" && r.workload == row.workload => {
                Some((requests_per_s, cpu_us_per_request))
            }
            _ => None,
        });
        let _ = match row.summary {
            Summary::Server {
                requests_per_s,
                p50_us,
                p99_us,
                cpu_us_per_request,
            } => {
                let added = match (cpu_us_per_request, nolog.and_then(|(_, c)| c)) {
                    (Some(ours), Some(base)) if row.logger != "nolog" => {
                        format!("{:.2}", ours - base)
                    }
                    _ => "–".into(),
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {added} | {:.0} | {:.0} |",
                    row.logger,
                    row.workload,
                    group_digits(requests_per_s.round() as u64),
                    nolog.map_or("–".into(), |(b, _)| format!(
                        "{:.1} %",
                        requests_per_s / b * 100.0
                    )),
                    cpu_us_per_request.map_or("–".into(), |c| format!("{c:.2}")),
                    p50_us,
                    p99_us
                )
            }
            _ => writeln!(
                out,
                "| {} | {} | FAILED | | | | | |",
                row.logger, row.workload
            ),
        };
    }
    out
}

fn idle_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Idle CPU (process CPU time over 5 s with no records)\n\n\
         | logger | CPU, % of one core | peak RSS MiB |\n|---|--:|--:|\n",
    );
    for row in rows {
        let _ = match row.summary {
            Summary::Idle { cpu_share } => writeln!(
                out,
                "| {} | {:.2} | {} |",
                row.logger,
                cpu_share * 100.0,
                rss(row)
            ),
            _ => writeln!(out, "| {} | FAILED | |", row.logger),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{lat_run, report, three_runs_and_a_peer};
    use super::*;

    #[test]
    fn ratios_use_tachylogs_combined_row() {
        let r = three_runs_and_a_peer();
        let md = r.markdown();
        // Peer p50 300 vs tachylog's median 30 -> 10.00×; p99.9 3000 vs 300 -> 10.00×.
        assert!(
            md.contains(
                "| peer | latency | 300 | 301 | 302 | 3,000 | 50,000 | 0 / 0 | 10.00× | 10.00× |"
            ),
            "{md}"
        );
        assert!(md.contains("| tachylog | latency | 30 |"), "{md}");
    }

    #[test]
    fn a_failed_run_poisons_its_row_and_is_listed() {
        let mut bad = lat_run("peer", 1, 300, 50_000);
        bad.failure = Some("9 of 10 expected lines on disk (1 missing)".into());
        let r = report(vec![lat_run("tachylog", 1, 30, 100), bad]);
        let md = r.markdown();
        assert!(md.contains("| peer | latency | FAILED |"), "{md}");
        assert!(md.contains("## FAILED runs"), "{md}");
        assert!(md.contains("(1 missing)"), "{md}");
    }

    #[test]
    fn number_formatting() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_000), "1,000");
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(ratio(3.0, Some(2.0)), "1.50×");
        assert_eq!(ratio(3.0, None), "–");
        assert_eq!(ratio(3.0, Some(0.0)), "–");
    }
}
