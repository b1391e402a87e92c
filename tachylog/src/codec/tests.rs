//! Round trips through the argument encoding: what the front end's slots write, the back end's
//! views format exactly as `format!` formats the original values.

use super::*;
use crate::frontend::args::{
    copy_slot_for_tests, lossy_slot_for_tests, str_slot_for_tests, Slot, Stage,
};
use proptest::prelude::*;
use std::fmt::Write as _;

fn buffer(len: usize, write: impl FnOnce(&mut ArgWriter)) -> Vec<MaybeUninit<u8>> {
    let mut bytes = vec![MaybeUninit::new(0u8); len];
    // SAFETY: `bytes` has `len` writable bytes.
    let mut writer = unsafe { ArgWriter::new(bytes.as_mut_ptr() as *mut u8, len) };
    write(&mut writer);
    assert_eq!(writer.remaining(), 0, "slots announced the wrong length");
    bytes
}

proptest! {
    #[test]
    fn values_round_trip_and_format_like_std(
        a in any::<u64>(),
        b in any::<i32>(),
        c in any::<f64>(),
        d in ".*",
        e in any::<bool>(),
        f in any::<char>(),
        g in any::<Option<u16>>(),
        h in any::<i128>(),
        width in 0usize..40,
        precision in 0usize..12,
    ) {
        let stage = Stage::new();
        let s0 = copy_slot_for_tests(&a);
        let s1 = copy_slot_for_tests(&b);
        let s2 = copy_slot_for_tests(&c);
        let s3 = str_slot_for_tests(d.as_str());
        let s4 = copy_slot_for_tests(&e);
        let s5 = copy_slot_for_tests(&f);
        let s6 = copy_slot_for_tests(&g);
        let s7 = copy_slot_for_tests(&h);
        let len = s0.encoded_len(&stage) + s1.encoded_len(&stage) + s2.encoded_len(&stage)
            + s3.encoded_len(&stage) + s4.encoded_len(&stage) + s5.encoded_len(&stage)
            + s6.encoded_len(&stage) + s7.encoded_len(&stage) + 2 * size_of::<usize>();
        let bytes = buffer(len, |w| {
            s0.write(w, &stage);
            s1.write(w, &stage);
            s2.write(w, &stage);
            w.put_usize(width);
            w.put_usize(precision);
            s3.write(w, &stage);
            s4.write(w, &stage);
            s5.write(w, &stage);
            s6.write(w, &stage);
            s7.write(w, &stage);
        });
        let mut d_ = Decoder::new(&bytes);
        let v0 = d_.view::<CopyCodec<u64>>();
        let v1 = d_.view::<CopyCodec<i32>>();
        let v2 = d_.view::<CopyCodec<f64>>();
        let w_ = d_.count();
        let p_ = d_.count();
        let v3 = d_.view::<StrCodec>();
        let v4 = d_.view::<CopyCodec<bool>>();
        let v5 = d_.view::<CopyCodec<char>>();
        let v6 = d_.view::<CopyCodec<Option<u16>>>();
        let v7 = d_.view::<CopyCodec<i128>>();
        prop_assert!(!d_.is_malformed());
        let mut got = String::new();
        write!(got, "{:x} {:+08} {:>w$.p$} {:e} {:?} [{:^w$}] {} {:?} {:?} {:#b}",
            v0, v1, v2, v2, v3, v3, v4, v5, v6, v7, w = w_, p = p_).unwrap();
        let expected = format!("{:x} {:+08} {:>w$.p$} {:e} {:?} [{:^w$}] {} {:?} {:?} {:#b}",
            a, b, c, c, d, d, e, f, g, h, w = width, p = precision);
        prop_assert_eq!(got, expected);
    }
}

