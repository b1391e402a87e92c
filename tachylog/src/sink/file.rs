//! A plain log file, appended to. The writing itself (batching whole lines, `O_APPEND`,
//! recreating a deleted file) is [`AppendFile`]'s; time patterns and size limits are
//! `RollingFile`'s.

use super::append::AppendFile;
use super::{Line, Sink};
use crate::Error;
use std::io;
use std::path::{Path, PathBuf};

/// Appends lines to one file.
///
/// The file is opened with `O_APPEND` (mode 0640, parent directories created), so several
/// processes can share it and `logrotate`'s `copytruncate` works. Lines are written in batches
/// of whole lines, one `write(2)` each. If the file is deleted or moved away, it is recreated
/// at its path within about a second; [`reopen`](crate::reopen) does it at once.
///
/// On Windows the file is opened for appending only and shared for reading, writing and
/// deleting: other processes may append to it, read it, and rename or delete it while it is
/// open (a renamed or deleted file is recreated as above). Each batch is one `WriteFile` that
/// the file system places at the end of the file.
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-file-sink");
/// let sink = tachylog::FileSink::open(dir.join("app.log")).unwrap();
/// let guard = tachylog::builder().sink(sink).init().unwrap();
/// tachylog::info!("to the file");
/// drop(guard);
/// assert!(std::fs::read_to_string(dir.join("app.log")).unwrap().contains("to the file"));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub struct FileSink {
    file: AppendFile,
}

impl FileSink {
    /// Opens (creating if needed, with its parent directories) `path` for appending. A relative
    /// path is taken from the working directory now: the file stays where it was opened when
    /// the program later changes directory.
    pub fn open(path: impl AsRef<Path>) -> Result<FileSink, Error> {
        let path = path.as_ref();
        let file = AppendFile::open(path).map_err(|source| Error::OpenFile {
            path: PathBuf::from(path),
            source,
        })?;
        Ok(FileSink { file })
    }

    /// The file's path, made absolute when it was opened.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("tachylog-doc-file-path");
    /// let sink = tachylog::FileSink::open(dir.join("app.log")).unwrap();
    /// assert_eq!(sink.path(), std::path::absolute(dir.join("app.log")).unwrap());
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl Sink for FileSink {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.file.write_line(line.text)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }

    fn describe(&self) -> String {
        self.file.path().display().to_string()
    }
    fn reads_message(&self, _: crate::codec::sealed::Internal) -> bool {
        false
    }

    fn text_buffer(&mut self, _: crate::codec::sealed::Internal) -> Option<&mut Vec<u8>> {
        Some(self.file.line_buffer())
    }

    fn text_appended(&mut self, _: crate::codec::sealed::Internal) -> io::Result<()> {
        self.file.line_appended()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.file.reopen()
    }

    #[cfg(all(unix, not(loom)))]
    fn flush_start(&mut self, _: crate::codec::sealed::Internal) -> io::Result<()> {
        self.file.start_flush()
    }

    #[cfg(all(unix, not(loom)))]
    fn flush_finish(&mut self, _: crate::codec::sealed::Internal) -> io::Result<()> {
        self.file.finish_flush()
    }

    /// The file: whatever the dead process wrote, a sink that writes this file writes
    /// recovered records there.
    #[cfg(all(unix, not(loom)))]
    fn recovery_files(
        &mut self,
        _span: (i64, i64),
        _: crate::codec::sealed::Internal,
    ) -> Vec<super::TailFile> {
        vec![super::TailFile {
            path: self.file.path().to_path_buf(),
        }]
    }
}
