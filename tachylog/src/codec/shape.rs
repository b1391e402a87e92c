//! The *shape* of a call's arguments: for each slot, in the order its bytes travel, what it is
//! (a count, a message value and its formatting trait, a field and its sigil) and how its bytes
//! are laid out (its codec, and for a `Copy` value its size, primitive kind and type name).
//! `SHAPES.md` beside this file is the byte format.
//!
//! A record's argument bytes are not self-describing: a `CopyArg` value is its raw bytes, and
//! only the writing program's `Decode` (function pointers) knows where each one ends and how to
//! format it. The shape is that knowledge as data, so that another process, possibly another
//! build, can read a record that the writing program left behind (the spool, after the writer
//! was killed).
//!
//! Written on the calling thread's cold path (once per distinct argument list, through
//! `Args`' hidden `__describe`, which the codecs' [`describe`](super::Codec::describe) and
//! `CopyArg`'s hidden primitive kind feed); read, never trusting a byte, by whoever decodes.
//!
//! Layer 2 (see `ARCHITECTURE.md`), beside the codecs it describes; imports `error` only.

use crate::error::ShapeError;

/// The version byte that opens every shape.
pub(crate) const VERSION: u8 = 1;

/// Slot roles (`SHAPES.md`, "Slots"). Message values `1..=9` name their formatting trait.
pub(crate) mod role {
    /// A width or precision argument (`usize`).
    pub(crate) const COUNT: u8 = 0x00;
    /// `{}`.
    pub(crate) const DISPLAY: u8 = 0x01;
    /// `{:?}` (and `{:x?}`, `{:X?}`, `{:#?}`: the spec tells them apart).
    pub(crate) const DEBUG: u8 = 0x02;
    /// `{:x}`.
    pub(crate) const LOWER_HEX: u8 = 0x03;
    /// `{:X}`.
    pub(crate) const UPPER_HEX: u8 = 0x04;
    /// `{:o}`.
    pub(crate) const OCTAL: u8 = 0x05;
    /// `{:b}`.
    pub(crate) const BINARY: u8 = 0x06;
    /// `{:e}`.
    pub(crate) const LOWER_EXP: u8 = 0x07;
    /// `{:E}`.
    pub(crate) const UPPER_EXP: u8 = 0x08;
    /// `{:p}`.
    pub(crate) const POINTER: u8 = 0x09;
    /// A field without a sigil: its own type.
    pub(crate) const FIELD_NATIVE: u8 = 0x10;
    /// A `%` field: its `Display` text.
    pub(crate) const FIELD_DISPLAY: u8 = 0x11;
    /// A `?` field: its `Debug` text.
    pub(crate) const FIELD_DEBUG: u8 = 0x12;
}

/// Codec tags (`SHAPES.md`, "Codecs").
pub(crate) mod codec {
    /// `usize` length, UTF-8.
    pub(crate) const STR: u8 = 0x01;
    /// `usize` length, any bytes, shown as lossy UTF-8.
    pub(crate) const LOSSY: u8 = 0x02;
    /// `usize` length, text the caller formatted with the placeholder's spec.
    pub(crate) const PREFORMATTED: u8 = 0x03;
    /// The raw bytes of a `Copy` value.
    pub(crate) const COPY: u8 = 0x04;
    /// `usize` byte length, `usize` count, the elements.
    pub(crate) const LIST: u8 = 0x05;
}

/// What a `Copy` value's bytes are, when tachylog knows their layout: a primitive, read back
/// from its bytes in the writer's byte order. Anything else is [`Prim::Opaque`]: its layout
/// is the writing build's business, so only its raw bytes and type name are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Prim {
    /// A type whose layout only the writing build knows.
    Opaque = 0x00,
    U8 = 0x01,
    U16 = 0x02,
    U32 = 0x03,
    U64 = 0x04,
    U128 = 0x05,
    I8 = 0x06,
    I16 = 0x07,
    I32 = 0x08,
    I64 = 0x09,
    I128 = 0x0A,
    F32 = 0x0B,
    F64 = 0x0C,
    /// One byte, `0` or `1`.
    Bool = 0x0D,
    /// A `u32` Unicode scalar value.
    Char = 0x0E,
    /// `()`: no bytes.
    Unit = 0x0F,
}

