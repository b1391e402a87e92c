//! [`View`]: one encoded argument, formatted as its original type would be.

use super::sealed::Internal;
use super::{
    init_slice, short_ascii, Codec, CopyCodec, Decoder, ListCodec, LossyCodec, PreformattedCodec,
    StrCodec,
};
use crate::fields::FieldValue;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// One decoded argument. Implements exactly the formatting traits the original type did, so the
/// back end formats it with the call site's spec (width, precision, flags) as `format!` would.
pub struct View<'a, C> {
    bytes: Option<&'a [MaybeUninit<u8>]>,
    _codec: PhantomData<C>,
}

impl<'a, C> View<'a, C> {
    pub(crate) fn new(bytes: Option<&'a [MaybeUninit<u8>]>) -> Self {
        View {
            bytes,
            _codec: PhantomData,
        }
    }
}

/// Shown in place of an argument whose bytes are missing (a malformed record).
const MISSING: &str = "<?>";

impl<C> View<'_, C> {
    fn text(&self) -> Result<&str, &[u8]> {
        text_of(self.bytes)
    }
}

/// A text argument's bytes as `str`, or the bytes when they are not UTF-8.
fn text_of(bytes: Option<&[MaybeUninit<u8>]>) -> Result<&str, &[u8]> {
    let bytes = init_slice(bytes.unwrap_or(&[]));
    match short_ascii(bytes) {
        Some(text) => Ok(text),
        None => std::str::from_utf8(bytes).map_err(|_| bytes),
    }
}

/// Writes bytes as UTF-8, replacing invalid sequences with U+FFFD, without allocating.
fn write_lossy(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for chunk in bytes.utf8_chunks() {
        f.write_str(chunk.valid())?;
        if !chunk.invalid().is_empty() {
            f.write_str("\u{FFFD}")?;
        }
    }
    Ok(())
}

/// Text and lossy byte strings format alike: as the `str` when the bytes are valid UTF-8 (so
/// width, precision and `{:?}` escaping apply), with U+FFFD replacements otherwise.
macro_rules! text_like {
    ($($codec:ty),*) => {$(
        impl fmt::Display for View<'_, $codec> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match (self.bytes, self.text()) {
                    (None, _) => f.write_str(MISSING),
                    (_, Ok(s)) => fmt::Display::fmt(s, f),
                    (_, Err(bytes)) => write_lossy(bytes, f),
                }
            }
        }

        impl fmt::Debug for View<'_, $codec> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match (self.bytes, self.text()) {
                    (None, _) => f.write_str(MISSING),
                    (_, Ok(s)) => fmt::Debug::fmt(s, f),
                    (_, Err(bytes)) => fmt::Debug::fmt(&String::from_utf8_lossy(bytes), f),
                }
            }
        }
    )*};
}
text_like!(StrCodec, LossyCodec);

/// Preformatted text already carries the placeholder's spec: every trait writes it verbatim.
macro_rules! verbatim {
    ($($trait:ident),*) => {$(
        impl fmt::$trait for View<'_, PreformattedCodec> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match (self.bytes, self.text()) {
                    (None, _) => f.write_str(MISSING),
                    (_, Ok(s)) => f.write_str(s),
                    (_, Err(bytes)) => write_lossy(bytes, f),
                }
            }
        }
    )*};
}
verbatim!(Display, Debug, LowerHex, UpperHex, Octal, Binary, LowerExp, UpperExp, Pointer);

impl<T: crate::codec::CopyArg> View<'_, CopyCodec<T>> {
    fn value(&self) -> Option<T> {
        super::read_copy(self.bytes)
    }
}

/// A `CopyArg` value formats through its own implementation of each trait it has.
macro_rules! forward {
    ($($trait:ident),*) => {$(
        impl<T: crate::codec::CopyArg + fmt::$trait> fmt::$trait for View<'_, CopyCodec<T>> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.value() {
                    Some(v) => fmt::$trait::fmt(&v, f),
                    None => f.write_str(MISSING),
                }
            }
        }
    )*};
}
forward!(Display, Debug, LowerHex, UpperHex, Octal, Binary, LowerExp, UpperExp, Pointer);

