//! The procedural half of tachylog's log macros. Users call `tachylog::info!` and friends; those
//! `macro_rules!` macros forward here with the crate path and the level.
//!
//! For `info!("request {} took {:.3} ms: {}", id, ms, path)` this emits, in short:
//! - a check that the call would compile as `format_args!` with the same string and arguments
//!   (never run; it gives users the compiler's usual messages);
//! - one *slot* per placeholder (and per width/precision argument). At compile time each slot
//!   picks, by the argument's type, how it travels: raw bytes for strings, `Copy` values for
//!   numbers and opted-in types, or text formatted right away for anything else;
//! - a decode function, monomorphised for those slot types, that the back end calls to format
//!   the message from the bytes with the same format string rewritten to name the slots;
//! - a `&'static` call site (level, module, file, line, decode function) built in a `const`
//!   block, so a log call pushes one pointer, a timestamp and the argument bytes;
//! - a `static` `Interest` per call site: the filter's verdict for it, resolved on its first
//!   call and cached, so the enabled check is one load and a branch whatever the filter.

mod format_string;

use format_string::{ArgRef, Count, Piece, Placeholder};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Token};

/// `__log!($crate, Level, "format", args...)`. Not for direct use: call `tachylog::info!` etc.
#[proc_macro]
pub fn __log(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let call = syn::parse_macro_input!(input as LogCall);
    match expand(call) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

struct LogCall {
    krate: TokenStream,
    level: Ident,
    /// `target: "name"` given before everything else; `module_path!()` otherwise.
    target: Option<Expr>,
    /// Structured fields before the `;`, in the order written.
    fields: Vec<FieldSpec>,
    format: LitStr,
    positional: Vec<Expr>,
    named: Vec<(Ident, Expr)>,
}

impl Parse for LogCall {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate: TokenTree = input.parse()?;
        input.parse::<Token![,]>()?;
        let level: Ident = input.parse()?;
        input.parse::<Token![,]>()?;
        let target = if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
            let name: Ident = input.parse()?;
            if name != "target" {
                return Err(syn::Error::new(
                    name.span(),
                    "expected `target: \"name\"`, structured fields or a format string",
                ));
            }
            input.parse::<Token![:]>()?;
            let target: Expr = input.parse()?;
            input.parse::<Token![,]>()?;
            Some(target)
        } else {
            None
        };
        let fields = if input.peek(LitStr) && !input.peek2(Token![=]) {
            Vec::new()
        } else {
            parse_fields(input)?
        };
        let format: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "a log macro takes a string literal format string first, as `format!` does",
            )
        })?;
        let mut positional = Vec::new();
        let mut named: Vec<(Ident, Expr)> = Vec::new();
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            if input.peek(Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
                let name: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let expr: Expr = input.parse()?;
                named.push((name, expr));
            } else {
                if !named.is_empty() {
                    return Err(syn::Error::new(
                        input.span(),
                        "positional arguments cannot follow named arguments",
                    ));
                }
                positional.push(input.parse()?);
            }
        }
        Ok(LogCall {
            krate: TokenStream::from(krate),
            level,
            target,
            fields,
            format,
            positional,
            named,
        })
    }
}

/// How a field's value is recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sigil {
    /// `key = value`: with its native type (number, bool, text), else its `Display`.
    Native,
    /// `key = %value`: its `Display`.
    Display,
    /// `key = ?value`: its `Debug`.
    Debug,
}

/// One structured field: `key = value`, `key = %value`, `key = ?value`, or the shorthands
/// `key`, `%key` and `?key` for a variable of that name. Keys may be dotted (`http.method`)
/// or string literals (`"content-type"`).
struct FieldSpec {
    key: String,
    sigil: Sigil,
    value: Expr,
}

