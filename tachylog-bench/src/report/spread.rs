//! How far one suite's figures can be trusted to rank two loggers: each figure's spread over
//! the runs it comes from, and whether tachylog's and another logger's figures are apart.
//!
//! The rules are deliberately simple, so a reader can check them by eye in the table. With
//! three runs or more, two figures are told apart when the min–max ranges of their runs do not
//! overlap. One run has no range, so its figure is ranked only when it is further from the
//! other than repeated runs of one logger on one workload ever moved on this machine (the bars
//! in [`super::noise`]); two runs need both, because two pairs of runs give disjoint ranges by
//! luck one time in three, and a second run should never lower the bar a single one has to
//! clear. Disjoint ranges can still happen by chance ([`chance_of_disjoint`]); more runs make
//! that rarer, which the report's header says in numbers.

use super::{Measurement, Row};

/// One figure over the runs it comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median of the runs (the figure the tables show).
    pub median: f64,
    /// The smallest run.
    pub min: f64,
    /// The largest run.
    pub max: f64,
    /// How many runs it comes from (at least 1).
    pub runs: usize,
}

impl Spread {
    /// The spread of `values`, one per run; `None` for no runs.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            runs: n,
        })
    }

    /// The median, then `(min–max)` when there were several runs: `40 (40–50)`, or `40`.
    pub fn show(&self, fmt: impl Fn(f64) -> String) -> String {
        if self.runs > 1 {
            format!("{} ({}–{})", fmt(self.median), fmt(self.min), fmt(self.max))
        } else {
            fmt(self.median)
        }
    }
}

/// Whether a lower or a higher figure is the better one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Times, CPU, memory.
    Lower,
    /// Rates.
    Higher,
}

/// What one suite can say about tachylog's figure against another logger's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Separation {
    /// The figures are apart; `tachylog_better` says which side is ahead.
    Apart {
        /// tachylog's figure is on the better side.
        tachylog_better: bool,
    },
    /// The ranges of several runs overlap: the runs cannot rank the two.
    Overlap,
    /// One side comes from one or two runs, and the two figures are closer than `bar`: within
    /// what repeated runs of one logger moved on this machine.
    WithinNoise {
        /// The single-run bar of the figure's family (`noise`), e.g. 1.5 for 1.5×.
        bar: f64,
        /// The fewer runs of the two sides (1 or 2).
        runs: usize,
    },
}

/// At most this many runs per side, a figure must also clear its family's single-run bar to be
/// ranked: two runs each give disjoint ranges by luck one time in three
/// (`chance_of_disjoint(2)`), against one in ten with three.
pub const FEW_RUNS: usize = 2;

/// Whether `a` and `b` are at least `bar` times apart, either way round. Figures are never
/// negative; zero against anything positive is apart, zero against zero is not.
fn beyond(a: f64, b: f64, bar: f64) -> bool {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    hi > lo && hi >= lo * bar
}

/// Compares tachylog's spread with another logger's. `bar` is the figure's single-run bar
/// ([`super::noise`]): with one run on either side the medians must be at least that far
/// apart; with two, the ranges must not overlap and the medians must clear it too; with three
/// or more, the ranges must not overlap.
pub fn separate(tachylog: Spread, other: Spread, better: Better, bar: f64) -> Separation {
    let runs = tachylog.runs.min(other.runs);
    if runs >= 2 && tachylog.max >= other.min && tachylog.min <= other.max {
        return Separation::Overlap;
    }
    if runs <= FEW_RUNS && !beyond(tachylog.median, other.median, bar) {
        return Separation::WithinNoise { bar, runs };
    }
    // Apart: disjoint ranges put the medians in the same order as the ranges.
    Separation::Apart {
        tachylog_better: (tachylog.median < other.median) == (better == Better::Lower),
    }
}

/// The words a table uses for tachylog being ahead or behind: `("faster", "slower")`.
pub type Words = (&'static str, &'static str);

