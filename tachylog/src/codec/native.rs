//! The traits that say which values travel as raw bytes: [`CopyArg`] (copied bit for bit,
//! formatted on the back end with the type's own impls) and [`NativeValue`] (a `CopyArg` whose
//! field value is typed: a number, a boolean or null in JSON).
//!
//! Layer 2 (see `ARCHITECTURE.md`), beside the encoding they select: the calling thread's slots
//! ([`crate::frontend`]) pick them at compile time, and the back end's decoders
//! ([`super::views`]) read them back. Imports only [`crate::fields`] (to push typed values).

use super::sealed::{EscapeFree, Internal, PrimKind};
use super::shape::Prim;
use super::TextBuf;
use crate::fields::{FieldValue, Fields};

/// A message value kept as its type rather than its text, for the binary log: what a `{}`
/// of it writes is its [`CopyArg`] fast path's text, so a reader renders it back to the same
/// bytes ([`Typed::render`]). Not a public API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Typed {
    /// An unsigned integer of at most 64 bits.
    U64(u64),
    /// A signed integer of at most 64 bits.
    I64(i64),
    /// `u128`.
    U128(u128),
    /// `i128`.
    I128(i128),
    /// `f64`.
    F64(f64),
    /// `f32` (its shortest digits are not those of the same value as `f64`).
    F32(f32),
    /// `bool`.
    Bool(bool),
}

impl Typed {
    /// Appends `{}` of the value: the text the writer's renderer wrote for it.
    pub(crate) fn render(self, out: &mut TextBuf<'_>) {
        let t = Internal::TOKEN;
        match self {
            Typed::U64(v) => v.__fast_display(None, out, t),
            Typed::I64(v) => v.__fast_display(None, out, t),
            Typed::U128(v) => v.__fast_display(None, out, t),
            Typed::I128(v) => v.__fast_display(None, out, t),
            Typed::F64(v) => v.__fast_display(None, out, t),
            Typed::F32(v) => v.__fast_display(None, out, t),
            Typed::Bool(v) => v.__fast_display(None, out, t),
        };
    }
}

/// Opts a type into bit-for-bit transport: the calling thread copies the value into the queue
/// and the back end formats it later with the type's own `Display`/`Debug`/... impls.
///
/// This is the fastest way to log a type of your own. `Copy + Send + 'static` makes it sound: a
/// `Copy` type has no destructor and no owned heap data, `'static` means it borrows nothing that
/// could be gone when the back end formats it, and `Send` means it may be used on the back end's
/// thread.
///
/// Keep `fmt` impls of such types cheap and free of side effects: they run on the back end,
/// later, possibly after the values they might look up have changed.
///
/// ```
/// #[derive(Clone, Copy, Debug)]
/// struct OrderId(u64);
/// impl std::fmt::Display for OrderId {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "order-{}", self.0)
///     }
/// }
/// impl tachylog::CopyArg for OrderId {}
///
/// tachylog::info!("filled {} ({:?})", OrderId(7), OrderId(7));
/// ```
pub trait CopyArg: Copy + Send + 'static {
    /// Whether every text the back end writes for a value of this type, with any trait and
    /// spec but a fill character, is free of bytes that need escaping (digits, signs, `.`,
    /// `e`, `inf`, `NaN`, `true`): a message made only of such values and clean literal text is
    /// not scanned. Set by tachylog for numbers and `bool`; its type is private to tachylog, so
    /// no other type can claim it.
    #[doc(hidden)]
    const __ESCAPE_FREE: EscapeFree = EscapeFree(false);

    /// How a reader without this build's code reads the value's bytes (see `codec/SHAPES.md`):
    /// a primitive whose layout tachylog knows, or opaque bytes shown with the type's name.
    /// Set by tachylog for numbers, `bool`, `char`, `()` and the `NonZero` integers; its type
    /// is private to tachylog, so no other type can claim a layout.
    #[doc(hidden)]
    const __PRIM: PrimKind = PrimKind(Prim::Opaque);

    /// Appends `{}` (or `{:.N}` when `precision` is set) of the value without `core::fmt`, if
    /// the type has such a fast path; `false` (nothing written) otherwise. Implemented by
    /// tachylog for numbers, `bool` and `char`; the [`Internal`] argument keeps it so.
    #[doc(hidden)]
    #[inline]
    fn __fast_display(
        &self,
        _precision: Option<usize>,
        _out: &mut TextBuf<'_>,
        _: Internal,
    ) -> bool {
        false
    }

    /// The same for `{:?}`.
    #[doc(hidden)]
    #[inline]
    fn __fast_debug(&self, _out: &mut TextBuf<'_>, _: Internal) -> bool {
        false
    }

    /// The value as a [`Typed`], if `{}` of it is its `__fast_display` text: numbers and
    /// `bool`. Implemented by tachylog only.
    #[doc(hidden)]
    #[inline]
    fn __typed(&self, _: Internal) -> Option<Typed> {
        None
    }
}

