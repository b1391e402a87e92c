//! The macro's input as the `macro_rules!` front ends in `tachylog` forward it:
//! `$crate, Level, [target: "name",] [fields ;] "format", args...`.
//!
//! Parsing only: nothing here emits code. The format string stays an opaque literal (its
//! placeholders are `format_string`'s business) and the structured fields' grammar is in
//! `fields`.

use crate::fields::{parse_fields, FieldSpec};
use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Token};

pub(crate) struct LogCall {
    pub(crate) krate: TokenStream,
    pub(crate) level: Ident,
    /// `target: "name"` given before everything else; `module_path!()` otherwise.
    pub(crate) target: Option<Expr>,
    /// Structured fields before the `;`, in the order written.
    pub(crate) fields: Vec<FieldSpec>,
    pub(crate) format: LitStr,
    pub(crate) positional: Vec<Expr>,
    pub(crate) named: Vec<(Ident, Expr)>,
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
