//! How a structured field written without a sigil (`info!(user_id = id; "...")`) travels.
//!
//! Fields with `%` or `?` travel like message arguments formatted with `{}` or `{:?}` (see
//! [`super::args`]). A field without a sigil keeps its type, so JSON gets a number or a
//! boolean: the macro calls `__tachylog_native_slot` on `&&&&Wrap(value)`, and autoref
//! specialisation picks, at compile time:
//!
//! 1. [`NativeViaBytes`]: text (`&str`, `String`, ...) and [`Lossy`](crate::Lossy) bytes, copied
//!    raw;
//! 2. [`NativeViaCopy`]: a [`NativeValue`] (integers, floats, `bool`, `char`, `()`, `Option` of
//!    one), copied bit for bit, typed again on the back end;
//! 3. [`NativeViaCopyRef`]: a reference to one, dereferenced and copied;
//! 4. [`NativeViaDisplay`]: anything else that implements `Display`, formatted here (the
//!    documented slow path, as for message arguments).

use super::args::{BytesArg, BytesSlot, CopyArg, CopySlot, FallbackSlot, Stage, Wrap};
use crate::{FieldValue, Fields};
use std::fmt;

/// A [`CopyArg`] type with a native field value: its fields are numbers, booleans or null in
/// JSON rather than text. Implemented for integers, floats, `bool`, `char`, `()`, the
/// `NonZero` integers, and `Option` of any of them (`None` is null).
///
/// ```
/// let retries: Option<u32> = None;
/// tachylog::info!(attempt = 3u8, retries, ratio = 0.5; "retrying");
/// ```
pub trait NativeValue: CopyArg {
    /// Adds the value to `fields` under `key`.
    #[doc(hidden)]
    fn push_to(&self, key: &str, fields: &mut Fields);
}

macro_rules! native_numbers {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl NativeValue for $t {
            fn push_to(&self, key: &str, fields: &mut Fields) {
                fields.push_value(key, FieldValue::$variant(<$wide>::from(*self)));
            }
        }
    )*};
}
native_numbers!(U64 as u64: u8, u16, u32, u64);
native_numbers!(I64 as i64: i8, i16, i32, i64);
native_numbers!(F64 as f64: f32, f64);
native_numbers!(U128 as u128: u128);
native_numbers!(I128 as i128: i128);
native_numbers!(Bool as bool: bool);

impl NativeValue for usize {
    fn push_to(&self, key: &str, fields: &mut Fields) {
        fields.push_value(key, FieldValue::U64(*self as u64));
    }
}

impl NativeValue for isize {
    fn push_to(&self, key: &str, fields: &mut Fields) {
        fields.push_value(key, FieldValue::I64(*self as i64));
    }
}

macro_rules! native_non_zero {
    ($($t:ty),*) => {$(
        impl NativeValue for $t {
            fn push_to(&self, key: &str, fields: &mut Fields) {
                self.get().push_to(key, fields);
            }
        }
    )*};
}
native_non_zero!(
    std::num::NonZeroU8, std::num::NonZeroU16, std::num::NonZeroU32, std::num::NonZeroU64,
    std::num::NonZeroU128, std::num::NonZeroUsize, std::num::NonZeroI8, std::num::NonZeroI16,
    std::num::NonZeroI32, std::num::NonZeroI64, std::num::NonZeroI128, std::num::NonZeroIsize
);

impl NativeValue for char {
    fn push_to(&self, key: &str, fields: &mut Fields) {
        fields.push_value(key, FieldValue::Str(self.encode_utf8(&mut [0; 4])));
    }
}

impl NativeValue for () {
    fn push_to(&self, key: &str, fields: &mut Fields) {
        fields.push_value(key, FieldValue::Null);
    }
}

impl<T: NativeValue> NativeValue for Option<T> {
    fn push_to(&self, key: &str, fields: &mut Fields) {
        match self {
            Some(v) => v.push_to(key, fields),
            None => fields.push_value(key, FieldValue::Null),
        }
    }
}

#[doc(hidden)]
pub trait NativeViaBytes<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Self::Slot;
}
impl<'a, T: BytesArg + ?Sized> NativeViaBytes<'a> for &&&Wrap<'a, T> {
    type Slot = BytesSlot<'a, T::Codec>;
    #[inline(always)]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Self::Slot {
        BytesSlot::new(self.0.arg_bytes())
    }
}

#[doc(hidden)]
pub trait NativeViaCopy<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Self::Slot;
}
impl<'a, T: NativeValue> NativeViaCopy<'a> for &&Wrap<'a, T> {
    type Slot = CopySlot<'a, T>;
    #[inline(always)]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Self::Slot {
        CopySlot::new(self.0)
    }
}

#[doc(hidden)]
pub trait NativeViaCopyRef<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Self::Slot;
}
impl<'a, 'b: 'a, T: NativeValue> NativeViaCopyRef<'a> for &Wrap<'a, &'b T> {
    type Slot = CopySlot<'a, T>;
    #[inline(always)]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Self::Slot {
        CopySlot::new(*self.0)
    }
}

#[doc(hidden)]
pub trait NativeViaDisplay {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Self::Slot;
}
impl<T: fmt::Display + ?Sized> NativeViaDisplay for Wrap<'_, T> {
    type Slot = FallbackSlot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Self::Slot {
        let value = self.0;
        stage.fallback(|w| write!(w, "{value}"))
    }
}
