//! Text lines of call-site records, laid out once per (thread, call site).
//!
//! In a call-site record, every piece of the line but the date-time and the message depends
//! only on the thread and the call site: the level is the site's, and the thread and site runs
//! of [`super::segments`] are fixed for the pair. So the first record of a pair renders those
//! pieces into one [`LinePlan`]: the constant text between the date-time and the message, and
//! after it, as one or two copies. The default line is then the date-time, one copy, the
//! message, one copy. Against a segment-by-segment layout this saves about 10% of the back
//! end's samples (`perf`, `tachylog-bench --only tachylog,backend_iteration`).
//!
//! Memory: one short plan per (thread, site) pair that logged; the cache starts over past
//! [`MAX_PLANS`], so many threads times many sites cannot grow it without bound. A plan is
//! keyed by the thread's OS id and checked against its name, like a thread run (ids are
//! reused); the last pair looked up is recognised by the thread's registration serial, which
//! is never reused, so the common case (a run of records from one thread and site) compares
//! two integers and no name.
//!
//! The back end keys its plans by the call site's address; a reader of the binary log
//! ([`crate::read::Renderer`]) by the serial number of the site as a block defined it, since
//! the address of a block's site may be reused by a later block's.

use super::segments::{self, AddressHasher, Segment};
use super::view::{Message, RecordView};
use crate::codec::short_copy::append_bytes;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Plans kept before the cache starts over.
const MAX_PLANS: usize = 16_384;

/// One step of a line: constant text, or one of the two parts that change per record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// `text[start..end]` of the plan.
    Text {
        start: u32,
        end: u32,
    },
    Time,
    Message,
}

/// A (thread, site) pair's line with the date-time and the message left out, newline included.
pub(crate) struct LinePlan {
    thread_name: Box<str>,
    steps: Box<[Step]>,
    text: Box<[u8]>,
    /// Where the date-time and the message go in `text` when the line is `text[..time]`, the
    /// date-time, `text[time..message]`, the message, `text[message..]`: the default pattern's
    /// layout and most others. The formatter then writes the line in straight-line code, not
    /// step by step (the step loop's dispatch and slicing cost ~8% of the instructions of
    /// `tachylog-bench --only tachylog,backend_static`).
    time_then_message: Option<(u32, u32)>,
    /// The site's own message text needs no escaping ([`super::escape::site_text_is_clean`]).
    site_text_clean: bool,
}

/// The texts around the date-time and the message of a [`LinePlan`] laid out as
/// `before {time} between {message} after`.
pub(crate) struct TimeThenMessage<'a> {
    pub(crate) before: &'a [u8],
    pub(crate) between: &'a [u8],
    pub(crate) after: &'a [u8],
}

impl LinePlan {
    /// The texts around the date-time and the message, if the line has one of each, the
    /// date-time first.
    #[inline]
    pub(crate) fn time_then_message(&self) -> Option<TimeThenMessage<'_>> {
        let (time, message) = self.time_then_message?;
        let (before, rest) = self.text.split_at(time as usize);
        let (between, after) = rest.split_at((message - time) as usize);
        Some(TimeThenMessage {
            before,
            between,
            after,
        })
    }

    /// Whether the site's literal message text and specs need no escaping (for a message of
    /// escape-free values, the scan is skipped).
    #[inline]
    pub(crate) fn site_text_clean(&self) -> bool {
        self.site_text_clean
    }

    /// The steps, with the text they copy.
    pub(crate) fn steps(&self) -> impl Iterator<Item = (Step, &[u8])> {
        self.steps.iter().map(|&step| match step {
            Step::Text { start, end } => (step, &self.text[start as usize..end as usize]),
            other => (other, &[][..]),
        })
    }
}

/// The plans of the pairs seen so far.
#[derive(Default)]
pub(crate) struct SiteLines {
    index: HashMap<(u64, usize), usize, BuildHasherDefault<AddressHasher>>,
    plans: Vec<LinePlan>,
    /// The pairs looked up last, one per slot of the site's hash: consecutive records mostly
    /// share thread and site, and a server's few busiest sites take turns (with the last pair
    /// only, the map's lookups at the changes of site cost 10 instructions a record more:
    /// callgrind, `tachylog cat` of `tachylog-bench`'s `throughput_mix_binary` log).
    recent: [Option<LastPair>; RECENT],
}

/// Slots of [`SiteLines::recent`].
const RECENT: usize = 8;

/// A (thread, site) pair looked up lately, by the thread's registration serial: a hit needs
/// neither the hash map nor a compare of the thread's name (that compare costs 4% of the back
/// end's samples in `backend_iteration`).
#[derive(Clone, Copy)]
struct LastPair {
    serial: u64,
    site: usize,
    plan: usize,
}

