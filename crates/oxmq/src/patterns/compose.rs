//! Socket types built from parts: an outbound strategy (load-balance,
//! single pipe, none), an inbound one (fair-queue, single pipe, discard) and
//! the few rules of the type (single-frame messages, one peer, PROBE_ROUTER).
//!
//! PUSH, PULL, PAIR, DEALER, CLIENT, SCATTER, GATHER, CHANNEL and DGRAM
//! are [`Composed`] types; the types with state machines of their own (REQ,
//! REP, ROUTER, XPUB, XSUB, STREAM, SERVER, RADIO, DISH) implement
//! [`Pattern`] by hand and use the strategies' parts directly.
//!
//! Everything is generic, so each composed type is monomorphized: a PUSH's
//! send is the load balancer's send with nothing between.

use super::fq::Fq;
use super::lb::Lb;
use super::{notice_departure, read_single, Pattern};
use crate::channel::direct::DirectHead;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

/// How a socket type sends: which pipe takes each message.
pub(crate) trait Outbound: Default + Send {
    /// False for receive-only types, whose sends fail with ENOTSUP whatever
    /// the message.
    const SENDS: bool = true;
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes);
    fn detach(&mut self, id: PipeId);
    /// Room appeared in a pipe whose writer waited at the HWM.
    fn write_activated(&mut self, id: PipeId);
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)>;
    fn has_out(&mut self, pipes: &mut Pipes) -> bool;
    /// See [`Pattern::direct_target`].
    fn direct_target(&mut self) -> Option<PipeId> {
        None
    }
    /// See [`Pattern::direct_sent`].
    fn direct_sent(&mut self, _id: PipeId) {}
}

/// How a socket type receives: which pipe the next message comes from.
pub(crate) trait Inbound: Default + Send {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes);
    fn detach(&mut self, id: PipeId);
    /// The peer flushed frames into a sleeping pipe (or terminated).
    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes);
    /// One frame and the pipe it came from.
    fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error>;
    fn has_in(&mut self, pipes: &mut Pipes) -> bool;
}

/// What a composed type adds to its two strategies.
pub(crate) trait Rules: Default + Send {
    /// The draft types' rule: no multipart messages. Sending one fails with
    /// EINVAL; one arriving from a (misbehaving) peer is dropped whole.
    const SINGLE_FRAME: bool = false;

    /// Whether a new pipe joins; a refused one is closed (one-peer types).
    #[inline]
    fn admit(&mut self, _id: PipeId) -> bool {
        true
    }
    /// Whether `id` is a pipe this socket admitted; `detach` forgets it.
    #[inline]
    fn owns(&self, _id: PipeId) -> bool {
        true
    }
    fn forget(&mut self, _id: PipeId) {}
    /// An admitted pipe is about to join the strategies (DEALER's probe).
    fn attached(&mut self, _id: PipeId, _pipes: &mut Pipes) {}
    /// A type's own option; `Ok(false)` when it is not one.
    fn set_option(&mut self, _option: i32, _value: &[u8]) -> Result<bool, Error> {
        Ok(false)
    }
}

/// A socket type made of an outbound strategy, an inbound one and rules.
#[derive(Default)]
pub(crate) struct Composed<O, I, R = Plain> {
    out: O,
    inn: I,
    rules: R,
}

impl<O: Outbound, I: Inbound, R: Rules> Pattern for Composed<O, I, R> {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        if !self.rules.admit(id) {
            pipes.mark_dead(id);
            return;
        }
        self.rules.attached(id, pipes);
        self.inn.attach(id, pipes);
        self.out.attach(id, pipes);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.rules.owns(id) {
            self.rules.forget(id);
            self.inn.detach(id);
            self.out.detach(id);
        }
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        if self.rules.owns(id) {
            self.inn.read_activated(id, pipes);
        } else {
            notice_departure(id, pipes);
        }
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.rules.owns(id) {
            self.out.write_activated(id);
        }
    }

    #[inline]
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if R::SINGLE_FRAME && O::SENDS {
            return self.out.send(refuse_more(msg)?, pipes);
        }
        self.out.send(msg, pipes)
    }

    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if R::SINGLE_FRAME {
            return recv_single(&mut self.inn, pipes).map(|(m, _)| m);
        }
        self.inn.recv(pipes).map(|(m, _)| m)
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.inn.has_in(pipes)
    }

    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.out.has_out(pipes)
    }

    fn direct_target(&mut self, _pipes: &mut Pipes, _head: &mut DirectHead) -> Option<PipeId> {
        if O::SENDS {
            self.out.direct_target()
        } else {
            None
        }
    }

    fn direct_sent(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.out.direct_sent(id);
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        self.rules.set_option(option, value)
    }
}

/// libzmq refuses `ZMQ_SNDMORE` on these sockets with EINVAL.
#[inline]
pub(super) fn refuse_more(msg: Msg) -> Result<Msg, (Msg, Error)> {
    if msg.more() {
        Err((msg, Error::Invalid("this socket type does not send multipart messages")))
    } else {
        Ok(msg)
    }
}