fn parse_sigil(input: ParseStream) -> syn::Result<Sigil> {
    if input.peek(Token![%]) {
        input.parse::<Token![%]>()?;
        Ok(Sigil::Display)
    } else if input.peek(Token![?]) {
        input.parse::<Token![?]>()?;
        Ok(Sigil::Debug)
    } else {
        Ok(Sigil::Native)
    }
}

/// `fields ;` before the format string.
fn parse_fields(input: ParseStream) -> syn::Result<Vec<FieldSpec>> {
    let mut fields = Vec::new();
    loop {
        let shorthand_sigil = parse_sigil(input)?;
        let (key, shorthand) = if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            (lit.value(), None)
        } else {
            let first: Ident = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected a format string, or structured fields (`key = value, ...;`) \
                     followed by `;` and a format string",
                )
            })?;
            let mut key = first.to_string();
            let mut dotted = false;
            while input.peek(Token![.]) {
                input.parse::<Token![.]>()?;
                let part: Ident = input.parse()?;
                key.push('.');
                key.push_str(&part.to_string());
                dotted = true;
            }
            (key, (!dotted).then_some(first))
        };
        if key.is_empty() {
            return Err(input.error("a field's key cannot be empty"));
        }
        let field = if input.peek(Token![=]) {
            if shorthand_sigil != Sigil::Native {
                return Err(input.error("write the sigil after `=`: `key = %value`"));
            }
            input.parse::<Token![=]>()?;
            let sigil = parse_sigil(input)?;
            FieldSpec {
                key,
                sigil,
                value: input.parse()?,
            }
        } else {
            let Some(ident) = shorthand else {
                return Err(input.error("a dotted or quoted key needs a value: `key = value`"));
            };
            FieldSpec {
                key,
                sigil: shorthand_sigil,
                value: syn::parse_quote!(#ident),
            }
        };
        fields.push(field);
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            break;
        }
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `,` before the next field or `;` before the format string",
            )
        })?;
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            break;
        }
    }
    if !input.peek(LitStr) {
        return Err(input.error("expected the format string after the fields' `;`"));
    }
    Ok(fields)
}

/// An argument evaluated once, bound to `__a{index}`.
struct Binding {
    tokens: TokenStream,
}

enum SlotKind {
    /// Formats a placeholder's value with `trait_`; `counts` are the slots of its width and
    /// precision arguments, if any.
    Value {
        placeholder: Placeholder,
        width: Option<usize>,
        precision: Option<usize>,
    },
    /// A width or precision (`usize`).
    Count,
}

struct Slot {
    binding: usize,
    kind: SlotKind,
}

struct Resolver<'a> {
    call: &'a LogCall,
    bindings: Vec<Binding>,
    captures: Vec<String>,
    next_positional: usize,
}

impl Resolver<'_> {
    fn resolve(&mut self, arg: &ArgRef) -> syn::Result<usize> {
        let np = self.call.positional.len();
        let nn = self.call.named.len();
        let err = |msg: String| syn::Error::new(self.call.format.span(), msg);
        match arg {
            ArgRef::Next => {
                let i = self.next_positional;
                self.next_positional += 1;
                if i >= np {
                    return Err(err(format!(
                        "the format string needs at least {} positional argument(s), {np} given",
                        i + 1
                    )));
                }
                Ok(i)
            }
            ArgRef::Index(i) if *i < np + nn => Ok(*i),
            ArgRef::Index(i) => Err(err(format!(
                "invalid reference to positional argument {i} ({} argument(s) given)",
                np + nn
            ))),
            ArgRef::Name(name) => {
                if let Some(j) = self.call.named.iter().position(|(n, _)| n == name) {
                    return Ok(np + j);
                }
                // An inline capture of a variable in scope, as in `format!("{user}")`.
                let k = match self.captures.iter().position(|c| c == name) {
                    Some(k) => k,
                    None => {
                        self.captures.push(name.clone());
                        let ident = Ident::new(name, self.call.format.span());
                        self.bindings.push(Binding {
                            tokens: quote!(&#ident),
                        });
                        self.captures.len() - 1
                    }
                };
                Ok(np + nn + k)
            }
        }
    }
}

