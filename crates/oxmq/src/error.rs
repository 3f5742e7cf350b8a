//! Errors of the public API.
//!
//! Inside the core, errors say who is at fault; they become libzmq errno
//! values only at the edges ([`Error::errno`]). Faults of a *peer* never reach
//! the caller: the engine drops that connection and the socket carries on.

use std::fmt;
use std::io;

/// libzmq's errno values (Linux numbers for the POSIX ones, libzmq's own base
/// `ZMQ_HAUSNUMERO` = 156384712 for the rest).
pub mod errno {
    /// The call would block: a non-blocking call, or SNDTIMEO/RCVTIMEO ran out.
    pub const EAGAIN: i32 = libc::EAGAIN;
    /// An invalid argument: an unknown option or a bad value, a malformed endpoint.
    pub const EINVAL: i32 = libc::EINVAL;
    /// A blocking call was interrupted by a signal (or a fork child terminated its parent's context).
    pub const EINTR: i32 = libc::EINTR;
    /// An invalid context or message handed to the C ABI.
    pub const EFAULT: i32 = libc::EFAULT;
    /// Memory ran out.
    pub const ENOMEM: i32 = libc::ENOMEM;
    /// The network interface an endpoint names does not exist.
    pub const ENODEV: i32 = libc::ENODEV;
    /// A message too large for the transport (a udp datagram, a group name over 255 bytes).
    pub const EMSGSIZE: i32 = libc::EMSGSIZE;
    /// The operation is not supported by this socket type (e.g. `zmq_join` on a non-DISH).
    pub const ENOTSUP: i32 = libc::ENOTSUP;
    /// The endpoint's transport is not supported here (tipc://, or pgm:// without libpgm).
    pub const EPROTONOSUPPORT: i32 = libc::EPROTONOSUPPORT;
    /// No buffer space: the kernel or a fixed-size table is full.
    pub const ENOBUFS: i32 = libc::ENOBUFS;
    /// The network is down.
    pub const ENETDOWN: i32 = libc::ENETDOWN;
    /// The address a bind asks for is already taken.
    pub const EADDRINUSE: i32 = libc::EADDRINUSE;
    /// The address a bind asks for is not local to this host.
    pub const EADDRNOTAVAIL: i32 = libc::EADDRNOTAVAIL;
    /// The peer refused the connection.
    pub const ECONNREFUSED: i32 = libc::ECONNREFUSED;
    /// A non-blocking connect has not completed yet.
    pub const EINPROGRESS: i32 = libc::EINPROGRESS;
    /// The handle handed to the C ABI is not a live socket.
    pub const ENOTSOCK: i32 = libc::ENOTSOCK;
    /// The address family of an endpoint is not supported.
    pub const EAFNOSUPPORT: i32 = libc::EAFNOSUPPORT;
    /// No route to the peer: a ROUTER_MANDATORY send to an unknown routing id, or a SERVER reply to one.
    pub const EHOSTUNREACH: i32 = libc::EHOSTUNREACH;
    /// Nothing to undo: `unbind` or `disconnect` of an endpoint the socket does not have.
    pub const ENOENT: i32 = libc::ENOENT;
    /// Too many open sockets (the context's MAX_SOCKETS) or file descriptors.
    pub const EMFILE: i32 = libc::EMFILE;
    /// The base of libzmq's own errno values, far above the system's.
    pub const ZMQ_HAUSNUMERO: i32 = 156_384_712;
    /// The socket's state machine forbids the call now: a second REQ send before the reply, a REP recv before its send.
    pub const EFSM: i32 = ZMQ_HAUSNUMERO + 51;
    /// The transport does not fit the socket type (e.g. pgm:// with a REQ socket).
    pub const ENOCOMPATPROTO: i32 = ZMQ_HAUSNUMERO + 52;
    /// The socket's context was terminated: every call on the socket fails with it until the socket is closed.
    pub const ETERM: i32 = ZMQ_HAUSNUMERO + 53;
    /// No I/O thread is available for the operation (IO_THREADS 0 with a transport that needs one).
    pub const EMTHREAD: i32 = ZMQ_HAUSNUMERO + 54;
}

