//! The functions a record's `Decode` points at: one per (codec, formatting trait), shared by
//! every call site whose argument has that type, so a call site emits data, not code.
//!
//! A renderer takes one argument's bytes off the [`Decoder`] and appends its text to the
//! message. It first offers the bytes to the codec's fast path (`codec::plain`: numbers,
//! `bool`, `char`, text, already formatted text), which handles the plain specs `{}`, `{:?}` and
//! `{:.N}` of floats. Anything else (width, fill, alignment, sign, `#`, `0`, the hex and
//! exponent traits, user types) goes through `core::fmt` in `apply`, with the width and
//! precision passed as arguments and, when the spec has flags, through the call site's own
//! one-line [`FlagsFn`], the only code a call site emits for its formatting. `apply` is also
//! the only place user code runs (a `CopyArg` type's `Display`), so it is the only place a
//! panic is caught.
//!
//! Back end only.

use super::sealed::Internal;
use super::{Codec, Decoder, NativeField, TextBuf, View};
use crate::fields::{FieldValue, Fields};
use std::fmt;

/// A placeholder's spec as it applies to one record: width and precision resolved (from the
/// format string or from the record's count arguments), and the call site's flags function if
/// the spec has flags.
pub struct Applied {
    /// `{:8}` or `{:1$}`.
    pub width: Option<usize>,
    /// `{:.3}` or `{:.*}`.
    pub precision: Option<usize>,
    /// Set when the spec has fill, alignment, sign, `#`, `0` or a debug-hex type.
    pub flags: Option<FlagsFn>,
}

impl Applied {
    /// `{}`: no width, precision or flags (what most placeholders are; one short path for the
    /// macro to emit).
    #[doc(hidden)]
    pub const PLAIN: Applied = Applied {
        width: None,
        precision: None,
        flags: None,
    };

    /// No width and no flags: a fast path may apply (precision is for each to judge).
    #[inline]
    pub(crate) fn is_plain(&self) -> bool {
        self.width.is_none() && self.flags.is_none()
    }
}

/// Formats `value` with a spec written in the call site's format string: emitted by the macro
/// for the placeholders with flags, as `write!(out, "{0:>+1$.2$}", value, width, precision)`.
pub type FlagsFn = fn(&Fmt<'_>, usize, usize, &mut dyn fmt::Write) -> fmt::Result;

/// Appends one argument to the message.
pub type RenderFn = fn(&mut Decoder<'_>, &Applied, &mut TextBuf<'_>) -> Result<(), RenderError>;

/// Records one structured field.
pub type PushFn = fn(&mut Decoder<'_>, &'static str, &mut Fields);

/// Takes one native field's value off the decoder for the binary log ([`native_value`]).
pub type FieldValueFn = for<'a> fn(&mut Decoder<'a>) -> Option<FieldValue<'a>>;

/// Why an argument could not be rendered; the whole message is then replaced by a marker
/// naming the call site.
#[derive(Debug)]
pub enum RenderError {
    /// A `fmt` impl returned an error.
    Format,
    /// A `fmt` impl panicked, with this message. Boxed: it keeps the error, and so the
    /// `Result` every renderer returns, at 16 bytes, which come back in two registers instead
    /// of through memory (the rare panic pays an allocation).
    Panicked(Box<String>),
    /// The record's arguments do not match its call site's placeholders.
    Malformed,
}

// Two registers' worth: see `RenderError::Panicked`.
const _: () = assert!(std::mem::size_of::<Result<(), RenderError>>() <= 16);

/// One value's formatting as a closure, so that one non-generic function can apply any spec to
/// any type: every formatting trait of `Fmt` calls the closure with the `Formatter` it got,
/// which carries the spec, and the closure calls the value's own trait.
pub struct Fmt<'a>(pub(crate) &'a dyn Fn(&mut fmt::Formatter<'_>) -> fmt::Result);

macro_rules! fmt_traits {
    ($($trait:ident),*) => {$(
        impl fmt::$trait for Fmt<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                (self.0)(f)
            }
        }
    )*};
}
fmt_traits!(Display, Debug, LowerHex, UpperHex, Octal, Binary, LowerExp, UpperExp, Pointer);