impl Prim {
    /// The unsigned integer of `usize`'s width on this target, which `usize` is recorded as.
    pub(crate) const USIZE: Prim = match size_of::<usize>() {
        2 => Prim::U16,
        4 => Prim::U32,
        _ => Prim::U64,
    };

    /// The signed integer of `isize`'s width.
    pub(crate) const ISIZE: Prim = match size_of::<isize>() {
        2 => Prim::I16,
        4 => Prim::I32,
        _ => Prim::I64,
    };

    fn from_code(code: u8) -> Option<Prim> {
        use Prim::*;
        Some(match code {
            0x00 => Opaque,
            0x01 => U8,
            0x02 => U16,
            0x03 => U32,
            0x04 => U64,
            0x05 => U128,
            0x06 => I8,
            0x07 => I16,
            0x08 => I32,
            0x09 => I64,
            0x0A => I128,
            0x0B => F32,
            0x0C => F64,
            0x0D => Bool,
            0x0E => Char,
            0x0F => Unit,
            _ => return None,
        })
    }

    /// The size of the primitive's bytes; `None` for [`Prim::Opaque`], which has any size.
    pub(crate) fn size(self) -> Option<usize> {
        use Prim::*;
        Some(match self {
            Opaque => return None,
            Unit => 0,
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 | Char => 4,
            U64 | I64 | F64 => 8,
            U128 | I128 => 16,
        })
    }
}

/// Appends `value` as an unsigned LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a `Copy` codec's description: size, primitive kind, type name.
pub(crate) fn put_copy(out: &mut Vec<u8>, size: usize, prim: Prim, type_name: &str) {
    out.push(codec::COPY);
    put_varint(out, size as u64);
    out.push(prim as u8);
    put_varint(out, type_name.len() as u64);
    out.extend_from_slice(type_name.as_bytes());
}

/// A whole shape: the header (version, this target's `usize` width and byte order), the number
/// of slots, then `slots`, `count` slot descriptions as `Args`' hidden `__describe` wrote them.
pub(crate) fn with_header(count: usize, slots: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(slots.len() + 8);
    out.push(VERSION);
    out.push(size_of::<usize>() as u8);
    out.push(u8::from(cfg!(target_endian = "big")));
    put_varint(&mut out, count as u64);
    out.extend_from_slice(slots);
    out
}

/// The formatting trait of a message value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trait {
    Display,
    Debug,
    LowerHex,
    UpperHex,
    Octal,
    Binary,
    LowerExp,
    UpperExp,
    Pointer,
}

/// A structured field's sigil.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sigil {
    /// `key = value`.
    Native,
    /// `%key`.
    Display,
    /// `?key`.
    Debug,
}

/// What one slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A width or precision, read by the next message value's placeholder.
    Count,
    /// The next placeholder's value.
    Message(Trait),
    /// The next field's value.
    Field(Sigil),
}

/// How one slot's bytes are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CodecShape {
    Str,
    Lossy,
    Preformatted,
    /// A `Copy` value of `size` bytes.
    Copy {
        size: usize,
        prim: Prim,
        type_name: String,
    },
    /// A list whose elements are [`CodecShape::Str`] or [`CodecShape::Copy`] (the only list
    /// element codecs there are; a nested list is rejected, so reading needs no recursion).
    List(Box<CodecShape>),
}

/// One slot of a shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlotShape {
    pub(crate) role: Role,
    /// `None` for a count, which is always a `usize`.
    pub(crate) codec: Option<CodecShape>,
}

/// A shape read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Bytes of the writer's `usize`: its length prefixes and counts.
    pub(crate) usize_width: usize,
    /// The writer's byte order, for its `usize`s and its primitives' bytes.
    pub(crate) big_endian: bool,
    pub(crate) slots: Vec<SlotShape>,
}

