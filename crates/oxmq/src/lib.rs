//! oxmq: ZeroMQ (ZMTP 3.1) in Rust, with a synchronous socket API.
//!
//! ```no_run
//! use oxmq::{Context, SocketType};
//! let ctx = Context::new();
//! let push = ctx.socket(SocketType::Push).unwrap();
//! push.bind("tcp://127.0.0.1:5555").unwrap();
//! push.send("hello", 0).unwrap();
//! ```
//!
//! Layout: `socket` (the public socket and its mailbox), `patterns` (routing
//! per socket type), `pipe` (lock-free queues between a socket and its
//! peers), `io` (I/O thread, engines, sessions), `transport` (endpoint syntax,
//! tcp, ipc, inproc), `poll`, `monitor` (socket event monitors), `stats`
//! (always-on counters, `Socket::stats`).

#![deny(unsafe_op_in_unsafe_fn)]
// Every public item says what it is and why it exists (issue 22 item 9);
// `make lint` (clippy -D warnings) fails on one that does not.
#![warn(missing_docs)]

mod blocking;
mod bufpool;
mod channel;
mod ctx;
mod error;
mod fdio;
pub mod gss;
mod io;
mod monitor;
mod msg;
pub mod option_table;
pub mod options;
mod patterns;
mod pipe;
mod poll;
pub mod proxy;
mod release;
pub mod security;
mod signaler;
mod slot;
mod socket;
mod stats;
mod sync;
mod transport;
mod wait;

#[cfg(all(test, loom))]
mod loom_tests;

pub use ctx::{ctxopt, Context};
pub use error::{errno, Error, Result};
pub use monitor::{drop_reason, monitor_event};
pub use msg::{FreeFn, Msg, INLINE_CAPACITY};
// Draft RADIO/DISH.
pub use blocking::{block_recv_with, block_with, SocketAccess};
pub use channel::direct::DIRECT_MIN as DIRECT_SEND_MIN;
pub use channel::peer::PeerProperties;
pub use msg::GROUP_MAX_LENGTH;
pub use options::{opt, POLLERR, POLLIN, POLLOUT};
pub use oxmq_proto::SocketType;
pub use poll::{poll, poll_with, PollItem, PollSource};
pub use proxy::Proxy;
pub use release::{ReleaseQueue, Tracker};
pub use slot::{SlotGuard, SocketSlot};
pub use socket::options_codec::OptionValue;
#[cfg(feature = "prometheus")]
pub use socket::prometheus::prometheus_text;
pub use socket::{SharedWaiter, Socket, ThreadSafeSocket, DONTWAIT, SNDMORE, THROTTLED_VIEW};
pub use stats::{DropReason, Drops, HandshakeFailures, PeerStats, SocketStats};
pub use wait::{ceil_millis, ceil_ms, timeout_ms_until, CoreWait, WaitHook, BUSY_POLL_ENV};

/// The libzmq version this library is compatible with.
pub const ZMQ_VERSION: (i32, i32, i32) = (4, 3, 5);
