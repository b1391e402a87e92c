//! The parent side: runs every selected (logger, workload) in a fresh child process (the
//! binary re-executed with `--child`), reads its result line, counts the lines it left on
//! disk, deletes them, and finally prints and saves the report.
//!
//! With several runs per pair (`--full`, `--runs N`) the order is run-major — every pair once, then
//! every pair again — so slow drift of the machine spreads over all loggers alike.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crate::build_info;
use crate::civil_time::UtcSeconds;
use crate::cli::Suite;
use crate::error::BenchError;
use crate::loggers::Entry;
use crate::machine::{self, CpuTimes, Machine};
use crate::report::{
    group_digits, ChildResult, LoggerInfo, Measurement, Report, RunRecord, RESULT_PREFIX,
};
use crate::verify;
use crate::workloads::{Scale, Workload};

/// A child that has not finished after this long is killed and its run failed.
const CHILD_TIMEOUT: Duration = Duration::from_secs(300);

/// `<workspace>/target/bench-report`, found from this crate's manifest directory.
pub fn report_dir() -> PathBuf {
    build_info::workspace_dir()
        .join("target")
        .join("bench-report")
}

/// Runs the suite; returns whether every run passed.
pub fn run(suite: &Suite, argv: &[String]) -> Result<bool, BenchError> {
    let now = SystemTime::now();
    let date = UtcSeconds(now).to_string();
    let stamp: String = date.chars().filter(char::is_ascii_digit).collect();
    let stamp = format!("{}-{}", &stamp[..8], &stamp[8..]);
    let out_dir = suite.out.clone().unwrap_or_else(report_dir);
    let tmp_root = out_dir.join("tmp");
    let exe = std::env::current_exe().map_err(|e| BenchError::io("<current_exe>", e))?;

    let load_before = machine::load_average();
    let cpu_before = CpuTimes::read();
    let runs = suite.runs;
    // Pairs that cannot run are listed in the report with the reason, never dropped silently.
    let mut pairs = Vec::new();
    let mut not_run = Vec::new();
    for &workload in &suite.workloads {
        for &logger in &suite.loggers {
            if !workload.runs_logger(logger.name) {
                continue;
            }
            match logger.cannot_run(workload) {
                Some(why) => not_run.push(format!("{} / {}: {why}", logger.name, workload.name())),
                None => pairs.push(Pair::of(workload, logger, &exe)),
            }
        }
    }
    let baseline = prepare_baseline(suite, &mut pairs, &mut not_run);
    let pair_runs = |pair: &Pair| pair.workload.runs(suite.scale, runs);
    let total: usize = pairs.iter().map(|p| pair_runs(p) as usize).sum();
    let rounds = pairs.iter().map(pair_runs).max().unwrap_or(runs);
    let mut records = Vec::with_capacity(total);
    eprintln!(
        "tachylog-bench: {total} runs ({} scale), each in its own process",
        suite.scale.name()
    );
    let suite_start = std::time::Instant::now();
    // Round by round, so that the runs of one pair are spread over the suite, interleaved
    // with the other loggers', rather than back to back.
    for run in 1..=rounds {
        for pair in in_run_order(&pairs, run)
            .into_iter()
            .filter(|p| run <= pair_runs(p))
        {
            let record = run_one(pair, &tmp_root, pair.workload.scale_in(suite.scale), run);
            eprintln!(
                "[{:>3}/{total}] {:<17} {:<16} run {run}: {}",
                records.len() + 1,
                pair.label,
                pair.workload.name(),
                progress(&record)
            );
            records.push(record);
        }
    }
    let suite_s = suite_start.elapsed().as_secs_f64();
    // Only removes the directory when every run's was deleted (failed runs keep theirs).
    let _ = std::fs::remove_dir(&tmp_root);

    let baseline_commit = baseline.as_ref().map(|b| b.commit.clone());
    let report = Report {
        machine: Machine::detect(),
        date,
        load_before,
        others_cpu_share: cpu_before
            .zip(CpuTimes::read())
            .map(|(before, after)| before.others_share(after)),
        command: shell_words(argv),
        via_cargo: std::env::var_os("CARGO").is_some(),
        rustc: build_info::RUSTC.to_string(),
        scale: suite.scale.name().to_string(),
        runs_per_pair: runs,
        debug_build: cfg!(debug_assertions),
        workloads: suite
            .workloads
            .iter()
            .map(|w| w.describe(w.scale_in(suite.scale)))
            .collect(),
        loggers: suite
            .loggers
            .iter()
            .map(|e| LoggerInfo {
                name: e.name.to_string(),
                crates: if e.crates.is_empty() {
                    "std".to_string()
                } else {
                    build_info::versions(e.crates)
                },
                config: e.config.to_string(),
            })
            .chain(baseline.map(|b| LoggerInfo {
                name: crate::baseline::LABEL.to_string(),
                crates: format!(
                    "tachylog at commit {}, its own bench binary built by this run from the \
                     repository's history",
                    b.commit
                ),
                config: "the `tachylog` entry of that commit".to_string(),
            }))
            .collect(),
        runs: records,
        not_run,
        suite_s,
        targets: suite.targets,
        baseline_commit,
    };
    println!("{}", report.markdown());
    let path = report.write(&out_dir, &stamp)?;
    eprintln!("report written to {}", path.display());

    let failures = report.failures();
    if !failures.is_empty() {
        eprintln!("\nFAILED: {} run(s) failed:", failures.len());
        for f in &failures {
            eprintln!(
                "  {} / {} run {}: {}",
                f.logger,
                f.workload,
                f.run,
                f.failure.as_deref().unwrap_or("")
            );
        }
    }
    Ok(failures.is_empty())
}

