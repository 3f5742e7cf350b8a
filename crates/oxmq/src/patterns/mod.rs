//! Routing patterns: how each socket type chooses pipes for sending and receiving.
//!
//! A pattern owns no I/O. It holds `PipeId`s into the socket's [`Pipes`] slab
//! and keeps libzmq's active/inactive discipline:
//! - a pipe leaves a pattern's *readable* set only after a read on it came back
//!   empty (which marks its reader asleep, so the next flush from the peer
//!   produces `read_activated`);
//! - a pipe leaves the *writable* set only after `check_write` failed (which
//!   marks its writer waiting, so the peer's next drain produces `write_activated`).
//!
//! Hence a pattern never polls idle pipes, and no wake-up is lost.
//! Pipes found terminated (peer gone, nothing left to read) are reported with
//! `Pipes::mark_dead`; the socket then calls `detach`.

use crate::channel::direct::DirectHead;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;
use crate::options::Options;
use oxmq_proto::SocketType;

mod array;
// Socket types built from an outbound and an inbound strategy.
mod compose;
mod dealer_router;
// Draft DGRAM.
mod dgram;
mod dist;
// Draft types: CLIENT/SERVER, SCATTER/GATHER, PEER/CHANNEL.
mod draft;
mod fq;
mod lb;
mod pair;
mod pipeline;
mod pubsub;
// Draft RADIO/DISH.
mod radio_dish;
mod reqrep;
mod stream;
mod trie;
// The subscriber side of SUB/XSUB and DISH.
mod upstream;

#[cfg(test)]
mod testutil;

/// Socket-type behaviour. All methods run on the socket's own thread.
pub(crate) trait Pattern: Send {
    /// A pipe has joined. Its `SocketPipe` is already in `pipes`.
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes);
    /// A pipe is leaving; forget every reference to `id` (it is still in `pipes` during the call).
    fn detach(&mut self, id: PipeId, pipes: &mut Pipes);
    /// The peer flushed frames into a pipe whose reader was asleep (or it terminated).
    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes);
    /// Room appeared in a pipe whose writer waited at the HWM (or its reader left).
    fn write_activated(&mut self, id: PipeId, pipes: &mut Pipes);
    /// A connecting pipe got a fresh connection (reconnect): SUB/XSUB resend their subscriptions.
    fn hiccuped(&mut self, _id: PipeId, _pipes: &mut Pipes) {}

    /// Send one frame. `Err((msg, Error::Again))` hands the frame back when the
    /// socket must wait (the caller blocks and retries, or reports EAGAIN).
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)>;
    /// Receive one frame; `Error::Again` when none is available now.
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error>;
    /// Could a `recv` succeed now?
    fn has_in(&mut self, pipes: &mut Pipes) -> bool;
    /// Could a `send` succeed now?
    fn has_out(&mut self, pipes: &mut Pipes) -> bool;
    /// The pipe a message's last frame would go to now, for a sender that
    /// may write it to the connection itself (`channel::direct`), with the
    /// frames the type puts before it pushed onto `head` (REQ's delimiter,
    /// REP's envelope); `None` for types that route by content, and when
    /// frames of the message already went into the pipe.
    fn direct_target(&mut self, _pipes: &mut Pipes, _head: &mut DirectHead) -> Option<PipeId> {
        None
    }
    /// A message went to `direct_target`'s pipe without the pipe: the
    /// type's state moves on as if it had been written.
    fn direct_sent(&mut self, _id: PipeId, _pipes: &mut Pipes) {}
    /// A blocking receive found nothing: the one pipe whose next message
    /// it waits for, which the receiving thread may read from its
    /// connection itself (`channel::direct_read`). REQ's reply pipe; REP's
    /// peer when it has one.
    fn direct_source(&self, _pipes: &Pipes) -> Option<PipeId> {
        None
    }
    /// ROUTER (under REP): the pipe a message to `routing_id` would go to
    /// now, if that pipe has room, outside any message being sent.
    fn route_of(&mut self, _routing_id: &[u8], _pipes: &mut Pipes) -> Option<PipeId> {
        None
    }

    /// Pattern-specific option (SUBSCRIBE, ROUTER_MANDATORY, XPUB_VERBOSE...).
    /// `Ok(true)` when handled; `Ok(false)` lets the socket treat it as generic.
    /// The integer form of the value is `value` as a native-endian i32 when 4 bytes long.
    fn set_option(&mut self, _opt: i32, _value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        Ok(false)
    }
    /// Pattern-specific readable option, as an integer.
    fn get_option_int(&self, _opt: i32) -> Option<i64> {
        None
    }
    /// STREAM: the routing id it generated for the pipe attached last, once.
    fn take_generated_routing_id(&mut self) -> Option<bytes::Bytes> {
        None
    }
    /// PEER: the routing id given to the pipe attached last (`zmq_connect_peer`).
    fn last_peer_routing_id(&self) -> u32 {
        0
    }

    /// Draft RADIO/DISH: `zmq_join` (ENOTSUP on every type but DISH).
    fn join(&mut self, _group: &[u8], _pipes: &mut Pipes) -> Result<(), Error> {
        Err(Error::NotSupported)
    }
    /// Draft RADIO/DISH: `zmq_leave`.
    fn leave(&mut self, _group: &[u8], _pipes: &mut Pipes) -> Result<(), Error> {
        Err(Error::NotSupported)
    }
}

