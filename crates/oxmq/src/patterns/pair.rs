//! PAIR (RFC 31): exactly one peer; sending blocks at the HWM or without a peer.

use super::{notice_departure, read_single, Pattern};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

pub(crate) struct Pair {
    pipe: Option<PipeId>,
    /// A multipart message is being written.
    more_out: bool,
    /// Its pipe went away: swallow the rest.
    dropping: bool,
}

impl Pair {
    pub(crate) fn new() -> Pair {
        Pair { pipe: None, more_out: false, dropping: false }
    }
}

impl Pattern for Pair {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.pipe.is_none() {
            self.pipe = Some(id);
        } else {
            // One peer only: further connections are closed.
            pipes.mark_dead(id);
        }
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.pipe == Some(id) {
            self.pipe = None;
            if self.more_out {
                self.more_out = false;
                self.dropping = true;
            }
        }
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
    }

    fn write_activated(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    #[inline]
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        let more = msg.more();
        if self.dropping {
            self.dropping = more;
            return Ok(());
        }
        let Some(id) = self.pipe else {
            return Err((msg, Error::Again));
        };
        let p = pipes.get_mut(id);
        if !self.more_out && !p.out.check_write() {
            return Err((msg, Error::Again));
        }
        p.out.write(msg);
        if !more {
            p.out.flush();
        }
        self.more_out = more;
        Ok(())
    }

    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        read_single(self.pipe, pipes)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        match self.pipe {
            Some(id) => pipes.get_mut(id).check_read(),
            None => false,
        }
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if self.more_out || self.dropping {
            return true;
        }
        match self.pipe {
            Some(id) => pipes.get_mut(id).out.check_write(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use oxmq_proto::SocketType;

    #[test]
    fn pair_exchanges_with_its_single_peer() {
        let mut h = Harness::new(SocketType::Pair);
        assert_eq!(h.send(&[b"x"]), Err(Error::Again), "no peer: blocks");
        assert!(!h.has_out());
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        assert!(!h.alive(&b), "a second peer is refused");
        assert!(h.alive(&a));
        h.send(&[b"1", b"2"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"1", b"2"])]);
        assert!(b.frames().is_empty());
        assert!(!h.has_in());
        a.send(&mut h, &[b"hi", b"there"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"hi", b"there"]));
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn pair_blocks_at_hwm_and_accepts_a_new_peer_after_the_old_left() {
        let mut h = Harness::new(SocketType::Pair);
        let mut a = h.connect(1);
        h.send(&[b"1"]).unwrap();
        assert_eq!(h.send(&[b"2"]), Err(Error::Again));
        assert!(!h.has_out());
        assert_eq!(a.msgs(), vec![m(&[b"1"])]);
        h.activate_write(&a);
        h.send(&[b"2"]).unwrap();
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        let mut b = h.connect(1);
        assert!(h.alive(&b));
        h.send(&[b"3"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"3"])]);
    }
}
