//! The targets at moderate load: what logging adds to a process that logs at 1k, 10k and 50k
//! records/s (`paced_*`, against `nolog` and tracing-appender), and the memory of a thousand
//! threads that each log a little (`threads_1000`).

use super::{not_measured, Verdict};
use crate::report::load::{self, added_cpu_ms_per_s, added_switches_per_s, PACED_PEER, REFERENCE};
use crate::report::Row;

/// At 1k records/s, the CPU time logging may add per second, against `nolog`: 0.2 % of a core.
const PACED_1K_CPU_MS_PER_S: f64 = 2.0;

/// At 1k records/s, the context switches logging may add per second, against `nolog`: a back
/// end that wakes for every burst would add a thousand.
const PACED_1K_SWITCHES_PER_S: f64 = 50.0;

/// At 10k and 50k records/s, tachylog's added CPU against tracing-appender's, which formats
/// on the caller and writes from a thread of its own.
const PACED_PEER_FACTOR: f64 = 0.25;

/// With 1,000 threads alive that each logged 100 records, the whole process's peak RSS.
const THREADS_1000_RSS_MIB: f64 = 64.0;

/// The costs at moderate rates: what tachylog adds at 1k records/s, and its added CPU against
/// tracing-appender's at 10k and 50k.
pub(super) fn paced(rows: &[Row]) -> Vec<Verdict> {
    let mut out = Vec::new();
    let target = format!(
        "1,000 records/s (`paced_1k`): logging adds ≤ {PACED_1K_CPU_MS_PER_S:.0} ms of CPU \
         per second (0.2 % of a core), against no logging"
    );
    let peer = added_cpu_ms_per_s(rows, PACED_PEER, "paced_1k").map_or(String::new(), |p| {
        format!("; {PACED_PEER} adds {p:.2} ms/s")
    });
    out.push(match added_cpu_ms_per_s(rows, "tachylog", "paced_1k") {
        Some(ms) => Verdict {
            target,
            ours: format!("{ms:.2} ms/s"),
            best_peer: format!("target: {PACED_1K_CPU_MS_PER_S:.0} ms/s{peer}"),
            met: Some(ms <= PACED_1K_CPU_MS_PER_S),
        },
        None => not_measured(target),
    });
    let target = format!(
        "1,000 records/s (`paced_1k`): logging adds ≤ {PACED_1K_SWITCHES_PER_S:.0} context \
         switches per second, against no logging"
    );
    let peer = added_switches_per_s(rows, PACED_PEER, "paced_1k")
        .map_or(String::new(), |p| format!("; {PACED_PEER} adds {p:.0}/s"));
    out.push(match added_switches_per_s(rows, "tachylog", "paced_1k") {
        Some(n) => Verdict {
            target,
            ours: format!("{n:.0}/s"),
            best_peer: format!("target: {PACED_1K_SWITCHES_PER_S:.0}/s{peer}"),
            met: Some(n <= PACED_1K_SWITCHES_PER_S),
        },
        None => not_measured(target),
    });
    for (workload, rate) in [("paced_10k", "10,000"), ("paced_50k", "50,000")] {
        let target = format!(
            "{rate} records/s (`{workload}`): the CPU logging adds ≤ {PACED_PEER_FACTOR} × \
             what {PACED_PEER} adds"
        );
        let ours = added_cpu_ms_per_s(rows, "tachylog", workload);
        let theirs = added_cpu_ms_per_s(rows, PACED_PEER, workload);
        out.push(match (ours, theirs) {
            (Some(o), Some(t)) => Verdict {
                target,
                ours: format!("{o:.2} ms/s ({})", ratio(o, t)),
                best_peer: format!("{t:.2} ms/s ({PACED_PEER})"),
                met: Some(t > 0.0 && o <= PACED_PEER_FACTOR * t),
            },
            _ => not_measured(target),
        });
    }
    out
}

/// `o / t` as `0.25×`, or `–` when `t` is not positive (the peer added nothing measurable).
fn ratio(o: f64, t: f64) -> String {
    if t > 0.0 {
        format!("{:.2}×", o / t)
    } else {
        "–".into()
    }
}

