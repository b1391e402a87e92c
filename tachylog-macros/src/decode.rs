//! The functions the back end calls to turn a record's bytes back into text: `__decode`, which
//! formats the message with the rewritten format string and is monomorphised for the slots'
//! codecs, and `__fields`, which records the structured fields in the order written.
//!
//! What is emitted here runs on the back-end thread only. It reads the record through its
//! `Decoder` and may never name the caller's bindings, slots or stage; the codecs it is
//! instantiated with are picked by `site`.

use crate::fields::FieldSpec;
use crate::format_string::Placeholder;
use crate::slots::{Slot, SlotKind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

/// `for<'__x> View<'__x, codec>: bound`: what the back end needs to format or record a value
/// of this codec. `__site` states the same bound for the codec each slot type picks.
pub(crate) fn view_bound(
    krate: &TokenStream,
    codec: &TokenStream,
    bound: &TokenStream,
) -> TokenStream {
    quote!(for<'__x> #krate::__private::View<'__x, #codec>: #bound)
}

/// `::core::fmt::Trait` for the trait a placeholder asks for.
pub(crate) fn fmt_trait(placeholder: &Placeholder) -> TokenStream {
    let fmt_trait = Ident::new(placeholder.trait_.path(), Span::call_site());
    quote!(::core::fmt::#fmt_trait)
}

/// `__decode` for a message without arguments: it writes the text.
pub(crate) fn constant(krate: &TokenStream, text: &str) -> TokenStream {
    quote! {
        fn __decode(
            _: &mut #krate::__private::Decoder<'_>,
            __out: &mut dyn ::core::fmt::Write,
        ) -> ::core::fmt::Result {
            __out.write_str(#text)
        }
    }
}

/// `__decode<__C0, ...>`: views each slot in the order written, then formats them with the
/// format string rewritten to name slots. Count slots are plain `usize`s, without a codec.
pub(crate) fn message(krate: &TokenStream, slots: &[Slot], decode_format: &str) -> TokenStream {
    let view_idents: Vec<Ident> = (0..slots.len())
        .map(|k| format_ident!("__v{}", k))
        .collect();
    let mut decode_generics = Vec::new();
    let mut decode_bounds = Vec::new();
    let mut decode_lets = Vec::new();
    for (k, slot) in slots.iter().enumerate() {
        let view = &view_idents[k];
        match &slot.kind {
            SlotKind::Count => decode_lets.push(quote!(let #view: usize = __d.count();)),
            SlotKind::Value { placeholder, .. } => {
                let codec = format_ident!("__C{}", k);
                decode_generics.push(quote!(#codec: #krate::__private::Codec));
                decode_bounds.push(view_bound(krate, &quote!(#codec), &fmt_trait(placeholder)));
                decode_lets.push(quote!(let #view = __d.view::<#codec>();));
            }
        }
    }
    quote! {
        #[allow(clippy::all)]
        fn __decode<#(#decode_generics),*>(
            __d: &mut #krate::__private::Decoder<'_>,
            __out: &mut dyn ::core::fmt::Write,
        ) -> ::core::fmt::Result
        where #(#decode_bounds),*
        {
            #(#decode_lets)*
            ::core::write!(__out, #decode_format #(, #view_idents)*)
        }
    }
}

/// `__fields<__FC0, ...>`: records each field under its key, as its sigil asks. Emitted even
/// for a call without fields, where nothing uses it (hence `dead_code`).
pub(crate) fn fields(krate: &TokenStream, fields: &[FieldSpec]) -> TokenStream {
    let mut fields_generics = Vec::new();
    let mut fields_bounds = Vec::new();
    let mut fields_pushes = Vec::new();
    for (j, field) in fields.iter().enumerate() {
        let key = &field.key;
        let codec = format_ident!("__FC{}", j);
        let push = field.sigil.push();
        fields_generics.push(quote!(#codec: #krate::__private::Codec));
        fields_bounds.push(view_bound(
            krate,
            &quote!(#codec),
            &field.sigil.bound(krate),
        ));
        fields_pushes.push(quote!(__f.#push(#key, &__d.view::<#codec>());));
    }
    quote! {
        #[allow(clippy::all, dead_code)]
        fn __fields<#(#fields_generics),*>(
            __d: &mut #krate::__private::Decoder<'_>,
            __f: &mut #krate::Fields,
        )
        where #(#fields_bounds),*
        {
            #(#fields_pushes)*
        }
    }
}
