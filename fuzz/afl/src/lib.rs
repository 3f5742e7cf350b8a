//! Bodies of the AFL++ targets (`src/bin/*`), kept in a library so that
//! `cargo test` here replays the committed corpus (`../corpus/<target>`)
//! through exactly the code the fuzzer ran.
//!
//! The C ABI's sources are compiled into this crate as root modules (the
//! capi crate is a cdylib/staticlib only, which nothing can link as Rust),
//! so `capi_msg` drives the real `zmq_msg_*` exports. Its catch-all panic
//! boundary would turn a bug into EFAULT; [`abort_on_panic`] makes every
//! panic fatal so the fuzzer sees it.

#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, dead_code, unused_imports, clippy::missing_safety_doc)]

#[macro_use]
#[path = "../../../crates/oxmq-capi/src/boundary.rs"]
mod boundary;
#[path = "../../../crates/oxmq-capi/src/context.rs"]
mod context;
#[path = "../../../crates/oxmq-capi/src/curve.rs"]
mod curve;
#[path = "../../../crates/oxmq-capi/src/handle.rs"]
mod handle;
#[path = "../../../crates/oxmq-capi/src/message.rs"]
mod message;
#[path = "../../../crates/oxmq-capi/src/polling.rs"]
mod polling;
#[path = "../../../crates/oxmq-capi/src/proxy.rs"]
mod proxy;
#[path = "../../../crates/oxmq-capi/src/socket.rs"]
mod socket;
#[path = "../../../crates/oxmq-capi/src/util.rs"]
mod util;
#[path = "../../../crates/oxmq-capi/src/z85.rs"]
mod z85;

mod capi_msg;
mod mechanism;

pub use capi_msg::capi_msg;
pub use mechanism::{greeting, mechanism};
use oxmq_proto::fuzzing::security::{self, Mech};
pub use oxmq_proto::fuzzing::{decode, handshake};

/// The security engineer's PLAIN and CURVE bodies (oxmq-proto's cargo-fuzz
/// targets `plain` and `curve`), run under AFL++ as well.
pub fn plain(data: &[u8]) {
    security::handshake(Mech::Plain, data);
}

pub fn curve(data: &[u8]) {
    security::handshake(Mech::Curve, data);
}

/// Every panic aborts, even one a `catch_unwind` would have swallowed.
pub fn abort_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("{info}");
        std::process::abort();
    }));
}

/// A fuzz target's body.
pub type Target = fn(&[u8]);

/// The targets by name (the corpus directories have the same names).
pub const TARGETS: &[(&str, Target)] = &[
    ("decoder", decode),
    ("handshake", handshake),
    ("greeting", greeting),
    ("mechanism", mechanism),
    ("capi_msg", capi_msg),
    ("plain", plain),
    ("curve", curve),
];
