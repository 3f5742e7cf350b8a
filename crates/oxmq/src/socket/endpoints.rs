//! A socket's endpoints: bind, connect, unbind and disconnect over every
//! transport, and the pipes and links each connection gets.

use super::core::Core;
use crate::channel::pipes::{new_pipe_key, EndpointId, SocketPipe};
use crate::error::{Error, Result};
use crate::io::{EnginePipe, SocketLink};
use crate::pipe::{pipe, pipe_conflate, WakeSlot};
use crate::transport::endpoint::{parse_endpoint, term_transport, Endpoint};
use crate::transport::inproc;
use crate::transport::multicast;
use oxmq_proto::SocketType;
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How an endpoint came to be.
pub(super) enum EndpointKind {
    Bound,
    Connected,
    /// pgm/epgm/norm: libzmq files bind and connect alike, so both
    /// zmq_unbind and zmq_disconnect find it.
    Multicast,
}

pub(super) struct EndpointRecord {
    pub(super) id: EndpointId,
    pub(super) kind: EndpointKind,
    /// What the caller passed, and the resolved form (LAST_ENDPOINT).
    pub(super) given: String,
    pub(super) resolved: String,
    pub(super) inproc_name: Option<String>,
    /// A tcp/ipc listener's fd (for the CLOSED monitor event at close).
    pub(super) listener_fd: Option<RawFd>,
}

impl Core {
    pub(super) fn link(&self, endpoint_id: EndpointId, endpoint: &str) -> SocketLink {
        SocketLink {
            endpoint: endpoint.into(),
            monitor: self.monitor.clone(),
            socket_id: self.id,
            // A raw ROUTER's connections are STREAM's (raw engine, per-connection pipes).
            socket_type: if self.router_raw { SocketType::Stream } else { self.kind },
            mailbox: self.mailbox.clone(),
            options: Arc::new(self.options.clone()),
            linger_ms: self.linger_ms.clone(),
            disconnected: self.disconnected.clone(),
            endpoint_id,
            zap: self.ctx.zap_route(),
        }
    }

    pub(super) fn new_endpoint_id(&mut self) -> EndpointId {
        let id = self.next_endpoint;
        self.next_endpoint += 1;
        id
    }

