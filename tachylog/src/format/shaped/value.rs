//! One argument's bytes read by its codec's shape, and written as the live back end writes it:
//! text copied (or `std`'s `{:?}` of it), primitives through [`spec`](super::spec), lists as
//! `{:?}` of a slice, other `Copy` values as their type name and raw bytes.

use super::spec::{self, NoSuchTrait, Resolved, Spec, Ty};
use crate::codec::shape::{CodecShape, Prim, Shape};
use crate::codec::{TextBuf, Typed};
use crate::error::ShapeError;
use crate::fields::FieldValue;
use std::fmt::Write as _;

/// The most text one record may render to. Widths of up to 65535 characters on every element
/// of a long list could otherwise ask for gigabytes from a few kilobytes of damaged bytes.
pub(crate) const MAX_TEXT: usize = 1 << 26;

/// A list of zero-sized elements (`[(); N]`) holds no bytes to bound its count by.
const MAX_EMPTY_ELEMENTS: u64 = 1 << 16;

/// The argument bytes of one record, read slot by slot in the writer's `usize` width and byte
/// order.
pub(super) struct ArgBytes<'a> {
    bytes: &'a [u8],
    pos: usize,
    usize_width: usize,
    big_endian: bool,
    /// The slot being read, for errors.
    pub(super) slot: usize,
    /// Whether an opaque value is written as [`super::HOLE`] instead of its type name and
    /// bytes.
    pub(super) holes: bool,
}

impl<'a> ArgBytes<'a> {
    pub(super) fn new(bytes: &'a [u8], shape: &Shape) -> Self {
        ArgBytes {
            bytes,
            pos: 0,
            usize_width: shape.usize_width,
            big_endian: shape.big_endian,
            slot: 0,
            holes: false,
        }
    }

    pub(super) fn fail(&self, reason: &'static str) -> ShapeError {
        ShapeError::Args {
            slot: self.slot,
            offset: self.pos,
            reason,
        }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], ShapeError> {
        let rest = &self.bytes[self.pos..];
        if rest.len() < len {
            return Err(self.fail("the bytes run out"));
        }
        self.pos += len;
        Ok(&rest[..len])
    }

    /// A `usize` of the writer's.
    pub(super) fn usize(&mut self) -> Result<u64, ShapeError> {
        let bytes = self.take(self.usize_width)?;
        let mut value = 0u64;
        for i in 0..bytes.len() {
            let b = if self.big_endian {
                bytes[i]
            } else {
                bytes[bytes.len() - 1 - i]
            };
            value = (value << 8) | u64::from(b);
        }
        Ok(value)
    }