/// One (logger, workload) of the suite, and the binary whose child runs it.
struct Pair {
    workload: Workload,
    logger: &'static Entry,
    /// This binary, or the baseline commit's for [`crate::baseline::LABEL`].
    exe: PathBuf,
    /// The logger's name in the report.
    label: &'static str,
}

impl Pair {
    fn of(workload: Workload, logger: &'static Entry, exe: &Path) -> Pair {
        Pair {
            workload,
            logger,
            exe: exe.to_path_buf(),
            label: logger.name,
        }
    }
}

/// Builds the suite's baseline commit (if it has one and the suite runs the recorded
/// baseline's workloads with tachylog) and adds its runs right after tachylog's. A baseline
/// that cannot be built is listed among the runs not made, with the reason.
fn prepare_baseline(
    suite: &Suite,
    pairs: &mut Vec<Pair>,
    not_run: &mut Vec<String>,
) -> Option<crate::baseline::BaselineBinary> {
    let commit = suite.baseline.as_deref()?;
    let recorded = crate::report::targets::Baseline::recorded();
    let wanted = |p: &Pair| {
        p.label == "tachylog"
            && recorded
                .latency
                .iter()
                .any(|(w, _, _)| *w == p.workload.name())
    };
    if !pairs.iter().any(wanted) {
        return None;
    }
    let built = match crate::baseline::prepare(commit, &crate::baseline::cache_dir()) {
        Ok(built) => built,
        Err(why) => {
            eprintln!("tachylog-bench: no baseline run: {why}");
            not_run.push(format!("{} ({commit}): {why}", crate::baseline::LABEL));
            return None;
        }
    };
    let mut i = 0;
    while i < pairs.len() {
        if wanted(&pairs[i]) {
            let theirs = Pair {
                label: crate::baseline::LABEL,
                ..Pair::of(pairs[i].workload, pairs[i].logger, &built.exe)
            };
            pairs.insert(i + 1, theirs);
            i += 1;
        }
        i += 1;
    }
    Some(built)
}

/// The pairs in the order run `run` makes them: as listed, except that on even runs the
/// baseline goes before tachylog's run it is compared with, so that neither of the two always
/// follows the previous logger's run (and whatever the kernel is still doing about its files).
fn in_run_order(pairs: &[Pair], run: u32) -> Vec<&Pair> {
    let mut order: Vec<&Pair> = pairs.iter().collect();
    if run.is_multiple_of(2) {
        for i in 1..order.len() {
            if order[i].label == crate::baseline::LABEL
                && order[i - 1].workload == order[i].workload
            {
                order.swap(i - 1, i);
            }
        }
    }
    order
}

/// Runs one child and verifies its output; never returns an error, records it instead.
fn run_one(pair: &Pair, tmp_root: &Path, scale: Scale, run: u32) -> RunRecord {
    let Pair {
        workload,
        logger,
        ref exe,
        label,
    } = *pair;
    let mut record = RunRecord {
        logger: label.to_string(),
        workload: workload.name().to_string(),
        run,
        result: None,
        verification: None,
        failure: None,
        peak_rss_kib: None,
    };
    let dir = tmp_root.join(format!("{label}-{}-{run}", workload.name()));
    match run_and_verify(exe, &dir, logger, workload, scale, run, &mut record) {
        Ok(()) => {
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                record.failure = Some(BenchError::io(&dir, e).to_string());
            }
        }
        Err(e) => {
            record.failure = Some(format!("{e} (output kept in {})", dir.display()));
        }
    }
    record
}

