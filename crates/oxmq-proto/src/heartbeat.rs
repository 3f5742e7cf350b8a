//! ZMTP 3.1 heartbeating (PING/PONG) as timers with the clock passed in.
//!
//! Three timers, modelled on libzmq's engine:
//! * interval (`ZMQ_HEARTBEAT_IVL`): send a PING every interval;
//! * timeout (`ZMQ_HEARTBEAT_TIMEOUT`, default the interval): armed when a
//!   PING goes out, disarmed by any inbound traffic; expiry = dead peer;
//! * TTL (the peer's PING TTL): armed by an inbound PING with TTL > 0,
//!   disarmed by later traffic; expiry = dead peer.

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::command::Command;

/// What the caller must do after [`Heartbeat::handle_timeout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeartbeatAction {
    /// Nothing is due yet.
    None,
    /// Send this PING command frame.
    SendPing(Command),
    /// The peer is dead: close the connection.
    Dead,
}

/// Heartbeat timers for one connection.
///
/// Call-order contract: create it when the handshake completes. For every
/// inbound batch of bytes call [`on_traffic`](Self::on_traffic) *before*
/// processing the commands in it, so that a PING in the batch arms its TTL
/// timer via [`on_ping`](Self::on_ping) after traffic disarmed the old one.
/// Sleep until [`next_deadline`](Self::next_deadline), then call
/// [`handle_timeout`](Self::handle_timeout) and act on its result. Calling
/// `handle_timeout` early is harmless (returns `None`).
#[derive(Clone, Debug)]
pub struct Heartbeat {
    ivl: Option<Duration>,
    timeout: Option<Duration>,
    ttl_deciseconds: u16,
    next_ping: Option<Instant>,
    timeout_at: Option<Instant>,
    ttl_at: Option<Instant>,
}

fn nonzero(d: Option<Duration>) -> Option<Duration> {
    // libzmq's options use 0 for "off".
    d.filter(|d| !d.is_zero())
}

impl Heartbeat {
    /// `ttl` is what we tell the peer in our PINGs; `timeout` defaults to
    /// `ivl`. Zero durations mean "off", as in libzmq.
    pub fn new(ivl: Option<Duration>, ttl: Option<Duration>, timeout: Option<Duration>, now: Instant) -> Self {
        let ivl = nonzero(ivl);
        let ttl_deciseconds = nonzero(ttl).map_or(0, |t| u16::try_from(t.as_millis() / 100).unwrap_or(u16::MAX));
        Heartbeat {
            ivl,
            timeout: nonzero(timeout).or(ivl),
            ttl_deciseconds,
            next_ping: ivl.map(|i| now + i),
            timeout_at: None,
            ttl_at: None,
        }
    }

    /// The TTL our PINGs carry, in deciseconds.
    pub fn ttl_deciseconds(&self) -> u16 {
        self.ttl_deciseconds
    }

    /// Whether inbound traffic matters to the timers: a PING timeout or a
    /// peer's TTL may end the connection unless bytes arrive.
    pub fn watches_traffic(&self) -> bool {
        self.ivl.is_some() || self.timeout_at.is_some() || self.ttl_at.is_some()
    }

    /// Any inbound bytes prove the peer alive.
    pub fn on_traffic(&mut self, _now: Instant) {
        self.timeout_at = None;
        self.ttl_at = None;
    }

    /// The peer sent PING with this TTL: if nothing else arrives within it,
    /// the connection is dead. Like libzmq, an armed TTL timer is not
    /// pushed back by further PINGs without other traffic in between.
    pub fn on_ping(&mut self, ttl_deciseconds: u16, now: Instant) {
        if ttl_deciseconds > 0 && self.ttl_at.is_none() {
            self.ttl_at = Some(now + Duration::from_millis(u64::from(ttl_deciseconds) * 100));
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called: the earliest PING, PING timeout or TTL due.
    pub fn next_deadline(&self) -> Option<Instant> {
        [self.next_ping, self.timeout_at, self.ttl_at].into_iter().flatten().min()
    }

    /// Called at or after [`next_deadline`](Self::next_deadline): whether to send a PING now or drop the connection as dead.
    pub fn handle_timeout(&mut self, now: Instant) -> HeartbeatAction {
        let due = |t: Option<Instant>| t.is_some_and(|t| t <= now);
        if due(self.timeout_at) || due(self.ttl_at) {
            return HeartbeatAction::Dead;
        }
        if due(self.next_ping) {
            let ivl = self.ivl.expect("next_ping is only set with an interval");
            self.next_ping = Some(now + ivl);
            if self.timeout_at.is_none() {
                self.timeout_at = self.timeout.map(|t| now + t);
            }
            return HeartbeatAction::SendPing(Command::Ping {
                ttl_deciseconds: self.ttl_deciseconds,
                context: Bytes::new(),
            });
        }
        HeartbeatAction::None
    }
}
