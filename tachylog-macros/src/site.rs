//! The call site's `&'static Site`: level, target, file, line and format string, with the
//! decode and fields functions instantiated for the slots' codecs.
//!
//! `__site` is generic over the slots' types only to name those codecs: it takes the slots by
//! reference and never reads them, and its body is a `const` block, so a call to it only
//! returns a pointer and a log call pushes that one pointer. Nothing emitted here does work
//! per call.

use crate::decode::{fmt_trait, view_bound};
use crate::fields::FieldSpec;
use crate::slots::{Slot, SlotKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, LitStr};

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

/// `static __SITE` for a message without arguments or fields: nothing to instantiate.
pub(crate) fn constant(krate: &TokenStream, metadata: &TokenStream) -> TokenStream {
    quote! {
        static __SITE: #krate::__private::Site = #krate::__private::Site {
            #metadata
            decode: __decode,
            fields: #krate::__private::no_fields,
        };
    }
}

/// `__site(&__fs0, ..., &__s0, ...)`: one type parameter per field and per value slot (count
/// slots are always `usize`), bounded as `__fields` and `__decode` need for the codec each
/// slot type picks.
pub(crate) fn generic(
    krate: &TokenStream,
    metadata: &TokenStream,
    slots: &[Slot],
    fields: &[FieldSpec],
) -> TokenStream {
    let codec_of = |site_param: &Ident| quote!(<#site_param as #krate::__private::Slot>::Codec);

    let mut field_site_generics = Vec::new();
    let mut field_site_params = Vec::new();
    let mut field_site_bounds = Vec::new();
    let mut fields_instance = Vec::new();
    for (j, field) in fields.iter().enumerate() {
        let site_param = format_ident!("__FS{}", j);
        let codec = codec_of(&site_param);
        field_site_generics.push(quote!(#site_param: #krate::__private::Slot));
        field_site_params.push(quote!(_: &#site_param));
        field_site_bounds.push(view_bound(krate, &codec, &field.sigil.bound(krate)));
        fields_instance.push(codec);
    }
    let fields_fn = if fields.is_empty() {
        quote!(#krate::__private::no_fields)
    } else {
        quote!(__fields::<#(#fields_instance),*>)
    };

    let mut site_generics = Vec::new();
    let mut site_params = Vec::new();
    let mut site_bounds = Vec::new();
    let mut decode_instance = Vec::new();
    for (k, slot) in slots.iter().enumerate() {
        if let SlotKind::Value { placeholder, .. } = &slot.kind {
            let site_param = format_ident!("__S{}", k);
            let codec = codec_of(&site_param);
            site_generics.push(quote!(#site_param: #krate::__private::Slot));
            site_params.push(quote!(_: &#site_param));
            site_bounds.push(view_bound(krate, &codec, &fmt_trait(placeholder)));
            decode_instance.push(codec);
        }
    }

    quote! {
        #[allow(clippy::all)]
        fn __site<#(#field_site_generics,)* #(#site_generics),*>(#(#field_site_params,)* #(#site_params),*) -> &'static #krate::__private::Site
        where #(#field_site_bounds,)* #(#site_bounds),*
        {
            const {
                &#krate::__private::Site {
                    #metadata
                    decode: __decode::<#(#decode_instance),*>,
                    fields: #fields_fn,
                }
            }
        }
    }
}