fn expand(call: LogCall) -> syn::Result<TokenStream> {
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

    let mut resolver = Resolver {
        call: &call,
        bindings: Vec::new(),
        captures: Vec::new(),
        next_positional: 0,
    };
    for expr in &call.positional {
        resolver.bindings.push(Binding {
            tokens: quote!(&(#expr)),
        });
    }
    for (_, expr) in &call.named {
        resolver.bindings.push(Binding {
            tokens: quote!(&(#expr)),
        });
    }

    // One slot per placeholder and per count argument, in order of appearance.
    let mut slots: Vec<Slot> = Vec::new();
    let mut decode_format = String::new();
    for piece in &pieces {
        match piece {
            Piece::Text(text) => {
                decode_format.push_str(&text.replace('{', "{{").replace('}', "}}"))
            }
            Piece::Placeholder(p) => {
                // `.*` takes its precision from the next positional argument, before the value.
                let precision_binding = match &p.precision {
                    Some(Count::Arg(arg)) => Some(resolver.resolve(arg)?),
                    _ => None,
                };
                let width_binding = match &p.width {
                    Some(Count::Arg(arg)) => Some(resolver.resolve(arg)?),
                    _ => None,
                };
                let value_binding = resolver.resolve(&p.arg)?;
                let value_slot = slots.len();
                slots.push(Slot {
                    binding: value_binding,
                    kind: SlotKind::Count, // replaced below once the count slots are known
                });
                let width = width_binding.map(|b| {
                    slots.push(Slot {
                        binding: b,
                        kind: SlotKind::Count,
                    });
                    slots.len() - 1
                });
                let precision = precision_binding.map(|b| {
                    slots.push(Slot {
                        binding: b,
                        kind: SlotKind::Count,
                    });
                    slots.len() - 1
                });
                decode_format.push_str(&spec_text(
                    &value_slot.to_string(),
                    p,
                    width.map(|w| w.to_string()),
                    precision.map(|w| w.to_string()),
                ));
                slots[value_slot].kind = SlotKind::Value {
                    placeholder: p.clone(),
                    width,
                    precision,
                };
            }
        }
    }

    let bindings = &resolver.bindings;
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

    let site_fields = quote! {
        level: #krate::Level::#level,
        target: #target,
        file: ::core::file!(),
        line: ::core::line!(),
        format: #lit,
    };

    if slots.is_empty() && call.fields.is_empty() {
        let text: String = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Placeholder(_) => unreachable!(),
            })
            .collect();
        return Ok(quote! {{
            #target_check
            static __INTEREST: #krate::__private::Interest = #krate::__private::Interest::new();
            if __INTEREST.enabled(#krate::Level::#level, #target) {
                fn __decode(
                    _: &mut #krate::__private::Decoder<'_>,
                    __out: &mut dyn ::core::fmt::Write,
                ) -> ::core::fmt::Result {
                    __out.write_str(#text)
                }
                static __SITE: #krate::__private::Site = #krate::__private::Site {
                    #site_fields
                    decode: __decode,
                    fields: #krate::__private::no_fields,
                };
                #krate::__private::log_record(&__SITE, 0, |_| {});
            }
        }});
    }

    let slot_idents: Vec<Ident> = (0..slots.len())
        .map(|k| format_ident!("__s{}", k))
        .collect();
    let mut slot_lets = Vec::new();
    let mut site_generics = Vec::new();
    let mut site_params = Vec::new();
    let mut site_args = Vec::new();
    let mut site_bounds = Vec::new();
    let mut decode_generics = Vec::new();
    let mut decode_bounds = Vec::new();
    let mut decode_lets = Vec::new();
    let mut decode_instance = Vec::new();
    let view_idents: Vec<Ident> = (0..slots.len())
        .map(|k| format_ident!("__v{}", k))
        .collect();
    for (k, slot) in slots.iter().enumerate() {
        let ident = &slot_idents[k];
        let binding = &binding_idents[slot.binding];
        let view = &view_idents[k];
        match &slot.kind {
            SlotKind::Count => {
                slot_lets.push(quote! {
                    let #ident = #krate::__private::CountSlot(*#binding);
                });
                decode_lets.push(quote!(let #view: usize = __d.count();));
            }
            SlotKind::Value {
                placeholder,
                width,
                precision,
            } => {
                // What the caller formats if the type has no raw encoding: the placeholder with
                // its own spec, counts renumbered to follow the value.
                let mut count_args = Vec::new();
                let mut next = 1;
                let mut count_ref = |slot: &Option<usize>| {
                    slot.map(|s| {
                        count_args.push(&binding_idents[slots[s].binding]);
                        next += 1;
                        (next - 1).to_string()
                    })
                };
                let w = count_ref(width);
                let pr = count_ref(precision);
                let fallback_format = spec_text("0", placeholder, w, pr);
                slot_lets.push(quote! {
                    let #ident = (&&&&#krate::__private::Wrap(#binding)).__tachylog_slot(
                        &mut __stage,
                        |__w: &mut dyn ::core::fmt::Write| ::core::write!(__w, #fallback_format, *#binding #(, *#count_args)*),
                    );
                });
                let codec = format_ident!("__C{}", k);
                let site_param = format_ident!("__S{}", k);
                let fmt_trait = Ident::new(placeholder.trait_.path(), Span::call_site());
                site_generics.push(quote!(#site_param: #krate::__private::Slot));
                site_params.push(quote!(_: &#site_param));
                site_args.push(quote!(&#ident));
                site_bounds.push(quote!(for<'__x> #krate::__private::View<'__x, <#site_param as #krate::__private::Slot>::Codec>: ::core::fmt::#fmt_trait));
                decode_generics.push(quote!(#codec: #krate::__private::Codec));
                decode_bounds.push(quote!(for<'__x> #krate::__private::View<'__x, #codec>: ::core::fmt::#fmt_trait));
                decode_lets.push(quote!(let #view = __d.view::<#codec>();));
                decode_instance.push(quote!(<#site_param as #krate::__private::Slot>::Codec));
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
    let mut fields_generics = Vec::new();
    let mut fields_bounds = Vec::new();
    let mut fields_pushes = Vec::new();
    let mut fields_instance = Vec::new();
    let mut field_site_generics = Vec::new();
    let mut field_site_params = Vec::new();
    let mut field_site_bounds = Vec::new();
    for (j, field) in call.fields.iter().enumerate() {
        let binding = &field_binding_idents[j];
        let ident = &field_slot_idents[j];
        let key = &field.key;
        let codec = format_ident!("__FC{}", j);
        let site_param = format_ident!("__FS{}", j);
        let span = field.value.span();
        // Spanned at the value for type errors; the stage keeps the macro's own hygiene.
        let stage = quote!(&mut __stage);
        let (bound, push) = match field.sigil {
            Sigil::Native => {
                field_slot_lets.push(quote_spanned! {span=>
                    let #ident = (&&&&#krate::__private::Wrap(#binding)).__tachylog_native_slot(#stage);
                });
                (
                    quote!(#krate::__private::NativeField),
                    quote!(__push_native),
                )
            }
            Sigil::Display | Sigil::Debug => {
                let (spec, fmt_trait, push) = if field.sigil == Sigil::Display {
                    ("{}", quote!(::core::fmt::Display), quote!(__push_display))
                } else {
                    ("{:?}", quote!(::core::fmt::Debug), quote!(__push_debug))
                };
                field_slot_lets.push(quote_spanned! {span=>
                    let #ident = (&&&&#krate::__private::Wrap(#binding)).__tachylog_slot(
                        #stage,
                        |__w: &mut dyn ::core::fmt::Write| ::core::write!(__w, #spec, *#binding),
                    );
                });
                (fmt_trait, push)
            }
        };
        fields_generics.push(quote!(#codec: #krate::__private::Codec));
        fields_bounds.push(quote!(for<'__x> #krate::__private::View<'__x, #codec>: #bound));
        fields_pushes.push(quote!(__f.#push(#key, &__d.view::<#codec>());));
        fields_instance.push(quote!(<#site_param as #krate::__private::Slot>::Codec));
        field_site_generics.push(quote!(#site_param: #krate::__private::Slot));
        field_site_params.push(quote!(_: &#site_param));
        field_site_bounds.push(quote!(for<'__x> #krate::__private::View<'__x, <#site_param as #krate::__private::Slot>::Codec>: #bound));
    }
    let fields_fn = if call.fields.is_empty() {
        quote!(#krate::__private::no_fields)
    } else {
        quote!(__fields::<#(#fields_instance),*>)
    };
    let all_slot_idents: Vec<&Ident> = field_slot_idents.iter().chain(slot_idents.iter()).collect();

    Ok(quote! {{
        #target_check
        static __INTEREST: #krate::__private::Interest = #krate::__private::Interest::new();
        if __INTEREST.enabled(#krate::Level::#level, #target) {
            #[allow(unused_imports)]
            use #krate::__private::{
                ViaBytes as _, ViaCopy as _, ViaCopyRef as _, ViaFallback as _,
                NativeViaBytes as _, NativeViaCopy as _, NativeViaCopyRef as _, NativeViaDisplay as _,
            };
            match (#(#field_exprs,)*) {
                (#(#field_binding_idents,)*) => match (#(#binding_exprs,)*) {
                (#(#binding_idents,)*) => {
                    #check
                    let mut __stage = #krate::__private::Stage::new();
                    #(#field_slot_lets)*
                    #(#slot_lets)*
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
                    #[allow(clippy::all, dead_code)]
                    fn __fields<#(#fields_generics),*>(
                        __d: &mut #krate::__private::Decoder<'_>,
                        __f: &mut #krate::Fields,
                    )
                    where #(#fields_bounds),*
                    {
                        #(#fields_pushes)*
                    }
                    #[allow(clippy::all)]
                    fn __site<#(#field_site_generics,)* #(#site_generics),*>(#(#field_site_params,)* #(#site_params),*) -> &'static #krate::__private::Site
                    where #(#field_site_bounds,)* #(#site_bounds),*
                    {
                        const {
                            &#krate::__private::Site {
                                #site_fields
                                decode: __decode::<#(#decode_instance),*>,
                                fields: #fields_fn,
                            }
                        }
                    }
                    let __len = 0 #(+ #krate::__private::Slot::encoded_len(&#all_slot_idents, &__stage))*;
                    #krate::__private::log_record(__site(#(&#field_slot_idents,)* #(#site_args),*), __len, |__w| {
                        #(#krate::__private::Slot::write(&#all_slot_idents, __w, &__stage);)*
                    });
                }
                }
            }
        }
    }})
}

/// `{slot:flags width .precision type}` with width and precision either verbatim or `N$`.
fn spec_text(
    slot: &str,
    p: &Placeholder,
    width_slot: Option<String>,
    precision_slot: Option<String>,
) -> String {
    let mut s = format!("{{{slot}:{}", p.flags);
    match (&p.width, width_slot) {
        (_, Some(w)) => s.push_str(&format!("{w}$")),
        (Some(Count::Literal(w)), None) => s.push_str(w),
        _ => {}
    }
    match (&p.precision, precision_slot) {
        (_, Some(pr)) => s.push_str(&format!(".{pr}$")),
        (Some(Count::Literal(pr)), None) => s.push_str(&format!(".{pr}")),
        _ => {}
    }
    s.push_str(&p.ty);
    s.push('}');
    s
}
