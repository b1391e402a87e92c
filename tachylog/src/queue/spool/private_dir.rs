//! A spool directory opened so that nobody but this user can steer what is read from it or
//! written to it, the way `ssh` treats `~/.ssh` and `sudo` its files: the directory must be a
//! real directory (not a symbolic link), owned by the effective user and writable by no one
//! else; everything in it is reached through the directory's descriptor (`openat` and
//! friends), never by a path that a rename could point elsewhere; a file is opened without
//! following symbolic links, must be a regular file owned by the effective user, and may not be
//! larger than what the reader expects, so a FIFO, a device or a link to `/dev/zero` is refused
//! before a byte is read.

use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A directory checked as the module documentation says, held open.
pub(crate) struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl PrivateDir {
    /// Opens the directory `path`; with `create`, makes it first (mode `0700`, missing parents
    /// too) when it is absent. Fails, naming the cause, on anything the module documentation
    /// rules out.
    pub(crate) fn open_root(path: &Path, create: bool) -> io::Result<PrivateDir> {
        if create {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)?;
        }
        let fd = rustix::fs::open(path, dir_flags(), Mode::empty())
            .map_err(|e| refused(path, e.into()))?;
        PrivateDir::checked(fd, path.to_path_buf())
    }

    /// Makes the directory `name` in this one (mode `0700`) and opens it.
    pub(crate) fn create_dir(&self, name: &str) -> io::Result<PrivateDir> {
        rustix::fs::mkdirat(&self.fd, name, Mode::RWXU)?;
        self.open_dir(OsStr::new(name))
    }

    /// Opens the directory `name` in this one, checked like the root.
    pub(crate) fn open_dir(&self, name: &OsStr) -> io::Result<PrivateDir> {
        let path = self.path.join(name);
        let fd = rustix::fs::openat(&self.fd, name.as_bytes(), dir_flags(), Mode::empty())
            .map_err(|e| refused(&path, e.into()))?;
        PrivateDir::checked(fd, path)
    }

    /// Creates the file `name` (mode `0600`), which must not exist, for reading and writing.
    pub(crate) fn create_file(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        Ok(File::from(fd))
    }

    /// Creates or empties the file `name` (mode `0600`) for writing; a symbolic link there is
    /// refused.
    pub(crate) fn replace_file(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )?;
        let file = File::from(fd);
        check_file(&file, &self.path.join(name), u64::MAX)?;
        Ok(file)
    }

    /// Opens the file `name` for appending (and reading), creating it (mode `0600`) if it is
    /// missing: a regular file owned by the effective user, never through a symbolic link.
    pub(crate) fn open_or_create_file(&self, name: &str) -> io::Result<File> {
        self.open_or_create(name, OFlags::APPEND)
    }

    /// [`PrivateDir::open_or_create_file`] for reading and writing at any offset (a positioned
    /// write to a file opened for appending would append on Linux).
    pub(crate) fn open_or_create_in_place(&self, name: &str) -> io::Result<File> {
        self.open_or_create(name, OFlags::empty())
    }

    fn open_or_create(&self, name: &str, mode: OFlags) -> io::Result<File> {
        let flags = OFlags::RDWR
            | mode
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let path = self.path.join(name);
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::RUSR | Mode::WUSR)
            .map_err(|e| refused(&path, e.into()))?;
        let file = File::from(fd);
        check_file(&file, &path, u64::MAX)?;
        Ok(file)
    }

    /// Opens the directory `name` in this one, making it first (mode `0700`) if it is missing.
    pub(crate) fn open_or_create_dir(&self, name: &str) -> io::Result<PrivateDir> {
        match rustix::fs::mkdirat(&self.fd, name, Mode::RWXU) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => self.open_dir(OsStr::new(name)),
            Err(e) => Err(refused(&self.path.join(name), e.into())),
        }
    }

    /// Opens the file `name` for reading (and writing, with `write`): a regular file owned by
    /// the effective user, of at most `max_len` bytes.
    pub(crate) fn open_file(&self, name: &str, write: bool, max_len: u64) -> io::Result<File> {
        let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
        // Non-blocking: opening a FIFO for reading would wait for a writer.
        let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let path = self.path.join(name);
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|e| refused(&path, e.into()))?;
        let file = File::from(fd);
        check_file(&file, &path, max_len)?;
        Ok(file)
    }

    /// The names of the entries, but `.` and `..`.
    pub(crate) fn entries(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(&name).to_os_string());
            }
        }
        Ok(names)
    }

    /// Removes the file (or symbolic link, or other non-directory) `name`.
    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.fd,
            name.as_bytes(),
            AtFlags::empty(),
        )?)
    }

    /// Removes the empty directory `name`.
    pub(crate) fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.fd,
            name.as_bytes(),
            AtFlags::REMOVEDIR,
        )?)
    }

    /// Renames the entry `from` to `to`, both in this directory.
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(
            &self.fd,
            from.as_bytes(),
            &self.fd,
            to.as_bytes(),
        )?)
    }

    /// Where it was opened, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn checked(fd: OwnedFd, path: PathBuf) -> io::Result<PrivateDir> {
        let meta = File::from(fd.try_clone()?).metadata()?;
        if !meta.is_dir() {
            return Err(untrusted(&path, "is not a directory".into()));
        }
        check_owner(&meta, &path)?;
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 {
            return Err(untrusted(
                &path,
                format!(
                    "is writable by its group or by others (mode {:o})",
                    mode & 0o7777
                ),
            ));
        }
        Ok(PrivateDir { fd, path })
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn check_file(file: &File, path: &Path, max_len: u64) -> io::Result<()> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(untrusted(path, "is not a regular file".into()));
    }
    check_owner(&meta, path)?;
    if meta.len() > max_len {
        return Err(untrusted(
            path,
            format!("holds {} bytes, more than the {max_len} it may", meta.len()),
        ));
    }
    Ok(())
}

fn check_owner(meta: &std::fs::Metadata, path: &Path) -> io::Result<()> {
    let euid = rustix::process::geteuid().as_raw();
    if meta.uid() != euid {
        return Err(untrusted(
            path,
            format!(
                "is owned by user {}, not by this process's user {euid}",
                meta.uid()
            ),
        ));
    }
    Ok(())
}

fn untrusted(path: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} {why}: a spool or an outbox must be private to its user",
            path.display()
        ),
    )
}

/// An open refused because the last component is a symbolic link (`ELOOP` with `O_NOFOLLOW`,
/// or `ENOTDIR` with `O_DIRECTORY` too) says so; other errors name the path.
fn refused(path: &Path, e: io::Error) -> io::Error {
    let link = matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR))
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if link {
        return untrusted(path, "is a symbolic link".into());
    }
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}
