//! `compile-cost`: what N log call sites cost a user at build time and in the binary, for
//! `log`, `tracing` and `tachylog` side by side.
//!
//! `cargo run --release -p tachylog-bench --bin compile-cost [-- --runs N --calls N --only LIST
//! --installed --targets]`
//!
//! Why: binary size and compile time are among the most repeated complaints about Rust logging
//! (the `tracing` repository's issue tracker has long threads on both). A logging macro expands
//! at every call site, so whatever it emits there is paid once per call, in every rebuild and
//! in the executable; a macro that is cheap at run time because it generates code per site
//! (a decoding function per call site, say) can make a program slow to rebuild and large to
//! ship. tachylog's call sites emit data instead, and this binary keeps that honest.
//!
//! What is measured, as a new user would meet it: one generated crate per macro under
//! `target/compile-cost/{log,tracing,tachylog}/`, each its own workspace and binary crate
//! (edition 2021) depending only on that logging crate with its default features, with
//! `--calls` distinct calls of `info!("call N request {} took {:.3} ms: {}", id, ms, path)`
//! (`u64`, `f64`, `&str`). No logger is installed in any of the three, so each keeps exactly what
//! its macros pull in. With `--installed`, `tracing`'s and tachylog's programs first install a
//! logger writing to a file, as a program that logs ships (`generate::Program`), under
//! `target/compile-cost/installed/`. The workspace's `Cargo.lock` is copied into each (cargo
//! prunes what it does not use), so all resolve the dependency versions our own benchmarks
//! use, and they share one target directory (`target/compile-cost/target`), so common
//! dependencies are built once.
//!
//! For each crate and profile (`--release`, then debug): a warm build, then `main.rs` is
//! rewritten with the same content (a new mtime) and the rebuild is timed by the wall clock:
//! the edit-compile loop with every dependency already built. Cargo's default profiles apply
//! (debug: incremental, full debug info; release: no debug info); tachylog itself is built as
//! a dependency from crates.io is, not incrementally (`generate::cargo_toml`). The crates run
//! interleaved, so a noisy moment is spread over all of them; `--runs N` repeats the touch and
//! rebuild and reports the median. Binary size is the executable's file size (MB = 10^6 bytes).
//!
//! The table and tachylog's ratios to the other two are printed and written to
//! `target/compile-cost/report.md` (`installed/report.md` with `--installed`). With
//! `--targets`, tachylog's own goals are checked too (release rebuild ≤ tracing's, debug
//! rebuild and debug binary ≤ 1.5 × tracing's), MET or MISSED; they are left out by default
//! because one rebuild on a busy machine can miss them on its own.
//!
//! Layout: `generate` writes the crates' text, `table` renders the report; this file runs
//! cargo, times it and reads the sizes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

mod generate;
mod table;

use generate::{cargo_toml, main_rs, Logger, Program};
use table::{median, ratio_lines, render_table, target_lines, Row};

const USAGE: &str = "\
usage: compile-cost [--runs N (1)] [--calls N (1000)] [--only log,tracing,tachylog] [--installed]
                    [--targets]
  Generates one crate per logging macro under target/compile-cost/, times a rebuild of each
  after touching main.rs (release and debug), and prints the rebuild times and binary sizes,
  with tachylog's as a ratio of each other crate's. No logger is installed unless
  --installed: then tracing's and tachylog's programs start one writing to a file first
  (log has none of its own). --targets also checks tachylog's own goals (release rebuild <=
  tracing's, debug rebuild and debug binary <= 1.5 x tracing's): MET or MISSED.";

/// Everything that stops a measurement; each names the crate or path involved.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// Bad command line.
    #[error("{0}\n{USAGE}")]
    Usage(String),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A program could not be started at all.
    #[error("could not run `{program}`: {source} (is it on PATH?)")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// `cargo build` of a generated crate failed.
    #[error(
        "cargo build ({profile}) of the `{logger}` crate failed ({status}); \
         manifest {manifest}; the end of its output:\n{tail}"
    )]
    Cargo {
        logger: &'static str,
        profile: &'static str,
        manifest: PathBuf,
        status: std::process::ExitStatus,
        tail: String,
    },
    /// The timed build did not recompile the crate, so its time would mean nothing.
    #[error(
        "the timed rebuild ({profile}) of the `{logger}` crate did not recompile it \
         (main.rs rewritten but cargo saw no change?); cargo said:\n{tail}"
    )]
    NotRebuilt {
        logger: &'static str,
        profile: &'static str,
        tail: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Profile {
    Release,
    Debug,
}

impl Profile {
    const ALL: [Profile; 2] = [Profile::Release, Profile::Debug];

    fn name(self) -> &'static str {
        match self {
            Profile::Release => "release",
            Profile::Debug => "debug",
        }
    }
}

#[derive(Debug, PartialEq)]
struct Options {
    runs: usize,
    calls: usize,
    only: Vec<Logger>,
    /// Whether the programs install a logger (`--installed`).
    program: Program,
    /// Check tachylog's own goals (`--targets`).
    targets: bool,
}

