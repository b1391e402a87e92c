//! Records read back from their shapes exactly as `format!` (and the live back end) writes
//! them. The argument bytes are made by the real encoding path: each value goes through the
//! slot the macro's autoref selection picks (`frontend::args`, `frontend::field_args`), and the
//! tuple through `Encode::write`, as `log_record` writes it; the shape is `shape_of` of the
//! same tuple type.

use super::spec::{self, Resolved};
use super::*;
use crate::codec::render::{Applied, Fmt};
use crate::codec::shape::{CodecShape, Prim};
use crate::codec::ArgWriter;
use crate::fields::FieldValue;
#[allow(unused_imports)]
use crate::frontend::args::{
    field_role, fmt_trait, shape_of, Args, CountSlot, Stage, ViaBytes as _, ViaCopy as _,
    ViaCopyRef as _, ViaFallback as _, ViaList as _, Wrap,
};
#[allow(unused_imports)]
use crate::frontend::field_args::{
    NativeViaBytes as _, NativeViaCopy as _, NativeViaCopyRef as _, NativeViaDisplay as _,
};
use proptest::prelude::*;
use std::fmt;
use std::num::NonZeroU32;

/// A message value's slot, as the macro makes it.
macro_rules! slot {
    ($stage:ident, $m:ident, $v:expr) => {
        slot!($stage, $m, $v, Applied::PLAIN)
    };
    ($stage:ident, $m:ident, $v:expr, $applied:expr) => {
        (&&&&&Wrap(&$v)).__tachylog_slot::<fmt_trait::$m>(&mut $stage, &$applied)
    };
}

/// A field's slot: `native` (`key = value`), `Display` (`%key`) or `Debug` (`?key`).
macro_rules! field {
    ($stage:ident, native, $v:expr) => {
        (&&&&Wrap(&$v)).__tachylog_native_slot(&mut $stage)
    };
    ($stage:ident, $role:ident, $v:expr) => {
        (&&&&&Wrap(&$v)).__tachylog_slot::<field_role::$role>(&mut $stage, &Applied::PLAIN)
    };
}

/// The shape and argument bytes of `args`, through `Encode::write` as `log_record` writes them.
fn encode<A: Args>(args: &A, stage: &Stage) -> (Vec<u8>, Vec<u8>) {
    let len = args.encoded_len(stage);
    let mut bytes = vec![0u8; len];
    // SAFETY: `bytes` has `len` writable bytes, alive for the writer's use.
    let mut writer = unsafe { ArgWriter::new(bytes.as_mut_ptr(), len) };
    args.write(&mut writer, stage);
    assert_eq!(writer.remaining(), 0, "slots announced the wrong length");
    (shape_of::<A>(), bytes)
}

/// Decodes `args` for a site of `format` and `keys`; the message, and the fields.
fn decode_args<A: Args>(format: &str, keys: &[&str], args: &A, stage: &Stage) -> (String, Fields) {
    let (shape, bytes) = encode(args, stage);
    let shape = Shape::parse(&shape).expect("the shape parses");
    let site = SiteText::parse(format, keys.iter().map(|k| k.to_string()).collect())
        .expect("the format string parses");
    let mut message = String::new();
    let mut fields = Fields::new();
    decode(&site, &shape, &bytes, false, &mut message, &mut fields)
        .unwrap_or_else(|e| panic!("{format:?}: {e}"));
    (message, fields)
}

/// One value under one placeholder, compared with `format!`.
macro_rules! one {
    ($fmt:literal, $m:ident, $v:expr) => {{
        let v = &$v;
        let mut stage = Stage::new();
        let args = (slot!(stage, $m, *v),);
        let (message, _) = decode_args($fmt, &[], &args, &stage);
        assert_eq!(message, format!($fmt, v), "{} of {:?}", $fmt, v);
    }};
}

