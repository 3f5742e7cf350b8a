//! How other threads reach a socket: commands and pipe activations queued
//! under a mutex (rare, slow path) plus an eventfd that wakes the socket's
//! thread. The eventfd doubles as the socket's readiness descriptor (`FD`).

use crate::channel::pipes::{EndpointId, PipeId, SocketPipe};
use crate::pipe::Wake;
use crate::signaler::Signaler;
use crate::sync::{AtomicBool, Mutex, Ordering};
use std::io;
use std::sync::Arc;

/// Commands from I/O threads, inproc peers and the context.
// Commands are rare and moved once, so the large `Attach` is not boxed.
#[allow(clippy::large_enum_variant)]
pub(crate) enum SocketCommand {
    /// A new peer: adopt this pipe (bind side after a handshake; inproc; immediate connects).
    Attach(SocketPipe),
    /// The connecting pipe with this key got a fresh connection after a reconnect.
    Hiccup { key: u64 },
    /// A listener or connecter of the socket stopped.
    EndpointClosed { endpoint: EndpointId },
}

#[derive(Default)]
pub(crate) struct Inbox {
    pub(crate) commands: Vec<SocketCommand>,
    pub(crate) read_activated: Vec<PipeId>,
    pub(crate) write_activated: Vec<PipeId>,
    /// The socket has closed: commands are dropped on arrival, so a pipe
    /// attached too late terminates at once instead of lingering unseen.
    closed: bool,
}

/// One per socket, shared with everything that must wake it.
pub(crate) struct Mailbox {
    signaler: Signaler,
    /// Set whenever `inbox` gains something; lets the hot path skip the mutex.
    pending: AtomicBool,
    inbox: Mutex<Inbox>,
}

impl Mailbox {
    pub(crate) fn new() -> io::Result<Arc<Mailbox>> {
        Ok(Arc::new(Mailbox {
            signaler: Signaler::new()?,
            pending: AtomicBool::new(false),
            inbox: Mutex::new(Inbox::default()),
        }))
    }

    pub(crate) fn send(&self, cmd: SocketCommand) {
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        if inbox.closed {
            drop(inbox);
            drop(cmd);
            return;
        }
        inbox.commands.push(cmd);
        drop(inbox);
        self.pending.store(true, Ordering::Release);
        self.signaler.signal();
    }

    /// Refuse all further commands and drop the queued ones (socket close).
    pub(crate) fn close(&self) {
        let queued = {
            let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
            let queued = std::mem::take(&mut *inbox);
            inbox.closed = true;
            queued
        };
        // Dropped outside the lock: dropping pipe ends wakes their peers.
        drop(queued);
    }

    fn activate(&self, id: PipeId, write: bool) {
        {
            let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
            if write {
                inbox.write_activated.push(id);
            } else {
                inbox.read_activated.push(id);
            }
        }
        self.pending.store(true, Ordering::Release);
        self.signaler.signal();
    }

    /// Wake the socket without a command (context termination).
    pub(crate) fn poke(&self) {
        self.pending.store(true, Ordering::Release);
        self.signaler.signal();
    }

    #[inline]
    pub(crate) fn has_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Take everything queued. Drains the eventfd first so that a wake-up
    /// racing with this call is never lost: it either lands in what we take,
    /// or re-signals the fd afterwards.
    /// Returns whether the drain read a signal (see [`Signaler::drain`]).
    pub(crate) fn take(&self, into: &mut Inbox) -> bool {
        let drained = self.signaler.drain();
        self.pending.store(false, Ordering::Release);
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::swap(&mut inbox.commands, &mut into.commands);
        std::mem::swap(&mut inbox.read_activated, &mut into.read_activated);
        std::mem::swap(&mut inbox.write_activated, &mut into.write_activated);
        drained
    }

    pub(crate) fn signaler(&self) -> &Signaler {
        &self.signaler
    }
}

/// Installed in a socket-side pipe end: turns a pipe wake-up into an activation.
pub(crate) struct PipeActivator {
    pub(crate) mailbox: Arc<Mailbox>,
    pub(crate) id: PipeId,
    pub(crate) write: bool,
}

impl Wake for PipeActivator {
    fn wake(&self) {
        self.mailbox.activate(self.id, self.write);
    }
}
