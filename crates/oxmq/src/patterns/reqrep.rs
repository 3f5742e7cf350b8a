//! REQ and REP (RFC 28).
//!
//! REQ: a DEALER that prepends an empty delimiter frame (preceded, with
//! REQ_CORRELATE, by a 4-byte request id in host byte order, as libzmq) and
//! enforces send/recv alternation. Replies must come from the pipe the request
//! went to and start with the expected envelope; anything else is discarded.
//!
//! REP: a ROUTER that receives a request, keeps its envelope (the routing-id
//! frame and every frame up to and including the empty delimiter), hands the
//! body to the user, and sends the reply back with the envelope in front.

use super::dealer_router::Router;
use super::fq::Fq;
use super::lb::Lb;
use super::{bool_value, Pattern};
use crate::channel::direct::DirectHead;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;
use crate::options::opt;

/// A start value for counters that should differ between sockets and runs
/// (libzmq seeds its request ids and generated routing ids randomly).
pub(super) fn random_u32() -> u32 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static SALT: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(SALT.fetch_add(1, Ordering::Relaxed));
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish() as u32
}

pub(crate) struct Req {
    lb: Lb,
    fq: Fq,
    /// A request has been sent; its reply is awaited.
    receiving_reply: bool,
    /// The next frame starts a message (request to send or reply to read).
    message_begins: bool,
    /// Where the current request went; replies from elsewhere are dropped.
    reply_pipe: Option<PipeId>,
    /// Strict alternation (not REQ_RELAXED).
    strict: bool,
    /// REQ_CORRELATE.
    correlate: bool,
    request_id: u32,
    probe_router: bool,
}

impl Req {
    pub(crate) fn new() -> Req {
        Req {
            lb: Lb::default(),
            fq: Fq::default(),
            receiving_reply: false,
            message_begins: true,
            reply_pipe: None,
            strict: true,
            correlate: false,
            request_id: random_u32(),
            probe_router: false,
        }
    }

    /// Next frame of a reply, dropping frames from any other pipe.
    fn recv_reply_frame(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        loop {
            let (m, id) = self.fq.recv(pipes)?;
            if self.reply_pipe.is_none() || self.reply_pipe == Some(id) {
                return Ok(m);
            }
        }
    }

    /// Drop the rest of a rejected reply.
    fn skip_rest(&mut self, mut more: bool, pipes: &mut Pipes) -> Result<(), Error> {
        while more {
            more = self.recv_reply_frame(pipes)?.more();
        }
        Ok(())
    }
}

