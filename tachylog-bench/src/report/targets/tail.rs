//! The caller's tail in absolute figures, tachylog's default back end: the `latency` workload's
//! p99.9 and p99.99 (the latter over at least a million calls a run, as `--full` times them),
//! and Quill's harness (`batch20_t1`, `batch20_t4`) against what Quill v12.1's own harness gave
//! on another 2-core VM of this kind. This VM's mood moves those figures several times over
//! from day to day, Quill's too: `tachylog-bench/quill_harness.sh` runs Quill's harness here,
//! to set beside them in the same session.
//!
//! A percentile is the median of the runs' (as every figure of the report); the worst sample
//! too is the median of the runs' worst, the worst of them all shown beside it, since one
//! preempted batch sets a run's worst whatever the logger.

use super::{not_measured, Verdict};
use crate::report::markdown::group_digits;
use crate::report::{Measurement, Row, Summary};
use crate::stats::{median_u64, Percentiles};

/// Fewest timed calls a run needs for its p99.99 to count: a hundred samples above it.
const P9999_MIN_CALLS: u64 = 1_000_000;

/// One absolute goal for a percentile of tachylog's row of a workload.
struct Goal {
    workload: &'static str,
    /// The figure's name in the verdict.
    name: &'static str,
    get: fn(&Percentiles) -> u64,
    limit_ns: u64,
    /// Fewest timed calls each run needs for the figure to count.
    min_calls: u64,
    /// What the goal was set against.
    reference: &'static str,
}

const GOALS: [Goal; 7] = [
    Goal {
        workload: "latency",
        name: "p99.9",
        get: |p| p.p999,
        limit_ns: 100,
        min_calls: 0,
        reference: "goal",
    },
    Goal {
        workload: "latency",
        name: "p99.99",
        get: |p| p.p9999,
        limit_ns: 1_000,
        min_calls: P9999_MIN_CALLS,
        reference: "goal (no peer publishes one)",
    },
    Goal {
        workload: "batch20_t1",
        name: "p50",
        get: |p| p.p50,
        limit_ns: 25,
        min_calls: 0,
        reference: "Quill's own harness, another VM of this kind: 48 ns",
    },
    Goal {
        workload: "batch20_t1",
        name: "p99.9",
        get: |p| p.p999,
        limit_ns: 200,
        min_calls: 0,
        reference: "Quill's own harness, another VM of this kind: 240 ns",
    },
    Goal {
        workload: "batch20_t1",
        name: "worst",
        get: |p| p.max,
        limit_ns: 2_000,
        min_calls: 0,
        reference: "Quill's own harness, another VM of this kind: 2,273 ns",
    },
    Goal {
        workload: "batch20_t4",
        name: "p99.9",
        get: |p| p.p999,
        limit_ns: 700,
        min_calls: 0,
        reference: "Quill's own harness, another VM of this kind: 751 ns",
    },
    Goal {
        workload: "batch20_t4",
        name: "worst",
        get: |p| p.max,
        limit_ns: 25_000,
        min_calls: 0,
        reference: "Quill's own harness, another VM of this kind: 28,426 ns",
    },
];

/// Every goal's verdict from tachylog's rows.
pub(super) fn verdicts(rows: &[Row]) -> Vec<Verdict> {
    GOALS.iter().map(|goal| verdict(rows, goal)).collect()
}

