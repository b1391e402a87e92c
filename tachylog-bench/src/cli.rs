//! Command line: the user's options, and the hidden `--child` form the parent uses to
//! re-execute this binary for one (logger, workload) run.

use std::path::PathBuf;

use crate::error::BenchError;
use crate::loggers::{self, Entry};
use crate::workloads::{Scale, Workload};

/// Usage text for `--help`.
pub const USAGE: &str = "\
tachylog-bench: per-call latency and whole-run throughput of tachylog beside its peers.

USAGE:
    cargo run --release -p tachylog-bench -- [OPTIONS] [NAME..]

OPTIONS:
    --only NAME[,NAME..]  run only these loggers and/or workloads (repeatable; a bare
                          NAME does the same); a kind not named runs in full
    --full                every workload (the default quick suite skips the batch
                          method, the limlog matrix, server_close, idle_cpu, scaling
                          with 1, 4 and 8 threads and the JSON and logfmt back-end
                          runs but `backend_iteration_*`, and logs 1M instead of 4M
                          records in `throughput`), more latency samples, and 3 runs
                          of everything
    --runs N              run every (logger, workload) N times instead of the scale's
                          1 (quick) or 3 (full): the tables then show each figure's
                          spread and rank only what the runs can tell apart
    --targets             also check tachylog's own performance targets and its
                          recorded latency baseline (MET / MISSED), and with --full
                          build and run the recorded baseline commit beside tachylog
    --baseline COMMIT     also run the `latency` workload with COMMIT's own bench
                          binary (built once under target/bench-baseline/ from this
                          repository's history): a `tachylog_baseline` row
    --no-baseline         do not build or run a baseline commit
    --out DIR             write the report there instead of target/bench-report/
    --smoke               every workload with tiny counts: checks the harness, not speed
    --list                list loggers and workloads
    -h, --help            this text

The report sets tachylog beside every peer: ratios are the row's figure divided by
tachylog's (times, CPU, memory: above 1x the peer used more), each figure is the median of
its runs with their min-max, and a row says \"not separable\" where the runs cannot tell
the two apart: overlapping ranges over several runs or, with one run each as in the quick
suite, figures closer than repeated runs of one logger moved on this machine.

Each (logger, workload) runs in its own process; the lines on disk are counted after
each run and the exit status is non-zero if any line is missing. The report is printed
as Markdown and written as JSON under target/bench-report/.";

/// What this process was asked to do.
pub enum Command {
    /// Run the suite (the parent).
    Suite(Suite),
    /// Run one (logger, workload) and print its result line (a child).
    Child(Child),
    /// Print loggers and workloads.
    List,
    /// Print usage.
    Help,
}

/// The parent's selection.
pub struct Suite {
    /// Loggers to run, in registry order.
    pub loggers: Vec<&'static Entry>,
    /// Workloads to run, in table order.
    pub workloads: Vec<Workload>,
    /// Run size.
    pub scale: Scale,
    /// Where the report goes (default `target/bench-report/`).
    pub out: Option<PathBuf>,
    /// The commit whose own bench binary also runs the baseline's latency workloads
    /// (`crate::baseline`); by default the recorded baseline's with `--full --targets`, else
    /// none.
    pub baseline: Option<String>,
    /// Runs per (logger, workload): the scale's unless `--runs` says otherwise.
    pub runs: u32,
    /// Whether the report checks the internal targets (`--targets`).
    pub targets: bool,
}

/// A child's assignment: `--child LOGGER WORKLOAD SCALE DIR`.
pub struct Child {
    /// Logger to install.
    pub logger: &'static Entry,
    /// Workload to run.
    pub workload: Workload,
    /// Run size.
    pub scale: Scale,
    /// Directory for the log file (exists, empty).
    pub dir: PathBuf,
}

/// Parses `args` (without argv[0]).
pub fn parse(args: &[String]) -> Result<Command, BenchError> {
    if args.first().map(String::as_str) == Some("--child") {
        return parse_child(&args[1..]).map(Command::Child);
    }
    let mut names: Vec<String> = Vec::new();
    let mut scale = Scale::Quick;
    let mut out = None;
    let mut runs = None;
    let mut targets = false;
    // `None`: the scale's default; `Some(None)`: `--no-baseline`.
    let mut baseline: Option<Option<String>> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--only" => {
                let v = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--only needs a name".into()))?;
                names.extend(split_names(v));
            }
            s if s.starts_with("--only=") => names.extend(split_names(&s["--only=".len()..])),
            "--full" => scale = Scale::Full,
            "--smoke" => scale = Scale::Smoke,
            "--out" => {
                let v = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--out needs a directory".into()))?;
                out = Some(PathBuf::from(v));
            }
            "--baseline" => {
                let v = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--baseline needs a commit".into()))?;
                baseline = Some(Some(v.clone()));
            }
            "--no-baseline" => baseline = Some(None),
            "--runs" => {
                let v = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--runs needs a number".into()))?;
                runs = Some(match v.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        return Err(BenchError::Usage(format!(
                            "--runs: expected a whole number ≥ 1, got `{v}`"
                        )))
                    }
                });
            }
            "--targets" => targets = true,
            "--quick" => scale = Scale::Quick,
            "--list" => return Ok(Command::List),
            "-h" | "--help" => return Ok(Command::Help),
            // `cargo bench` passes this to every bench binary; harmless here.
            "--bench" => {}
            // A bare name is `--only NAME`: `tachylog-bench -- latency`.
            name if !name.starts_with('-') => names.extend(split_names(name)),
            other => return Err(BenchError::Usage(format!("unknown argument `{other}`"))),
        }
    }
    let mut suite = select(&names, scale)?;
    suite.out = out;
    suite.runs = runs.unwrap_or_else(|| scale.runs());
    suite.targets = targets;
    // The recorded baseline's commit is built only for the targets, which compare with it;
    // building an old commit takes minutes that a plain comparison with the peers does not
    // need.
    suite.baseline = baseline.unwrap_or_else(|| {
        (scale == Scale::Full && targets)
            .then(|| crate::report::targets::Baseline::recorded().commit)
    });
    Ok(Command::Suite(suite))
}

