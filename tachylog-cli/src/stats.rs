//! `tachylog stats`: per file, the records by level, the time they span, the bytes per
//! record, the call sites and threads seen, and the damage found.

use crate::progress::{total_bytes, Progress};
use crate::Outcome;
use std::collections::HashSet;
use std::path::PathBuf;
use tachylog::read::{ReadError, Reader};

pub(crate) fn run(files: &[PathBuf]) -> Result<Outcome, String> {
    let mut outcome = Outcome::Clean;
    for file in files {
        let mut reader = Reader::open(file).map_err(|e| e.to_string())?;
        let mut progress = Progress::on_stderr(total_bytes(std::slice::from_ref(file)));
        let mut by_level = [0u64; 5];
        let (mut records, mut damaged, mut skipped) = (0u64, 0u64, 0u64);
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        let mut sites = HashSet::new();
        let mut last_site: Option<(String, u32, String)> = None;
        let mut threads = HashSet::new();
        while let Some(record) = reader.next_record() {
            match record {
                Ok(record) => {
                    records += 1;
                    by_level[record.level() as usize - 1] += 1;
                    first = first.min(record.unix_nanos());
                    last = last.max(record.unix_nanos());
                    if let Some(format) = record.format() {
                        let key = (record.file(), record.line(), format);
                        if last_site
                            .as_ref()
                            .is_none_or(|(f, l, m)| (f.as_str(), *l, m.as_str()) != key)
                        {
                            let owned = (key.0.to_string(), key.1, key.2.to_string());
                            sites.insert(owned.clone());
                            last_site = Some(owned);
                        }
                    }
                    if !threads.contains(&record.thread_id()) {
                        threads.insert(record.thread_id());
                    }
                }
                Err(ReadError::Damaged {
                    offset,
                    reason,
                    skipped: bytes,
                    ..
                }) => {
                    progress.erase();
                    eprintln!(
                        "tachylog: {}: damaged at byte {offset}: {reason} ({bytes} bytes skipped)",
                        file.display()
                    );
                    damaged += 1;
                    skipped += bytes;
                    outcome = Outcome::Damaged;
                }
                Err(e) => return Err(format!("{}: {e}", file.display())),
            }
            progress.record(|| reader.offset());
        }
        progress.erase();
        let bytes = reader.offset();
        println!("{}", file.display());
        println!("  records      {records}");
        for (name, count) in ["error", "warn", "info", "debug", "trace"]
            .iter()
            .zip(by_level)
        {
            println!("  {name:<12} {count}");
        }
        if records > 0 {
            let span = (last - first) as f64 / 1e9;
            println!("  time span    {span:.6} s");
            println!("  bytes/record {:.1}", bytes as f64 / records as f64);
        }
        println!("  bytes        {bytes}");
        println!("  call sites   {}", sites.len());
        println!("  threads      {}", threads.len());
        println!("  damaged      {damaged} stretch(es), {skipped} bytes");
    }
    Ok(outcome)
}
