//! From placeholders to *slots*. Each argument is evaluated once and bound to `__a{i}`; each
//! placeholder, and each width or precision taken from an argument, becomes a slot that reads
//! one binding; and the message becomes a table of literal pieces and placeholders, which the
//! back end walks.
//!
//! Planning only: this decides which binding each slot reads and in what order slots travel,
//! and reports the errors `format!` would (missing or unknown arguments). It never looks at
//! the arguments' types (the emitted code picks each slot's encoding) and emits no code beyond
//! the bindings' expressions.

use crate::format_string::{ArgRef, Count, Piece, Placeholder};
use crate::input::LogCall;
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// An argument evaluated once, bound to `__a{index}`.
pub(crate) struct Binding {
    pub(crate) tokens: TokenStream,
}

pub(crate) enum SlotKind {
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

pub(crate) struct Slot {
    pub(crate) binding: usize,
    pub(crate) kind: SlotKind,
}

/// What the message needs at run time: the bindings, the slots that read them (in the order
/// they are written into the record), and the message as a table: each placeholder with the
/// literal text before it, then the text after the last one.
pub(crate) struct Plan {
    pub(crate) bindings: Vec<Binding>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) parts: Vec<Part>,
    pub(crate) tail: String,
}

/// One placeholder of the message, as the call site's table describes it.
pub(crate) struct Part {
    /// Literal text before the placeholder.
    pub(crate) literal: String,
    /// Its spec. Its precision and width, when taken from arguments, travel just before its
    /// value (the back end reads them in that order).
    pub(crate) placeholder: Placeholder,
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

/// Binds the call's arguments (positional, then named, then inline captures as the format
/// string names them) and gives one slot per placeholder and per count argument, in order of
/// appearance.
pub(crate) fn plan(call: &LogCall, pieces: &[Piece]) -> syn::Result<Plan> {
    let mut resolver = Resolver {
        call,
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

    // Per placeholder, in order of appearance: its precision argument's slot, its width
    // argument's slot, then its value's slot. The back end reads them in that order.
    let mut slots: Vec<Slot> = Vec::new();
    let mut parts = Vec::new();
    let mut literal = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => literal.push_str(text),
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
                let mut count_slot = |binding: usize| {
                    slots.push(Slot {
                        binding,
                        kind: SlotKind::Count,
                    });
                    slots.len() - 1
                };
                let precision = precision_binding.map(&mut count_slot);
                let width = width_binding.map(&mut count_slot);
                slots.push(Slot {
                    binding: value_binding,
                    kind: SlotKind::Value {
                        placeholder: p.clone(),
                        width,
                        precision,
                    },
                });
                parts.push(Part {
                    literal: std::mem::take(&mut literal),
                    placeholder: p.clone(),
                });
            }
        }
    }
    Ok(Plan {
        bindings: resolver.bindings,
        slots,
        parts,
        tail: literal,
    })
}

/// `{slot:flags width .precision type}` with width and precision either verbatim or `N$`.
pub(crate) fn spec_text(
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