/// The specs of the brief and more, for an integer.
macro_rules! integer_specs {
    ($($v:expr),*) => {$(
        one!("{}", Display, $v);
        one!("n={} ms", Display, $v);
        one!("{:>8.3}", Display, $v);
        one!("{:<5}|", Display, $v);
        one!("{:^7}|", Display, $v);
        one!("{:*^9}", Display, $v);
        one!("{:+}", Display, $v);
        one!("{:08.2}", Display, $v);
        one!("{:#x}", LowerHex, $v);
        one!("{:X}", UpperHex, $v);
        one!("{:#010b}", Binary, $v);
        one!("{:o}", Octal, $v);
        one!("{:#o}", Octal, $v);
        one!("{:e}", LowerExp, $v);
        one!("{:.2E}", UpperExp, $v);
        one!("{:?}", Debug, $v);
        one!("{:#?}", Debug, $v);
        one!("{:x?}", Debug, $v);
        one!("{:#06X?}", Debug, $v);
        one!("{:é>+12}", Display, $v);
    )*};
}

macro_rules! float_specs {
    ($($v:expr),*) => {$(
        one!("{}", Display, $v);
        one!("x={}!", Display, $v);
        one!("{:>8.3}", Display, $v);
        one!("{:<5}|", Display, $v);
        one!("{:^7}|", Display, $v);
        one!("{:*^9}", Display, $v);
        one!("{:+}", Display, $v);
        one!("{:08.2}", Display, $v);
        one!("{:.0}", Display, $v);
        one!("{:e}", LowerExp, $v);
        one!("{:E}", UpperExp, $v);
        one!("{:+.3e}", LowerExp, $v);
        one!("{:?}", Debug, $v);
        one!("{:#?}", Debug, $v);
        one!("{:10.1?}", Debug, $v);
        one!("{:+012.4}", Display, $v);
    )*};
}

#[test]
fn integers_format_like_std_under_every_spec() {
    integer_specs!(0u8, 200u8, u16::MAX, 7u32, u64::MAX, u128::MAX, 42usize);
    integer_specs!(-128i8, 0i16, -70000i32, i64::MIN, i128::MIN, -1isize, 99i64);
    integer_specs!(NonZeroU32::new(4096).unwrap());
}

#[test]
fn floats_format_like_std_under_every_spec() {
    float_specs!(
        0.1f64,
        -0.0f64,
        1e300f64,
        1.5e-7f64,
        f64::NAN,
        f64::INFINITY
    );
    float_specs!(
        f64::NEG_INFINITY,
        f64::MAX,
        2.5f64,
        -1234.5678f64,
        f64::MIN_POSITIVE
    );
    float_specs!(
        0.1f32,
        -0.0f32,
        f32::NAN,
        f32::INFINITY,
        16777217.0f32,
        3.4e38f32
    );
}

#[test]
fn bool_char_and_unit_format_like_std() {
    for v in [true, false] {
        one!("{}", Display, v);
        one!("{:?}", Debug, v);
        one!("[{:>6}]", Display, v);
        one!("[{:*^7?}]", Debug, v);
        one!("[{:.2}]", Display, v);
    }
    for c in ['a', 'é', '\n', '\'', '"', '\u{301}', '\u{1F600}'] {
        one!("{}", Display, c);
        one!("{:?}", Debug, c);
        one!("[{:>4}]", Display, c);
        one!("[{:-<3}]", Display, c);
        one!("[{:6?}]", Debug, c);
        one!("[{:.0}]", Display, c);
    }
    one!("{:?}", Debug, ());
    one!("[{:>5?}]", Debug, ());
}

#[test]
fn text_formats_like_std() {
    let quoted = "say \"hi\"\nbye\t\\ é";
    let owned = String::from(quoted);
    one!("{}", Display, quoted);
    one!("<{}>", Display, owned);
    one!("{:?}", Debug, quoted);
    one!("{:#?}", Debug, owned);
    one!("[{:>24}]", Display, quoted);
    one!("[{:.3}]", Display, quoted);
    one!("[{:^9.2}]", Display, owned);
    one!("[{:20?}]", Debug, quoted);
    one!("{:?}", Debug, "");
    let boxed: Box<str> = "boxed".into();
    one!("{:_<8}", Display, boxed);
}

#[test]
fn lossy_bytes_show_replacement_characters() {
    let bytes = crate::lossy(b"ab\xffcd\"");
    let mut stage = Stage::new();
    let args = (slot!(stage, Display, bytes), slot!(stage, Debug, bytes));
    let (message, _) = decode_args("{} {:?}", &[], &args, &stage);
    assert_eq!(message, "ab\u{FFFD}cd\" \"ab\u{FFFD}cd\\\"\"");
    let valid = crate::lossy(b"ok");
    let mut stage = Stage::new();
    let args = (slot!(stage, Display, valid),);
    let (message, _) = decode_args("[{:>4}]", &[], &args, &stage);
    assert_eq!(message, "[  ok]");
}