/// Decode a libzmq integer option value (4-byte native-endian int).
pub(crate) fn int_value(value: &[u8]) -> Result<i32, Error> {
    let bytes: [u8; 4] = value.try_into().map_err(|_| Error::Invalid("option value must be a 4-byte integer"))?;
    Ok(i32::from_ne_bytes(bytes))
}

/// Decode a libzmq boolean option: a 4-byte integer that must not be negative.
pub(crate) fn bool_value(value: &[u8]) -> Result<bool, Error> {
    let v = int_value(value)?;
    if v < 0 {
        return Err(Error::Invalid("option value must not be negative"));
    }
    Ok(v != 0)
}

/// The next message of a one-pipe socket (PAIR, DGRAM): internal frames are
/// skipped, and a drained pipe whose writer has gone is marked dead.
#[inline]
pub(crate) fn read_single(pipe: Option<PipeId>, pipes: &mut Pipes) -> Result<Msg, Error> {
    let Some(id) = pipe else {
        return Err(Error::Again);
    };
    let p = pipes.get_mut(id);
    loop {
        match p.read() {
            Some(m) if m.is_internal() => continue,
            Some(m) => {
                pipes.last_read = Some(id);
                return Ok(m);
            }
            None => {
                if p.is_terminated() {
                    pipes.mark_dead(id);
                }
                return Err(Error::Again);
            }
        }
    }
}

/// Called from `read_activated` of patterns that read only on demand: a peer
/// that left without sending data still has its routing-id frame queued;
/// absorbing it lets the pipe read as terminated, so the socket detaches it.
#[inline]
pub(crate) fn notice_departure(id: PipeId, pipes: &mut Pipes) {
    let p = pipes.get_mut(id);
    if p.inn.is_writer_gone() {
        p.check_read();
    }
}

/// ROUTER_RAW: the pattern a ROUTER switches to.
pub(crate) fn new_raw_router() -> Box<dyn Pattern> {
    Box::new(stream::Stream::raw_router())
}

/// ROUTER_RAW on a REP (a ROUTER inside libzmq, which accepts it).
pub(crate) fn new_raw_rep() -> Box<dyn Pattern> {
    Box::new(reqrep::Rep::raw())
}

/// Build the pattern for a socket type.
pub(crate) fn new_pattern(kind: SocketType, options: &Options) -> Box<dyn Pattern> {
    let _ = options;
    match kind {
        SocketType::Pair => Box::<pair::Pair>::default(),
        SocketType::Pub => Box::new(pubsub::XPub::new(true)),
        SocketType::XPub => Box::new(pubsub::XPub::new(false)),
        SocketType::Sub => Box::new(pubsub::XSub::new(true)),
        SocketType::XSub => Box::new(pubsub::XSub::new(false)),
        SocketType::Push => Box::<pipeline::Push>::default(),
        SocketType::Pull => Box::<pipeline::Pull>::default(),
        SocketType::Req => Box::new(reqrep::Req::new()),
        SocketType::Rep => Box::new(reqrep::Rep::new()),
        SocketType::Dealer => Box::<dealer_router::Dealer>::default(),
        SocketType::Router => Box::new(dealer_router::Router::new()),
        SocketType::Stream => Box::new(stream::Stream::new()),
        SocketType::Server | SocketType::Peer => Box::new(draft::Server::new()),
        SocketType::Client => Box::<draft::Client>::default(),
        SocketType::Scatter => Box::<draft::Scatter>::default(),
        SocketType::Gather => Box::<draft::Gather>::default(),
        SocketType::Channel => Box::<draft::Channel>::default(),
        SocketType::Radio => Box::new(radio_dish::Radio::new()),
        SocketType::Dish => Box::new(radio_dish::Dish::new()),
        // Draft DGRAM.
        SocketType::Dgram => Box::<dgram::Dgram>::default(),
    }
}
