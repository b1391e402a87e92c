//! The primitives of the binary log's encoding: value tags, LEB128 varints, zigzag for signed
//! numbers, length-prefixed UTF-8, a [`SpareWriter`] that writes them straight into a block's
//! spare capacity, and a [`Cursor`] that reads them back without ever panicking or reading out
//! of bounds (a short or malformed buffer is `None`). In `codec`, below the front end, because
//! the front end's generic code writes a record's message values with them
//! ([`ValueWriter`](crate::record::ValueWriter)).

use super::Typed;
use std::mem::MaybeUninit;

/// Value tags, for message values and fields alike.
pub(crate) mod value {
    pub(crate) const NULL: u8 = 0x00;
    pub(crate) const TRUE: u8 = 0x01;
    pub(crate) const FALSE: u8 = 0x02;
    pub(crate) const I64: u8 = 0x03;
    pub(crate) const U64: u8 = 0x04;
    pub(crate) const F64: u8 = 0x05;
    pub(crate) const I128: u8 = 0x06;
    pub(crate) const U128: u8 = 0x07;
    pub(crate) const STR: u8 = 0x08;
    pub(crate) const F32: u8 = 0x09;
    /// A text the block defines: its number is the count of texts defined before it.
    pub(crate) const TEXT_NEW: u8 = 0x0A;
    /// A text defined earlier in the block, by number.
    pub(crate) const TEXT_REF: u8 = 0x0B;
}

/// Appends `value` as an unsigned LEB128 varint (7 bits a byte, low first).
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Zigzag: small magnitudes of either sign become small unsigned numbers.
#[inline]
pub(crate) fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub(crate) fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Appends a varint length and the bytes of `text`.
#[inline]
pub(crate) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// The most bytes one typed value takes: its tag and 16 bytes of `u128`.
pub(crate) const MAX_TYPED: usize = 17;

/// Appends at most `max` bytes to `out`, written by `write` straight into its spare capacity:
/// one capacity check for a record's head and values instead of one per byte, and no staging
/// buffer (one on the stack, written a byte at a time and copied out in 16-byte loads, stalled
/// on store forwarding: a third of the encoder's time in `perf annotate`).
#[inline(always)]
pub(crate) fn append_with(out: &mut Vec<u8>, max: usize, write: impl FnOnce(&mut SpareWriter<'_>)) {
    out.reserve(max);
    let mut writer = SpareWriter {
        spare: &mut out.spare_capacity_mut()[..max],
        len: 0,
    };
    write(&mut writer);
    let len = writer.len;
    // SAFETY: `writer` writes every byte below `len` of `spare` before `len` moves past it (a
    // write past `spare`, the first `max` bytes of spare capacity, panics on its bounds check
    // first), so the `len` bytes after the vector's length are initialised and within its
    // capacity.
    unsafe { out.set_len(out.len() + len) };
}

/// Writes bytes, in order, into a vector's spare capacity ([`append_with`]).
pub(crate) struct SpareWriter<'a> {
    spare: &'a mut [MaybeUninit<u8>],
    len: usize,
}

impl SpareWriter<'_> {
    #[inline(always)]
    pub(crate) fn byte(&mut self, byte: u8) {
        self.spare[self.len].write(byte);
        self.len += 1;
    }

    #[inline(always)]
    pub(crate) fn slice<const N: usize>(&mut self, bytes: [u8; N]) {
        let spare = &mut self.spare[self.len..self.len + N];
        for (slot, byte) in spare.iter_mut().zip(bytes) {
            slot.write(byte);
        }
        self.len += N;
    }

    /// The low `len` bytes of `word` (`len` at most 8), little-endian, in one store of eight
    /// bytes: those past `len` are written too, and left for the next write to overwrite.
    #[inline(always)]
    pub(crate) fn word(&mut self, word: u64, len: usize) {
        let spare = &mut self.spare[self.len..self.len + 8];
        for (slot, byte) in spare.iter_mut().zip(word.to_le_bytes()) {
            slot.write(byte);
        }
        self.len += len.min(8);
    }

    #[inline(always)]
    pub(crate) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte(value as u8 | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    /// A message value kept as its type: the tag a field's value of that type takes, then its
    /// payload; at most [`MAX_TYPED`] bytes.
    #[inline(always)]
    pub(crate) fn typed(&mut self, typed: Typed) {
        match typed {
            Typed::U64(v) => {
                self.byte(value::U64);
                self.varint(v);
            }
            Typed::I64(v) => {
                self.byte(value::I64);
                self.varint(zigzag(v));
            }
            Typed::F64(v) => {
                self.byte(value::F64);
                self.slice(v.to_bits().to_le_bytes());
            }
            Typed::F32(v) => {
                self.byte(value::F32);
                self.slice(v.to_bits().to_le_bytes());
            }
            Typed::U128(v) => {
                self.byte(value::U128);
                self.slice(v.to_le_bytes());
            }
            Typed::I128(v) => {
                self.byte(value::I128);
                self.slice(v.to_le_bytes());
            }
            Typed::Bool(v) => self.byte(if v { value::TRUE } else { value::FALSE }),
        }
    }
}

/// Reads the encoding back. Every method returns `None` (and reads nothing more) once the
/// bytes run out or hold something malformed.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    pub(crate) fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(len)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Some(out)
    }

    /// A varint of at most ten bytes whose value fits 64 bits.
    #[inline]
    pub(crate) fn varint(&mut self) -> Option<u64> {
        // One byte (a thread, flags, a small number, most time deltas) without the loop.
        if let Some(&byte) = self.bytes.get(self.pos).filter(|&&b| b < 0x80) {
            self.pos += 1;
            return Some(u64::from(byte));
        }
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return None;
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A varint that must fit a `u32`.
    pub(crate) fn varint_u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }

    /// A length-prefixed UTF-8 text.
    pub(crate) fn str(&mut self) -> Option<&'a str> {
        let len = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_round_trip_at_the_edges() {
        let values = [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX - 1, u64::MAX];
        let mut out = Vec::new();
        for v in values {
            put_varint(&mut out, v);
        }
        let mut cursor = Cursor::new(&out);
        for v in values {
            assert_eq!(cursor.varint(), Some(v));
        }
        assert!(cursor.is_empty());
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn overlong_and_short_varints_are_refused() {
        assert_eq!(Cursor::new(&[0x80; 11]).varint(), None);
        assert_eq!(Cursor::new(&[0xff, 0xff]).varint(), None);
        // Ten bytes whose last carries more than the 64th bit.
        let mut too_big = [0xff; 10];
        too_big[9] = 0x02;
        assert_eq!(Cursor::new(&too_big).varint(), None);
        assert_eq!(Cursor::new(&[5, b'a']).str(), None);
    }
}
