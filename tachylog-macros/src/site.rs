//! The call site's `static __SITE`: level, target, file, line and format string, and the
//! message and fields as a table of plain data: the literal pieces, each placeholder's width,
//! precision and flags, and the fields' keys. It is the same whatever the arguments' types, so
//! it needs no generic code: how to read the arguments comes from their types, as a constant
//! that every call site with the same argument types shares (`Args::DECODE` in the runtime
//! crate), and travels beside the site's address in each record.
//!
//! The only function emitted per call site is a one-line `write!` for a placeholder whose spec
//! has flags (fill, alignment, sign, `#`, `0`), which no runtime value can express.

use crate::fields::FieldSpec;
use crate::format_string::{Count, Placeholder};
use crate::slots::{spec_text, Part};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, LitStr};

/// The first arguments of `Site::new`, which every call site gives the same way whatever its
/// arguments: level, target, file, line, format string.
pub(crate) fn metadata(
    krate: &TokenStream,
    level: &Ident,
    target: &TokenStream,
    lit: &LitStr,
) -> TokenStream {
    quote! {
        #krate::Level::#level,
        #target,
        ::core::file!(),
        ::core::line!(),
        #lit,
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

/// The flags functions of a message's placeholders, and `static __SITE`: the metadata, each
/// placeholder's literal text and spec, the text after the last one, and the fields' keys.
pub(crate) fn table(
    krate: &TokenStream,
    metadata: &TokenStream,
    parts: &[Part],
    tail: &str,
    fields: &[FieldSpec],
) -> TokenStream {
    let keys = fields.iter().map(|field| &field.key);
    let mut flags_fns = Vec::new();
    let mut entries = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let p = &part.placeholder;
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
        entries.push(quote! {
            #krate::__private::Placeholder::new(#literal, #precision, #width, #flags)
        });
    }
    quote! {
        #(#flags_fns)*
        static __SITE: #krate::__private::Site = #krate::__private::Site::new(
            #metadata
            &[#(#entries),*],
            #tail,
            &[#(#keys),*],
        );
    }
}
