//! Who may touch a core socket, and who frees it: the core's
//! [`oxmq::SocketSlot`] (one atomic per call, freed exactly once whoever
//! closes it: GC, `Context#destroy` or another thread), plus what the Ruby
//! side keeps beside it.
//!
//! rbczmq's hardest bugs were a socket freed twice (GC and context
//! termination racing) or used after free (another thread closing it); the
//! slot makes both impossible.

/// A socket shared (`Arc`) by its Ruby object and its context's registry.
pub(crate) struct Slot {
    /// Declared first: dropped (closing the socket) before the context.
    socket: oxmq::SocketSlot,
    pub(crate) kind: oxmq::SocketType,
    /// Keeps the context alive until the slot goes, so that the socket's own
    /// drop never releases the last reference (see `reaper`).
    _ctx: oxmq::Context,
}

/// Proof of being inside the slot; the socket cannot be freed while it lives.
pub(crate) type Guard<'a> = oxmq::SlotGuard<'a>;

impl Slot {
    pub(crate) fn new(ctx: oxmq::Context, socket: oxmq::Socket) -> Result<Slot, i32> {
        let kind = socket.socket_type();
        let socket = oxmq::SocketSlot::new(socket).map_err(|e| e.errno())?;
        Ok(Slot { socket, kind, _ctx: ctx })
    }

    /// Enter, or ENOTSOCK once closed.
    #[inline]
    pub(crate) fn enter(&self) -> Result<Guard<'_>, i32> {
        self.socket.enter().map_err(|e| e.errno())
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.socket.is_closed()
    }

    /// Readable once closed (a poll from another thread wakes on it).
    pub(crate) fn closed_fd(&self) -> std::os::fd::RawFd {
        self.socket.closed_fd()
    }

    /// Close: later calls fail with ENOTSOCK. Idempotent.
    pub(crate) fn close(&self) {
        self.socket.close();
    }
}
