//! How other threads reach the I/O thread: the command inbox, the idle
//! condition `wait_idle` waits on, and the token wakers pipes fire.

use super::listener::ListenSock;
use crate::channel::pipes::EndpointId;
use crate::io::{EnginePipe, SocketLink};
use crate::pipe::Wake;
use crate::transport::endpoint::Endpoint;
use crate::transport::ipc::IpcCleanup;
use crate::transport::packet::PacketEngine;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Requests from other threads.
pub(in crate::io) enum Cmd {
    Listen { sock: ListenSock, link: SocketLink, cleanup: Option<IpcCleanup> },
    // Boxed: a queued pipe pair is the largest thing a command carries.
    Connect { endpoint: Endpoint, link: SocketLink, pipe: Option<Box<EnginePipe>> },
    CloseEndpoint { socket_id: u64, endpoint_id: EndpointId },
    SocketClosed { socket_id: u64 },
    Packet(Box<dyn PacketEngine>),
    Stop,
}

#[derive(Default)]
pub(super) struct Inbox {
    pub(super) cmds: Vec<Cmd>,
    /// The loop took commands and has not yet accounted for their effects.
    pub(super) busy: bool,
    /// Listeners, sessions and connections alive at the end of the last iteration.
    pub(super) live: usize,
    pub(super) stopped: bool,
}

/// State shared between the I/O thread and everything that talks to it.
pub(in crate::io) struct Shared {
    pub(super) waker: mio::Waker,
    pub(super) inbox: Mutex<Inbox>,
    pub(super) idle: Condvar,
    pub(super) woken: Mutex<Vec<usize>>,
    /// [`AWAKE`], [`SPINNING`] or [`SLEEPING`]: only a loop that is (about to
    /// be) blocked in `poll` needs the `mio::Waker`; a running or spinning
    /// one finds what was queued by itself.
    pub(super) state: AtomicU8,
}

/// The loop is running: queuing is enough.
pub(super) const AWAKE: u8 = 0;
/// The loop busy-polls before it sleeps and watches for [`AWAKE`]: a
/// notifier sets it back, with no syscall.
pub(super) const SPINNING: u8 = 1;
/// The loop is (about to be) blocked in `poll`: a notifier wakes it.
pub(super) const SLEEPING: u8 = 2;

impl Shared {
    pub(super) fn notify(&self) {
        // Pairs with the loop's `state.store(SLEEPING)` followed by checking
        // the queues under their mutexes: either the loop sees what we
        // queued, or we see it sleeping and wake it. A spinning loop sees
        // AWAKE and takes what we queued.
        if self.state.swap(AWAKE, Ordering::SeqCst) == SLEEPING {
            let _ = self.waker.wake();
        }
    }

    pub(in crate::io) fn command(&self, cmd: Cmd) {
        lock(&self.inbox).cmds.push(cmd);
        self.notify();
    }

    pub(in crate::io) fn wait_idle(&self) {
        let mut st = lock(&self.inbox);
        while !(st.stopped || (st.cmds.is_empty() && !st.busy && st.live == 0)) {
            st = self.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Installed in the engine-side ends of pipes: queues the object's token.
pub(super) struct TokenWaker {
    pub(super) token: usize,
    pub(super) queued: AtomicBool,
    pub(super) shared: Arc<Shared>,
}

impl Wake for TokenWaker {
    fn wake(&self) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return; // already queued, not yet run
        }
        lock(&self.shared.woken).push(self.token);
        self.shared.notify();
    }
}
