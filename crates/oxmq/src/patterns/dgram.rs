//! Draft DGRAM (libzmq 4.3.5's `dgram.cpp`): raw UDP datagrams.
//!
//! Every message sent is exactly two frames, `[address "ip:port"][body]`:
//! over udp it goes to the address in its first frame, and received ones
//! carry their sender's. The socket has one pipe at most (later pipes are
//! closed, as libzmq's `xattach_pipe` does): to the udp engine of the
//! address it bound, or, as in libzmq, to one tcp/ipc/ws connection or
//! inproc peer. Over tcp/ipc the raw engine writes both frames' bytes
//! unframed and hands each read over as one frame, with empty
//! connect/disconnect notices (`push_peer_frames`); over inproc and ws://
//! (ZMTP, with a DGRAM peer only) the frames travel as they are. This
//! pattern is the same for every transport.

use super::compose::{Composed, OnePeer, Outbound, SingleIn};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

/// DGRAM: one pipe, read directly; each message sent is `[address][body]`.
pub(crate) type Dgram = Composed<AddressedOut, SingleIn, OnePeer<false>>;

/// The one pipe, taking two-frame messages only (libzmq's `dgram_t::xsend`).
#[derive(Default)]
pub(crate) struct AddressedOut {
    pipe: Option<PipeId>,
    /// The address frame went out; the next frame is the body.
    more_out: bool,
}

impl Outbound for AddressedOut {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.pipe = Some(id);
    }

    fn detach(&mut self, _id: PipeId) {
        self.pipe = None;
        self.more_out = false;
    }

    fn write_activated(&mut self, _id: PipeId) {}

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        // Without a bound address there is nowhere to send from (libzmq's
        // xsend fails and its socket waits, as here, for SNDTIMEO).
        let Some(id) = self.pipe else {
            return Err((msg, Error::Again));
        };
        // libzmq: the first frame must have MORE, the second must not; a
        // wrong frame is refused with EINVAL and the state is unchanged.
        if msg.more() == self.more_out {
            let why = if self.more_out { "DGRAM body must be the last frame" } else { "DGRAM needs [address][body]" };
            return Err((msg, Error::Invalid(why)));
        }
        let p = pipes.get_mut(id);
        if !self.more_out && !p.out.check_write() {
            return Err((msg, Error::Again));
        }
        let more = msg.more();
        p.out.write(msg);
        if !more {
            p.out.flush();
        }
        self.more_out = more;
        Ok(())
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.pipe.is_some_and(|id| pipes.get_mut(id).out.check_write())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use oxmq_proto::SocketType;

    #[test]
    fn frames_must_be_address_then_body() {
        let mut h = Harness::new(SocketType::Dgram);
        assert!(!h.has_out(), "no bound address yet");
        assert_eq!(h.send(&[b"127.0.0.1:1", b"x"]).unwrap_err(), Error::Again);
        let mut p = h.connect_with(10, None);
        assert!(h.has_out());
        assert!(matches!(h.send(&[b"lonely"]), Err(Error::Invalid(_))), "one frame");
        assert!(matches!(h.send(&[b"127.0.0.1:1", b"x", b"y"]), Err(Error::Invalid(_))), "three frames");
        // The refused body left the address pending: a last frame completes it.
        h.send(&[b"y"]).unwrap();
        h.send(&[b"127.0.0.1:2", b"z"]).unwrap();
        assert_eq!(p.msgs(), vec![m(&[b"127.0.0.1:1", b"y"]), m(&[b"127.0.0.1:2", b"z"])]);
    }

    #[test]
    fn one_pipe_only_and_datagrams_arrive_as_sent() {
        let mut h = Harness::new(SocketType::Dgram);
        let mut p = h.connect_with(10, None);
        let q = h.connect_with(10, None);
        assert!(!h.alive(&q), "a second pipe is closed, as libzmq's xattach_pipe does");
        p.send(&mut h, &[b"127.0.0.1:5\0", b"hi"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"127.0.0.1:5\0", b"hi"]));
        assert_eq!(h.recv_frame().unwrap_err(), Error::Again);
        p.close();
        h.activate_read(&p);
        assert!(!h.alive(&p));
        assert_eq!(h.send(&[b"127.0.0.1:1", b"x"]).unwrap_err(), Error::Again);
        let _r = h.connect_with(10, None);
        assert!(h.has_out(), "a new bind is used once the old pipe is gone");
    }
}