/// The table cell for one or more compared figures, e.g. `tachylog faster`,
/// `not separable: spreads overlap`, `not separable: within 6× (one run)`, or `p50: tachylog
/// faster; p99.9: not separable: within 200× (one run)`. `parts` holds (figure name,
/// separation); the name is left out when every figure says the same.
pub fn verdict(parts: &[(&str, Separation)], words: Words) -> String {
    let say = |s: Separation| match s {
        Separation::Apart {
            tachylog_better: true,
        } => format!("tachylog {}", words.0),
        Separation::Apart {
            tachylog_better: false,
        } => format!("tachylog {}", words.1),
        Separation::Overlap => "not separable: spreads overlap".to_string(),
        Separation::WithinNoise { bar, runs } => format!(
            "not separable: within {} ({})",
            super::noise::times(bar),
            if runs == 1 { "one run" } else { "two runs" }
        ),
    };
    match parts {
        [] => "–".to_string(),
        [(_, first), rest @ ..] if rest.iter().all(|(_, s)| s == first) => say(*first),
        _ => parts
            .iter()
            .map(|(name, s)| format!("{name}: {}", say(*s)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The chance that two loggers with the same distribution still give disjoint ranges over
/// `runs` runs each: every one of one side's runs below every one of the other's, either way
/// round, is 2 of the C(2n, n) equally likely orders. 1 for one run (no range at all).
pub fn chance_of_disjoint(runs: u32) -> f64 {
    if runs < 2 {
        return 1.0;
    }
    let n = f64::from(runs);
    // C(2n, n) = prod_{i=1..n} (n + i) / i
    let orders: f64 = (1..=runs)
        .map(|i| (n + f64::from(i)) / f64::from(i))
        .product();
    2.0 / orders
}

impl Row {
    /// The spread of one figure over this row's runs (`None` where no run has it).
    pub fn spread(&self, figure: impl Fn(&Measurement) -> Option<f64>) -> Option<Spread> {
        let values: Vec<f64> = self.measurements.iter().filter_map(figure).collect();
        Spread::of(&values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(values: &[f64]) -> Spread {
        Spread::of(values).unwrap()
    }

    #[test]
    fn spread_is_the_median_and_the_extremes() {
        let s = spread(&[50.0, 30.0, 40.0]);
        assert_eq!((s.median, s.min, s.max, s.runs), (40.0, 30.0, 50.0, 3));
        assert_eq!(s.show(|x| format!("{x:.0}")), "40 (30–50)");
        assert_eq!(spread(&[7.0]).show(|x| format!("{x:.0}")), "7");
        assert_eq!(Spread::of(&[]), None);
    }

    const APART_TRUE: Separation = Separation::Apart {
        tachylog_better: true,
    };
    const APART_FALSE: Separation = Separation::Apart {
        tachylog_better: false,
    };

    #[test]
    fn with_three_runs_or_more_only_disjoint_ranges_are_ranked() {
        let fast = spread(&[40.0, 40.0, 50.0]);
        let slow = spread(&[60.0, 70.0, 80.0]);
        let near = spread(&[50.0, 60.0, 60.0]);
        // 60 / 40 is under a bar of 2×: with three runs the bar plays no part.
        assert_eq!(separate(fast, slow, Better::Lower, 2.0), APART_TRUE);
        assert_eq!(separate(slow, fast, Better::Lower, 2.0), APART_FALSE);
        // For a rate, the higher range is the better one.
        assert_eq!(separate(slow, fast, Better::Higher, 2.0), APART_TRUE);
        // 50 is in both ranges; far apart medians would not help.
        assert_eq!(
            separate(fast, near, Better::Lower, 2.0),
            Separation::Overlap
        );
        let wide = spread(&[10.0, 50.0, 1_000.0]);
        assert_eq!(
            separate(fast, wide, Better::Lower, 1.1),
            Separation::Overlap
        );
    }

    #[test]
    fn one_run_is_ranked_only_beyond_the_bar() {
        let one = |x: f64| spread(&[x]);
        // 28× apart with a 1.5× bar: ranked, either way round, for either direction.
        assert_eq!(
            separate(one(40.0), one(1_152.0), Better::Lower, 1.5),
            APART_TRUE
        );
        assert_eq!(
            separate(one(1_152.0), one(40.0), Better::Lower, 1.5),
            APART_FALSE
        );
        assert_eq!(
            separate(one(90.0), one(60.0), Better::Higher, 1.5),
            APART_TRUE
        );
        // Exactly the bar is enough; just under it is not.
        assert_eq!(
            separate(one(40.0), one(60.0), Better::Lower, 1.5),
            APART_TRUE
        );
        let within = Separation::WithinNoise { bar: 1.5, runs: 1 };
        assert_eq!(separate(one(40.0), one(59.0), Better::Lower, 1.5), within);
        assert_eq!(separate(one(59.0), one(40.0), Better::Higher, 1.5), within);
        assert_eq!(separate(one(40.0), one(40.0), Better::Lower, 1.5), within);
        // Several runs on one side only: the single run's figure against the median.
        let three = spread(&[30.0, 40.0, 50.0]);
        assert_eq!(separate(three, one(55.0), Better::Lower, 1.5), within);
        assert_eq!(separate(three, one(61.0), Better::Lower, 1.5), APART_TRUE);
        // Zero against a positive figure is apart; zero against zero is not.
        assert_eq!(separate(one(0.0), one(1.0), Better::Lower, 4.0), APART_TRUE);
        assert_eq!(
            separate(one(0.0), one(0.0), Better::Lower, 4.0),
            Separation::WithinNoise { bar: 4.0, runs: 1 }
        );
    }

    #[test]
    fn two_runs_need_disjoint_ranges_and_the_bar() {
        let two = |a: f64, b: f64| spread(&[a, b]);
        // Disjoint but only 1.25× apart: within a 1.5× bar.
        assert_eq!(
            separate(two(40.0, 41.0), two(50.0, 51.0), Better::Lower, 1.5),
            Separation::WithinNoise { bar: 1.5, runs: 2 }
        );
        // Disjoint and 3× apart: ranked.
        assert_eq!(
            separate(two(40.0, 41.0), two(120.0, 125.0), Better::Lower, 1.5),
            APART_TRUE
        );
        // Far apart medians, overlapping ranges: not ranked.
        assert_eq!(
            separate(two(40.0, 200.0), two(150.0, 600.0), Better::Lower, 1.5),
            Separation::Overlap
        );
    }

    #[test]
    fn the_verdict_names_figures_only_when_they_disagree() {
        let words = ("faster", "slower");
        assert_eq!(
            verdict(&[("p50", APART_TRUE), ("p99.9", APART_TRUE)], words),
            "tachylog faster"
        );
        assert_eq!(
            verdict(
                &[("p50", APART_TRUE), ("p99.9", Separation::Overlap)],
                words
            ),
            "p50: tachylog faster; p99.9: not separable: spreads overlap"
        );
        assert_eq!(
            verdict(
                &[("total", Separation::WithinNoise { bar: 4.0, runs: 1 })],
                words
            ),
            "not separable: within 4× (one run)"
        );
        assert_eq!(
            verdict(
                &[
                    ("p50", APART_FALSE),
                    ("p99.9", Separation::WithinNoise { bar: 1.5, runs: 2 })
                ],
                words
            ),
            "p50: tachylog slower; p99.9: not separable: within 1.5× (two runs)"
        );
    }

    #[test]
    fn chance_of_disjoint_ranges_by_luck() {
        assert_eq!(chance_of_disjoint(1), 1.0);
        // 2 of the 20 orders of 3 + 3 runs; 2 of 252 for 5 + 5.
        assert!((chance_of_disjoint(3) - 0.1).abs() < 1e-12);
        assert!((chance_of_disjoint(5) - 2.0 / 252.0).abs() < 1e-12);
    }
}
