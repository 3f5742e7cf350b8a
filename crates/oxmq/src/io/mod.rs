//! I/O threads: one `mio` poll loop per thread, owning listeners, connect-side
//! sessions, one stream engine per tcp/ipc/ws connection, and the packet
//! engines of udp, DGRAM, pgm/epgm and norm endpoints.
//!
//! Other threads talk to an I/O thread in two ways, both cheap:
//! - commands (bind, connect, close...) are queued under a mutex and the
//!   loop is woken through a `mio::Waker`;
//! - pipe activity wakes an engine through [`TokenWaker`], which queues the
//!   engine's token and wakes the loop only if it is asleep in `poll`, so a
//!   busy I/O thread takes no syscall per wake-up.
//!
//! Nothing about a connection's failure is reported to the socket except
//! through its pipe going away, and to its monitor (if one is set) as events.

mod engine;
mod stream;
#[cfg(test)]
mod tests;
mod thread;
mod tuning;
mod zap;

use crate::channel::mailbox::Mailbox;
use crate::channel::pipes::EndpointId;
use crate::error::Error;
use crate::monitor::{monitor_event, Monitor};
use crate::options::Options;
use crate::transport::endpoint::Endpoint;
use crate::transport::packet::PacketEngine;
use crate::transport::{ipc, tcp, ws};
use oxmq_proto::SocketType;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;

use thread::{Cmd, ListenSock, Shared};
pub(crate) use tuning::{ThreadTuning, DFLT as THREAD_DFLT};
pub(crate) use zap::ZapRoute;
// What the I/O thread takes from a socket.
pub(crate) use crate::channel::pipes::EnginePipe;

/// What an I/O thread needs to know about the socket a listener or connecter serves.
#[derive(Clone)]
pub(crate) struct SocketLink {
    pub(crate) socket_id: u64,
    pub(crate) socket_type: SocketType,
    pub(crate) mailbox: Arc<Mailbox>,
    /// Snapshot of the socket's options at bind/connect time.
    pub(crate) options: Arc<Options>,
    /// The socket's current LINGER in ms (-1 infinite), read when the socket closes.
    pub(crate) linger_ms: Arc<AtomicI64>,
    /// zmq_disconnect has been called on the socket (RECONNECT_STOP_AFTER_DISCONNECT).
    pub(crate) disconnected: Arc<AtomicBool>,
    pub(crate) endpoint_id: EndpointId,
    /// The endpoint as monitor events name it: the resolved bind address,
    /// or the address given to connect (set by [`IoThread::bind`] for binds).
    pub(crate) endpoint: Arc<str>,
    /// The socket's monitor slot (shared, so a monitor set later applies).
    pub(crate) monitor: Arc<Monitor>,
    /// Where handshakes find the ZAP handler: the socket's context, seen
    /// only as that. Weak: the context owns this I/O thread.
    pub(crate) zap: Weak<dyn ZapRoute>,
}

