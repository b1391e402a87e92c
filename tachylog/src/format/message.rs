//! A call-site record's message and fields, rendered by walking the record's [`Decode`] (how to
//! read each argument, shared by every call site with the same argument types) beside its
//! site's table ([`Site::message`], [`Site::fields`]): the literal pieces are copied, each
//! placeholder's count arguments are read, and its renderer appends the argument. No code
//! generated per call site runs here, except a spec's flags function.

use super::view::SiteMessage;
use crate::codec::render::{RenderError, RenderFn};
use crate::codec::{Decoder, TextBuf};
use crate::fields::Fields;
use crate::record::{Decode, Placeholder, Site, TakeFn, ValueWriter};

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
pub(crate) fn render(
    message: &SiteMessage<'_>,
    out: &mut TextBuf<'_>,
    fields: &mut Fields,
) -> Result<(), Problem> {
    let SiteMessage { site, decode, args } = *message;
    // A message without arguments is its tail: copied, without the walk's setup and checks
    // (they would be most of `backend_static`'s message rendering).
    if let (Decode::Messages([]), [], []) = (decode, site.message, site.fields) {
        out.push_str(site.tail);
        return Ok(());
    }
    // Message values only, one per placeholder (most calls): one call renders them all,
    // without the walk's bookkeeping of fields and positions (callgrind: 27 instructions per
    // record, `tachylog-bench --only tachylog,backend_iteration`).
    if let (Decode::Rendered { items, render, .. }, []) = (decode, site.fields) {
        if items.len() == site.message.len() {
            let mut decoder = Decoder::new(args);
            render(&mut decoder, site.message, out).map_err(Problem::Render)?;
            if decoder.is_malformed() {
                return Err(Problem::Malformed);
            }
            // Empty when the message ends with a placeholder: the copy's length checks cost
            // 17 instructions per record (callgrind, same workload).
            if !site.tail.is_empty() {
                out.push_str(site.tail);
            }
            return Ok(());
        }
    }
    let mut walk = Walk {
        site,
        decoder: Decoder::new(args),
        next_field: 0,
        next_placeholder: 0,
        out,
        fields,
        values: None,
    };
    // Fields, counts, nested lists, or a record that does not match its site's table
    // (caught as malformed): value by value.
    walk.list(std::slice::from_ref(decode))?;
    walk.finish()
}

/// The binary log's reading of a call-site record: each placeholder's value written into
/// the open block by `values` (typed where its trait and the reader's spec allow, else rendered alone, spec
/// applied, without the literal text around it), its fields recorded in `fields`.
pub(crate) fn take_located(
    message: &SiteMessage<'_>,
    fields: &mut Fields,
    values: &mut ValueWriter,
) -> Result<(), Problem> {
    let SiteMessage { site, decode, args } = *message;
    let mut unused = String::new();
    let mut walk = Walk {
        site,
        decoder: Decoder::new(args),
        next_field: 0,
        next_placeholder: 0,
        out: &mut TextBuf::of_string(&mut unused),
        fields,
        values: Some(values),
    };
    walk.list(std::slice::from_ref(decode))?;
    walk.finish()
}

impl Walk<'_, '_, '_, '_> {
    /// After the walk: checks that the record matched its site's table, appends the tail.
    fn finish(self) -> Result<(), Problem> {
        let site = self.site;
        // Every placeholder and field has had its argument, and the bytes were all there.
        if self.next_placeholder != site.message.len()
            || self.next_field != site.fields.len()
            || self.decoder.is_malformed()
        {
            return Err(Problem::Malformed);
        }
        if self.values.is_none() {
            self.out.push_str(site.tail);
        }
        Ok(())
    }
}

/// The state of one record's rendering: where its bytes are, and which field and placeholder
/// of the site take the next argument.
struct Walk<'s, 'a, 'o, 'b> {
    site: &'s Site,
    decoder: Decoder<'a>,
    next_field: usize,
    next_placeholder: usize,
    out: &'o mut TextBuf<'b>,
    fields: &'o mut Fields,
    /// Where the message's values go for the binary log, instead of `out`.
    values: Option<&'o mut ValueWriter>,
}