/// A codec whose values can be elements of a list: `CopyArg` values and text. A trait of its
/// own rather than `View<C>: Debug`, so that proving a list's `Debug` never asks about a list
/// of lists (the trait solver would recurse without end while a slot's type is still open).
#[doc(hidden)]
pub trait ListElemCodec: Codec {
    /// `{:?}` of one element from its bytes.
    fn fmt_elem(bytes: Option<&[MaybeUninit<u8>]>, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl ListElemCodec for StrCodec {
    fn fmt_elem(bytes: Option<&[MaybeUninit<u8>]>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&View::<StrCodec>::new(bytes), f)
    }
}

impl<T: crate::codec::CopyArg + fmt::Debug> ListElemCodec for CopyCodec<T> {
    fn fmt_elem(bytes: Option<&[MaybeUninit<u8>]>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&View::<CopyCodec<T>>::new(bytes), f)
    }
}

/// One element of a list, formatted by its codec.
struct Element<'a, C>(Option<&'a [MaybeUninit<u8>]>, PhantomData<C>);

impl<C: ListElemCodec> fmt::Debug for Element<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        C::fmt_elem(self.0, f)
    }
}

/// A list formats as `{:?}` of a slice does: `[a, b, c]` (or one entry a line with `{:#?}`),
/// each element through its own codec. Lists have no `Display`, like `Vec`.
impl<C: ListElemCodec> fmt::Debug for View<'_, ListCodec<C>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(bytes) = self.bytes else {
            return f.write_str(MISSING);
        };
        let mut decoder = Decoder::new(bytes);
        let count = decoder.count();
        let mut list = f.debug_list();
        for _ in 0..count {
            let element = C::take(&mut decoder);
            if decoder.is_malformed() {
                // A damaged count: show what there is, then mark the damage once.
                list.entry(&format_args!("{MISSING}"));
                break;
            }
            list.entry(&Element::<C>(element, PhantomData));
        }
        list.finish()
    }
}

/// How a decoded argument becomes a typed field value, for fields written without `%` or `?`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this field's type has no native encoding",
    label = "not a number, bool, char, string or `Option` of one",
    note = "log it as text: `key = %value` uses its `Display`, `key = ?value` its `Debug`"
)]
pub trait NativeField {
    /// Adds the value to `fields` under `key`.
    fn push_to(&self, key: &str, fields: &mut crate::fields::Fields);

    /// The value [`NativeField::push_to`] adds for a view of these `bytes`, when it borrows
    /// nothing but them (`None`: text that is not UTF-8, a `char`): the binary log's encoder
    /// takes it off the record without a `Fields`.
    fn field_value<'b>(bytes: Option<&'b [MaybeUninit<u8>]>, _: Internal)
        -> Option<FieldValue<'b>>;
}

macro_rules! native_text {
    ($($codec:ty),*) => {$(
        impl NativeField for View<'_, $codec> {
            fn push_to(&self, key: &str, fields: &mut crate::fields::Fields) {
                match Self::field_value(self.bytes, Internal::TOKEN) {
                    Some(value) => fields.push_value(key, value),
                    // Not UTF-8: U+FFFD in place of each invalid sequence.
                    None => {
                        let lossy = String::from_utf8_lossy(self.text().err().unwrap_or_default());
                        fields.push_value(key, FieldValue::Str(&lossy));
                    }
                }
            }

            fn field_value<'b>(
                bytes: Option<&'b [MaybeUninit<u8>]>,
                _: Internal,
            ) -> Option<FieldValue<'b>> {
                match (bytes, text_of(bytes)) {
                    (None, _) => Some(FieldValue::Str(MISSING)),
                    (_, Ok(text)) => Some(FieldValue::Str(text)),
                    (_, Err(_)) => None,
                }
            }
        }
    )*};
}
native_text!(StrCodec, LossyCodec, PreformattedCodec);

impl<T: crate::codec::NativeValue> NativeField for View<'_, CopyCodec<T>> {
    fn push_to(&self, key: &str, fields: &mut crate::fields::Fields) {
        match self.value() {
            Some(v) => crate::codec::native::push_native(&v, key, fields),
            None => fields.push_value(key, FieldValue::Str(MISSING)),
        }
    }

    fn field_value<'b>(
        bytes: Option<&'b [MaybeUninit<u8>]>,
        _: Internal,
    ) -> Option<FieldValue<'b>> {
        match super::read_copy::<T>(bytes) {
            Some(v) => crate::codec::NativeValue::field_value(&v, Internal::TOKEN).ok(),
            None => Some(FieldValue::Str(MISSING)),
        }
    }
}

/// What the macros' generated field decoders call for a field without a sigil. Not a public
/// API. Written here rather than beside [`Fields`]' other methods so that `fields` (below
/// `codec` in the layers) needs nothing from `codec`.
#[doc(hidden)]
impl crate::fields::Fields {
    #[inline]
    pub fn __push_native<V: NativeField>(&mut self, key: &str, value: &V) {
        value.push_to(key, self);
    }
}