/// Handle to one I/O thread. Dropping it stops the thread.
pub(crate) struct IoThread {
    shared: Arc<Shared>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl IoThread {
    /// Starts I/O thread number `n`, named and tuned from the context's THREAD_* options.
    pub(crate) fn start(n: usize, tuning: ThreadTuning) -> io::Result<IoThread> {
        let (poller, shared) = thread::Poller::new()?;
        let name = tuning.name(&format!("IO/{n}"));
        // Named by itself once tuned (libzmq's order), not by the builder,
        // which would name it before its affinity is set.
        let handle = std::thread::Builder::new().spawn(move || {
            tuning.apply_to_current_thread(&name);
            poller.run()
        })?;
        Ok(IoThread { shared, handle: Mutex::new(Some(handle)) })
    }

    /// Creates the listener now, in the caller's thread (so bind errors are
    /// returned at once), then hands it to the I/O thread. Returns the
    /// resolved endpoint for `ZMQ_LAST_ENDPOINT` and the listener's fd.
    /// Emits LISTENING or BIND_FAILED (`given` names the endpoint of the latter).
    pub(crate) fn bind(
        &self,
        endpoint: &Endpoint,
        given: &str,
        mut link: SocketLink,
    ) -> Result<(String, std::os::fd::RawFd), Error> {
        let res = match endpoint {
            Endpoint::Tcp(addr) => tcp::bind(addr, &link.options).map(|(l, s)| (ListenSock::Tcp(l), s, None)),
            Endpoint::Ipc(addr) => ipc::bind(addr, &link.options).map(|(l, s, c)| (ListenSock::Unix(l), s, c)),
            Endpoint::Inproc(_) => return Err(Error::Invalid("inproc endpoints do not use an I/O thread")),
            // ws/wss: a tcp listener whose connections get a WebSocket stage.
            Endpoint::Ws(w) => ws::WsListen::new(w, &link.options, link.socket_type).and_then(|wl| {
                let (l, s) = tcp::bind(&w.tcp, &link.options)?;
                // libzmq names a ws listener without its path.
                let scheme = if w.tls { "wss://" } else { "ws://" };
                let s = format!("{scheme}{}", s.strip_prefix("tcp://").unwrap_or(&s));
                Ok((ListenSock::Ws(l, Arc::new(wl)), s, None))
            }),
        };
        let (sock, resolved, cleanup) = match res {
            Ok(r) => r,
            Err(e) => {
                link.monitor.emit(monitor_event::BIND_FAILED, e.errno() as u32, given);
                return Err(e);
            }
        };
        link.endpoint = resolved.as_str().into();
        let fd = sock.fd();
        link.monitor.emit(monitor_event::LISTENING, fd as u32, &resolved);
        self.shared.command(Cmd::Listen { sock, link, cleanup });
        Ok((resolved, fd))
    }

    /// Validates `endpoint` and starts a session that connects (and
    /// reconnects) to it. `pipe` is the socket's queue when IMMEDIATE is off.
    pub(crate) fn connect(&self, endpoint: &Endpoint, link: SocketLink, pipe: Option<EnginePipe>) -> Result<(), Error> {
        if let Endpoint::Inproc(_) = endpoint {
            return Err(Error::Invalid("inproc endpoints do not use an I/O thread"));
        }
        endpoint.check_connectable()?;
        if let Endpoint::Ws(w) = endpoint {
            // Refuse unusable WSS_* options now, not at each reconnect.
            ws::WsConnect::new(w, &link.options, link.socket_type)?;
        }
        // An IPv6 address without ZMQ_IPV6 is accepted here and never
        // resolves, so the connecter keeps retrying: libzmq defers tcp
        // resolution to the connect attempt in the same way.
        self.shared.command(Cmd::Connect { endpoint: endpoint.clone(), link, pipe: pipe.map(Box::new) });
        Ok(())
    }

    /// A udp, DGRAM, pgm/epgm or norm endpoint's engine, its descriptors
    /// already open (so their errors were the caller's).
    pub(crate) fn add_packet_engine(&self, engine: Box<dyn PacketEngine>) {
        self.shared.command(Cmd::Packet(engine));
    }

    /// unbind/disconnect: close that listener or session and its connections.
    pub(crate) fn close_endpoint(&self, socket_id: u64, endpoint: EndpointId) {
        self.shared.command(Cmd::CloseEndpoint { socket_id, endpoint_id: endpoint });
    }

    /// The socket is closing: stop its listeners and reconnects; its
    /// connections finish (LINGER) once it drops its pipe ends.
    pub(crate) fn socket_closed(&self, socket_id: u64) {
        self.shared.command(Cmd::SocketClosed { socket_id });
    }

    /// Block until the thread has no listeners, sessions or connections left.
    pub(crate) fn wait_idle(&self) {
        self.shared.wait_idle();
    }

    /// Stop and join the thread (idempotent).
    pub(crate) fn shutdown(&self) {
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            self.shared.command(Cmd::Stop);
            let _ = h.join();
        }
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        self.shutdown();
    }
}