/// What went wrong, split by who is at fault.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The operation would block (non-blocking call, or a timeout expired).
    Again,
    /// The context was terminated while, or before, the call ran.
    Terminated,
    /// The call is not valid in the socket's current state (REQ/REP alternation).
    State,
    /// ROUTER_MANDATORY: no peer has that routing id.
    HostUnreachable,
    /// The caller passed an invalid argument; the text says which.
    Invalid(&'static str),
    /// The operation or option is not supported by this socket type.
    NotSupported,
    /// The endpoint's transport is unknown.
    ProtocolNotSupported,
    /// The endpoint's transport needs a system library that could not be
    /// loaded (pgm/epgm: libpgm-5.3.so.0, norm: libnorm.so.1): the transport
    /// is unavailable, as in a libzmq built without it (EPROTONOSUPPORT).
    TransportUnavailable {
        /// The transport asked for ("pgm" also for epgm, "norm").
        transport: &'static str,
        /// The library's soname.
        library: &'static str,
        /// Why the dynamic loader refused it.
        reason: String,
    },
    /// The transport cannot be used with this socket type.
    NoCompatProtocol,
    /// The socket has been closed.
    NotSocket,
    /// The message is larger than allowed.
    MessageTooLarge,
    /// The endpoint is not bound/connected (unbind/disconnect) or an inproc name is unknown.
    NoSuchEndpoint,
    /// An operating-system error (bind, connect, ...).
    Io(io::Error),
    /// Interrupted by a signal.
    Interrupted,
}

impl Error {
    /// The libzmq errno value this error becomes at the C and Python edges.
    pub fn errno(&self) -> i32 {
        use errno::*;
        match self {
            Error::Again => EAGAIN,
            Error::Terminated => ETERM,
            Error::State => EFSM,
            Error::HostUnreachable => EHOSTUNREACH,
            Error::Invalid(_) => EINVAL,
            Error::NotSupported => ENOTSUP,
            Error::ProtocolNotSupported | Error::TransportUnavailable { .. } => EPROTONOSUPPORT,
            Error::NoCompatProtocol => ENOCOMPATPROTO,
            Error::NotSocket => ENOTSOCK,
            Error::MessageTooLarge => EMSGSIZE,
            Error::NoSuchEndpoint => ENOENT,
            Error::Interrupted => EINTR,
            Error::Io(e) => e.raw_os_error().unwrap_or(EINVAL),
        }
    }

    /// libzmq's message for an errno value (`zmq_strerror`).
    pub fn strerror(errnum: i32) -> String {
        use errno::*;
        match errnum {
            EFSM => "Operation cannot be accomplished in current state".into(),
            ENOCOMPATPROTO => "The protocol is not compatible with the socket type".into(),
            ETERM => "Context was terminated".into(),
            EMTHREAD => "No thread available".into(),
            EHOSTUNREACH => "Host unreachable".into(),
            _ => io::Error::from_raw_os_error(errnum)
                .to_string()
                .split(" (os error")
                .next()
                .unwrap_or("Unknown error")
                .to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(why) => write!(f, "Invalid argument: {why}"),
            Error::Io(e) => write!(f, "{e}"),
            Error::TransportUnavailable { transport, library, reason } => {
                write!(f, "Protocol not supported: {transport} needs {library}, which could not be loaded ({reason})")
            }
            other => f.write_str(&Error::strerror(other.errno())),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::WouldBlock => Error::Again,
            io::ErrorKind::Interrupted => Error::Interrupted,
            _ => Error::Io(e),
        }
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.errno() == other.errno()
    }
}

/// Result of the public API.
pub type Result<T> = std::result::Result<T, Error>;
