//! How each argument of a log call is turned into bytes on the calling thread.
//!
//! The macro wraps every argument in [`Wrap`] and calls `__tachylog_slot` on
//! `&&&&Wrap(arg)`. Method resolution tries the receivers from the most to the least
//! referenced, so the first trait below whose bounds the argument's type meets wins, at compile
//! time, with no runtime dispatch ("autoref specialisation"):
//!
//! 1. [`ViaBytes`]: text (`str`, `String`, `Cow<str>`, ...) and [`Lossy`] bytes, copied raw;
//! 2. [`ViaList`]: slices, arrays, `Vec`s and boxed slices of [`CopyArg`] values or of text
//!    ([`ListArg`]), copied element by element, formatted `{:?}` on the back end;
//! 3. [`ViaCopy`]: [`CopyArg`] values (numbers, `bool`, `char`, opted-in types), copied bit for
//!    bit;
//! 4. [`ViaCopyRef`]: a reference to a [`CopyArg`] value, dereferenced and copied;
//! 5. [`ViaFallback`]: anything else, formatted right here with the placeholder's full spec into
//!    the thread's scratch buffer, then copied as text. This is the documented slow path: it runs
//!    the type's `Display`/`Debug` on the calling thread, and a panic in it is caught and logged
//!    as `<formatting panicked: ...>` in place of the argument.

use crate::codec::render::{apply_spec, Applied, Fmt, RenderError};
use crate::codec::sealed::{tag, Internal, Sealed};
use crate::codec::shape::{self, role};
use crate::codec::{
    ArgWriter, Codec, CopyArg, CopyCodec, Decoder, ListCodec, LossyCodec, PreformattedCodec,
    StrCodec, TextBuf,
};
use crate::record::{Decode, Placeholder, ValueWriter};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

/// Types logged by copying their bytes with a length: text, and [`Lossy`] byte strings.
///
/// Implemented by tachylog only (sealed): the codec decides how the back end reads the bytes
/// back, and a codec chosen for the wrong bytes would make it misread them. Log your own text
/// type through `&str` (`info!("{}", value.as_str())`), or make it a [`CopyArg`].
///
/// ```compile_fail
/// // Another type's codec for these bytes: rejected, the trait is sealed.
/// #[derive(Debug)]
/// struct Evil;
/// impl tachylog::BytesArg for Evil {
///     type Codec = <bool as tachylog::ListElem>::Codec;
///     fn arg_bytes(&self) -> &[u8] { &[2] }
/// }
/// ```
pub trait BytesArg: Sealed<tag::BytesArg> {
    /// How the back end reads the bytes back.
    type Codec: Codec;
    /// The bytes to copy.
    fn arg_bytes(&self) -> &[u8];
}

macro_rules! str_args {
    ($($t:ty),*) => {$(
        impl Sealed<tag::BytesArg> for $t {}
        impl BytesArg for $t {
            type Codec = StrCodec;
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn arg_bytes(&self) -> &[u8] {
                let s: &str = self;
                s.as_bytes()
            }
        }
    )*};
}
str_args!(str, String, Box<str>, Cow<'_, str>, Rc<str>, Arc<str>);

impl<T: BytesArg + ?Sized> Sealed<tag::BytesArg> for &T {}
impl<T: BytesArg + ?Sized> BytesArg for &T {
    type Codec = T::Codec;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn arg_bytes(&self) -> &[u8] {
        (**self).arg_bytes()
    }
}

impl<T: BytesArg + ?Sized> Sealed<tag::BytesArg> for &mut T {}
impl<T: BytesArg + ?Sized> BytesArg for &mut T {
    type Codec = T::Codec;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn arg_bytes(&self) -> &[u8] {
        (**self).arg_bytes()
    }
}

/// A byte string logged as text, with invalid UTF-8 replaced by U+FFFD. See [`lossy`].
#[derive(Clone, Copy)]
pub struct Lossy<'a>(pub &'a [u8]);