fn verdict(rows: &[Row], goal: &Goal) -> Verdict {
    let target = format!(
        "{}: {} ≤ {} ns",
        goal.workload,
        goal.name,
        group_digits(goal.limit_ns)
    );
    let runs: Vec<(u64, Percentiles)> = rows
        .iter()
        .filter(|r| {
            r.logger == "tachylog" && r.workload == goal.workload && r.summary != Summary::Failed
        })
        .flat_map(|r| &r.measurements)
        .filter_map(|m| match m {
            Measurement::Latency(l) => Some((l.calls, l.call_ns)),
            _ => None,
        })
        .collect();
    if runs.is_empty() || runs.iter().any(|(calls, _)| *calls < goal.min_calls) {
        return not_measured(target);
    }
    let figures: Vec<u64> = runs.iter().map(|(_, p)| (goal.get)(p)).collect();
    let ours = median_u64(&figures);
    let shown = if goal.name == "worst" {
        let worst = figures.iter().copied().max().unwrap_or(0);
        format!(
            "{} ns (worst of {} runs: {} ns)",
            group_digits(ours),
            runs.len(),
            group_digits(worst)
        )
    } else {
        format!("{} ns", group_digits(ours))
    };
    Verdict {
        target,
        ours: shown,
        best_peer: goal.reference.into(),
        met: Some(ours <= goal.limit_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Latency;

    fn run(calls: u64, p50: u64, p999: u64, p9999: u64, max: u64) -> Measurement {
        Measurement::Latency(Latency {
            calls,
            warmup: 0,
            gap_ns: 2_000,
            ticks_per_ns: 1.0,
            clock_step_ns: 10.0,
            call_ns: Percentiles {
                p50,
                p90: p50,
                p99: p999,
                p999,
                p9999,
                max,
            },
            mean_ns: p50 as f64,
            overhead_ns: Percentiles::default(),
            finish_s: 0.0,
            curve: Vec::new(),
        })
    }

    fn row(logger: &str, workload: &str, runs: Vec<Measurement>) -> Row {
        Row {
            logger: logger.into(),
            workload: workload.into(),
            summary: Summary::Latency {
                call: Percentiles::default(),
                overhead: Percentiles::default(),
            },
            peak_rss_kib: None,
            measurements: runs,
        }
    }

    fn by_target<'a>(verdicts: &'a [Verdict], target: &str) -> &'a Verdict {
        verdicts
            .iter()
            .find(|v| v.target == target)
            .unwrap_or_else(|| panic!("no verdict for {target}"))
    }

    #[test]
    fn the_worst_sample_is_the_median_of_the_runs_worst_and_shows_the_worst_of_all() {
        let rows = vec![row(
            "tachylog",
            "batch20_t4",
            vec![
                run(10_000, 40, 600, 7_000, 23_673),
                run(10_000, 44, 640, 9_000, 1_161_125),
                run(10_000, 42, 650, 8_000, 24_000),
            ],
        )];
        let v = verdicts(&rows);
        let worst = by_target(&v, "batch20_t4: worst ≤ 25,000 ns");
        assert_eq!(worst.met, Some(true));
        assert_eq!(worst.ours, "24,000 ns (worst of 3 runs: 1,161,125 ns)");
        let p999 = by_target(&v, "batch20_t4: p99.9 ≤ 700 ns");
        assert_eq!((p999.met, p999.ours.as_str()), (Some(true), "640 ns"));
        // No `batch20_t1` or `latency` row: not measured, never met.
        assert_eq!(by_target(&v, "batch20_t1: p50 ≤ 25 ns").met, None);
        assert_eq!(by_target(&v, "latency: p99.9 ≤ 100 ns").met, None);
    }

    #[test]
    fn a_p9999_needs_a_million_calls_in_every_run_and_peers_do_not_count() {
        let quick = vec![row(
            "tachylog",
            "latency",
            vec![run(200_000, 40, 90, 400, 9_000)],
        )];
        let v = verdicts(&quick);
        assert_eq!(by_target(&v, "latency: p99.99 ≤ 1,000 ns").met, None);
        assert_eq!(by_target(&v, "latency: p99.9 ≤ 100 ns").met, Some(true));

        let full = vec![
            row(
                "tachylog",
                "latency",
                vec![
                    run(1_000_000, 50, 80, 270, 29_904),
                    run(1_000_000, 50, 170, 441, 24_567),
                    run(1_000_000, 50, 150, 421, 56_144),
                ],
            ),
            row("inqjet", "latency", vec![run(1_000_000, 10, 20, 30, 40)]),
        ];
        let v = verdicts(&full);
        let p999 = by_target(&v, "latency: p99.9 ≤ 100 ns");
        assert_eq!((p999.met, p999.ours.as_str()), (Some(false), "150 ns"));
        let p9999 = by_target(&v, "latency: p99.99 ≤ 1,000 ns");
        assert_eq!((p9999.met, p9999.ours.as_str()), (Some(true), "421 ns"));
    }
}
