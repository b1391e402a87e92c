//! How a log call's arguments travel from the calling thread to the back end.
//!
//! The calling thread appends each argument's bytes, in placeholder order, through a
//! [`frontend`](crate::frontend) slot; the back end walks them with a [`Decoder`] as the
//! record's `Decode` (a constant of the arguments' types) says and formats each through a
//! renderer of [`render`]: the fast path of
//! `plain` when it applies, else a [`View`], whose `fmt` traits reproduce those of the original
//! type. Encodings:
//!
//! | codec | bytes | formats as |
//! |---|---|---|
//! | [`StrCodec`] | `usize` length, UTF-8 bytes | the `str` |
//! | [`LossyCodec`] | `usize` length, any bytes | lossy UTF-8 text |
//! | [`CopyCodec<T>`] | `size_of::<T>()` bytes of the value | `T` itself |
//! | [`PreformattedCodec`] | `usize` length, UTF-8 bytes | the text verbatim (spec already applied) |
//! | [`ListCodec<C>`] | `usize` length, `usize` count, the elements | `{:?}` of a slice |
//! | count | `usize` | a width or precision |
//!
//! The decoder never trusts the bytes: a short or malformed buffer yields a visible `<?>`
//! instead of reading out of bounds.
//!
//! These bytes are not self-describing (a `CopyArg` value has no length or tag): the [`shape`]
//! of an argument list (`SHAPES.md`) describes them for a reader without this build's code.
//!
//! Layer 2 (see `ARCHITECTURE.md`): imports layer 1 and `fields` (decoded native values are
//! pushed into a [`Fields`](crate::fields::Fields)).

mod decimal;
mod native;
pub(crate) mod plain;
pub mod render;
pub(crate) mod sealed;
// The reading half of shapes is for the spool's recovery (`format::shaped`).
#[allow(dead_code)]
pub(crate) mod shape;
pub(crate) mod short_copy;
mod text_buf;
pub(crate) mod texts;
mod views;
pub(crate) mod wire;

use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};

pub use native::{CopyArg, NativeValue, Typed};
pub use text_buf::TextBuf;
pub use views::{ListElemCodec, NativeField, View};

use render::Applied;

/// A way of encoding one argument. Implemented by tachylog's codecs only (sealed: see
/// `codec/sealed.rs`).
pub trait Codec: sealed::Sealed<sealed::tag::Codec> + 'static {
    /// Whether the renderers of this codec's values only ever write text that needs no
    /// escaping (see [`CopyArg`]'s hidden escape flag), whatever the trait and spec but a fill.
    #[doc(hidden)]
    const ESCAPE_FREE: bool = false;

    /// Whether `{}` of a value is its bytes as they travel (text logged from a `&str`), so the
    /// binary log may take them without rendering them (see [`Decoder::plain_text`]).
    #[doc(hidden)]
    const PLAIN_IS_BYTES: bool = false;

    /// Splits this codec's bytes off the front of the decoder.
    #[doc(hidden)]
    fn take<'a>(decoder: &mut Decoder<'a>) -> Option<&'a [MaybeUninit<u8>]>;

    /// Appends this codec's description to a shape (`codec/SHAPES.md`, "Codecs"), for a
    /// reader without this build's code.
    #[doc(hidden)]
    fn describe(out: &mut Vec<u8>);

    /// Appends `{}` of the value without `core::fmt` if this codec knows how for `spec`;
    /// `false` (nothing written) otherwise. `None` bytes: a malformed record.
    #[doc(hidden)]
    #[inline]
    fn fast_display(
        _bytes: Option<&[MaybeUninit<u8>]>,
        _spec: &Applied,
        _out: &mut TextBuf<'_>,
    ) -> bool {
        false
    }

    /// The same for `{:?}`.
    #[doc(hidden)]
    #[inline]
    fn fast_debug(
        _bytes: Option<&[MaybeUninit<u8>]>,
        _spec: &Applied,
        _out: &mut TextBuf<'_>,
    ) -> bool {
        false
    }

    /// The value as a [`Typed`] when `{}` of it with a plain spec is that type's fast-path
    /// text (numbers, `bool`); `None` otherwise, or for a malformed record.
    #[doc(hidden)]
    #[inline]
    fn typed(_bytes: Option<&[MaybeUninit<u8>]>) -> Option<Typed> {
        None
    }

    /// The same for the other traits (`{:x}`, `{:e}`, ...): only text formatted by the
    /// caller, which already carries its spec.
    #[doc(hidden)]
    #[inline]
    fn fast_verbatim(
        _bytes: Option<&[MaybeUninit<u8>]>,
        _spec: &Applied,
        _out: &mut TextBuf<'_>,
    ) -> bool {
        false
    }
}

