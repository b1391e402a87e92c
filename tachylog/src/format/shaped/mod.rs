//! A call-site record read back without the code of the program that wrote it: from its call
//! site as plain data ([`SiteText`]: the placeholders' literal text and specs, the tail, the
//! field keys), its arguments' shape (`codec/SHAPES.md`) and its argument bytes, [`decode`]
//! writes the message text (literal pieces and values interleaved, then the tail: what the live
//! back end writes in the text line's message, before escaping) and the fields as typed values.
//!
//! What the live back end does with the writer's function pointers is done here from data:
//! - a number or `bool` under a plain `{}` is written by the live fast path (`Typed::render`);
//! - any other spec (width, precision, fill, alignment, sign, `#`, `0`, the hex, octal, binary,
//!   exponent and debug traits) by the run-time spec interpreter of [`spec`], whose output is
//!   `std::format!`'s for the same value and spec;
//! - text, lossy bytes and text the caller formatted are copied (`{:?}` of text is `std`'s);
//! - lists are `{:?}` of a slice, each element with the placeholder's spec;
//! - a `CopyArg` type other than a primitive is shown as `TypeName(0x…)`, its raw bytes, since
//!   only the program that wrote it has its `fmt` code.
//!
//! A pure function of its inputs: no I/O, no global state, no user code. It never trusts a
//! byte: a shape or record that does not fit is an [`ShapeError`], never a panic, an
//! out-of-bounds read or an unbounded allocation (the fuzz target `spool_args`).
//!
//! *Why the specs are parsed again from the format string* (and not emitted by the macro beside
//! each `Placeholder`): the format string as written is already data in every `Site` and in
//! the binary log's call-site definition, so a recovering process needs nothing the writer did
//! not already keep, every `Placeholder` in a program stays as small as it is, and
//! `Placeholder::new` keeps its meaning. Splitting a format string into literal text and
//! `{...}` is short, and [`SiteText::parse`] does it exactly as the macro's parser
//! (`tachylog-macros/src/format_string.rs`) does; the spec grammar is the interpreter's own.
//!
//! Back end or another process; allocates. Layer 4 (see `ARCHITECTURE.md`): imports `codec`
//! (shapes, the fast path's `Typed`), `fields` and `error`.

mod spec;
mod value;

use crate::codec::shape::{Role, Shape, Sigil, Trait};
use crate::codec::Typed;
use crate::error::ShapeError;
use crate::fields::Fields;
pub(crate) use spec::Spec;
use spec::{Count, Resolved, Ty, MAX_COUNT};
use value::{ArgBytes, FieldOut};

/// One placeholder of a call site as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlaceholderText {
    /// The literal text before it, `{{` and `}}` unescaped.
    pub(crate) literal: String,
    /// Its spec: the text between `:` and `}` (empty for `{}`).
    pub(crate) spec_text: String,
    spec: Spec,
}

/// A call site as plain data: what [`decode`] needs besides the shape and the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteText {
    pub(crate) placeholders: Vec<PlaceholderText>,
    /// The literal text after the last placeholder.
    pub(crate) tail: String,
    /// The fields' keys, in the order their values travel.
    pub(crate) keys: Vec<String>,
}

impl SiteText {
    /// A site from its parts: each placeholder's literal text and spec text, the tail and the
    /// keys. Fails on a spec that does not parse.
    pub(crate) fn new(
        parts: Vec<(String, String)>,
        tail: String,
        keys: Vec<String>,
    ) -> Result<SiteText, ShapeError> {
        let placeholders = parts
            .into_iter()
            .enumerate()
            .map(|(i, (literal, spec_text))| {
                let spec = Spec::parse(&spec_text, i)?;
                Ok(PlaceholderText {
                    literal,
                    spec_text,
                    spec,
                })
            })
            .collect::<Result<_, ShapeError>>()?;
        Ok(SiteText {
            placeholders,
            tail,
            keys,
        })
    }