impl SiteLines {
    /// The plan of `record`'s (thread, site) pair, rendered from `segments` if it is new.
    /// `site` is the record's call site address.
    #[inline]
    pub(crate) fn plan(
        &mut self,
        segments: &mut [Segment],
        record: &RecordView<'_>,
        site: usize,
        escape: bool,
    ) -> &LinePlan {
        // A site's address has its low bits zero: the hash's high bits pick the slot.
        let slot = (site as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) as usize >> 61 & (RECENT - 1);
        if let Some(last) = self.recent[slot] {
            // The same registration of the same thread has the same name: no string compare.
            if last.serial == record.thread.serial && last.site == site {
                return &self.plans[last.plan];
            }
        }
        let key = (record.thread.id, site);
        let i = match self.index.get(&key).copied() {
            Some(i) if *self.plans[i].thread_name == *record.thread.name => i,
            _ => self.render(key, segments, record, escape),
        };
        self.recent[slot] = Some(LastPair {
            serial: record.thread.serial,
            site,
            plan: i,
        });
        &self.plans[i]
    }

    #[cold]
    fn render(
        &mut self,
        key: (u64, usize),
        segments: &mut [Segment],
        record: &RecordView<'_>,
        escape: bool,
    ) -> usize {
        if self.plans.len() >= MAX_PLANS {
            self.index.clear();
            self.plans.clear();
            self.recent = [None; RECENT];
        }
        let mut text = Vec::new();
        let mut steps = Vec::new();
        let mut start = 0;
        let close =
            |text: &Vec<u8>, steps: &mut Vec<Step>, start: &mut usize, then: Option<Step>| {
                if text.len() > *start {
                    steps.push(Step::Text {
                        start: *start as u32,
                        end: text.len() as u32,
                    });
                }
                *start = text.len();
                steps.extend(then);
            };
        for segment in segments.iter_mut() {
            match segment {
                Segment::Time => close(&text, &mut steps, &mut start, Some(Step::Time)),
                Segment::Message => close(&text, &mut steps, &mut start, Some(Step::Message)),
                Segment::Text(t) => append_bytes(&mut text, t.as_bytes()),
                Segment::Level => append_bytes(&mut text, record.level.padded().as_bytes()),
                Segment::Thread(run) => segments::write_run(run, record, escape, &mut text),
                Segment::Site(run) => segments::write_run(run, record, escape, &mut text),
            }
        }
        // The line's newline is part of its constant tail: one copy less per record.
        text.push(b'\n');
        close(&text, &mut steps, &mut start, None);
        let time_then_message = time_then_message(&steps);
        let plan = LinePlan {
            thread_name: record.thread.name.as_str().into(),
            steps: steps.into(),
            text: text.into(),
            time_then_message,
            site_text_clean: match &record.message {
                Message::Site(message) => super::escape::site_text_is_clean(message.site),
                _ => false,
            },
        };
        match self.index.get(&key) {
            Some(&i) => {
                self.plans[i] = plan;
                i
            }
            None => {
                self.index.insert(key, self.plans.len());
                self.plans.push(plan);
                self.plans.len() - 1
            }
        }
    }
}