#[test]
fn lists_format_like_std() {
    let names = vec![String::from("a\"b"), String::from("c\nd"), String::new()];
    let empty: Vec<String> = Vec::new();
    let numbers: &[u64] = &[1, 22, 333];
    let floats = [0.5f64, -0.0, f64::NAN];
    let chars = [b'x' as char, '\''];
    one!("{:?}", Debug, names);
    one!("{:#?}", Debug, names);
    one!("{:?}", Debug, empty);
    one!("{:#?}", Debug, empty);
    one!("{:5?}", Debug, numbers);
    one!("{:#x?}", Debug, numbers);
    one!("{:#?}", Debug, numbers);
    one!("{:.1?}", Debug, floats);
    one!("{:+?}", Debug, &floats[..]);
    one!("{:?}", Debug, chars);
    let texts: [&str; 2] = ["x", "y z"];
    one!("{:?}", Debug, texts);
}

/// A type of the user's, logged bit for bit: only the dead program could format it, so its
/// bytes are shown with its type name.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Order {
    id: u32,
    side: u32,
}
impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "order-{}", self.id)
    }
}
impl crate::CopyArg for Order {}

fn opaque_text(order: Order) -> String {
    let mut hex = String::new();
    for b in order
        .id
        .to_ne_bytes()
        .iter()
        .chain(&order.side.to_ne_bytes())
    {
        hex.push_str(&format!("{b:02x}"));
    }
    format!("{}(0x{hex})", std::any::type_name::<Order>())
}

#[test]
fn a_users_copy_type_is_shown_as_its_type_name_and_bytes() {
    let order = Order {
        id: 0x0102_0304,
        side: 0xA0,
    };
    let orders = [order, order];
    let mut stage = Stage::new();
    let args = (
        slot!(stage, Display, order),
        slot!(stage, Debug, order),
        slot!(stage, Debug, orders),
    );
    let (message, _) = decode_args("{} / {:>30?} / {:?}", &[], &args, &stage);
    let one = opaque_text(order);
    assert_eq!(message, format!("{one} / {one} / [{one}, {one}]"));
    assert!(one.ends_with("::Order(0x04030201a0000000)") || cfg!(target_endian = "big"));
}

/// A type without a raw encoding: its text is formatted by the caller, spec applied.
struct Name(&'static str);
impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.0)
    }
}

#[derive(Debug)]
#[allow(dead_code)] // Read by `Debug` only.
struct Point {
    x: i32,
    y: i32,
}

/// The call site's flags function of `{:*>10}`, as the macro emits it.
fn right_ten(value: &Fmt<'_>, _: usize, _: usize, out: &mut dyn fmt::Write) -> fmt::Result {
    write!(out, "{0:*>10}", value)
}

/// The same for `{:#?}`.
fn pretty(value: &Fmt<'_>, _: usize, _: usize, out: &mut dyn fmt::Write) -> fmt::Result {
    write!(out, "{0:#?}", value)
}

#[test]
fn text_formatted_by_the_caller_is_copied() {
    let name = Name("ada");
    let point = Point { x: 1, y: -2 };
    let mut stage = Stage::new();
    let args = (
        slot!(stage, Display, name),
        slot!(
            stage,
            Display,
            name,
            Applied {
                width: None,
                precision: None,
                flags: Some(right_ten)
            }
        ),
        slot!(
            stage,
            Display,
            name,
            Applied {
                width: Some(6),
                precision: Some(2),
                flags: None
            }
        ),
        slot!(stage, Debug, point),
        slot!(
            stage,
            Debug,
            point,
            Applied {
                width: None,
                precision: None,
                flags: Some(pretty)
            }
        ),
    );
    let format = "{} {:*>10} [{:6.2}] {:?} {:#?}";
    let (message, _) = decode_args(format, &[], &args, &stage);
    assert_eq!(
        message,
        format!(
            "{} {:*>10} [{:6.2}] {:?} {:#?}",
            name, name, name, point, point
        )
    );
}

