//! What safe code cannot do with tachylog's traits: each example below is a doctest that must
//! fail to compile, because each one, if it compiled, could make the back end misread a
//! record's bytes or forge a line. The module exists only when rustdoc collects doctests.
//!
//! The first example is the control: a type of the user's own logged raw ([`CopyArg`]) and a
//! sink of their own, which must compile and run. Every other example keeps to the same public
//! API and adds one misuse.
//!
//! [`CopyArg`]: crate::CopyArg
//!
//! ```
//! #[derive(Clone, Copy, Debug)]
//! struct Name(&'static str);
//! impl std::fmt::Display for Name {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         f.write_str(self.0)
//!     }
//! }
//! impl tachylog::CopyArg for Name {}
//!
//! struct Discard;
//! impl tachylog::Sink for Discard {
//!     fn write_line(&mut self, _: &tachylog::Line<'_>) -> std::io::Result<()> {
//!         Ok(())
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! let guard = tachylog::builder().sink(Discard).init().unwrap();
//! tachylog::info!("value {} {:?} {:?}", Name("a"), Name("b"), [Name("c")]);
//! drop(guard);
//! ```
//!
//! Choosing another type's codec through `BytesArg` (the back end would read 16 bytes of `A`
//! as a `&str`):
//!
//! ```compile_fail
//! #[derive(Clone, Copy, Debug)]
//! struct Name(&'static str);
//! impl tachylog::CopyArg for Name {}
//!
//! #[derive(Debug)]
//! struct Evil;
//! impl tachylog::BytesArg for Evil {
//!     type Codec = <Name as tachylog::ListElem>::Codec;
//!     fn arg_bytes(&self) -> &[u8] {
//!         &[0x41; 16]
//!     }
//! }
//! ```
//!
//! The same through a list element's codec:
//!
//! ```compile_fail
//! #[derive(Debug)]
//! struct Evil;
//! impl tachylog::ListElem for Evil {
//!     type Codec = <bool as tachylog::ListElem>::Codec;
//!     fn elem_len(&self) -> usize {
//!         1
//!     }
//!     fn write_elem(&self, _: &mut tachylog::__private::ArgWriter) {}
//! }
//! ```
//!
//! A codec of one's own, whose bytes the back end would trust:
//!
//! ```compile_fail
//! struct Evil;
//! impl tachylog::__private::Codec for Evil {
//!     fn take<'a>(
//!         _: &mut tachylog::__private::Decoder<'a>,
//!     ) -> Option<&'a [std::mem::MaybeUninit<u8>]> {
//!         None
//!     }
//! }
//! ```
//!
//! A slot of one's own, which would write bytes that do not match its codec:
//!
//! ```compile_fail
//! struct Evil;
//! impl tachylog::__private::Slot for Evil {
//!     type Codec = <bool as tachylog::ListElem>::Codec;
//!     fn encoded_len(&self, _: &tachylog::__private::Stage) -> usize {
//!         1
//!     }
//!     fn write(&self, _: &mut tachylog::__private::ArgWriter, _: &tachylog::__private::Stage) {}
//! }
//! ```
//!
//! A decode marker of one's own, which could read a slot's bytes with another codec's renderer:
//!
//! ```compile_fail
//! struct Evil;
//! impl<C: tachylog::__private::Codec> tachylog::__private::Decodes<C> for Evil {
//!     const DECODE: tachylog::__private::Decode = unimplemented!();
//! }
//! ```
//!
//! Claiming that a type's text never needs escaping, so that a `Display` writing `\n` could
//! forge a second line:
//!
//! ```compile_fail
//! #[derive(Clone, Copy, Debug)]
//! struct Forged;
//! impl std::fmt::Display for Forged {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         f.write_str("ok\n2026-01-01 00:00:00.000000 ERROR forged")
//!     }
//! }
//! impl tachylog::CopyArg for Forged {
//!     const __ESCAPE_FREE: bool = true;
//! }
//! ```
//!
//! Claiming a primitive's layout for a type of one's own, so that a process recovering a spool
//! would read its bytes as a `u64` (the constant's type is private to tachylog):
//!
//! ```compile_fail
//! #[derive(Clone, Copy, Debug)]
//! struct Claimed([u8; 8]);
//! impl tachylog::CopyArg for Claimed {
//!     const __PRIM: u8 = 4;
//! }
//! ```
//!
//! Overriding `CopyArg`'s hidden fast path (its signature names types private to tachylog, so
//! no impl outside it can be written):
//!
//! ```compile_fail
//! #[derive(Clone, Copy, Debug)]
//! struct Fast;
//! impl std::fmt::Display for Fast {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         f.write_str("fast")
//!     }
//! }
//! impl tachylog::CopyArg for Fast {
//!     fn __fast_display(
//!         &self,
//!         _: Option<usize>,
//!         _: &mut tachylog::__private::TextBuf<'_>,
//!     ) -> bool {
//!         true
//!     }
//! }
//! ```
//!
//! Overriding a sink's buffer hook, which the back end would format lines into:
//!
//! ```compile_fail
//! struct Evil(Vec<u8>);
//! impl tachylog::Sink for Evil {
//!     fn write_line(&mut self, _: &tachylog::Line<'_>) -> std::io::Result<()> {
//!         Ok(())
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//!     fn text_buffer(&mut self) -> Option<&mut Vec<u8>> {
//!         Some(&mut self.0)
//!     }
//! }
//! ```
//!
//! Calling a sink's buffer hook from outside, which would append to its batch unaccounted:
//!
//! ```compile_fail
//! use tachylog::Sink;
//! let path = std::env::temp_dir().join("tachylog-misuse-doctest.log");
//! let mut file = tachylog::FileSink::open(&path).unwrap();
//! file.text_buffer().unwrap().extend_from_slice(b"unaccounted\n");
//! ```
//!
//! Giving a type of one's own a typed field value through `NativeValue`: its one member is
//! hidden and takes a token only tachylog can name, so an impl cannot supply it:
//!
//! ```compile_fail,E0046
//! #[derive(Clone, Copy, Debug)]
//! struct Id(u64);
//! impl tachylog::CopyArg for Id {}
//! impl tachylog::NativeValue for Id {}
//! ```
