//! What a log call does for the spool (see `queue::spool` and its `SPOOL.md`), all of it on
//! cold paths:
//! - a call site's first record: before it is published, the site and its argument list are
//!   defined in the spool, if one is installed, so that a process that recovers the spool can
//!   read the record without this program's code;
//! - a record too large for a spooled ring: its body is saved in the spool before its frame
//!   is published, so that it outlives the process like the ring's own bytes.
//!
//! The log call compares the site's armed argument list with its own (a load and a compare
//! beside its level's): only a site's first call, and the first call of each other argument
//! list of a site in a generic function, takes the cold path.

use crate::record::{Decode, Site};
use std::sync::atomic::Ordering;

/// Every (site, argument list) pair armed so far in this process, with what writes its
/// argument list's shape: a spool installed later defines them all before any record of its
/// own (see [`define_armed`]).
#[cfg(all(unix, not(loom)))]
static ARMED: std::sync::LazyLock<std::sync::Mutex<Armed>> =
    std::sync::LazyLock::new(Default::default);

#[cfg(all(unix, not(loom)))]
#[derive(Default)]
struct Armed {
    /// The pairs by address, for the lookup each cold call makes.
    seen: std::collections::HashSet<(usize, usize)>,
    /// Each pair, with what writes its argument list's shape.
    pairs: Vec<(&'static Site, &'static Decode, Describe)>,
}

/// What writes an argument list's shape (`codec/SHAPES.md`).
#[cfg(all(unix, not(loom)))]
type Describe = fn() -> Vec<u8>;

/// Arms `site` for `decode`, first defining both (`describe` writes the argument list's shape)
/// in the spool if one is installed; `false` when records of the site's level are not wanted
/// now (the site then stays as it was, to be tried again).
///
/// A site in a generic function is logged with several argument lists: each is defined before
/// its first record. While their calls alternate, each call of a list other than the last
/// armed one comes here (a lock and a lookup, with a spool).
#[cold]
#[inline(never)]
pub(crate) fn arm(site: &'static Site, decode: &'static Decode, describe: fn() -> Vec<u8>) -> bool {
    if !super::gate::enabled(site.level) {
        return false;
    }
    #[cfg(all(unix, not(loom)))]
    {
        let mut armed = crate::queue::sync::lock(&ARMED);
        let pair = (
            site as *const Site as usize,
            decode as *const Decode as usize,
        );
        if armed.seen.insert(pair) {
            armed.pairs.push((site, decode, describe));
        }
        let key = match crate::queue::spool::active() {
            Some(spool) => {
                define(&spool, site, decode, describe);
                decode as *const Decode as usize
            }
            None => Site::ANY_ARGUMENTS,
        };
        // Release: a thread that sees the site armed publishes its records after the
        // definitions reached the file.
        site.armed.store(key, Ordering::Release);
    }
    #[cfg(not(all(unix, not(loom))))]
    {
        let _ = (decode, describe);
        site.armed.store(Site::ANY_ARGUMENTS, Ordering::Release);
    }
    true
}

/// Defines every site and argument list armed so far in `spool`, just installed, and makes
/// each site arm again before its next record (so that a list first logged after this is
/// defined too). Called by `init` before the logger's first record.
#[cfg(all(unix, not(loom)))]
pub(crate) fn define_armed(spool: &crate::queue::spool::Spool) {
    let armed = crate::queue::sync::lock(&ARMED);
    for &(site, decode, describe) in &armed.pairs {
        define(spool, site, decode, describe);
        site.armed.store(0, Ordering::Release);
    }
}