/// Appends bytes that should be UTF-8, with U+FFFD for invalid sequences (as the views'
/// `Display` does).
#[inline]
fn push_text(bytes: &[u8], out: &mut TextBuf<'_>) {
    out.push_str(&text_of(bytes));
}

/// Bytes that should be UTF-8 as text, with U+FFFD for invalid sequences.
#[inline]
fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match short_ascii(bytes) {
        Some(text) => std::borrow::Cow::Borrowed(text),
        None => String::from_utf8_lossy(bytes),
    }
}

/// `bytes` as text when they are short ASCII, which most logged text is (a path, a table, a
/// host, a field's value): checked inline, where `from_utf8`'s call took 88 instructions a
/// record of `tachylog-bench`'s `throughput_mix_binary` (callgrind). `None`: check otherwise.
#[inline]
fn short_ascii(bytes: &[u8]) -> Option<&str> {
    if bytes.len() <= 32 && bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    None
}

/// Text arguments (`&str`, `String`, ...), copied byte for byte.
pub struct StrCodec;
/// Byte strings logged as lossy UTF-8 ([`crate::lossy`]).
pub struct LossyCodec;
/// Text the calling thread already formatted, with the placeholder's spec applied.
pub struct PreformattedCodec;
/// A [`crate::codec::CopyArg`] value, copied bit for bit.
pub struct CopyCodec<T>(PhantomData<T>);
/// A list of values of one codec (`Vec<String>`, `&[u64]`, `[f32; 3]`): the byte length, the
/// element count, then each element in its codec's encoding.
pub struct ListCodec<C>(PhantomData<C>);

impl<C: Codec> sealed::Sealed<sealed::tag::Codec> for ListCodec<C> {}
impl sealed::Sealed<sealed::tag::Codec> for StrCodec {}
impl sealed::Sealed<sealed::tag::Codec> for LossyCodec {}
impl sealed::Sealed<sealed::tag::Codec> for PreformattedCodec {}
impl<T: CopyArg> sealed::Sealed<sealed::tag::Codec> for CopyCodec<T> {}

impl<C: Codec> Codec for ListCodec<C> {
    #[inline]
    fn take<'a>(d: &mut Decoder<'a>) -> Option<&'a [MaybeUninit<u8>]> {
        d.take_length_prefixed()
    }

    fn describe(out: &mut Vec<u8>) {
        out.push(shape::codec::LIST);
        C::describe(out);
    }
}

/// Text travels as a `usize` length followed by the bytes; `{}` of it is the text itself.
macro_rules! text_codec {
    ($($codec:ty: $tag:ident, $plain_is_bytes:literal),*) => {$(
        impl Codec for $codec {
            const PLAIN_IS_BYTES: bool = $plain_is_bytes;

            #[inline]
            fn take<'a>(d: &mut Decoder<'a>) -> Option<&'a [MaybeUninit<u8>]> {
                d.take_length_prefixed()
            }

            fn describe(out: &mut Vec<u8>) {
                out.push(shape::codec::$tag);
            }

            #[inline]
            fn fast_display(bytes: Option<&[MaybeUninit<u8>]>, spec: &Applied, out: &mut TextBuf<'_>) -> bool {
                match bytes {
                    Some(bytes) if spec.is_plain() && spec.precision.is_none() => {
                        push_text(init_slice(bytes), out);
                        true
                    }
                    _ => false,
                }
            }
        }
    )*};
}
// A `&str`'s bytes are its `{}`; a lossy byte string's are not (invalid sequences become
// U+FFFD).
text_codec!(StrCodec: STR, true, LossyCodec: LOSSY, false);