fn split_names(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Resolves `--only` names: each must be a logger or a workload.
fn select(names: &[String], scale: Scale) -> Result<Suite, BenchError> {
    let mut loggers = Vec::new();
    let mut workloads = Vec::new();
    for name in names {
        if let Some(entry) = loggers::find(name) {
            loggers.push(entry.name);
        } else if let Some(w) = Workload::parse(name) {
            workloads.push(w);
        } else {
            return Err(BenchError::Usage(format!(
                "`{name}` is neither a logger ({}) nor a workload ({})",
                logger_names(),
                workload_names()
            )));
        }
    }
    Ok(Suite {
        loggers: loggers::ALL
            .iter()
            .filter(|e| loggers.is_empty() || loggers.contains(&e.name))
            .collect(),
        // Named workloads run at any scale; otherwise the scale picks them.
        workloads: Workload::all()
            .into_iter()
            .filter(|w| {
                if workloads.is_empty() {
                    scale != Scale::Quick || w.in_quick()
                } else {
                    workloads.contains(w)
                }
            })
            .collect(),
        scale,
        out: None,
        baseline: None,
        runs: scale.runs(),
        targets: false,
    })
}

fn parse_child(args: &[String]) -> Result<Child, BenchError> {
    let [logger, workload, scale, dir] = args else {
        return Err(BenchError::Usage(
            "--child needs LOGGER WORKLOAD SCALE DIR".into(),
        ));
    };
    Ok(Child {
        logger: loggers::find(logger)
            .ok_or_else(|| BenchError::Usage(format!("--child: unknown logger `{logger}`")))?,
        workload: Workload::parse(workload)
            .ok_or_else(|| BenchError::Usage(format!("--child: unknown workload `{workload}`")))?,
        scale: Scale::parse(scale)
            .ok_or_else(|| BenchError::Usage(format!("--child: unknown scale `{scale}`")))?,
        dir: PathBuf::from(dir),
    })
}

/// "a, b, c" of every logger name.
pub fn logger_names() -> String {
    loggers::ALL
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// "a, b, c" of every workload name.
pub fn workload_names() -> String {
    Workload::all()
        .into_iter()
        .map(Workload::name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn only_selects_loggers_and_workloads_independently() {
        let Command::Suite(s) = parse(&args("--only latency,tachylog --only bufwriter")).unwrap()
        else {
            panic!("expected a suite");
        };
        assert_eq!(
            s.loggers.iter().map(|e| e.name).collect::<Vec<_>>(),
            ["tachylog", "bufwriter"]
        );
        assert_eq!(
            s.workloads,
            [Workload::Latency(crate::workloads::Shape::Request)]
        );
        assert_eq!(s.scale, Scale::Quick);

        let Command::Suite(s) = parse(&args("--full")).unwrap() else {
            panic!("expected a suite");
        };
        assert_eq!(s.loggers.len(), loggers::ALL.len());
        assert_eq!(s.workloads.len(), Workload::all().len());
        assert_eq!(s.scale, Scale::Full);
    }

    #[test]
    fn full_with_targets_runs_the_recorded_baseline_commit_unless_told_otherwise() {
        let baseline = |a: &str| match parse(&args(a)).unwrap() {
            Command::Suite(s) => s.baseline,
            _ => panic!("expected a suite"),
        };
        let recorded = crate::report::targets::Baseline::recorded().commit;
        assert_eq!(baseline("--full --targets"), Some(recorded));
        assert_eq!(baseline("--full"), None);
        assert_eq!(baseline("--targets"), None);
        assert_eq!(baseline("--full --targets --no-baseline"), None);
        assert_eq!(baseline(""), None);
        assert_eq!(baseline("--baseline abc123"), Some("abc123".to_string()));
        assert_eq!(
            baseline("--no-baseline --full --baseline abc123"),
            Some("abc123".to_string())
        );
        assert!(parse(&args("--baseline")).is_err());
    }

    #[test]
    fn targets_and_runs_are_off_and_the_scales_by_default() {
        let suite = |a: &str| match parse(&args(a)).unwrap() {
            Command::Suite(s) => (s.targets, s.runs),
            _ => panic!("expected a suite"),
        };
        assert_eq!(suite(""), (false, 1));
        assert_eq!(suite("--full"), (false, 3));
        assert_eq!(suite("--targets --runs 5"), (true, 5));
        assert!(parse(&args("--runs 0")).is_err());
        assert!(parse(&args("--runs")).is_err());
    }

    #[test]
    fn a_bare_name_is_only() {
        let Command::Suite(s) = parse(&args("latency tachylog,spdlog_rs")).unwrap() else {
            panic!("expected a suite");
        };
        assert_eq!(s.workloads.len(), 1);
        assert_eq!(s.loggers.len(), 2);
    }

    #[test]
    fn rejects_unknown_names_and_bad_child_args() {
        assert!(parse(&args("--only nosuchlogger")).is_err());
        assert!(parse(&args("--child tachylog latency")).is_err());
        assert!(parse(&args("--frobnicate")).is_err());
        assert!(matches!(
            parse(&args("--child tachylog seed_1m quick /tmp/x")).unwrap(),
            Command::Child(_)
        ));
    }
}
