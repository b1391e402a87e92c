//! The binary log beside the text lines of the same run: records/s end to end, bytes per
//! record on disk, the back end alone, and how fast the log reads back as text. Each pair is
//! tachylog against itself, same calls and ring, so the ratio is the binary format's doing.

use std::fmt::Write as _;

use super::markdown::group_digits;
use super::{Row, Summary};

/// (what, text workload, binary workload, goal on the ratio binary ÷ text).
const PAIRS: [(&str, &str, &str, &str); 4] = [
    (
        "one thread (`throughput`)",
        "throughput",
        "throughput_binary",
        "≥ 2× and ≥ 20 M/s",
    ),
    (
        "a web back end's mix (`throughput_mix`)",
        "throughput_mix",
        "throughput_mix_binary",
        "≥ 2× and ≥ 20 M/s",
    ),
    (
        "a user's own types (`throughput_user`)",
        "throughput_user",
        "throughput_user_binary",
        "–",
    ),
    (
        "two threads (`scaling_t2`)",
        "scaling_t2",
        "scaling_t2_binary",
        "–",
    ),
];

/// A throughput row's records/s and bytes per record, if it ran.
pub(super) fn rate_and_size(rows: &[Row], workload: &str) -> Option<(f64, f64)> {
    rows.iter().find_map(|r| match r.summary {
        Summary::Throughput {
            lines,
            total_s,
            bytes_per_line,
            ..
        } if r.logger == "tachylog" && r.workload == workload && total_s > 0.0 => {
            Some((lines as f64 / total_s, bytes_per_line))
        }
        _ => None,
    })
}

/// A back-end row's drain time per record, ns.
pub(super) fn backend_ns(rows: &[Row], workload: &str) -> Option<f64> {
    rows.iter().find_map(|r| match r.summary {
        Summary::Backend {
            records, drain_s, ..
        } if r.logger == "tachylog" && r.workload == workload => {
            Some(drain_s * 1e9 / records.max(1) as f64)
        }
        _ => None,
    })
}

/// The section, or nothing when no binary row ran.
pub(super) fn section(rows: &[Row]) -> String {
    let mut body = String::new();
    for (what, text, binary, goal) in PAIRS {
        let (Some((text_rate, text_size)), Some((bin_rate, bin_size))) =
            (rate_and_size(rows, text), rate_and_size(rows, binary))
        else {
            continue;
        };
        let _ = writeln!(
            body,
            "| {what}: records/s | {} | {} | {:.2}× | {goal} |",
            group_digits(text_rate.round() as u64),
            group_digits(bin_rate.round() as u64),
            bin_rate / text_rate
        );
        let _ = writeln!(
            body,
            "| {what}: bytes/record on disk | {text_size:.1} | {bin_size:.1} | {:.1} % | {} |",
            bin_size * 100.0 / text_size.max(1e-9),
            match text {
                "throughput" => "≤ 25 %",
                "throughput_mix" => "≤ 15 %",
                _ => "–",
            }
        );
    }
    if let (Some(text), Some(binary)) = (
        backend_ns(rows, "backend_iteration"),
        backend_ns(rows, "backend_iteration_binary"),
    ) {
        let _ = writeln!(
            body,
            "| back end alone (`backend_iteration`): ns/record | {text:.1} | {binary:.1} | {:.2}× | – |",
            binary / text
        );
    }
    for workload in ["cat_binary", "cat_mix_binary"] {
        if let Some((rate, _)) = rate_and_size(rows, workload) {
            let _ = writeln!(
                body,
                "| read back as text (`{workload}`): records/s | – | {} | – | ≥ 10 M/s |",
                group_digits(rate.round() as u64)
            );
        }
    }
    if body.is_empty() {
        return body;
    }
    format!(
        "## Binary log beside text lines (tachylog, same run)\n\n\
         Same calls, same ring; the back end writes the records' values instead of formatting \
         lines. binary ÷ text: above 1× the binary log is faster (records/s) or slower \
         (ns/record), below 100 % it is smaller.\n\n\
         | figure | text | binary | binary ÷ text | goal |\n|---|--:|--:|--:|---|\n{body}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throughput(workload: &str, lines: u64, total_s: f64, bytes_per_line: f64) -> Row {
        Row {
            logger: "tachylog".into(),
            workload: workload.into(),
            summary: Summary::Throughput {
                lines,
                bytes_per_line,
                loop_s: total_s,
                total_s,
                bytes: (lines as f64 * bytes_per_line) as u64,
                cpu_s: None,
            },
            peak_rss_kib: None,
            measurements: Vec::new(),
        }
    }

    #[test]
    fn pairs_binary_rows_with_the_text_rows_of_the_run() {
        let rows = [
            throughput("throughput", 1_000_000, 0.1, 140.0),
            throughput("throughput_binary", 1_000_000, 0.04, 21.0),
            throughput("cat_binary", 1_000_000, 0.08, 21.0),
        ];
        let table = section(&rows);
        assert!(
            table.contains(
                "| one thread (`throughput`): records/s | 10,000,000 | 25,000,000 | 2.50× |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| 140.0 | 21.0 | 15.0 % | ≤ 25 % |"),
            "{table}"
        );
        assert!(
            table.contains("`cat_binary`): records/s | – | 12,500,000 |"),
            "{table}"
        );
        assert!(!table.contains("scaling_t2"), "{table}");
    }

    #[test]
    fn no_binary_row_no_section() {
        assert_eq!(section(&[throughput("throughput", 10, 1.0, 1.0)]), "");
    }
}