impl Walk<'_, '_, '_, '_> {
    /// Appends a placeholder's literal text and its value to `out`, or takes the value into
    /// `values`.
    #[inline(always)]
    fn message(
        &mut self,
        placeholder: &Placeholder,
        render: RenderFn,
        take: TakeFn,
    ) -> Result<(), Problem> {
        match self.values.as_deref_mut() {
            None => placeholder.render_value(render, &mut self.decoder, self.out),
            Some(values) => take(&mut self.decoder, placeholder, values),
        }
        .map_err(Problem::Render)
    }

    /// Reads a list of arguments one by one, out of line.
    #[inline(never)]
    fn list(&mut self, list: &[Decode]) -> Result<(), Problem> {
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
            Decode::List(list) | Decode::Messages(list) | Decode::Rendered { items: list, .. } => {
                self.list(list)?
            }
            // Read by the placeholder whose value follows it.
            Decode::Count => {}
            Decode::Field(push, _) => {
                let key = self
                    .site
                    .fields
                    .get(self.next_field)
                    .ok_or(Problem::Malformed)?;
                self.next_field += 1;
                // Push functions catch panics per value.
                push(&mut self.decoder, key, self.fields);
            }
            Decode::Message(render, take) => {
                let placeholder = self
                    .site
                    .message
                    .get(self.next_placeholder)
                    .ok_or(Problem::Malformed)?;
                self.next_placeholder += 1;
                self.message(placeholder, render, take)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::render;
    use crate::codec::{CopyCodec, StrCodec};
    use crate::frontend::args::{fmt_trait::Display, Decodes};
    use crate::record::Count;
    use crate::Level;
    use std::mem::MaybeUninit;

    /// The `Decode` of a `{}` argument of these types, as the macro makes it.
    const DISPLAY_U64: Decode = <Display as Decodes<CopyCodec<u64>>>::DECODE;
    const DISPLAY_F64: Decode = <Display as Decodes<CopyCodec<f64>>>::DECODE;

    const PLACEHOLDERS: &[Placeholder] = &[
        Placeholder::new("a=", Count::None, Count::None, None),
        Placeholder::new(" b=", Count::Arg, Count::None, None),
    ];

    static SITE: Site = Site {
        level: Level::Info,
        target: "t",
        file: "f.rs",
        line: 1,
        format: "a={} b={:.*} c",
        message: PLACEHOLDERS,
        tail: " c",
        fields: &["k"],
        plain_metadata: true,
        armed: std::sync::atomic::AtomicUsize::new(0),
    };

    static WITH_FIELD: Decode = Decode::List(&[
        Decode::Field(render::push_native::<StrCodec>, None),
        DISPLAY_U64,
        Decode::Count,
        DISPLAY_F64,
    ]);

    /// The bytes of `(k = "v", 7u64, precision 2, 1.5f64)` as the front end writes them.
    fn bytes() -> Vec<MaybeUninit<u8>> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&1usize.to_ne_bytes());
        bytes.push(b'v');
        bytes.extend_from_slice(&7u64.to_ne_bytes());
        bytes.extend_from_slice(&2usize.to_ne_bytes());
        bytes.extend_from_slice(&1.5f64.to_ne_bytes());
        bytes.into_iter().map(MaybeUninit::new).collect()
    }

    fn rendered(
        decode: &'static Decode,
        args: &[MaybeUninit<u8>],
    ) -> Result<(String, usize), Problem> {
        let (mut out, mut fields) = (String::new(), Fields::default());
        let message = SiteMessage {
            site: &SITE,
            decode,
            args,
        };
        render(&message, &mut TextBuf::of_string(&mut out), &mut fields)
            .map(|()| (out, fields.iter().count()))
    }

