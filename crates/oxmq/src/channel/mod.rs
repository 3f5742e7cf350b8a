//! How the other layers reach a socket, below the socket layer so the I/O
//! threads, the transports and the context need nothing from `socket/`:
//! its mailbox (commands and an eventfd), the pipes of each peer connection
//! with their endpoint ids and the drop and full-pipe events their patterns
//! report, and what a peer told us about itself.

pub(crate) mod direct;
pub(crate) mod direct_read;
pub(crate) mod events;
pub(crate) mod mailbox;
pub(crate) mod peer;
pub(crate) mod pipes;
