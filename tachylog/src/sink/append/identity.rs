//! What identifies a file, so that [`AppendFile`](super::AppendFile) notices when its path names
//! another file than the one it has open (deleted, moved away by a rotation tool, replaced).
//!
//! Unix: device and inode number. Windows: the volume serial number and the 64-bit file index
//! of `GetFileInformationByHandle`, which NTFS keeps unique per volume for a file's life (ReFS
//! has 128-bit ids, of which this is the low half: a collision would at worst delay noticing a
//! replaced file until the next `reopen`).

use std::fs::File;
use std::io;
use std::path::Path;

/// A file's identity on its file system; equal for two open handles of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileId {
    volume: u64,
    index: u64,
}

/// The identity of the open `file`.
#[cfg(unix)]
pub(super) fn of_file(file: &File) -> io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    Ok(FileId {
        volume: meta.dev(),
        index: meta.ino(),
    })
}

/// The identity of the file `path` names now (following symbolic links).
#[cfg(unix)]
pub(super) fn of_path(path: &Path) -> io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok(FileId {
        volume: meta.dev(),
        index: meta.ino(),
    })
}

/// Whether the open `file` was deleted while its name still shows: never on Unix, where a
/// deleted file's name goes at once.
#[cfg(unix)]
pub(super) fn is_delete_pending(_file: &File) -> bool {
    false
}

#[cfg(windows)]
pub(super) fn of_file(file: &File) -> io::Result<FileId> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    };
    // SAFETY: all-zero is a valid value of this plain C struct of integers.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is `file`'s, open for the call; `info` is a valid out-pointer.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FileId {
        volume: u64::from(info.dwVolumeSerialNumber),
        index: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    })
}

/// Opens `path` with no access rights (enough to ask for its identity, and allowed whatever
/// the sharing mode of other handles) to read its identity.
#[cfg(windows)]
pub(super) fn of_path(path: &Path) -> io::Result<FileId> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS;
    let file = std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    of_file(&file)
}

/// Whether the open `file` was deleted while open. Windows before 10 1903 (and Server 2019)
/// keeps the name of a file deleted while open until its last handle closes, and opening it
/// fails with "access denied" meanwhile, so the path alone cannot tell; later versions release
/// the name at once. (Wine keeps the name and reports nothing pending: a file deleted there
/// while open is not noticed.)
#[cfg(windows)]
pub(super) fn is_delete_pending(file: &File) -> bool {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        FileStandardInfo, GetFileInformationByHandleEx, FILE_STANDARD_INFO,
    };
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut info: FILE_STANDARD_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is `file`'s, open for the call; `info` is a valid out-pointer of the
    // size passed, the structure `FileStandardInfo` asks for.
    let ok = unsafe {
        GetFileInformationByHandleEx(
            file.as_raw_handle(),
            FileStandardInfo,
            (&mut info as *mut FILE_STANDARD_INFO).cast(),
            std::mem::size_of::<FILE_STANDARD_INFO>() as u32,
        )
    };
    ok != 0 && info.DeletePending
}
