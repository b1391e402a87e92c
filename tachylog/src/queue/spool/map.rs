//! A file mapped shared into memory, its pages allocated and touched when it is made: stores
//! to it are in the page cache the moment they retire, so they outlive the process however it
//! dies (not the machine: that is what the file's directory on tmpfs says).

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::ptr::NonNull;

/// A shared mapping of a whole file, unmapped on drop (the file stays).
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain shared memory; who writes what is the owner's protocol (the ring's, or the
// state's single writer).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Sizes `file` (just created, empty) to `len` bytes, allocated now so that a full file
    /// system is an error here rather than a `SIGBUS` on a later store, and maps it with every
    /// page touched, so the first lap of a ring takes no page fault.
    pub(crate) fn create(file: &File, len: usize) -> io::Result<Mapping> {
        allocate(file, len)?;
        // SAFETY: a fresh shared mapping of a file of `len` bytes, which we own; the result is
        // checked.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | populate(),
                file.as_raw_fd(),
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(raw as *mut u8).ok_or_else(|| io::Error::other("mmap gave null"))?;
        for page in (0..len).step_by(super::layout::PAGE) {
            // SAFETY: in bounds of the mapping just made; volatile, so the touch is kept.
            unsafe { std::ptr::write_volatile(ptr.as_ptr().add(page), 0) };
        }
        Ok(Mapping { ptr, len })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Stores `bytes` at `offset`.
    pub(crate) fn write(&self, offset: usize, bytes: &[u8]) {
        assert!(
            offset + bytes.len() <= self.len,
            "spool write out of bounds"
        );
        // SAFETY: in bounds (checked); the mapping's writer is the only one writing this range.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr().add(offset), bytes.len())
        };
    }

    /// The `u64` at `offset` (8-aligned), as an atomic.
    pub(crate) fn atomic_u64(&self, offset: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(
            offset % 8 == 0 && offset + 8 <= self.len,
            "misplaced spool word"
        );
        // SAFETY: aligned, in bounds, and the mapping lives as long as `self`; the word is only
        // ever accessed atomically.
        unsafe { &*(self.ptr().add(offset) as *const std::sync::atomic::AtomicU64) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `create`, unmapped once; nothing borrowed from it lives
        // past its owner.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

#[cfg(target_os = "linux")]
fn populate() -> libc::c_int {
    libc::MAP_POPULATE
}

#[cfg(not(target_os = "linux"))]
fn populate() -> libc::c_int {
    0
}

#[cfg(target_os = "linux")]
fn allocate(file: &File, len: usize) -> io::Result<()> {
    // SAFETY: a valid descriptor and a range inside `off_t`.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn allocate(file: &File, len: usize) -> io::Result<()> {
    file.set_len(len as u64)
}
