//! The compile-cost table, tachylog's ratios to the other crates, and tachylog's targets
//! (`--targets`), rendered from measured figures.

use std::fmt::Write as _;

use super::generate::Logger;

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub logger: Logger,
    pub release_rebuild_s: f64,
    pub debug_rebuild_s: f64,
    pub release_bytes: u64,
    pub debug_bytes: u64,
}

pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The table: one row per crate, each figure at the precision its noise allows.
pub fn render_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| macro | release rebuild | debug rebuild | release binary | debug binary |\n\
         |---|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| `{}::info!` | {:.1} s | {:.2} s | {:.2} MB | {:.1} MB |",
            r.logger.name(),
            r.release_rebuild_s,
            r.debug_rebuild_s,
            mb(r.release_bytes),
            mb(r.debug_bytes),
        );
    }
    s
}

/// tachylog's figures as a ratio of each other crate's (above 1× tachylog's is larger or
/// slower); empty without tachylog's row.
pub fn ratio_lines(rows: &[Row]) -> Vec<String> {
    let Some(ours) = rows.iter().find(|r| r.logger == Logger::Tachylog) else {
        return Vec::new();
    };
    rows.iter()
        .filter(|r| r.logger != Logger::Tachylog)
        .map(|other| {
            format!(
                "tachylog ÷ {}: release rebuild {:.2}×, debug rebuild {:.2}×, release binary \
                 {:.2}×, debug binary {:.2}×",
                other.logger.name(),
                ours.release_rebuild_s / other.release_rebuild_s,
                ours.debug_rebuild_s / other.debug_rebuild_s,
                ours.release_bytes as f64 / other.release_bytes as f64,
                ours.debug_bytes as f64 / other.debug_bytes as f64,
            )
        })
        .collect()
}

/// tachylog's targets against tracing (`--targets`); empty unless both were measured.
pub fn target_lines(rows: &[Row]) -> Vec<String> {
    let find = |l: Logger| rows.iter().find(|r| r.logger == l);
    let (Some(ours), Some(tracing)) = (find(Logger::Tachylog), find(Logger::Tracing)) else {
        return Vec::new();
    };
    let verdict = |ratio: f64, target: f64| if ratio <= target { "MET" } else { "MISSED" };
    let seconds = |name: &str, ours: f64, theirs: f64, target: f64| {
        let ratio = ours / theirs;
        format!(
            "{name}: tachylog {ours:.2} s vs tracing {theirs:.2} s (ratio {ratio:.2}) {} \
             (target ≤ {target:.1} ×)",
            verdict(ratio, target),
        )
    };
    let binary = ours.debug_bytes as f64 / tracing.debug_bytes as f64;
    vec![
        seconds(
            "release rebuild",
            ours.release_rebuild_s,
            tracing.release_rebuild_s,
            1.0,
        ),
        seconds(
            "debug rebuild",
            ours.debug_rebuild_s,
            tracing.debug_rebuild_s,
            1.5,
        ),
        format!(
            "debug binary: tachylog {:.1} MB vs tracing {:.1} MB (ratio {binary:.2}) {} (target ≤ 1.5 ×)",
            mb(ours.debug_bytes),
            mb(tracing.debug_bytes),
            verdict(binary, 1.5),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        let row = |logger, release_rebuild_s, debug_rebuild_s, release_bytes, debug_bytes| Row {
            logger,
            release_rebuild_s,
            debug_rebuild_s,
            release_bytes,
            debug_bytes,
        };
        vec![
            row(Logger::Log, 3.4, 0.27, 750_000, 5_200_000),
            row(Logger::Tracing, 11.6, 1.5, 1_310_000, 8_300_000),
            row(Logger::Tachylog, 76.6, 3.95, 2_290_000, 41_000_000),
        ]
    }

    #[test]
    fn table_renders_every_crate_at_its_precision() {
        assert_eq!(
            render_table(&rows()),
            "| macro | release rebuild | debug rebuild | release binary | debug binary |\n\
             |---|--:|--:|--:|--:|\n\
             | `log::info!` | 3.4 s | 0.27 s | 0.75 MB | 5.2 MB |\n\
             | `tracing::info!` | 11.6 s | 1.50 s | 1.31 MB | 8.3 MB |\n\
             | `tachylog::info!` | 76.6 s | 3.95 s | 2.29 MB | 41.0 MB |\n"
        );
    }

    #[test]
    fn targets_compare_tachylog_with_tracing() {
        let lines = target_lines(&rows());
        assert_eq!(
            lines,
            [
                "release rebuild: tachylog 76.60 s vs tracing 11.60 s (ratio 6.60) MISSED (target ≤ 1.0 ×)",
                "debug rebuild: tachylog 3.95 s vs tracing 1.50 s (ratio 2.63) MISSED (target ≤ 1.5 ×)",
                "debug binary: tachylog 41.0 MB vs tracing 8.3 MB (ratio 4.94) MISSED (target ≤ 1.5 ×)",
            ]
        );
        let mut met = rows();
        met[2].release_rebuild_s = 11.6;
        met[2].debug_rebuild_s = 2.25;
        met[2].debug_bytes = 12_450_000;
        let lines = target_lines(&met);
        assert!(lines[0].contains("(ratio 1.00) MET"), "{}", lines[0]);
        assert!(lines[1].contains("(ratio 1.50) MET"), "{}", lines[1]);
        assert!(lines[2].contains("(ratio 1.50) MET"), "{}", lines[2]);
        // Without tracing there is nothing to compare against.
        assert!(target_lines(&rows()[2..]).is_empty());
    }

    #[test]
    fn ratios_set_tachylog_against_each_other_crate() {
        let lines = ratio_lines(&rows());
        assert_eq!(
            lines,
            [
                "tachylog ÷ log: release rebuild 22.53×, debug rebuild 14.63×, release binary \
                 3.05×, debug binary 7.88×",
                "tachylog ÷ tracing: release rebuild 6.60×, debug rebuild 2.63×, release binary \
                 1.75×, debug binary 4.94×",
            ]
        );
        assert!(lines
            .iter()
            .all(|l| !l.contains("MET") && !l.contains("MISSED")));
        assert!(ratio_lines(&rows()[..2]).is_empty());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
