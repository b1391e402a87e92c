//! Percentiles of latency samples and medians across repeated runs.
//!
//! Percentiles use the nearest-rank definition on the sorted samples: the p-th percentile is
//! the smallest sample such that at least p % of the samples are less than or equal to it.
//! No interpolation, so every reported number is a latency that was actually observed.

use serde::{Deserialize, Serialize};

/// The latency summary every table row shows, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile (reports written before it was measured load it as 0).
    #[serde(default)]
    pub p9999: u64,
    /// Largest sample.
    pub max: u64,
}

impl Percentiles {
    /// Summarises `samples` (any order; sorted in place). Empty input gives all zeros.
    pub fn from_samples(samples: &mut [u64]) -> Self {
        samples.sort_unstable();
        Percentiles {
            p50: nearest_rank(samples, 50.0),
            p90: nearest_rank(samples, 90.0),
            p99: nearest_rank(samples, 99.0),
            p999: nearest_rank(samples, 99.9),
            p9999: nearest_rank(samples, 99.99),
            max: samples.last().copied().unwrap_or(0),
        }
    }

    /// Applies `f` to every field (used to convert ticks to ns).
    pub fn map(self, f: impl Fn(u64) -> u64) -> Self {
        Percentiles {
            p50: f(self.p50),
            p90: f(self.p90),
            p99: f(self.p99),
            p999: f(self.p999),
            p9999: f(self.p9999),
            max: f(self.max),
        }
    }

    /// Combines the summaries of repeated runs: the median of each percentile, and the
    /// largest max (a spike seen once is still a spike).
    pub fn combine(runs: &[Percentiles]) -> Self {
        let field =
            |get: fn(&Percentiles) -> u64| median_u64(&runs.iter().map(get).collect::<Vec<_>>());
        Percentiles {
            p50: field(|p| p.p50),
            p90: field(|p| p.p90),
            p99: field(|p| p.p99),
            p999: field(|p| p.p999),
            p9999: field(|p| p.p9999),
            max: runs.iter().map(|p| p.max).max().unwrap_or(0),
        }
    }
}

/// Nearest-rank percentile `pct` (0 < pct <= 100) of `sorted`; 0 for an empty slice.
pub fn nearest_rank(sorted: &[u64], pct: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // rank = ceil(pct/100 * n), 1-based. Computed in integers of per-mille-of-percent so that
    // 99.9 % of 1000 is exactly rank 999, not 999.0000000001 rounded up to 1000.
    let n = sorted.len() as u128;
    let scaled = (pct * 1000.0).round() as u128; // pct in thousandths of a percent
    let rank = (scaled * n).div_ceil(100_000).max(1);
    sorted[(rank - 1) as usize]
}

/// Median of `values` (mean of the two middle values for an even count, rounded down);
/// 0 for no values.
pub fn median_u64(values: &[u64]) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// Median of `values` as floats; 0.0 for no values.
pub fn median_f64(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_thousand() {
        // Shuffled 1..=1000: the p-th percentile of 1..=n is ceil(p/100 * n).
        let mut samples: Vec<u64> = (1..=1000).map(|i| (i * 7919) % 1000 + 1).collect();
        let p = Percentiles::from_samples(&mut samples);
        assert_eq!(
            p,
            Percentiles {
                p50: 500,
                p90: 900,
                p99: 990,
                p999: 999,
                p9999: 1000,
                max: 1000
            }
        );
    }

    #[test]
    fn a_single_spike_shows_only_in_the_tail() {
        // 9,999 calls of 10 ns and one of 5,000 ns: p99.9 is rank 9,990 -> still 10 ns;
        // only max sees the spike.
        let mut samples = vec![10u64; 9_999];
        samples.push(5_000);
        let p = Percentiles::from_samples(&mut samples);
        assert_eq!((p.p50, p.p99, p.p999, p.max), (10, 10, 10, 5_000));
        // With 11 spikes in 10,000 the 99.9th percentile is a spike.
        let mut samples = vec![10u64; 9_989];
        samples.extend([5_000; 11]);
        assert_eq!(Percentiles::from_samples(&mut samples).p999, 5_000);
    }

    #[test]
    fn small_and_empty_inputs() {
        assert_eq!(nearest_rank(&[], 50.0), 0);
        assert_eq!(nearest_rank(&[7], 99.9), 7);
        assert_eq!(nearest_rank(&[1, 2], 50.0), 1);
        assert_eq!(nearest_rank(&[1, 2], 50.1), 2);
        assert_eq!(Percentiles::from_samples(&mut []), Percentiles::default());
    }

    #[test]
    fn combining_runs_takes_medians_and_the_worst_max() {
        let run = |p50, max| Percentiles {
            p50,
            p90: p50 * 2,
            p99: p50 * 3,
            p999: p50 * 4,
            p9999: p50 * 5,
            max,
        };
        let c = Percentiles::combine(&[run(10, 100), run(30, 9_000), run(20, 200)]);
        assert_eq!(c, run(20, 9_000));
        assert_eq!(median_u64(&[4, 1, 3, 2]), 2);
        assert_eq!(median_f64(&[0.5, 0.25, 1.0]), 0.5);
    }
}
