//! The report as Markdown, results first: a short header (machine, date, command, scale,
//! whether every line reached the disk), any failed runs, then one table for per-call latency,
//! one for throughput (with the floor under it), one for scaling over producer threads, one
//! for the back end alone, then the server, the paced and the threads tables (the last two in
//! `load`) and idle CPU, the internal targets with `--targets` only; and after the figures,
//! what each workload and logger is and how to read the comparisons. Rows are set beside
//! tachylog's for the same workload as `compare` says; a failed row shows FAILED instead of
//! numbers.

use std::fmt::Write as _;

use super::compare::{self, latency_p50, latency_p999, ratio, versus_tachylog, with_spread};
use super::noise;
use super::rates::{backend_table, scaling_table, throughput_table};
use super::spread::Better;
use super::{Measurement, Report, Row, Summary};
use crate::workloads::Workload;

impl Report {
    /// The full Markdown report: a short header, failures, tables, then the definitions.
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
        let mut more_runs: Vec<(&str, u32)> = Vec::new();
        for r in self.runs.iter().filter(|r| r.run > self.runs_per_pair) {
            match more_runs.iter_mut().find(|(w, _)| *w == r.workload) {
                Some((_, most)) => *most = (*most).max(r.run),
                None => more_runs.push((&r.workload, r.run)),
            }
        }
        for (workload, most) in more_runs {
            let _ = writeln!(
                out,
                "- `{workload}`: {most} runs per logger, interleaved with the other loggers' \
                 (medians shown, with their min–max): its tail is ranked by their spread"
            );
        }
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
        let rows = self.rows();
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
        let binary = super::binary::section(&rows);
        if !binary.is_empty() {
            out.push('\n');
            out.push_str(&binary);
        }
        if self.targets {
            out.push('\n');
            out.push_str(&super::targets::section(
                &rows,
                &self.machine,
                self.baseline_commit.as_deref(),
            ));
        }
        let _ = writeln!(out, "\n## What was measured\n");
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
        out.push('\n');
        out.push_str(&compare::how_to_read(self.runs_per_pair));
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

/// A count of ns, rounded: `1,234`.
fn ns(x: f64) -> String {
    group_digits(x.round().max(0.0) as u64)
}

fn latency_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Per-call latency (ns, harness overhead included)\n\n\
         | logger | workload | p50 | p90 | p99 | p99.9 | p99.99 | max | harness p50 / p99.9 | p50 ÷ tachylog | p99.9 ÷ tachylog | tachylog vs this row | peak RSS MiB |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n",
    );
    for row in rows {
        let base = compare::tachylog_row(rows, &row.workload).and_then(|r| match &r.summary {
            Summary::Latency { call, .. } => Some(*call),
            _ => None,
        });
        match &row.summary {
            Summary::Latency { call, overhead } => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} |",
                    row.logger,
                    row.workload,
                    with_spread(row.spread(latency_p50), call.p50 as f64, ns),
                    group_digits(call.p90),
                    group_digits(call.p99),
                    with_spread(row.spread(latency_p999), call.p999 as f64, ns),
                    group_digits(call.p9999),
                    group_digits(call.max),
                    overhead.p50,
                    overhead.p999,
                    ratio(call.p50 as f64, base.map(|b| b.p50 as f64)),
                    ratio(call.p999 as f64, base.map(|b| b.p999 as f64)),
                    versus_tachylog(
                        rows,
                        row,
                        &[
                            ("p50", latency_p50, &noise::P50),
                            ("p99.9", latency_p999, &noise::P999),
                        ],
                        Better::Lower,
                        ("faster", "slower"),
                    ),
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
    out
}

