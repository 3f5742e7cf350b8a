//! DEALER and ROUTER (RFC 28).

use super::compose::{discard_input, Composed, Rules};
use super::fq::Fq;
use super::lb::Lb;
use super::reqrep::{random_u32, send_probe};
use super::{bool_value, Pattern};
use crate::channel::direct::DirectHead;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::monitor::drop_reason;
use crate::msg::Msg;
use crate::options::opt;
use bytes::Bytes;
use std::collections::HashMap;

/// DEALER: load-balanced send, fair-queued receive, no envelopes.
pub(crate) type Dealer = Composed<Lb, Fq, ProbeRouter>;

/// DEALER's one rule: with PROBE_ROUTER, every new pipe first gets an empty
/// message.
#[derive(Default)]
pub(crate) struct ProbeRouter {
    on: bool,
}

impl Rules for ProbeRouter {
    fn attached(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.on {
            send_probe(id, pipes);
        }
    }

    fn set_option(&mut self, option: i32, value: &[u8]) -> Result<bool, Error> {
        match option {
            opt::PROBE_ROUTER => self.on = bool_value(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// What ROUTER knows about one pipe.
#[derive(Clone)]
enum PeerState {
    /// Its routing-id frame has not arrived yet.
    Anonymous,
    /// Reachable under this id.
    Known(Bytes),
    /// Its id was already taken (no ROUTER_HANDOVER): ignored, input discarded.
    Rejected,
}

/// ROUTER: every received message is prefixed with the routing id of the
/// pipe it came from; the first frame of every sent message names the pipe.
pub(crate) struct Router {
    fq: Fq,
    /// Per pipe, indexed by `PipeId.0`.
    peers: Vec<Option<PeerState>>,
    by_id: HashMap<Bytes, PipeId>,
    anonymous: Vec<PipeId>,
    /// Generated ids are 0x00 + this counter (big-endian), as libzmq.
    next_id: u32,
    mandatory: bool,
    handover: bool,
    probe_router: bool,

    /// The routing-id frame `has_in` prepared.
    id_frame: Option<Msg>,
    /// The first frame of a message, to hand out after its routing-id frame.
    prefetched: Option<Msg>,
    /// Receiving a multipart message (after its id frame).
    more_in: bool,
    /// The pipe of the message being received.
    current_in: Option<PipeId>,
    /// Close `current_in` once its message is fully received (handover).
    terminate_current_in: bool,

    /// Sending a message: its routing-id frame has been consumed.
    more_out: bool,
    /// The pipe the message being sent goes to (`None`: dropped).
    current_out: Option<PipeId>,
    /// No frame of that message has gone into its pipe yet: its last frame
    /// may be written to the connection directly (`direct_target`).
    fresh_out: bool,
}

impl Router {
    /// The pipe of the peer with `routing_id`, learning the ids of
    /// connections that sent theirs late first if need be.
    fn find_peer(&mut self, routing_id: &[u8], pipes: &mut Pipes) -> Option<PipeId> {
        let target = self.by_id.get(routing_id).copied();
        if target.is_some() || self.anonymous.is_empty() {
            return target;
        }
        self.identify_anonymous(pipes);
        self.by_id.get(routing_id).copied()
    }

    pub(crate) fn new() -> Router {
        Router {
            fq: Fq::default(),
            peers: Vec::new(),
            by_id: HashMap::new(),
            anonymous: Vec::new(),
            next_id: random_u32(),
            mandatory: false,
            handover: false,
            probe_router: false,
            id_frame: None,
            prefetched: None,
            more_in: false,
            current_in: None,
            terminate_current_in: false,
            fresh_out: false,
            more_out: false,
            current_out: None,
        }
    }

    fn state(&self, id: PipeId) -> Option<&PeerState> {
        self.peers.get(id.0 as usize).and_then(|s| s.as_ref())
    }

    fn set_state(&mut self, id: PipeId, st: Option<PeerState>) {
        let i = id.0 as usize;
        if self.peers.len() <= i {
            self.peers.resize(i + 1, None);
        }
        self.peers[i] = st;
    }

    fn generate_id(&mut self) -> Bytes {
        let mut buf = [0u8; 5];
        buf[1..].copy_from_slice(&self.next_id.to_be_bytes());
        self.next_id = self.next_id.wrapping_add(1);
        Bytes::copy_from_slice(&buf)
    }

    /// Try to learn the routing id of an anonymous pipe. True when the pipe
    /// is no longer anonymous (identified or rejected).
    fn identify(&mut self, id: PipeId, pipes: &mut Pipes) -> bool {
        let p = pipes.get_mut(id);
        if let Some(alias) = p.connect_routing_id.clone() {
            // CONNECT_ROUTING_ID: the user named this peer; a peer's own id
            // frame is then ignored. libzmq asserts the alias is unused; here
            // the alias wins and a previous holder becomes unreachable by it.
            self.by_id.insert(alias.clone(), id);
            self.set_state(id, Some(PeerState::Known(alias)));
            self.fq.attach(id);
            return true;
        }
        if p.peer_routing_id.is_none() {
            // `check_read` absorbs a routing-id frame at the head.
            let has_data = p.check_read();
            if p.peer_routing_id.is_none() && !has_data {
                // Nothing yet; the reader is asleep, `read_activated` follows.
                return false;
            }
        }
        // Data without a routing-id frame counts as an empty id.
        let given = p.peer_routing_id.clone().filter(|b| !b.is_empty());
        let rid = match given {
            None => self.generate_id(),
            Some(rid) => {
                if let Some(&old) = self.by_id.get(&rid) {
                    if !self.handover {
                        // libzmq ignores a peer with a duplicate id.
                        self.set_state(id, Some(PeerState::Rejected));
                        discard_input(id, pipes);
                        return true;
                    }
                    // The new connection takes the id over; the old one gets a
                    // fresh id until it is closed.
                    let fresh = self.generate_id();
                    self.by_id.insert(fresh.clone(), old);
                    self.set_state(old, Some(PeerState::Known(fresh)));
                    if self.current_in == Some(old) {
                        self.terminate_current_in = true;
                    } else {
                        pipes.mark_dead(old);
                    }
                }
                rid
            }
        };
        self.by_id.insert(rid.clone(), id);
        self.set_state(id, Some(PeerState::Known(rid)));
        self.fq.attach(id);
        true
    }

    fn try_identify(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.identify(id, pipes) {
            self.anonymous.retain(|&p| p != id);
        }
    }

    fn identify_anonymous(&mut self, pipes: &mut Pipes) {
        let mut i = 0;
        while i < self.anonymous.len() {
            let id = self.anonymous[i];
            if self.identify(id, pipes) {
                self.anonymous.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// A message from `current_in` has been fully received.
    fn end_of_input_message(&mut self, pipes: &mut Pipes) {
        if self.terminate_current_in {
            self.terminate_current_in = false;
            if let Some(id) = self.current_in {
                pipes.mark_dead(id);
            }
        }
        self.current_in = None;
    }

    /// Read the next first frame and build its routing-id frame.
    fn fetch(&mut self, pipes: &mut Pipes) -> Result<(Msg, Msg), Error> {
        let (m, id) = self.fq.recv(pipes)?;
        let rid = match self.state(id) {
            Some(PeerState::Known(rid)) => Msg::from_bytes(rid.clone()),
            _ => Msg::new(),
        };
        self.current_in = Some(id);
        Ok((rid.with_more(true), m))
    }
}

impl Pattern for Router {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.probe_router {
            send_probe(id, pipes);
        }
        self.set_state(id, Some(PeerState::Anonymous));
        if !self.identify(id, pipes) {
            self.anonymous.push(id);
        }
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.detach(id);
        match self.state(id).cloned() {
            Some(PeerState::Known(rid)) if self.by_id.get(&rid) == Some(&id) => {
                self.by_id.remove(&rid);
            }
            Some(PeerState::Anonymous) => self.anonymous.retain(|&p| p != id),
            _ => {}
        }
        self.set_state(id, None);
        if self.current_out == Some(id) {
            self.current_out = None;
        }
        if self.current_in == Some(id) {
            self.current_in = None;
            self.terminate_current_in = false;
        }
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        match self.state(id) {
            Some(PeerState::Known(_)) => self.fq.activated(id),
            Some(PeerState::Anonymous) => self.try_identify(id, pipes),
            Some(PeerState::Rejected) => discard_input(id, pipes),
            None => {}
        }
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if !self.more_out {
            // The routing-id frame. Alone (no more frames) it is ignored.
            if !msg.more() {
                return Ok(());
            }
            let target = self.find_peer(msg.as_slice(), pipes);
            self.current_out = None;
            match target {
                Some(id) => {
                    let p = pipes.get_mut(id);
                    if p.out.check_write() {
                        self.current_out = Some(id);
                        self.fresh_out = true;
                    } else {
                        let gone = p.out.is_reader_gone();
                        if !gone {
                            pipes.note_full(id);
                        }
                        if self.mandatory {
                            let e = if gone { Error::HostUnreachable } else { Error::Again };
                            return Err((msg, e));
                        }
                        let reason = if gone { drop_reason::NO_ROUTE } else { drop_reason::HWM };
                        pipes.note_unrouted(reason, Some(id), msg.as_slice());
                    }
                }
                None if self.mandatory => return Err((msg, Error::HostUnreachable)),
                None => pipes.note_unrouted(drop_reason::NO_ROUTE, None, msg.as_slice()),
            }
            self.more_out = true;
            return Ok(());
        }
        let more = msg.more();
        self.fresh_out = false;
        if let Some(id) = self.current_out {
            let p = pipes.get_mut(id);
            p.out.write(msg);
            if !more {
                p.out.flush();
                self.current_out = None;
            }
        }
        self.more_out = more;
        Ok(())
    }

    fn direct_target(&mut self, _pipes: &mut Pipes, _head: &mut DirectHead) -> Option<PipeId> {
        if self.more_out && self.fresh_out {
            self.current_out
        } else {
            None
        }
    }

    fn direct_sent(&mut self, _id: PipeId, _pipes: &mut Pipes) {
        self.more_out = false;
        self.current_out = None;
        self.fresh_out = false;
    }

    fn route_of(&mut self, routing_id: &[u8], pipes: &mut Pipes) -> Option<PipeId> {
        if self.more_out {
            return None;
        }
        let id = self.find_peer(routing_id, pipes)?;
        pipes.get_mut(id).out.check_write().then_some(id)
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if let Some(idf) = self.id_frame.take() {
            return Ok(idf);
        }
        let m = match self.prefetched.take() {
            Some(m) => m,
            None if self.more_in => self.fq.recv(pipes)?.0,
            None => {
                let (idf, m) = self.fetch(pipes)?;
                self.prefetched = Some(m);
                return Ok(idf);
            }
        };
        self.more_in = m.more();
        if !self.more_in {
            self.end_of_input_message(pipes);
        }
        Ok(m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.more_in || self.prefetched.is_some() {
            return true;
        }
        match self.fetch(pipes) {
            Ok((idf, m)) => {
                self.id_frame = Some(idf);
                self.prefetched = Some(m);
                true
            }
            Err(_) => false,
        }
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if !self.mandatory || self.more_out {
            return true;
        }
        self.by_id.values().any(|&id| pipes.get_mut(id).out.check_write())
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        match option {
            opt::ROUTER_MANDATORY => self.mandatory = bool_value(value)?,
            opt::ROUTER_HANDOVER => self.handover = bool_value(value)?,
            opt::PROBE_ROUTER => self.probe_router = bool_value(value)?,
            // Turning it on is done by the socket (it switches to the raw pattern).
            opt::ROUTER_RAW => {
                bool_value(value)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use crate::msg::{Msg, FLAG_ROUTING_ID};
    use crate::options::opt;
    use oxmq_proto::SocketType;

    #[test]
    fn dealer_balances_out_fair_queues_in_blocks_at_hwm() {
        let mut h = Harness::new(SocketType::Dealer);
        assert_eq!(h.send(&[b"x"]), Err(Error::Again));
        let mut a = h.connect(1);
        let mut b = h.connect(1);
        h.send(&[b"1", b"1b"]).unwrap();
        h.send(&[b"2"]).unwrap();
        assert_eq!(h.send(&[b"3"]), Err(Error::Again));
        assert!(!h.has_out());
        assert_eq!(a.msgs(), vec![m(&[b"1", b"1b"])]);
        assert_eq!(b.msgs(), vec![m(&[b"2"])]);
        a.send(&mut h, &[b"a"]);
        b.send(&mut h, &[b"b", b"bb"]);
        assert_eq!(h.recv().unwrap(), m(&[b"a"]));
        assert_eq!(h.recv().unwrap(), m(&[b"b", b"bb"]));
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn dealer_probe_router() {
        let mut h = Harness::new(SocketType::Dealer);
        h.set_int(opt::PROBE_ROUTER, 1).unwrap();
        let mut a = h.connect(0);
        assert_eq!(a.msgs(), vec![m(&[b""])]);
    }

    #[test]
    fn router_prefixes_given_and_generated_ids_and_routes_replies() {
        let mut h = Harness::new(SocketType::Router);
        let mut named = h.connect_with(0, Some(b"peer-1"));
        let mut anon = h.connect_with(0, Some(b""));
        let mut anon2 = h.connect_with(0, Some(b""));
        named.send(&mut h, &[b"hi", b"there"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"peer-1", b"hi", b"there"]));
        anon.send(&mut h, &[b"x"]);
        let got = h.recv().unwrap();
        let gen = got[0].clone();
        assert_eq!(gen.len(), 5);
        assert_eq!(gen[0], 0);
        assert_eq!(got[1], b"x");
        anon2.send(&mut h, &[b"y"]);
        let gen2 = h.recv().unwrap()[0].clone();
        assert_eq!(
            u32::from_be_bytes(gen2[1..].try_into().unwrap()),
            u32::from_be_bytes(gen[1..].try_into().unwrap()).wrapping_add(1)
        );
        h.send(&[b"peer-1", b"reply"]).unwrap();
        h.send(&[&gen, b"r1", b"r2"]).unwrap();
        assert_eq!(named.msgs(), vec![m(&[b"reply"])]);
        assert_eq!(anon.msgs(), vec![m(&[b"r1", b"r2"])]);
        assert!(anon2.msgs().is_empty());
        assert!(h.has_out());
    }

    #[test]
    fn router_drops_unroutable_or_reports_with_mandatory() {
        let mut h = Harness::new(SocketType::Router);
        let mut a = h.connect_with(0, Some(b"A"));
        h.send(&[b"nobody", b"lost"]).unwrap();
        h.send(&[b"A"]).unwrap(); // id alone: ignored
        h.send(&[b"A", b"ok"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"ok"])]);
        h.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
        assert_eq!(h.send(&[b"nobody", b"lost"]), Err(Error::HostUnreachable));
        h.send(&[b"A", b"ok2"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"ok2"])]);
        a.close();
        assert_eq!(h.send(&[b"A", b"gone"]), Err(Error::HostUnreachable));
    }

    #[test]
    fn router_hwm_drops_or_blocks_with_mandatory() {
        let mut h = Harness::new(SocketType::Router);
        let mut a = h.connect_with(1, Some(b"A"));
        h.send(&[b"A", b"1"]).unwrap();
        h.send(&[b"A", b"2"]).unwrap(); // dropped
        assert_eq!(a.msgs(), vec![m(&[b"1"])]);
        h.send(&[b"A", b"3"]).unwrap();
        h.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
        assert_eq!(h.send(&[b"A", b"4"]), Err(Error::Again));
        assert!(!h.has_out());
        assert_eq!(a.msgs(), vec![m(&[b"3"])]);
        assert!(h.has_out());
        h.send(&[b"A", b"4"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"4"])]);
    }

    #[test]
    fn router_duplicate_id_rejected_without_handover() {
        let mut h = Harness::new(SocketType::Router);
        let mut first = h.connect_with(0, Some(b"dup"));
        let mut second = h.connect_with(0, Some(b"dup"));
        second.send(&mut h, &[b"ignored"]);
        first.send(&mut h, &[b"from first"]);
        assert_eq!(h.recv().unwrap(), m(&[b"dup", b"from first"]));
        assert_eq!(h.recv(), Err(Error::Again));
        h.send(&[b"dup", b"to first"]).unwrap();
        assert_eq!(first.msgs(), vec![m(&[b"to first"])]);
        assert!(second.msgs().is_empty());
        second.close();
        h.activate_read(&second);
        assert!(!h.alive(&second));
        h.send(&[b"dup", b"still first"]).unwrap();
        assert_eq!(first.msgs(), vec![m(&[b"still first"])]);
    }

    #[test]
    fn router_handover_gives_id_to_new_connection() {
        let mut h = Harness::new(SocketType::Router);
        h.set_int(opt::ROUTER_HANDOVER, 1).unwrap();
        let mut old = h.connect_with(0, Some(b"dup"));
        let mut new = h.connect_with(0, Some(b"dup"));
        assert!(!h.alive(&old), "the old connection is closed");
        h.send(&[b"dup", b"hello"]).unwrap();
        assert_eq!(new.msgs(), vec![m(&[b"hello"])]);
        assert!(old.msgs().is_empty());
        new.send(&mut h, &[b"from new"]);
        assert_eq!(h.recv().unwrap(), m(&[b"dup", b"from new"]));
    }

    #[test]
    fn router_handover_waits_for_message_in_progress() {
        let mut h = Harness::new(SocketType::Router);
        h.set_int(opt::ROUTER_HANDOVER, 1).unwrap();
        let mut old = h.connect_with(0, Some(b"dup"));
        old.send(&mut h, &[b"part1", b"part2"]);
        assert_eq!(h.recv_frame().unwrap().to_vec(), b"dup");
        assert_eq!(h.recv_frame().unwrap().to_vec(), b"part1");
        let _new = h.connect_with(0, Some(b"dup"));
        assert!(h.alive(&old));
        let last = h.recv_frame().unwrap();
        assert_eq!(last.to_vec(), b"part2");
        assert!(!last.more());
        assert!(!h.alive(&old));
    }

    #[test]
    fn router_learns_late_routing_id_on_send() {
        let mut h = Harness::new(SocketType::Router);
        let mut p = h.connect_with(0, None);
        h.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
        assert_eq!(h.send(&[b"late", b"x"]), Err(Error::HostUnreachable));
        // The routing-id frame arrives, but no activation has been processed yet.
        let tx = p.tx.as_mut().unwrap();
        tx.write(Msg::from_slice(b"late").with_flags(FLAG_ROUTING_ID));
        tx.flush();
        h.send(&[b"late", b"x"]).unwrap();
        assert_eq!(p.msgs(), vec![m(&[b"x"])]);
        p.send(&mut h, &[b"up"]);
        assert_eq!(h.recv().unwrap(), m(&[b"late", b"up"]));
    }

    #[test]
    fn router_ignores_routing_id_frames_after_reconnect() {
        let mut h = Harness::new(SocketType::Router);
        let mut p = h.connect_with(0, Some(b"P"));
        let tx = p.tx.as_mut().unwrap();
        tx.write(Msg::from_slice(b"P2").with_flags(FLAG_ROUTING_ID));
        tx.write(Msg::from_slice(b"after"));
        tx.flush();
        h.activate_read(&p);
        assert_eq!(h.recv().unwrap(), m(&[b"P", b"after"]));
        h.send(&[b"P", b"still P"]).unwrap();
        assert_eq!(p.msgs(), vec![m(&[b"still P"])]);
    }

    #[test]
    fn router_forgets_detached_peer() {
        let mut h = Harness::new(SocketType::Router);
        let mut a = h.connect_with(0, Some(b"A"));
        a.send(&mut h, &[b"bye"]);
        a.close();
        h.activate_read(&a);
        assert_eq!(h.recv().unwrap(), m(&[b"A", b"bye"]));
        assert_eq!(h.recv(), Err(Error::Again));
        assert!(!h.alive(&a));
        h.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
        assert_eq!(h.send(&[b"A", b"x"]), Err(Error::HostUnreachable));
        // The id is free for a new peer.
        let mut b = h.connect_with(0, Some(b"A"));
        h.send(&[b"A", b"x"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"x"])]);
    }

    #[test]
    fn router_uses_connect_routing_id() {
        use crate::channel::pipes::{new_pipe_key, SocketPipe};
        use crate::pipe::{pipe, WakeSlot};
        let mut h = Harness::new(SocketType::Router);
        let (out_w, mut out_r) = pipe(0, WakeSlot::new(), WakeSlot::new());
        let (mut in_w, in_r) = pipe(0, WakeSlot::new(), WakeSlot::new());
        let mut sp = SocketPipe::new(out_w, in_r, 0, new_pipe_key());
        sp.connect_routing_id = Some(bytes::Bytes::from_static(b"alias"));
        let id = h.pipes.insert(sp);
        h.pattern.attach(id, &mut h.pipes);
        h.send(&[b"alias", b"m"]).unwrap();
        assert_eq!(out_r.read().unwrap().to_vec(), b"m");
        in_w.write(Msg::from_slice(b"peer-own-id").with_flags(FLAG_ROUTING_ID));
        in_w.write(Msg::from_slice(b"up"));
        in_w.flush();
        h.pattern.read_activated(id, &mut h.pipes);
        assert_eq!(h.recv().unwrap(), m(&[b"alias", b"up"]));
    }
}