/// `None` means `--help` was asked for.
fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, Error> {
    let mut options = Options {
        runs: 1,
        calls: 1000,
        only: Logger::ALL.to_vec(),
        program: Program::Facade,
        targets: false,
    };
    let mut only_given = false;
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| Error::Usage(format!("{flag} needs a value")))
        };
        let count = |text: String| match text.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::Usage(format!(
                "{flag}: expected a whole number ≥ 1, got {text:?}"
            ))),
        };
        match flag.as_str() {
            "--runs" => options.runs = count(value()?)?,
            "--calls" => options.calls = count(value()?)?,
            "--only" => {
                only_given = true;
                let list = value()?;
                let mut only = Vec::new();
                for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    match Logger::ALL.iter().find(|l| l.name() == name) {
                        Some(&logger) => only.push(logger),
                        None => {
                            return Err(Error::Usage(format!(
                                "--only: unknown crate {name:?} (log, tracing, tachylog)"
                            )))
                        }
                    }
                }
                if only.is_empty() {
                    return Err(Error::Usage("--only: the list is empty".into()));
                }
                // The table keeps its own order whatever order the list was given in.
                options.only = Logger::ALL
                    .into_iter()
                    .filter(|l| only.contains(l))
                    .collect();
            }
            "--installed" => options.program = Program::Installed,
            "--targets" => options.targets = true,
            "--help" | "-h" => return Ok(None),
            other => return Err(Error::Usage(format!("unknown option {other}"))),
        }
    }
    if options.program == Program::Installed && options.only.contains(&Logger::Log) {
        if only_given {
            return Err(Error::Usage(
                "--installed: log has no logger of its own to install (tracing, tachylog)".into(),
            ));
        }
        options.only.retain(|&l| l != Logger::Log);
    }
    Ok(Some(options))
}

/// Where everything lives: the workspace, and the generated crates' directory.
struct Layout {
    workspace: PathBuf,
    out: PathBuf,
    program: Program,
}

impl Layout {
    fn crate_dir(&self, logger: Logger) -> PathBuf {
        match self.program {
            Program::Facade => self.out.join(logger.name()),
            Program::Installed => self.out.join("installed").join(logger.name()),
        }
    }
    fn target_dir(&self) -> PathBuf {
        self.out.join("target")
    }
    fn executable(&self, logger: Logger, profile: Profile) -> PathBuf {
        let file = format!(
            "{}{}",
            logger.package(self.program),
            std::env::consts::EXE_SUFFIX
        );
        self.target_dir().join(profile.name()).join(file)
    }
}

/// Writes one crate: Cargo.toml, src/main.rs and the workspace's Cargo.lock.
fn generate(layout: &Layout, logger: Logger, calls: usize) -> Result<(), Error> {
    let dir = layout.crate_dir(logger);
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(io_error(&src))?;
    write_if_changed(
        &dir.join("Cargo.toml"),
        &cargo_toml(logger, &layout.workspace, layout.program),
    )?;
    write_if_changed(
        &src.join("main.rs"),
        &main_rs(logger, calls, layout.program),
    )?;
    let lock = layout.workspace.join("Cargo.lock");
    std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(io_error(&lock))?;
    Ok(())
}

/// Leaves an unchanged file alone, so a second run's warm build finds the crate fresh instead
/// of compiling it once more before the timed rebuilds.
fn write_if_changed(path: &Path, text: &str) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(io_error(path))
}

/// Rewrites main.rs with its own content: a new mtime, so cargo recompiles the crate.
fn touch(layout: &Layout, logger: Logger) -> Result<(), Error> {
    let main = layout.crate_dir(logger).join("src").join("main.rs");
    let text = std::fs::read(&main).map_err(io_error(&main))?;
    std::fs::write(&main, text).map_err(io_error(&main))
}

/// What one successful `cargo build` did.
struct Built {
    /// Wall-clock time of the whole `cargo build` process.
    took: Duration,
    /// Whether cargo compiled the generated crate itself (not just checked it was fresh).
    compiled: bool,
    /// The end of cargo's output, for an error message.
    tail: String,
}

/// `cargo build [--release]` of one generated crate in the shared target directory.
fn build(layout: &Layout, logger: Logger, profile: Profile) -> Result<Built, Error> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let manifest = layout.crate_dir(logger).join("Cargo.toml");
    let mut command = Command::new(&cargo);
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", layout.target_dir())
        .env("CARGO_TERM_COLOR", "never");
    if profile == Profile::Release {
        command.arg("--release");
    }
    let started = Instant::now();
    let output = command.output().map_err(|source| Error::Spawn {
        program: cargo.clone(),
        source,
    })?;
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(Error::Cargo {
            logger: logger.name(),
            profile: profile.name(),
            manifest,
            status: output.status,
            tail: tail(&stderr, 30),
        });
    }
    let compiled = stderr.lines().any(|l| {
        l.trim_start()
            .starts_with(&format!("Compiling {} ", logger.package(layout.program)))
    });
    Ok(Built {
        took,
        compiled,
        tail: tail(&stderr, 10),
    })
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The first line `program args` prints, if it runs and succeeds.
fn first_line_of(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (output.status.success() && !line.is_empty()).then_some(line)
}