/// A thousand threads that log a little cost a few MiB, not a ring each.
pub(super) fn threads_rss(rows: &[Row]) -> Verdict {
    let target = format!(
        "1,000 threads alive at once, each logging 100 records (`threads_1000`): peak RSS of \
         the whole process ≤ {THREADS_1000_RSS_MIB:.0} MiB"
    );
    let mib = |logger| {
        load::threads(rows, logger, "threads_1000")
            .and_then(|t| t.peak_rss_kib)
            .map(|k| k as f64 / 1024.0)
    };
    let others: Vec<String> = [PACED_PEER, REFERENCE]
        .into_iter()
        .filter_map(|l| mib(l).map(|m| format!("{m:.1} MiB ({l})")))
        .collect();
    match mib("tachylog") {
        Some(m) => Verdict {
            target,
            ours: format!("{m:.1} MiB"),
            best_peer: if others.is_empty() {
                format!("target: {THREADS_1000_RSS_MIB:.0} MiB")
            } else {
                others.join("; ")
            },
            met: Some(m <= THREADS_1000_RSS_MIB),
        },
        None => not_measured(target),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::{Paced, Threads};
    use crate::report::Summary;

    fn paced_row(logger: &str, workload: &str, cpu_s: f64, switches: f64) -> Row {
        Row {
            logger: logger.into(),
            workload: workload.into(),
            summary: Summary::Paced(Paced {
                rate: 1_000,
                records: 3_000,
                verified: 3_000,
                window_s: 3.0,
                wall_s: 3.0,
                cpu_s,
                switches,
                voluntary_switches: switches,
                late_bursts: 0,
                backend_wakeups: None,
                backend_cpu_s: None,
            }),
            peak_rss_kib: None,
            measurements: Vec::new(),
        }
    }

    #[test]
    fn paced_targets_count_what_logging_added_to_nolog() {
        let rows = [
            paced_row("nolog", "paced_1k", 0.030, 3_000.0),
            // +1.9 ms/s and +60 switches/s.
            paced_row("tachylog", "paced_1k", 0.0357, 3_180.0),
            paced_row("nolog", "paced_10k", 0.030, 3_000.0),
            // +9.7 ms/s against the peer's +40: 0.24×, met; at 50k +11 against +40, missed.
            paced_row("tachylog", "paced_10k", 0.059, 3_000.0),
            paced_row(PACED_PEER, "paced_10k", 0.150, 3_000.0),
            paced_row("nolog", "paced_50k", 0.030, 3_000.0),
            paced_row("tachylog", "paced_50k", 0.063, 3_000.0),
            paced_row(PACED_PEER, "paced_50k", 0.150, 3_000.0),
        ];
        let met: Vec<Option<bool>> = paced(&rows).iter().map(|v| v.met).collect();
        assert_eq!(met, [Some(true), Some(false), Some(true), Some(false)]);
        // Without nolog's row nothing is measured: a logger's own CPU is not what it added.
        let without_nolog: Vec<Row> = rows
            .iter()
            .filter(|r| r.logger != REFERENCE)
            .cloned()
            .collect();
        assert!(paced(&without_nolog).iter().all(|v| v.met.is_none()));
    }

    #[test]
    fn a_thousand_threads_may_hold_64_mib() {
        let row = |logger: &str, mib: u64| Row {
            logger: logger.into(),
            workload: "threads_1000".into(),
            summary: Summary::Threads(Threads {
                threads: 1_000,
                records_per_thread: 100,
                verified: 100_000,
                peak_rss_kib: Some(mib * 1024),
                wall_s: 0.5,
            }),
            peak_rss_kib: Some(mib * 1024),
            measurements: Vec::new(),
        };
        assert_eq!(threads_rss(&[row("tachylog", 64)]).met, Some(true));
        let v = threads_rss(&[row("tachylog", 1_017), row(PACED_PEER, 21)]);
        assert_eq!(v.met, Some(false));
        assert!(v.best_peer.contains("21.0 MiB (tracing_appender)"), "{v:?}");
        assert_eq!(threads_rss(&[row(PACED_PEER, 21)]).met, None);
    }
}
