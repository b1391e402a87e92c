//! `tachylog::lossy(&bytes)` logs bytes as text the way `String::from_utf8_lossy` shows them:
//! each invalid sequence becomes U+FFFD, valid UTF-8 is unchanged, and the result is escaped
//! like any other message.

mod common;

use std::time::Duration;

#[test]
fn invalid_utf8_is_logged_lossy() {
    let _watchdog = common::watchdog("invalid_utf8_is_logged_lossy", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lossy.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    let cases: [&[u8]; 7] = [
        b"ab\xffcd",
        b"",
        "h\u{e9}llo \u{1F600}".as_bytes(),
        b"truncated \xe2\x82",
        b"\xc0\x80 overlong, \xed\xa0\x80 surrogate",
        b"\xff\xfe\xfd",
        b"x\ny",
    ];
    tachylog::info!("bytes {}", tachylog::lossy(b"ab\xffcd"));
    for (i, bytes) in cases.iter().enumerate() {
        tachylog::info!("case {}: [{}]", i, tachylog::lossy(bytes));
    }
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), cases.len() + 1, "unexpected lines:\n{text}");
    assert_eq!(lines[0].message, "bytes ab\u{FFFD}cd");
    for (i, bytes) in cases.iter().enumerate() {
        let expected = String::from_utf8_lossy(bytes).replace('\n', r"\n");
        assert_eq!(
            lines[i + 1].message,
            format!("case {i}: [{expected}]"),
            "bytes {bytes:?}"
        );
    }
}
