//! The bar a figure from a single run must clear before the report ranks two loggers on it:
//! for each family of figures, a round number above the largest max/min ratio that repeated
//! runs of one logger on one workload showed on this machine.
//!
//! One run has no spread of its own, but repeated runs of the same code show how far a figure
//! moves from one run to the next here. Two figures further apart than a logger's figure moved
//! on its own are told apart by one run; closer ones are not, and the report says so. A
//! quieter machine moves less, so the bars are cautious there; a busier one may move more,
//! which is why the report's header says how busy the machine was.
//!
//! A few loggers' figures came out in two modes, one run fast and the next a hundred times
//! slower (their back end keeping up or not, depending on what else the machine was doing).
//! Holding every logger to their bar would rank nothing, so such a figure gets a bar of its
//! own ([`Family::wider`]) and the rest keep the family's.
//!
//! Measured with five runs of every logger on every workload of the quick suite, on a 2-CPU
//! virtual machine shared with other builds (other processes took 21–50 % of the CPU time):
//!
//! ```text
//! cargo run --release -p tachylog-bench -- --runs 5
//! ```
//!
//! (`--only` splits it into parts, e.g. `--runs 5 --only tachylog`). Each table then shows a
//! figure as `median (min–max)`; the ratio quoted for each bar is the largest max / min of one
//! row.

use super::markdown::group_digits;

/// A family of figures the report ranks loggers on, and the bar one run must clear.
#[derive(Debug)]
pub struct Family {
    /// What the report calls the family in its "How to read" section.
    pub name: &'static str,
    /// The bar: one run ranks two figures only when one is at least this many times the other.
    pub bar: f64,
    /// Loggers whose figure of this family moved further than `bar` between runs, each with a
    /// bar above its own move; a pair is held to the wider bar of its two loggers.
    pub wider: &'static [(&'static str, f64)],
}

impl Family {
    /// The bar for tachylog against `logger`.
    pub fn bar_for(&self, logger: &str) -> f64 {
        self.wider
            .iter()
            .filter(|(name, _)| *name == logger || *name == super::compare::TACHYLOG)
            .fold(self.bar, |bar, (_, wider)| bar.max(*wider))
    }
}

/// Per-call p50. Largest move: 4.6× (fast_log, `latency_str100`: 130–601 ns). slog's came
/// out in two modes, 189× apart (`latency_fields`: 100 ns in three runs, 6,349 and 18,928 ns
/// in the other two).
pub const P50: Family = Family {
    name: "p50",
    bar: 6.0,
    wider: &[("slog", 250.0)],
};

/// Per-call p99.9. Largest move: 116× (fast_log, `latency_str100`: 310–35,804 ns). inqjet's
/// came out in two modes, 6,984× apart (`latency_static`: 110–341 ns in three runs,
/// 735,881 and 768,186 ns in the other two).
pub const P999: Family = Family {
    name: "p99.9",
    bar: 200.0,
    wider: &[("inqjet", 10_000.0)],
};

/// Whole-run time (`total s` of the throughput and scaling tables). Largest move: 6.3×
/// (ticklog, `seed_2x100k`: 0.039–0.245 s); tachylog's own, 3.4× (`seed_1m`).
pub const WHOLE_RUN: Family = Family {
    name: "whole-run times",
    bar: 8.0,
    wider: &[],
};

/// Server requests/s. Largest move: 2.1× (tracing_appender, `server_keepalive`:
/// 40,819–85,422).
pub const SERVER_REQUESTS: Family = Family {
    name: "server requests/s",
    bar: 2.5,
    wider: &[],
};

/// Paced process CPU per second of window. Largest move: 1.8× (tachylog, `paced_1k`:
/// 10–18 ms/s).
pub const PACED_CPU: Family = Family {
    name: "paced CPU",
    bar: 2.5,
    wider: &[],
};

/// Peak RSS with N threads alive. Largest move: 1.4× (flexi_logger, `threads_1000`:
/// 30.2–42.6 MiB).
pub const THREADS_RSS: Family = Family {
    name: "peak RSS with N threads",
    bar: 2.0,
    wider: &[],
};

/// Every family, in table order.
const FAMILIES: [&Family; 6] = [
    &P50,
    &P999,
    &WHOLE_RUN,
    &SERVER_REQUESTS,
    &PACED_CPU,
    &THREADS_RSS,
];

/// Where the bars come from, in one sentence for the report.
pub const PROVENANCE: &str = "The bars were measured on a 2-CPU virtual machine shared with \
     other builds, with five runs of every logger on every quick workload \
     (`tachylog-bench/src/report/noise.rs` has the command); another machine may move less or \
     more.";

/// A bar as the report prints it: `1.5×`, `6×`, `10,000×`.
pub fn times(bar: f64) -> String {
    if bar >= 1_000.0 && bar.fract() == 0.0 {
        format!("{}×", group_digits(bar as u64))
    } else {
        format!("{bar}×")
    }
}

/// The bars in words: `6× for p50 (slog's: 250×), 200× for p99.9 (inqjet's: 10,000×), ...`.
pub fn describe_bars() -> String {
    FAMILIES
        .iter()
        .map(|f| {
            let wider: Vec<String> = f
                .wider
                .iter()
                .map(|(logger, bar)| format!("{logger}'s: {}", times(*bar)))
                .collect();
            if wider.is_empty() {
                format!("{} for {}", times(f.bar), f.name)
            } else {
                format!("{} for {} ({})", times(f.bar), f.name, wider.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_read_as_round_factors_and_wider_ones_are_wider() {
        let words = describe_bars();
        assert!(
            words.starts_with("6× for p50 (slog's: 250×), 200× for p99.9 (inqjet's: 10,000×), "),
            "{words}"
        );
        for f in FAMILIES {
            // A bar of 1× or less would rank figures that repeated runs cannot tell apart.
            assert!(f.bar > 1.0 && (f.bar * 2.0).fract() == 0.0, "{f:?}");
            for (_, wider) in f.wider {
                assert!(*wider > f.bar, "{f:?}");
            }
        }
    }

    #[test]
    fn a_pair_is_held_to_the_wider_bar_of_its_loggers() {
        assert_eq!(P50.bar_for("mutex_file"), 6.0);
        assert_eq!(P50.bar_for("slog"), 250.0);
        assert_eq!(P999.bar_for("slog"), 200.0);
        let family = Family {
            name: "test",
            bar: 2.0,
            wider: &[("tachylog", 3.0), ("peer", 5.0)],
        };
        assert_eq!(family.bar_for("other"), 3.0);
        assert_eq!(family.bar_for("peer"), 5.0);
        assert_eq!(times(1.5), "1.5×");
        assert_eq!(times(6.0), "6×");
    }
}