/// Logs raw bytes (a network buffer, a file name from the OS) as UTF-8 text without
/// allocating: the bytes are copied, and invalid sequences become U+FFFD when formatted.
///
/// ```
/// tachylog::warn!("bad request line: {}", tachylog::lossy(b"GET /\xff HTTP/1.1"));
/// ```
pub fn lossy(bytes: &[u8]) -> Lossy<'_> {
    Lossy(bytes)
}

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

impl fmt::Debug for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

impl Sealed<tag::BytesArg> for Lossy<'_> {}
impl BytesArg for Lossy<'_> {
    type Codec = LossyCodec;
    fn arg_bytes(&self) -> &[u8] {
        self.0
    }
}

/// Lists logged element by element, without formatting on the calling thread: `{:?}` of a
/// `Vec<String>`, a `&[&str]`, a `[f64; 3]` or a `Box<[u64]>` costs a copy per element.
///
/// ```
/// let peers = vec![String::from("10.0.0.1"), String::from("10.0.0.2")];
/// let weights = [0.5f32, 0.25, 0.25];
/// tachylog::info!("peers {:?} weights {:?}", peers, &weights[..]);
/// ```
pub trait ListArg {
    /// The element type.
    type Elem: ListElem;
    /// The elements.
    fn elems(&self) -> &[Self::Elem];
}

impl<T: ListElem> ListArg for [T] {
    type Elem = T;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elems(&self) -> &[T] {
        self
    }
}

impl<T: ListElem, const N: usize> ListArg for [T; N] {
    type Elem = T;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elems(&self) -> &[T] {
        self
    }
}

impl<T: ListElem> ListArg for Vec<T> {
    type Elem = T;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elems(&self) -> &[T] {
        self
    }
}

impl<T: ListElem> ListArg for Box<[T]> {
    type Elem = T;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elems(&self) -> &[T] {
        self
    }
}

impl<L: ListArg + ?Sized> ListArg for &L {
    type Elem = L::Elem;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elems(&self) -> &[L::Elem] {
        (**self).elems()
    }
}

/// An element of a [`ListArg`]: a [`CopyArg`] value or text. Implemented by tachylog only
/// (sealed), for every `CopyArg + Debug` type and the text types: the element's codec decides
/// how the back end reads it back.
///
/// ```compile_fail
/// #[derive(Debug)]
/// struct Evil;
/// impl tachylog::ListElem for Evil {
///     type Codec = <&'static str as tachylog::ListElem>::Codec;
///     fn elem_len(&self) -> usize { 16 }
///     fn write_elem(&self, _: &mut tachylog::__private::ArgWriter) {}
/// }
/// ```
pub trait ListElem: Sealed<tag::ListElem> {
    /// How the back end reads the element.
    type Codec: crate::codec::ListElemCodec;
    /// Bytes [`ListElem::write_elem`] appends.
    fn elem_len(&self) -> usize;
    /// Appends the element's encoding.
    fn write_elem(&self, writer: &mut ArgWriter);
}

