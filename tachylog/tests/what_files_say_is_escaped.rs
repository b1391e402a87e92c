//! What a program reads from a file it did not write (a binary log handed to `tachylog::read`
//! or `tachylog cat`, a dead process's spool) is escaped like a message in every line it
//! renders: thread names, targets, file names, format text, span names and field keys. A
//! crafted file cannot make a reader print a forged record, move the cursor, colour the
//! terminal or reorder what a reader sees; a call site's claim that its metadata was compiled
//! in is not believed. The live process keeps its fast path only for what it compiled itself.

mod common;

#[cfg(unix)]
use common::forged_tlog::{crc32, HOSTILE};
use common::forged_tlog::{forged_log, is_inert};

#[test]
fn a_crafted_binary_log_reads_back_escaped_in_every_format() {
    let bytes = forged_log();
    let zone = tachylog::TimeZone::utc();
    let mut renderers = [
        (
            "text",
            tachylog::read::Renderer::text(tachylog::Pattern::default(), zone.clone()),
        ),
        (
            "text with every field",
            tachylog::read::Renderer::text(
                tachylog::Pattern::parse(
                    "{time} {level} {thread} {tid} {target} {file}:{line} {message}",
                )
                .unwrap(),
                zone.clone(),
            ),
        ),
        ("json", tachylog::read::Renderer::json(zone.clone())),
        ("logfmt", tachylog::read::Renderer::logfmt(zone)),
    ];
    let mut reader = tachylog::read::Reader::new(&bytes[..]);
    let mut records = 0;
    while let Some(record) = reader.next_record() {
        let record = record.expect("the crafted block is intact");
        records += 1;
        for (name, renderer) in &mut renderers {
            let mut line = Vec::new();
            renderer.render(record, &mut line);
            let line = String::from_utf8(line).unwrap();
            assert_eq!(line.matches('\n').count(), 1, "{name}: {line:?}");
            assert!(is_inert(&line), "{name}: raw control characters: {line:?}");
            assert!(!line.contains("\nERROR"), "{name}: {line:?}");
        }
        // The API gives the strings as they are, for a program to judge.
        assert!(record.target().contains('\n') && record.file().contains('\u{202e}'));
    }
    assert_eq!(records, 2);
}

/// A dead process's spool whose definitions and ring header hold the same strings: its
/// recovered records are escaped too.
#[cfg(unix)]
#[test]
fn a_spool_with_crafted_names_recovers_escaped() {
    if let Some(log) = common::child_role("a_spool_with_crafted_names_recovers_escaped") {
        std::mem::forget(common::expect_init(
            tachylog::builder()
                .file(&log)
                .spool(log.with_extension("spool"))
                .init(),
        ));
        tachylog::__private::hold_backend(true);
        tachylog::info!(field = 1u64; "plain {} record", 7u64);
        // SAFETY: killing our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        common::await_fatal_signal(std::time::Duration::from_secs(30));
    }
    let _serial = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("dead.log");
    let child = common::run_child_with_log(
        "a_spool_with_crafted_names_recovers_escaped",
        &log,
        std::time::Duration::from_secs(60),
    );
    assert!(!child.status.success(), "{child}");
    let root = log.with_extension("spool");
    let process = std::fs::read_dir(&root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    forge_spool(&process);
    let own = dir.path().join("own.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&own)
            .file_with(
                dir.path().join("own.jsonl"),
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .pattern("{time} {level} [{thread}/{tid}] {target}: {message} ({file}:{line})")
            .spool(&root)
            .init(),
    );
    drop(guard);
    for path in [own, dir.path().join("own.jsonl")] {
        let text = std::fs::read_to_string(&path).unwrap();
        let recovered: Vec<&str> = text
            .split_inclusive('\n')
            .filter(|l| l.contains("recovered"))
            .collect();
        assert!(recovered.iter().any(|l| l.contains("plain")), "{text}");
        for line in text.split_inclusive('\n') {
            assert!(is_inert(line), "{}: {line:?}", path.display());
            assert!(
                !line.starts_with("2026-11-27 12:00:00.000000 ERROR"),
                "{line:?}"
            );
        }
    }
}

/// Appends a definition of the dead process's call site whose strings are [`HOSTILE`] (later
/// definitions of a key replace earlier ones), and gives its ring's thread that name.
#[cfg(unix)]
fn forge_spool(process: &std::path::Path) {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let defs = std::fs::read(process.join("defs")).unwrap();
    // The first entry is the call site's definition: its key is the 8 bytes after its tag.
    let key = &defs[9..17];
    let mut payload = vec![0x01];
    payload.extend_from_slice(key);
    payload.push(3);
    for text in [HOSTILE, HOSTILE] {
        payload.extend_from_slice(&(text.len() as u32).to_le_bytes());
        payload.extend_from_slice(text.as_bytes());
    }
    payload.extend_from_slice(&9u32.to_le_bytes());
    let literal = format!("plain {HOSTILE} ");
    let format = format!("{literal}{{}} record");
    payload.extend_from_slice(&(format.len() as u32).to_le_bytes());
    payload.extend_from_slice(format.as_bytes());
    payload.extend_from_slice(&1u32.to_le_bytes());
    payload.extend_from_slice(&(literal.len() as u32).to_le_bytes());
    payload.extend_from_slice(literal.as_bytes());
    payload.extend_from_slice(&(" record".len() as u32).to_le_bytes());
    payload.extend_from_slice(b" record");
    payload.extend_from_slice(&1u32.to_le_bytes());
    payload.extend_from_slice(&(HOSTILE.len() as u32).to_le_bytes());
    payload.extend_from_slice(HOSTILE.as_bytes());
    let mut entry = (payload.len() as u32).to_le_bytes().to_vec();
    entry.extend_from_slice(&crc32(&payload).to_le_bytes());
    entry.extend_from_slice(&payload);
    std::fs::OpenOptions::new()
        .append(true)
        .open(process.join("defs"))
        .unwrap()
        .write_all(&entry)
        .unwrap();
    let ring = std::fs::read_dir(process)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("ring-")
        })
        .unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(ring).unwrap();
    let mut name = (HOSTILE.len() as u16).to_le_bytes().to_vec();
    name.extend_from_slice(HOSTILE.as_bytes());
    file.write_all_at(&name, 2048 + 96).unwrap();
}