    /// A site from its format string as written (`Site::format`, or the binary log's call-site
    /// definition) and its field keys: split as the macro splits it, `{{` and `}}` unescaped,
    /// each `{...}`'s spec the text after its first `:`.
    pub(crate) fn parse(format: &str, keys: Vec<String>) -> Result<SiteText, ShapeError> {
        let fail = |offset, reason| ShapeError::Format { offset, reason };
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = format.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if matches!(chars.peek(), Some((_, '{'))) => {
                    chars.next();
                    literal.push('{');
                }
                '}' if matches!(chars.peek(), Some((_, '}'))) => {
                    chars.next();
                    literal.push('}');
                }
                '}' => return Err(fail(i, "an unmatched `}`")),
                '{' => {
                    let end = chars
                        .by_ref()
                        .find(|&(_, c)| c == '}')
                        .map(|(j, _)| j)
                        .ok_or(fail(i, "an unterminated `{`"))?;
                    let inner = &format[i + 1..end];
                    let spec = inner.split_once(':').map_or("", |(_, spec)| spec);
                    parts.push((std::mem::take(&mut literal), spec.to_string()));
                }
                c => literal.push(c),
            }
        }
        SiteText::new(parts, literal, keys)
    }
}

/// A call site's specs as a reader of the binary log takes them from its format string: one per
/// placeholder, or `None` when the format string does not parse or does not split into
/// `placeholders` placeholders (the reader then writes every typed value as `{}` does).
pub(crate) fn site_specs(format: &str, placeholders: usize) -> Option<Vec<Spec>> {
    let text = SiteText::parse(format, Vec::new()).ok()?;
    (text.placeholders.len() == placeholders)
        .then(|| text.placeholders.into_iter().map(|p| p.spec).collect())
}

/// Appends a value the binary log kept typed, as `spec` writes it: `std::format!`'s text for
/// the value's type and spec. An error for a spec a writer keeps no typed value under (see
/// [`Spec::takes_typed`]) or a trait the type does not have (`{:x}` of a float).
pub(crate) fn render_typed(
    out: &mut String,
    typed: Typed,
    spec: &Spec,
) -> Result<(), &'static str> {
    if !spec.takes_typed() {
        return Err("a typed value under a spec that keeps values as text");
    }
    value::render_typed(out, typed, &Resolved::literal(spec))
}

/// Whether a shape's trait is the one a spec's type asks for.
fn trait_matches(t: Trait, ty: Ty) -> bool {
    matches!(
        (t, ty),
        (Trait::Display, Ty::Display)
            | (
                Trait::Debug,
                Ty::Debug | Ty::DebugLowerHex | Ty::DebugUpperHex
            )
            | (Trait::LowerHex, Ty::LowerHex)
            | (Trait::UpperHex, Ty::UpperHex)
            | (Trait::Octal, Ty::Octal)
            | (Trait::Binary, Ty::Binary)
            | (Trait::LowerExp, Ty::LowerExp)
            | (Trait::UpperExp, Ty::UpperExp)
            | (Trait::Pointer, Ty::Pointer)
    )
}

/// What an opaque value (a `CopyArg` of the writer's own type) is written as with `holes`: a
/// noncharacter no formatter escapes, so that a line rendered with it can be split where the
/// writer's own `Display` output would be, to be compared with the line the writer wrote.
pub(crate) const HOLE: char = '\u{FDD0}';

/// Decodes one call-site record's argument bytes (`args`, as they follow the record's prefix
/// in the ring; trailing padding is ignored, as the live back end ignores it) with its site
/// and shape: appends the message to `message` and pushes the fields into `fields`. With
/// `holes`, an opaque value is written as [`HOLE`] instead of `TypeName(0x…)`.
///
/// On an error nothing is left behind: `message` is as it was and no field was pushed.
pub(crate) fn decode(
    site: &SiteText,
    shape: &Shape,
    args: &[u8],
    holes: bool,
    message: &mut String,
    fields: &mut Fields,
) -> Result<(), ShapeError> {
    let start = message.len();
    let mut decoded = Vec::new();
    let result = walk(site, shape, args, holes, message, &mut decoded);
    if result.is_err() {
        message.truncate(start);
        return result;
    }
    for (key, value) in site.keys.iter().zip(&decoded) {
        fields.push_value(key, value.as_value());
    }
    Ok(())
}