impl<T: CopyArg + fmt::Debug> Sealed<tag::ListElem> for T {}
impl<T: CopyArg + fmt::Debug> ListElem for T {
    type Codec = CopyCodec<T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn elem_len(&self) -> usize {
        size_of::<T>()
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write_elem(&self, writer: &mut ArgWriter) {
        writer.put_copy(self);
    }
}

macro_rules! text_elems {
    ($($t:ty),*) => {$(
        impl Sealed<tag::ListElem> for $t {}
        impl ListElem for $t {
            type Codec = StrCodec;
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn elem_len(&self) -> usize {
                size_of::<usize>() + self.len()
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn write_elem(&self, writer: &mut ArgWriter) {
                writer.put_length_prefixed(self.as_bytes());
            }
        }
    )*};
}
text_elems!(&str, String, Box<str>, Cow<'_, str>, Rc<str>, Arc<str>);

/// An argument as the macro hands it to slot selection.
#[doc(hidden)]
pub struct Wrap<'a, T: ?Sized>(pub &'a T);

/// An argument ready to be written: knows its encoded length and its codec.
#[doc(hidden)]
pub trait Slot: Sealed<tag::Args> {
    /// How the back end reads it.
    type Codec: Codec;
    /// Bytes [`Slot::write`] will append.
    fn encoded_len(&self, stage: &Stage) -> usize;
    /// Appends the encoding.
    fn write(&self, writer: &mut ArgWriter, stage: &Stage);
}

/// A call's slots as one value, for [`log_record`](super::producer::log_record): a slot with
/// its [`Marked`] role, a [`CountSlot`], or a tuple of up to eight of them or of such tuples
/// (the macro nests longer lists). A value, not a closure per call site: every call site whose
/// arguments have the same types shares one instance of the writing code and one
/// [`Args::DECODE`].
#[doc(hidden)]
pub trait Args: Encode {
    /// How the back end reads these arguments; its address travels in each record.
    const DECODE: Decode;

    /// A message value whose text never needs escaping (a number, a `bool`).
    #[doc(hidden)]
    const ESCAPE_FREE: bool = false;

    /// Back end: appends `placeholder`'s literal text and this argument, a message value, read
    /// off `decoder` with `placeholder`'s spec. For a [`Decode::Rendered`] group, which holds
    /// message values only; anything else reports a record that does not match its site.
    #[doc(hidden)]
    #[inline(always)]
    fn render_message(
        decoder: &mut Decoder<'_>,
        placeholder: &Placeholder,
        out: &mut TextBuf<'_>,
    ) -> Result<(), RenderError> {
        let _ = (decoder, placeholder, out);
        Err(RenderError::Malformed)
    }

    /// Back end: writes this argument, the message value of placeholder `index`, off
    /// `decoder` into the binary log's open block (see [`ValueWriter::push`]). As
    /// `render_message`, for a group of message values only.
    #[doc(hidden)]
    #[inline(always)]
    fn encode_message(
        decoder: &mut Decoder<'_>,
        placeholder: &Placeholder,
        index: usize,
        values: &mut ValueWriter,
    ) -> Result<(), RenderError> {
        let _ = (decoder, placeholder, index, values);
        Err(RenderError::Malformed)
    }

    /// Appends the description of each slot, in travel order, to a shape (`codec/SHAPES.md`,
    /// "Slots"), and returns how many it appended. Implemented by tachylog only (the trait is
    /// sealed, and the [`Internal`] argument keeps callers inside the crate): a reader trusts
    /// the shape to say where each value's bytes end.
    #[doc(hidden)]
    fn __describe(slots: &mut Vec<u8>, _: Internal) -> usize;
}

/// The shape of `A`'s arguments (`codec/SHAPES.md`): what a process without this build's code
/// needs to read their bytes back. Built once per distinct argument list, when a call site's
/// arguments are first described; allocates.
pub(crate) fn shape_of<A: Args>() -> Vec<u8> {
    let mut slots = Vec::new();
    let count = A::__describe(&mut slots, Internal::TOKEN);
    shape::with_header(count, &slots)
}

/// The writing half of [`Args`], apart so that the cold paths can take it as `&dyn Encode`
/// (a trait with an associated constant cannot be a trait object).
#[doc(hidden)]
pub trait Encode: Sealed<tag::Args> {
    /// Bytes [`Encode::write`] will append.
    fn encoded_len(&self, stage: &Stage) -> usize;
    /// Appends the encodings, in order.
    fn write(&self, writer: &mut ArgWriter, stage: &Stage);
}

/// The [`MessagesFn`](crate::record::MessagesFn) of a tuple of up to eight arguments, for a group of message values
/// only: each value after its placeholder, in order, through its own renderer, called directly
/// (one function per list of argument types, shared by every call site with that list).
#[doc(hidden)]
pub trait RenderGroup {
    /// See [`MessagesFn`](crate::record::MessagesFn).
    fn render_group(
        decoder: &mut Decoder<'_>,
        placeholders: &'static [Placeholder],
        out: &mut TextBuf<'_>,
    ) -> Result<(), RenderError>;

    /// See [`EncodeFn`](crate::record::EncodeFn).
    fn encode_group(
        decoder: &mut Decoder<'_>,
        placeholders: &'static [Placeholder],
        values: &mut ValueWriter,
    ) -> Result<(), RenderError>;
}

/// A slot and the marker of what the back end does with it: a formatting trait of
/// [`fmt_trait`] for a message argument, a role of [`field_role`] for a structured field. The
/// marker picks the renderer (or field function) for the slot's codec, at compile time.
#[doc(hidden)]
pub struct Marked<S, M>(S, PhantomData<fn() -> M>);

impl<S, M> Marked<S, M> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn new(slot: S) -> Self {
        Marked(slot, PhantomData)
    }
}

/// The [`TakeFn`](crate::record::TakeFn) of a message argument of codec `C` under marker `M`:
/// typed where `M`'s trait and the reader's spec allow, else rendered by `M`'s renderer.
#[doc(hidden)]
#[inline(always)]
pub fn take_message<C: Codec, M: Decodes<C>>(
    decoder: &mut Decoder<'_>,
    placeholder: &Placeholder,
    values: &mut ValueWriter,
) -> Result<(), RenderError> {
    let index = values.written;
    values.written += 1;
    take_message_at::<C, M>(decoder, placeholder, index, values)
}

/// [`take_message`] for the value of placeholder `index`, which a group's function knows at
/// compile time: it then tests its bit of the site's typed specs with a constant shift, and
/// counts its values once, after them.
#[inline(always)]
fn take_message_at<C: Codec, M: Decodes<C>>(
    decoder: &mut Decoder<'_>,
    placeholder: &Placeholder,
    index: usize,
    values: &mut ValueWriter,
) -> Result<(), RenderError> {
    match M::DECODE {
        Decode::Message(render, _) => {
            values.push::<C>(index, M::TYPED, placeholder, render, decoder)
        }
        _ => Err(RenderError::Malformed),
    }
}

/// What a marker does with a value of codec `C` on the back end.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this argument's type cannot be read back with this placeholder's trait or field sigil",
    note = "see the `format_args!` error for this call, if any: the trait is not implemented"
)]
pub trait Decodes<C: Codec>: Sealed<tag::Args> {
    /// The renderer or field function, for [`Args::DECODE`].
    const DECODE: Decode;
    /// The slot's role in a shape (`codec/SHAPES.md`): the formatting trait or field sigil.
    const ROLE: u8;
    /// Which values the binary log may keep typed under this trait.
    const TYPED: crate::record::Typing = crate::record::Typing::Never;
}

