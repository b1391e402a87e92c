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

mod tail;

use super::output::Output;
use crate::binary::decoder::Decoded;
use crate::format::Format;
use crate::read::{dead_processes, DeadProcess, DeadSpool};
use std::path::Path;
use std::sync::Mutex;
use tail::SinkTail;

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
    for record in spool.records(true) {
        count += 1;
        first = first.min(record.unix_nanos);
        last = last.max(record.unix_nanos);
    }
    let already = find_written(&spool, out, count, (first, last), &mut warnings);
    // Pass three: the rest, to every sink that takes them.
    let mut skip = vec![false; out.sinks.len()];
    let mut records = spool.records(false);
    let most_verbose = out.sinks.iter().map(|s| s.min_level()).max();
    let mut too_verbose = 0usize;
    for (ordinal, record) in (&mut records).enumerate() {
        for (i, held) in already.iter().enumerate() {
            skip[i] = held.as_ref().is_some_and(|h| h[ordinal]);
        }
        if most_verbose.is_none_or(|level| record.level > level) {
            too_verbose += 1;
        }
        out.write_recovered(&crate::read::view_of(&record), &skip);
    }
    warnings.extend(records.warnings);
    if too_verbose > 0 {
        warnings.push(format!(
            "{too_verbose} recovered record(s) are more verbose than any of this logger's \
             sinks takes: not written"
        ));
    }
    out.flush();
    report.processes += 1;
    report.records += count;
    report.already_written += already
        .iter()
        .flatten()
        .map(|held| held.iter().filter(|h| **h).count())
        .sum::<usize>();
    report.warnings.extend(
        warnings
            .into_iter()
            .map(|w| format!("spool {context}: {w}")),
    );
    drop(spool);
    process.remove(root);
}

/// Pass two: for each sink with files, which records (by their order in the stream) its files
/// already hold; and the torn ends mended.
fn find_written(
    spool: &DeadSpool<'_>,
    out: &mut Output,
    count: usize,
    span: (i64, i64),
    warnings: &mut Vec<String>,
) -> Vec<Option<Vec<bool>>> {
    let mut tails: Vec<Option<SinkTail>> = Vec::with_capacity(out.sinks.len());
    for sink in out.sinks.iter_mut() {
        let files = sink.recovery_files(&spool.marks, span);
        let binary = sink.format() == Format::Binary;
        let tail = SinkTail::read(files, binary, warnings);
        tails.push((!tail.is_empty()).then_some(tail));
    }
    if tails.iter().all(Option::is_none) {
        return vec![None; out.sinks.len()];
    }
    let mut held: Vec<Option<Vec<bool>>> = tails
        .iter()
        .map(|t| t.as_ref().map(|_| vec![false; count]))
        .collect();
    for (ordinal, mut record) in spool.records(true).enumerate().take(count) {
        for (i, tail) in tails.iter_mut().enumerate() {
            let Some(tail) = tail else { continue };
            if taken_by(tail, &mut record, out, i) {
                if let Some(Some(h)) = held.get_mut(i) {
                    h[ordinal] = true;
                }
            }
        }
    }
    // Lines there that no record took stay as they are: another process's, or the dead
    // process's own of records its last cut had committed (a cut's lengths are taken before
    // its batch is written).
    for tail in tails.iter().flatten() {
        tail.mend_torn_ends(warnings);
    }
    held
}

/// Whether `tail` holds `record` as sink `index` writes it, unmarked or marked, at about its
/// time (see [`Output::render_line_for_matching`]); a binary log's record by its thread, level,
/// line and message.
fn taken_by(tail: &mut SinkTail, record: &mut Decoded, out: &mut Output, index: usize) -> bool {
    if record.level > out.sinks[index].min_level() {
        return false;
    }
    if out.sinks[index].format() == Format::Binary {
        let line = record.site.as_ref().map_or(record.line, |s| s.line);
        return tail.take_record((record.thread.id, record.level, line), &record.message);
    }
    for recovered in [false, true] {
        record.recovered = recovered;
        let view = crate::read::view_of(record);
        if out
            .render_line_for_matching(&view, index, tail::ANY_BYTE)
            .is_some_and(|line| tail.take_line(line))
        {
            return true;
        }
    }
    false
}
