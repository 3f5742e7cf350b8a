//! Transports: endpoint syntax, tcp and ipc (driven by I/O threads) and inproc (no I/O thread).

pub(crate) mod endpoint;
pub(crate) mod inproc;
pub(crate) mod ipc;
pub(crate) mod tcp;
// Draft RADIO/DISH.
pub(crate) mod udp;