impl<S: Slot, M: Decodes<S::Codec>> Sealed<tag::Args> for Marked<S, M> {}
impl<S: Slot, M: Decodes<S::Codec>> Encode for Marked<S, M> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn encoded_len(&self, stage: &Stage) -> usize {
        self.0.encoded_len(stage)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(&self, writer: &mut ArgWriter, stage: &Stage) {
        self.0.write(writer, stage)
    }
}

impl<S: Slot, M: Decodes<S::Codec>> Args for Marked<S, M> {
    const DECODE: Decode = M::DECODE;
    const ESCAPE_FREE: bool = <S::Codec as Codec>::ESCAPE_FREE;

    #[inline(always)]
    fn render_message(
        decoder: &mut Decoder<'_>,
        placeholder: &Placeholder,
        out: &mut TextBuf<'_>,
    ) -> Result<(), RenderError> {
        // A constant: the match and the call through `render` fold into a direct call.
        match M::DECODE {
            Decode::Message(render, _) => placeholder.render_value(render, decoder, out),
            _ => Err(RenderError::Malformed),
        }
    }

    #[inline(always)]
    fn encode_message(
        decoder: &mut Decoder<'_>,
        placeholder: &Placeholder,
        index: usize,
        values: &mut ValueWriter,
    ) -> Result<(), RenderError> {
        take_message_at::<S::Codec, M>(decoder, placeholder, index, values)
    }

    fn __describe(slots: &mut Vec<u8>, _: Internal) -> usize {
        slots.push(M::ROLE);
        <S::Codec as Codec>::describe(slots);
        1
    }
}

