//! The targets, checked against figures from the same run: each one MET or MISSED,
//! with the numbers that decided it. "Peers" are the third-party crates; the two std
//! baselines (`bufwriter`, `mutex_file`) and `nolog` are references, and `tachylog_tracing`
//! (tachylog behind its own `tracing` layer) is tachylog, not peers. A target
//! whose figures are missing from this run (workload not selected, or a run failed) is
//! "NOT MEASURED", never MET.

use std::fmt::Write as _;

use super::{Row, Summary};
use crate::stats::Percentiles;

/// Reads one percentile.
type Field = fn(&Percentiles) -> u64;

/// Loggers that are not peers.
const NOT_PEERS: [&str; 5] = [
    "tachylog",
    "tachylog_tracing",
    "bufwriter",
    "mutex_file",
    "nolog",
];

/// Per-call latency workloads the first target covers.
const LATENCY_SHAPES: [&str; 4] = ["latency", "latency_static", "latency_str100", "latency_vec"];

/// One checked target.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What was required.
    pub target: String,
    /// tachylog's figure.
    pub ours: String,
    /// The best peer's figure and name.
    pub best_peer: String,
    /// `Some(true)` MET, `Some(false)` MISSED, `None` not measured.
    pub met: Option<bool>,
}

/// Every target's verdict from `rows`.
pub fn verdicts(rows: &[Row]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for w in LATENCY_SHAPES {
        out.extend(latency(rows, w));
    }
    out.push(lower_is_better(
        rows,
        "seed_1m",
        0.5,
        "seed 1M lines to disk: total s",
    ));
    out.push(throughput(rows));
    for w in ["server_keepalive", "server_close"] {
        if let Some(v) = server(rows, w) {
            out.push(v);
        }
    }
    out
}

/// The Markdown section.
pub fn section(rows: &[Row]) -> String {
    let mut out = String::from(
        "## Targets (issue 3; ratios from this run; peers = third-party crates)\n\n\
         | target | tachylog | best peer | verdict |\n|---|--:|--:|---|\n",
    );
    for v in verdicts(rows) {
        let verdict = match v.met {
            Some(true) => "MET",
            Some(false) => "**MISSED**",
            None => "NOT MEASURED",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {verdict} |",
            v.target, v.ours, v.best_peer
        );
    }
    out
}

fn find<'a>(rows: &'a [Row], logger: &str, workload: &str) -> Option<&'a Summary> {
    rows.iter()
        .find(|r| r.logger == logger && r.workload == workload)
        .map(|r| &r.summary)
        .filter(|s| **s != Summary::Failed)
}

/// Peers with a usable row for `workload`.
fn peers<'a>(rows: &'a [Row], workload: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
    rows.iter().filter(move |r| {
        r.workload == workload
            && !NOT_PEERS.contains(&r.logger.as_str())
            && r.summary != Summary::Failed
    })
}

fn not_measured(target: String) -> Verdict {
    Verdict {
        target,
        ours: "–".into(),
        best_peer: "–".into(),
        met: None,
    }
}

/// p50, p99 and p99.9 below every peer's; p50 at most half the best peer's.
fn latency(rows: &[Row], workload: &str) -> Vec<Verdict> {
    let Some(Summary::Latency { call: ours, .. }) = find(rows, "tachylog", workload) else {
        return vec![not_measured(format!(
            "{workload}: p50/p99/p99.9 below every peer"
        ))];
    };
    let peer_calls: Vec<(&str, Percentiles)> = peers(rows, workload)
        .filter_map(|r| match r.summary {
            Summary::Latency { call, .. } => Some((r.logger.as_str(), call)),
            _ => None,
        })
        .collect();
    if peer_calls.is_empty() {
        return vec![not_measured(format!("{workload}: below every peer"))];
    }
    let mut out = Vec::new();
    let fields: [(&str, Field); 3] = [
        ("p50", |p| p.p50),
        ("p99", |p| p.p99),
        ("p99.9", |p| p.p999),
    ];
    for (name, get) in fields {
        let (best, best_p) = peer_calls
            .iter()
            .min_by_key(|(_, p)| get(p))
            .map(|(n, p)| (*n, *p))
            .unwrap_or(("–", Default::default()));
        out.push(Verdict {
            target: format!("{workload}: {name} below every peer"),
            ours: format!("{} ns", get(ours)),
            best_peer: format!("{} ns ({best})", get(&best_p)),
            met: Some(get(ours) < get(&best_p)),
        });
    }
    let (best, best_p) = peer_calls
        .iter()
        .min_by_key(|(_, p)| p.p50)
        .map(|(n, p)| (*n, p.p50))
        .unwrap_or(("–", 0));
    out.push(Verdict {
        target: format!("{workload}: p50 ≤ 0.5 × best peer's"),
        ours: format!(
            "{} ns ({:.2}×)",
            ours.p50,
            ours.p50 as f64 / best_p.max(1) as f64
        ),
        best_peer: format!("{best_p} ns ({best})"),
        met: Some(ours.p50 as f64 <= 0.5 * best_p as f64),
    });
    out
}