    fn length_prefixed(&mut self) -> Result<&'a [u8], ShapeError> {
        let len = self.usize()?;
        let len = usize::try_from(len).map_err(|_| self.fail("a length past this target's"))?;
        self.take(len)
    }

    /// The next value, laid out as `codec` says.
    pub(super) fn value<'s>(&mut self, codec: &'s CodecShape) -> Result<Value<'a, 's>, ShapeError> {
        Ok(match codec {
            CodecShape::Str => Value::Text(self.length_prefixed()?),
            CodecShape::Lossy => Value::Text(self.length_prefixed()?),
            CodecShape::Preformatted => Value::Preformatted(self.length_prefixed()?),
            CodecShape::Copy {
                size,
                prim,
                type_name,
            } => {
                let bytes = self.take(*size)?;
                match self.prim(*prim, bytes)? {
                    Some(value) => Value::Prim(value),
                    None => Value::Opaque { type_name, bytes },
                }
            }
            CodecShape::List(elem) => Value::List {
                elem,
                bytes: self.length_prefixed()?,
            },
        })
    }

    /// A primitive's bytes in little-endian order.
    fn array<const N: usize>(&self, bytes: &[u8]) -> Result<[u8; N], ShapeError> {
        let mut array: [u8; N] = bytes
            .try_into()
            .map_err(|_| self.fail("a primitive of the wrong size"))?;
        if self.big_endian {
            array.reverse();
        }
        Ok(array)
    }

    /// A primitive from its bytes (`None` for an opaque value).
    fn prim(&self, prim: Prim, bytes: &[u8]) -> Result<Option<PrimValue>, ShapeError> {
        use PrimValue::*;
        Ok(Some(match prim {
            Prim::Opaque => return Ok(None),
            Prim::U8 => U8(u8::from_le_bytes(self.array(bytes)?)),
            Prim::U16 => U16(u16::from_le_bytes(self.array(bytes)?)),
            Prim::U32 => U32(u32::from_le_bytes(self.array(bytes)?)),
            Prim::U64 => U64(u64::from_le_bytes(self.array(bytes)?)),
            Prim::U128 => U128(u128::from_le_bytes(self.array(bytes)?)),
            Prim::I8 => I8(i8::from_le_bytes(self.array(bytes)?)),
            Prim::I16 => I16(i16::from_le_bytes(self.array(bytes)?)),
            Prim::I32 => I32(i32::from_le_bytes(self.array(bytes)?)),
            Prim::I64 => I64(i64::from_le_bytes(self.array(bytes)?)),
            Prim::I128 => I128(i128::from_le_bytes(self.array(bytes)?)),
            Prim::F32 => F32(f32::from_le_bytes(self.array(bytes)?)),
            Prim::F64 => F64(f64::from_le_bytes(self.array(bytes)?)),
            Prim::Bool => match bytes {
                [0] => Bool(false),
                [1] => Bool(true),
                _ => return Err(self.fail("a bool that is neither 0 nor 1")),
            },
            Prim::Char => Char(
                char::from_u32(u32::from_le_bytes(self.array(bytes)?))
                    .ok_or_else(|| self.fail("a char that is not a Unicode scalar value"))?,
            ),
            Prim::Unit if bytes.is_empty() => Unit,
            Prim::Unit => return Err(self.fail("a unit with bytes")),
        }))
    }

    /// A sub-reader over `bytes` (a list's), in the same width and byte order.
    fn inner(&self, bytes: &'a [u8]) -> ArgBytes<'a> {
        ArgBytes {
            bytes,
            pos: 0,
            usize_width: self.usize_width,
            big_endian: self.big_endian,
            slot: self.slot,
            holes: self.holes,
        }
    }
}

/// A primitive read from its bytes.
#[derive(Debug, Clone, Copy)]
pub(super) enum PrimValue {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    U128(u128),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    F32(f32),
    F64(f64),
    Bool(bool),
    Char(char),
    Unit,
}

/// One argument read by its shape: bytes borrowed from the record (`'a`) or the shape (`'s`).
pub(super) enum Value<'a, 's> {
    /// Text or lossy bytes (both show invalid UTF-8 as U+FFFD).
    Text(&'a [u8]),
    /// Text the caller formatted, spec applied.
    Preformatted(&'a [u8]),
    Prim(PrimValue),
    /// A `Copy` value whose layout only its build knows.
    Opaque {
        type_name: &'s str,
        bytes: &'a [u8],
    },
    /// A list's bytes after its length: the count, then the elements.
    List {
        elem: &'s CodecShape,
        bytes: &'a [u8],
    },
}

/// Why a value cannot be written with a spec: its type has no such trait.
const NO_SUCH_TRAIT: &str = "the value's type has no such formatting trait";

impl From<NoSuchTrait> for &'static str {
    fn from(_: NoSuchTrait) -> Self {
        NO_SUCH_TRAIT
    }
}

/// `Type(0x…)`: an opaque value, its bytes in the writer's memory order.
fn opaque(out: &mut String, type_name: &str, bytes: &[u8]) {
    out.push_str(type_name);
    out.push_str("(0x");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push(')');
}

/// Bytes as text, invalid UTF-8 as U+FFFD (what the live back end's text views write).
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Writes `value` with `r`, as the live back end would: the message text of one placeholder.
pub(super) fn render(
    out: &mut String,
    value: &Value<'_, '_>,
    r: &Resolved<'_>,
    args: &ArgBytes<'_>,
) -> Result<(), ShapeError> {
    let debug = matches!(r.spec.ty, Ty::Debug | Ty::DebugLowerHex | Ty::DebugUpperHex);
    match *value {
        Value::Text(bytes) => match (r.spec.ty, std::str::from_utf8(bytes)) {
            (Ty::Display, Ok(text)) => spec::pad_text(out, text, r),
            // As the live text view: invalid UTF-8 is written as it is, unpadded.
            (Ty::Display, Err(_)) => out.push_str(&lossy(bytes)),
            (_, Ok(text)) if debug => {
                let _ = write!(out, "{text:?}");
            }
            (_, Err(_)) if debug => {
                let _ = write!(out, "{:?}", lossy(bytes));
            }
            _ => return Err(args.fail(NO_SUCH_TRAIT)),
        },
        Value::Preformatted(bytes) => out.push_str(&lossy(bytes)),
        Value::Opaque { .. } if args.holes => out.push(super::HOLE),
        Value::Opaque { type_name, bytes } => opaque(out, type_name, bytes),
        Value::Prim(prim) => primitive(out, prim, r).map_err(|e| args.fail(e))?,
        Value::List { elem, bytes } if debug => list(out, elem, bytes, r, args)?,
        Value::List { .. } => return Err(args.fail(NO_SUCH_TRAIT)),
    }
    if out.len() > MAX_TEXT {
        return Err(args.fail("the message runs past 64 MiB"));
    }
    Ok(())
}

/// A value the binary log kept typed, with `r` (whose counts are resolved).
pub(super) fn render_typed(
    out: &mut String,
    typed: Typed,
    r: &Resolved<'_>,
) -> Result<(), &'static str> {
    let prim = match typed {
        Typed::U64(v) => PrimValue::U64(v),
        Typed::I64(v) => PrimValue::I64(v),
        Typed::U128(v) => PrimValue::U128(v),
        Typed::I128(v) => PrimValue::I128(v),
        Typed::F64(v) => PrimValue::F64(v),
        Typed::F32(v) => PrimValue::F32(v),
        Typed::Bool(v) => PrimValue::Bool(v),
    };
    primitive(out, prim, r)
}