macro_rules! tuple_args {
    ($($name:ident $index:tt),*) => {
        impl<$($name: Encode),*> Sealed<tag::Args> for ($($name,)*) {}
        impl<$($name: Encode),*> Encode for ($($name,)*) {
            #[cfg_attr(not(debug_assertions), inline(always))]
            #[allow(unused_variables)]
            fn encoded_len(&self, stage: &Stage) -> usize {
                0 $(+ self.$index.encoded_len(stage))*
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            #[allow(unused_variables)]
            fn write(&self, writer: &mut ArgWriter, stage: &Stage) {
                $(self.$index.write(writer, stage);)*
            }
        }
        impl<$($name: Args),*> Args for ($($name,)*) {
            const DECODE: Decode = Decode::rendered_group(
                &[$($name::DECODE),*],
                <Self as RenderGroup>::render_group,
                <Self as RenderGroup>::encode_group,
                true $(&& $name::ESCAPE_FREE)*,
            );

            #[allow(unused_variables)]
            fn __describe(slots: &mut Vec<u8>, token: Internal) -> usize {
                0 $(+ $name::__describe(slots, token))*
            }
        }

        impl<$($name: Args),*> RenderGroup for ($($name,)*) {
            #[allow(unused_variables, unused_mut)]
            fn render_group(
                decoder: &mut Decoder<'_>,
                placeholders: &'static [Placeholder],
                out: &mut TextBuf<'_>,
            ) -> Result<(), RenderError> {
                // One length check for the group: the constant indexes below are then in
                // bounds, where a check per value costs three instructions each.
                const VALUES: &[&str] = &[$(stringify!($name)),*];
                if placeholders.len() < VALUES.len() {
                    return Err(RenderError::Malformed);
                }
                $(
                    $name::render_message(decoder, &placeholders[$index], out)?;
                )*
                Ok(())
            }

            #[allow(unused_variables, unused_mut)]
            fn encode_group(
                decoder: &mut Decoder<'_>,
                placeholders: &'static [Placeholder],
                values: &mut ValueWriter,
            ) -> Result<(), RenderError> {
                const VALUES: &[&str] = &[$(stringify!($name)),*];
                if placeholders.len() < VALUES.len() {
                    return Err(RenderError::Malformed);
                }
                $(
                    $name::encode_message(decoder, &placeholders[$index], $index, values)?;
                )*
                values.written = VALUES.len();
                Ok(())
            }
        }
    };
}
tuple_args!();
tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

#[doc(hidden)]
pub struct BytesSlot<'a, C> {
    bytes: &'a [u8],
    _codec: PhantomData<C>,
}

impl<'a, C> BytesSlot<'a, C> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BytesSlot {
            bytes,
            _codec: PhantomData,
        }
    }
}

impl<C: Codec> Sealed<tag::Args> for BytesSlot<'_, C> {}
impl<C: Codec> Slot for BytesSlot<'_, C> {
    type Codec = C;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn encoded_len(&self, _: &Stage) -> usize {
        size_of::<usize>() + self.bytes.len()
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(&self, writer: &mut ArgWriter, _: &Stage) {
        writer.put_length_prefixed(self.bytes);
    }
}

#[doc(hidden)]
pub struct ListSlot<'a, E> {
    elems: &'a [E],
    /// The elements' bytes, summed once when the slot is made.
    elems_len: usize,
}

impl<'a, E: ListElem> ListSlot<'a, E> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn new(elems: &'a [E]) -> Self {
        let elems_len = elems.iter().map(ListElem::elem_len).sum();
        ListSlot { elems, elems_len }
    }
}

impl<E: ListElem> Sealed<tag::Args> for ListSlot<'_, E> {}
impl<E: ListElem> Slot for ListSlot<'_, E> {
    type Codec = ListCodec<E::Codec>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn encoded_len(&self, _: &Stage) -> usize {
        2 * size_of::<usize>() + self.elems_len
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(&self, writer: &mut ArgWriter, _: &Stage) {
        writer.put_usize(size_of::<usize>() + self.elems_len);
        writer.put_usize(self.elems.len());
        for elem in self.elems {
            elem.write_elem(writer);
        }
    }
}

