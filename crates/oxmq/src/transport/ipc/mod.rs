//! ipc transport: Unix domain stream sockets (filesystem paths, the Linux
//! abstract namespace, and `ipc://*` wildcards under the temp directory).

use crate::error::Error;
use crate::options::Options;
use crate::transport::endpoint::IpcAddr;
use socket2::{Domain, SockAddr, SockRef, Socket, Type};
use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Removes an `ipc://*` listener's socket file and the directory made for
/// it when the listener closes, as libzmq does. A named path is left alone,
/// as libzmq leaves it: the listener closes in the I/O thread after the
/// socket has gone, by when another socket may have bound the same path
/// (binding replaces the file), and removing that one would leave its
/// clients reconnecting to nothing forever (libzmq's test_rebind_ipc).
#[derive(Debug)]
pub(crate) struct IpcCleanup {
    file: PathBuf,
    dir: PathBuf,
}

impl Drop for IpcCleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn sockaddr(addr: &IpcAddr) -> io::Result<SockAddr> {
    match addr {
        IpcAddr::Path(p) => SockAddr::unix(p),
        IpcAddr::Abstract(name) => {
            let mut raw = Vec::with_capacity(name.len() + 1);
            raw.push(0u8);
            raw.extend_from_slice(name);
            SockAddr::unix(PathBuf::from(OsString::from_vec(raw)))
        }
        IpcAddr::Wildcard => Err(io::Error::from_raw_os_error(libc::EINVAL)),
    }
}

/// A fresh directory `$TMPDIR/tmpXXXXXX` (libzmq's `ipc://*` layout).
fn make_wildcard_dir() -> io::Result<PathBuf> {
    let base = std::env::var_os("TMPDIR").filter(|v| !v.is_empty()).unwrap_or_else(|| "/tmp".into());
    let mut template = Path::new(&base).join("tmpXXXXXX").into_os_string().into_vec();
    template.push(0);
    let c = CString::from_vec_with_nul(template).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let raw = c.into_raw();
    // SAFETY: `raw` is a NUL-terminated, writable buffer we own; mkdtemp
    // rewrites the trailing Xs in place and returns it (or NULL on error).
    let rc = unsafe { libc::mkdtemp(raw) };
    // SAFETY: `raw` came from `CString::into_raw` above and is reclaimed once.
    let c = unsafe { CString::from_raw(raw) };
    if rc.is_null() {
        return Err(io::Error::last_os_error());
    }
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(c.as_bytes())))
}

/// Creates a listening Unix socket in the caller's thread. Returns it, the
/// endpoint string for `ZMQ_LAST_ENDPOINT`, and what to clean up on close.
pub(crate) fn bind(
    addr: &IpcAddr,
    opts: &Options,
) -> Result<(mio::net::UnixListener, String, Option<IpcCleanup>), Error> {
    if opts.use_fd >= 0 {
        // USE_FD: the application's listening socket; its own path is the
        // endpoint, and (as in libzmq) it is not ours to unlink.
        let sock = super::tcp::adopt_listener(opts.use_fd)?;
        let path = sock.local_addr().ok().and_then(|a| a.as_pathname().map(|p| p.to_path_buf()));
        let Some(path) = path else {
            return Err(super::tcp::disown(sock, libc::EINVAL));
        };
        let fd: OwnedFd = sock.into();
        let std_listener = std::os::unix::net::UnixListener::from(fd);
        return Ok((mio::net::UnixListener::from_std(std_listener), format!("ipc://{}", path.display()), None));
    }
    let (addr, dir) = match addr {
        IpcAddr::Wildcard => {
            let dir = make_wildcard_dir()?;
            (IpcAddr::Path(dir.join("socket")), Some(dir))
        }
        other => (other.clone(), None),
    };
    let sa = match sockaddr(&addr) {
        Ok(sa) => sa,
        Err(e) => {
            if let Some(d) = &dir {
                let _ = std::fs::remove_dir(d);
            }
            return Err(e.into());
        }
    };
    let result = (|| -> io::Result<Socket> {
        let sock = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        if let IpcAddr::Path(p) = &addr {
            // A file left behind by an earlier run would make bind fail;
            // libzmq removes it unconditionally.
            let _ = std::fs::remove_file(p);
        }
        sock.bind(&sa)?;
        sock.listen(opts.backlog.max(1))?;
        sock.set_nonblocking(true)?;
        Ok(sock)
    })();
    let sock = match result {
        Ok(s) => s,
        Err(e) => {
            if let Some(d) = &dir {
                let _ = std::fs::remove_dir(d);
            }
            return Err(e.into());
        }
    };
    let (endpoint, cleanup) = match &addr {
        IpcAddr::Path(p) => (format!("ipc://{}", p.display()), dir.map(|dir| IpcCleanup { file: p.clone(), dir })),
        IpcAddr::Abstract(n) => (format!("ipc://@{}", String::from_utf8_lossy(n)), None),
        IpcAddr::Wildcard => unreachable!("wildcard resolved above"),
    };
    let fd: OwnedFd = sock.into();
    let std_listener = std::os::unix::net::UnixListener::from(fd);
    Ok((mio::net::UnixListener::from_std(std_listener), endpoint, cleanup))
}

