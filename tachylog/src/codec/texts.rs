//! A block's table of repeated texts (format version 2): a message value or call-site field
//! that is a short text is defined once per block and then referred to by its number, so a
//! path, a table name or a host logged again and again costs a byte or two a record, not its
//! length. Writer side: [`TextTable`]; the reader keeps the texts a block defines, in order.

use super::wire::{put_str, put_varint, value};

/// Texts longer than this are written in full: long texts seldom repeat.
const MAX_INTERNED: usize = 64;
/// Texts a block defines at most; later ones are written in full. Their numbers then take at
/// most two bytes.
pub(crate) const MAX_TEXTS: u32 = 1 << 14;
/// Slots of the writer's cache of recent texts, by hash. A direct-mapped cache, not a hash
/// map: a look-up costs one probe whatever the texts (a caller's data cannot make it
/// slower), and a text whose slot was taken by another is defined again, which costs bytes,
/// never correctness.
const SLOTS: usize = 1 << SLOT_BITS;
const SLOT_BITS: u32 = 9;

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The block the slot was filled in ([`TextTable::generation`]).
    generation: u32,
    number: u32,
    /// Where the text's bytes are in the block.
    offset: u32,
    len: u32,
}

/// The writer's side: which texts the open block defined, and where.
pub(crate) struct TextTable {
    slots: Box<[Slot; SLOTS]>,
    /// Changes with every block, so that the slots need no clearing.
    generation: u32,
    /// Texts the open block defined.
    count: u32,
}

impl Default for TextTable {
    fn default() -> Self {
        TextTable::new()
    }
}

impl TextTable {
    pub(crate) fn new() -> Self {
        TextTable {
            slots: Box::new([Slot::default(); SLOTS]),
            generation: 1,
            count: 0,
        }
    }

    /// Forgets every text: a new block, or bytes taken back off the open one.
    pub(crate) fn reset(&mut self, count: u32) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.fill(Slot::default());
            self.generation = 1;
        }
        self.count = count;
    }

    /// Texts the open block defined so far.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// Appends `text` to `block` as a value: a reference to the same text defined earlier in
    /// the block, a definition, or the text in full. Inlined where a record's values are
    /// written: its call's saved registers were a fifth of its instructions.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn put(&mut self, block: &mut Vec<u8>, text: &str) {
        let len = text.len();
        let Some(slot) = self.slot_for(block.len(), text.as_bytes()) else {
            block.push(value::STR);
            put_str(block, text);
            return;
        };
        if let Some(number) = self.defined(slot, block, text.as_bytes()) {
            put_reference(block, number);
            return;
        }
        block.push(value::TEXT_NEW);
        put_varint(block, len as u64);
        self.define(slot, block.len(), len);
        block.extend_from_slice(text.as_bytes());
    }

    /// [`TextTable::put`] for a text already appended to `block` at `start + 2`, after two
    /// bytes reserved at `start` for its tag and length: a text rendered straight into the
    /// block, with no copy when it is new. The text must be UTF-8 and nothing may follow it.
    pub(crate) fn put_appended(&mut self, block: &mut Vec<u8>, start: usize) {
        let at = start + 2;
        let len = block.len() - at;
        let Some(slot) = self.slot_for(at, &block[at..]) else {
            block[start] = value::STR;
            if len < 0x80 {
                block[start + 1] = len as u8;
            } else {
                // The byte reserved for the length becomes its varint's bytes.
                let mut length = Vec::new();
                put_varint(&mut length, len as u64);
                block.splice(start + 1..at, length);
            }
            return;
        };
        if let Some(number) = self.defined(slot, &block[..at], &block[at..]) {
            block.truncate(start);
            put_reference(block, number);
            return;
        }
        // An interned text is at most `MAX_INTERNED` bytes: its length takes one byte.
        block[start] = value::TEXT_NEW;
        block[start + 1] = len as u8;
        self.define(slot, at, len);
    }

    /// The cache slot of `text`, to be written at `offset` of the open block; `None` for a
    /// text written in full (too short or too long to repeat usefully, a full table, or an
    /// offset past what a slot keeps).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn slot_for(&self, offset: usize, text: &[u8]) -> Option<usize> {
        // Offsets are kept in 32 bits; a block that long holds one huge record, cut later.
        let far = offset > u32::MAX as usize / 2;
        ((2..=MAX_INTERNED).contains(&text.len()) && self.count < MAX_TEXTS && !far)
            .then(|| hash(text))
    }

    /// The number of `text` if `block` defined it, as the cache's `slot` remembers.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn defined(&self, slot: usize, block: &[u8], text: &[u8]) -> Option<u32> {
        let slot = &self.slots[slot];
        if slot.generation != self.generation || slot.len as usize != text.len() {
            return None;
        }
        let start = slot.offset as usize;
        block
            .get(start..start + text.len())
            .is_some_and(|defined| same_short(defined, text))
            .then_some(slot.number)
    }

    /// Remembers a definition of `len` bytes at `offset` of the open block in `slot`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn define(&mut self, slot: usize, offset: usize, len: usize) {
        self.slots[slot] = Slot {
            generation: self.generation,
            number: self.count,
            offset: offset as u32,
            len: len as u32,
        };
        self.count += 1;
    }
}

/// A value that refers to text number `number` of the block.
#[cfg_attr(not(debug_assertions), inline(always))]
fn put_reference(block: &mut Vec<u8>, number: u32) {
    match u8::try_from(number) {
        Ok(number) if number < 0x80 => block.extend_from_slice(&[value::TEXT_REF, number]),
        _ => {
            block.push(value::TEXT_REF);
            put_varint(block, u64::from(number));
        }
    }
}