/// tachylog's total time ≤ `factor` × the best peer's.
fn lower_is_better(rows: &[Row], workload: &str, factor: f64, what: &str) -> Verdict {
    let target = format!("{what} ≤ {factor} × best peer's");
    let total = |s: &Summary| match s {
        Summary::Throughput { total_s, .. } => Some(*total_s),
        _ => None,
    };
    let ours = find(rows, "tachylog", workload).and_then(total);
    let best = peers(rows, workload)
        .filter_map(|r| total(&r.summary).map(|t| (r.logger.as_str(), t)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match (ours, best) {
        (Some(o), Some((name, b))) => Verdict {
            target,
            ours: format!("{o:.3} s ({:.2}×)", o / b),
            best_peer: format!("{b:.3} s ({name})"),
            met: Some(o <= factor * b),
        },
        _ => not_measured(target),
    }
}

/// tachylog's records/s ≥ 2 × the best peer's (`throughput` workload).
fn throughput(rows: &[Row]) -> Verdict {
    let target = "throughput: records/s ≥ 2 × best peer's".to_string();
    let rate = |s: &Summary| match s {
        Summary::Throughput { lines, total_s, .. } => Some(*lines as f64 / total_s),
        _ => None,
    };
    let ours = find(rows, "tachylog", "throughput").and_then(rate);
    let best = peers(rows, "throughput")
        .filter_map(|r| rate(&r.summary).map(|t| (r.logger.as_str(), t)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match (ours, best) {
        (Some(o), Some((name, b))) => Verdict {
            target,
            ours: format!("{:.2} M/s ({:.2}×)", o / 1e6, o / b),
            best_peer: format!("{:.2} M/s ({name})", b / 1e6),
            met: Some(o >= 2.0 * b),
        },
        _ => not_measured(target),
    }
}

/// tachylog's requests/s ≥ 97 % of the no-logging run's.
fn server(rows: &[Row], workload: &str) -> Option<Verdict> {
    let rps = |s: &Summary| match s {
        Summary::Server { requests_per_s, .. } => Some(*requests_per_s),
        _ => None,
    };
    if !rows.iter().any(|r| r.workload == workload) {
        return None;
    }
    let target = format!("{workload}: requests/s ≥ 97 % of no logging");
    let ours = find(rows, "tachylog", workload).and_then(rps);
    let base = find(rows, "nolog", workload).and_then(rps);
    Some(match (ours, base) {
        (Some(o), Some(b)) => Verdict {
            target,
            ours: format!("{o:.0}/s ({:.1} %)", o / b * 100.0),
            best_peer: format!("no logging: {b:.0}/s"),
            met: Some(o >= 0.97 * b),
        },
        _ => not_measured(target),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(logger: &str, p50: u64, p99: u64, p999: u64) -> Row {
        Row {
            logger: logger.into(),
            workload: "latency".into(),
            summary: Summary::Latency {
                call: Percentiles {
                    p50,
                    p90: p50,
                    p99,
                    p999,
                    max: p999,
                },
                overhead: Percentiles::default(),
            },
            peak_rss_kib: None,
        }
    }

    #[test]
    fn latency_target_compares_with_the_best_peer_only() {
        let rows = vec![
            lat("tachylog", 40, 100, 900),
            lat("bufwriter", 10, 20, 30), // a baseline, not a peer
            lat("tachylog_tracing", 20, 30, 40), // tachylog itself, not a peer
            lat("ticklog", 70, 90, 2_000),
            lat("spdlog_rs", 500, 1_500, 5_000),
        ];
        let v = latency(&rows, "latency");
        let met: Vec<Option<bool>> = v.iter().map(|v| v.met).collect();
        // p50 40 < 70 met; p99 100 vs 90 missed; p99.9 met; 40 <= 35 missed.
        assert_eq!(met, [Some(true), Some(false), Some(true), Some(false)]);
        assert!(v[1].best_peer.contains("ticklog"));
        assert!(section(&rows).contains("**MISSED**"));
    }

    #[test]
    fn missing_figures_are_not_measured_never_met() {
        let rows = vec![lat("tachylog", 40, 100, 900)];
        assert!(verdicts(&rows).iter().all(|v| v.met.is_none()));
    }
}
