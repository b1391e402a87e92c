//! Command line: the user's options, and the hidden `--child` form the parent uses to
//! re-execute this binary for one (logger, workload) run.

use std::path::PathBuf;

use crate::error::BenchError;
use crate::loggers::{self, Entry};
use crate::workloads::{Scale, Workload};

/// Usage text for `--help`.
pub const USAGE: &str = "\
tachylog-bench: per-call latency and whole-run throughput of tachylog and its peers.

USAGE:
    cargo run --release -p tachylog-bench -- [OPTIONS]

OPTIONS:
    --only NAME[,NAME..]  run only these loggers and/or workloads (repeatable); a kind
                          not named runs in full
    --full                every workload (the default quick suite skips the batch
                          method, the limlog matrix, server_close, idle_cpu, scaling
                          with 1, 4 and 8 threads and the JSON and logfmt back-end
                          runs but `backend_iteration_*`, and logs 1M instead of 4M
                          records in `throughput`), more latency samples, and 3 runs
                          of everything (median shown)
    --out DIR             write the report there instead of target/bench-report/
    --baseline COMMIT     also run the `latency` workload with COMMIT's own bench
                          binary (built once under target/bench-baseline/ from this
                          repository's history) and compare with it; `--full` does
                          this by default with the commit in baselines/latency.json
    --no-baseline         do not build or run a baseline commit
    --smoke               every workload with tiny counts: checks the harness, not speed
    --list                list loggers and workloads
    -h, --help            this text

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
    /// (`crate::baseline`); by default the recorded baseline's with `--full`, else none.
    pub baseline: Option<String>,
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
            "--quick" => scale = Scale::Quick,
            "--list" => return Ok(Command::List),
            "-h" | "--help" => return Ok(Command::Help),
            // `cargo bench` passes this to every bench binary; harmless here.
            "--bench" => {}
            other => return Err(BenchError::Usage(format!("unknown argument `{other}`"))),
        }
    }
    let mut suite = select(&names, scale)?;
    suite.out = out;
    suite.baseline = baseline.unwrap_or_else(|| {
        (scale == Scale::Full).then(|| crate::report::targets::Baseline::recorded().commit)
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
    fn full_runs_the_recorded_baseline_commit_unless_told_otherwise() {
        let baseline = |a: &str| match parse(&args(a)).unwrap() {
            Command::Suite(s) => s.baseline,
            _ => panic!("expected a suite"),
        };
        let recorded = crate::report::targets::Baseline::recorded().commit;
        assert_eq!(baseline("--full"), Some(recorded));
        assert_eq!(baseline("--full --no-baseline"), None);
        assert_eq!(baseline(""), None);
        assert_eq!(baseline("--baseline abc123"), Some("abc123".to_string()));
        assert_eq!(
            baseline("--no-baseline --full --baseline abc123"),
            Some("abc123".to_string())
        );
        assert!(parse(&args("--baseline")).is_err());
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
