//! The procedural half of tachylog's log macros. Users call `tachylog::info!` and friends; those
//! `macro_rules!` macros forward here with the crate path and the level.
//!
//! For `info!("request {} took {:.3} ms: {}", id, ms, path)` this emits, in short:
//! - a check that the call would compile as `format_args!` with the same string and arguments
//!   (never run; it gives users the compiler's usual messages);
//! - one *slot* per placeholder (and per width/precision argument). At compile time each slot
//!   picks, by the argument's type, how it travels: raw bytes for strings, `Copy` values for
//!   numbers and opted-in types, or text formatted right away for anything else;
//! - a `&'static` call site built in a `const` block: level, module, file, line, and the
//!   message as a table of literal pieces and placeholders, each placeholder naming a renderer
//!   of the runtime crate chosen by the argument's type and shared by every call site with
//!   that type. A call site emits data, not formatting code, and a log call pushes one
//!   pointer, a timestamp and the argument bytes;
//! - a `static` `Interest` per call site: the filter's verdict for it, resolved on its first
//!   call and cached, so the enabled check is one load and a branch whatever the filter.
//!
//! The parts, in the order a call goes through them: `input` and `fields` parse the macro's
//! arguments, `format_string` the format string; `slots` binds each argument once and maps
//! placeholders to slots and lays out the message's table; `expand` emits the block at the call
//! site (the `Interest`, the hot path), with the `&'static Site` from `site`.

mod expand;
mod fields;
mod format_string;
mod input;
mod limit;
mod site;
mod slots;

use input::LogCall;

/// `__log!($crate, Level, "format", args...)`. Not for direct use: call `tachylog::info!` etc.
#[proc_macro]
pub fn __log(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let call = syn::parse_macro_input!(input as LogCall);
    match expand::expand(call) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}
