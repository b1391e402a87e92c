//! The `latest` link of a [`RollingFile`](super::RollingFile): a name that always reaches the
//! file in use. A symbolic link where one can be made; on Windows without the privilege to make
//! one, a hard link: the same file under a second name, which reads the same while it is the
//! file in use, and is replaced by the next link as the sink moves on.

use std::io;
use std::path::{Path, PathBuf};

/// Points `link` at `target` atomically (a new link renamed over the old).
pub(super) fn point_link(link: &Path, target: &Path) -> io::Result<()> {
    // Relative when the file is in or below the link's directory, so the pair can be moved.
    let link_dir = link.parent().unwrap_or(Path::new(""));
    let pointee = match target.strip_prefix(link_dir) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_path_buf(),
        _ => std::path::absolute(target)?,
    };
    if std::fs::read_link(link).is_ok_and(|current| current == pointee) {
        return Ok(());
    }
    // Only a link, or nothing, is replaced: a file of the user's there (the log of a
    // `FileSink` the program used before, say) would be gone for good. On Windows the link
    // may be a hard link the sink made, a file like any other, so there it is replaced.
    #[cfg(unix)]
    if std::fs::symlink_metadata(link).is_ok_and(|meta| !meta.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "it exists and is not a symbolic link, so it is left alone",
        ));
    }
    let mut temp = link.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    let _ = std::fs::remove_file(&temp);
    if let Some(parent) = link.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    make_link(&pointee, target, &temp)?;
    std::fs::rename(&temp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(unix)]
fn make_link(pointee: &Path, _target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(pointee, link)
}

/// A symbolic link, or a hard link when the process may not make symbolic links (it needs the
/// privilege or Developer Mode) or the one made does not lead to the file (under Wine).
#[cfg(windows)]
fn make_link(pointee: &Path, target: &Path, link: &Path) -> io::Result<()> {
    use windows_sys::Win32::Foundation::ERROR_PRIVILEGE_NOT_HELD;
    match std::os::windows::fs::symlink_file(pointee, link) {
        Ok(()) if std::fs::metadata(link).is_ok() => return Ok(()),
        // Whatever was made (Wine's call succeeds and makes nothing), the name goes to the
        // hard link.
        Ok(()) => {
            let _ = std::fs::remove_file(link);
        }
        Err(e) if e.raw_os_error() == Some(ERROR_PRIVILEGE_NOT_HELD as i32) => {}
        Err(e) => return Err(e),
    }
    std::fs::hard_link(target, link)
}
