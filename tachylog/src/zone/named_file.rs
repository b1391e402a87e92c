//! Reading a time-zone file that the environment or the system names (`TZ`, `TZDIR`,
//! `/etc/localtime`): a logger runs in every process of a fleet, and such a name may point
//! anywhere. `TZ=/dev/zero` must not exhaust memory, a FIFO must not block the program's start,
//! and a file of gigabytes is not a time zone.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The contents of the regular file at `path`, if it holds at most `limit` bytes. Opened
/// without blocking (a FIFO with no writer would wait forever), checked to be a regular file,
/// then read no further than `limit` (a file may grow between the check and the read).
pub(crate) fn read_regular_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {limit} bytes"),
        )
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    File::take(file, limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zone");
        std::fs::write(&path, b"TZif2 and the rest").unwrap();
        assert_eq!(read_regular_file(&path, 18).unwrap(), b"TZif2 and the rest");
        let error = read_regular_file(&path, 17).unwrap_err();
        assert_eq!(error.to_string(), "larger than 17 bytes");
    }

    #[cfg(unix)]
    #[test]
    fn devices_directories_and_fifos_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for path in [Path::new("/dev/zero"), dir.path(), &fifo] {
            let error = read_regular_file(path, 1 << 20).unwrap_err();
            assert_eq!(
                error.to_string(),
                "not a regular file",
                "{}",
                path.display()
            );
        }
    }
}
