//! Structured fields, as in `info!(user, latency_ms = ms, err = %e, "content-type" = ct; "...")`:
//! their grammar (the `%` and `?` sigils, the `key`/`%key`/`?key` shorthands, dotted and quoted
//! keys) and what each sigil asks of the value and of the back end.
//!
//! Parsing and that per-sigil vocabulary only: the code that encodes a field on the caller's
//! thread is emitted by `expand`, the key in the call site's table by `site`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::ParseStream;
use syn::{Expr, Ident, LitStr, Token};

/// How a field's value is recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sigil {
    /// `key = value`: with its native type (number, bool, text), else its `Display`.
    Native,
    /// `key = %value`: its `Display`.
    Display,
    /// `key = ?value`: its `Debug`.
    Debug,
}

impl Sigil {
    /// The runtime crate's marker of this way of recording a value (`__private::field_role`).
    pub(crate) fn role(self) -> TokenStream {
        match self {
            Sigil::Native => quote!(Native),
            Sigil::Display => quote!(Display),
            Sigil::Debug => quote!(Debug),
        }
    }
}

/// One structured field: `key = value`, `key = %value`, `key = ?value`, or the shorthands
/// `key`, `%key` and `?key` for a variable of that name. Keys may be dotted (`http.method`)
/// or string literals (`"content-type"`).
pub(crate) struct FieldSpec {
    pub(crate) key: String,
    pub(crate) sigil: Sigil,
    pub(crate) value: Expr,
    /// Written as a string literal (`"every" = x`): never one of `limit`'s options.
    pub(crate) quoted: bool,
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
pub(crate) fn parse_fields(input: ParseStream) -> syn::Result<Vec<FieldSpec>> {
    let mut fields = Vec::new();
    loop {
        let shorthand_sigil = parse_sigil(input)?;
        let quoted = input.peek(LitStr);
        let (key, shorthand) = if quoted {
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
                quoted,
            }
        } else {
            let Some(ident) = shorthand else {
                return Err(input.error("a dotted or quoted key needs a value: `key = value`"));
            };
            FieldSpec {
                key,
                sigil: shorthand_sigil,
                value: syn::parse_quote!(#ident),
                quoted,
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
