//! libzmq's C ABI over oxmq: `liboxmq.so`, installed as the drop-in
//! `libzmq.so.5`, with the header `include/zmq.h`.
//!
//! # Conventions
//!
//! * **Errors** are libzmq's: a failing call returns -1 (or NULL) and sets
//!   `errno` (the C library's, and a thread-local copy), which `zmq_errno()`
//!   returns. Successful calls leave `errno` alone.
//! * **NULL and invalid handles** never crash where that can be detected: a
//!   NULL or foreign socket is `ENOTSOCK`, a NULL or terminated context
//!   `EFAULT`, a NULL buffer with a non-zero length `EFAULT`. Handles carry a
//!   magic tag that is checked on every call and cleared on close.
//! * **Panics** never unwind into C: every export runs inside
//!   [`ffi_boundary!`], which turns a panic into the function's failure value
//!   with `errno = EFAULT`.
//! * **Threads** follow libzmq: a context may be shared between threads; a
//!   socket is used by one thread at a time (it may move between threads).
//!   Free functions given to `zmq_msg_init_data` may run on any thread.
//! * **Ownership**: `zmq_ctx_new`/`zmq_socket` hand out a `Box` as `void *`;
//!   `zmq_ctx_term`/`zmq_close` take it back. A `zmq_msg_t` holds a Rust value
//!   in place (see `message.rs`).
//!
//! # Safety (every export)
//!
//! The exports are `unsafe extern "C"`: their contract is zmq.h's. Pointers
//! are NULL (where the function checks for NULL) or valid for the sizes the
//! call names; handles come from this library and are used as libzmq allows.
//! All raw-pointer handling sits in a few helpers in `handle.rs` and
//! `message.rs`.

#![deny(unsafe_op_in_unsafe_fn)]
// The C names (`zmq_msg_t`, ...) are the ABI.
#![allow(non_camel_case_types)]
// Every export's safety contract is the C API's; see "Safety" above.
#![allow(clippy::missing_safety_doc)]
// The exports are `pub` in private modules: C reaches them by symbol, not Rust by path.
#![allow(unreachable_pub)]

#[macro_use]
mod boundary;
mod context;
mod curve;
mod handle;
mod message;
mod poller;
mod polling;
mod proxy;
mod socket;
mod stats;
mod util;
mod z85;
// Draft options through the C ABI (s3-draftopts).
#[cfg(test)]
mod draft_tests;

pub use message::zmq_msg_t;
pub use poller::zmq_poller_event_t;
pub use polling::zmq_pollitem_t;
pub use stats::{oxmq_peer_stats_t, oxmq_socket_stats_t};
