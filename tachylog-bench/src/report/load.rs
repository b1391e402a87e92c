//! What logging costs at a given load rather than at the peak: the `paced_*` runs (CPU and
//! context switches at a fixed record rate) and the `threads_*` runs (memory with many
//! threads alive), their combined rows and their tables. Each figure is set against `nolog`'s
//! row for the same workload in the same suite, which ran the same loop without logging: the
//! difference is what the logger added.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::compare::{ratio, tachylog_row, versus_tachylog, with_spread};
use super::markdown::{group_digits, rss};
use super::noise;
use super::spread::Better;
use super::{Measurement, Row, Summary, Verification};
use crate::stats::{median_f64, median_u64};

/// The logger every added figure is measured against.
pub const REFERENCE: &str = "nolog";

/// The peer the paced table sets tachylog's added CPU against.
pub const PACED_PEER: &str = "tracing_appender";

/// What one `paced_*` child measured over its window (the logger's finish included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacedRun {
    /// Records per second asked for.
    pub rate: u32,
    /// Records logged.
    pub records: u64,
    /// The paced window, seconds: one millisecond per burst.
    pub window_s: f64,
    /// Wall seconds from the first burst until the logger's finish returned.
    pub wall_s: f64,
    /// Process CPU seconds (user + system, every thread) over `wall_s`.
    pub cpu_s: f64,
    /// Voluntary context switches of the process over `wall_s`.
    pub voluntary_switches: u64,
    /// Involuntary context switches of the process over `wall_s`.
    pub involuntary_switches: u64,
    /// Bursts that started more than a millisecond after their tick: the previous burst held
    /// its caller up for longer than the period.
    pub late_bursts: u64,
    /// The logger's own count of its back end's wake-ups in the window (tachylog only).
    #[serde(default)]
    pub backend_wakeups: Option<u64>,
    /// The logger's own count of its back end's CPU seconds in the window (tachylog only).
    #[serde(default)]
    pub backend_cpu_s: Option<f64>,
}

/// What one `threads_*` child measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadsRun {
    /// Threads alive at once.
    pub threads: u32,
    /// Records each logged.
    pub records_per_thread: u64,
    /// Peak resident set of the process after the logger's finish, KiB (`VmHWM`).
    pub peak_rss_kib: Option<u64>,
    /// The same after the logger was installed, before the threads started.
    pub rss_before_kib: Option<u64>,
    /// Wall seconds from the first spawn until the logger's finish returned.
    pub wall_s: f64,
    /// Process CPU seconds over `wall_s`.
    pub cpu_s: f64,
}

/// Combined `paced_*` runs of one logger: medians, except `late_bursts`, the worst run's.
#[derive(Clone, Debug, PartialEq)]
pub struct Paced {
    /// Records per second asked for.
    pub rate: u32,
    /// Records logged per run.
    pub records: u64,
    /// Whole lines with the record's text found on disk (the first run's).
    pub verified: u64,
    /// The paced window, seconds.
    pub window_s: f64,
    /// Wall seconds, finish included.
    pub wall_s: f64,
    /// Process CPU seconds.
    pub cpu_s: f64,
    /// Voluntary + involuntary context switches.
    pub switches: f64,
    /// Of those, voluntary.
    pub voluntary_switches: f64,
    /// The worst run's late bursts.
    pub late_bursts: u64,
    /// The back end's wake-ups, where the logger counts them.
    pub backend_wakeups: Option<f64>,
    /// The back end's CPU seconds, where the logger counts them.
    pub backend_cpu_s: Option<f64>,
}

/// Combined `threads_*` runs of one logger: medians.
#[derive(Clone, Debug, PartialEq)]
pub struct Threads {
    /// Threads alive at once.
    pub threads: u32,
    /// Records each logged.
    pub records_per_thread: u64,
    /// Whole lines with the record's text found on disk (the first run's).
    pub verified: u64,
    /// Peak resident set, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Wall seconds.
    pub wall_s: f64,
}

/// Median of the figures present, or `None` if none is.
fn median_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| median_f64(&v))
}

