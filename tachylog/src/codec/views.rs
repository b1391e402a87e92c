//! [`View`]: one encoded argument, formatted as its original type would be.

use super::{init_slice, CopyCodec, LossyCodec, PreformattedCodec, StrCodec};
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
        let bytes = init_slice(self.bytes.unwrap_or(&[]));
        std::str::from_utf8(bytes).map_err(|_| bytes)
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
}

macro_rules! native_text {
    ($($codec:ty),*) => {$(
        impl NativeField for View<'_, $codec> {
            fn push_to(&self, key: &str, fields: &mut crate::fields::Fields) {
                let text = match (self.bytes, self.text()) {
                    (None, _) => std::borrow::Cow::Borrowed(MISSING),
                    (_, Ok(s)) => std::borrow::Cow::Borrowed(s),
                    (_, Err(bytes)) => String::from_utf8_lossy(bytes),
                };
                fields.push_value(key, crate::fields::FieldValue::Str(&text));
            }
        }
    )*};
}
native_text!(StrCodec, LossyCodec, PreformattedCodec);

impl<T: crate::codec::NativeValue> NativeField for View<'_, CopyCodec<T>> {
    fn push_to(&self, key: &str, fields: &mut crate::fields::Fields) {
        match self.value() {
            Some(v) => v.push_to(key, fields),
            None => fields.push_value(key, crate::fields::FieldValue::Str(MISSING)),
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
