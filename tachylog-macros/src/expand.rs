//! The block a log call expands to, put together: the target check, the `static` `Interest`
//! and the enabled check, then, on the caller's thread, the arguments' evaluation, the
//! `format_args!` check, the slots' encoding and the push of one record.
//!
//! What is emitted here runs on the calling thread at every enabled call: it evaluates each
//! argument once, encodes slots through the runtime's `__private` API only, and formats on
//! the caller only the fallback for types without a raw encoding (into the `Stage`).
//! The back end's side is data, the `&'static Site` from `site`.

use crate::fields::Sigil;
use crate::format_string::{self, Count, Piece};
use crate::input::LogCall;
use crate::slots::{self, SlotKind};
use crate::{limit, site};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

pub(crate) fn expand(mut call: LogCall) -> syn::Result<TokenStream> {
    let limit = limit::take(&mut call)?;
    let pieces = format_string::parse(&call.format.value())
        .map_err(|msg| syn::Error::new(call.format.span(), msg))?;
    let krate = &call.krate;
    let level = &call.level;
    // A `const` context needs a `&'static str` constant here: a literal or a `const` item.
    let target = match &call.target {
        Some(target) => quote!(#target),
        None => quote!(::core::module_path!()),
    };
    // Call-site metadata is written without the escaping scan: a custom target is checked
    // for control characters at compile time instead.
    let target_check = call.target.as_ref().map(|target| {
        quote_spanned! {target.span()=>
            const _: () = ::core::assert!(
                #krate::__private::is_plain_target(#target),
                "a log target must not contain control characters",
            );
        }
    });
    let lit = &call.format;

    let slots::Plan {
        bindings,
        slots,
        parts,
        tail,
    } = slots::plan(&call, &pieces)?;

    let binding_idents: Vec<Ident> = (0..bindings.len())
        .map(|i| format_ident!("__a{}", i))
        .collect();
    let binding_exprs = bindings.iter().map(|b| &b.tokens);

    // The compile-time check: the original string and arguments through `format_args!`.
    let check_positional = call.positional.iter().enumerate().map(|(i, e)| {
        let ident = &binding_idents[i];
        quote_spanned!(e.span()=> *#ident)
    });
    let np = call.positional.len();
    let check_named = call.named.iter().enumerate().map(|(j, (name, e))| {
        let ident = &binding_idents[np + j];
        quote_spanned!(e.span()=> #name = *#ident)
    });
    let check = quote! {
        #[allow(unreachable_code, clippy::all)]
        if false {
            #krate::__private::check_format(::core::format_args!(#lit #(, #check_positional)* #(, #check_named)*));
        }
    };

    let site_fields = site::metadata(krate, level, &target, lit);

    if slots.is_empty() && call.fields.is_empty() {
        let text: String = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Placeholder(_) => unreachable!(),
            })
            .collect();
        let site = site::table(krate, &site_fields, &[], &text, &[]);
        return Ok(quote! {{
            #target_check
            static __INTEREST: #krate::__private::Interest = #krate::__private::Interest::new();
            if __INTEREST.enabled(#krate::Level::#level, #target) {
                #site
                #krate::__private::log_record(&__SITE, &#krate::__private::Stage::new(), &());
            }
        }});
    }

    let slot_idents: Vec<Ident> = (0..slots.len())
        .map(|k| format_ident!("__s{}", k))
        .collect();
    let mut slot_lets = Vec::new();
    let mut part = 0usize;
    for (k, slot) in slots.iter().enumerate() {
        let ident = &slot_idents[k];
        let binding = &binding_idents[slot.binding];
        match &slot.kind {
            SlotKind::Count => {
                slot_lets.push(quote! {
                    let #ident = #krate::__private::CountSlot(*#binding);
                });
            }
            SlotKind::Value {
                placeholder,
                width,
                precision,
            } => {
                // What the caller formats if the type has no raw encoding: the placeholder's
                // own spec, with the call site's flags function and the counts' values.
                let count_value = |count: &Option<Count>, slot: &Option<usize>| match (count, slot)
                {
                    (_, Some(s)) => {
                        let count_binding = &binding_idents[slots[*s].binding];
                        quote!(::core::option::Option::Some(*#count_binding))
                    }
                    (Some(Count::Literal(n)), None) => {
                        let n: usize = n.parse().unwrap_or(0);
                        quote!(::core::option::Option::Some(#n))
                    }
                    _ => quote!(::core::option::Option::None),
                };
                let width = count_value(&placeholder.width, width);
                let precision = count_value(&placeholder.precision, precision);
                let flags = if site::has_flags(placeholder) {
                    let name = format_ident!("__flags{}", part);
                    quote!(::core::option::Option::Some(#name))
                } else {
                    quote!(::core::option::Option::None)
                };
                let marker = Ident::new(placeholder.trait_.path(), Span::call_site());
                let plain = placeholder.width.is_none()
                    && placeholder.precision.is_none()
                    && !site::has_flags(placeholder);
                let applied = if plain {
                    quote!(#krate::__private::Applied::PLAIN)
                } else {
                    quote!(#krate::__private::Applied { width: #width, precision: #precision, flags: #flags })
                };
                slot_lets.push(quote! {
                    let #ident = (&&&&&#krate::__private::Wrap(#binding)).__tachylog_slot::<#krate::__private::fmt_trait::#marker>(
                        &mut __stage,
                        &#applied,
                    );
                });
                part += 1;
            }
        }
    }

    // Fields travel before the message's arguments, so the back end decodes them first and
    // always finds them where they were written, whatever the message's formatting does.
    let field_binding_idents: Vec<Ident> = (0..call.fields.len())
        .map(|j| format_ident!("__f{}", j))
        .collect();
    let field_exprs = call.fields.iter().map(|f| {
        let value = &f.value;
        quote_spanned!(value.span()=> &(#value))
    });
    let field_slot_idents: Vec<Ident> = (0..call.fields.len())
        .map(|j| format_ident!("__fs{}", j))
        .collect();
    let mut field_slot_lets = Vec::new();
    for (j, field) in call.fields.iter().enumerate() {
        let binding = &field_binding_idents[j];
        let ident = &field_slot_idents[j];
        let span = field.value.span();
        // Spanned at the value for type errors; the stage keeps the macro's own hygiene.
        let stage = quote!(&mut __stage);
        match field.sigil {
            Sigil::Native => {
                field_slot_lets.push(quote_spanned! {span=>
                    let #ident = (&&&&#krate::__private::Wrap(#binding)).__tachylog_native_slot(#stage);
                });
            }
            Sigil::Display | Sigil::Debug => {
                let role = field.sigil.role();
                field_slot_lets.push(quote_spanned! {span=>
                    let #ident = (&&&&&#krate::__private::Wrap(#binding)).__tachylog_slot::<#krate::__private::field_role::#role>(
                        #stage,
                        &#krate::__private::Applied::PLAIN,
                    );
                });
            }
        }
    }
    let all_slot_idents: Vec<&Ident> = field_slot_idents.iter().chain(slot_idents.iter()).collect();
    let args = nest(all_slot_idents.iter().map(|ident| quote!(#ident)).collect());
    let site = site::table(krate, &site_fields, &parts, &tail, &call.fields);
    let limit_open = limit
        .as_ref()
        .map(|limit| limit.open(krate, level, &target));
    // The traits that pick a native field's slot, only where there are native fields: fewer
    // traits in scope is less work for the compiler at each of thousands of call sites.
    let native_traits = call.fields.iter().any(|f| f.sigil == Sigil::Native).then(|| {
        quote! {
            #[allow(unused_imports)]
            use #krate::__private::{
                NativeViaBytes as _, NativeViaCopy as _, NativeViaCopyRef as _, NativeViaDisplay as _,
            };
        }
    });

    Ok(quote! {{
        #target_check
        static __INTEREST: #krate::__private::Interest = #krate::__private::Interest::new();
        if __INTEREST.enabled(#krate::Level::#level, #target) {
            #limit_open {
            #[allow(unused_imports)]
            use #krate::__private::{ViaBytes as _, ViaList as _, ViaCopy as _, ViaCopyRef as _, ViaFallback as _};
            #native_traits
            match (#(#field_exprs,)* #(#binding_exprs,)*) {
                (#(#field_binding_idents,)* #(#binding_idents,)*) => {
                    #check
                    let mut __stage = #krate::__private::Stage::new();
                    #(#field_slot_lets)*
                    #(#slot_lets)*
                    #site
                    #krate::__private::log_record(&__SITE, &__stage, &#args);
                }
            }
            }
        }
    }})
}

/// The slots as one `Args` value: a tuple of up to eight, grouped by eight as often as needed
/// for longer lists.
fn nest(items: Vec<TokenStream>) -> TokenStream {
    if items.len() <= 8 {
        return quote!((#(#items,)*));
    }
    nest(items.chunks(8).map(|chunk| quote!((#(#chunk,)*))).collect())
}