    #[test]
    fn fields_counts_and_values_are_read_in_travel_order() {
        let (text, fields) = rendered(&WITH_FIELD, &bytes()).ok().expect("renders");
        assert_eq!(text, "a=7 b=1.50 c");
        assert_eq!(fields, 1);
    }

    #[test]
    fn arguments_that_do_not_match_the_site_are_malformed() {
        // One value short of the site's placeholders, and one field short of its keys.
        static TOO_FEW: Decode = Decode::group(&[DISPLAY_U64]);
        static NO_FIELD: Decode = Decode::List(&[DISPLAY_U64, Decode::Count, DISPLAY_F64]);
        // One more value than placeholders.
        static TOO_MANY: Decode = Decode::List(&[
            Decode::Field(render::push_native::<StrCodec>, None),
            DISPLAY_U64,
            Decode::Count,
            DISPLAY_F64,
            DISPLAY_U64,
        ]);
        for decode in [&TOO_FEW, &NO_FIELD, &TOO_MANY] {
            assert!(matches!(
                rendered(decode, &bytes()),
                Err(Problem::Malformed)
            ));
        }
        // The bytes run out before the table does.
        let short = &bytes()[..12];
        assert!(matches!(
            rendered(&WITH_FIELD, short),
            Err(Problem::Malformed)
        ));
    }

    #[test]
    fn a_message_without_arguments_is_its_tail_and_a_missing_argument_is_malformed() {
        static NONE: Decode = Decode::group(&[]);
        static STATIC: Site = Site {
            message: &[],
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
            tail: "server started",
            ..SITE
        };
        let (mut out, mut fields) = (String::from("> "), Fields::default());
        let message = SiteMessage {
            site: &STATIC,
            decode: &NONE,
            args: &[],
        };
        assert!(render(&message, &mut TextBuf::of_string(&mut out), &mut fields).is_ok());
        assert_eq!(out, "> server started");
        // The same empty argument list against a site that has a placeholder and a field.
        let message = SiteMessage {
            site: &SITE,
            decode: &NONE,
            args: &[],
        };
        assert!(matches!(
            render(
                &message,
                &mut TextBuf::of_string(&mut String::new()),
                &mut fields
            ),
            Err(Problem::Malformed)
        ));
    }

    #[test]
    fn flat_and_nested_groups_of_message_values_render_alike() {
        static SIMPLE: Site = Site {
            message: &[Placeholder::new("a=", Count::None, Count::None, None)],
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
            tail: "",
            ..SITE
        };
        static FLAT: Decode = Decode::group(&[DISPLAY_U64]);
        static NESTED: Decode = Decode::group(&[Decode::group(&[DISPLAY_U64])]);
        assert!(matches!(FLAT, Decode::Messages(_)));
        assert!(matches!(NESTED, Decode::List(_)));
        let args: Vec<MaybeUninit<u8>> = 9u64
            .to_ne_bytes()
            .into_iter()
            .map(MaybeUninit::new)
            .collect();
        for decode in [&FLAT, &NESTED] {
            let (mut out, mut fields) = (String::new(), Fields::default());
            let message = SiteMessage {
                site: &SIMPLE,
                decode,
                args: &args,
            };
            assert!(render(&message, &mut TextBuf::of_string(&mut out), &mut fields).is_ok());
            assert_eq!(out, "a=9");
        }
    }

    /// The `Decode` the macro's tuple of `(u64, &str)` message values gets: one function for
    /// the group.
    type U64AndText = (
        crate::frontend::args::Marked<
            crate::frontend::args::CopySlot<'static, u64>,
            crate::frontend::args::fmt_trait::Display,
        >,
        crate::frontend::args::Marked<
            crate::frontend::args::BytesSlot<'static, StrCodec>,
            crate::frontend::args::fmt_trait::Display,
        >,
    );

    const TWO: &[Placeholder] = &[
        Placeholder::new("n=", Count::None, Count::None, None),
        Placeholder::new(" s=", Count::None, Count::Literal(4), None),
    ];

