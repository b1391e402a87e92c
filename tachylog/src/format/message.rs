//! A call-site record's message and fields, rendered by walking the record's [`Decode`] (how to
//! read each argument, shared by every call site with the same argument types) beside its
//! site's table ([`Site::message`], [`Site::fields`]): the literal pieces are copied, each
//! placeholder's count arguments are read, and its renderer appends the argument. No code
//! generated per call site runs here, except a spec's flags function.

use crate::codec::render::{Applied, RenderError, RenderFn};
use crate::codec::short_copy::append_str;
use crate::codec::Decoder;
use crate::fields::Fields;
use super::view::SiteMessage;
use crate::record::{Count, Decode, Placeholder, Site};

/// Why a message could not be rendered.
pub(crate) enum Problem {
    /// The record's bytes ran out before its table did, or its arguments do not match its
    /// site's table.
    Malformed,
    /// A renderer failed.
    Render(RenderError),
}

/// Appends the message of a record from `site` to `out` and records its fields in `fields`.
#[inline]
pub(crate) fn render(message: &SiteMessage<'_>, out: &mut String, fields: &mut Fields) -> Result<(), Problem> {
    let SiteMessage { site, decode, args } = *message;
    let mut walk = Walk {
        site,
        decoder: Decoder::new(args),
        next_field: 0,
        next_placeholder: 0,
        out,
        fields,
    };
    walk.arguments(decode)?;
    // Every placeholder and field has had its argument, and the bytes were all there.
    if walk.next_placeholder != site.message.len() || walk.next_field != site.fields.len() || walk.decoder.is_malformed() {
        return Err(Problem::Malformed);
    }
    append_str(walk.out, site.tail);
    Ok(())
}

/// The state of one record's rendering: where its bytes are, and which field and placeholder
/// of the site take the next argument.
struct Walk<'s, 'a, 'o> {
    site: &'s Site,
    decoder: Decoder<'a>,
    next_field: usize,
    next_placeholder: usize,
    out: &'o mut String,
    fields: &'o mut Fields,
}

impl Walk<'_, '_, '_> {
    /// Reads a record's arguments: a list (what the macro passes, also for one argument), in
    /// a loop with no call per argument; message values only (most calls) beside the
    /// placeholders, without looking for fields and counts.
    #[inline]
    fn arguments(&mut self, decode: &Decode) -> Result<(), Problem> {
        match *decode {
            Decode::Messages(list) if list.len() == self.site.message.len() && self.site.fields.is_empty() => {
                for (placeholder, decode) in self.site.message.iter().zip(list) {
                    let Decode::Message(render) = *decode else {
                        return Err(Problem::Malformed);
                    };
                    self.message(placeholder, render)?;
                }
                self.next_placeholder = list.len();
                Ok(())
            }
            Decode::List(list) | Decode::Messages(list) => {
                for decode in list {
                    self.argument(decode)?;
                }
                Ok(())
            }
            _ => self.argument(decode),
        }
    }

    /// Appends a placeholder's literal text and its value.
    #[inline(always)]
    fn message(&mut self, placeholder: &Placeholder, render: RenderFn) -> Result<(), Problem> {
        append_str(self.out, placeholder.literal);
        let precision = count(placeholder.precision, &mut self.decoder);
        let width = count(placeholder.width, &mut self.decoder);
        let spec = Applied {
            width,
            precision,
            flags: placeholder.flags,
        };
        render(&mut self.decoder, &spec, self.out).map_err(Problem::Render)
    }

    /// A nested list (more than eight arguments), out of line.
    #[inline(never)]
    fn nested(&mut self, list: &[Decode]) -> Result<(), Problem> {
        for decode in list {
            self.argument(decode)?;
        }
        Ok(())
    }

    /// Reads one argument, or a group of them, in travel order: fields first, then the
    /// message's arguments, a placeholder's counts just before its value.
    #[inline(always)]
    fn argument(&mut self, decode: &Decode) -> Result<(), Problem> {
        match *decode {
            Decode::List(list) | Decode::Messages(list) => self.nested(list)?,
            // Read by the placeholder whose value follows it.
            Decode::Count => {}
            Decode::Field(push) => {
                let key = self.site.fields.get(self.next_field).ok_or(Problem::Malformed)?;
                self.next_field += 1;
                // Push functions catch panics per value.
                push(&mut self.decoder, key, self.fields);
            }
            Decode::Message(render) => {
                let placeholder = self.site.message.get(self.next_placeholder).ok_or(Problem::Malformed)?;
                self.next_placeholder += 1;
                self.message(placeholder, render)?;
            }
        }
        Ok(())
    }
}

#[inline]
fn count(count: Count, decoder: &mut Decoder<'_>) -> Option<usize> {
    match count {
        Count::None => None,
        Count::Literal(n) => Some(n),
        Count::Arg => Some(decoder.count()),
    }
}
