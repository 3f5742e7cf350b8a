//! The draft single-frame socket types of libzmq 4.3.5: SERVER and PEER
//! (RFC 41, 51), CLIENT, SCATTER and GATHER (RFC 49), CHANNEL (RFC 52).
//!
//! None of them carries multipart messages: a send with more frames to follow
//! fails with EINVAL, and a multipart message arriving from a (misbehaving)
//! peer is dropped whole, as libzmq does. SERVER and PEER address their peers
//! by a `u32` routing id carried on the message, not by an envelope frame.

use super::fq::Fq;
use super::lb::Lb;
use super::pipeline::discard_input;
use super::reqrep::random_u32;
use super::{notice_departure, Pattern};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;
use std::collections::HashMap;

/// libzmq refuses `ZMQ_SNDMORE` on these sockets with EINVAL.
#[inline]
fn refuse_more(msg: Msg) -> Result<Msg, (Msg, Error)> {
    if msg.more() {
        Err((msg, Error::Invalid("this socket type does not send multipart messages")))
    } else {
        Ok(msg)
    }
}

/// Fair-queue one single-frame message; whole multipart messages are dropped.
#[inline]
fn recv_single(fq: &mut Fq, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
    loop {
        let (msg, id) = fq.recv(pipes)?;
        if !msg.more() {
            return Ok((msg, id));
        }
        // The rest of the message is queued with it (pipes are flushed per message).
        loop {
            let (rest, _) = fq.recv(pipes)?;
            if !rest.more() {
                break;
            }
        }
    }
}

/// SERVER, and PEER (a SERVER that also connects, `zmq_connect_peer`).
pub(crate) struct Server {
    fq: Fq,
    by_rid: HashMap<u32, PipeId>,
    rid_of: HashMap<PipeId, u32>,
    next_rid: u32,
    /// PEER: the routing id given to the newest pipe (`zmq_connect_peer`).
    last_rid: u32,
}

impl Server {
    pub(crate) fn new() -> Server {
        Server {
            fq: Fq::default(),
            by_rid: HashMap::new(),
            rid_of: HashMap::new(),
            // libzmq starts at a random id and never uses 0.
            next_rid: random_u32(),
            last_rid: 0,
        }
    }

    fn take_rid(&mut self) -> u32 {
        loop {
            let rid = self.next_rid;
            self.next_rid = self.next_rid.wrapping_add(1);
            if rid != 0 && !self.by_rid.contains_key(&rid) {
                return rid;
            }
        }
    }
}

impl Pattern for Server {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        let rid = self.take_rid();
        self.by_rid.insert(rid, id);
        self.rid_of.insert(id, rid);
        self.last_rid = rid;
        self.fq.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if let Some(rid) = self.rid_of.remove(&id) {
            self.by_rid.remove(&rid);
        }
        self.fq.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        self.fq.activated(id);
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        let mut msg = refuse_more(msg)?;
        let Some(&id) = self.by_rid.get(&msg.routing_id()) else {
            return Err((msg, Error::HostUnreachable));
        };
        let p = pipes.get_mut(id);
        if !p.out.check_write() {
            return Err((msg, Error::Again));
        }
        // An inproc peer receives this very message: it must not carry our id.
        msg.set_routing_id(0);
        p.out.write(msg);
        p.out.flush();
        Ok(())
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        let (mut msg, id) = recv_single(&mut self.fq, pipes)?;
        msg.set_routing_id(self.rid_of.get(&id).copied().unwrap_or(0));
        Ok(msg)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        // As libzmq: a SERVER can always try (the peer is chosen per message).
        true
    }

    fn last_peer_routing_id(&self) -> u32 {
        self.last_rid
    }
}

/// CLIENT: DEALER without envelopes or multipart.
#[derive(Default)]
pub(crate) struct Client {
    fq: Fq,
    lb: Lb,
}

