//! tachylog's own performance targets, checked against figures from the same run, shown only
//! with `--targets`: each one MET or MISSED, with the numbers that decided it. They are goals
//! the project holds itself to (for example "p50 at most half the best peer's"), not a
//! comparison a user needs, so the default report leaves them out rather than print a MISSED
//! that a noisy machine can cause on its own.
//!
//! "`latency` no worse than the baseline" compares with a baseline commit's own binary run in
//! the same suite (`crate::baseline`, `--baseline` or `--full --targets`) when there is one,
//! because a tail percentile measures the machine of the day as much as the code; the figures
//! recorded in `baselines/latency.json` are shown beside it, and decide alone only on the CPU
//! model and count they were recorded on.
//!
//! "Peers" are the third-party crates; the two std baselines (`bufwriter`, `mutex_file`) and
//! `nolog` are references, and `tachylog_tracing` (tachylog behind its own `tracing` layer) is
//! tachylog, not a peer. A target whose figures are missing from this run (workload not
//! selected, or a run failed) is "NOT MEASURED", never MET. The targets at moderate load
//! (`paced_*`, `threads_1000`) are in `load`, the caller's tail in absolute figures (`latency`,
//! Quill's harness) in `tail`.

use std::fmt::Write as _;

use serde::Deserialize;

mod load;
mod tail;

use super::{Row, Summary};
use crate::machine::Machine;
use crate::stats::Percentiles;

/// Reads one percentile.
type Field = fn(&Percentiles) -> u64;