/// Combines `paced_*` runs; `None` if `ms` holds none.
pub fn paced_summary(ms: &[&Measurement], verified: Option<&Verification>) -> Option<Paced> {
    let runs: Vec<&PacedRun> = ms
        .iter()
        .filter_map(|m| match m {
            Measurement::Paced(p) => Some(p),
            _ => None,
        })
        .collect();
    let first = runs.first()?;
    let med = |f: fn(&PacedRun) -> f64| median_f64(&runs.iter().map(|p| f(p)).collect::<Vec<_>>());
    Some(Paced {
        rate: first.rate,
        records: first.records,
        verified: verified.map_or(0, |v| v.marked_lines),
        window_s: first.window_s,
        wall_s: med(|p| p.wall_s),
        cpu_s: med(|p| p.cpu_s),
        switches: med(|p| (p.voluntary_switches + p.involuntary_switches) as f64),
        voluntary_switches: med(|p| p.voluntary_switches as f64),
        late_bursts: runs.iter().map(|p| p.late_bursts).max().unwrap_or(0),
        backend_wakeups: median_of(runs.iter().map(|p| p.backend_wakeups.map(|w| w as f64))),
        backend_cpu_s: median_of(runs.iter().map(|p| p.backend_cpu_s)),
    })
}

/// Combines `threads_*` runs; `None` if `ms` holds none.
pub fn threads_summary(ms: &[&Measurement], verified: Option<&Verification>) -> Option<Threads> {
    let runs: Vec<&ThreadsRun> = ms
        .iter()
        .filter_map(|m| match m {
            Measurement::Threads(t) => Some(t),
            _ => None,
        })
        .collect();
    let first = runs.first()?;
    let rss: Vec<u64> = runs.iter().filter_map(|t| t.peak_rss_kib).collect();
    Some(Threads {
        threads: first.threads,
        records_per_thread: first.records_per_thread,
        verified: verified.map_or(0, |v| v.marked_lines),
        peak_rss_kib: (!rss.is_empty()).then(|| median_u64(&rss)),
        wall_s: median_f64(&runs.iter().map(|t| t.wall_s).collect::<Vec<_>>()),
    })
}

/// `logger`'s combined `paced_*` row for `workload`, if it has a usable one.
pub fn paced<'a>(rows: &'a [Row], logger: &str, workload: &str) -> Option<&'a Paced> {
    rows.iter().find_map(|r| match &r.summary {
        Summary::Paced(p) if r.logger == logger && r.workload == workload => Some(p),
        _ => None,
    })
}

/// What `logger` added to `nolog`'s process CPU in `workload`, ms per second of window.
pub fn added_cpu_ms_per_s(rows: &[Row], logger: &str, workload: &str) -> Option<f64> {
    let ours = paced(rows, logger, workload)?;
    let base = paced(rows, REFERENCE, workload)?;
    Some((ours.cpu_s - base.cpu_s) / ours.window_s * 1e3)
}

/// What `logger` added to `nolog`'s context switches in `workload`, per second of window.
pub fn added_switches_per_s(rows: &[Row], logger: &str, workload: &str) -> Option<f64> {
    let ours = paced(rows, logger, workload)?;
    let base = paced(rows, REFERENCE, workload)?;
    Some((ours.switches - base.switches) / ours.window_s)
}

/// `logger`'s combined `threads_*` row for `workload`, if it has a usable one.
pub fn threads<'a>(rows: &'a [Row], logger: &str, workload: &str) -> Option<&'a Threads> {
    rows.iter().find_map(|r| match &r.summary {
        Summary::Threads(t) if r.logger == logger && r.workload == workload => Some(t),
        _ => None,
    })
}

/// Lines verified, or `–` for the reference, which logs none.
fn verified(logger: &str, lines: u64) -> String {
    if logger == REFERENCE {
        "–".into()
    } else {
        group_digits(lines)
    }
}

/// A paced run's process CPU, ms per second of window.
fn paced_cpu_ms_per_s(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Paced(p) if p.window_s > 0.0 => Some(p.cpu_s / p.window_s * 1e3),
        _ => None,
    }
}

/// A threads run's peak RSS, MiB.
fn threads_rss_mib(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Threads(t) => t.peak_rss_kib.map(|k| k as f64 / 1024.0),
        _ => None,
    }
}

