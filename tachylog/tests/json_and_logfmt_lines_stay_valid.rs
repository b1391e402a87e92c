//! Per-sink formats: the same records as text, JSON lines and logfmt. Every JSON line parses,
//! whatever the message holds (quotes, backslashes, newlines, ANSI escapes, invalid UTF-8 made
//! lossy, U+2028), and carries the record's metadata with native types.

mod common;

#[test]
fn one_record_three_formats() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let (text, json, logfmt) = (
        dir.path().join("a.log"),
        dir.path().join("a.jsonl"),
        dir.path().join("a.logfmt"),
    );
    let guard = common::expect_init(
        tachylog::builder()
            .utc(true)
            .file(&text)
            .file_with(
                &json,
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .file_with(
                &logfmt,
                tachylog::SinkOptions::new().format(tachylog::Format::Logfmt),
            )
            .init(),
    );
    let hostile = [
        "plain".to_string(),
        "quote \" backslash \\ brace {}".to_string(),
        "two\nlines\r\nand a tab\t".to_string(),
        "\u{1b}[31mred\u{1b}[0m and \u{7f} and \u{2028} and \u{202e}".to_string(),
        String::new(),
    ];
    for (i, message) in hostile.iter().enumerate() {
        tachylog::warn!("{} {}", i, message);
    }
    tachylog::error!("bytes {}", tachylog::lossy(b"ok \xff\xfe done"));
    log::info!(target: "facade::target", "from log {}", 7);
    drop(guard);

    let json_text = std::fs::read_to_string(&json).unwrap();
    let records: Vec<serde_json::Value> = json_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("invalid JSON {l:?}: {e}")))
        .collect();
    assert_eq!(records.len(), hostile.len() + 2);
    for (i, message) in hostile.iter().enumerate() {
        assert_eq!(
            records[i]["message"],
            format!("{i} {message}"),
            "messages survive exactly"
        );
        assert_eq!(records[i]["level"], "WARN");
        assert!(records[i]["line"].is_u64() && records[i]["tid"].is_u64());
        assert_eq!(records[i]["target"], module_path!());
        assert!(records[i]["file"]
            .as_str()
            .unwrap()
            .ends_with("json_and_logfmt_lines_stay_valid.rs"));
        let ts = records[i]["timestamp"].as_str().unwrap();
        assert!(
            ts.len() == 27 && ts.as_bytes()[10] == b'T' && ts.ends_with('Z'),
            "{ts}"
        );
        assert!(ts.parse::<jiff::Timestamp>().is_ok(), "{ts} is RFC 3339");
    }
    assert_eq!(
        records[hostile.len()]["message"],
        "bytes ok \u{fffd}\u{fffd} done"
    );
    assert_eq!(records[hostile.len() + 1]["target"], "facade::target");
    assert_eq!(records[hostile.len() + 1]["message"], "from log 7");

    // Text and logfmt: one record, one line, whatever the message.
    for path in [&text, &logfmt] {
        let lines = std::fs::read_to_string(path).unwrap();
        assert_eq!(lines.lines().count(), hostile.len() + 2, "{lines}");
        assert!(
            !lines.contains('\u{1b}') && !lines.contains('\u{2028}'),
            "{lines}"
        );
    }
    let logfmt_text = std::fs::read_to_string(&logfmt).unwrap();
    let first = logfmt_text.lines().next().unwrap();
    assert!(
        first.starts_with("ts=")
            && first.contains(" level=warn ")
            && first.contains(" msg=\"0 plain\" "),
        "{first}"
    );
    assert!(
        logfmt_text.contains(r#"msg="1 quote \" backslash \\ brace {}""#),
        "{logfmt_text}"
    );
}
