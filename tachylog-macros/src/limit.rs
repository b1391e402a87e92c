//! Rate limits and sampling written among the fields: `every = <Duration>`, `sample = <n>`, and
//! with either, `key = <expr>` for a limit per key. They are taken out of the fields, and a
//! `suppressed` field (the calls skipped since the last record that passed) takes their place.
//! `key` is an option only beside `every` or `sample`; elsewhere it is an ordinary field, and
//! a field really named `every` or `sample` is written with a quoted key (`"every" = x`).
//!
//! Emits the call site's state (a `static`, and a `thread_local!` where the runtime counts per
//! thread) and the check, which runs after the level check and before the arguments are
//! evaluated: a skipped call evaluates none of them.

use crate::fields::{FieldSpec, Sigil};
use crate::input::LogCall;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Ident};

enum Kind {
    Every(Expr),
    Sample(Expr),
}

pub(crate) struct Limit {
    kind: Kind,
    key: Option<Expr>,
}

/// Whether a field was written as the option `name` (a bare, unquoted key without sigil).
fn is_option(field: &FieldSpec, name: &str) -> bool {
    field.key == name && field.sigil == Sigil::Native && !field.quoted
}

/// Takes the options out of `call`'s fields and adds the `suppressed` field.
pub(crate) fn take(call: &mut LogCall) -> syn::Result<Option<Limit>> {
    let every = call.fields.iter().position(|f| is_option(f, "every"));
    let sample = call.fields.iter().position(|f| is_option(f, "sample"));
    let kind = match (every, sample) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(syn::Error::new(
                call.format.span(),
                "a log call takes `every` or `sample`, not both",
            ))
        }
        (Some(i), None) => Kind::Every(call.fields.remove(i).value),
        (None, Some(i)) => Kind::Sample(call.fields.remove(i).value),
    };
    let key = call
        .fields
        .iter()
        .position(|f| is_option(f, "key"))
        .map(|i| call.fields.remove(i).value);
    call.fields.push(FieldSpec {
        key: "suppressed".to_string(),
        sigil: Sigil::Native,
        value: syn::parse_quote!(__suppressed),
        quoted: false,
    });
    Ok(Some(Limit { kind, key }))
}

impl Limit {
    /// The call site's state and `if let Some(__suppressed) = check`, to put before the block
    /// that evaluates the arguments and logs.
    pub(crate) fn open(
        &self,
        krate: &TokenStream,
        level: &Ident,
        target: &TokenStream,
    ) -> TokenStream {
        let private = quote!(#krate::__private::limit);
        let to = quote!(#private::Destination::new(#krate::Level::#level, #target));
        match (&self.kind, &self.key) {
            (Kind::Every(period), None) => quote! {
                static __EVERY: #private::Every = #private::Every::new(#to);
                ::std::thread_local! {
                    static __EVERY_LOCAL: #private::EveryLocal = const { #private::EveryLocal::new() };
                }
                if let ::core::option::Option::Some(__suppressed) = __EVERY.check(&__EVERY_LOCAL, #period)
            },
            (Kind::Sample(n), None) => quote! {
                ::std::thread_local! {
                    static __SAMPLE_LOCAL: #private::SampleLocal = const { #private::SampleLocal::new(#to) };
                }
                if let ::core::option::Option::Some(__suppressed) = #private::sample(&__SAMPLE_LOCAL, (#n) as u64)
            },
            (Kind::Every(period), Some(key)) => quote! {
                static __KEYED: #private::Keyed = #private::Keyed::new(#to);
                if let ::core::option::Option::Some(__suppressed) = __KEYED.every(&(#key), #period)
            },
            (Kind::Sample(n), Some(key)) => quote! {
                static __KEYED: #private::Keyed = #private::Keyed::new(#to);
                if let ::core::option::Option::Some(__suppressed) = __KEYED.sample(&(#key), (#n) as u64)
            },
        }
    }
}
