//! The bench's error type: every failure names the logger, workload or path involved, so a
//! red run says what to look at without a debugger.

use std::path::PathBuf;

/// Everything that can stop a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Bad command line; the message lists what is accepted.
    #[error("{0}\n(run with --help for usage)")]
    Usage(String),

    /// A file or directory operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },

    /// A logger refused to start or to shut down.
    #[error("logger `{logger}`: {message}")]
    Logger {
        /// The logger's name in the registry.
        logger: &'static str,
        /// Its own error, rendered.
        message: String,
    },

    /// A child process crashed, hung, or printed no result line.
    #[error("child `{logger} {workload}` (run {run}): {message}")]
    Child {
        /// Logger under test.
        logger: String,
        /// Workload it ran.
        workload: String,
        /// Repetition number, from 1.
        run: u32,
        /// What went wrong, with the child's exit status when there is one.
        message: String,
    },

    /// The report could not be encoded or decoded.
    #[error("result JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl BenchError {
    /// Wraps an `io::Error` with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BenchError::Io {
            path: path.into(),
            source,
        }
    }
}