fn run_and_verify(
    exe: &Path,
    dir: &Path,
    logger: &Entry,
    workload: Workload,
    scale: Scale,
    run: u32,
    record: &mut RunRecord,
) -> Result<(), BenchError> {
    let fail = |message: String| BenchError::Child {
        logger: logger.name.to_string(),
        workload: workload.name().to_string(),
        run,
        message,
    };
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;

    let (stdout, rss) = run_child(exe, dir, logger, workload, scale).map_err(fail)?;
    record.peak_rss_kib = rss;
    let result = parse_result(&stdout).ok_or_else(|| {
        fail(format!(
            "no `{}` line on stdout; stdout was: {:?}",
            RESULT_PREFIX.trim(),
            truncate(&stdout, 500)
        ))
    })??;
    let expected = workload.expected_lines(scale);
    if result.logger != logger.name
        || result.workload != workload.name()
        || result.lines_logged != expected
    {
        return Err(fail(format!(
            "result is for {} / {} with {} lines, expected {} / {} with {expected}",
            result.logger,
            result.workload,
            result.lines_logged,
            logger.name,
            workload.name()
        )));
    }

    let served = match &result.measurement {
        Measurement::Server(s) if s.served != s.requests => {
            return Err(fail(format!(
                "the server answered {} requests but the clients got {}",
                s.served, s.requests
            )));
        }
        Measurement::Server(s) => s.served,
        _ => 0,
    };
    let expected = workload.expected(scale, served);
    // `nolog` makes the workload's calls but writes none of their lines.
    let expected = if logger.name == "nolog" {
        expected.nothing()
    } else {
        expected
    };
    let v = verify::count_lines(dir, &expected)?;
    record.result = Some(result);
    let ok = v.ok();
    let explanation = v.explain();
    record.verification = Some(v);
    if !ok {
        return Err(fail(format!("LINES MISSING: {explanation}")));
    }
    Ok(())
}

/// Spawns the child and returns its stdout, once it exited successfully, and its peak RSS.
fn run_child(
    exe: &Path,
    dir: &Path,
    logger: &Entry,
    workload: Workload,
    scale: Scale,
) -> Result<(String, Option<u64>), String> {
    let mut child = Command::new(exe)
        .arg("--child")
        .arg(logger.name)
        .arg(workload.name())
        .arg(scale.name())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;

    // The reader thread sees EOF when the child exits, so the parent blocks on a channel
    // instead of polling: it stays off the 2 cores the child is measuring on.
    let mut out = child.stdout.take().expect("stdout was piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let r = out.read_to_string(&mut s).map(|_| s);
        let _ = tx.send(r);
    });
    let stdout = match rx.recv_timeout(CHILD_TIMEOUT) {
        Ok(r) => r.map_err(|e| format!("reading child stdout: {e}"))?,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "timed out after {} s, killed",
                CHILD_TIMEOUT.as_secs()
            ));
        }
    };
    let (status, rss) = wait_with_rusage(&mut child)?;
    if !status.success() {
        // Its files are not counted: a process killed by SIGKILL can leave a torn last line (the
        // write it was in is cut), which is the documented case, not corruption to report.
        use std::os::unix::process::ExitStatusExt;
        let killed = if status.signal() == Some(libc::SIGKILL) {
            " (SIGKILL: its files are not verified, a torn last line is expected there)"
        } else {
            ""
        };
        return Err(format!(
            "child exited with {status}{killed}; stdout: {:?}",
            truncate(&stdout, 500)
        ));
    }
    Ok((stdout, Some(rss)))
}

