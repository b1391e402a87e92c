//! A plain log file, appended to.
//!
//! Opened with `O_APPEND` (mode 0640, parent directories created), so each `write(2)` lands at
//! the end even when other processes or `logrotate copytruncate` touch the file. Lines are
//! batched into a 256 KiB buffer that only ever holds whole lines, so every write carries whole
//! lines and the 1M-line seed workload costs a few hundred system calls, not a million.

use super::{Line, Sink};
use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const BATCH: usize = 256 * 1024;

/// Appends lines to a file.
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
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
}

impl FileSink {
    /// Opens (creating if needed, with its parent directories) `path` for appending.
    pub fn open(path: impl AsRef<Path>) -> Result<FileSink, Error> {
        let path = path.as_ref().to_path_buf();
        let open_error = |source| Error::OpenFile {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(open_error)?;
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o640)
            .open(&path)
            .map_err(open_error)?;
        Ok(FileSink {
            path,
            file,
            buf: Vec::with_capacity(BATCH),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Sink for FileSink {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        let line = line.text;
        if self.buf.len() + line.len() > BATCH && !self.buf.is_empty() {
            self.flush()?;
        }
        if line.len() >= BATCH {
            // A huge line goes straight out, without a copy.
            return self.file.write_all(line);
        }
        self.buf.extend_from_slice(line);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = self.file.write_all(&self.buf);
        // Lines that failed are counted as lost by the caller; keeping them would make the
        // buffer grow without bound while the disk is full.
        self.buf.clear();
        result
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.flush()?;
        let reopened = FileSink::open(&self.path).map_err(|e| match e {
            Error::OpenFile { source, .. } => source,
            other => io::Error::other(other.to_string()),
        })?;
        self.file = reopened.file;
        Ok(())
    }
}