/// Loggers that are not peers.
const NOT_PEERS: [&str; 9] = [
    "tachylog",
    "tachylog_spool",
    "tachylog_otlp",
    "tachylog_otlp_durable",
    crate::baseline::LABEL,
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

/// Every target's verdict from `rows`, measured on `machine`; `baseline_run` is the commit
/// whose binary ran as [`crate::baseline::LABEL`] in this suite, if one did.
pub fn verdicts(rows: &[Row], machine: &Machine, baseline_run: Option<&str>) -> Vec<Verdict> {
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
    out.push(throughput(
        rows,
        "throughput",
        "throughput",
        "throughput (default pattern): records/s ≥ 2 × best peer's",
    ));
    out.push(throughput(
        rows,
        "throughput_like_spdlog",
        "throughput",
        "throughput like for like (tachylog with spdlog-rs's line content, \
         `throughput_like_spdlog`; peers' `throughput`): records/s ≥ 2 × best peer's",
    ));
    out.push(throughput(
        rows,
        "scaling_t2",
        "scaling_t2",
        "2 threads × 1M (`scaling_t2`): records/s ≥ 2 × best peer's",
    ));
    out.push(backend(rows));
    out.extend(binary(rows));
    out.extend(latency_vs_baseline(
        rows,
        machine,
        &Baseline::recorded(),
        baseline_run,
    ));
    for w in ["server_keepalive", "server_close"] {
        if let Some(v) = server(rows, w) {
            out.push(v);
        }
    }
    out.extend(load::paced(rows));
    out.push(load::threads_rss(rows));
    out.extend(tail::verdicts(rows));
    out
}

/// The Markdown section (`--targets`).
pub fn section(rows: &[Row], machine: &Machine, baseline_run: Option<&str>) -> String {
    let mut out = String::from(
        "## Internal targets (`--targets`)\n\n\
         tachylog's own goals, checked on this run's medians alone (a single noisy run can \
         miss one); peers = third-party crates.\n\n\
         | target | tachylog | best peer / reference | verdict |\n|---|--:|--:|---|\n",
    );
    for v in verdicts(rows, machine, baseline_run) {
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

/// tachylog's records/s in workload `ours` ≥ 2 × the best peer's in workload `theirs`.
fn throughput(rows: &[Row], ours: &str, theirs: &str, target: &str) -> Verdict {
    let target = target.to_string();
    let rate = |s: &Summary| match s {
        Summary::Throughput { lines, total_s, .. } => Some(*lines as f64 / total_s),
        _ => None,
    };
    let ours = find(rows, "tachylog", ours).and_then(rate);
    let best = peers(rows, theirs)
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

/// Back-end ns/record for the default line (`backend_iteration`): at most 100 (10M records/s).
fn backend(rows: &[Row]) -> Verdict {
    const LIMIT_NS: f64 = 100.0;
    let target =
        format!("back end alone, default pattern (`backend_iteration`): ns/record ≤ {LIMIT_NS:.0}");
    match find(rows, "tachylog", "backend_iteration") {
        Some(Summary::Backend {
            records, drain_s, ..
        }) => {
            let ns = drain_s * 1e9 / (*records).max(1) as f64;
            Verdict {
                target,
                ours: format!("{ns:.1} ns ({:.1} M records/s)", 1e3 / ns),
                best_peer: format!("target: {LIMIT_NS:.0} ns (10 M records/s)"),
                met: Some(ns <= LIMIT_NS),
            }
        }
        _ => not_measured(target),
    }
}

/// The binary log's goals, on `Iteration` (`throughput_binary`) and on the web back end's mix
/// (`throughput_mix_binary`): records/s ≥ 20 M and ≥ 2 × the text sink's of the same run,
/// bytes per record ≤ 25 % (`Iteration`) or 15 % (the mix) of the text line's, and reading
/// back (`cat_binary`, `cat_mix_binary`) ≥ 10 M/s.
fn binary(rows: &[Row]) -> Vec<Verdict> {
    use super::binary::rate_and_size;
    let mut out = Vec::new();
    for (binary, text, share_goal) in [
        ("throughput_binary", "throughput", 0.25),
        ("throughput_mix_binary", "throughput_mix", 0.15),
    ] {
        let speed =
            format!("binary log, one thread (`{binary}`): records/s ≥ 20 M and ≥ 2 × `{text}`'s");
        let size = format!(
            "binary log: bytes/record ≤ {:.0} % of `{text}`'s text line",
            share_goal * 100.0
        );
        match (rate_and_size(rows, binary), rate_and_size(rows, text)) {
            (Some((bin_rate, bin_size)), Some((text_rate, text_size))) => {
                out.push(Verdict {
                    target: speed,
                    ours: format!(
                        "{:.2} M/s ({:.2}× text)",
                        bin_rate / 1e6,
                        bin_rate / text_rate
                    ),
                    best_peer: format!("text: {:.2} M/s", text_rate / 1e6),
                    met: Some(bin_rate >= 20e6 && bin_rate >= 2.0 * text_rate),
                });
                let share = bin_size / text_size.max(1e-9);
                out.push(Verdict {
                    target: size,
                    ours: format!("{bin_size:.1} B ({:.1} %)", share * 100.0),
                    best_peer: format!("text: {text_size:.1} B"),
                    met: Some(share <= share_goal),
                });
            }
            _ => out.extend([not_measured(speed), not_measured(size)]),
        }
    }
    for workload in ["cat_binary", "cat_mix_binary"] {
        let cat = format!("`tachylog cat` (`{workload}`): records/s ≥ 10 M");
        out.push(match rate_and_size(rows, workload) {
            Some((rate, _)) => Verdict {
                target: cat,
                ours: format!("{:.2} M/s", rate / 1e6),
                best_peer: "target: 10 M/s".into(),
                met: Some(rate >= 10e6),
            },
            None => not_measured(cat),
        });
    }
    out
}

/// tachylog's `latency` figures recorded at a reference commit (`baselines/latency.json`): the
/// level a change to the hot path must not fall below. The file also says where the figures
/// come from and when, for a person reading it; the report needs only what is below.
#[derive(Clone, Debug, Deserialize)]
pub struct Baseline {
    /// The commit they were measured at, which `--full --targets` builds and runs beside the
    /// current code (see `crate::baseline`).
    pub commit: String,
    /// The CPU they were measured on (`Machine::cpu_model`).
    pub cpu_model: String,
    /// Its logical CPU count.
    pub logical_cpus: usize,
    /// (workload, p50 ns, p99.9 ns).
    pub latency: Vec<(String, u64, u64)>,
}

impl Baseline {
    /// The figures in `tachylog-bench/baselines/latency.json`, compiled in.
    pub fn recorded() -> Baseline {
        serde_json::from_str(include_str!("../../../baselines/latency.json"))
            .expect("baselines/latency.json parses (checked by a unit test)")
    }
}

/// `latency` p50 and p99.9 no worse than the baseline. The reference is the baseline commit's
/// own binary measured in this run ([`crate::baseline`]; `baseline_run` names its commit) when
/// the run has it; the figures recorded in `baselines/latency.json` are then shown beside it.
/// Without a baseline run, the recorded figures decide, and count only on the machine they
/// were recorded on. Each row names the commit it compared with.
fn latency_vs_baseline(
    rows: &[Row],
    machine: &Machine,
    base: &Baseline,
    baseline_run: Option<&str>,
) -> Vec<Verdict> {
    let latency = |logger: &str, workload: &str| match find(rows, logger, workload) {
        Some(Summary::Latency { call, .. }) => Some(*call),
        _ => None,
    };
    let run_name = baseline_run.map_or_else(
        || format!("the `{}` build", crate::baseline::LABEL),
        |c| format!("commit {c}"),
    );
    let recorded_name = format!(
        "the figures recorded for commit {} (baselines/latency.json)",
        base.commit
    );
    let mut out = Vec::new();
    for (workload, base_p50, base_p999) in &base.latency {
        let ours = latency("tachylog", workload);
        let same_run = latency(crate::baseline::LABEL, workload);
        let same_machine =
            machine.cpu_model == base.cpu_model && machine.logical_cpus == base.logical_cpus;
        let fields: [(&str, Field, u64); 2] = [
            ("p50", |p| p.p50, *base_p50),
            ("p99.9", |p| p.p999, *base_p999),
        ];
        for (name, get, recorded_ns) in fields {
            let versus = |ours: u64, theirs: u64| {
                format!("{ours} ns ({:.2}×)", ours as f64 / theirs.max(1) as f64)
            };
            out.push(match (ours, same_run) {
                (Some(p), Some(b)) => Verdict {
                    target: format!(
                        "{workload}: {name} no worse than {run_name}'s, measured in this run"
                    ),
                    ours: versus(get(&p), get(&b)),
                    best_peer: format!(
                        "{} ns (`{}`, this run); recorded for commit {}: {recorded_ns} ns",
                        get(&b),
                        crate::baseline::LABEL,
                        base.commit
                    ),
                    met: Some(get(&p) <= get(&b)),
                },
                (Some(p), None) if same_machine => Verdict {
                    target: format!("{workload}: {name} no worse than {recorded_name}"),
                    ours: versus(get(&p), recorded_ns),
                    best_peer: format!("{recorded_ns} ns (recorded on this CPU model)"),
                    met: Some(get(&p) <= recorded_ns),
                },
                (Some(p), None) => Verdict {
                    target: format!("{workload}: {name} no worse than {recorded_name}"),
                    ours: format!("{} ns", get(&p)),
                    best_peer: format!(
                        "{recorded_ns} ns, recorded on {} x {}, not this machine: not comparable",
                        base.logical_cpus, base.cpu_model
                    ),
                    met: None,
                },
                (None, _) => not_measured(format!("{workload}: {name} no worse than the baseline")),
            });
        }
    }
    out
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
                    p9999: p999,
                    max: p999,
                },
                overhead: Percentiles::default(),
            },
            peak_rss_kib: None,
            measurements: Vec::new(),
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
        assert!(section(&rows, &Machine::detect(), None).contains("**MISSED**"));
    }

    #[test]
    fn missing_figures_are_not_measured_never_met() {
        // The latency row alone: every target but the baseline's needs other rows; on
        // another machine the baseline's are not comparable either.
        let rows = vec![lat("tachylog", 40, 100, 900)];
        let mut elsewhere = Machine::detect();
        elsewhere.cpu_model = "a CPU the baseline was not recorded on".into();
        assert!(verdicts(&rows, &elsewhere, None)
            .iter()
            .all(|v| v.met.is_none()));
    }

    fn throughput_row(logger: &str, workload: &str, lines: u64, total_s: f64) -> Row {
        Row {
            logger: logger.into(),
            workload: workload.into(),
            summary: Summary::Throughput {
                lines,
                bytes_per_line: 50.0,
                loop_s: total_s,
                total_s,
                bytes: lines * 50,
                cpu_s: None,
            },
            peak_rss_kib: None,
            measurements: Vec::new(),
        }
    }

    #[test]
    fn like_for_like_is_tachylogs_variant_against_the_peers_default_rows() {
        let rows = vec![
            throughput_row("tachylog", "throughput", 1_000_000, 0.5),
            throughput_row("tachylog", "throughput_like_spdlog", 1_000_000, 0.2),
            throughput_row("spdlog_rs", "throughput", 1_000_000, 0.6),
            throughput_row("bufwriter", "throughput", 1_000_000, 0.1), // not a peer
        ];
        let v = verdicts(&rows, &Machine::detect(), None);
        let find = |t: &str| v.iter().find(|v| v.target.starts_with(t)).unwrap();
        // 2.0 M/s vs 1.67 M/s: 1.2×, missed; 5.0 M/s: 3×, met.
        assert_eq!(find("throughput (default").met, Some(false));
        assert_eq!(find("throughput like for like").met, Some(true));
        assert!(find("throughput like for like")
            .best_peer
            .contains("spdlog_rs"));
        assert_eq!(find("2 threads").met, None);
    }

    #[test]
    fn backend_target_is_100_ns_per_record() {
        let row = |drain_s| Row {
            logger: "tachylog".into(),
            workload: "backend_iteration".into(),
            summary: Summary::Backend {
                records: 1_000_000,
                bytes_per_line: 120.0,
                bytes: 120_000_000,
                fill_s: 0.01,
                drain_s,
                backend_cpu_s: None,
                writer_cpu_s: None,
            },
            peak_rss_kib: None,
            measurements: Vec::new(),
        };
        assert_eq!(backend(&[row(0.099)]).met, Some(true));
        assert_eq!(backend(&[row(0.101)]).met, Some(false));
    }

    #[test]
    fn latency_baseline_counts_only_on_its_machine() {
        let base = Baseline {
            commit: "abc123".into(),
            cpu_model: "cpu".into(),
            logical_cpus: 2,
            latency: vec![("latency".into(), 40, 900)],
        };
        let mut m = Machine::detect();
        m.cpu_model = "cpu".into();
        m.logical_cpus = 2;
        let met = |rows: &[Row], m: &Machine| -> Vec<Option<bool>> {
            latency_vs_baseline(rows, m, &base, None)
                .iter()
                .map(|v| v.met)
                .collect()
        };
        assert_eq!(
            met(&[lat("tachylog", 40, 0, 901)], &m),
            [Some(true), Some(false)]
        );
        m.logical_cpus = 8;
        assert_eq!(met(&[lat("tachylog", 40, 0, 901)], &m), [None, None]);
        assert_eq!(met(&[], &m), [None, None]);
        // The recorded file parses and names the `latency` workload.
        assert!(Baseline::recorded()
            .latency
            .iter()
            .any(|(w, _, _)| w == "latency"));
    }

    #[test]
    fn a_baseline_run_in_the_same_suite_decides_on_any_machine() {
        let base = Baseline {
            commit: "abc123".into(),
            cpu_model: "another cpu".into(),
            logical_cpus: 64,
            latency: vec![("latency".into(), 10, 20)],
        };
        let m = Machine::detect();
        // `--baseline def456`: the row names the commit that ran, not the recorded one.
        let verdicts = |ours: Row| {
            latency_vs_baseline(
                &[ours, lat(crate::baseline::LABEL, 50, 0, 300)],
                &m,
                &base,
                Some("def456"),
            )
        };
        let v = verdicts(lat("tachylog", 50, 0, 290));
        assert_eq!(
            v.iter().map(|v| v.met).collect::<Vec<_>>(),
            [Some(true), Some(true)]
        );
        assert!(
            v[1].target.contains("commit def456's") && !v[1].target.contains("abc123"),
            "{}",
            v[1].target
        );
        assert!(
            v[1].best_peer.contains("recorded for commit abc123"),
            "{}",
            v[1].best_peer
        );
        assert!(
            v[1].best_peer.contains("300 ns") && v[1].best_peer.contains("20 ns"),
            "{}",
            v[1].best_peer
        );
        let v = verdicts(lat("tachylog", 60, 0, 310));
        assert_eq!(
            v.iter().map(|v| v.met).collect::<Vec<_>>(),
            [Some(false), Some(false)]
        );
    }

    #[test]
    fn the_baseline_is_not_a_peer() {
        let rows = [
            lat("tachylog", 40, 60, 90),
            lat(crate::baseline::LABEL, 30, 50, 80),
            lat("inqjet", 100, 140, 500),
        ];
        let v = latency(&rows, "latency");
        assert!(v.iter().all(|v| v.met == Some(true)), "{v:?}");
        assert!(v[0].best_peer.contains("inqjet"), "{v:?}");
    }
}