/// Writes `value` with `spec` through `core::fmt`: the width and precision as arguments, the
/// flags through the call site's function. Shared by the back end's renderers and the calling
/// thread's fallback.
pub(crate) fn apply_spec(value: &Fmt<'_>, spec: &Applied, out: &mut dyn fmt::Write) -> fmt::Result {
    match (spec.flags, spec.width, spec.precision) {
        (Some(flags), width, precision) => {
            flags(value, width.unwrap_or(0), precision.unwrap_or(0), out)
        }
        (None, None, None) => write!(out, "{value}"),
        (None, Some(width), None) => write!(out, "{value:width$}"),
        (None, None, Some(precision)) => write!(out, "{value:.precision$}"),
        (None, Some(width), Some(precision)) => write!(out, "{value:width$.precision$}"),
    }
}

/// The `core::fmt` path: the spec applied by `Formatter`, the user's code under a panic guard.
#[inline(never)]
fn apply(value: &Fmt<'_>, spec: &Applied, out: &mut TextBuf<'_>) -> Result<(), RenderError> {
    let start = out.len();
    let outcome = crate::panic_guard::catch_user_panic(|| apply_spec(value, spec, out));
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(fmt::Error)) => {
            out.truncate(start);
            Err(RenderError::Format)
        }
        Err(panic) => {
            out.truncate(start);
            Err(RenderError::Panicked(Box::new(panic)))
        }
    }
}

macro_rules! renderers {
    ($($(#[$doc:meta])* $name:ident: $trait:ident => $fast:ident;)*) => {$(
        $(#[$doc])*
        // Inlined into a `Decode::Rendered` group's function, where the renderer is known (the
        // `core::fmt` path stays out of line, in `apply`); still instantiated on its own for
        // the pointers of `Decode::Message`.
        #[inline(always)]
        pub fn $name<C: Codec>(
            decoder: &mut Decoder<'_>,
            spec: &Applied,
            out: &mut TextBuf<'_>,
        ) -> Result<(), RenderError>
        where
            for<'x> View<'x, C>: fmt::$trait,
        {
            let bytes = C::take(decoder);
            if C::$fast(bytes, spec, out) {
                return Ok(());
            }
            let view = View::<C>::new(bytes);
            apply(&Fmt(&|f: &mut fmt::Formatter<'_>| fmt::$trait::fmt(&view, f)), spec, out)
        }
    )*};
}

renderers! {
    /// `{}`.
    display: Display => fast_display;
    /// `{:?}`.
    debug: Debug => fast_debug;
    /// `{:x}`.
    lower_hex: LowerHex => fast_verbatim;
    /// `{:X}`.
    upper_hex: UpperHex => fast_verbatim;
    /// `{:o}`.
    octal: Octal => fast_verbatim;
    /// `{:b}`.
    binary: Binary => fast_verbatim;
    /// `{:e}`.
    lower_exp: LowerExp => fast_verbatim;
    /// `{:E}`.
    upper_exp: UpperExp => fast_verbatim;
    /// `{:p}`.
    pointer: Pointer => fast_verbatim;
}

/// `key = value`: the value's native type (number, bool, text).
pub fn push_native<C: Codec>(decoder: &mut Decoder<'_>, key: &'static str, fields: &mut Fields)
where
    for<'x> View<'x, C>: NativeField,
{
    fields.__push_native(key, &decoder.view::<C>());
}

/// `key = value` for the binary log: the value [`push_native`] adds, taken off the decoder as a
/// [`FieldValue`] that borrows the record's bytes, when it needs nothing else (see
/// [`NativeField::field_value`]); `None` leaves the decoder past the value.
pub fn native_value<'a, C: Codec>(decoder: &mut Decoder<'a>) -> Option<FieldValue<'a>>
where
    for<'x> View<'x, C>: NativeField,
{
    <View<'static, C> as NativeField>::field_value(C::take(decoder), Internal::TOKEN)
}

/// `key = %value`.
pub fn push_display<C: Codec>(decoder: &mut Decoder<'_>, key: &'static str, fields: &mut Fields)
where
    for<'x> View<'x, C>: fmt::Display,
{
    fields.__push_display(key, &decoder.view::<C>());
}

/// `key = ?value`.
pub fn push_debug<C: Codec>(decoder: &mut Decoder<'_>, key: &'static str, fields: &mut Fields)
where
    for<'x> View<'x, C>: fmt::Debug,
{
    fields.__push_debug(key, &decoder.view::<C>());
}
