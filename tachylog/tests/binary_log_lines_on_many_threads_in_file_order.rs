//! `tachylog::read::lines_in_parallel` on a real binary log of many blocks: on 1 to 8 threads it
//! gives what the reader gives one record at a time, in file order, with each damage report at
//! its place, blocks larger than the bytes it keeps in flight included; a panic of the line
//! function reaches the caller; an error of the writer stops it.

mod common;

use std::io;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use tachylog::read::{lines_in_parallel, ReadError, Reader, Record};

/// What reading yields, in order: a record's message, or where damage starts.
#[derive(Debug, PartialEq)]
enum Item {
    Line(String),
    Damage(u64),
}

/// A real binary log of 24 blocks of 1 to 400 records (a flush closes each).
fn real_log() -> Vec<u8> {
    common::binary_log_of(|| {
        for block in 0..24u64 {
            for i in 0..(block * 37 % 400 + 1) {
                match i % 3 {
                    0 => tachylog::info!(
                        "block {} record {} took {:.3} ms",
                        block,
                        i,
                        i as f64 / 7.0
                    ),
                    1 => tachylog::warn!(table = "orders"; "block {} record {} scanned", block, i),
                    _ => log::error!("block {} record {} from log", block, i),
                }
            }
            tachylog::flush();
        }
    })
}

fn damage_at(error: ReadError) -> Item {
    match error {
        ReadError::Damaged { offset, .. } => Item::Damage(offset),
        other => panic!("not damage: {other}"),
    }
}

/// The reader's records one by one.
fn one_by_one(bytes: &[u8]) -> Vec<Item> {
    let mut items = Vec::new();
    let mut reader = Reader::new(bytes);
    while let Some(item) = reader.next_record() {
        items.push(match item {
            Ok(record) => Item::Line(record.message().to_string()),
            Err(e) => damage_at(e),
        });
    }
    items
}

fn message_line() -> impl FnMut(&Record, &mut Vec<u8>) {
    |record, out| {
        out.extend_from_slice(record.message().as_bytes());
        out.push(b'\n');
    }
}

/// The same through `lines_in_parallel` on `threads` threads.
fn in_parallel(bytes: &[u8], threads: usize) -> Vec<Item> {
    let mut items = Vec::new();
    let threads = NonZeroUsize::new(threads).unwrap();
    lines_in_parallel(&mut Reader::new(bytes), threads, message_line, |block| {
        let text = std::str::from_utf8(block.lines).unwrap();
        items.extend(text.lines().map(|line| Item::Line(line.to_string())));
        items.extend(block.damage.map(damage_at));
        Ok(())
    })
    .unwrap();
    items
}

#[test]
fn every_thread_count_gives_the_records_in_file_order_damage_included() {
    let clean = real_log();
    let starts = common::block_starts(&clean);
    assert!(starts.len() >= 24, "{} blocks", starts.len());
    // A flipped byte in block 7, garbage between blocks 12 and 13, the last block cut short.
    let mut damaged = clean.clone();
    damaged[starts[7] + 40] ^= 0x55;
    damaged.splice(
        starts[13]..starts[13],
        b"garbage between blocks".iter().copied(),
    );
    damaged.truncate(damaged.len() - 10);
    for bytes in [&clean, &damaged] {
        let expected = one_by_one(bytes);
        let records = expected
            .iter()
            .filter(|i| matches!(i, Item::Line(_)))
            .count();
        assert!(records > 3000, "{records} records");
        for threads in [1, 2, 3, 8] {
            assert!(in_parallel(bytes, threads) == expected, "{threads} threads");
        }
    }
    let damage = one_by_one(&damaged)
        .into_iter()
        .filter(|item| matches!(item, Item::Damage(_)))
        .count();
    assert_eq!(damage, 3, "one report for each damaged stretch");
}

#[test]
fn blocks_larger_than_the_bytes_in_flight_are_read_whole_and_in_order() {
    // Two records of 70 MB (each its own block, past the 64 MiB the reading keeps in flight
    // beyond the first block) between small blocks.
    let huge = |fill: char| fill.to_string().repeat(70 << 20);
    let bytes = common::binary_log_of(|| {
        for round in 0..2u64 {
            for i in 0..50u64 {
                tachylog::info!("round {} small {}", round, i);
            }
            tachylog::flush();
            tachylog::info!(
                "round {} huge {}",
                round,
                huge(if round == 0 { 'a' } else { 'b' })
            );
            tachylog::flush();
        }
        tachylog::info!("last");
    });
    let expected = one_by_one(&bytes);
    assert_eq!(expected.len(), 103);
    for (at, fill) in [(50, 'a'), (101, 'b')] {
        let Item::Line(line) = &expected[at] else {
            panic!("{:?}", expected[at]);
        };
        assert_eq!(line.len(), "round 0 huge ".len() + (70 << 20));
        assert!(line.ends_with(fill), "whole, not cut");
    }
    for threads in [1, 2, 3] {
        assert!(
            in_parallel(&bytes, threads) == expected,
            "{threads} threads"
        );
    }
}

#[test]
fn a_panic_of_the_line_function_reaches_the_caller() {
    let bytes = real_log();
    let make_line = || {
        |record: &Record, out: &mut Vec<u8>| {
            assert!(
                !record.message().starts_with("block 9 record 5 "),
                "line refused"
            );
            out.push(b'\n');
        }
    };
    let threads = NonZeroUsize::new(2).unwrap();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        lines_in_parallel(&mut Reader::new(&bytes[..]), threads, make_line, |_| Ok(()))
    }));
    let payload = outcome.expect_err("the panic is resumed");
    let message = payload.downcast_ref::<&str>().copied();
    assert_eq!(message, Some("line refused"));
}

#[test]
fn an_error_of_the_writer_stops_the_reading_and_is_returned() {
    let bytes = real_log();
    for threads in [1, 2] {
        let mut calls = 0;
        let threads = NonZeroUsize::new(threads).unwrap();
        let mut reader = Reader::new(&bytes[..]);
        let outcome = lines_in_parallel(&mut reader, threads, message_line, |_| {
            calls += 1;
            match calls {
                3 => Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "reader went away",
                )),
                _ => Ok(()),
            }
        });
        assert_eq!(outcome.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(calls, 3, "nothing is written after the error");
        assert!(
            reader.offset() < bytes.len() as u64,
            "the reading stopped early"
        );
    }
}
