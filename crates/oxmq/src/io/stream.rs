//! A connected byte stream (tcp or ipc) as the engine sees it: non-blocking
//! reads straight into a `BytesMut`'s spare capacity, and vectored writes
//! that never raise SIGPIPE (we may live inside a C or Python process that
//! did not ignore it).

use crate::transport::ws::{WsConnect, WsStream};
use bytes::BytesMut;
use mio::{Interest, Registry, Token};
use oxmq_proto::SocketType;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};

pub(crate) enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    /// ws:// and wss:// (ZWS 2.0): tcp behind a WebSocket translating stage.
    Ws(Box<WsStream>),
}

impl Stream {
    pub(crate) fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Ws(w) => w.fd(),
        }
    }

    /// The fd another thread may write ZMTP frames to directly: tcp and
    /// ipc (ws translates every write).
    pub(crate) fn direct_fd(&self) -> Option<RawFd> {
        match self {
            Stream::Tcp(s) => Some(s.as_raw_fd()),
            Stream::Unix(s) => Some(s.as_raw_fd()),
            Stream::Ws(_) => None,
        }
    }

    /// A connected tcp stream behind a ws:// connecter's WebSocket stage
    /// (the upgrade request is queued at once); any other stream as it is.
    pub(crate) fn into_ws(self, ws: &WsConnect) -> io::Result<Stream> {
        let Stream::Tcp(tcp) = self else { return Ok(self) };
        Ok(Stream::Ws(Box::new(ws.wrap(tcp)?)))
    }

    /// The tcp socket under a tcp or ws stream (for peer addresses).
    pub(crate) fn tcp(&self) -> Option<&mio::net::TcpStream> {
        match self {
            Stream::Tcp(t) => Some(t),
            Stream::Ws(w) => Some(&w.tcp),
            Stream::Unix(_) => None,
        }
    }

    /// Whether a connection of this socket type runs libzmq's raw engine
    /// (no ZMTP): STREAM always, draft DGRAM over tcp/ipc (over ws://
    /// libzmq's ZWS engine frames DGRAM's messages as ZMTP does).
    pub(crate) fn runs_raw(&self, kind: SocketType) -> bool {
        match kind {
            SocketType::Stream => true,
            SocketType::Dgram => !matches!(self, Stream::Ws(_)),
            _ => false,
        }
    }

    /// Output accepted by `writev` but not yet on the wire (ws only).
    #[inline]
    pub(crate) fn has_pending(&self) -> bool {
        match self {
            Stream::Ws(w) => w.has_pending(),
            _ => false,
        }
    }

    /// Writes what `has_pending` reports. `Ok(true)`: nothing is left.
    pub(crate) fn flush_pending(&mut self) -> io::Result<bool> {
        match self {
            Stream::Ws(w) => w.flush_pending(),
            _ => Ok(true),
        }
    }

    /// Registers for readable and writable readiness (a connect in
    /// progress completes with a writable edge); an engine narrows it with
    /// [`Stream::reregister`] once its output is on the wire.
    pub(crate) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let interest = Interest::READABLE | Interest::WRITABLE;
        match self {
            Stream::Tcp(s) => registry.register(s, token, interest),
            Stream::Unix(s) => registry.register(s, token, interest),
            Stream::Ws(w) => registry.register(&mut w.tcp, token, interest),
        }
    }

    /// Readable readiness always, writable only when `writable`. Modifying
    /// a registration reports readiness that is already there, so adding
    /// writable after a write hit EAGAIN loses no edge.
    pub(crate) fn reregister(&mut self, registry: &Registry, token: Token, writable: bool) -> io::Result<()> {
        let interest = if writable { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        match self {
            Stream::Tcp(s) => registry.reregister(s, token, interest),
            Stream::Unix(s) => registry.reregister(s, token, interest),
            Stream::Ws(w) => registry.reregister(&mut w.tcp, token, interest),
        }
    }

    pub(crate) fn deregister(&mut self, registry: &Registry) {
        let _ = match self {
            Stream::Tcp(s) => registry.deregister(s),
            Stream::Unix(s) => registry.deregister(s),
            Stream::Ws(w) => registry.deregister(&mut w.tcp),
        };
    }

    /// Reads into `buf`'s spare capacity (the caller reserves). `Ok(0)` is EOF.
    pub(crate) fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let n = self.read_uninit(buf.spare_capacity_mut())?;
        // SAFETY: the kernel initialised the first `n` spare bytes.
        unsafe { buf.set_len(buf.len() + n) };
        Ok(n)
    }

    /// Reads at most `limit` bytes into `buf`'s spare capacity (the caller
    /// reserves), so a read can stop exactly at a frame's end. `Ok(0)` is EOF.
    pub(crate) fn read_into_vec(&mut self, buf: &mut Vec<u8>, limit: usize) -> io::Result<usize> {
        let spare = buf.spare_capacity_mut();
        let take = limit.min(spare.len());
        let n = self.read_uninit(&mut spare[..take])?;
        // SAFETY: the kernel initialised the first `n` spare bytes.
        unsafe { buf.set_len(buf.len() + n) };
        Ok(n)
    }

    /// One `recv` into `spare`; returns how many leading bytes it initialised.
    fn read_uninit(&mut self, spare: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        if spare.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ENOBUFS));
        }
        if let Stream::Ws(w) = self {
            return w.read(spare);
        }
        loop {
            // SAFETY: `spare` is writable memory of `spare.len()` bytes; the
            // kernel writes at most that many bytes into it.
            let n = unsafe { libc::recv(self.fd(), spare.as_mut_ptr().cast(), spare.len(), 0) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// One `sendmsg` of all `bufs` (MSG_NOSIGNAL).
    pub(crate) fn writev(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if let Stream::Ws(w) = self {
            return w.writev(bufs);
        }
        crate::fdio::sendmsg(self.fd(), bufs, libc::MSG_NOSIGNAL)
    }
}