#[doc(hidden)]
pub struct CopySlot<'a, T>(&'a T);

impl<'a, T> CopySlot<'a, T> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn new(value: &'a T) -> Self {
        CopySlot(value)
    }
}

impl<T: CopyArg> Sealed<tag::Args> for CopySlot<'_, T> {}
impl<T: CopyArg> Slot for CopySlot<'_, T> {
    type Codec = CopyCodec<T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn encoded_len(&self, _: &Stage) -> usize {
        size_of::<T>()
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(&self, writer: &mut ArgWriter, _: &Stage) {
        writer.put_copy(self.0);
    }
}

/// A width or precision argument.
#[doc(hidden)]
pub struct CountSlot(pub usize);

impl Sealed<tag::Args> for CountSlot {}
impl Encode for CountSlot {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn encoded_len(&self, _: &Stage) -> usize {
        size_of::<usize>()
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(&self, writer: &mut ArgWriter, _: &Stage) {
        writer.put_usize(self.0);
    }
}

impl Args for CountSlot {
    const DECODE: Decode = Decode::Count;

    fn __describe(slots: &mut Vec<u8>, _: Internal) -> usize {
        slots.push(role::COUNT);
        1
    }
}

#[doc(hidden)]
pub struct FallbackSlot(Range<usize>);

impl Sealed<tag::Args> for FallbackSlot {}
impl Slot for FallbackSlot {
    type Codec = PreformattedCodec;
    fn encoded_len(&self, _: &Stage) -> usize {
        size_of::<usize>() + self.0.len()
    }
    fn write(&self, writer: &mut ArgWriter, stage: &Stage) {
        writer.put_length_prefixed(stage.bytes(self.0.clone()));
    }
}

#[doc(hidden)]
pub trait ViaBytes<'a> {
    type Slot;
    fn __tachylog_slot<M>(&self, stage: &mut Stage, spec: &Applied) -> Marked<Self::Slot, M>;
}
impl<'a, T: BytesArg + ?Sized> ViaBytes<'a> for &&&&Wrap<'a, T> {
    type Slot = BytesSlot<'a, T::Codec>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_slot<M>(&self, _: &mut Stage, _: &Applied) -> Marked<Self::Slot, M> {
        Marked::new(BytesSlot::new(self.0.arg_bytes()))
    }
}

#[doc(hidden)]
pub trait ViaList<'a> {
    type Slot;
    fn __tachylog_slot<M>(&self, stage: &mut Stage, spec: &Applied) -> Marked<Self::Slot, M>;
}
impl<'a, T: ListArg + ?Sized> ViaList<'a> for &&&Wrap<'a, T> {
    type Slot = ListSlot<'a, T::Elem>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_slot<M>(&self, _: &mut Stage, _: &Applied) -> Marked<Self::Slot, M> {
        Marked::new(ListSlot::new(self.0.elems()))
    }
}

#[doc(hidden)]
pub trait ViaCopy<'a> {
    type Slot;
    fn __tachylog_slot<M>(&self, stage: &mut Stage, spec: &Applied) -> Marked<Self::Slot, M>;
}
impl<'a, T: CopyArg> ViaCopy<'a> for &&Wrap<'a, T> {
    type Slot = CopySlot<'a, T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_slot<M>(&self, _: &mut Stage, _: &Applied) -> Marked<Self::Slot, M> {
        Marked::new(CopySlot(self.0))
    }
}

#[doc(hidden)]
pub trait ViaCopyRef<'a> {
    type Slot;
    fn __tachylog_slot<M>(&self, stage: &mut Stage, spec: &Applied) -> Marked<Self::Slot, M>;
}
impl<'a, 'b: 'a, T: CopyArg> ViaCopyRef<'a> for &Wrap<'a, &'b T> {
    type Slot = CopySlot<'a, T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_slot<M>(&self, _: &mut Stage, _: &Applied) -> Marked<Self::Slot, M> {
        Marked::new(CopySlot(*self.0))
    }
}