/// `Some(x)` formatted with `digits` decimals, or `–`.
fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |x| format!("{x:.digits$}"))
}

/// The paced table: per logger and rate, what the process used and what logging added.
pub fn paced_table(rows: &[Row]) -> String {
    let window = rows.iter().find_map(|r| match &r.summary {
        Summary::Paced(p) => Some(p.window_s),
        _ => None,
    });
    let mut out = format!(
        "## Paced logging: CPU and context switches at 1k, 10k and 50k records/s\n\n\
         A burst of records every millisecond for {} s, then the logger's finish. CPU is the \
         process's user + system time over that window (every thread, the finish included), \
         per second of window; *added* is minus `{REFERENCE}`'s in this run, which ran the same \
         pacing loop without logging, so it is what logging cost: the calls, the back end's \
         work and its wake-ups. Context switches are voluntary + involuntary, every thread. A \
         late burst started more than 1 ms after its tick (its caller was held up). Back-end \
         figures are the logger's own count, where it keeps one. *tachylog vs this row* \
         compares the process CPU.\n\n\
         | logger | records/s | lines verified | wall s | CPU ms/s | CPU ÷ tachylog | added CPU ms/s | added CPU µs/record | added CPU vs {PACED_PEER} | context switches/s (voluntary) | added switches/s | late bursts | back end wake-ups/s | back end CPU ms/s | tachylog vs this row | peak RSS MiB |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n",
        opt(window, 1)
    );
    for row in rows {
        let Summary::Paced(p) = &row.summary else {
            let _ = writeln!(
                out,
                "| {} | {} | FAILED | | | | | | | | | | | | | |",
                row.logger, row.workload
            );
            continue;
        };
        let (logger, workload) = (row.logger.as_str(), row.workload.as_str());
        let base_cpu = tachylog_row(rows, workload).and_then(|r| match &r.summary {
            Summary::Paced(b) => Some(b.cpu_s),
            _ => None,
        });
        let added = added_cpu_ms_per_s(rows, logger, workload);
        let per_record = added.map(|a| a * p.window_s * 1e3 / p.records.max(1) as f64);
        let peer = added_cpu_ms_per_s(rows, PACED_PEER, workload);
        let vs_peer = match (added, peer) {
            (Some(a), Some(b)) if logger != REFERENCE && b > 0.0 => format!("{:.2}×", a / b),
            _ => "–".into(),
        };
        let per_s = |x: f64| x / p.window_s;
        let _ = writeln!(
            out,
            "| {logger} | {} | {} | {:.3} | {} | {} | {} | {} | {vs_peer} | {:.0} ({:.0}) | {} | {} | {} | {} | {} | {} |",
            group_digits(u64::from(p.rate)),
            verified(logger, p.verified),
            p.wall_s,
            with_spread(
                row.spread(paced_cpu_ms_per_s),
                per_s(p.cpu_s) * 1e3,
                |x| format!("{x:.1}")
            ),
            ratio(p.cpu_s, base_cpu),
            opt(added, 2),
            opt(per_record, 2),
            per_s(p.switches),
            per_s(p.voluntary_switches),
            opt(added_switches_per_s(rows, logger, workload), 0),
            p.late_bursts,
            opt(p.backend_wakeups.map(per_s), 0),
            opt(p.backend_cpu_s.map(|c| per_s(c) * 1e3), 2),
            versus_tachylog(
                rows,
                row,
                &[("CPU", paced_cpu_ms_per_s, &noise::PACED_CPU)],
                Better::Lower,
                ("uses less", "uses more"),
            ),
            rss(row),
        );
    }
    out
}

