//! A call-site record's message and fields, rendered by walking the site's table
//! ([`Site::message`], [`Site::fields`]) over the record's argument bytes: the literal pieces
//! are copied, each placeholder's count arguments are read, and its renderer appends the
//! argument. No code generated per call site runs here, except a spec's flags function.

use crate::codec::render::{Applied, RenderError};
use crate::codec::short_copy::append_str;
use crate::codec::Decoder;
use crate::fields::Fields;
use crate::record::{Count, Site};
use std::mem::MaybeUninit;

/// Why a message could not be rendered.
pub(crate) enum Problem {
    /// The record's bytes ran out before its table did.
    Malformed,
    /// A renderer failed.
    Render(RenderError),
}

/// Appends the message of a record from `site` to `out` and records its fields in `fields`.
#[inline]
pub(crate) fn render(
    site: &Site,
    args: &[MaybeUninit<u8>],
    out: &mut String,
    fields: &mut Fields,
) -> Result<(), Problem> {
    let mut decoder = Decoder::new(args);
    // Fields come first in the bytes; their push functions catch panics per value.
    for field in site.fields {
        (field.push)(&mut decoder, field.key, fields);
    }
    for placeholder in site.message {
        append_str(out, placeholder.literal);
        let precision = count(placeholder.precision, &mut decoder);
        let width = count(placeholder.width, &mut decoder);
        let spec = Applied {
            width,
            precision,
            flags: placeholder.flags,
        };
        (placeholder.render)(&mut decoder, &spec, out).map_err(Problem::Render)?;
    }
    append_str(out, site.tail);
    if decoder.is_malformed() {
        return Err(Problem::Malformed);
    }
    Ok(())
}

#[inline]
fn count(count: Count, decoder: &mut Decoder<'_>) -> Option<usize> {
    match count {
        Count::None => None,
        Count::Literal(n) => Some(n),
        Count::Arg => Some(decoder.count()),
    }
}