    pub(super) fn bind(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.udp_endpoint(endpoint, addr, true);
        }
        if let Some((proto, addr)) = multicast_scheme(endpoint) {
            return self.multicast_endpoint(endpoint, proto, addr);
        }
        let parsed = parse_endpoint(endpoint)?;
        let id = self.new_endpoint_id();
        let mut listener_fd = None;
        let (resolved, inproc_name) = match &parsed {
            Endpoint::Inproc(name) => {
                let pending = inproc::bind(&self.ctx.inproc, name, self.inproc_peer(id))?;
                for p in pending {
                    self.attach(p);
                }
                (endpoint.to_string(), Some(name.clone()))
            }
            _ => {
                let link = self.link(id, endpoint);
                let (resolved, fd) = self.ctx.io()?.bind(&parsed, endpoint, link)?;
                listener_fd = Some(fd);
                (resolved, None)
            }
        };
        if inproc_name.is_none() {
            self.signal_io_endpoint();
        }
        self.last_endpoint = resolved.clone();
        self.endpoints.push(EndpointRecord {
            id,
            kind: EndpointKind::Bound,
            given: endpoint.to_string(),
            resolved,
            inproc_name,
            listener_fd,
        });
        Ok(())
    }

    pub(super) fn connect(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.udp_endpoint(endpoint, addr, false);
        }
        if let Some((proto, addr)) = multicast_scheme(endpoint) {
            return self.multicast_endpoint(endpoint, proto, addr);
        }
        let parsed = parse_endpoint(endpoint)?;
        let id = self.new_endpoint_id();
        match &parsed {
            Endpoint::Inproc(name) => {
                let mut pipe = inproc::connect(&self.ctx.inproc, name, self.inproc_peer(id))?;
                pipe.connect_routing_id = self.options.connect_routing_id.take().map(Into::into);
                self.attach(pipe);
            }
            _ => {
                let link = self.link(id, endpoint);
                // A STREAM's connect gets its pipe (and routing id) at once,
                // kept across reconnects, as in libzmq; ROUTER_RAW's peers
                // come and go with their connections.
                let engine_pipe = if self.options.immediate || self.router_raw {
                    None
                } else {
                    // Queue messages before the connection exists, as libzmq does.
                    let (mut socket_side, engine_side) = self.pipe_pair(id);
                    // CONNECT_ROUTING_ID names the next connection only (libzmq).
                    socket_side.connect_routing_id = self.options.connect_routing_id.take().map(Into::into);
                    self.attach(socket_side);
                    Some(engine_side)
                };
                let key = engine_pipe.as_ref().map(|p| p.key);
                if let Err(e) = self.ctx.io()?.connect(&parsed, link, engine_pipe) {
                    if let Some(&pid) = key.as_ref().and_then(|k| self.key_to_pipe.get(k)) {
                        self.pipes.mark_dead(pid);
                        self.reap();
                    }
                    return Err(e);
                }
                self.signal_io_endpoint();
            }
        }
        self.last_endpoint = endpoint.to_string();
        self.endpoints.push(EndpointRecord {
            id,
            kind: EndpointKind::Connected,
            given: endpoint.to_string(),
            resolved: endpoint.to_string(),
            inproc_name: None,
            listener_fd: None,
        });
        Ok(())
    }

    /// libzmq's socket gets a command from its I/O thread for each tcp/ipc
    /// bind and connect, so its `ZMQ_FD` is readable straight after them
    /// and stays so until the socket next looks at its state. Programs
    /// that wait on the descriptor before touching the socket rely on that:
    /// the look (EVENTS, recv) is what arms the wake-up for the first
    /// message on a fresh pipe. Only the descriptor is signalled; no
    /// command is queued, so sends and receives stay on their fast path.
    pub(super) fn signal_io_endpoint(&self) {
        self.mailbox.signaler().signal();
    }

    /// Draft RADIO/DISH: a `udp://` endpoint. As in libzmq, only a DISH binds
    /// and only a RADIO connects (ENOCOMPATPROTO otherwise); the pipe is
    /// served by a packet engine in the I/O thread (see `transport::udp`).
    pub(super) fn udp_endpoint(&mut self, endpoint: &str, addr: &str, bind: bool) -> Result<()> {
        use crate::transport::{dgram, udp};
        let expected = if bind { SocketType::Dish } else { SocketType::Radio };
        // Draft DGRAM binds udp:// (and, as in libzmq, cannot connect it).
        let dgram = self.kind == SocketType::Dgram && bind;
        if self.kind != expected && !dgram {
            return Err(Error::NoCompatProtocol);
        }
        let parsed = udp::parse(addr, bind, self.options.ipv6)?;
        let id = self.new_endpoint_id();
        let (mut socket_side, engine_side) = self.pipe_pair(id);
        socket_side.all_groups = true;
        // The name the endpoint is filed under for unbind/disconnect.
        let (engine, filed_as) = if bind {
            let sock = udp::open_receiver(&parsed)?;
            let engine = if dgram { dgram::engine(sock, engine_side) } else { udp::dish(sock, engine_side) };
            // libzmq 4.3.5 files a udp bind under an empty name, so no
            // zmq_unbind finds it (ENOENT; "" itself is EINVAL): measured.
            (engine, String::new())
        } else {
            let sock = udp::open_sender(&parsed, &self.options)?;
            (udp::radio(sock, parsed.target, engine_side), endpoint.to_string())
        };
        self.ctx.io()?.add_packet_engine(engine);
        self.attach(socket_side);
        // libzmq's LAST_ENDPOINT for udp (bind and connect) is the address
        // as given, without `udp://` and with a `*` port unresolved.
        self.last_endpoint = addr.to_string();
        self.endpoints.push(EndpointRecord {
            id,
            kind: if bind { EndpointKind::Bound } else { EndpointKind::Connected },
            given: filed_as.clone(),
            resolved: filed_as,
            inproc_name: None,
            listener_fd: None,
        });
        Ok(())
    }

    /// pgm://, epgm://, norm://: as in libzmq, PUB/XPUB/SUB/XSUB only
    /// (ENOCOMPATPROTO otherwise), bind the same as connect, the address
    /// checked at once (EINVAL), and one pipe that takes every message (a
    /// publisher cannot hear subscriptions over multicast).
    fn multicast_endpoint(&mut self, endpoint: &str, proto: multicast::Proto, addr: &str) -> Result<()> {
        // libzmq: an empty address is EINVAL, then a transport not built in
        // EPROTONOSUPPORT, before the socket type is looked at.
        if !addr.is_empty() {
            multicast::load(proto)?;
        }
        let sender = match self.kind {
            SocketType::Pub | SocketType::XPub => true,
            SocketType::Sub | SocketType::XSub => false,
            _ => return Err(Error::NoCompatProtocol),
        };
        if addr.is_empty() {
            return Err(Error::Invalid("endpoint has an empty address"));
        }
        multicast::check(proto, addr)?;
        let id = self.new_endpoint_id();
        let (mut socket_side, engine_side) = self.pipe_pair(id);
        socket_side.all_groups = true;
        let engine = multicast::engine(proto, addr, sender, &self.options, engine_side)?;
        self.ctx.io()?.add_packet_engine(engine);
        self.attach(socket_side);
        // libzmq files the endpoint under the URI as given.
        self.last_endpoint = endpoint.to_string();
        self.endpoints.push(EndpointRecord {
            id,
            kind: EndpointKind::Multicast,
            given: endpoint.to_string(),
            resolved: endpoint.to_string(),
            inproc_name: None,
            listener_fd: None,
        });
        Ok(())
    }

    /// A pipe pair between this socket and an I/O-thread engine.
    pub(super) fn pipe_pair(&self, endpoint: EndpointId) -> (SocketPipe, EnginePipe) {
        let key = new_pipe_key();
        let socket_reader_wake = WakeSlot::new();
        let socket_writer_wake = WakeSlot::new();
        let engine_reader_wake = WakeSlot::new();
        let engine_writer_wake = WakeSlot::new();
        let (out_w, out_r) = if self.options.conflates_sending(self.kind) {
            pipe_conflate(engine_reader_wake, socket_writer_wake)
        } else {
            pipe(self.options.sndhwm_limit(), engine_reader_wake, socket_writer_wake)
        };
        let (in_w, in_r) = pipe(self.options.rcvhwm_limit(), socket_reader_wake, engine_writer_wake);
        let ep = EnginePipe::new(out_r, in_w, key);
        let mut sp = SocketPipe::new(out_w, in_r, endpoint, key);
        sp.out.set_direct(ep.direct.clone());
        (sp, ep)
    }

    pub(super) fn inproc_peer(&self, endpoint: EndpointId) -> inproc::InprocPeer {
        inproc::InprocPeer {
            socket_id: self.id,
            // A raw ROUTER's connections are STREAM's (raw engine, per-connection pipes).
            socket_type: if self.router_raw { SocketType::Stream } else { self.kind },
            mailbox: self.mailbox.clone(),
            sndhwm: self.options.sndhwm_limit(),
            rcvhwm: self.options.rcvhwm_limit(),
            routing_id: self.options.routing_id.clone(),
            endpoint,
            conflate_out: self.options.conflates_sending(self.kind),
            disconnect_msg: if self.options.receives_disconnect_msg(self.kind) && !self.router_raw {
                self.options.disconnect_msg.clone()
            } else {
                Vec::new()
            },
            hello: if self.options.sends_hello(self.kind) && !self.router_raw {
                self.options.hello_msg.clone()
            } else {
                Vec::new()
            },
        }
    }

    pub(super) fn remove_endpoint(&mut self, endpoint: &str, bound: bool) -> Result<()> {
        self.check_term()?;
        if term_transport(endpoint)? == "udp"
            && !matches!(self.kind, SocketType::Radio | SocketType::Dish | SocketType::Dgram)
        {
            return Err(Error::NoCompatProtocol);
        }
        let pos = self
            .endpoints
            .iter()
            .position(|e| {
                (matches!(e.kind, EndpointKind::Bound) == bound || matches!(e.kind, EndpointKind::Multicast))
                    && (e.resolved == endpoint || e.given == endpoint && !(bound && is_wildcard(endpoint)))
            })
            .ok_or(Error::NoSuchEndpoint)?;
        let rec = self.endpoints.remove(pos);
        if !bound {
            // libzmq marks the socket on zmq_disconnect only (not unbind).
            self.disconnected.store(true, Ordering::Relaxed);
        }
        if let Some(name) = &rec.inproc_name {
            inproc::unbind(&self.ctx.inproc, name, self.id);
        } else if let Ok(io) = self.ctx.io() {
            io.close_endpoint(self.id, rec.id);
        }
        for id in self.pipes.ids() {
            if self.pipes.get(id).endpoint == rec.id {
                self.pipes.mark_dead(id);
            }
        }
        self.reap();
        Ok(())
    }
}

/// A bind endpoint with an ephemeral port or path (`tcp://host:*`,
/// `ipc://*`): libzmq keys binds by what they resolved to, so unbinding the
/// wildcard form finds nothing (ENOENT).
pub(super) fn is_wildcard(endpoint: &str) -> bool {
    matches!(
        parse_endpoint(endpoint),
        Ok(Endpoint::Tcp(crate::transport::endpoint::TcpAddr { port: None, .. }))
            | Ok(Endpoint::Ipc(crate::transport::endpoint::IpcAddr::Wildcard))
    )
}

/// `pgm://`, `epgm://` or `norm://`: the transport and the address after it.
fn multicast_scheme(endpoint: &str) -> Option<(multicast::Proto, &str)> {
    let (scheme, addr) = endpoint.split_once("://")?;
    Some((multicast::Proto::from_scheme(scheme)?, addr))
}
