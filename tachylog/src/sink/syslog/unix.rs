//! The Unix datagram transport (`/dev/log`): Unix only, as Unix domain datagram sockets are
//! (Windows has stream sockets of that family only, and no local syslog daemon to reach).

use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A connected datagram socket and the path to reconnect to when the daemon restarts.
pub(super) struct UnixTransport {
    socket: UnixDatagram,
    pub(super) path: PathBuf,
}

impl UnixTransport {
    pub(super) fn connect(path: PathBuf, write_timeout: Duration) -> io::Result<UnixTransport> {
        let socket = connect(&path)?;
        socket.set_write_timeout(Some(write_timeout))?;
        Ok(UnixTransport { socket, path })
    }

    /// Connects again (after a daemon restart, or on `reopen`).
    pub(super) fn reconnect(&mut self) -> io::Result<()> {
        let timeout = self.socket.write_timeout()?;
        self.socket = connect(&self.path)?;
        self.socket.set_write_timeout(timeout)
    }

    /// Sends one datagram; if the daemon was restarted (the old socket is gone), reconnects
    /// once.
    pub(super) fn send(&mut self, message: &[u8]) -> io::Result<()> {
        match self.socket.send(message) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ECONNREFUSED | libc::ENOTCONN)) => {
                self.reconnect()?;
                self.socket.send(message).map(drop)
            }
            Err(e) => Err(e),
        }
    }
}

fn connect(path: &Path) -> io::Result<UnixDatagram> {
    let socket = UnixDatagram::unbound()?;
    socket.connect(path).map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::EPROTOTYPE) {
            " (a stream socket: only datagram sockets are supported)"
        } else {
            ""
        };
        io::Error::new(
            e.kind(),
            format!("syslog unix {}: {e}{hint}", path.display()),
        )
    })?;
    Ok(socket)
}
