//! A binary log cut at any byte, or with any byte flipped, reads back without a panic: the
//! records of the intact blocks, in order, and one damage report naming where the damage
//! starts. A cut file gives a prefix of the records; a flipped byte loses one block at most.

mod common;

use tachylog::read::{ReadError, Reader};

/// What identifies a record: its time and message.
type Key = (i64, String);

/// Reads `bytes`: the records' keys, and the damage reports' offsets.
fn read(bytes: &[u8]) -> (Vec<Key>, Vec<u64>) {
    let (mut records, mut damage) = (Vec::new(), Vec::new());
    let mut reader = Reader::new(bytes);
    while let Some(item) = reader.next_record() {
        match item {
            Ok(record) => records.push((record.unix_nanos(), record.message().to_string())),
            Err(ReadError::Damaged { offset, .. }) => damage.push(offset),
            Err(e) => panic!("not damage: {e}"),
        }
    }
    (records, damage)
}

/// A real binary log of three blocks or more (a flush closes each).
fn real_log() -> Vec<u8> {
    common::binary_log_of(|| {
        for block in 0..3u64 {
            for i in 0..6u64 {
                tachylog::info!(block, i; "block {} record {} {:?}", block, i, "text\n");
            }
            log::warn!(n = block; "from log {}", block);
            tachylog::flush();
        }
    })
}

#[test]
fn a_log_cut_at_any_byte_reads_as_a_prefix_and_one_report_at_most() {
    let bytes = real_log();
    let (all, damage) = read(&bytes);
    assert_eq!(all.len(), 21);
    assert!(damage.is_empty());
    let starts = common::block_starts(&bytes);
    // A flush closes each block; on a slow machine (Wine) the back end's own idle flush may
    // close one early too, which only adds a block to cut through.
    assert!(starts.len() >= 3, "a block per flush at least: {starts:?}");
    for cut in 0..bytes.len() {
        let (records, damage) = read(&bytes[..cut]);
        assert_eq!(records[..], all[..records.len()], "cut at {cut}");
        // Cut exactly between blocks: nothing damaged; else one report, at the cut block.
        if starts.contains(&cut) || cut == 0 {
            assert!(damage.is_empty(), "cut at {cut}: {damage:?}");
        } else {
            let block = *starts.iter().rev().find(|&&s| s < cut).unwrap() as u64;
            assert_eq!(damage, [block], "cut at {cut}");
        }
    }
}

#[test]
fn a_flipped_byte_loses_its_block_only_and_is_reported() {
    let bytes = real_log();
    let (all, _) = read(&bytes);
    let starts = common::block_starts(&bytes);
    for at in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut damaged = bytes.clone();
            damaged[at] ^= mask;
            let (records, damage) = read(&damaged);
            let block = starts.iter().rev().find(|&&s| s <= at).unwrap();
            assert_eq!(damage, [*block as u64], "byte {at} ^ {mask:#x}");
            // The records read are the others, in order.
            let mut rest = all.iter();
            for record in &records {
                assert!(
                    rest.any(|r| r == record),
                    "byte {at}: {record:?} out of order"
                );
            }
            assert!(
                records.len() >= all.len() - 7,
                "byte {at}: more than a block lost"
            );
        }
    }
}

#[test]
fn garbage_between_blocks_is_one_report_and_the_blocks_around_it_survive() {
    let bytes = real_log();
    let (all, _) = read(&bytes);
    let starts = common::block_starts(&bytes);
    let mut mixed = bytes[..starts[1]].to_vec();
    mixed.extend_from_slice(b"\xF7TLBLK plain text that starts like a block\n");
    mixed.extend_from_slice(&bytes[starts[1]..]);
    let (records, damage) = read(&mixed);
    assert_eq!(records, all);
    assert_eq!(damage, [starts[1] as u64]);
}
