//! `tachylog recover DIR --file PATH ...`: writes what processes that died left in the spool
//! `DIR` (`Builder::spool`) into the files named on the command line, as the dead program's
//! next start would write them into its own: each record once (the files' lines the dead
//! process had written already are found and kept), whole, marked `[recovered]`. Only those
//! files are written: a spool names no path to write and no format to use. Directories of live
//! processes are left alone.

use crate::Outcome;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct RecoverArgs {
    /// The directory given to `Builder::spool`.
    dir: PathBuf,
    /// A text log file to write the records to (repeatable), as `Builder::file` writes it.
    #[arg(long = "file", value_name = "PATH")]
    text: Vec<PathBuf>,
    /// A JSON lines file (repeatable).
    #[arg(long, value_name = "PATH")]
    json: Vec<PathBuf>,
    /// A logfmt file (repeatable).
    #[arg(long, value_name = "PATH")]
    logfmt: Vec<PathBuf>,
    /// A binary log (repeatable).
    #[arg(long, value_name = "PATH")]
    binary: Vec<PathBuf>,
    /// Also write the records to standard output, as text lines.
    #[arg(long)]
    stdout: bool,
    /// The text line's pattern, as the dead program's `Builder::pattern` gave it (default:
    /// tachylog's).
    #[arg(long)]
    pattern: Option<String>,
    /// Times in UTC, as the dead program's `Builder::utc(true)` (default: the local zone).
    #[arg(long)]
    utc: bool,
}

pub(crate) fn run(args: RecoverArgs) -> Result<Outcome, String> {
    use tachylog::{Format, Level, SinkOptions};
    let options = |format| SinkOptions::new().format(format);
    let mut builder = tachylog::builder()
        .level(Level::Trace)
        .utc(args.utc)
        .log_facade(tachylog::LogFacade::Off)
        .handle_termination(false)
        .recover_from(&args.dir);
    if let Some(pattern) = &args.pattern {
        builder = builder.pattern(pattern);
    }
    let formats = [
        (&args.text, Format::Text),
        (&args.json, Format::Json),
        (&args.logfmt, Format::Logfmt),
        (&args.binary, Format::Binary),
    ];
    let mut sinks = 0;
    for (paths, format) in formats {
        for path in paths {
            builder = builder.file_with(path, options(format));
            sinks += 1;
        }
    }
    if args.stdout {
        builder = builder.stdout();
        sinks += 1;
    }
    if sinks == 0 {
        return Err(
            "name where the records go: --file, --json, --logfmt, --binary or --stdout".into(),
        );
    }
    let guard = builder.init().map_err(|e| e.to_string())?;
    let recovery = guard.recovery().unwrap_or_default();
    drop(guard);
    for warning in &recovery.warnings {
        eprintln!("tachylog: {warning}");
    }
    eprintln!(
        "tachylog: recovered {} record(s) of {} process(es) from {} ({} already in the files)",
        recovery.records,
        recovery.processes,
        args.dir.display(),
        recovery.already_written
    );
    Ok(if recovery.warnings.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Damaged
    })
}
