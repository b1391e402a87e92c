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

use super::args::{field_role, BytesArg, BytesSlot, CopySlot, FallbackSlot, Marked, Stage, Wrap};
use crate::codec::NativeValue;
use std::fmt;

#[doc(hidden)]
pub trait NativeViaBytes<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Marked<Self::Slot, field_role::Native>;
}
impl<'a, T: BytesArg + ?Sized> NativeViaBytes<'a> for &&&Wrap<'a, T> {
    type Slot = BytesSlot<'a, T::Codec>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Marked<Self::Slot, field_role::Native> {
        Marked::new(BytesSlot::new(self.0.arg_bytes()))
    }
}

#[doc(hidden)]
pub trait NativeViaCopy<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Marked<Self::Slot, field_role::Native>;
}
impl<'a, T: NativeValue> NativeViaCopy<'a> for &&Wrap<'a, T> {
    type Slot = CopySlot<'a, T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Marked<Self::Slot, field_role::Native> {
        Marked::new(CopySlot::new(self.0))
    }
}

#[doc(hidden)]
pub trait NativeViaCopyRef<'a> {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Marked<Self::Slot, field_role::Native>;
}
impl<'a, 'b: 'a, T: NativeValue> NativeViaCopyRef<'a> for &Wrap<'a, &'b T> {
    type Slot = CopySlot<'a, T>;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn __tachylog_native_slot(&self, _: &mut Stage) -> Marked<Self::Slot, field_role::Native> {
        Marked::new(CopySlot::new(*self.0))
    }
}

#[doc(hidden)]
pub trait NativeViaDisplay {
    type Slot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Marked<Self::Slot, field_role::Native>;
}
impl<T: fmt::Display + ?Sized> NativeViaDisplay for Wrap<'_, T> {
    type Slot = FallbackSlot;
    fn __tachylog_native_slot(&self, stage: &mut Stage) -> Marked<Self::Slot, field_role::Native> {
        let value = self.0;
        Marked::new(stage.fallback(|w| write!(w, "{value}")))
    }
}