impl Pattern for Client {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.attach(id);
        self.lb.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.detach(id);
        self.lb.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        self.fq.activated(id);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.lb.activated(id);
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        self.lb.send(refuse_more(msg)?, pipes).map(|_| ())
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        recv_single(&mut self.fq, pipes).map(|(m, _)| m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.lb.has_out(pipes)
    }
}

/// SCATTER: PUSH without multipart.
#[derive(Default)]
pub(crate) struct Scatter {
    lb: Lb,
}

impl Pattern for Scatter {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.lb.attach(id);
        discard_input(id, pipes);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.lb.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        discard_input(id, pipes);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.lb.activated(id);
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        self.lb.send(refuse_more(msg)?, pipes).map(|_| ())
    }

    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg, Error> {
        Err(Error::NotSupported)
    }

    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.lb.has_out(pipes)
    }
}

/// GATHER: PULL without multipart.
#[derive(Default)]
pub(crate) struct Gather {
    fq: Fq,
}

impl Pattern for Gather {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        self.fq.activated(id);
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    fn send(&mut self, msg: Msg, _pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        Err((msg, Error::NotSupported))
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        recv_single(&mut self.fq, pipes).map(|(m, _)| m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
}

/// CHANNEL: PAIR without multipart (a one-peer Fq/Lb keeps the pipe bookkeeping shared).
#[derive(Default)]
pub(crate) struct Channel {
    pipe: Option<PipeId>,
    fq: Fq,
    lb: Lb,
}

impl Pattern for Channel {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.pipe.is_some() {
            // One peer only, as PAIR: further connections are closed.
            pipes.mark_dead(id);
            return;
        }
        self.pipe = Some(id);
        self.fq.attach(id);
        self.lb.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.pipe == Some(id) {
            self.pipe = None;
            self.fq.detach(id);
            self.lb.detach(id);
        }
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        if self.pipe == Some(id) {
            self.fq.activated(id);
        }
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.pipe == Some(id) {
            self.lb.activated(id);
        }
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        self.lb.send(refuse_more(msg)?, pipes).map(|_| ())
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        recv_single(&mut self.fq, pipes).map(|(m, _)| m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.lb.has_out(pipes)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use crate::msg::Msg;
    use oxmq_proto::SocketType;

    fn is_einval(e: Error) -> bool {
        e.errno() == libc::EINVAL
    }

    #[test]
    fn multipart_sends_are_refused_by_every_draft_type() {
        for kind in [SocketType::Server, SocketType::Client, SocketType::Scatter, SocketType::Channel, SocketType::Peer]
        {
            let mut h = Harness::new(kind);
            let _p = h.connect(0);
            let err = h.send_frame(b"a", true).unwrap_err();
            assert!(is_einval(err), "{kind:?}");
        }
    }

    #[test]
    fn server_stamps_routing_ids_and_routes_replies() {
        let mut h = Harness::new(SocketType::Server);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.send(&mut h, &[b"from a"]);
        b.send(&mut h, &[b"from b"]);
        let ma = h.recv_frame().unwrap();
        let mb = h.recv_frame().unwrap();
        assert_eq!((ma.as_slice(), mb.as_slice()), (&b"from a"[..], &b"from b"[..]));
        assert_ne!(ma.routing_id(), 0);
        assert_ne!(ma.routing_id(), mb.routing_id());
        let mut reply = Msg::from_slice(b"to b");
        reply.set_routing_id(mb.routing_id());
        h.pattern.send(reply, &mut h.pipes).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"to b"])]);
        assert!(a.frames().is_empty());
        let got = b.frames();
        assert!(got.is_empty());
        // Unknown (or no) routing id: EHOSTUNREACH, as libzmq.
        let mut lost = Msg::from_slice(b"x");
        lost.set_routing_id(mb.routing_id() ^ 0x5555);
        let (_, e) = h.pattern.send(lost, &mut h.pipes).unwrap_err();
        assert_eq!(e.errno(), libc::EHOSTUNREACH);
        let (_, e) = h.pattern.send(Msg::from_slice(b"x"), &mut h.pipes).unwrap_err();
        assert_eq!(e.errno(), libc::EHOSTUNREACH);
    }

    #[test]
    fn server_forgets_a_departed_peer() {
        let mut h = Harness::new(SocketType::Server);
        let mut a = h.connect(0);
        a.send(&mut h, &[b"hi"]);
        let rid = h.recv_frame().unwrap().routing_id();
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        let mut msg = Msg::from_slice(b"gone?");
        msg.set_routing_id(rid);
        let (_, e) = h.pattern.send(msg, &mut h.pipes).unwrap_err();
        assert_eq!(e.errno(), libc::EHOSTUNREACH);
    }

    #[test]
    fn server_blocks_at_the_peers_hwm() {
        let mut h = Harness::new(SocketType::Server);
        let mut a = h.connect(1);
        a.send(&mut h, &[b"hi"]);
        let rid = h.recv_frame().unwrap().routing_id();
        let mut first = Msg::from_slice(b"1");
        first.set_routing_id(rid);
        h.pattern.send(first.clone(), &mut h.pipes).unwrap();
        let (_, e) = h.pattern.send(first, &mut h.pipes).unwrap_err();
        assert_eq!(e, Error::Again);
        assert_eq!(a.msgs(), vec![m(&[b"1"])]);
    }

    #[test]
    fn receivers_drop_whole_multipart_messages() {
        for kind in [SocketType::Server, SocketType::Client, SocketType::Gather, SocketType::Channel] {
            let mut h = Harness::new(kind);
            let mut a = h.connect(0);
            a.send(&mut h, &[b"m1", b"m2", b"m3"]);
            a.send(&mut h, &[b"single"]);
            assert_eq!(h.recv().unwrap(), m(&[b"single"]), "{kind:?}");
            assert_eq!(h.recv(), Err(Error::Again), "{kind:?}");
        }
    }

    #[test]
    fn client_load_balances_and_fair_queues() {
        let mut h = Harness::new(SocketType::Client);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        for i in 0..4u8 {
            h.send(&[&[i]]).unwrap();
        }
        assert_eq!(a.msgs(), vec![m(&[&[0]]), m(&[&[2]])]);
        assert_eq!(b.msgs(), vec![m(&[&[1]]), m(&[&[3]])]);
        a.send(&mut h, &[b"a1"]);
        a.send(&mut h, &[b"a2"]);
        b.send(&mut h, &[b"b1"]);
        let got: Vec<_> = (0..3).map(|_| h.recv().unwrap()).collect();
        assert_eq!(got, vec![m(&[b"a1"]), m(&[b"b1"]), m(&[b"a2"])]);
    }

    #[test]
    fn scatter_round_robins_gather_cannot_send() {
        let mut h = Harness::new(SocketType::Scatter);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        for i in 0..4u8 {
            h.send(&[&[i]]).unwrap();
        }
        assert_eq!(a.msgs().len(), 2);
        assert_eq!(b.msgs().len(), 2);
        assert_eq!(h.recv_frame().unwrap_err(), Error::NotSupported);
        let mut g = Harness::new(SocketType::Gather);
        assert_eq!(g.send(&[b"x"]), Err(Error::NotSupported));
    }

    #[test]
    fn channel_has_one_peer() {
        let mut h = Harness::new(SocketType::Channel);
        assert_eq!(h.send(&[b"x"]), Err(Error::Again));
        let mut a = h.connect(0);
        let b = h.connect(0);
        assert!(!h.alive(&b));
        h.send(&[b"x"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"x"])]);
        a.send(&mut h, &[b"y"]);
        assert_eq!(h.recv().unwrap(), m(&[b"y"]));
    }

    #[test]
    fn peer_reports_the_routing_id_of_its_newest_pipe() {
        let mut h = Harness::new(SocketType::Peer);
        let mut a = h.connect(0);
        let rid = h.pattern.last_peer_routing_id();
        assert_ne!(rid, 0);
        let mut msg = Msg::from_slice(b"hello");
        msg.set_routing_id(rid);
        h.pattern.send(msg, &mut h.pipes).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"hello"])]);
    }
}