/// Whether two texts of the same length (2 to [`MAX_INTERNED`] bytes) are equal, compared a
/// word at a time inline: for texts this short, the call of `memcmp` cost more than the
/// comparison (callgrind, `tachylog-bench`'s `throughput_mix_binary`).
#[cfg_attr(not(debug_assertions), inline(always))]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
    };
    if n >= 8 {
        // Whole words, then the last eight bytes (overlapping the words before them).
        let mut at = 0;
        while at + 8 < n {
            if word(a, at) != word(b, at) {
                return false;
            }
            at += 8;
        }
        return word(a, n - 8) == word(b, n - 8);
    }
    a == b
}

/// A quick hash of a short text (2 bytes or more): its length and its first and last eight
/// bytes (four, or three single bytes, for shorter texts), read with whole-word loads.
#[cfg_attr(not(debug_assertions), inline(always))]
fn hash(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let (head, tail) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        _ => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
            (Some(head), Some(tail)) => (
                u64::from(u32::from_le_bytes(*head)),
                u64::from(u32::from_le_bytes(*tail)),
            ),
            _ => (
                u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8,
                u64::from(bytes[n - 1]),
            ),
        },
    };
    let mixed = (head ^ tail.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ n as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // The top bits: the only ones every input bit reaches through the multiplications.
    (mixed >> (64 - SLOT_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_text_is_defined_once_then_referred_to() {
        let mut table = TextTable::new();
        let mut block = vec![0u8; 16];
        table.put(&mut block, "/api/v1/orders");
        table.put(&mut block, "/api/v1/orders");
        table.put(&mut block, "x");
        assert_eq!(block[16], value::TEXT_NEW);
        assert_eq!(&block[18..32], b"/api/v1/orders");
        assert_eq!(&block[32..34], &[value::TEXT_REF, 0]);
        assert_eq!(&block[34..], &[value::STR, 1, b'x']);
        table.reset(0);
        table.put(&mut block, "/api/v1/orders");
        assert_eq!(block[37], value::TEXT_NEW, "a new block defines it again");
    }

    /// A value rendered straight into the block ends up as the same bytes as the same text
    /// put from a `&str`: in full when too short or too long to share (a length of one byte
    /// or of two), defined once, then referred to, whichever way each was written.
    #[test]
    fn a_text_appended_in_place_is_written_as_a_put_one() {
        let long = "y".repeat(300);
        let texts: Vec<String> = ["", "x", "ab", "/api/v1/orders", "ab", "/api/v1/orders"]
            .into_iter()
            .map(String::from)
            .chain([64, 65, 127, 128].map(|n| "z".repeat(n)))
            .chain([long.clone(), "z".repeat(64), long])
            .collect();
        let mut put = (TextTable::new(), vec![7u8; 3]);
        for text in &texts {
            put.0.put(&mut put.1, text);
        }
        // Every way of mixing the two: text `i` appended in place when bit `i` is set.
        for ways in [0u32, u32::MAX, 0b1010_1010_1010, 0b0101_0101_0101] {
            let (mut table, mut block) = (TextTable::new(), vec![7u8; 3]);
            for (i, text) in texts.iter().enumerate() {
                if ways >> i & 1 == 1 {
                    let start = block.len();
                    block.extend_from_slice(&[0, 0]);
                    block.extend_from_slice(text.as_bytes());
                    table.put_appended(&mut block, start);
                } else {
                    table.put(&mut block, text);
                }
            }
            assert_eq!(block, put.1, "ways {ways:b}");
            assert_eq!(table.count(), put.0.count());
        }
    }

    #[test]
    fn short_texts_are_equal_exactly_when_their_bytes_are() {
        let base: Vec<u8> = (0..MAX_INTERNED as u8).map(|i| b'a' + i % 26).collect();
        for len in 2..=MAX_INTERNED {
            let a = &base[..len];
            assert!(same_short(a, a), "{len}");
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x20;
                assert!(!same_short(a, &b), "{len} bytes, differing at {at}");
            }
            assert!(!same_short(a, &base[..len - 1]), "{len}: lengths differ");
        }
    }

    #[test]
    fn similar_texts_spread_over_the_slots() {
        for make in [
            |i: usize| format!("text-{i}"),
            |i: usize| format!("/api/v1/orders/{i}"),
            |i: usize| format!("{}", i + 10),
        ] {
            let slots: std::collections::HashSet<usize> =
                (0..100).map(|i| hash(make(i).as_bytes())).collect();
            // 100 random slots of 512 are about 91 distinct ones.
            assert!(slots.len() > 80, "{} slots for {}", slots.len(), make(0));
        }
    }

    #[test]
    fn texts_that_share_a_slot_are_told_apart_by_their_bytes() {
        let mut table = TextTable::new();
        let mut block = Vec::new();
        // Some of the 100 texts share a slot and push each other out, each time round.
        let texts: Vec<String> = (0..100).map(|i| format!("text-{i}")).collect();
        let all: Vec<&String> = texts.iter().chain(&texts).chain(&texts).collect();
        for text in &all {
            table.put(&mut block, text);
        }
        // Read back: every value is the text it was.
        let mut defined: Vec<&[u8]> = Vec::new();
        let mut cursor = super::super::wire::Cursor::new(&block);
        for text in &all {
            let got = match cursor.u8() {
                Some(value::TEXT_NEW) => {
                    let len = cursor.varint().unwrap() as usize;
                    let bytes = cursor.take(len).unwrap();
                    defined.push(bytes);
                    bytes
                }
                Some(value::TEXT_REF) => defined[cursor.varint().unwrap() as usize],
                other => panic!("{other:?}"),
            };
            assert_eq!(got, text.as_bytes());
        }
        assert!(defined.len() < 200, "{} defined", defined.len());
    }
}
