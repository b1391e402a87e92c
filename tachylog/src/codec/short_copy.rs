//! Appending the short pieces a line is made of (digits, literal text, the level, cached runs)
//! without a call to `memcpy`.
//!
//! Why by hand: a default line is about fifteen appends of 1 to 30 bytes. Through
//! `extend_from_slice` each one is a call into libc's `memmove`, which dispatches on the size
//! before it copies: 17% of the back end's time (`perf`,
//! `tachylog-bench --only tachylog,backend_iteration`). A slice of at most 64 bytes is copied
//! here as two overlapping loads and stores of the largest power-of-two width that fits, which
//! the compiler turns into a few moves. Longer slices keep `extend_from_slice`.

use std::ptr;

/// Slices at most this long are copied inline.
const SHORT: usize = 64;

/// Appends `bytes` to `out`.
#[inline(always)]
pub(crate) fn append_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if len > SHORT {
        out.extend_from_slice(bytes);
        return;
    }
    out.reserve(len);
    // SAFETY: `reserve` made room for `len` more bytes after `out.len()`, so every store below
    // lands in `out`'s allocation: each covers `[0, W)` or `[len - W, len)` of the new bytes
    // with `W <= len`. Each load covers the same offsets of `bytes`, which is `len` long. The
    // source cannot overlap the spare capacity (`bytes` is borrowed while `out` is borrowed
    // mutably). Unaligned loads and stores are used throughout; all of `[0, len)` is written
    // before `set_len` exposes it, since the two ranges of each case meet or overlap.
    unsafe {
        let src = bytes.as_ptr();
        let dst = out.as_mut_ptr().add(out.len());
        if len >= 32 {
            copy_pair::<32>(src, dst, len);
        } else if len >= 16 {
            copy_pair::<16>(src, dst, len);
        } else if len >= 8 {
            copy_pair::<8>(src, dst, len);
        } else if len >= 4 {
            copy_pair::<4>(src, dst, len);
        } else if len >= 2 {
            copy_pair::<2>(src, dst, len);
        } else if len == 1 {
            *dst = *src;
        }
        out.set_len(out.len() + len);
    }
}

/// Appends the first `len` bytes of `padded`, whose bytes past `len` may be anything: all `W`
/// are stored into the buffer's spare room, one fixed-width copy with no branch on the length
/// (the length ladder of [`append_bytes`] is about half of a short literal's 22 instructions),
/// and only `len` are exposed.
///
/// # Panics
/// If `len > W`.
#[inline(always)]
pub(crate) fn append_from_padded<const W: usize>(out: &mut Vec<u8>, padded: &[u8; W], len: usize) {
    assert!(len <= W);
    out.reserve(W);
    // SAFETY: `reserve` made room for `W` bytes after `out.len()`, so the `W`-byte store lands
    // in `out`'s allocation (bytes past the length are spare capacity, never read as the
    // vector's); `padded` is `W` bytes long and cannot overlap `out`'s spare room, which only
    // `out` can reach. `set_len` exposes the `len <= W` bytes just written.
    unsafe {
        ptr::write_unaligned(out.as_mut_ptr().add(out.len()) as *mut [u8; W], *padded);
        out.set_len(out.len() + len);
    }
}

/// Copies `[0, W)` and `[len - W, len)` of `src` to the same offsets of `dst`.
///
/// # Safety
/// `W <= len`; `src` is readable and `dst` writable for `len` bytes; they do not overlap.
#[inline(always)]
unsafe fn copy_pair<const W: usize>(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract: both ranges lie within the `len` bytes of each side.
    unsafe {
        let head = ptr::read_unaligned(src as *const [u8; W]);
        let tail = ptr::read_unaligned(src.add(len - W) as *const [u8; W]);
        ptr::write_unaligned(dst as *mut [u8; W], head);
        ptr::write_unaligned(dst.add(len - W) as *mut [u8; W], tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every length, into buffers with and without spare room, gives `extend_from_slice`'s
        /// bytes.
        #[test]
        fn appends_what_extend_from_slice_appends(
            prefix in proptest::collection::vec(any::<u8>(), 0..40),
            bytes in proptest::collection::vec(any::<u8>(), 0..80),
            spare in 0usize..40,
        ) {
            let mut ours = Vec::with_capacity(prefix.len() + spare);
            ours.extend_from_slice(&prefix);
            append_bytes(&mut ours, &bytes);
            let mut expected = prefix.clone();
            expected.extend_from_slice(&bytes);
            prop_assert_eq!(ours, expected);
        }

        #[test]
        fn appends_text(prefix in ".{0,10}", text in ".{0,40}") {
            let mut ours = prefix.clone();
            crate::codec::TextBuf::of_string(&mut ours).push_str(&text);
            prop_assert_eq!(ours, prefix + &text);
        }
    }

    proptest! {
        #[test]
        fn appends_the_length_of_a_padded_source(
            prefix in proptest::collection::vec(any::<u8>(), 0..40),
            padded in any::<[u8; 16]>(),
            len in 0usize..=16,
            spare in 0usize..40,
        ) {
            let mut ours = Vec::with_capacity(prefix.len() + spare);
            ours.extend_from_slice(&prefix);
            append_from_padded(&mut ours, &padded, len);
            let mut expected = prefix.clone();
            expected.extend_from_slice(&padded[..len]);
            prop_assert_eq!(ours, expected);
        }
    }

    #[test]
    fn every_short_length() {
        let source: Vec<u8> = (0..=SHORT as u8 + 1).collect();
        for len in 0..=source.len() {
            let mut out = vec![0xAA; 3];
            append_bytes(&mut out, &source[..len]);
            assert_eq!(&out[..3], &[0xAA; 3]);
            assert_eq!(&out[3..], &source[..len]);
        }
    }
}