#[test]
fn counts_give_width_and_precision() {
    let x = 12.34567f64;
    let n = -42i32;
    let s = "abcdef";
    let mut stage = Stage::new();
    let args = (
        (
            CountSlot(3),
            slot!(stage, Display, x),
            CountSlot(9),
            slot!(stage, Display, n),
        ),
        (
            CountSlot(2),
            CountSlot(7),
            slot!(stage, Display, s),
            CountSlot(1),
            CountSlot(12),
            slot!(stage, LowerExp, x),
        ),
    );
    let format = "{:.*} [{:1$}] [{:>w$.p$}] {:+0w2$.p2$e}";
    let (message, _) = decode_args(format, &[], &args, &stage);
    let expected = format!(
        "{:.*} [{2:3$}] [{4:>w$.p$}] {5:+0w2$.p2$e}",
        3,
        x,
        n,
        9,
        s,
        x,
        w = 7,
        p = 2,
        w2 = 12,
        p2 = 1
    );
    assert_eq!(message, expected);
}

#[test]
fn fields_are_typed_as_the_live_back_end_types_them() {
    let (count, ratio, small, flag, letter, nothing, big) =
        (5u64, 0.25f32, -3i8, true, 'é', (), i128::MIN);
    let user = "ada";
    let name = Name("n");
    let path = "/a b";
    let point = Point { x: 1, y: 2 };
    let value = 7u16;
    let mut stage = Stage::new();
    let args = (
        (
            field!(stage, native, count),
            field!(stage, native, ratio),
            field!(stage, native, small),
            field!(stage, native, flag),
            field!(stage, native, letter),
            field!(stage, native, nothing),
            field!(stage, native, big),
            field!(stage, native, user),
        ),
        (
            field!(stage, native, name),
            field!(stage, Display, path),
            field!(stage, Debug, path),
            field!(stage, Debug, point),
            field!(stage, Display, ratio),
            slot!(stage, Display, value),
        ),
    );
    let keys = [
        "count", "ratio", "small", "flag", "letter", "nothing", "big", "user", "name", "path",
        "quoted", "point", "shown",
    ];
    let (message, fields) = decode_args("served {} items", &keys, &args, &stage);
    assert_eq!(message, "served 7 items");
    let got: Vec<(String, String)> = fields
        .iter()
        .map(|f| (f.key.to_string(), format!("{:?}", f.value)))
        .collect();
    let expected = [
        ("count", FieldValue::U64(5)),
        ("ratio", FieldValue::F64(0.25)),
        ("small", FieldValue::I64(-3)),
        ("flag", FieldValue::Bool(true)),
        ("letter", FieldValue::Str("é")),
        ("nothing", FieldValue::Null),
        ("big", FieldValue::I128(i128::MIN)),
        ("user", FieldValue::Str("ada")),
        ("name", FieldValue::Str("n")),
        ("path", FieldValue::Str("/a b")),
        ("quoted", FieldValue::Str("\"/a b\"")),
        ("point", FieldValue::Str("Point { x: 1, y: 2 }")),
        ("shown", FieldValue::Str("0.25")),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), format!("{v:?}")))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_message_without_arguments_is_its_tail() {
    let (message, _) = decode_args("all {{done}} here", &[], &(), &Stage::new());
    assert_eq!(message, "all {done} here");
}

#[test]
fn the_format_string_splits_as_the_macro_splits_it() {
    let site = SiteText::parse("a{{ {}b{x:>8.3}c{:#?}{0:1$}}}", Vec::new()).unwrap();
    let parts: Vec<(&str, &str)> = site
        .placeholders
        .iter()
        .map(|p| (p.literal.as_str(), p.spec_text.as_str()))
        .collect();
    assert_eq!(parts, [("a{ ", ""), ("b", ">8.3"), ("c", "#?"), ("", "1$")]);
    assert_eq!(site.tail, "}");
    for bad in ["{", "}", "a } b", "{:q}", "{:.}", "{:99999}"] {
        assert!(SiteText::parse(bad, Vec::new()).is_err(), "{bad:?}");
    }
}