/// A primitive with `r`. Under a plain `{}`, the live back end's own text (`Typed::render`,
/// the fast path that `std` matches digit for digit); otherwise `std`'s, padded by `spec`.
fn primitive(out: &mut String, prim: PrimValue, r: &Resolved<'_>) -> Result<(), &'static str> {
    use PrimValue::*;
    if r.spec.is_plain() {
        let typed = match prim {
            U8(v) => Typed::U64(v.into()),
            U16(v) => Typed::U64(v.into()),
            U32(v) => Typed::U64(v.into()),
            U64(v) => Typed::U64(v),
            I8(v) => Typed::I64(v.into()),
            I16(v) => Typed::I64(v.into()),
            I32(v) => Typed::I64(v.into()),
            I64(v) => Typed::I64(v),
            U128(v) => Typed::U128(v),
            I128(v) => Typed::I128(v),
            F32(v) => Typed::F32(v),
            F64(v) => Typed::F64(v),
            Bool(v) => Typed::Bool(v),
            Char(c) => {
                out.push(c);
                return Ok(());
            }
            Unit => return Err(NO_SUCH_TRAIT),
        };
        typed.render(&mut TextBuf::of_string(out));
        return Ok(());
    }
    let debug = matches!(r.spec.ty, Ty::Debug | Ty::DebugLowerHex | Ty::DebugUpperHex);
    match prim {
        U8(v) => spec::integer(out, v, r)?,
        U16(v) => spec::integer(out, v, r)?,
        U32(v) => spec::integer(out, v, r)?,
        U64(v) => spec::integer(out, v, r)?,
        U128(v) => spec::integer(out, v, r)?,
        I8(v) => spec::integer(out, v, r)?,
        I16(v) => spec::integer(out, v, r)?,
        I32(v) => spec::integer(out, v, r)?,
        I64(v) => spec::integer(out, v, r)?,
        I128(v) => spec::integer(out, v, r)?,
        F32(v) => spec::float(out, v, r)?,
        F64(v) => spec::float(out, v, r)?,
        Bool(v) if debug || r.spec.ty == Ty::Display => {
            spec::pad_text(out, if v { "true" } else { "false" }, r)
        }
        Char(c) if r.spec.ty == Ty::Display => spec::pad_text(out, c.encode_utf8(&mut [0; 4]), r),
        // `char`'s `Debug` writes its quotes and escapes and ignores width and precision.
        Char(c) if debug => {
            let _ = write!(out, "{c:?}");
        }
        Unit if debug => spec::pad_text(out, "()", r),
        Bool(_) | Char(_) | Unit => return Err(NO_SUCH_TRAIT),
    }
    Ok(())
}

/// `{:?}` of a slice (`{:#?}`: one element a line, indented), each element with the whole spec,
/// as `Formatter::debug_list` passes it on.
fn list(
    out: &mut String,
    elem: &CodecShape,
    bytes: &[u8],
    r: &Resolved<'_>,
    args: &ArgBytes<'_>,
) -> Result<(), ShapeError> {
    let mut items = args.inner(bytes);
    let count = items.usize()?;
    if matches!(elem, CodecShape::Copy { size: 0, .. }) && count > MAX_EMPTY_ELEMENTS {
        return Err(args.fail("a list of more empty elements than is credible"));
    }
    let pretty = r.spec.alternate;
    out.push('[');
    let mut text = String::new();
    for i in 0..count {
        let value = items.value(elem)?;
        if pretty {
            // `PadAdapter`: four spaces at the start of each line of the element's text.
            if i == 0 {
                out.push('\n');
            }
            text.clear();
            render(&mut text, &value, r, args)?;
            text.push_str(",\n");
            for line in text.split_inclusive('\n') {
                out.push_str("    ");
                out.push_str(line);
            }
        } else {
            if i > 0 {
                out.push_str(", ");
            }
            render(out, &value, r, args)?;
        }
        if out.len() > MAX_TEXT {
            return Err(args.fail("the message runs past 64 MiB"));
        }
    }
    out.push(']');
    Ok(())
}

/// A field's value, owned until the whole record has decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldOut {
    /// A number, `bool` or null.
    Scalar(FieldValue<'static>),
    /// Text.
    Text(String),
}

impl FieldOut {
    pub(crate) fn as_value(&self) -> FieldValue<'_> {
        match self {
            FieldOut::Scalar(v) => *v,
            FieldOut::Text(t) => FieldValue::Str(t),
        }
    }
}

