//! Setting a row beside tachylog's: the `÷ tachylog` ratios, the `tachylog vs this row` cell
//! that ranks the two only where the runs can tell them apart, and the report's paragraph that
//! says how to read both.
//!
//! One convention for every ratio: the row's figure divided by tachylog's for the same
//! workload, and only on figures where less is better (ns per call, seconds, CPU, memory), so
//! above 1× always reads "the row's logger took longer or used more". Rates are shown as they
//! are, never as ratios, so that no column reads the other way round.

use std::fmt::Write as _;

use super::spread::{chance_of_disjoint, separate, verdict, Better, Separation, Spread, Words};
use super::{Measurement, Row, Summary};

/// One figure of one run, for its spread over the runs.
pub type Figure = fn(&Measurement) -> Option<f64>;

/// The logger every row is compared with.
pub const TACHYLOG: &str = "tachylog";

/// tachylog's usable row for `workload`.
pub fn tachylog_row<'a>(rows: &'a [Row], workload: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.logger == TACHYLOG && r.workload == workload && r.summary != Summary::Failed)
}

/// `value / base` as `1.23×`, or `–` without a usable base.
pub fn ratio(value: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 => format!("{:.2}×", value / b),
        _ => "–".to_string(),
    }
}

/// The `tachylog vs this row` cell: each of `figures` of `row` against tachylog's row for the
/// same workload, ranked only where their spreads are apart. `–` on tachylog's own row, and
/// where tachylog has no usable row or the figures were not measured.
pub fn versus_tachylog(
    rows: &[Row],
    row: &Row,
    figures: &[(&str, Figure)],
    better: Better,
    words: Words,
) -> String {
    if row.logger == TACHYLOG || row.summary == Summary::Failed {
        return "–".into();
    }
    let Some(ours) = tachylog_row(rows, &row.workload) else {
        return "–".into();
    };
    let parts: Vec<(&str, Separation)> = figures
        .iter()
        .filter_map(|&(name, figure)| {
            Some((
                name,
                separate(ours.spread(figure)?, row.spread(figure)?, better),
            ))
        })
        .collect();
    verdict(&parts, words)
}

/// A figure's cell: its spread over the runs (`40 (40–50)`), or `fallback` (the combined row's
/// figure) where the row kept no runs.
pub fn with_spread(spread: Option<Spread>, fallback: f64, fmt: impl Fn(f64) -> String) -> String {
    match spread {
        Some(s) => s.show(fmt),
        None => fmt(fallback),
    }
}

/// The report's "How to read" section, for a suite of `runs` runs per pair.
pub fn how_to_read(runs: u32) -> String {
    let mut out = String::from("## How to read this report\n\n");
    let _ = writeln!(
        out,
        "- Every figure is the median of the runs it comes from ({runs} per logger and \
         workload here){}.",
        if runs > 1 {
            "; the smallest and the largest run follow it in brackets: `40 (30–50)`"
        } else {
            ""
        }
    );
    out.push_str(
        "- A column headed `÷ tachylog` is the row's figure divided by tachylog's for the same \
         workload. Every such figure is one where less is better (ns per call, seconds, CPU, \
         memory): above 1.00× the row's logger took longer or used more than tachylog; below, \
         less. Rates (records/s, requests/s) are shown as measured.\n",
    );
    out.push_str(
        "- `tachylog vs this row` ranks the two only where this suite can tell them apart: \
         tachylog's min–max range over its runs and the row's do not overlap. Otherwise it \
         says *not separable*: *spreads overlap*, or *one run* where a figure comes from a \
         single run, which has no range.\n",
    );
    if runs > 1 {
        let _ = writeln!(
            out,
            "- With {runs} runs each, two loggers that do not differ at all still give \
             disjoint ranges {:.1} % of the time: treat a lone ranked row with care, and \
             repeat with more runs (`--runs N`) to be sure.",
            chance_of_disjoint(runs) * 100.0
        );
    } else {
        out.push_str(
            "- **This suite ran each pair once, so no row is ranked**: a ratio shows how large \
             a difference was in this run, not that a second run would show it too (on a busy \
             or virtual machine the same code can move by more than the gap between two \
             loggers). `--runs 3` repeats every run (about three times as long); `--only` \
             narrows the suite first, e.g. `--runs 5 --only latency`.\n",
        );
    }
    out
}

/// The median per-call latency of a run, ns.
pub fn latency_p50(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Latency(l) => Some(l.call_ns.p50 as f64),
        _ => None,
    }
}

/// The 99.9th percentile per-call latency of a run, ns.
pub fn latency_p999(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Latency(l) => Some(l.call_ns.p999 as f64),
        _ => None,
    }
}

/// Seconds from a throughput run's first call until the logger's shutdown returned.
pub fn total_s(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Throughput(t) => Some(t.total_s),
        _ => None,
    }
}

/// A back-end run's drain, seconds.
pub fn drain_s(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Backend(b) => Some(b.drain_s),
        _ => None,
    }
}

/// A server run's requests/s.
pub fn requests_per_s(m: &Measurement) -> Option<f64> {
    match m {
        Measurement::Server(s) => Some(s.requests_per_s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{lat_run, report};
    use super::*;

    #[test]
    fn spreads_that_overlap_are_not_separable_and_apart_ones_are_ranked() {
        // tachylog p50 30 (20–40); `near` 35 (30–40) overlaps it; `far` 300 (290–310) does not.
        let r = report(vec![
            lat_run("tachylog", 1, 40, 100),
            lat_run("tachylog", 2, 20, 100),
            lat_run("tachylog", 3, 30, 100),
            lat_run("near", 1, 30, 100),
            lat_run("near", 2, 40, 100),
            lat_run("near", 3, 35, 100),
            lat_run("far", 1, 290, 100),
            lat_run("far", 2, 310, 100),
            lat_run("far", 3, 300, 100),
        ]);
        let rows = r.rows();
        let cell = |logger: &str| {
            let row = rows.iter().find(|r| r.logger == logger).unwrap();
            versus_tachylog(
                &rows,
                row,
                &[("p50", latency_p50)],
                Better::Lower,
                ("faster", "slower"),
            )
        };
        assert_eq!(cell("near"), "not separable: spreads overlap");
        assert_eq!(cell("far"), "tachylog faster");
        assert_eq!(cell("tachylog"), "–");
    }

    #[test]
    fn one_run_is_never_ranked() {
        let r = report(vec![
            lat_run("tachylog", 1, 30, 100),
            lat_run("peer", 1, 3_000, 100),
        ]);
        let rows = r.rows();
        let cell = versus_tachylog(
            &rows,
            &rows[1],
            &[("p50", latency_p50)],
            Better::Lower,
            ("faster", "slower"),
        );
        assert_eq!(cell, "not separable: one run");
        assert!(how_to_read(1).contains("no row is ranked"));
        assert!(how_to_read(3).contains("10.0 %"), "{}", how_to_read(3));
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(3.0, Some(2.0)), "1.50×");
        assert_eq!(ratio(3.0, None), "–");
        assert_eq!(ratio(3.0, Some(0.0)), "–");
    }
}