#[doc(hidden)]
pub trait ViaFallback {
    type Target: ?Sized;
    type Slot;
    fn __tachylog_slot<M: FmtTrait<Self::Target>>(
        &self,
        stage: &mut Stage,
        spec: &Applied,
    ) -> Marked<Self::Slot, M>;
}
impl<T: ?Sized> ViaFallback for Wrap<'_, T> {
    type Target = T;
    type Slot = FallbackSlot;
    fn __tachylog_slot<M: FmtTrait<T>>(
        &self,
        stage: &mut Stage,
        spec: &Applied,
    ) -> Marked<Self::Slot, M> {
        let value = self.0;
        Marked::new(stage.fallback_with(&Fmt(&|f: &mut fmt::Formatter<'_>| M::fmt(value, f)), spec))
    }
}

/// A formatting trait, named by a marker type, so that the caller-side fallback is one function
/// per (argument type, trait) shared by every call site, instead of a closure per call site.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{T}` cannot be formatted with this placeholder's trait",
    note = "see the `format_args!` error for this call: the placeholder's trait is not implemented"
)]
pub trait FmtTrait<T: ?Sized> {
    fn fmt(value: &T, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// A marker's [`Decode`]: a message value's renderer and taker, or a field's push function.
macro_rules! decode_of {
    (Message $function:ident $codec:ident $marker:ident) => {
        $crate::record::Decode::Message(
            $crate::codec::render::$function::<$codec>,
            $crate::frontend::args::take_message::<$codec, $marker>,
        )
    };
    (Field $function:ident $codec:ident $marker:ident) => {
        $crate::record::Decode::Field($crate::codec::render::$function::<$codec>, None)
    };
}

/// Marker types named after a formatting trait: each formats a value on the calling thread
/// through that trait ([`FmtTrait`], for the fallback) and names what the back end does with
/// the value's bytes ([`Decodes`]: render a message argument, or record a field).
macro_rules! trait_markers {
    ($($marker:ident: $trait:ident => $decode:ident($function:ident) $typed:ident $role:ident),* $(,)?) => {$(
        pub struct $marker;
        impl $crate::codec::sealed::Sealed<$crate::codec::sealed::tag::Args> for $marker {}
        impl<T: ::std::fmt::$trait + ?Sized> $crate::frontend::args::FmtTrait<T> for $marker {
            #[inline]
            fn fmt(value: &T, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::$trait::fmt(value, f)
            }
        }
        impl<C: $crate::codec::Codec> $crate::frontend::args::Decodes<C> for $marker
        where
            for<'x> $crate::codec::View<'x, C>: ::std::fmt::$trait,
        {
            const DECODE: $crate::record::Decode = decode_of!($decode $function C $marker);
            const TYPED: $crate::record::Typing = $crate::record::Typing::$typed;
            const ROLE: u8 = $crate::codec::shape::role::$role;
        }
    )*};
}

/// The markers of a message argument, one per formatting trait.
#[doc(hidden)]
pub mod fmt_trait {
    trait_markers!(
        Display: Display => Message(display) Display DISPLAY,
        Debug: Debug => Message(debug) OtherTrait DEBUG,
        LowerHex: LowerHex => Message(lower_hex) OtherTrait LOWER_HEX,
        UpperHex: UpperHex => Message(upper_hex) OtherTrait UPPER_HEX,
        Octal: Octal => Message(octal) OtherTrait OCTAL,
        Binary: Binary => Message(binary) OtherTrait BINARY,
        LowerExp: LowerExp => Message(lower_exp) OtherTrait LOWER_EXP,
        UpperExp: UpperExp => Message(upper_exp) OtherTrait UPPER_EXP,
        Pointer: Pointer => Message(pointer) Never POINTER,
    );
}

/// The markers of a structured field's value, by sigil: what the back end records. `%` and `?`
/// also format on the calling thread, for a type without a raw encoding.
#[doc(hidden)]
pub mod field_role {
    use super::Decodes;
    use crate::codec::render;
    use crate::codec::{Codec, NativeField, View};
    use crate::record::Decode;

    /// `key = value`: the value's own type (number, bool, text).
    pub struct Native;
    impl crate::codec::sealed::Sealed<crate::codec::sealed::tag::Args> for Native {}
    impl<C: Codec> Decodes<C> for Native
    where
        for<'x> View<'x, C>: NativeField,
    {
        const DECODE: Decode =
            Decode::Field(render::push_native::<C>, Some(render::native_value::<C>));
        const ROLE: u8 = crate::codec::shape::role::FIELD_NATIVE;
    }

    trait_markers!(
        Display: Display => Field(push_display) Never FIELD_DISPLAY,
        Debug: Debug => Field(push_debug) Never FIELD_DEBUG,
    );
}

thread_local! {
    /// A reusable buffer for fallback formatting, so that after warm-up the fallback path does
    /// not allocate either. Taken out while in use, so a `Display` impl that logs (re-entrancy)
    /// simply gets a fresh buffer instead of a `RefCell` panic.
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Text formatted on the calling thread for the fallback slots of one log call.
#[doc(hidden)]
pub struct Stage {
    text: Option<String>,
}

impl Stage {
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Stage { text: None }
    }

    /// Formats one argument with `f` and returns where its text is.
    #[cold]
    fn format(&mut self, f: impl FnOnce(&mut dyn fmt::Write) -> fmt::Result) -> Range<usize> {
        let text = self.text.get_or_insert_with(|| {
            SCRATCH
                .try_with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).ok())
                .ok()
                .flatten()
                .unwrap_or_default()
        });
        let start = text.len();
        let outcome = crate::panic_guard::catch_user_panic(|| f(text));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(fmt::Error)) => {
                text.truncate(start);
                text.push_str("<formatting error>");
            }
            Err(message) => {
                text.truncate(start);
                text.push_str("<formatting panicked: ");
                text.push_str(&message);
                text.push('>');
            }
        }
        start..text.len()
    }

    /// A slot holding text formatted here by `f`.
    pub(crate) fn fallback(
        &mut self,
        f: impl FnOnce(&mut dyn fmt::Write) -> fmt::Result,
    ) -> FallbackSlot {
        FallbackSlot(self.format(f))
    }

    /// A slot holding `value` formatted here with the placeholder's `spec`.
    #[cold]
    pub(crate) fn fallback_with(&mut self, value: &Fmt<'_>, spec: &Applied) -> FallbackSlot {
        self.fallback(|out| apply_spec(value, spec, out))
    }

    fn bytes(&self, range: Range<usize>) -> &[u8] {
        self.text.as_deref().map_or(&[], |t| &t.as_bytes()[range])
    }
}

