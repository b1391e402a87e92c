//! What keeps the traits that decide how bytes are read back tachylog's own.
//!
//! The back end trusts a record's bytes to be what its codec says (a `CopyArg` value read back
//! bit for bit, a length before a text): a user's impl that picked another type's codec, or
//! skipped escaping, would make safe code misbehave. So:
//! - traits whose impls choose a codec or an encoding ([`Codec`](super::Codec), the slots, the
//!   argument lists, [`BytesArg`](crate::BytesArg), [`ListElem`](crate::ListElem)) have
//!   [`Sealed`] as a supertrait;
//! - hidden members of traits users do implement (`CopyArg`'s fast paths and escape flag,
//!   `Sink`'s buffer hooks) name [`Internal`] or [`EscapeFree`] in their signature.
//!
//! These types are public, so they may appear in public traits, but they live in a private
//! module: no other crate can name them, so none can implement [`Sealed`], write a member's
//! signature to override it, or (their fields being private) make a value to call one.

/// The supertrait of traits only tachylog implements. `Tag` tells the sealed traits apart, so
/// that each may have blanket impls of its own (`&T`, lists) without overlapping another's.
pub trait Sealed<Tag> {}

/// Tags of [`Sealed`], one per sealed trait.
pub mod tag {
    /// [`crate::codec::Codec`].
    pub enum Codec {}
    /// [`crate::BytesArg`].
    pub enum BytesArg {}
    /// [`crate::ListElem`].
    pub enum ListElem {}
    /// The slots, argument lists and decode markers of `frontend::args`.
    pub enum Args {}
}

/// Proof that the caller is tachylog: the last argument of hidden trait methods.
#[derive(Clone, Copy)]
pub struct Internal(());

impl Internal {
    pub(crate) const TOKEN: Internal = Internal(());
}

/// Whether every text the back end writes for a `CopyArg` type needs no escaping; the type of
/// `CopyArg`'s hidden escape flag, which only tachylog can therefore set.
#[derive(Clone, Copy)]
pub struct EscapeFree(pub(crate) bool);

/// What a `CopyArg` type's bytes are for a reader without the writing build's code (see
/// `codec/SHAPES.md`); the type of `CopyArg`'s hidden primitive kind, which only tachylog can
/// therefore set: a type that claimed to be a `u64` without being one would be misread.
#[derive(Clone, Copy)]
pub struct PrimKind(pub(crate) super::shape::Prim);

#[cfg(doctest)]
mod misuse_is_rejected;
