//! PAIR (RFC 31): exactly one peer; sending blocks at the HWM or without a peer.

use super::compose::{Composed, OnePeer, SingleIn, SingleOut};

/// PAIR: one pipe, read and written directly; multipart allowed.
pub(crate) type Pair = Composed<SingleOut, SingleIn, OnePeer<false>>;

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
