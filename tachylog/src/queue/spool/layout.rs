//! Where everything sits in a spool directory, shared by the writing process and by recovery
//! (possibly another build, see `SPOOL.md`). Every number in the files is little-endian with an
//! explicit width, except the ring's own positions, which are the writer's `usize` (its width
//! is recorded).

/// A process's directory in the spool: `<pid>.<start time in ns>`; while it is made (before its
/// lock is held), the same with this suffix.
pub(crate) const BUILDING: &str = ".new";
/// The file a process holds its `fcntl` lock on while it lives.
pub(crate) const LOCK: &str = "lock";
/// The mapped state: clock, committed cut, file offsets.
pub(crate) const STATE: &str = "state";
/// Append-only definitions of call sites and argument lists.
pub(crate) const DEFS: &str = "defs";
/// Ring files: `ring-<serial>`.
pub(crate) const RING_PREFIX: &str = "ring-";
/// The bodies of records too large for their ring: `large-<ring serial>-<frame position>`
/// (`large-<ring serial>.tmp` while the frame has no place yet).
pub(crate) const LARGE_PREFIX: &str = "large-";

/// The file name of the large record whose frame is at `position` in ring `serial`.
pub(crate) fn large_name(serial: u64, position: u64) -> String {
    format!("{LARGE_PREFIX}{serial}-{position}")
}

/// The page everything is aligned to.
pub(crate) const PAGE: usize = 4096;

/// `state`: magic, then fields at fixed offsets.
pub(crate) const STATE_MAGIC: [u8; 8] = *b"TLSPOOL2";
pub(crate) const STATE_USIZE_BYTES: usize = 8;
/// The last committed cut's sequence number (`u64`, 0: none).
pub(crate) const STATE_CURRENT: usize = 16;
/// The clock, under a sequence lock: version (odd while written), base ticks, base wall
/// nanoseconds, nanoseconds per tick (`f64` bits).
pub(crate) const STATE_CLOCK: usize = 64;
/// Two ledger slots, the one of cut `S` at `S % 2`: sequence number, file count, then per file
/// device, inode and length after the cut's write.
pub(crate) const STATE_SLOTS: usize = 256;
/// Files a ledger slot has room for.
pub(crate) const MAX_FILES: usize = 64;
pub(crate) const SLOT_BYTES: usize = 16 + MAX_FILES * 24;
/// The state file's size.
pub(crate) const STATE_BYTES: usize = 2 * PAGE;

/// Ring files: the ring's own control block at offset 0 (head and tail at the offsets
/// recorded below), this header at [`RING_HEADER`], the storage from [`PAGE`].
pub(crate) const RING_HEADER: usize = 2048;
pub(crate) const RING_MAGIC: [u8; 8] = *b"TLRING01";
/// Offsets inside the ring header.
pub(crate) const RH_USIZE_BYTES: usize = 8;
pub(crate) const RH_CAPACITY: usize = 16;
pub(crate) const RH_START: usize = 24;
pub(crate) const RH_HEAD_OFFSET: usize = 32;
pub(crate) const RH_TAIL_OFFSET: usize = 40;
pub(crate) const RH_TID: usize = 48;
pub(crate) const RH_SERIAL: usize = 56;
/// Two committed-position slots: (cut sequence number `u64`, position `u64`) each.
pub(crate) const RH_COMMITTED: usize = 64;
/// The thread's name: length (`u16`), then up to [`MAX_NAME`] bytes.
pub(crate) const RH_NAME: usize = 96;
pub(crate) const MAX_NAME: usize = 1024;

/// `defs` entries: `u32` payload length, `u32` CRC-32 of the payload, then the payload, whose
/// first byte is one of these.
pub(crate) const DEF_SITE: u8 = 1;
pub(crate) const DEF_ARGS: u8 = 2;