/// Text the caller formatted with the placeholder's whole spec: written as it is, whatever
/// the trait and spec.
impl Codec for PreformattedCodec {
    #[inline]
    fn take<'a>(d: &mut Decoder<'a>) -> Option<&'a [MaybeUninit<u8>]> {
        d.take_length_prefixed()
    }

    fn describe(out: &mut Vec<u8>) {
        out.push(shape::codec::PREFORMATTED);
    }

    #[inline]
    fn fast_display(bytes: Option<&[MaybeUninit<u8>]>, _: &Applied, out: &mut TextBuf<'_>) -> bool {
        match bytes {
            Some(bytes) => {
                push_text(init_slice(bytes), out);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn fast_debug(
        bytes: Option<&[MaybeUninit<u8>]>,
        spec: &Applied,
        out: &mut TextBuf<'_>,
    ) -> bool {
        Self::fast_display(bytes, spec, out)
    }

    #[inline]
    fn fast_verbatim(
        bytes: Option<&[MaybeUninit<u8>]>,
        spec: &Applied,
        out: &mut TextBuf<'_>,
    ) -> bool {
        Self::fast_display(bytes, spec, out)
    }
}

impl<T: crate::codec::CopyArg> Codec for CopyCodec<T> {
    const ESCAPE_FREE: bool = T::__ESCAPE_FREE.0;

    #[inline]
    fn typed(bytes: Option<&[MaybeUninit<u8>]>) -> Option<Typed> {
        read_copy::<T>(bytes)?.__typed(sealed::Internal::TOKEN)
    }

    #[inline]
    fn take<'a>(d: &mut Decoder<'a>) -> Option<&'a [MaybeUninit<u8>]> {
        d.take(size_of::<T>())
    }

    fn describe(out: &mut Vec<u8>) {
        shape::put_copy(out, size_of::<T>(), T::__PRIM.0, std::any::type_name::<T>());
    }

    #[inline]
    fn fast_display(
        bytes: Option<&[MaybeUninit<u8>]>,
        spec: &Applied,
        out: &mut TextBuf<'_>,
    ) -> bool {
        match read_copy::<T>(bytes) {
            Some(value) if spec.is_plain() => {
                value.__fast_display(spec.precision, out, sealed::Internal::TOKEN)
            }
            _ => false,
        }
    }

    #[inline]
    fn fast_debug(
        bytes: Option<&[MaybeUninit<u8>]>,
        spec: &Applied,
        out: &mut TextBuf<'_>,
    ) -> bool {
        match read_copy::<T>(bytes) {
            Some(value) if spec.is_plain() && spec.precision.is_none() => {
                value.__fast_debug(out, sealed::Internal::TOKEN)
            }
            _ => false,
        }
    }
}

/// The `T` a `CopyCodec<T>` argument's bytes hold, if they are all there.
#[inline]
fn read_copy<T: CopyArg>(bytes: Option<&[MaybeUninit<u8>]>) -> Option<T> {
    let bytes = bytes?;
    if bytes.len() != size_of::<T>() {
        return None;
    }
    // SAFETY: these bytes were copied from a valid `T` by `ArgWriter::put_copy` in this same
    // program (the record's `Decode`, a constant of the arguments' types, names this codec for
    // the argument's type `T`),
    // and `T: Copy + Send + 'static`, so a bitwise copy read on this thread is a valid `T`.
    Some(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const T) })
}

/// Walks the argument bytes of one record, for the renderers and field functions.
#[derive(Clone)]
pub struct Decoder<'a> {
    rest: &'a [MaybeUninit<u8>],
    /// Set when the bytes ran out early: the record is malformed.
    malformed: bool,
}

impl<'a> Decoder<'a> {
    /// A decoder over a record's argument bytes.
    #[inline]
    pub(crate) fn new(bytes: &'a [MaybeUninit<u8>]) -> Self {
        Decoder {
            rest: bytes,
            malformed: false,
        }
    }

    /// Whether any read ran past the end of the bytes.
    #[inline]
    pub(crate) fn is_malformed(&self) -> bool {
        self.malformed
    }

    /// The next argument as a [`Typed`] value, if its codec has one (then it is taken off);
    /// otherwise nothing is taken.
    #[inline]
    pub fn typed<C: Codec>(&mut self) -> Option<Typed> {
        let mut ahead = self.clone();
        let typed = C::typed(C::take(&mut ahead))?;
        *self = ahead;
        Some(typed)
    }