/// A field written without a sigil: its type, as `NativeValue` and the text views record it.
pub(super) fn native(value: &Value<'_, '_>, args: &ArgBytes<'_>) -> Result<FieldOut, ShapeError> {
    use PrimValue::*;
    let scalar = |v| Ok(FieldOut::Scalar(v));
    match *value {
        Value::Text(bytes) | Value::Preformatted(bytes) => {
            Ok(FieldOut::Text(lossy(bytes).into_owned()))
        }
        Value::Opaque { type_name, bytes } => {
            let mut text = String::new();
            opaque(&mut text, type_name, bytes);
            Ok(FieldOut::Text(text))
        }
        Value::Prim(prim) => match prim {
            U8(v) => scalar(FieldValue::U64(v.into())),
            U16(v) => scalar(FieldValue::U64(v.into())),
            U32(v) => scalar(FieldValue::U64(v.into())),
            U64(v) => scalar(FieldValue::U64(v)),
            I8(v) => scalar(FieldValue::I64(v.into())),
            I16(v) => scalar(FieldValue::I64(v.into())),
            I32(v) => scalar(FieldValue::I64(v.into())),
            I64(v) => scalar(FieldValue::I64(v)),
            U128(v) => scalar(FieldValue::U128(v)),
            I128(v) => scalar(FieldValue::I128(v)),
            F32(v) => scalar(FieldValue::F64(v.into())),
            F64(v) => scalar(FieldValue::F64(v)),
            Bool(v) => scalar(FieldValue::Bool(v)),
            Char(c) => Ok(FieldOut::Text(c.to_string())),
            Unit => scalar(FieldValue::Null),
        },
        Value::List { .. } => Err(args.fail("a list has no native field value")),
    }
}

/// A `%` or `?` field: the value's `Display` or `Debug` text.
pub(super) fn formatted(
    value: &Value<'_, '_>,
    ty: Ty,
    args: &ArgBytes<'_>,
) -> Result<FieldOut, ShapeError> {
    let spec = Spec { ty, ..Spec::PLAIN };
    let mut text = String::new();
    render(&mut text, value, &Resolved::literal(&spec), args)?;
    Ok(FieldOut::Text(text))
}
