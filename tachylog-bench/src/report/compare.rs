//! Setting a row beside tachylog's: the `÷ tachylog` ratios, the `tachylog vs this row` cell
//! that ranks the two only where the runs can tell them apart (`spread`, with the single-run
//! bars of `noise`), and the report's paragraph that says how to read both.
//!
//! One convention for every ratio: the row's figure divided by tachylog's for the same
//! workload, and only on figures where less is better (ns per call, seconds, CPU, memory), so
//! above 1× always reads "the row's logger took longer or used more". Rates are shown as they
//! are, never as ratios, so that no column reads the other way round.

use std::fmt::Write as _;

use super::noise;
use super::spread::{
    chance_of_disjoint, separate, verdict, Better, Separation, Spread, Words, FEW_RUNS,
};
use super::{Measurement, Row, Summary};

/// One figure of one run, for its spread over the runs.
pub type Figure = fn(&Measurement) -> Option<f64>;

/// A figure a table ranks on: its name in the cell, how to read it from a run, and its
/// family, which holds the bar a single run must clear (`noise`).
pub type Ranked = (&'static str, Figure, &'static noise::Family);

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
/// same workload, ranked only where `spread::separate` says they are apart. `–` on tachylog's
/// own row, and where tachylog has no usable row or the figures were not measured.
pub fn versus_tachylog(
    rows: &[Row],
    row: &Row,
    figures: &[Ranked],
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
        .filter_map(|&(name, figure, family)| {
            let bar = family.bar_for(&row.logger);
            Some((
                name,
                separate(ours.spread(figure)?, row.spread(figure)?, better, bar),
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
    let _ = writeln!(
        out,
        "- `tachylog vs this row` ranks the two only where this suite can tell them apart, and \
         otherwise says *not separable* and why. With one run, two figures are ranked only \
         when they differ by more than repeated runs of one logger on one workload moved on \
         this machine, rounded up: {}. Closer than that, the row says *not separable: within \
         N× (one run)*: the gap is no larger than the run-to-run noise.",
        noise::describe_bars()
    );
    let _ = writeln!(
        out,
        "- With several runs, tachylog's min–max range over its runs and the row's must not \
         overlap (else *not separable: spreads overlap*); with {FEW_RUNS} runs, the figures \
         must also clear the one-run bar, since {FEW_RUNS} runs each give disjoint ranges by \
         luck {:.0} % of the time.",
        chance_of_disjoint(FEW_RUNS as u32) * 100.0
    );
    if runs as usize > FEW_RUNS {
        let _ = writeln!(
            out,
            "- With {runs} runs each, two loggers that do not differ at all still give \
             disjoint ranges {:.1} % of the time: treat a lone ranked row with care, and \
             repeat with more runs (`--runs N`) to be sure.",
            chance_of_disjoint(runs) * 100.0
        );
    } else if runs == 1 {
        let _ = writeln!(
            out,
            "- This suite ran each pair once. A ranked row differs by more than one logger's \
             runs moved on this machine; a row *within* the bar may or may not differ, and its \
             ratio shows only this run. {} `--runs 3` repeats every run (about three times as \
             long) and ranks by ranges instead; `--only` narrows the suite first, e.g. \
             `--runs 5 --only latency`.",
            noise::PROVENANCE
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

    /// The `tachylog vs this row` cell of `logger`'s latency row, ranked on p50.
    fn p50_cell(r: &super::super::Report, logger: &str) -> String {
        let rows = r.rows();
        let row = rows.iter().find(|r| r.logger == logger).unwrap();
        versus_tachylog(
            &rows,
            row,
            &[("p50", latency_p50, &noise::P50)],
            Better::Lower,
            ("faster", "slower"),
        )
    }

    #[test]
    fn with_several_runs_spreads_decide_whatever_the_bar() {
        // tachylog p50 30 (20–40); `near` 35 (30–40) overlaps it; `far` 300 (290–310) does
        // not; `close` 46 (45–47) does not either, though it is within the one-run bar.
        let mut runs = Vec::new();
        for (logger, p50s) in [
            ("tachylog", [40, 20, 30]),
            ("near", [30, 40, 35]),
            ("far", [290, 310, 300]),
            ("close", [45, 47, 46]),
        ] {
            for (i, p50) in p50s.into_iter().enumerate() {
                runs.push(lat_run(logger, i as u32 + 1, p50, 100));
            }
        }
        let r = report(runs);
        const { assert!(46.0 < 30.0 * noise::P50.bar) };
        assert_eq!(p50_cell(&r, "near"), "not separable: spreads overlap");
        assert_eq!(p50_cell(&r, "far"), "tachylog faster");
        assert_eq!(p50_cell(&r, "close"), "tachylog faster");
        assert_eq!(p50_cell(&r, "tachylog"), "–");
    }

    #[test]
    fn one_run_is_ranked_only_beyond_its_familys_bar() {
        // The smallest p50 at the bar, and one ns under it.
        let at_bar = (30.0 * noise::P50.bar).ceil() as u64;
        let r = report(vec![
            lat_run("tachylog", 1, 30, 100),
            lat_run("beyond", 1, at_bar, 100),
            lat_run("within", 1, at_bar - 1, 100),
            lat_run("faster", 1, 1, 100),
            // A logger whose p50 came out in two modes is held to its own, wider bar.
            lat_run("slog", 1, at_bar, 100),
        ]);
        assert_eq!(p50_cell(&r, "beyond"), "tachylog faster");
        assert_eq!(
            p50_cell(&r, "within"),
            format!(
                "not separable: within {} (one run)",
                noise::times(noise::P50.bar)
            )
        );
        assert_eq!(p50_cell(&r, "faster"), "tachylog slower");
        assert_eq!(
            p50_cell(&r, "slog"),
            format!(
                "not separable: within {} (one run)",
                noise::times(noise::P50.bar_for("slog"))
            )
        );
    }

    #[test]
    fn how_to_read_names_the_bars_and_the_chance_of_luck() {
        let one = how_to_read(1);
        assert!(
            one.contains(&format!(
                "With one run, two figures are ranked only when they differ by more than \
                 repeated runs of one logger on one workload moved on this machine, rounded \
                 up: {}. Closer than that",
                noise::describe_bars()
            )),
            "{one}"
        );
        assert!(one.contains("This suite ran each pair once."), "{one}");
        assert!(one.contains(noise::PROVENANCE), "{one}");
        // Two runs each: 2 of the 6 orders are disjoint.
        assert!(one.contains("by luck 33 % of the time"), "{one}");
        assert!(how_to_read(3).contains("10.0 %"), "{}", how_to_read(3));
        assert!(!how_to_read(3).contains("ran each pair once"));
        // Two runs: both rules, said once.
        assert_eq!(
            how_to_read(2).matches("33").count(),
            1,
            "{}",
            how_to_read(2)
        );
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(3.0, Some(2.0)), "1.50×");
        assert_eq!(ratio(3.0, None), "–");
        assert_eq!(ratio(3.0, Some(0.0)), "–");
    }
}
