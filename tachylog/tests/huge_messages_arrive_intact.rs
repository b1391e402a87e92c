//! A record larger than the ring still gets through, whole, and the records around it too: a
//! 64 MiB message with the default 1 MiB ring, and records of 4 KiB and 100 KiB with a 4 KiB
//! ring.

mod common;

use std::time::Duration;

/// `len` bytes of printable ASCII from a simple generator, so that a lost, repeated or
/// reordered piece changes the text.
fn payload(len: usize, seed: u64) -> String {
    let mut state = seed | 1;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            b'!' + (state % 94) as u8
        })
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// Finds the line whose message starts with `label`, and asserts the rest is `body`.
fn assert_message(lines: &[common::Line<'_>], label: &str, body: &str) {
    let line = lines
        .iter()
        .find(|l| l.message.starts_with(label))
        .unwrap_or_else(|| panic!("no record {label:?} in the log"));
    let got = &line.message[label.len()..];
    assert_eq!(got.len(), body.len(), "{label:?}: message length differs");
    if let Some(at) = got.bytes().zip(body.bytes()).position(|(a, b)| a != b) {
        panic!(
            "{label:?}: message differs from byte {at}: got {:?}, expected {:?}",
            &got[at..(at + 40).min(got.len())],
            &body[at..(at + 40).min(body.len())]
        );
    }
}

#[test]
fn message_of_64_mib_with_default_ring() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "message_of_64_mib_with_default_ring",
        Duration::from_secs(120),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    let big = payload(64 << 20, 0x5eed);
    tachylog::info!("before");
    tachylog::info!("big: {}", big);
    tachylog::info!("after");
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    // Compare short prefixes only: a failure must not print 64 MiB.
    let starts: Vec<String> = lines
        .iter()
        .map(|l| l.message.chars().take(6).collect())
        .collect();
    assert_eq!(starts.len(), 3, "expected 3 lines, got starts {starts:?}");
    assert!(
        lines[0].message == "before"
            && lines[1].message.starts_with("big: ")
            && lines[2].message == "after",
        "lines around the big record: {starts:?}"
    );
    assert_message(&lines, "big: ", &big);
}

#[test]
fn records_larger_than_a_tiny_ring() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("records_larger_than_a_tiny_ring", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.log");
    let guard = common::expect_init(tachylog::builder().file(&path).ring_capacity(4096).init());

    let sizes = [4000, 4096, 4097, 8192, 100 << 10];
    let bodies: Vec<String> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| payload(n, i as u64 + 1))
        .collect();
    common::log_numbered("small", 100);
    for (i, body) in bodies.iter().enumerate() {
        tachylog::info!("big {}: {}", i, body);
        tachylog::info!("small after big {}", i);
    }
    common::log_numbered("tail", 1_000);
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "small", 100);
    common::assert_numbered(&lines, "tail", 1_000);
    for (i, body) in bodies.iter().enumerate() {
        assert_message(&lines, &format!("big {i}: "), body);
        let big = lines
            .iter()
            .position(|l| l.message.starts_with(&format!("big {i}: ")));
        let small = lines
            .iter()
            .position(|l| l.message == format!("small after big {i}"));
        assert!(
            small.is_some() && big < small,
            "record after big {i} missing or out of order"
        );
    }
    assert_eq!(
        lines.len(),
        100 + 2 * sizes.len() + 1_000,
        "unexpected extra lines"
    );
}