fn server_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Server under load (access log per request)\n\n\
         Server CPU is the process's user + system time from the server's start until the \
         logger's finish returned, minus the load generator's client threads, per request \
         answered: the server's work, the log call and the logger's back end. *Added by \
         logging* is minus `nolog`'s in this run; *vs nolog* is requests/s as a share of \
         `nolog`'s.\n\n\
         | logger | workload | requests/s | vs nolog | server CPU µs/request | server CPU ÷ tachylog | added by logging µs/request | client p50 µs | client p99 µs | tachylog vs this row (requests/s) |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|---|\n",
    );
    for row in rows {
        let base_cpu = compare::tachylog_row(rows, &row.workload).and_then(|r| match r.summary {
            Summary::Server {
                cpu_us_per_request, ..
            } => cpu_us_per_request,
            _ => None,
        });
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
                    "| {} | {} | {} | {} | {} | {} | {added} | {:.0} | {:.0} | {} |",
                    row.logger,
                    row.workload,
                    with_spread(row.spread(compare::requests_per_s), requests_per_s, |x| {
                        group_digits(x.round() as u64)
                    }),
                    nolog.map_or("–".into(), |(b, _)| format!(
                        "{:.1} %",
                        requests_per_s / b * 100.0
                    )),
                    cpu_us_per_request.map_or("–".into(), |c| format!("{c:.2}")),
                    cpu_us_per_request.map_or("–".into(), |c| ratio(c, base_cpu)),
                    p50_us,
                    p99_us,
                    versus_tachylog(
                        rows,
                        row,
                        &[(
                            "requests/s",
                            compare::requests_per_s,
                            &noise::SERVER_REQUESTS,
                        )],
                        Better::Higher,
                        ("serves more", "serves fewer"),
                    ),
                )
            }
            _ => writeln!(
                out,
                "| {} | {} | FAILED | | | | | | | |",
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
    fn ratios_use_tachylogs_combined_row_and_one_run_is_held_to_the_bars() {
        let r = three_runs_and_a_peer();
        let md = r.markdown();
        // Peer p50 300 vs tachylog's median 30 -> 10.00×; p99.9 3000 vs 300 -> 10.00×. The
        // peer ran once, so each figure is ranked only if 10× clears its family's bar.
        let say = |bar: f64| {
            if 10.0 >= bar {
                "tachylog faster".to_string()
            } else {
                format!("not separable: within {} (one run)", noise::times(bar))
            }
        };
        let (p50, p999) = (say(noise::P50.bar), say(noise::P999.bar));
        let cell = if p50 == p999 {
            p50
        } else {
            format!("p50: {p50}; p99.9: {p999}")
        };
        assert!(
            md.contains(&format!(
                "| peer | latency | 300 | 301 | 302 | 3,000 | 6,000 | 50,000 | 0 / 0 | 10.00× | \
                 10.00× | {cell} |"
            )),
            "{md}"
        );
        // tachylog's three runs: p50 40, 20, 30; p99.9 400, 200, 300.
        assert!(
            md.contains("| tachylog | latency | 30 (20–40) | 31 | 32 | 300 (200–400) |"),
            "{md}"
        );
    }

    /// The `latency` row of `logger` in the report `md`.
    fn latency_row(md: &str, logger: &str) -> String {
        md.lines()
            .find(|l| l.starts_with(&format!("| {logger} | latency |")))
            .unwrap_or_else(|| panic!("no {logger} row in\n{md}"))
            .to_string()
    }

    #[test]
    fn a_single_run_far_beyond_the_bars_is_ranked_and_one_within_them_is_not() {
        // One run each: `far` is further from tachylog than both bars; `near` is within both.
        let far = (30.0 * noise::P50.bar.max(noise::P999.bar) * 2.0) as u64;
        let r = report(vec![
            lat_run("tachylog", 1, 30, 100),
            lat_run("far", 1, far, 100),
            lat_run("near", 1, 31, 100),
        ]);
        let md = r.markdown();
        let line = |logger: &str| latency_row(&md, logger);
        assert!(
            line("far").contains("| tachylog faster |"),
            "{}",
            line("far")
        );
        assert!(
            line("near").contains(&format!(
                "| p50: not separable: within {} (one run); p99.9: not separable: within {} \
                 (one run) |",
                noise::times(noise::P50.bar),
                noise::times(noise::P999.bar)
            )),
            "{}",
            line("near")
        );
    }

    #[test]
    fn a_row_whose_spreads_overlap_says_not_separable() {
        let r = report(vec![
            lat_run("tachylog", 1, 40, 100),
            lat_run("tachylog", 2, 20, 100),
            lat_run("tachylog", 3, 30, 100),
            lat_run("peer", 1, 35, 100),
            lat_run("peer", 2, 45, 100),
            lat_run("peer", 3, 25, 100),
            lat_run("slow", 1, 900, 100),
            lat_run("slow", 2, 800, 100),
            lat_run("slow", 3, 1_000, 100),
        ]);
        let md = r.markdown();
        let line = |logger: &str| latency_row(&md, logger);
        assert!(
            line("peer").contains("| not separable: spreads overlap |"),
            "{}",
            line("peer")
        );
        assert!(
            line("slow").contains("| tachylog faster |"),
            "{}",
            line("slow")
        );
        assert!(md.contains("disjoint ranges 10.0 % of the time"), "{md}");
    }

    #[test]
    fn targets_only_with_the_flag() {
        let mut r = three_runs_and_a_peer();
        let md = r.markdown();
        for word in ["MET", "MISSED", "NOT MEASURED", "targets", "baseline"] {
            assert!(!md.contains(word), "`{word}` without --targets:\n{md}");
        }
        r.targets = true;
        let md = r.markdown();
        assert!(md.contains("## Internal targets (`--targets`)"), "{md}");
        // tachylog p50 30 ns against the peer's 300: below every peer, and at most half.
        assert!(
            md.contains(
                "| latency: p50 ≤ 0.5 × best peer's | 30 ns (0.10×) | 300 ns (peer) | MET |"
            ),
            "{md}"
        );
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
    fn the_figures_come_before_the_definitions() {
        let md = three_runs_and_a_peer().markdown();
        let at = |heading: &str| {
            md.find(heading)
                .unwrap_or_else(|| panic!("no `{heading}`:\n{md}"))
        };
        let first_table = at("## Per-call latency");
        assert!(first_table < at("## What was measured"), "{md}");
        assert!(
            at("## What was measured") < at("## How to read this report"),
            "{md}"
        );
        // Above the first table: the title and a few lines of context, nothing more.
        assert!(md[..first_table].lines().count() < 15, "{md}");
    }

    #[test]
    fn number_formatting() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_000), "1,000");
        assert_eq!(group_digits(1_234_567), "1,234,567");
    }
}