/// The threads table: peak RSS with N threads alive, and what logging added to it.
pub fn threads_table(rows: &[Row]) -> String {
    let mut out = format!(
        "## Threads alive at once: peak memory\n\n\
         N threads each log 100 records (`request`), then wait until every other thread has \
         logged, so all N are alive with whatever the logger keeps for each. Peak RSS is the \
         whole process's (`VmHWM`, after the logger's finish); *added* is minus `{REFERENCE}`'s \
         in this run, which started the same threads without logging (their stacks, the \
         harness).\n\n\
         | logger | threads | lines verified | peak RSS MiB | peak RSS ÷ tachylog | added MiB | added KiB per thread | wall s | tachylog vs this row |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|---|\n"
    );
    for row in rows {
        let Summary::Threads(t) = &row.summary else {
            let _ = writeln!(
                out,
                "| {} | {} | FAILED | | | | | | |",
                row.logger, row.workload
            );
            continue;
        };
        let base = threads(rows, REFERENCE, &row.workload).and_then(|b| b.peak_rss_kib);
        let tachylog_kib = threads(rows, "tachylog", &row.workload).and_then(|b| b.peak_rss_kib);
        let added_kib = match (t.peak_rss_kib, base) {
            (Some(ours), Some(b)) => Some(ours as f64 - b as f64),
            _ => None,
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.3} | {} |",
            row.logger,
            group_digits(u64::from(t.threads)),
            verified(&row.logger, t.verified),
            t.peak_rss_kib.map_or("–".into(), |k| with_spread(
                row.spread(threads_rss_mib),
                k as f64 / 1024.0,
                |x| format!("{x:.1}")
            )),
            t.peak_rss_kib.map_or("–".into(), |k| ratio(
                k as f64,
                tachylog_kib.map(|b| b as f64)
            )),
            opt(added_kib.map(|k| k / 1024.0), 1),
            opt(added_kib.map(|k| k / f64::from(t.threads.max(1))), 0),
            t.wall_s,
            versus_tachylog(
                rows,
                row,
                &[("peak RSS", threads_rss_mib, &noise::THREADS_RSS)],
                Better::Lower,
                ("uses less", "uses more"),
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paced_row(logger: &str, cpu_s: f64, switches: u64) -> Row {
        Row {
            logger: logger.into(),
            workload: "paced_1k".into(),
            summary: Summary::Paced(Paced {
                rate: 1_000,
                records: 3_000,
                verified: 3_000,
                window_s: 3.0,
                wall_s: 3.01,
                cpu_s,
                switches: switches as f64,
                voluntary_switches: switches as f64,
                late_bursts: 0,
                backend_wakeups: None,
                backend_cpu_s: None,
            }),
            peak_rss_kib: None,
            measurements: Vec::new(),
        }
    }

    #[test]
    fn added_figures_subtract_nologs_row_per_second_of_window() {
        let rows = [
            paced_row("nolog", 0.030, 3_000),
            paced_row("tachylog", 0.036, 3_090),
            paced_row(PACED_PEER, 0.120, 6_000),
        ];
        let ms = added_cpu_ms_per_s(&rows, "tachylog", "paced_1k").unwrap();
        assert!((ms - 2.0).abs() < 1e-9, "{ms}");
        let sw = added_switches_per_s(&rows, "tachylog", "paced_1k").unwrap();
        assert!((sw - 30.0).abs() < 1e-9, "{sw}");
        assert_eq!(added_cpu_ms_per_s(&rows[1..], "tachylog", "paced_1k"), None);
        let table = paced_table(&rows);
        // 2 ms/s over 3 s is 6 ms for 3,000 records: 2 µs each; the peer adds 30 ms/s.
        assert!(
            table.contains(
                "| tachylog | 1,000 | 3,000 | 3.010 | 12.0 | 1.00× | 2.00 | 2.00 | 0.07× |"
            ),
            "{table}"
        );
        assert!(table.contains("| nolog | 1,000 | – |"), "{table}");
    }

    #[test]
    fn threads_table_shows_what_each_thread_added() {
        let row = |logger: &str, kib| Row {
            logger: logger.into(),
            workload: "threads_1000".into(),
            summary: Summary::Threads(Threads {
                threads: 1_000,
                records_per_thread: 100,
                verified: 100_000,
                peak_rss_kib: Some(kib),
                wall_s: 0.5,
            }),
            peak_rss_kib: Some(kib),
            measurements: Vec::new(),
        };
        let table = threads_table(&[row("nolog", 20_480), row("tachylog", 20_480 + 1_024_000)]);
        assert!(
            table.contains(
                "| tachylog | 1,000 | 100,000 | 1020.0 | 1.00× | 1000.0 | 1024 | 0.500 | – |"
            ),
            "{table}"
        );
    }
}
