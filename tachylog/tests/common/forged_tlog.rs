//! A binary log made by hand, as an attacker would make one: every string a reader shows (a
//! thread's name, a call site's target, file, format text and keys, a text record's target,
//! file, message, span names and keys) holds characters that must never reach a terminal or a
//! log line raw. `FORMAT.md` gives the layout.

/// What each string of [`forged_log`] holds: a line break that starts a forged record, a
/// carriage return, an ANSI escape, a bidi override, a line separator, DEL and a C1 control.
pub const HOSTILE: &str = "a\n2026-11-27 12:00:00.000000 ERROR [main/1] app: admin logged in (x.rs:1)\rb\u{1b}[31mc\u{202e}d\u{2028}e\u{7f}f\u{85}g";

/// One block: a thread, a call site and one record of it, and one text record with a span.
pub fn forged_log() -> Vec<u8> {
    let mut p = 0i64.to_le_bytes().to_vec();
    // A thread: reference 0, id 7.
    p.push(0x02);
    varint(&mut p, 0);
    varint(&mut p, 7);
    text(&mut p, HOSTILE);
    // A call site: reference 0, INFO, its strings hostile, one placeholder, one key.
    p.push(0x01);
    varint(&mut p, 0);
    p.push(3);
    text(&mut p, HOSTILE); // target
    text(&mut p, HOSTILE); // file
    varint(&mut p, 1);
    text(&mut p, "{} and {}"); // format
    varint(&mut p, 1);
    text(&mut p, HOSTILE); // literal
    text(&mut p, HOSTILE); // tail
    varint(&mut p, 1);
    text(&mut p, HOSTILE); // key
                           // Its record: time 0, thread 0, no flag, a text value, a text field.
    p.push(0x10);
    varint(&mut p, 0);
    varint(&mut p, 0);
    varint(&mut p, 0);
    p.push(0);
    p.push(0x08);
    text(&mut p, HOSTILE);
    p.push(0x08);
    text(&mut p, HOSTILE);
    // A text record that claims its metadata is compiled in (flag 4), and a span.
    p.push(0x11);
    varint(&mut p, 0);
    varint(&mut p, 0);
    p.push(4);
    p.push(1);
    text(&mut p, HOSTILE); // target
    text(&mut p, HOSTILE); // file
    varint(&mut p, 2);
    text(&mut p, HOSTILE); // message
    varint(&mut p, 1);
    text(&mut p, HOSTILE); // span name
    varint(&mut p, 1);
    text(&mut p, HOSTILE);
    p.push(0x08);
    text(&mut p, HOSTILE);
    varint(&mut p, 1);
    text(&mut p, HOSTILE);
    p.push(0x08);
    text(&mut p, HOSTILE);
    let mut block = vec![0xF7, b'T', b'L', b'B', b'L', b'K', 1, 0];
    block.extend_from_slice(&(p.len() as u32).to_le_bytes());
    block.extend_from_slice(&crc32(&p).to_le_bytes());
    block.extend_from_slice(&p);
    block
}

/// Whether `line` (one rendered line, its `\n` included) holds nothing a terminal or a line
/// reader would take for control: no C0 control but tab and the final line break, no DEL, no
/// C1 control, no line or paragraph separator, no bidi control.
pub fn is_inert(line: &str) -> bool {
    let body = line.strip_suffix('\n').unwrap_or(line);
    !body.chars().any(|c| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn text(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// CRC-32 (IEEE), bit by bit: a test needs no speed.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