/// A valid record of several codecs, for the damage tests.
fn sample() -> (SiteText, Vec<u8>, Vec<u8>) {
    let (n, s, f, list) = (
        7u64,
        "text",
        1.5f64,
        vec![String::from("a"), String::from("b")],
    );
    let who = "me";
    let mut stage = Stage::new();
    let args = (
        field!(stage, native, who),
        slot!(stage, Display, n),
        CountSlot(6),
        slot!(stage, Display, s),
        slot!(stage, LowerExp, f),
        slot!(stage, Debug, list),
    );
    let format = "n={} s={:>1$} f={:e} l={:?}";
    let (shape, bytes) = encode(&args, &stage);
    let site = SiteText::parse(format, vec!["who".into()]).unwrap();
    (site, shape, bytes)
}

fn try_decode(site: &SiteText, shape: &[u8], args: &[u8]) -> Result<String, ShapeError> {
    let shape = Shape::parse(shape)?;
    let mut message = String::from("kept");
    let mut fields = Fields::new();
    let result = decode(site, &shape, args, false, &mut message, &mut fields);
    if result.is_err() {
        assert_eq!(message, "kept", "an error leaves the message as it was");
        assert!(fields.is_empty(), "an error pushes no field");
    }
    result.map(|()| message)
}

#[test]
fn truncated_arguments_and_shapes_are_errors() {
    let (site, shape, bytes) = sample();
    assert_eq!(
        try_decode(&site, &shape, &bytes).unwrap(),
        "keptn=7 s=  text f=1.5e0 l=[\"a\", \"b\"]"
    );
    for cut in 0..bytes.len() {
        assert!(
            try_decode(&site, &shape, &bytes[..cut]).is_err(),
            "arguments cut at {cut}"
        );
    }
    for cut in 0..shape.len() {
        assert!(
            try_decode(&site, &shape[..cut], &bytes).is_err(),
            "shape cut at {cut}"
        );
    }
    // Trailing bytes (frame padding) are ignored, as the live back end ignores them.
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0; 7]);
    assert!(try_decode(&site, &shape, &padded).is_ok());
}

#[test]
fn a_shape_that_does_not_fit_its_site_is_an_error() {
    let (_, shape, bytes) = sample();
    for (format, keys) in [
        ("n={} s={:>1$} f={:e}", vec!["who"]), // a value too many
        ("n={} s={:>1$} f={:e} l={:?} {}", vec!["who"]), // a value too few
        ("n={} s={:>8} f={:e} l={:?}", vec!["who"]), // a count it does not take
        ("n={:x} s={:>1$} f={:e} l={:?}", vec!["who"]), // another trait
        ("n={} s={:>1$} f={:e} l={:?}", vec![]), // no key for the field
        ("n={} s={:>1$} f={:e} l={:?}", vec!["a", "b"]), // a field missing
        ("n={} s={:>1$.2$} f={:e} l={:?}", vec!["who"]), // a count missing
    ] {
        let site = SiteText::parse(format, keys.iter().map(|k| k.to_string()).collect()).unwrap();
        assert!(
            try_decode(&site, &shape, &bytes).is_err(),
            "{format:?} {keys:?}"
        );
    }
}

#[test]
fn malformed_values_are_errors() {
    let site = SiteText::parse("{} {}", Vec::new()).unwrap();
    let header = |count: u8| {
        vec![
            1,
            size_of::<usize>() as u8,
            u8::from(cfg!(target_endian = "big")),
            count,
        ]
    };
    let mut bool_shape = header(2);
    for _ in 0..2 {
        bool_shape.extend_from_slice(&[0x01, 0x04, 1, 0x0D, 4, b'b', b'o', b'o', b'l']);
    }
    assert!(try_decode(&site, &bool_shape, &[1, 0]).is_ok());
    assert!(
        try_decode(&site, &bool_shape, &[1, 2]).is_err(),
        "a bool of 2"
    );
    let mut char_shape = header(2);
    for _ in 0..2 {
        char_shape.extend_from_slice(&[0x01, 0x04, 4, 0x0E, 0]);
    }
    let surrogate = 0xD800u32.to_ne_bytes();
    let a = ('a' as u32).to_ne_bytes();
    assert!(try_decode(&site, &char_shape, &[a, a].concat()).is_ok());
    assert!(try_decode(&site, &char_shape, &[a, surrogate].concat()).is_err());
    // Declared sizes that contradict the kind, unknown tags, lists of lists, a huge width.
    for shape in [
        [header(1), vec![0x01, 0x04, 3, 0x04, 0]].concat(),
        [header(1), vec![0x01, 0x09, 0]].concat(),
        [header(1), vec![0x20, 0x01]].concat(),
        [header(1), vec![0x02, 0x05, 0x05, 0x01]].concat(),
        [header(1), vec![0x01, 0x04, 4, 0x10, 0]].concat(),
        [vec![2], header(0)[1..].to_vec()].concat(),
        [header(0), vec![0]].concat(),
    ] {
        assert!(Shape::parse(&shape).is_err(), "{shape:?}");
    }
    let site = SiteText::parse("{:1$}", Vec::new()).unwrap();
    let shape = [header(2), vec![0x00, 0x01, 0x04, 1, 0x01, 0]].concat();
    let width = |w: usize| [&w.to_ne_bytes()[..], &[5]].concat();
    assert_eq!(try_decode(&site, &shape, &width(3)).unwrap(), "kept  5");
    assert!(try_decode(&site, &shape, &width(70_000)).is_err());
}