impl Pattern for Req {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.probe_router {
            send_probe(id, pipes);
        }
        self.fq.attach(id);
        self.lb.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.reply_pipe == Some(id) {
            self.reply_pipe = None;
        }
        self.fq.detach(id);
        self.lb.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        super::notice_departure(id, pipes);
        self.fq.activated(id);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.lb.activated(id);
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if self.receiving_reply {
            if self.strict {
                return Err((msg, Error::State));
            }
            // REQ_RELAXED: abandon the outstanding request.
            self.receiving_reply = false;
            self.message_begins = true;
        }
        if self.message_begins {
            let mut reply_pipe = None;
            let next_id = self.request_id.wrapping_add(1);
            if self.correlate {
                let id_frame = Msg::from_slice(&next_id.to_ne_bytes()).with_more(true);
                match self.lb.send(id_frame, pipes) {
                    Ok(p) => reply_pipe = p,
                    Err((_, e)) => return Err((msg, e)),
                }
            }
            match self.lb.send(Msg::new().with_more(true), pipes) {
                Ok(p) => reply_pipe = reply_pipe.or(p),
                Err((_, e)) => return Err((msg, e)),
            }
            if self.correlate {
                self.request_id = next_id;
            }
            self.reply_pipe = reply_pipe;
            self.message_begins = false;
            // Drop replies that are already here: they answer older requests.
            while self.fq.recv(pipes).is_ok() {}
        }
        let more = msg.more();
        // The envelope went out, so the lb is inside a message: cannot fail.
        let _ = self.lb.send(msg, pipes);
        if !more {
            self.receiving_reply = true;
            self.message_begins = true;
        }
        Ok(())
    }

    fn direct_target(&mut self, pipes: &mut Pipes, head: &mut DirectHead) -> Option<PipeId> {
        // A strict REQ awaiting its reply refuses the send (the usual path
        // says EFSM); REQ_CORRELATE's id frame stays on the usual path.
        if !self.message_begins || self.correlate || (self.receiving_reply && self.strict) {
            return None;
        }
        let id = self.lb.direct_target()?;
        // Replies already here answer older requests: dropped now, before
        // the request is on the wire, as `send` drops them before it
        // flushes (after the write, this request's own reply could already
        // be among them).
        while self.fq.recv(pipes).is_ok() {}
        head.push_frame(&[]);
        Some(id)
    }

    fn direct_source(&self, _pipes: &Pipes) -> Option<PipeId> {
        // At the start of a reply: a reply begun is queued whole already.
        if self.receiving_reply && self.message_begins {
            self.reply_pipe
        } else {
            None
        }
    }

    fn direct_sent(&mut self, id: PipeId, _pipes: &mut Pipes) {
        // As `send` leaves a whole request: the turn moves on and the reply
        // is awaited from that pipe.
        self.lb.direct_sent();
        self.reply_pipe = Some(id);
        self.receiving_reply = true;
        self.message_begins = true;
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if !self.receiving_reply {
            return Err(Error::State);
        }
        while self.message_begins {
            if self.correlate {
                let m = self.recv_reply_frame(pipes)?;
                if !m.more() || m.as_slice() != self.request_id.to_ne_bytes() {
                    self.skip_rest(m.more(), pipes)?;
                    continue;
                }
            }
            let m = self.recv_reply_frame(pipes)?;
            if !m.more() || !m.is_empty() {
                self.skip_rest(m.more(), pipes)?;
                continue;
            }
            self.message_begins = false;
        }
        let m = self.recv_reply_frame(pipes)?;
        if !m.more() {
            self.receiving_reply = false;
            self.message_begins = true;
        }
        Ok(m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.receiving_reply && self.fq.has_in(pipes)
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if self.receiving_reply && self.strict {
            return false;
        }
        self.lb.has_out(pipes)
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        match option {
            opt::REQ_CORRELATE => self.correlate = bool_value(value)?,
            opt::REQ_RELAXED => self.strict = !bool_value(value)?,
            opt::PROBE_ROUTER => self.probe_router = bool_value(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// PROBE_ROUTER: an empty message announces a new connection to a ROUTER peer.
pub(super) fn send_probe(id: PipeId, pipes: &mut Pipes) {
    let p = pipes.get_mut(id);
    p.out.write(Msg::new());
    p.out.flush();
}

/// REP is a ROUTER underneath, as in libzmq: the router's routing-id and
/// envelope handling plus its options (ROUTER_HANDOVER, PROBE_ROUTER,
/// ROUTER_MANDATORY) act on REP exactly as on ROUTER.
pub(crate) struct Rep {
    /// A ROUTER, or after ROUTER_RAW a raw one: its messages never carry a
    /// delimiter, so a raw REP (accepted by libzmq) receives nothing.
    router: Box<dyn Pattern>,
    /// A request was received; its reply is due.
    sending_reply: bool,
    /// The next received frame starts a request.
    request_begins: bool,
    /// Envelope of the current request, routing-id frame first (reused buffer).
    envelope: Vec<Msg>,
    /// The reply being sent could not be routed: its frames are dropped.
    dropping: bool,
    /// In the middle of sending a multipart reply.
    more_out: bool,
}

impl Rep {
    pub(crate) fn new() -> Rep {
        Rep::over(Box::new(Router::new()))
    }

    /// ROUTER_RAW on a REP.
    pub(crate) fn raw() -> Rep {
        Rep::over(super::new_raw_router())
    }

    fn over(router: Box<dyn Pattern>) -> Rep {
        Rep {
            router,
            sending_reply: false,
            request_begins: true,
            envelope: Vec::new(),
            dropping: false,
            more_out: false,
        }
    }
}

impl Pattern for Rep {
    fn set_option(&mut self, option: i32, value: &[u8], pipes: &mut Pipes) -> Result<bool, Error> {
        self.router.set_option(option, value, pipes)
    }

    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.router.attach(id, pipes);
    }

    fn detach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.router.detach(id, pipes);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.router.read_activated(id, pipes);
    }

    fn write_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.router.write_activated(id, pipes);
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if !self.sending_reply {
            return Err((msg, Error::State));
        }
        let more = msg.more();
        if !self.more_out {
            // First frame of the reply: the envelope routes it back. libzmq
            // routes the envelope while receiving the request, so a peer gone
            // (or full) since then loses the reply silently, even with
            // ROUTER_MANDATORY.
            self.dropping = false;
            for frame in self.envelope.drain(..) {
                if !self.dropping && self.router.send(frame, pipes).is_err() {
                    self.dropping = true;
                }
            }
        }
        if !self.dropping {
            // Past its routing-id frame the router only fails on a closed pipe,
            // which drops the frame as libzmq does.
            let _ = self.router.send(msg, pipes);
        }
        self.more_out = more;
        if !more {
            self.sending_reply = false;
            self.dropping = false;
        }
        Ok(())
    }

    fn direct_target(&mut self, pipes: &mut Pipes, head: &mut DirectHead) -> Option<PipeId> {
        if !self.sending_reply || self.more_out {
            return None;
        }
        let (rid, rest) = self.envelope.split_first()?;
        let id = self.router.route_of(rid.as_slice(), pipes)?;
        for frame in rest {
            head.push_frame(frame.as_slice());
        }
        Some(id)
    }

    fn direct_source(&self, pipes: &Pipes) -> Option<PipeId> {
        if self.sending_reply || !self.request_begins {
            return None;
        }
        pipes.only()
    }

    fn direct_sent(&mut self, _id: PipeId, _pipes: &mut Pipes) {
        self.envelope.clear();
        self.sending_reply = false;
        self.dropping = false;
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if self.sending_reply {
            return Err(Error::State);
        }
        if self.request_begins {
            // A ROUTER's messages arrive whole, so `Again` only comes before
            // the routing-id frame, never in the middle of an envelope.
            loop {
                let m = self.router.recv(pipes)?;
                if m.more() {
                    let bottom = m.is_empty();
                    self.envelope.push(m);
                    if bottom {
                        break;
                    }
                } else {
                    // No delimiter: malformed request, dropped.
                    self.envelope.clear();
                }
            }
            self.request_begins = false;
        }
        let m = self.router.recv(pipes)?;
        if !m.more() {
            self.sending_reply = true;
            self.request_begins = true;
        }
        Ok(m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        !self.sending_reply && self.router.has_in(pipes)
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        self.sending_reply
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use crate::options::opt;
    use oxmq_proto::SocketType;

    #[test]
    fn req_envelope_and_alternation() {
        let mut h = Harness::new(SocketType::Req);
        assert_eq!(h.recv(), Err(Error::State), "recv before send");
        assert!(!h.has_in());
        assert_eq!(h.send(&[b"x"]), Err(Error::Again), "no peer: blocks");
        let mut p = h.connect(0);
        assert!(h.has_out());
        h.send(&[b"hello", b"world"]).unwrap();
        assert_eq!(p.msgs(), vec![m(&[b"", b"hello", b"world"])]);
        assert!(!h.has_out());
        assert_eq!(h.send(&[b"again"]), Err(Error::State));
        assert_eq!(h.recv(), Err(Error::Again));
        p.send(&mut h, &[b"", b"reply", b"parts"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"reply", b"parts"]));
        assert_eq!(h.recv(), Err(Error::State));
        h.send(&[b"next"]).unwrap();
    }

    #[test]
    fn req_discards_malformed_and_foreign_replies() {
        let mut h = Harness::new(SocketType::Req);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        h.send(&[b"q"]).unwrap();
        assert_eq!(a.msgs().len(), 1, "first request to the first peer");
        b.send(&mut h, &[b"", b"not yours"]);
        a.send(&mut h, &[b"no delimiter"]);
        a.send(&mut h, &[b"x", b"", b"bad envelope"]);
        assert_eq!(h.recv(), Err(Error::Again));
        a.send(&mut h, &[b"", b"good"]);
        assert_eq!(h.recv().unwrap(), m(&[b"good"]));
        // Round robin: the next request goes to b, whose stale reply is gone.
        h.send(&[b"q2"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"", b"q2"])]);
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn req_blocks_at_hwm() {
        let mut h = Harness::new(SocketType::Req);
        h.set_int(opt::REQ_RELAXED, 1).unwrap();
        let mut a = h.connect(1);
        h.send(&[b"1"]).unwrap();
        assert_eq!(h.send(&[b"2"]), Err(Error::Again));
        assert_eq!(a.msgs().len(), 1);
        h.activate_write(&a);
        h.send(&[b"2"]).unwrap();
    }

    #[test]
    fn req_relaxed_and_correlate() {
        let mut h = Harness::new(SocketType::Req);
        assert!(h.set_int(opt::REQ_RELAXED, 1).unwrap());
        assert!(h.set_int(opt::REQ_CORRELATE, 1).unwrap());
        assert!(h.set_int(opt::REQ_CORRELATE, -1).is_err());
        let mut p = h.connect(0);
        h.send(&[b"first"]).unwrap();
        h.send(&[b"second"]).unwrap();
        let reqs = p.msgs();
        assert_eq!(reqs.len(), 2);
        for r in &reqs {
            assert_eq!(r.len(), 3);
            assert_eq!(r[0].len(), 4, "request id frame first");
            assert!(r[1].is_empty(), "then the delimiter");
        }
        let (id1, id2) = (reqs[0][0].clone(), reqs[1][0].clone());
        assert_eq!(
            u32::from_ne_bytes(id2.clone().try_into().unwrap()),
            u32::from_ne_bytes(id1.clone().try_into().unwrap()).wrapping_add(1)
        );
        p.send(&mut h, &[&id1, b"", b"stale"]);
        p.send(&mut h, &[b"", b"no id"]);
        assert_eq!(h.recv(), Err(Error::Again));
        p.send(&mut h, &[&id2, b"", b"fresh"]);
        assert_eq!(h.recv().unwrap(), m(&[b"fresh"]));
    }

    #[test]
    fn req_relaxed_drops_replies_already_queued_when_sending() {
        let mut h = Harness::new(SocketType::Req);
        h.set_int(opt::REQ_RELAXED, 1).unwrap();
        let mut p = h.connect(0);
        h.send(&[b"1"]).unwrap();
        p.send(&mut h, &[b"", b"reply to 1"]);
        h.send(&[b"2"]).unwrap();
        assert_eq!(h.recv(), Err(Error::Again));
        p.send(&mut h, &[b"", b"reply to 2"]);
        assert_eq!(h.recv().unwrap(), m(&[b"reply to 2"]));
    }

    #[test]
    fn rep_strips_and_restores_envelope() {
        let mut h = Harness::new(SocketType::Rep);
        assert_eq!(h.send(&[b"x"]), Err(Error::State), "send before recv");
        assert!(!h.has_out());
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.send(&mut h, &[b"hop2", b"hop1", b"", b"req-a", b"body"]);
        b.send(&mut h, &[b"", b"req-b"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"req-a", b"body"]));
        assert!(!h.has_in());
        assert!(h.has_out());
        assert_eq!(h.recv(), Err(Error::State));
        h.send(&[b"rep-a", b"more"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"hop2", b"hop1", b"", b"rep-a", b"more"])]);
        assert_eq!(h.recv().unwrap(), m(&[b"req-b"]));
        h.send(&[b"rep-b"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"", b"rep-b"])]);
        assert!(a.msgs().is_empty());
    }

    #[test]
    fn rep_drops_requests_without_delimiter() {
        let mut h = Harness::new(SocketType::Rep);
        let mut a = h.connect(0);
        a.send(&mut h, &[b"no", b"delimiter"]);
        assert_eq!(h.recv(), Err(Error::Again));
        a.send(&mut h, &[b"", b"ok"]);
        assert_eq!(h.recv().unwrap(), m(&[b"ok"]));
    }

    #[test]
    fn rep_reply_to_gone_peer_is_dropped() {
        let mut h = Harness::new(SocketType::Rep);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.send(&mut h, &[b"", b"q"]);
        assert_eq!(h.recv().unwrap(), m(&[b"q"]));
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        h.send(&[b"lost"]).unwrap();
        assert!(b.msgs().is_empty());
        b.send(&mut h, &[b"", b"q2"]);
        assert_eq!(h.recv().unwrap(), m(&[b"q2"]));
        h.send(&[b"r2"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"", b"r2"])]);
    }

    #[test]
    fn rep_reply_dropped_at_hwm() {
        let mut h = Harness::new(SocketType::Rep);
        let mut a = h.connect(1);
        a.send(&mut h, &[b"", b"q1"]);
        a.send(&mut h, &[b"", b"q2"]);
        h.recv().unwrap();
        h.send(&[b"r1"]).unwrap();
        h.recv().unwrap();
        h.send(&[b"r2"]).unwrap(); // pipe full: dropped, not blocked
        assert_eq!(a.msgs(), vec![m(&[b"", b"r1"])]);
    }
}