/// Reaps `child` with `wait4`, which also returns its resource usage: the peak RSS (KiB).
fn wait_with_rusage(
    child: &mut std::process::Child,
) -> Result<(std::process::ExitStatus, u64), String> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` only reaps in
        // `wait`/`try_wait`, which we never call on it); `status` and `usage` are valid,
        // writable and live across the call.
        let (r, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let r = libc::wait4(pid, &mut status, 0, &mut usage);
            (r, usage)
        };
        if r == pid {
            let status = std::process::ExitStatus::from_raw(status);
            return Ok((status, usage.ru_maxrss.max(0) as u64));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waiting for child {pid}: {err}"));
        }
    }
}

/// The last result line of a child's stdout, decoded.
fn parse_result(stdout: &str) -> Option<Result<ChildResult, BenchError>> {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .map(|json| serde_json::from_str(json).map_err(BenchError::from))
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn progress(r: &RunRecord) -> String {
    if let Some(f) = &r.failure {
        return format!("FAILED: {f}");
    }
    let lines = group_digits(r.verification.as_ref().map_or(0, |v| v.marked_lines));
    match r.result.as_ref().map(|c| &c.measurement) {
        Some(Measurement::Throughput(t)) => format!(
            "loop {:.3} s, total {:.3} s; {lines} lines verified",
            t.loop_s, t.total_s
        ),
        Some(Measurement::Latency(l)) => format!(
            "p50 {} ns, p99 {} ns, p99.9 {} ns, p99.99 {} ns, max {} ns; {lines} lines verified",
            l.call_ns.p50, l.call_ns.p99, l.call_ns.p999, l.call_ns.p9999, l.call_ns.max
        ),
        Some(Measurement::Server(s)) => format!(
            "{:.0} req/s, p99 {:.0} us, server CPU {} us/request; {lines} lines verified",
            s.requests_per_s,
            s.p99_us,
            s.server_cpu_us_per_request()
                .map_or("?".into(), |c| format!("{c:.2}"))
        ),
        Some(Measurement::Backend(b)) => format!(
            "queued in {:.3} s while held, drained in {:.3} s ({:.0} ns/record); {lines} lines \
             verified",
            b.fill_s,
            b.drain_s,
            b.drain_s * 1e9 / b.records.max(1) as f64
        ),
        Some(Measurement::Idle(i)) => format!(
            "{:.3} CPU s in {:.1} s idle; {lines} lines verified",
            i.cpu_s, i.wall_s
        ),
        Some(Measurement::Paced(p)) => format!(
            "{:.1} ms CPU/s, {:.0} context switches/s, {} late bursts, wall {:.3} s; {lines} \
             lines verified",
            p.cpu_s / p.window_s * 1e3,
            (p.voluntary_switches + p.involuntary_switches) as f64 / p.window_s,
            p.late_bursts,
            p.wall_s
        ),
        Some(Measurement::Threads(t)) => format!(
            "{} threads, peak RSS {} MiB, wall {:.3} s; {lines} lines verified",
            t.threads,
            t.peak_rss_kib
                .map_or("?".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
            t.wall_s
        ),
        None => "no result".to_string(),
    }
}

/// argv as a shell would need it typed.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_result_line_among_other_output() {
        let line = r#"TACHYLOG-BENCH-RESULT {"logger":"x","workload":"seed_1m","lines_logged":3,"measurement":{"kind":"throughput","lines":3,"loop_s":0.5,"total_s":1.0}}"#;
        let stdout = format!("some logger chatter\n{line}\nmore chatter\n");
        let r = parse_result(&stdout).unwrap().unwrap();
        assert_eq!(r.lines_logged, 3);
        assert!(matches!(r.measurement, Measurement::Throughput(ref t) if t.total_s == 1.0));
        assert!(parse_result("nothing here\n").is_none());
        assert!(parse_result("TACHYLOG-BENCH-RESULT {broken\n")
            .unwrap()
            .is_err());
    }

    #[test]
    fn even_runs_put_the_baseline_before_the_run_it_is_compared_with() {
        let tachylog = crate::loggers::find("tachylog").unwrap();
        let spdlog = crate::loggers::find("spdlog_rs").unwrap();
        let latency = Workload::parse("latency").unwrap();
        let exe = Path::new("bench");
        let pairs = [
            Pair::of(latency, spdlog, exe),
            Pair::of(latency, tachylog, exe),
            Pair {
                label: crate::baseline::LABEL,
                ..Pair::of(latency, tachylog, Path::new("old"))
            },
            Pair::of(Workload::parse("seed_1m").unwrap(), tachylog, exe),
        ];
        let labels = |run| {
            in_run_order(&pairs, run)
                .iter()
                .map(|p| p.label)
                .collect::<Vec<_>>()
        };
        let baseline = crate::baseline::LABEL;
        assert_eq!(labels(1), ["spdlog_rs", "tachylog", baseline, "tachylog"]);
        assert_eq!(labels(2), ["spdlog_rs", baseline, "tachylog", "tachylog"]);
        assert_eq!(labels(3), labels(1));
    }

    #[test]
    fn quotes_only_what_needs_quoting() {
        let argv = ["bench", "--only", "a b", "it's"].map(String::from);
        assert_eq!(shell_words(&argv), r"bench --only 'a b' 'it'\''s'");
    }
}
