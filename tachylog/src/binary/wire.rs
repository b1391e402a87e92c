//! The primitives of the binary log's encoding: LEB128 varints, zigzag for signed numbers,
//! length-prefixed UTF-8, and a [`Cursor`] that reads them back without ever panicking or
//! reading out of bounds (a short or malformed buffer is `None`).

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