/// The 1, 5 and 15 minute load averages, where the OS shows them (Linux).
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}

fn header(layout: &Layout, options: &Options) -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc = first_line_of(&rustc, &["--version"], &layout.workspace)
        .unwrap_or_else(|| "rustc: unknown version".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let commit = first_line_of(
        "git",
        &["describe", "--always", "--dirty", "--abbrev=7"],
        &layout.workspace,
    )
    .unwrap_or_else(|| "unknown".into());
    let program = match options.program {
        Program::Facade => "no logger installed",
        Program::Installed => "a logger writing to a file installed first",
    };
    format!(
        "Compile cost of {} `info!` call sites ({program}): rebuild after touching main.rs, \
         median of {} run(s); {rustc}; {cores} cores; tachylog at {commit}",
        options.calls, options.runs,
    )
}

fn run(options: &Options) -> Result<String, Error> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let parent = manifest_dir.join("..");
    let workspace = parent.canonicalize().map_err(io_error(&parent))?;
    let layout = Layout {
        out: workspace.join("target").join("compile-cost"),
        workspace,
        program: options.program,
    };
    let header = header(&layout, options);
    println!("{header}\n");

    for &logger in &options.only {
        generate(&layout, logger, options.calls)?;
    }
    for profile in Profile::ALL {
        for &logger in &options.only {
            eprintln!("warm build: {} ({})", logger.name(), profile.name());
            let built = build(&layout, logger, profile)?;
            eprintln!("  {:.1} s", built.took.as_secs_f64());
        }
    }

    let load_before = load_average();
    // samples[logger][profile]: seconds of each timed rebuild.
    let mut samples = vec![[Vec::new(), Vec::new()]; options.only.len()];
    for run in 1..=options.runs {
        for (p, profile) in Profile::ALL.into_iter().enumerate() {
            for (l, &logger) in options.only.iter().enumerate() {
                touch(&layout, logger)?;
                let Built {
                    took,
                    compiled,
                    tail,
                } = build(&layout, logger, profile)?;
                if !compiled {
                    return Err(Error::NotRebuilt {
                        logger: logger.name(),
                        profile: profile.name(),
                        tail,
                    });
                }
                eprintln!(
                    "run {run}/{}: {} ({}) rebuilt in {:.2} s",
                    options.runs,
                    logger.name(),
                    profile.name(),
                    took.as_secs_f64()
                );
                samples[l][p].push(took.as_secs_f64());
            }
        }
    }

    let load_after = load_average();

    let mut rows = Vec::new();
    for (&logger, [release, debug]) in options.only.iter().zip(samples) {
        let size = |profile| {
            let exe = layout.executable(logger, profile);
            std::fs::metadata(&exe)
                .map(|m| m.len())
                .map_err(io_error(&exe))
        };
        rows.push(Row {
            logger,
            release_rebuild_s: median(release),
            debug_rebuild_s: median(debug),
            release_bytes: size(Profile::Release)?,
            debug_bytes: size(Profile::Debug)?,
        });
    }

    let mut report = format!("{header}\n\n{}", render_table(&rows));
    let mut lines = ratio_lines(&rows);
    if options.targets {
        lines.extend(target_lines(&rows));
    }
    if !lines.is_empty() {
        report.push('\n');
        for line in lines {
            report.push_str(&line);
            report.push('\n');
        }
    }
    if let (Some(before), Some(after)) = (load_before, load_after) {
        // Other work on the machine slows the wall clock; this shows whether there was any.
        let _ = writeln!(
            report,
            "\nload average (1, 5, 15 min): {before} before the timed rebuilds, {after} after"
        );
    }
    let path = match layout.program {
        Program::Facade => layout.out.join("report.md"),
        Program::Installed => layout.out.join("installed").join("report.md"),
    };
    std::fs::write(&path, &report).map_err(io_error(&path))?;
    let table = report.split_once("\n\n").map_or(&*report, |(_, t)| t);
    println!("{table}\nwritten to {}", path.display());
    Ok(report)
}

fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("compile-cost: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compile-cost: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_parse_and_reject() {
        let o = parse_options(args(&[
            "--runs",
            "3",
            "--only",
            "tachylog,log",
            "--calls",
            "10",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            o,
            Options {
                runs: 3,
                calls: 10,
                only: vec![Logger::Log, Logger::Tachylog],
                program: Program::Facade,
                targets: false,
            }
        );
        let installed = parse_options(args(&["--installed"])).unwrap().unwrap();
        assert_eq!(installed.program, Program::Installed);
        assert_eq!(installed.only, [Logger::Tracing, Logger::Tachylog]);
        assert!(parse_options(args(&["--installed", "--only", "log,tachylog"])).is_err());
        assert!(
            parse_options(args(&["--targets"]))
                .unwrap()
                .unwrap()
                .targets
        );
        assert!(parse_options(args(&["-h"])).unwrap().is_none());
        assert!(parse_options(args(&["--runs", "0"])).is_err());
        assert!(parse_options(args(&["--only", "slog"])).is_err());
        assert!(parse_options(args(&["--calls"])).is_err());
    }
}