/// Integers: `{}` and `{:?}` are the decimal digits (written in place up to 64 bits, see
/// `codec::decimal`; `itoa` for 128); a precision is left to `core::fmt`.
macro_rules! integer_args {
    ($append:ident as $wide:ty, $typed:ident: $($t:ty => $prim:expr),*) => {$(
        impl CopyArg for $t {
            const __ESCAPE_FREE: EscapeFree = EscapeFree(true);
            const __PRIM: PrimKind = PrimKind($prim);

            #[inline]
            fn __typed(&self, _: Internal) -> Option<Typed> {
                Some(Typed::$typed(*self as $wide))
            }

            #[inline]
            fn __fast_display(&self, precision: Option<usize>, out: &mut TextBuf<'_>, _: Internal) -> bool {
                if precision.is_some() {
                    return false;
                }
                super::decimal::$append(out, *self as $wide);
                true
            }
            #[inline]
            fn __fast_debug(&self, out: &mut TextBuf<'_>, _: Internal) -> bool {
                super::decimal::$append(out, *self as $wide);
                true
            }
        }
    )*};
}
integer_args!(append_u64 as u64, U64:
    u8 => Prim::U8, u16 => Prim::U16, u32 => Prim::U32, u64 => Prim::U64, usize => Prim::USIZE);
integer_args!(append_i64 as i64, I64:
    i8 => Prim::I8, i16 => Prim::I16, i32 => Prim::I32, i64 => Prim::I64, isize => Prim::ISIZE);

macro_rules! wide_integer_args {
    ($($t:ty: $typed:ident),*) => {$(
        impl CopyArg for $t {
            const __ESCAPE_FREE: EscapeFree = EscapeFree(true);
            const __PRIM: PrimKind = PrimKind(Prim::$typed);

            #[inline]
            fn __typed(&self, _: Internal) -> Option<Typed> {
                Some(Typed::$typed(*self))
            }

            #[inline]
            fn __fast_display(&self, precision: Option<usize>, out: &mut TextBuf<'_>, _: Internal) -> bool {
                if precision.is_some() {
                    return false;
                }
                out.push_str(itoa::Buffer::new().format(*self));
                true
            }
            #[inline]
            fn __fast_debug(&self, out: &mut TextBuf<'_>, _: Internal) -> bool {
                out.push_str(itoa::Buffer::new().format(*self));
                true
            }
        }
    )*};
}
wide_integer_args!(u128: U128, i128: I128);

/// Floats: shortest digits, and `{:.N}` where it can be decided exactly (see `plain`).
macro_rules! float_args {
    ($($t:ty: $typed:ident),*) => {$(
        impl CopyArg for $t {
            const __ESCAPE_FREE: EscapeFree = EscapeFree(true);
            const __PRIM: PrimKind = PrimKind(Prim::$typed);

            #[inline]
            fn __typed(&self, _: Internal) -> Option<Typed> {
                Some(Typed::$typed(*self))
            }

            #[inline]
            fn __fast_display(&self, precision: Option<usize>, out: &mut TextBuf<'_>, _: Internal) -> bool {
                match precision {
                    None => {
                        super::plain::push_display(*self, out);
                        true
                    }
                    Some(precision) => super::plain::push_fixed(*self, precision, out),
                }
            }
            #[inline]
            fn __fast_debug(&self, out: &mut TextBuf<'_>, _: Internal) -> bool {
                super::plain::push_debug(*self, out);
                true
            }
        }
    )*};
}
float_args!(f32: F32, f64: F64);

impl CopyArg for bool {
    const __ESCAPE_FREE: EscapeFree = EscapeFree(true);
    const __PRIM: PrimKind = PrimKind(Prim::Bool);

    #[inline]
    fn __typed(&self, _: Internal) -> Option<Typed> {
        Some(Typed::Bool(*self))
    }

    #[inline]
    fn __fast_display(&self, precision: Option<usize>, out: &mut TextBuf<'_>, _: Internal) -> bool {
        if precision.is_some() {
            return false;
        }
        out.push_str(if *self { "true" } else { "false" });
        true
    }
    #[inline]
    fn __fast_debug(&self, out: &mut TextBuf<'_>, _: Internal) -> bool {
        self.__fast_display(None, out, Internal::TOKEN)
    }
}

impl CopyArg for char {
    const __PRIM: PrimKind = PrimKind(Prim::Char);

