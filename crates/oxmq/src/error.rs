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
    #![allow(missing_docs)]
    pub const EAGAIN: i32 = libc::EAGAIN;
    pub const EINVAL: i32 = libc::EINVAL;
    pub const EINTR: i32 = libc::EINTR;
    pub const EFAULT: i32 = libc::EFAULT;
    pub const ENOMEM: i32 = libc::ENOMEM;
    pub const ENODEV: i32 = libc::ENODEV;
    pub const EMSGSIZE: i32 = libc::EMSGSIZE;
    pub const ENOTSUP: i32 = libc::ENOTSUP;
    pub const EPROTONOSUPPORT: i32 = libc::EPROTONOSUPPORT;
    pub const ENOBUFS: i32 = libc::ENOBUFS;
    pub const ENETDOWN: i32 = libc::ENETDOWN;
    pub const EADDRINUSE: i32 = libc::EADDRINUSE;
    pub const EADDRNOTAVAIL: i32 = libc::EADDRNOTAVAIL;
    pub const ECONNREFUSED: i32 = libc::ECONNREFUSED;
    pub const EINPROGRESS: i32 = libc::EINPROGRESS;
    pub const ENOTSOCK: i32 = libc::ENOTSOCK;
    pub const EAFNOSUPPORT: i32 = libc::EAFNOSUPPORT;
    pub const EHOSTUNREACH: i32 = libc::EHOSTUNREACH;
    pub const ENOENT: i32 = libc::ENOENT;
    pub const EMFILE: i32 = libc::EMFILE;
    pub const ZMQ_HAUSNUMERO: i32 = 156_384_712;
    pub const EFSM: i32 = ZMQ_HAUSNUMERO + 51;
    pub const ENOCOMPATPROTO: i32 = ZMQ_HAUSNUMERO + 52;
    pub const ETERM: i32 = ZMQ_HAUSNUMERO + 53;
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