/// Starts a non-blocking connect to a Unix socket.
pub(crate) fn start_connect(addr: &IpcAddr) -> io::Result<mio::net::UnixStream> {
    let sa = sockaddr(addr)?;
    let sock = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    sock.set_nonblocking(true)?;
    match sock.connect(&sa) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let fd: OwnedFd = sock.into();
    Ok(mio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(fd)))
}

/// Kernel buffer size asked for on each side of an ipc connection. The
/// kernel's default (`wmem_default`, 208 KiB) is smaller than a 256 KiB
/// message, which then crosses in several writes, each waiting for the peer
/// to read: a 256 KiB REQ/REP round trip took ~170 us instead of ~120 us, and
/// 4 MiB messages moved at a third of the rate. The kernel caps the request
/// at `wmem_max` / `rmem_max`, and a Unix socket is charged only for the
/// bytes actually queued.
pub(crate) const BUFFER: usize = 1 << 20;

/// Sizes a connected Unix stream's buffers (accepted or connected):
/// SNDBUF and RCVBUF as the socket set them (`-1`, the default, leaves
/// oxmq's [`BUFFER`]). libzmq 4.3.5 applies them to tcp only and leaves ipc
/// at the kernel's default; its documentation says they apply to the socket
/// whatever the transport, and a program that sets them small on ipc (as
/// libzmq's own pipes-stats test does, to keep messages out of the kernel)
/// gets at most what it would get from libzmq. A refusal leaves the kernel's
/// default; the connection works either way.
pub(crate) fn tune_stream(stream: &impl std::os::fd::AsFd, opts: &Options) {
    let size = |set: i32| usize::try_from(set).unwrap_or(BUFFER);
    let sock = SockRef::from(stream);
    let _ = sock.set_send_buffer_size(size(opts.sndbuf));
    let _ = sock.set_recv_buffer_size(size(opts.rcvbuf));
}

/// After a writable event on a connecting socket: `Ok(true)` connected,
/// `Ok(false)` still in progress, `Err` failed.
pub(crate) fn finish_connect(stream: &mio::net::UnixStream) -> io::Result<bool> {
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    match stream.peer_addr() {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_bind_creates_and_cleans_up() {
        let (l, ep, cleanup) = bind(&IpcAddr::Wildcard, &Options::default()).unwrap();
        let path = PathBuf::from(ep.strip_prefix("ipc://").unwrap());
        assert!(path.ends_with("socket"), "{ep}");
        assert!(path.exists());
        drop(l);
        drop(cleanup);
        assert!(!path.exists());
        assert!(!path.parent().unwrap().exists());
    }

    #[test]
    fn a_named_path_outlives_its_listener() {
        let dir = make_wildcard_dir().unwrap();
        let p = dir.join("named");
        let (l, _, cleanup) = bind(&IpcAddr::Path(p.clone()), &Options::default()).unwrap();
        assert!(cleanup.is_none(), "libzmq unlinks only ipc://* files");
        drop(l);
        assert!(p.exists());
        std::fs::remove_file(&p).unwrap();
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn stale_file_is_replaced() {
        let dir = make_wildcard_dir().unwrap();
        let p = dir.join("stale");
        std::fs::write(&p, b"x").unwrap();
        let (_l, ep, _) = bind(&IpcAddr::Path(p.clone()), &Options::default()).unwrap();
        assert_eq!(ep, format!("ipc://{}", p.display()));
        std::fs::remove_file(&p).unwrap();
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn streams_get_larger_buffers_than_the_kernel_default() {
        let sizes = |s: &std::os::unix::net::UnixStream| {
            let r = SockRef::from(s);
            (r.send_buffer_size().unwrap(), r.recv_buffer_size().unwrap())
        };
        let (untuned, _) = std::os::unix::net::UnixStream::pair().unwrap();
        let (kernel_snd, kernel_rcv) = sizes(&untuned);
        // The kernel caps the request at wmem_max / rmem_max (never below
        // the default) and doubles it: always above the untuned default.
        let (a, _) = std::os::unix::net::UnixStream::pair().unwrap();
        tune_stream(&a, &Options::default());
        let (snd, rcv) = sizes(&a);
        assert!(snd > kernel_snd && rcv > kernel_rcv, "{snd}/{rcv} vs default {kernel_snd}/{kernel_rcv}");
        // Set by the socket: its own sizes (the kernel doubles them).
        let (b, _) = std::os::unix::net::UnixStream::pair().unwrap();
        let opts = Options { sndbuf: 4096, rcvbuf: 8192, ..Default::default() };
        tune_stream(&b, &opts);
        assert_eq!(sizes(&b), (8192, 16384));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn abstract_names_bind_and_connect() {
        let name = format!("oxmq-test-{}", std::process::id()).into_bytes();
        let (_l, ep, cleanup) = bind(&IpcAddr::Abstract(name.clone()), &Options::default()).unwrap();
        assert!(cleanup.is_none());
        assert_eq!(ep, format!("ipc://@oxmq-test-{}", std::process::id()));
        let s = start_connect(&IpcAddr::Abstract(name)).unwrap();
        assert!(finish_connect(&s).unwrap());
    }
}
