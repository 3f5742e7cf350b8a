//! STREAM: raw TCP peers (HTTP clients, telnet, ...), one pipe per
//! connection, addressed by a routing id the socket gives each connection.
//!
//! Received messages are two frames, `[routing id][bytes as read]`. With
//! STREAM_NOTIFY (default on) a connection's arrival and its departure are
//! each announced as `[routing id][empty]`: the engine puts the empty message
//! in the pipe, as libzmq's raw engine does, so a notice carries the
//! connection's properties. A connect's pipe and routing id exist from the
//! `connect` on and outlive reconnects. Sending is `[routing id][bytes]`;
//! MORE on the data frame is ignored, and an empty data frame closes that
//! connection once what was queued before it is written (libzmq may drop
//! that queued data; oxmq writes it), with no disconnect notice after.

use super::fq::Fq;
use super::{bool_value, Pattern};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;
use crate::options::opt;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};

pub(crate) struct Stream {
    fq: Fq,
    by_id: HashMap<Bytes, PipeId>,
    /// Routing id per pipe slot, and whether the user closed it.
    peers: Vec<Option<(Bytes, bool)>>,
    next_id: u32,
    /// The id generated for the pipe attached last: libzmq's STREAM copies
    /// it into its ROUTING_ID option (libzmq's own tests read it back).
    generated: Option<Bytes>,
    /// Whole messages ready for `recv`: id frame (MORE) then data frame.
    ready: VecDeque<Msg>,
    /// Sending: the id frame has been seen; where the data frame goes.
    more_out: bool,
    current_out: Option<PipeId>,
    // ROUTER_RAW: a ROUTER in this raw mode (see `raw_router`).
    router_raw: bool,
    mandatory: bool,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            fq: Fq::default(),
            by_id: HashMap::new(),
            peers: Vec::new(),
            // libzmq starts generated ids at a random value; any start works.
            next_id: super::reqrep::random_u32(),
            generated: None,
            ready: VecDeque::new(),
            more_out: false,
            current_out: None,
            router_raw: false,
            mandatory: false,
        }
    }

    /// A ROUTER with ROUTER_RAW on, as libzmq 4.3.5 has it: STREAM's raw
    /// connections and notices (always on), with ROUTER's sending rules: a
    /// lone frame is ignored, an unknown routing id drops the message unless
    /// ROUTER_MANDATORY (EHOSTUNREACH), and the ROUTER options stay settable.
    pub(crate) fn raw_router() -> Stream {
        Stream { router_raw: true, ..Stream::new() }
    }

    fn peer(&self, id: PipeId) -> Option<&(Bytes, bool)> {
        self.peers.get(id.0 as usize).and_then(|p| p.as_ref())
    }

    fn set_peer(&mut self, id: PipeId, v: Option<(Bytes, bool)>) {
        let i = id.0 as usize;
        if self.peers.len() <= i {
            self.peers.resize(i + 1, None);
        }
        self.peers[i] = v;
    }

    /// libzmq's generated ids: a zero byte then a 32-bit big-endian counter.
    fn generate_id(&mut self) -> Bytes {
        loop {
            let mut buf = [0u8; 5];
            buf[1..].copy_from_slice(&self.next_id.to_be_bytes());
            self.next_id = self.next_id.wrapping_add(1);
            let id = Bytes::copy_from_slice(&buf);
            if !self.by_id.contains_key(&id) {
                return id;
            }
        }
    }

    /// Pull the next message from a peer into `ready`.
    fn fetch(&mut self, pipes: &mut Pipes) -> Result<(), Error> {
        let (m, id, rid) = loop {
            let (m, id) = self.fq.recv(pipes)?;
            match self.peer(id) {
                Some((_, true)) => continue, // closed by us: dropped
                p => break (m, id, p.map(|p| p.0.clone()).unwrap_or_default()),
            }
        };
        let _ = id;
        self.ready.push_back(Msg::from_bytes(rid).with_more(true));
        self.ready.push_back(m.with_more(false));
        Ok(())
    }
}

impl Pattern for Stream {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        let alias = pipes.get_mut(id).connect_routing_id.take().filter(|a| !self.by_id.contains_key(a));
        let rid = match alias {
            Some(a) => a,
            None => {
                let rid = self.generate_id();
                if !self.router_raw {
                    self.generated = Some(rid.clone());
                }
                rid
            }
        };
        self.by_id.insert(rid.clone(), id);
        self.set_peer(id, Some((rid, false)));
        self.fq.attach(id);
    }

    fn take_generated_routing_id(&mut self) -> Option<Bytes> {
        self.generated.take()
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.detach(id);
        if let Some((rid, _)) = self.peer(id).cloned() {
            if self.by_id.get(&rid) == Some(&id) {
                self.by_id.remove(&rid);
            }
        }
        self.set_peer(id, None);
        if self.current_out == Some(id) {
            self.current_out = None;
        }
    }

    fn read_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.activated(id);
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if !self.more_out {
            // ROUTER's rule: a lone frame is dropped and does not start a message.
            if self.router_raw && !msg.more() {
                return Ok(());
            }
            // The routing-id frame; without MORE it is ignored (libzmq).
            if msg.more() {
                let Some(&id) = self.by_id.get(msg.as_slice()) else {
                    if self.router_raw && !self.mandatory {
                        // The data frame that follows goes nowhere.
                        self.more_out = true;
                        return Ok(());
                    }
                    return Err((msg, Error::HostUnreachable));
                };
                if !pipes.get_mut(id).out.check_write() {
                    return Err((msg, Error::Again));
                }
                self.current_out = Some(id);
            }
            self.more_out = true;
            return Ok(());
        }
        self.more_out = false;
        let Some(id) = self.current_out.take() else {
            return Ok(());
        };
        if msg.is_empty() {
            // Close this connection: the empty message goes down the pipe
            // behind what was queued; the engine writes all that, then closes
            // (whatever LINGER says: the socket itself stays open). The id is
            // unreachable at once, and what the peer still sends is dropped.
            if let Some(p) = self.peers.get_mut(id.0 as usize).and_then(|p| p.as_mut()) {
                p.1 = true;
                let rid = p.0.clone();
                self.by_id.remove(&rid);
            }
            let p = pipes.get_mut(id);
            p.out.write(Msg::new());
            p.out.flush();
            return Ok(());
        }
        let p = pipes.get_mut(id);
        p.out.write(msg.with_more(false));
        p.out.flush();
        Ok(())
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if self.ready.is_empty() {
            self.fetch(pipes)?;
        }
        self.ready.pop_front().ok_or(Error::Again)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        !self.ready.is_empty() || self.fetch(pipes).is_ok()
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        match option {
            opt::STREAM_NOTIFY => {
                let v = super::int_value(value)?;
                if !(0..=1).contains(&v) {
                    return Err(Error::Invalid("STREAM_NOTIFY must be 0 or 1"));
                }
                // Kept in the socket's options for the engines (raw_notify).
            }
            opt::ROUTER_MANDATORY if self.router_raw => self.mandatory = bool_value(value)?,
            // Validated as on any ROUTER; a raw connection has no handshake
            // to probe or routing id to hand over.
            opt::ROUTER_HANDOVER | opt::PROBE_ROUTER | opt::ROUTER_RAW if self.router_raw => {
                bool_value(value)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
