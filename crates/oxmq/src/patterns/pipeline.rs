//! PUSH and PULL (RFC 30): load-balanced sending, fair-queued receiving.

use super::fq::Fq;
use super::lb::Lb;
use super::Pattern;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

/// Read and discard whatever a send-only socket's peer sent; leaves the
/// reader asleep so the peer's departure is still signalled.
pub(super) fn discard_input(id: PipeId, pipes: &mut Pipes) {
    let p = pipes.get_mut(id);
    while p.read().is_some() {}
}

#[derive(Default)]
pub(crate) struct Push {
    lb: Lb,
}

impl Push {
    pub(crate) fn new() -> Push {
        Push::default()
    }
}

impl Pattern for Push {
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

    #[inline]
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        self.lb.send(msg, pipes).map(|_| ())
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

#[derive(Default)]
pub(crate) struct Pull {
    fq: Fq,
}

impl Pull {
    pub(crate) fn new() -> Pull {
        Pull::default()
    }
}

impl Pattern for Pull {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.attach(id);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.fq.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        super::notice_departure(id, pipes);
        self.fq.activated(id);
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    fn send(&mut self, msg: Msg, _pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        Err((msg, Error::NotSupported))
    }

    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        self.fq.recv(pipes).map(|(m, _)| m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use oxmq_proto::SocketType;

    #[test]
    fn push_round_robins_whole_messages() {
        let mut h = Harness::new(SocketType::Push);
        let mut peers: Vec<_> = (0..3).map(|_| h.connect(0)).collect();
        for i in 0..6u8 {
            h.send(&[&[i]]).unwrap();
        }
        h.send(&[b"a", b"b", b"c"]).unwrap();
        h.send(&[b"z"]).unwrap();
        assert_eq!(peers[0].msgs(), vec![m(&[&[0]]), m(&[&[3]]), m(&[b"a", b"b", b"c"])]);
        assert_eq!(peers[1].msgs(), vec![m(&[&[1]]), m(&[&[4]]), m(&[b"z"])]);
        assert_eq!(peers[2].msgs(), vec![m(&[&[2]]), m(&[&[5]])]);
    }

    #[test]
    fn push_multipart_is_atomic() {
        let mut h = Harness::new(SocketType::Push);
        let mut p = h.connect(0);
        h.send_frame(b"part1", true).unwrap();
        assert!(p.frames().is_empty(), "unflushed frames must not be visible");
        h.send_frame(b"part2", false).unwrap();
        assert_eq!(p.msgs(), vec![m(&[b"part1", b"part2"])]);
    }

    #[test]
    fn push_blocks_without_peers_and_at_hwm() {
        let mut h = Harness::new(SocketType::Push);
        assert_eq!(h.send(&[b"x"]), Err(Error::Again));
        assert!(!h.has_out());
        let mut a = h.connect(2);
        let mut b = h.connect(2);
        assert!(h.has_out());
        for _ in 0..4 {
            h.send(&[b"x"]).unwrap();
        }
        assert_eq!(h.send(&[b"y"]), Err(Error::Again));
        assert!(!h.has_out());
        // `a` drains: its writer is woken, the socket reports write_activated.
        assert_eq!(a.msgs().len(), 2);
        h.activate_write(&a);
        assert!(h.has_out());
        h.send(&[b"y"]).unwrap();
        h.send(&[b"y"]).unwrap();
        assert_eq!(h.send(&[b"y"]), Err(Error::Again));
        assert_eq!(a.msgs(), vec![m(&[b"y"]), m(&[b"y"])]);
        assert_eq!(b.msgs().len(), 2);
    }

    #[test]
    fn push_skips_gone_peer_and_detaches_it() {
        let mut h = Harness::new(SocketType::Push);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.close();
        for _ in 0..3 {
            h.send(&[b"x"]).unwrap();
        }
        assert_eq!(b.msgs().len(), 3);
        h.activate_read(&a);
        assert!(!h.alive(&a));
        assert!(h.alive(&b));
        h.send(&[b"x"]).unwrap();
        assert_eq!(b.msgs().len(), 1);
    }

    #[test]
    fn push_drops_rest_of_message_when_its_peer_goes() {
        let mut h = Harness::new(SocketType::Push);
        let mut a = h.connect(0);
        h.send_frame(b"1", true).unwrap();
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        let mut b = h.connect(0);
        h.send_frame(b"2", false).unwrap();
        h.send(&[b"next"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"next"])]);
    }

    #[test]
    fn push_cannot_recv_pull_cannot_send() {
        let mut h = Harness::new(SocketType::Push);
        assert_eq!(h.recv_frame().unwrap_err(), Error::NotSupported);
        assert!(!h.has_in());
        let mut h = Harness::new(SocketType::Pull);
        assert_eq!(h.send(&[b"x"]), Err(Error::NotSupported));
        assert!(!h.has_out());
    }

    #[test]
    fn pull_fair_queues_and_keeps_multipart_together() {
        let mut h = Harness::new(SocketType::Pull);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        assert_eq!(h.recv(), Err(Error::Again));
        assert!(!h.has_in());
        a.send(&mut h, &[b"a1", b"a1b"]);
        a.send(&mut h, &[b"a2"]);
        a.send(&mut h, &[b"a3"]);
        b.send(&mut h, &[b"b1"]);
        b.send(&mut h, &[b"b2", b"b2b", b"b2c"]);
        assert!(h.has_in());
        let got: Vec<_> = (0..5).map(|_| h.recv().unwrap()).collect();
        assert_eq!(got, vec![m(&[b"a1", b"a1b"]), m(&[b"b1"]), m(&[b"a2"]), m(&[b"b2", b"b2b", b"b2c"]), m(&[b"a3"])]);
        assert_eq!(h.recv(), Err(Error::Again));
        // After running dry, a new message needs (and gets) an activation.
        b.send(&mut h, &[b"b3"]);
        assert_eq!(h.recv().unwrap(), m(&[b"b3"]));
    }

    #[test]
    fn pull_delivers_queued_messages_then_detaches_gone_peer() {
        let mut h = Harness::new(SocketType::Pull);
        let mut a = h.connect(0);
        a.put(&[b"last words"]);
        a.close();
        h.activate_read(&a);
        assert!(h.alive(&a), "pending data is still delivered");
        assert_eq!(h.recv().unwrap(), m(&[b"last words"]));
        assert_eq!(h.recv(), Err(Error::Again));
        assert!(!h.alive(&a));
    }

    #[test]
    fn pull_hwm_blocks_the_peer_not_the_socket() {
        let mut h = Harness::new(SocketType::Pull);
        let mut a = h.connect(2);
        let tx = a.tx.as_mut().unwrap();
        assert!(tx.check_write());
        a.put(&[b"1"]);
        a.put(&[b"2"]);
        assert!(!a.tx.as_mut().unwrap().check_write());
        h.activate_read(&a);
        assert_eq!(h.recv().unwrap(), m(&[b"1"]));
        assert_eq!(h.recv().unwrap(), m(&[b"2"]));
        assert_eq!(h.recv(), Err(Error::Again));
        assert!(a.tx.as_mut().unwrap().check_write());
    }
}