impl Drop for Stage {
    /// Inline and empty for the calls without a fallback argument (nearly all): the buffer
    /// goes back to the thread out of line.
    #[inline]
    fn drop(&mut self) {
        if let Some(text) = self.text.take() {
            give_back(text);
        }
    }
}

/// Keeps a fallback buffer for the thread's next call, unless it grew huge (a one-off big
/// message).
#[cold]
#[inline(never)]
fn give_back(mut text: String) {
    text.clear();
    if text.capacity() <= 64 * 1024 {
        let _ = SCRATCH.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.capacity() < text.capacity() {
                    *s = text;
                }
            }
        });
    }
}

/// Slot constructors for the codec's unit tests, which exercise encoding without the macro.
#[cfg(test)]
pub(crate) fn copy_slot_for_tests<T: CopyArg>(value: &T) -> CopySlot<'_, T> {
    CopySlot(value)
}

#[cfg(test)]
pub(crate) fn str_slot_for_tests(s: &str) -> BytesSlot<'_, StrCodec> {
    BytesSlot {
        bytes: s.as_bytes(),
        _codec: PhantomData,
    }
}

#[cfg(test)]
pub(crate) fn lossy_slot_for_tests(bytes: &[u8]) -> BytesSlot<'_, LossyCodec> {
    BytesSlot {
        bytes,
        _codec: PhantomData,
    }
}