/// [`decode`]'s walk of the slots: fields first, then per placeholder its counts (precision
/// first), then its value.
fn walk(
    site: &SiteText,
    shape: &Shape,
    args: &[u8],
    holes: bool,
    message: &mut String,
    fields: &mut Vec<FieldOut>,
) -> Result<(), ShapeError> {
    let mut bytes = ArgBytes::new(args, shape);
    bytes.holes = holes;
    let mut counts: Vec<usize> = Vec::new();
    let mut next_placeholder = 0;
    for (slot, slot_shape) in shape.slots.iter().enumerate() {
        bytes.slot = slot;
        let mismatch = |reason| ShapeError::Mismatch { slot, reason };
        match (slot_shape.role, &slot_shape.codec) {
            (Role::Count, _) => {
                if counts.len() == 2 {
                    return Err(mismatch("a third count before one value"));
                }
                let count = bytes.usize()?;
                let count = usize::try_from(count)
                    .ok()
                    .filter(|&c| c <= MAX_COUNT)
                    .ok_or_else(|| bytes.fail("a width or precision past 65535"))?;
                counts.push(count);
            }
            (Role::Field(sigil), Some(codec)) => {
                if next_placeholder > 0 || !counts.is_empty() {
                    return Err(mismatch("a field after the message's arguments"));
                }
                if fields.len() == site.keys.len() {
                    return Err(mismatch("more fields than the site has keys"));
                }
                let value = bytes.value(codec)?;
                fields.push(match sigil {
                    Sigil::Native => value::native(&value, &bytes)?,
                    Sigil::Display => value::formatted(&value, Ty::Display, &bytes)?,
                    Sigil::Debug => value::formatted(&value, Ty::Debug, &bytes)?,
                });
            }
            (Role::Message(t), Some(codec)) => {
                if fields.len() != site.keys.len() {
                    return Err(mismatch("fewer fields than the site has keys"));
                }
                let placeholder = site
                    .placeholders
                    .get(next_placeholder)
                    .ok_or(mismatch("more values than the site has placeholders"))?;
                next_placeholder += 1;
                let spec = &placeholder.spec;
                if !trait_matches(t, spec.ty) {
                    return Err(mismatch("a formatting trait other than its spec's"));
                }
                let mut taken = counts.drain(..);
                let mut resolve = |count: Count| match count {
                    Count::None => Ok(None),
                    Count::Literal(n) => Ok(Some(n)),
                    Count::Arg => taken
                        .next()
                        .map(Some)
                        .ok_or(mismatch("a count argument missing before its value")),
                };
                let precision = resolve(spec.precision)?;
                let width = resolve(spec.width)?;
                if taken.next().is_some() {
                    return Err(mismatch("a count its value's spec does not take"));
                }
                drop(taken);
                let value = bytes.value(codec)?;
                message.push_str(&placeholder.literal);
                let resolved = Resolved {
                    spec,
                    width,
                    precision,
                };
                value::render(message, &value, &resolved, &bytes)?;
            }
            (_, None) => return Err(mismatch("a value without a codec")),
        }
    }
    if next_placeholder != site.placeholders.len() {
        return Err(ShapeError::Mismatch {
            slot: shape.slots.len(),
            reason: "fewer values than the site has placeholders",
        });
    }
    if fields.len() != site.keys.len() || !counts.is_empty() {
        return Err(ShapeError::Mismatch {
            slot: shape.slots.len(),
            reason: "fields or counts left without their values",
        });
    }
    message.push_str(&site.tail);
    Ok(())
}

#[cfg(test)]
mod tests;