    /// The next argument's text when `{}` of it is its bytes ([`Codec::PLAIN_IS_BYTES`]),
    /// taken off, with U+FFFD for invalid UTF-8 as `{}` of its view writes it; otherwise
    /// nothing is taken.
    #[inline]
    pub(crate) fn plain_text<C: Codec>(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        if !C::PLAIN_IS_BYTES {
            return None;
        }
        Some(text_of(init_slice(C::take(self)?)))
    }

    /// The next argument, to be formatted by the caller.
    pub fn view<C: Codec>(&mut self) -> View<'a, C> {
        let bytes = C::take(self);
        View::new(bytes)
    }

    /// The next width or precision argument.
    #[inline]
    pub fn count(&mut self) -> usize {
        match self.take(size_of::<usize>()) {
            Some(bytes) => usize::from_ne_bytes(init_array(bytes)),
            None => 0,
        }
    }

    // `#[inline]` on these few lines: the renderers that call them are instantiated in the
    // crate that logs, and without it each argument paid a call through the GOT.
    #[inline]
    fn take(&mut self, len: usize) -> Option<&'a [MaybeUninit<u8>]> {
        if self.rest.len() < len {
            self.malformed = true;
            self.rest = &[];
            return None;
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Some(head)
    }

    #[inline]
    fn take_length_prefixed(&mut self) -> Option<&'a [MaybeUninit<u8>]> {
        let len = usize::from_ne_bytes(init_array(self.take(size_of::<usize>())?));
        self.take(len)
    }
}

/// Bytes that encoders always write in full (lengths, counts, text).
fn init_array<const N: usize>(bytes: &[MaybeUninit<u8>]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        // SAFETY: only called on bytes that encoders write from initialised sources (`usize`
        // lengths and counts), never on `CopyCodec` payloads, which may contain padding.
        *o = unsafe { b.assume_init() };
    }
    out
}

/// Text bytes written by an encoder from a `&str` or `&[u8]`: fully initialised.
fn init_slice(bytes: &[MaybeUninit<u8>]) -> &[u8] {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`; callers pass only ranges that encoders
    // copied from initialised byte slices (see the codec table in the module docs).
    unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const u8, bytes.len()) }
}

/// A slot wrote more than it announced: a bug in tachylog's slots, stopped before it writes
/// out of bounds. Out of line, so that each call site's writes carry a call, not a panic's
/// formatting.
#[cold]
#[inline(never)]
fn overran() -> ! {
    panic!("log argument overran its reservation");
}

/// Writes encoded arguments into the space reserved for them. Created only by the front end,
/// with exactly the number of bytes the slots announced; every write is bounds-checked so a
/// slot that lied about its length cannot write outside the reservation.
pub struct ArgWriter {
    ptr: *mut u8,
    remaining: usize,
}

impl ArgWriter {
    /// # Safety
    /// `ptr .. ptr + len` is writable and owned by the caller for the writer's lifetime.
    pub(crate) unsafe fn new(ptr: *mut u8, len: usize) -> Self {
        ArgWriter {
            ptr,
            remaining: len,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.remaining
    }

    /// Appends raw bytes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn put(&mut self, bytes: &[u8]) {
        if bytes.len() > self.remaining {
            overran();
        }
        // SAFETY: in bounds (checked) of the range the constructor's contract makes ours.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr, bytes.len());
            self.ptr = self.ptr.add(bytes.len());
        }
        self.remaining -= bytes.len();
    }

    /// Appends a `usize` length or count.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn put_usize(&mut self, value: usize) {
        self.put(&value.to_ne_bytes());
    }

    /// Appends `bytes` preceded by their length.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn put_length_prefixed(&mut self, bytes: &[u8]) {
        self.put_usize(bytes.len());
        self.put(bytes);
    }

    /// Appends the bytes of a `Copy` value, padding included.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn put_copy<T: crate::codec::CopyArg>(&mut self, value: &T) {
        let len = size_of::<T>();
        if len > self.remaining {
            overran();
        }
        // SAFETY: `value` is a valid `T` of `len` bytes; the destination is in bounds. Bytes are
        // copied untyped, so padding is carried along without being read as `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(value as *const T as *const u8, self.ptr, len);
            self.ptr = self.ptr.add(len);
        }
        self.remaining -= len;
    }
}

#[cfg(test)]
mod tests;