    #[inline]
    fn __fast_display(&self, precision: Option<usize>, out: &mut TextBuf<'_>, _: Internal) -> bool {
        if precision.is_some() {
            return false;
        }
        out.push(*self);
        true
    }
}

impl CopyArg for () {
    const __PRIM: PrimKind = PrimKind(Prim::Unit);
}

// `NonZeroN` is `repr(transparent)` over `N`, and formats as `N` does with every trait: a
// reader shows its bytes as that integer.
macro_rules! non_zero_args {
    ($($t:ty => $prim:expr),*) => {$(
        impl CopyArg for $t {
            const __PRIM: PrimKind = PrimKind($prim);
        }
    )*};
}
non_zero_args!(
    std::num::NonZeroU8 => Prim::U8,
    std::num::NonZeroU16 => Prim::U16,
    std::num::NonZeroU32 => Prim::U32,
    std::num::NonZeroU64 => Prim::U64,
    std::num::NonZeroU128 => Prim::U128,
    std::num::NonZeroUsize => Prim::USIZE,
    std::num::NonZeroI8 => Prim::I8,
    std::num::NonZeroI16 => Prim::I16,
    std::num::NonZeroI32 => Prim::I32,
    std::num::NonZeroI64 => Prim::I64,
    std::num::NonZeroI128 => Prim::I128,
    std::num::NonZeroIsize => Prim::ISIZE
);

macro_rules! copy_args {
    ($($t:ty),*) => {$( impl CopyArg for $t {} )*};
}
copy_args!(
    std::time::Duration,
    std::net::IpAddr,
    std::net::Ipv4Addr,
    std::net::Ipv6Addr,
    std::net::SocketAddr,
    std::net::SocketAddrV4,
    std::net::SocketAddrV6,
    std::cmp::Ordering
);
impl<T: CopyArg> CopyArg for Option<T> {}
impl<T: CopyArg, const N: usize> CopyArg for [T; N] {}
impl<A: CopyArg, B: CopyArg> CopyArg for (A, B) {}
impl<A: CopyArg, B: CopyArg, C: CopyArg> CopyArg for (A, B, C) {}

/// A [`CopyArg`] type with a native field value: its fields are numbers, booleans or null in
/// JSON rather than text. Implemented for integers, floats, `bool`, `char`, `()`, the
/// `NonZero` integers, and `Option` of any of them (`None` is null).
///
/// ```
/// let retries: Option<u32> = None;
/// tachylog::info!(attempt = 3u8, retries, ratio = 0.5; "retrying");
/// ```
pub trait NativeValue: CopyArg {
    /// The field value, which borrows nothing, or the `char` it is (whose text needs a buffer):
    /// what a `Fields` gets and what the binary log's encoder takes straight off the record.
    /// Only tachylog implements it (the [`Internal`] argument).
    #[doc(hidden)]
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char>;
}

/// Adds `value` to `fields` under `key`.
pub(crate) fn push_native<V: NativeValue>(value: &V, key: &str, fields: &mut Fields) {
    match value.field_value(Internal::TOKEN) {
        Ok(value) => fields.push_value(key, value),
        Err(c) => fields.push_value(key, FieldValue::Str(c.encode_utf8(&mut [0; 4]))),
    }
}

macro_rules! native_numbers {
    ($variant:ident as $wide:ty: $($t:ty),*) => {$(
        impl NativeValue for $t {
            fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
                Ok(FieldValue::$variant(<$wide>::from(*self)))
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
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
        Ok(FieldValue::U64(*self as u64))
    }
}

impl NativeValue for isize {
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
        Ok(FieldValue::I64(*self as i64))
    }
}

macro_rules! native_non_zero {
    ($($t:ty),*) => {$(
        impl NativeValue for $t {
            fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
                self.get().field_value(Internal::TOKEN)
            }
        }
    )*};
}
native_non_zero!(
    std::num::NonZeroU8,
    std::num::NonZeroU16,
    std::num::NonZeroU32,
    std::num::NonZeroU64,
    std::num::NonZeroU128,
    std::num::NonZeroUsize,
    std::num::NonZeroI8,
    std::num::NonZeroI16,
    std::num::NonZeroI32,
    std::num::NonZeroI64,
    std::num::NonZeroI128,
    std::num::NonZeroIsize
);

impl NativeValue for char {
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
        Err(*self)
    }
}

impl NativeValue for () {
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
        Ok(FieldValue::Null)
    }
}

impl<T: NativeValue> NativeValue for Option<T> {
    fn field_value(&self, _: Internal) -> Result<FieldValue<'static>, char> {
        match self {
            Some(v) => v.field_value(Internal::TOKEN),
            None => Ok(FieldValue::Null),
        }
    }
}