/// Reads shape bytes, never trusting one.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn fail(&self, reason: &'static str) -> ShapeError {
        ShapeError::Shape {
            offset: self.pos,
            reason,
        }
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, ShapeError> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| self.fail(what))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, ShapeError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8(what)?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(self.fail("a varint past 64 bits"));
            }
            value |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.fail("a varint longer than 10 bytes"))
    }

    fn bytes(&mut self, len: u64, what: &'static str) -> Result<&'a [u8], ShapeError> {
        let rest = &self.bytes[self.pos..];
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len <= rest.len())
            .ok_or_else(|| self.fail(what))?;
        self.pos += len;
        Ok(&rest[..len])
    }

    fn codec(&mut self, in_list: bool) -> Result<CodecShape, ShapeError> {
        let tag = self.u8("a slot without its codec")?;
        Ok(match tag {
            codec::STR => CodecShape::Str,
            codec::LOSSY if !in_list => CodecShape::Lossy,
            codec::PREFORMATTED if !in_list => CodecShape::Preformatted,
            codec::COPY => {
                let size = self.varint("a copy value without its size")?;
                let size = usize::try_from(size)
                    .map_err(|_| self.fail("a copy value's size past usize"))?;
                let prim = Prim::from_code(self.u8("a copy value without its kind")?)
                    .ok_or_else(|| self.fail("an unknown primitive kind"))?;
                if prim.size().is_some_and(|expected| expected != size) {
                    return Err(self.fail("a primitive whose size is not its kind's"));
                }
                let len = self.varint("a copy value without its type name")?;
                let name = self.bytes(len, "a type name cut short")?;
                let type_name = std::str::from_utf8(name)
                    .map_err(|_| self.fail("a type name that is not UTF-8"))?
                    .to_string();
                CodecShape::Copy {
                    size,
                    prim,
                    type_name,
                }
            }
            codec::LIST if !in_list => CodecShape::List(Box::new(self.codec(true)?)),
            codec::LIST => return Err(self.fail("a list of lists")),
            _ if in_list => return Err(self.fail("a list element that is neither text nor copy")),
            _ => return Err(self.fail("an unknown codec")),
        })
    }

    fn slot(&mut self) -> Result<SlotShape, ShapeError> {
        let role = match self.u8("fewer slots than announced")? {
            role::COUNT => {
                return Ok(SlotShape {
                    role: Role::Count,
                    codec: None,
                })
            }
            role::DISPLAY => Role::Message(Trait::Display),
            role::DEBUG => Role::Message(Trait::Debug),
            role::LOWER_HEX => Role::Message(Trait::LowerHex),
            role::UPPER_HEX => Role::Message(Trait::UpperHex),
            role::OCTAL => Role::Message(Trait::Octal),
            role::BINARY => Role::Message(Trait::Binary),
            role::LOWER_EXP => Role::Message(Trait::LowerExp),
            role::UPPER_EXP => Role::Message(Trait::UpperExp),
            role::POINTER => Role::Message(Trait::Pointer),
            role::FIELD_NATIVE => Role::Field(Sigil::Native),
            role::FIELD_DISPLAY => Role::Field(Sigil::Display),
            role::FIELD_DEBUG => Role::Field(Sigil::Debug),
            _ => return Err(self.fail("an unknown slot role")),
        };
        Ok(SlotShape {
            role,
            codec: Some(self.codec(false)?),
        })
    }
}

impl Shape {
    /// Reads a shape written by [`with_header`] in any build: a wrong version, a `usize`
    /// width other than 2, 4 or 8, an unknown tag, bytes that run out or are left over are
    /// errors, never a panic.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Shape, ShapeError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.u8("an empty shape")? != VERSION {
            return Err(ShapeError::Shape {
                offset: 0,
                reason: "an unknown shape version",
            });
        }
        let usize_width = usize::from(r.u8("a shape without its usize width")?);
        if !matches!(usize_width, 2 | 4 | 8) {
            return Err(r.fail("a usize width other than 2, 4 or 8"));
        }
        let big_endian = match r.u8("a shape without its byte order")? {
            0 => false,
            1 => true,
            _ => return Err(r.fail("an unknown byte order")),
        };
        let count = r.varint("a shape without its slot count")?;
        // Every slot takes at least one byte: a count past the bytes left is caught by the
        // loop, and the capacity never exceeds them.
        let mut slots = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(bytes.len()));
        for _ in 0..count {
            slots.push(r.slot()?);
        }
        if r.pos != bytes.len() {
            return Err(r.fail("bytes after the last slot"));
        }
        Ok(Shape {
            usize_width,
            big_endian,
            slots,
        })
    }
}
