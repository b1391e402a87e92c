//! `tachylog recover DIR`: writes what processes that died left in the spool `DIR`
//! (`Builder::spool`), as their next start would: each record once, whole, marked
//! `[recovered]`, into the files they wrote; their console sinks' records to this command's
//! standard output and error. Directories of live processes are left alone.

use crate::Outcome;
use std::path::Path;

pub(crate) fn run(dir: &Path) -> Result<Outcome, String> {
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let recovery = tachylog::read::recover_spool(dir, &mut stdout, &mut stderr)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    for warning in &recovery.warnings {
        eprintln!("tachylog: {warning}");
    }
    eprintln!(
        "tachylog: recovered {} record(s) of {} process(es) from {}",
        recovery.records,
        recovery.processes,
        dir.display()
    );
    Ok(if recovery.warnings.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Damaged
    })
}
