//! Runs the whole harness at `--smoke` scale (every logger × every workload, tiny counts, a
//! process each) into a scratch directory, and checks what the parent verified: every run
//! succeeded with every line on disk, every logger took part, and the pairs a logger cannot
//! express are listed as not run rather than dropped, and the default report has no internal
//! targets in it. No timing is asserted.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn every_logger_leaves_every_line_at_smoke_scale() {
    let out = std::env::temp_dir().join(format!("tachylog-bench-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_tachylog-bench"))
        .args(["--smoke", "--out"])
        .arg(&out)
        .output()
        .expect("run tachylog-bench");
    assert!(
        run.status.success(),
        "the smoke suite failed ({}):\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("latest.json")).unwrap()).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert!(runs.len() > 100, "only {} runs", runs.len());
    for r in runs {
        let v = &r["verification"];
        assert!(r["failure"].is_null(), "{r}");
        assert_eq!(v["marked_lines"], v["expected"], "{r}");
        assert_eq!(v["trailing_bytes"], 0, "{r}");
    }
    let mut loggers: Vec<&str> = runs.iter().filter_map(|r| r["logger"].as_str()).collect();
    loggers.sort_unstable();
    loggers.dedup();
    assert_eq!(
        loggers,
        [
            "bufwriter",
            "fast_log",
            "flexi_logger",
            "ftlog",
            "inqjet",
            "log4rs",
            "mutex_file",
            "nolog",
            "slog",
            "spdlog_rs",
            "tachylog",
            "tachylog_otlp",
            "tachylog_otlp_durable",
            "tachylog_scoped",
            "tachylog_spin",
            "tachylog_spool",
            "tachylog_tracing",
            "ticklog",
            "tracing_appender"
        ]
    );
    // Quill's harness has no precision in its record, so every logger runs it.
    for logger in ["ticklog", "tachylog_spin"] {
        assert!(
            runs.iter()
                .any(|r| r["logger"] == logger && r["workload"] == "batch20_t4"),
            "{logger} did not run batch20_t4"
        );
    }
    let not_run = json["not_run"].as_array().unwrap();
    assert!(
        not_run
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("ticklog / latency:")),
        "{not_run:?}"
    );
    let charts = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p: &PathBuf| p.extension().is_some_and(|e| e == "svg"))
        .count();
    assert!(charts >= 5, "{charts} charts");
    // The default report sets tachylog beside its peers; the internal targets need --targets.
    let md = std::fs::read_to_string(out.join("latest.md")).unwrap();
    assert!(md.contains("## How to read this report"), "{md}");
    // One run each: rows are held to the measured single-run bars, never to ranges.
    assert!(
        md.contains("With one run, two figures are ranked only when"),
        "{md}"
    );
    assert!(
        md.lines()
            .filter(|l| l.starts_with('|'))
            .all(|l| !l.contains("spreads overlap")),
        "{md}"
    );
    assert!(!md.contains("MET") && !md.contains("MISSED"), "{md}");
    std::fs::remove_dir_all(&out).unwrap();
}
