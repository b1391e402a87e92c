//! The back end's first task with `Builder::spool` (or `Builder::recover_from`): what processes
//! that died left in the spool goes to this logger's own sinks, before any record of its own.
//!
//! Only the sinks this process configured are written, with its own formats and pattern: a
//! spool says which files its process wrote (device and inode, at its last cut), never where to
//! write or how. For each dead process (oldest first):
//! 1. its records after its last committed cut are read (`read::spool`), merged by time;
//! 2. each file sink looks in its files, from their lengths at that cut, for the lines the dead
//!    process had written after it (`tail`): those records are not written again, to that sink;
//!    a line its death tore at a file's end is cut off, under the file's exclusive lock
//!    (`sink::append::lock`), so that a sibling appending meanwhile loses nothing;
//! 3. every other record goes to every sink whose level takes it, marked `[recovered]`, a
//!    `RollingFile` putting each into the file of its own time; a sink that is no file
//!    (console, syslog, OTLP, the application's own) gets every one: at least once;
//! 4. the sinks are flushed, and the directory is removed, its lock last.
//!
//! Killed during step 3, a recovery leaves the directory; the next one finds the records it
//! wrote (marked) and does not write them again. What cannot be recovered is counted and named
//! in WARN records after the recovered ones.

mod held;

use super::output::Output;
use crate::queue::spool::journal;
use crate::read::{dead_processes, DeadProcess};
use std::path::Path;
use std::sync::Mutex;

/// What the recovery of a spool did, for [`Guard::recovery`](crate::Guard::recovery).
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-recovery");
/// let guard = tachylog::builder()
///     .file(dir.join("app.log"))
///     .spool(dir.join("spool"))
///     .init()
///     .unwrap();
/// let recovery = guard.recovery().expect("a spool was given");
/// assert_eq!(recovery.processes, 0, "nobody died here yet");
/// # drop(guard);
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct Recovery {
    /// Dead processes whose spool was recovered.
    pub processes: usize,
    /// Their records found after their last committed cut, each counted once whatever the
    /// number of sinks that took it.
    pub records: usize,
    /// Of those, the ones a file sink already held (the dead process wrote them before it
    /// died), not written there again: counted per sink.
    pub already_written: usize,
    /// What could not be recovered, or was found wrong, one line each; also logged as WARN
    /// records.
    pub warnings: Vec<String>,
}

/// The last recovery's report.
static LAST: Mutex<Option<Recovery>> = Mutex::new(None);

/// The report of the recovery this logger did, once done.
pub(crate) fn last() -> Option<Recovery> {
    crate::queue::sync::lock(&LAST).clone()
}

/// Forgets the last report (a new logger starts).
pub(crate) fn forget() {
    *crate::queue::sync::lock(&LAST) = None;
}

/// Recovers the dead processes' spools under `root` into `out`'s sinks; writes its notices
/// after their records.
pub(super) fn recover(root: &Path, out: &mut Output) {
    let mut report = Recovery::default();
    match dead_processes(root, &mut report.warnings) {
        Ok(Some(dead)) => {
            for process in dead.processes {
                recover_process(process, &dead.root, out, &mut report);
            }
        }
        Ok(None) => {}
        Err(e) => report
            .warnings
            .push(format!("spool {}: not recovered: {e}", root.display())),
    }
    if report.processes > 0 {
        out.backend_notice(
            crate::Level::Info,
            &format!(
                "recovered {} record(s) of {} process(es) that died, from the spool {} ({} \
                 already in their files)",
                report.records,
                report.processes,
                root.display(),
                report.already_written
            ),
        );
    }
    for warning in &report.warnings {
        out.backend_notice(crate::Level::Warn, warning);
    }
    out.flush();
    *crate::queue::sync::lock(&LAST) = Some(report);
}

fn recover_process(
    process: DeadProcess,
    root: &crate::queue::spool::PrivateDir,
    out: &mut Output,
    report: &mut Recovery,
) {
    let spool = match process.open() {
        Ok(spool) => spool,
        Err(why) => {
            report.warnings.push(format!(
                "spool {}: {why}; renamed to .damaged, nothing recovered from it",
                process.path().display()
            ));
            process.set_aside(root);
            return;
        }
    };
    let context = process.path().display().to_string();
    let mut warnings: Vec<String> = spool.warnings.clone();
    // Pass one: how many records, over what time.
    let (mut count, mut first, mut last) = (0usize, i64::MAX, i64::MIN);
    for record in spool.records(false) {
        count += 1;
        first = first.min(record.unix_nanos);
        last = last.max(record.unix_nanos);
    }
    // Pass two: which of them each sink's files hold, by the journals' facts.
    let writes = spool.journaled_writes(&mut warnings);
    let stripes = crate::queue::spool::lock_stripes(root);
    let held = held::held_by_sinks(
        &writes,
        &mut out.sinks,
        (first, last),
        stripes.as_ref(),
        &mut warnings,
    );
    drop(stripes);
    // Pass three: the rest, to every sink that takes them, each write noted in the
    // directory's own journal.
    let journal = match process.recovery_journal(root) {
        Ok(journal) => Some(std::sync::Arc::new(journal)),
        Err(e) => {
            warnings.push(format!(
                "its recovery journal: {e}; a recovery killed halfway may write records twice"
            ));
            None
        }
    };
    let outer = journal::activate(journal);
    let failures_before: u64 = out.sinks.iter().map(|s| s.failures()).sum();
    let mut skip = vec![false; out.sinks.len()];
    let mut already = 0usize;
    let mut records = spool.records(false);
    let most_verbose = out.sinks.iter().map(|s| s.min_level()).max();
    let mut too_verbose = 0usize;
    while let Some(record) = records.next() {
        let id = records.current;
        for (i, held) in held.iter().enumerate() {
            skip[i] = held
                .as_ref()
                .zip(id)
                .is_some_and(|(held, id)| held.contains(&id));
        }
        already += skip.iter().filter(|s| **s).count();
        if most_verbose.is_none_or(|level| record.level > level) {
            too_verbose += 1;
        }
        let _line = journal::LineOf::record(id);
        out.write_recovered(&crate::read::view_of(&record), &skip);
    }
    warnings.extend(std::mem::take(&mut records.warnings));
    drop(records);
    if too_verbose > 0 {
        warnings.push(format!(
            "{too_verbose} recovered record(s) are more verbose than any of this logger's \
             sinks takes: not written"
        ));
    }
    out.flush();
    journal::activate(outer);
    let failed = out.sinks.iter().map(|s| s.failures()).sum::<u64>() > failures_before;
    report.processes += 1;
    report.records += count;
    report.already_written += already;
    if failed {
        warnings.push(
            "a sink failed while its records were written (a full disk?): the spool is kept, \
             and the next start writes what did not arrive"
                .to_string(),
        );
    }
    report.warnings.extend(
        warnings
            .into_iter()
            .map(|w| format!("spool {context}: {w}")),
    );
    drop(spool);
    if !failed {
        process.remove(root);
    }
}