#[test]
fn a_shape_from_another_byte_order_and_width_is_read_in_its_own() {
    // A big-endian 32-bit writer's `{} {:?}` of a `u32` and a `&str`.
    let site = SiteText::parse("{} {:?}", Vec::new()).unwrap();
    let shape = [vec![1, 4, 1, 2, 0x01, 0x04, 4, 0x03, 0], vec![0x02, 0x01]].concat();
    let args = [vec![0, 0, 1, 0], vec![0, 0, 0, 2], b"hi".to_vec()].concat();
    assert_eq!(try_decode(&site, &shape, &args).unwrap(), "kept256 \"hi\"");
}

/// `format!` of `v` with a spec whose width and precision are the named arguments `w` and `p`.
macro_rules! with_precision {
    ($t:ty; $($spec:literal),* $(,)?) => {
        &[$((
            $spec,
            (|v: $t, w: usize, p: usize| format!(concat!("{:", $spec, "}"), v, w = w, p = p))
                as fn($t, usize, usize) -> String,
        )),*]
    };
}

/// The same without a precision.
macro_rules! without_precision {
    ($t:ty; $($spec:literal),* $(,)?) => {
        &[$((
            $spec,
            (|v: $t, w: usize, _: usize| format!(concat!("{:", $spec, "}"), v, w = w))
                as fn($t, usize, usize) -> String,
        )),*]
    };
}

/// A spec's text and `format!` with it, width `w` and precision `p`.
type StdSpec<T> = (&'static str, fn(T, usize, usize) -> String);

#[path = "spec_table.rs"]
mod spec_table;
use spec_table::{FLOAT_SPECS, FLOAT_SPECS_PRECISION, INT_SPECS_I64, INT_SPECS_U64};

/// The interpreter's text for `v` under `spec`, width `w`, precision `p` (if the spec takes one).
fn interpreted(
    spec_text: &str,
    w: usize,
    p: usize,
    write: impl Fn(&mut String, &Resolved<'_>),
) -> String {
    let spec = Spec::parse(spec_text, 0).unwrap();
    let resolved = Resolved {
        spec: &spec,
        width: Some(w),
        precision: (spec.precision == Count::Arg).then_some(p),
    };
    let mut out = String::new();
    write(&mut out, &resolved);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 8 } else { 2_000 }))]

    #[test]
    fn the_spec_interpreter_matches_std_for_integers(
        a in any::<i64>(),
        b in any::<u64>(),
        pick in any::<prop::sample::Index>(),
        w in 0usize..40,
        p in 0usize..20,
    ) {
        let (spec_text, std_i64) = INT_SPECS_I64[pick.index(INT_SPECS_I64.len())];
        let got = interpreted(spec_text, w, p, |out, r| spec::integer(out, a, r).unwrap());
        prop_assert_eq!(got, std_i64(a, w, p), "{} of {}", spec_text, a);
        let (spec_text, std_u64) = INT_SPECS_U64[pick.index(INT_SPECS_U64.len())];
        let got = interpreted(spec_text, w, p, |out, r| spec::integer(out, b, r).unwrap());
        prop_assert_eq!(got, std_u64(b, w, p), "{} of {}", spec_text, b);
    }

    #[test]
    fn the_spec_interpreter_matches_std_for_floats(
        x in any::<f64>(),
        pick in any::<prop::sample::Index>(),
        w in 0usize..40,
        p in 0usize..20,
    ) {
        for table in [FLOAT_SPECS_PRECISION, FLOAT_SPECS] {
            let (spec_text, std_f64) = table[pick.index(table.len())];
            let got = interpreted(spec_text, w, p, |out, r| spec::float(out, x, r).unwrap());
            prop_assert_eq!(got, std_f64(x, w, p), "{} of {}", spec_text, x);
        }
    }

    // What the fuzz target `spool_args` does, as a property CI runs: any shape and argument
    // bytes, with any format string, give a message or an error, never a panic.
    #[test]
    fn arbitrary_shapes_and_bytes_never_panic(
        shape in proptest::collection::vec(any::<u8>(), 0..64),
        args in proptest::collection::vec(any::<u8>(), 0..256),
        format_pick in 0usize..4,
    ) {
        let formats = ["{}", "{} {:?}", "{:>1$.2$x} {:#?}", "{:+08.3e}{:*^9}{}"];
        let site = SiteText::parse(formats[format_pick], vec!["k".into()]).unwrap();
        let mut shape_bytes = vec![1, size_of::<usize>() as u8, 0];
        shape_bytes.extend_from_slice(&shape);
        for candidate in [&shape[..], &shape_bytes[..]] {
            if let Ok(shape) = Shape::parse(candidate) {
                let mut message = String::new();
                let mut fields = Fields::new();
                let _ = decode(&site, &shape, &args, false, &mut message, &mut fields);
            }
        }
    }
}

