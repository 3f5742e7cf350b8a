//! Transports: endpoint syntax, tcp and ipc (driven by I/O threads) and inproc (no I/O thread).

pub(crate) mod endpoint;
pub(crate) mod inproc;
pub(crate) mod ipc;
pub(crate) mod tcp;
// SOCKS_PROXY: a SOCKS5 client for tcp connects.
pub(crate) mod socks;
