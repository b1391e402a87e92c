//! How far one suite's figures can be trusted to rank two loggers: each figure's spread over
//! the runs it comes from, and whether tachylog's and another logger's spreads are apart.
//!
//! The rule is deliberately simple, so a reader can check it by eye in the table: two figures
//! are told apart only when the min–max ranges of their runs do not overlap. One run has no
//! range, so a figure from one run is never ranked against another: on a shared or virtual
//! machine a second run of the same code can differ by more than the gap between two loggers.
//! Disjoint ranges can still happen by chance ([`chance_of_disjoint`]); more runs make that
//! rarer, which the report's header says in numbers.

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Separation {
    /// The ranges do not overlap; `tachylog_better` says which side is ahead.
    Apart {
        /// tachylog's range is on the better side.
        tachylog_better: bool,
    },
    /// The ranges overlap: the runs cannot rank the two.
    Overlap,
    /// One side comes from a single run: no range to compare.
    OneRun,
}

/// Compares tachylog's spread with another logger's.
pub fn separate(tachylog: Spread, other: Spread, better: Better) -> Separation {
    if tachylog.runs < 2 || other.runs < 2 {
        return Separation::OneRun;
    }
    let tachylog_lower = tachylog.max < other.min;
    let tachylog_higher = tachylog.min > other.max;
    match (tachylog_lower, tachylog_higher) {
        (false, false) => Separation::Overlap,
        _ => Separation::Apart {
            tachylog_better: tachylog_lower == (better == Better::Lower),
        },
    }
}

/// The words a table uses for tachylog being ahead or behind: `("faster", "slower")`.
pub type Words = (&'static str, &'static str);

/// The table cell for one or more compared figures, e.g. `tachylog faster`,
/// `not separable: spreads overlap`, or `p50: tachylog faster; p99.9: not separable: spreads
/// overlap`. `parts` holds (figure name, separation); the name is left out when every figure
/// says the same.
pub fn verdict(parts: &[(&str, Separation)], words: Words) -> String {
    let say = |s: Separation| match s {
        Separation::Apart {
            tachylog_better: true,
        } => format!("tachylog {}", words.0),
        Separation::Apart {
            tachylog_better: false,
        } => format!("tachylog {}", words.1),
        Separation::Overlap => "not separable: spreads overlap".to_string(),
        Separation::OneRun => "not separable: one run".to_string(),
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

    #[test]
    fn only_disjoint_ranges_of_several_runs_are_ranked() {
        let fast = spread(&[40.0, 40.0, 50.0]);
        let slow = spread(&[60.0, 70.0, 80.0]);
        let near = spread(&[50.0, 60.0, 60.0]);
        assert_eq!(
            separate(fast, slow, Better::Lower),
            Separation::Apart {
                tachylog_better: true
            }
        );
        assert_eq!(
            separate(slow, fast, Better::Lower),
            Separation::Apart {
                tachylog_better: false
            }
        );
        // For a rate, the higher range is the better one.
        assert_eq!(
            separate(slow, fast, Better::Higher),
            Separation::Apart {
                tachylog_better: true
            }
        );
        // 50 is in both ranges.
        assert_eq!(separate(fast, near, Better::Lower), Separation::Overlap);
        // Ten times apart, but one run each: no range, no ranking.
        assert_eq!(
            separate(spread(&[10.0]), spread(&[100.0]), Better::Lower),
            Separation::OneRun
        );
    }

    #[test]
    fn the_verdict_names_figures_only_when_they_disagree() {
        let faster = Separation::Apart {
            tachylog_better: true,
        };
        let words = ("faster", "slower");
        assert_eq!(
            verdict(&[("p50", faster), ("p99.9", faster)], words),
            "tachylog faster"
        );
        assert_eq!(
            verdict(&[("p50", faster), ("p99.9", Separation::Overlap)], words),
            "p50: tachylog faster; p99.9: not separable: spreads overlap"
        );
        assert_eq!(
            verdict(&[("total", Separation::OneRun)], words),
            "not separable: one run"
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