    /// `(9u64, "ab")` as the front end writes them.
    fn u64_and_text() -> Vec<MaybeUninit<u8>> {
        let mut bytes = 9u64.to_ne_bytes().to_vec();
        bytes.extend_from_slice(&2usize.to_ne_bytes());
        bytes.extend_from_slice(b"ab");
        bytes.into_iter().map(MaybeUninit::new).collect()
    }

    #[test]
    fn a_group_of_message_values_renders_through_its_one_function() {
        use crate::frontend::args::Args;
        static DECODE: Decode = <U64AndText as Args>::DECODE;
        assert!(
            matches!(
                DECODE,
                Decode::Rendered {
                    escape_free: false,
                    ..
                }
            ),
            "{DECODE:?}"
        );
        static TWO_SITE: Site = Site {
            message: TWO,
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
            tail: ".",
            ..SITE
        };
        let render_with = |site: &'static Site, args: &[MaybeUninit<u8>]| {
            let mut out = String::new();
            let message = SiteMessage {
                site,
                decode: &DECODE,
                args,
            };
            render(
                &message,
                &mut TextBuf::of_string(&mut out),
                &mut Fields::default(),
            )
            .map(|()| out)
        };
        assert_eq!(
            render_with(&TWO_SITE, &u64_and_text()).ok().as_deref(),
            Some("n=9 s=ab  .")
        );
        // Bytes cut short, and a site with one placeholder fewer than the group: malformed.
        assert!(matches!(
            render_with(&TWO_SITE, &u64_and_text()[..12]),
            Err(Problem::Malformed)
        ));
        static ONE_SITE: Site = Site {
            message: TWO.split_at(1).0,
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
            tail: "",
            ..SITE
        };
        assert!(matches!(
            render_with(&ONE_SITE, &u64_and_text()),
            Err(Problem::Malformed)
        ));
        // Numbers only: escape-free.
        type Numbers = (
            crate::frontend::args::Marked<
                crate::frontend::args::CopySlot<'static, u64>,
                crate::frontend::args::fmt_trait::Display,
            >,
            crate::frontend::args::Marked<
                crate::frontend::args::CopySlot<'static, f64>,
                crate::frontend::args::fmt_trait::Debug,
            >,
            crate::frontend::args::Marked<
                crate::frontend::args::CopySlot<'static, bool>,
                crate::frontend::args::fmt_trait::Display,
            >,
        );
        assert!(matches!(
            <Numbers as Args>::DECODE,
            Decode::Rendered {
                escape_free: true,
                ..
            }
        ));
        type WithChar = (
            crate::frontend::args::Marked<
                crate::frontend::args::CopySlot<'static, u64>,
                crate::frontend::args::fmt_trait::Display,
            >,
            crate::frontend::args::Marked<
                crate::frontend::args::CopySlot<'static, char>,
                crate::frontend::args::fmt_trait::Display,
            >,
        );
        assert!(matches!(
            <WithChar as Args>::DECODE,
            Decode::Rendered {
                escape_free: false,
                ..
            }
        ));
    }

    #[test]
    fn a_group_nested_in_a_longer_list_is_read_value_by_value() {
        use crate::frontend::args::Args;
        static NESTED: Decode = Decode::List(&[<U64AndText as Args>::DECODE]);
        static TWO_SITE: Site = Site {
            message: TWO,
            fields: &[],
            plain_metadata: true,
            armed: std::sync::atomic::AtomicUsize::new(0),
            tail: "",
            ..SITE
        };
        let mut out = String::new();
        let message = SiteMessage {
            site: &TWO_SITE,
            decode: &NESTED,
            args: &u64_and_text(),
        };
        assert!(render(
            &message,
            &mut TextBuf::of_string(&mut out),
            &mut Fields::default()
        )
        .is_ok());
        assert_eq!(out, "n=9 s=ab  ");
    }
}