/// Where the date-time and the message fall in the plan's text if `steps` are (text), time,
/// (text), message, (text): the texts are consecutive ranges of one buffer, so two offsets say
/// it all.
fn time_then_message(steps: &[Step]) -> Option<(u32, u32)> {
    let mut time = None;
    let mut message = None;
    let mut end = 0;
    for step in steps {
        match *step {
            Step::Text { end: text_end, .. } => end = text_end,
            Step::Time if time.is_none() && message.is_none() => time = Some(end),
            Step::Message if time.is_some() && message.is_none() => message = Some(end),
            // A second date-time or message, or the message first: the step-by-step path.
            Step::Time | Step::Message => return None,
        }
    }
    Some((time?, message?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::pattern::{Pattern, DEFAULT_PATTERN};
    use crate::format::view::Message;
    use crate::queue::registry::ThreadInfo;
    use crate::Level;

    fn record<'a>(thread: &'a ThreadInfo, level: Level) -> RecordView<'a> {
        RecordView {
            unix_nanos: 0,
            level,
            target: "app::net",
            file: "src/net.rs",
            line: 20,
            thread,
            message: Message::Text("m"),
            static_metadata: true,
            backtrace: false,
            recovered: false,
            trace: None,
        }
    }

    /// The plan as readable steps: text as a string, `{time}` and `{message}` as such.
    fn layout(
        lines: &mut SiteLines,
        pattern: &str,
        record: &RecordView<'_>,
        site: usize,
    ) -> Vec<String> {
        let mut segments = segments::compile(Pattern::parse(pattern).unwrap().pieces());
        lines
            .plan(&mut segments, record, site, true)
            .steps()
            .map(|(step, text)| match step {
                Step::Text { .. } => String::from_utf8(text.to_vec()).unwrap(),
                Step::Time => "{time}".into(),
                Step::Message => "{message}".into(),
            })
            .collect()
    }

    #[test]
    fn the_default_line_is_two_copies_around_the_time_and_the_message() {
        let thread = ThreadInfo::new("main".into(), 7);
        let mut lines = SiteLines::default();
        assert_eq!(
            layout(
                &mut lines,
                DEFAULT_PATTERN,
                &record(&thread, Level::Warn),
                1
            ),
            [
                "{time}",
                " WARN  [main/7] app::net: ",
                "{message}",
                " (src/net.rs:20)\n"
            ]
        );
        assert_eq!(
            layout(&mut lines, "{message}", &record(&thread, Level::Info), 2),
            ["{message}", "\n"]
        );
        assert_eq!(
            layout(
                &mut lines,
                "<{level}|{message}|{time}>",
                &record(&thread, Level::Info),
                3
            ),
            ["<INFO |", "{message}", "|", "{time}", ">\n"]
        );
    }

    #[test]
    fn one_time_then_one_message_gets_the_straight_line_layout() {
        let thread = ThreadInfo::new("main".into(), 7);
        let mut lines = SiteLines::default();
        let texts = |pattern: &str, site: usize, lines: &mut SiteLines| {
            let mut segments = segments::compile(Pattern::parse(pattern).unwrap().pieces());
            let plan = lines.plan(&mut segments, &record(&thread, Level::Warn), site, true);
            plan.time_then_message().map(|l| {
                [l.before, l.between, l.after].map(|t| String::from_utf8(t.to_vec()).unwrap())
            })
        };
        assert_eq!(
            texts(DEFAULT_PATTERN, 1, &mut lines),
            Some([
                "".into(),
                " WARN  [main/7] app::net: ".into(),
                " (src/net.rs:20)\n".into()
            ])
        );
        assert_eq!(
            texts("[{time}]{message}", 2, &mut lines),
            Some(["[".into(), "]".into(), "\n".into()])
        );
        assert_eq!(
            texts("{level} {time}{message}!", 3, &mut lines),
            Some(["WARN  ".into(), "".into(), "!\n".into()])
        );
        // The message first, no date-time, or either twice: the step-by-step layout.
        for (site, pattern) in [
            (4, "{message} {time}"),
            (5, "{message}"),
            (6, "{time} {message} {time}"),
            (7, "{time}"),
        ] {
            assert_eq!(texts(pattern, site, &mut lines), None, "{pattern}");
        }
    }

    #[test]
    fn a_reused_thread_id_with_another_name_is_laid_out_again() {
        let first = ThreadInfo::new("first".into(), 42);
        let second = ThreadInfo::new("second".into(), 42);
        let mut lines = SiteLines::default();
        let pattern = "{thread} {message}";
        assert_eq!(
            layout(&mut lines, pattern, &record(&first, Level::Info), 1)[0],
            "first "
        );
        assert_eq!(
            layout(&mut lines, pattern, &record(&second, Level::Info), 1)[0],
            "second "
        );
        assert_eq!(
            layout(&mut lines, pattern, &record(&first, Level::Info), 1)[0],
            "first "
        );
        assert_eq!(
            lines.plans.len(),
            1,
            "the pair's plan was replaced, not added"
        );
    }

    #[test]
    fn the_cache_starts_over_when_full() {
        let thread = ThreadInfo::new("t".into(), 1);
        let mut lines = SiteLines::default();
        for site in 0..MAX_PLANS + 10 {
            layout(
                &mut lines,
                DEFAULT_PATTERN,
                &record(&thread, Level::Info),
                site,
            );
        }
        assert!(lines.plans.len() <= MAX_PLANS);
        assert_eq!(lines.plans.len(), lines.index.len());
    }

    #[test]
    fn recent_pairs_forget_plans_the_cache_dropped() {
        let thread = ThreadInfo::new("t".into(), 1);
        let level = |site: usize| [Level::Info, Level::Warn, Level::Error][site % 3];
        let mut lines = SiteLines::default();
        let expected = |site: usize| vec![format!("{} ", level(site).padded())];
        // The sites just before the start-over, looked up again right after it: their recent
        // pairs named plans that are gone.
        for site in (0..=MAX_PLANS).chain((MAX_PLANS - 16..MAX_PLANS).rev()) {
            let pattern = "{level} {message}";
            let steps = layout(&mut lines, pattern, &record(&thread, level(site)), site);
            assert_eq!(steps[..1], expected(site)[..], "site {site}");
        }
    }
}
