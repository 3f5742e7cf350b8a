//! Socket monitors (libzmq `zmq_socket_monitor`).
//!
//! A monitored socket publishes lifecycle events on an internal PAIR socket
//! bound at an `inproc://` endpoint; the user connects their own PAIR to it.
//! Each event is two frames: 6 bytes (`u16` event id, `u32` value, native
//! endianness, packed) and the affected endpoint as a string.
//!
//! Events come from the socket's own thread (bind) and from the I/O thread
//! (listeners, sessions, engines). Both reach the PAIR (an [`EventSink`]
//! that `socket::monitor` installs) through a [`Monitor`]
//! slot created with the socket and shared by `Arc` with every listener,
//! session and connection, so a monitor set after bind/connect still sees
//! their events. Emitting first reads an atomic event mask: with no monitor
//! set, an event costs one relaxed load. With one set, the PAIR is used under
//! a mutex and sends never block (an event the reader has no room for is
//! dropped, as in libzmq).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Monitor event ids (libzmq `ZMQ_EVENT_*`), as sent in the first frame.
pub mod monitor_event {
    /// Connection established (value: fd).
    pub const CONNECTED: u16 = 0x0001;
    /// Synchronous connect did not complete at once (value: errno).
    pub const CONNECT_DELAYED: u16 = 0x0002;
    /// A reconnect is scheduled (value: the interval in ms).
    pub const CONNECT_RETRIED: u16 = 0x0004;
    /// Bound and listening (value: the listener's fd).
    pub const LISTENING: u16 = 0x0008;
    /// Bind failed (value: errno).
    pub const BIND_FAILED: u16 = 0x0010;
    /// A connection was accepted (value: fd).
    pub const ACCEPTED: u16 = 0x0020;
    /// Accepting a connection failed (value: errno).
    pub const ACCEPT_FAILED: u16 = 0x0040;
    /// A listener or connecting socket was closed (value: fd).
    pub const CLOSED: u16 = 0x0080;
    /// Closing failed (value: errno).
    pub const CLOSE_FAILED: u16 = 0x0100;
    /// A connection was lost (value: fd).
    pub const DISCONNECTED: u16 = 0x0200;
    /// Monitoring stopped (value 0, empty endpoint).
    pub const MONITOR_STOPPED: u16 = 0x0400;
    /// All of the events above and below.
    pub const ALL: u16 = 0xFFFF;
    /// Handshake failed for a reason other than protocol or auth (value: errno).
    pub const HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
    /// ZMTP handshake done (value 0).
    pub const HANDSHAKE_SUCCEEDED: u16 = 0x1000;
    /// Handshake failed on a protocol error (value: `ZMQ_PROTOCOL_ERROR_*`).
    pub const HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
    /// Handshake failed on authentication (value: ZAP status code).
    pub const HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
}

/// The 6-byte first frame of an event.
pub(crate) fn encode_event(event: u16, value: u32) -> [u8; 6] {
    let mut b = [0u8; 6];
    b[..2].copy_from_slice(&event.to_ne_bytes());
    b[2..].copy_from_slice(&value.to_ne_bytes());
    b
}

/// Where a monitor's events go: the socket layer provides it (an internal
/// PAIR, see `socket::monitor`), so the I/O threads that emit events need
/// nothing from the socket layer.
pub(crate) trait EventSink: Send {
    /// Sends one event; never blocks on the reader.
    fn send(&self, event: u16, value: u32, endpoint: &str);
}

struct Slot {
    sink: Box<dyn EventSink>,
    events: u32,
}

impl Slot {
    fn send(&self, event: u16, value: u32, endpoint: &str) {
        if self.events & u32::from(event) != 0 {
            self.sink.send(event, value, endpoint);
        }
    }
}

/// A socket's monitor slot; see the module docs.
#[derive(Default)]
pub(crate) struct Monitor {
    /// Events of the current sink; 0 when there is none.
    mask: AtomicU32,
    sink: Mutex<Option<Slot>>,
}

impl Monitor {
    pub(crate) fn new() -> Arc<Monitor> {
        Arc::new(Monitor::default())
    }

    fn lock(&self) -> MutexGuard<'_, Option<Slot>> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether any of `events` would be sent now.
    #[inline]
    pub(crate) fn wants(&self, event: u16) -> bool {
        self.mask.load(Ordering::Relaxed) & u32::from(event) != 0
    }

    /// Publish one event if a monitor wants it; never blocks on the reader.
    #[inline]
    pub(crate) fn emit(&self, event: u16, value: u32, endpoint: &str) {
        if self.wants(event) {
            self.emit_slow(event, value, endpoint);
        }
    }

    #[cold]
    fn emit_slow(&self, event: u16, value: u32, endpoint: &str) {
        if let Some(sink) = self.lock().as_ref() {
            sink.send(event, value, endpoint);
        }
    }

    /// Sends this monitor's events to `sink` from now on, filtered by
    /// `events`; the caller stopped any previous sink first.
    pub(crate) fn install(&self, sink: Box<dyn EventSink>, events: u32) {
        let old = self.lock().replace(Slot { sink, events });
        self.mask.store(events, Ordering::Relaxed);
        drop(old);
    }

    /// Stop monitoring (sending MONITOR_STOPPED if wanted) and close the PAIR.
    pub(crate) fn stop(&self) {
        let old = {
            let mut slot = self.lock();
            self.mask.store(0, Ordering::Relaxed);
            slot.take()
        };
        // Closed outside the lock: closing may talk to the context.
        if let Some(slot) = old {
            slot.send(monitor_event::MONITOR_STOPPED, 0, "");
            drop(slot);
        }
    }
}