/// Appends the definitions of `site` and `decode` to `spool`, each once per spool.
#[cfg(all(unix, not(loom)))]
fn define(
    spool: &crate::queue::spool::Spool,
    site: &'static Site,
    decode: &'static Decode,
    describe: fn() -> Vec<u8>,
) {
    let site_key = site as *const Site as u64;
    let decode_key = decode as *const Decode as u64;
    let defined = spool
        .define(site_key, || site_definition(site))
        .and_then(|()| spool.define(decode_key, || args_definition(decode, describe)));
    if let Err(e) = defined {
        crate::queue::spool::warn(format!(
            "spool {}: could not define the call site at {}:{}: {e}; its records are not \
             protected against SIGKILL",
            spool.dir().display(),
            site.file,
            site.line
        ));
    }
}

/// `DEF_SITE`: the site's address (the key records use), then its static parts.
#[cfg(all(unix, not(loom)))]
fn site_definition(site: &'static Site) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(crate::queue::spool::layout::DEF_SITE);
    out.extend_from_slice(&(site as *const Site as usize as u64).to_le_bytes());
    out.push(site.level as u8);
    put_str(&mut out, site.target);
    put_str(&mut out, site.file);
    out.extend_from_slice(&site.line.to_le_bytes());
    put_str(&mut out, site.format);
    out.extend_from_slice(&(site.message.len() as u32).to_le_bytes());
    // The literal pieces; the specs are read again from the format string.
    for placeholder in site.message {
        put_str(&mut out, placeholder.literal);
    }
    put_str(&mut out, site.tail);
    out.extend_from_slice(&(site.fields.len() as u32).to_le_bytes());
    for key in site.fields {
        put_str(&mut out, key);
    }
    out
}

/// `DEF_ARGS`: the argument list's address, then its shape (`codec/SHAPES.md`).
#[cfg(all(unix, not(loom)))]
fn args_definition(decode: &'static Decode, describe: fn() -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(crate::queue::spool::layout::DEF_ARGS);
    out.extend_from_slice(&(decode as *const Decode as usize as u64).to_le_bytes());
    out.extend_from_slice(&describe());
    out
}

/// A `u32` byte length, then the bytes.
#[cfg(all(unix, not(loom)))]
fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// A record too large for its thread's spooled ring, its body saved in the spool under a
/// temporary name until its frame has a position in the ring.
pub(crate) struct LargeRecord {
    #[cfg(all(unix, not(loom)))]
    queue: std::sync::Arc<crate::queue::registry::ThreadQueue>,
    #[cfg(all(unix, not(loom)))]
    staged: crate::queue::spool::StagedRecord,
}

impl LargeRecord {
    /// Saves `body` when `queue`'s ring is spooled (`None` otherwise). A failure is reported by
    /// the back end and leaves the record unprotected: recovery names it as lost.
    pub(crate) fn stage(
        queue: &std::sync::Arc<crate::queue::registry::ThreadQueue>,
        body: &[u8],
    ) -> Option<LargeRecord> {
        #[cfg(all(unix, not(loom)))]
        {
            let ring = queue.rings.spool_file()?;
            match ring.stage_large(body) {
                Ok(staged) => Some(LargeRecord {
                    queue: queue.clone(),
                    staged,
                }),
                Err(e) => {
                    large_record_warning(ring, e);
                    None
                }
            }
        }
        #[cfg(not(all(unix, not(loom))))]
        {
            let _ = (queue, body);
            None
        }
    }

    /// Names the saved body after its frame's `position`, stamped `ticks`: called between
    /// reserving the frame and publishing it.
    pub(crate) fn place(self, position: usize, ticks: u64) {
        #[cfg(all(unix, not(loom)))]
        if let Some(ring) = self.queue.rings.spool_file() {
            if let Err(e) = ring.place_large(self.staged, position, ticks) {
                large_record_warning(ring, e);
            }
        }
        #[cfg(not(all(unix, not(loom))))]
        let _ = (position, ticks);
    }
}

#[cfg(all(unix, not(loom)))]
fn large_record_warning(ring: &crate::queue::spool::RingFile, e: std::io::Error) {
    crate::queue::spool::warn(format!(
        "spool {}: a record too large for its thread's ring could not be saved there: {e}; it \
         is not protected against SIGKILL",
        ring.dir().display()
    ));
}