/// A short buffer shows up as `<?>` (a count as 0) and marks the decoder malformed, for every
/// codec and every way of being short; after that every read is missing too, so nothing past
/// the end is read. (That no bytes at all crash the decoder is the fuzz property below.)
#[test]
fn every_codec_reports_a_short_buffer_as_missing() {
    const MISSING: &str = "<?>";
    let bytes =
        |raw: &[u8]| -> Vec<MaybeUninit<u8>> { raw.iter().map(|&b| MaybeUninit::new(b)).collect() };
    let prefixed = |len: usize, payload: &[u8]| bytes(&[&len.to_ne_bytes()[..], payload].concat());
    type Read = fn(&mut Decoder<'_>) -> String;
    let text_codecs: [(&str, Read); 3] = [
        ("str", |d| d.view::<StrCodec>().to_string()),
        ("lossy", |d| format!("{:?}", d.view::<LossyCodec>())),
        ("preformatted", |d| {
            d.view::<PreformattedCodec>().to_string()
        }),
    ];
    let fixed_size: [(&str, Read); 2] = [
        ("copy u64", |d| d.view::<CopyCodec<u64>>().to_string()),
        ("count", |d| {
            if d.count() == 0 {
                MISSING.into()
            } else {
                "a count".into()
            }
        }),
    ];
    let cases: Vec<(&str, Read, Vec<MaybeUninit<u8>>)> = text_codecs
        .iter()
        .flat_map(|&(name, read)| {
            [
                (name, read, bytes(&[])),
                (name, read, bytes(&[3, 0, 0])), // part of the length prefix
                (name, read, prefixed(5, b"abc")), // the payload cut short
                (name, read, prefixed(usize::MAX, b"abc")), // a length past any buffer
            ]
        })
        .chain(
            fixed_size
                .iter()
                .flat_map(|&(name, read)| [(name, read, bytes(&[])), (name, read, bytes(&[7; 7]))]),
        )
        .collect();
    for (name, read, short) in &cases {
        let mut d = Decoder::new(short);
        assert!(!d.is_malformed());
        assert_eq!(read(&mut d), MISSING, "{name} from {} bytes", short.len());
        assert!(d.is_malformed(), "{name} from {} bytes", short.len());
        assert_eq!(
            d.view::<CopyCodec<u8>>().to_string(),
            MISSING,
            "{name}: read past a miss"
        );
        assert!(d.is_malformed(), "{name}: malformed stays set");
    }
    // The same reads from complete buffers are not missing: the test can tell the difference.
    for (name, read) in text_codecs {
        let complete = prefixed(3, b"abc");
        let mut d = Decoder::new(&complete);
        assert_ne!(read(&mut d), MISSING, "{name}");
        assert!(!d.is_malformed(), "{name}");
    }
    for (name, read) in fixed_size {
        let complete = bytes(&[7; 8]);
        let mut d = Decoder::new(&complete);
        assert_ne!(read(&mut d), MISSING, "{name}");
        assert!(!d.is_malformed(), "{name}");
    }
}

#[test]
fn lossy_bytes_replace_invalid_sequences() {
    let stage = Stage::new();
    let slot = lossy_slot_for_tests(b"ab\xffcd");
    let bytes = buffer(slot.encoded_len(&stage), |w| slot.write(w, &stage));
    let v = Decoder::new(&bytes).view::<LossyCodec>();
    assert_eq!(format!("{v}"), "ab\u{FFFD}cd");
}

#[test]
fn a_truncated_buffer_is_reported_not_read() {
    let stage = Stage::new();
    let slot = str_slot_for_tests("hello");
    let bytes = buffer(slot.encoded_len(&stage), |w| slot.write(w, &stage));
    let mut d = Decoder::new(&bytes[..10]);
    assert_eq!(format!("{}", d.view::<StrCodec>()), "<?>");
    assert!(d.is_malformed());
}

proptest! {
    // The fuzz target, as a property with a large case count (`cargo fuzz` needs a nightly
    // toolchain, which CI does not install): any bytes, read as any sequence of views, never
    // read out of bounds, panic or hang, and once the decoder is malformed it stays so.
    // `CopyCodec` views here use types valid for every bit pattern: a `char` or `bool` payload
    // is trusted to come from its call site's type (as the ring guarantees), not fuzzed.
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 16 } else { 20_000 }))]
    #[test]
    fn fuzz_decoder_with_arbitrary_bytes_and_view_sequences(
        raw in proptest::collection::vec(any::<u8>(), 0..512),
        plan in proptest::collection::vec(0u8..8, 0..24),
    ) {
        let bytes: Vec<MaybeUninit<u8>> = raw.iter().map(|&b| MaybeUninit::new(b)).collect();
        let mut d = Decoder::new(&bytes);
        let mut out = String::new();
        let mut was_malformed = false;
        for step in plan {
            let _ = match step {
                0 => write!(out, "{}", d.view::<StrCodec>()),
                1 => write!(out, "{:?}", d.view::<LossyCodec>()),
                2 => write!(out, "{}", d.view::<PreformattedCodec>()),
                3 => write!(out, "{:>9.3}", d.view::<CopyCodec<f64>>()),
                4 => write!(out, "{:?}", d.view::<CopyCodec<i16>>()),
                5 => write!(out, "{}", d.view::<CopyCodec<u128>>()),
                6 => write!(out, "{:x?}", d.view::<CopyCodec<[u32; 3]>>()),
                _ => write!(out, "{}", d.count()),
            };
            prop_assert!(!was_malformed || d.is_malformed(), "malformed state was cleared");
            was_malformed = d.is_malformed();
        }
    }
}

proptest! {
    /// The binary log's text taken straight off the record's bytes (`Decoder::plain_text`) is
    /// what `{}` of the view writes, between values of other codecs, invalid UTF-8 included.
    #[test]
    fn plain_text_off_the_args_is_what_display_writes(
        before in any::<u64>(),
        text in proptest::collection::vec(any::<u8>(), 0..80),
        after in ".{0,40}",
    ) {
        let stage = Stage::new();
        let s0 = copy_slot_for_tests(&before);
        // Written through the lossy slot (same wire as a `&str`'s) to get any bytes there.
        let s1 = lossy_slot_for_tests(&text);
        let s2 = str_slot_for_tests(&after);
        let len = s0.encoded_len(&stage) + s1.encoded_len(&stage) + s2.encoded_len(&stage);
        let bytes = buffer(len, |w| {
            s0.write(w, &stage);
            s1.write(w, &stage);
            s2.write(w, &stage);
        });
        let mut decoder = Decoder::new(&bytes);
        let _ = decoder.view::<CopyCodec<u64>>();
        let mut viewed = decoder.clone();
        prop_assert!(decoder.clone().plain_text::<LossyCodec>().is_none(), "lossy text is rendered");
        let plain = decoder.plain_text::<StrCodec>().unwrap();
        let expected = viewed.view::<StrCodec>().to_string();
        prop_assert_eq!(plain, expected);
        let last = decoder.plain_text::<StrCodec>().unwrap();
        prop_assert_eq!(last, after.as_str());
        prop_assert!(!decoder.is_malformed());
        prop_assert!(decoder.plain_text::<StrCodec>().is_none(), "nothing left");
    }
}