#[test]
#[cfg(all(target_pointer_width = "64", target_endian = "little"))]
fn the_shape_is_the_bytes_shapes_md_shows() {
    // `info!(n = 5u64; "{:>1$} {:?}", "a", 8usize, vec![1u16])`
    let (n, a, v) = (5u64, "a", vec![1u16]);
    let mut stage = Stage::new();
    let args = (
        field!(stage, native, n),
        CountSlot(8),
        slot!(stage, Display, a),
        slot!(stage, Debug, v),
    );
    let (shape, _) = encode(&args, &stage);
    #[rustfmt::skip]
    let expected = [
        0x01, 0x08, 0x00, 0x04,
        0x10, 0x04, 0x08, 0x04, 0x03, b'u', b'6', b'4',
        0x00,
        0x01, 0x01,
        0x02, 0x05, 0x04, 0x02, 0x02, 0x03, b'u', b'1', b'6',
    ];
    assert_eq!(shape, expected);
}

/// The primitive kind a `CopyArg` type's shape records.
fn kind<T: crate::CopyArg>() -> Prim {
    let mut bytes = Vec::new();
    <crate::codec::CopyCodec<T> as crate::codec::Codec>::describe(&mut bytes);
    match Shape::parse(&crate::codec::shape::with_header(
        1,
        &[&[0x01][..], &bytes].concat(),
    ))
    .unwrap()
    .slots[0]
        .codec
    {
        Some(CodecShape::Copy { prim, .. }) => prim,
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn primitives_record_their_kind_and_everything_else_is_opaque() {
    use std::num::{NonZeroI16, NonZeroUsize};
    assert_eq!(kind::<u8>(), Prim::U8);
    assert_eq!(kind::<i128>(), Prim::I128);
    assert_eq!(kind::<f32>(), Prim::F32);
    assert_eq!(kind::<bool>(), Prim::Bool);
    assert_eq!(kind::<char>(), Prim::Char);
    assert_eq!(kind::<()>(), Prim::Unit);
    assert_eq!(kind::<NonZeroI16>(), Prim::I16);
    assert_eq!(kind::<usize>(), Prim::USIZE);
    assert_eq!(kind::<NonZeroUsize>(), Prim::USIZE);
    assert_eq!(kind::<Option<u8>>(), Prim::Opaque);
    assert_eq!(kind::<[u32; 2]>(), Prim::Opaque);
    assert_eq!(kind::<std::time::Duration>(), Prim::Opaque);
    assert_eq!(kind::<Order>(), Prim::Opaque);
}