/// One single-frame message; whole multipart messages are dropped.
#[inline]
pub(crate) fn recv_single<I: Inbound>(inn: &mut I, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
    loop {
        let (msg, id) = inn.recv(pipes)?;
        if !msg.more() {
            return Ok((msg, id));
        }
        // The rest of the message is queued with it (pipes are flushed per message).
        loop {
            let (rest, _) = inn.recv(pipes)?;
            if !rest.more() {
                break;
            }
        }
    }
}

// ---- Rules ----

/// No rules beyond the strategies (PUSH, PULL).
#[derive(Default)]
pub(crate) struct Plain;
impl Rules for Plain {}

/// Single-frame messages (SCATTER, GATHER, CLIENT).
#[derive(Default)]
pub(crate) struct SingleFrame;
impl Rules for SingleFrame {
    const SINGLE_FRAME: bool = true;
}

/// Exactly one peer; later connections are closed (PAIR, and CHANNEL with
/// `SINGLE_FRAME`).
#[derive(Default)]
pub(crate) struct OnePeer<const SINGLE_FRAME: bool> {
    peer: Option<PipeId>,
}
impl<const S: bool> Rules for OnePeer<S> {
    const SINGLE_FRAME: bool = S;

    fn admit(&mut self, id: PipeId) -> bool {
        if self.peer.is_some() {
            return false;
        }
        self.peer = Some(id);
        true
    }
    fn owns(&self, id: PipeId) -> bool {
        self.peer == Some(id)
    }
    fn forget(&mut self, _id: PipeId) {
        self.peer = None;
    }
}

// ---- Outbound strategies ----

/// Load-balance: each message to the next writable pipe ([`Lb`]).
impl Outbound for Lb {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        Lb::attach(self, id);
    }
    fn detach(&mut self, id: PipeId) {
        Lb::detach(self, id);
    }
    fn write_activated(&mut self, id: PipeId) {
        self.activated(id);
    }
    // Always inlined into the socket type's `send` (a call the hints alone did
    // not save), with `Lb::send` itself: the message is moved once less per send.
    #[inline(always)]
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        Lb::send(self, msg, pipes).map(|_| ())
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        Lb::has_out(self, pipes)
    }
    fn direct_target(&mut self) -> Option<PipeId> {
        Lb::direct_target(self)
    }
    fn direct_sent(&mut self, _id: PipeId) {
        Lb::direct_sent(self);
    }
}

/// Receive-only types: sending fails with ENOTSUP.
#[derive(Default)]
pub(crate) struct NoSend;
impl Outbound for NoSend {
    const SENDS: bool = false;
    fn attach(&mut self, _id: PipeId, _pipes: &mut Pipes) {}
    fn detach(&mut self, _id: PipeId) {}
    fn write_activated(&mut self, _id: PipeId) {}
    fn send(&mut self, msg: Msg, _pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        Err((msg, Error::NotSupported))
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
}

/// The one pipe of a one-peer type: sending blocks at the HWM or without a
/// peer; the rest of a message whose pipe went away is swallowed.
#[derive(Default)]
pub(crate) struct SingleOut {
    pipe: Option<PipeId>,
    /// A multipart message is being written.
    more_out: bool,
    /// Its pipe went away: swallow the rest.
    dropping: bool,
}
impl Outbound for SingleOut {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.pipe = Some(id);
    }
    fn detach(&mut self, _id: PipeId) {
        self.pipe = None;
        if self.more_out {
            self.more_out = false;
            self.dropping = true;
        }
    }
    fn write_activated(&mut self, _id: PipeId) {}
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
    fn direct_target(&mut self) -> Option<PipeId> {
        if self.more_out || self.dropping {
            None
        } else {
            self.pipe
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

// ---- Inbound strategies ----

/// Fair-queue: messages from the readable pipes in turn ([`Fq`]).
impl Inbound for Fq {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        Fq::attach(self, id);
    }
    fn detach(&mut self, id: PipeId) {
        Fq::detach(self, id);
    }
    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        self.activated(id);
    }
    // Always inlined, as Lb's `send`.
    #[inline(always)]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
        Fq::recv(self, pipes)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        Fq::has_in(self, pipes)
    }
}

/// Send-only types: whatever the peer sends is read and dropped (which
/// leaves the reader asleep, so the peer's departure is still signalled);
/// receiving fails with ENOTSUP.
#[derive(Default)]
pub(crate) struct Discard;
impl Inbound for Discard {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        discard_input(id, pipes);
    }
    fn detach(&mut self, _id: PipeId) {}
    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        discard_input(id, pipes);
    }
    fn recv(&mut self, _pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
        Err(Error::NotSupported)
    }
    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
}

/// Read and discard whatever a send-only socket's peer sent.
pub(super) fn discard_input(id: PipeId, pipes: &mut Pipes) {
    let p = pipes.get_mut(id);
    while p.read().is_some() {}
}

/// The one pipe of a one-peer type, read directly.
#[derive(Default)]
pub(crate) struct SingleIn {
    pipe: Option<PipeId>,
}
impl Inbound for SingleIn {
    fn attach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.pipe = Some(id);
    }
    fn detach(&mut self, _id: PipeId) {
        self.pipe = None;
    }
    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
    }
    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
        let Some(id) = self.pipe else {
            return Err(Error::Again);
        };
        read_single(Some(id), pipes).map(|m| (m, id))
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        match self.pipe {
            Some(id) => pipes.get_mut(id).check_read(),
            None => false,
        }
    }
}
