//! The call site's `&'static Site`: level, target, file, line and format string, and the
//! message and fields as a table the back end walks. The table names, per placeholder, a
//! renderer of the runtime crate instantiated for the argument's codec and trait, which every
//! call site with the same argument type shares: a call site emits data, not formatting code.
//! The only function emitted per call site is a one-line `write!` for a placeholder whose spec
//! has flags (fill, alignment, sign, `#`, `0`), which no runtime value can express.
//!
//! `__site` is generic over the slots' types only to name those codecs: it takes the slots by
//! reference and never reads them, and its body is a `const` block, so a call to it only
//! returns a pointer and a log call pushes that one pointer. Nothing emitted here does work
//! per call.

use crate::fields::FieldSpec;
use crate::format_string::{Count, Placeholder, Trait};
use crate::slots::{spec_text, Part, Slot};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Ident, LitStr};

/// `for<'__x> View<'__x, codec>: bound`: what the back end needs to format or record a value
/// of this codec; `__site` states it for the codec each slot type picks.
fn view_bound(krate: &TokenStream, codec: &TokenStream, bound: &TokenStream) -> TokenStream {
    quote!(for<'__x> #krate::__private::View<'__x, #codec>: #bound)
}

/// `::core::fmt::Trait` for the trait a placeholder asks for.
fn fmt_trait(placeholder: &Placeholder) -> TokenStream {
    let fmt_trait = Ident::new(placeholder.trait_.path(), Span::call_site());
    quote!(::core::fmt::#fmt_trait)
}

/// The runtime crate's renderer for a placeholder's trait.
fn renderer(trait_: Trait) -> Ident {
    let name = match trait_ {
        Trait::Display => "display",
        Trait::Debug => "debug",
        Trait::LowerHex => "lower_hex",
        Trait::UpperHex => "upper_hex",
        Trait::Octal => "octal",
        Trait::Binary => "binary",
        Trait::LowerExp => "lower_exp",
        Trait::UpperExp => "upper_exp",
        Trait::Pointer => "pointer",
    };
    Ident::new(name, Span::call_site())
}

/// The `Site` fields every call site sets the same way, whatever its arguments.
pub(crate) fn metadata(
    krate: &TokenStream,
    level: &Ident,
    target: &TokenStream,
    lit: &LitStr,
) -> TokenStream {
    quote! {
        level: #krate::Level::#level,
        target: #target,
        file: ::core::file!(),
        line: ::core::line!(),
        format: #lit,
    }
}

/// `static __SITE` for a message without arguments or fields: the text is the whole table.
pub(crate) fn constant(krate: &TokenStream, metadata: &TokenStream, text: &str) -> TokenStream {
    quote! {
        static __SITE: #krate::__private::Site = #krate::__private::Site {
            #metadata
            message: &[],
            tail: #text,
            fields: &[],
        };
    }
}

/// A width or precision as the table states it.
fn count(krate: &TokenStream, count: &Option<Count>) -> TokenStream {
    match count {
        None => quote!(#krate::__private::Count::None),
        Some(Count::Arg(_)) => quote!(#krate::__private::Count::Arg),
        Some(Count::Literal(n)) => {
            let n: usize = n.parse().unwrap_or(0);
            quote!(#krate::__private::Count::Literal(#n))
        }
    }
}

/// Whether a spec needs the call site's own `write!`: flags, or a debug-hex type (`{:x?}`).
pub(crate) fn has_flags(p: &Placeholder) -> bool {
    !p.flags.is_empty() || p.ty.len() > 1
}

/// `fn __flags{k}`: the placeholder's spec applied by `core::fmt`, width and precision as
/// arguments (`{0:>+1$.2$}`), to the runtime crate's `Fmt`, which forwards every trait.
fn flags_fn(krate: &TokenStream, name: &Ident, p: &Placeholder) -> TokenStream {
    // `{0:>+__width$.__precision$}`: the count parameters, captured by name.
    let width = p.width.as_ref().map(|_| "__width".to_string());
    let precision = p.precision.as_ref().map(|_| "__precision".to_string());
    let spec = spec_text("0", p, width, precision);
    quote! {
        #[allow(clippy::all, unused_variables)]
        fn #name(
            __value: &#krate::__private::Fmt<'_>,
            __width: usize,
            __precision: usize,
            __out: &mut dyn ::core::fmt::Write,
        ) -> ::core::fmt::Result {
            ::core::write!(__out, #spec, __value)
        }
    }
}

/// The flags functions of a message's placeholders, and `__site(&__fs0, ..., &__s0, ...)`:
/// one type parameter per field and per value slot (count slots are always `usize`), bounded
/// as the renderers and push functions need for the codec each slot type picks.
pub(crate) fn generic(
    krate: &TokenStream,
    metadata: &TokenStream,
    slots: &[Slot],
    parts: &[Part],
    tail: &str,
    fields: &[FieldSpec],
) -> TokenStream {
    let codec_of = |site_param: &Ident| quote!(<#site_param as #krate::__private::Slot>::Codec);

    let mut field_site_generics = Vec::new();
    let mut field_site_params = Vec::new();
    let mut field_site_bounds = Vec::new();
    let mut field_entries = Vec::new();
    for (j, field) in fields.iter().enumerate() {
        let site_param = format_ident!("__FS{}", j);
        let codec = codec_of(&site_param);
        field_site_generics.push(quote!(#site_param: #krate::__private::Slot));
        field_site_params.push(quote!(_: &#site_param));
        field_site_bounds.push(view_bound(krate, &codec, &field.sigil.bound(krate)));
        let key = &field.key;
        let push = field.sigil.push_fn();
        field_entries.push(quote! {
            #krate::__private::FieldSlot {
                key: #key,
                push: #krate::__private::render::#push::<#codec>,
            }
        });
    }

    let mut site_generics = Vec::new();
    let mut site_params = Vec::new();
    let mut site_bounds = Vec::new();
    let mut flags_fns = Vec::new();
    let mut entries = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let p = &part.placeholder;
        let site_param = format_ident!("__S{}", part.value_slot);
        let codec = codec_of(&site_param);
        site_generics.push(quote!(#site_param: #krate::__private::Slot));
        site_params.push(quote!(_: &#site_param));
        site_bounds.push(view_bound(krate, &codec, &fmt_trait(p)));
        let flags = if has_flags(p) {
            let name = format_ident!("__flags{}", k);
            flags_fns.push(flags_fn(krate, &name, p));
            quote!(::core::option::Option::Some(#name))
        } else {
            quote!(::core::option::Option::None)
        };
        let literal = &part.literal;
        let precision = count(krate, &p.precision);
        let width = count(krate, &p.width);
        let render = renderer(p.trait_);
        entries.push(quote! {
            #krate::__private::Placeholder {
                literal: #literal,
                precision: #precision,
                width: #width,
                flags: #flags,
                render: #krate::__private::render::#render::<#codec>,
            }
        });
    }
    // Slots are listed in travel order; the parameters follow the slots, counts excluded.
    debug_assert!(parts.iter().all(|p| p.value_slot < slots.len()));

    quote! {
        #(#flags_fns)*
        #[allow(clippy::all)]
        fn __site<#(#field_site_generics,)* #(#site_generics),*>(#(#field_site_params,)* #(#site_params),*) -> &'static #krate::__private::Site
        where #(#field_site_bounds,)* #(#site_bounds),*
        {
            const {
                &#krate::__private::Site {
                    #metadata
                    message: &[#(#entries),*],
                    tail: #tail,
                    fields: &[#(#field_entries),*],
                }
            }
        }
    }
}
