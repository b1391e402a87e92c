//! The child side: one process, one logger, one workload. It installs the logger writing to
//! `<dir>/out.log`, runs the workload, shuts the logger down and prints one result line
//! (`TACHYLOG-BENCH-RESULT {json}`) on stdout. Errors go to stderr with a non-zero exit.

use std::io::Write;

use crate::cli::Child;
use crate::error::BenchError;
use crate::report::{ChildResult, RESULT_PREFIX};

/// Name of the log file inside the run's directory.
pub const LOG_FILE: &str = "out.log";

/// Runs the assignment and prints its result line.
pub fn run(child: &Child) -> Result<(), BenchError> {
    let file = child.dir.join(LOG_FILE);
    let measurement = (child.logger.run)(child.workload, child.scale, &file)?;
    let result = ChildResult {
        logger: child.logger.name.to_string(),
        workload: child.workload.name().to_string(),
        lines_logged: child.workload.expected_lines(child.scale),
        measurement,
    };
    let line = format!("{RESULT_PREFIX}{}\n", serde_json::to_string(&result)?);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| BenchError::io("<stdout>", e))
}
