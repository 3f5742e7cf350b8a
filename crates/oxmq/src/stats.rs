//! Always-on statistics (issue 25): messages and bytes in and out, drops
//! by reason, reconnects, handshake failures by cause and queue depths, per
//! socket and per peer ([`crate::Socket::stats`]).
//!
//! Cost model: nothing is counted twice, and nothing is counted where it is
//! not already single-writer. Traffic is counted by the pipe ends, each end
//! in its own private fields (the socket's writer what the socket sent to a
//! peer, the socket's reader what it took from one), and summed when asked,
//! with a "retired" total kept for pipes that went away. Queue depths are
//! not counted at all: they are derived when asked (the writer's count less
//! the reader's last published one; the reader's unread frames walked).
//! Drops are counted at the points that report them to monitors
//! (`channel::pipes`, `Pipes::note_*`), by the socket's thread; what only
//! the I/O thread sees (reconnects, handshake failures, oversize frames) is
//! a relaxed atomic in the socket's monitor slot, touched on those rare
//! events, never per message.

use std::sync::atomic::{AtomicU64, Ordering};

/// Why a message was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A peer was at its high-water mark and the socket type drops rather
    /// than blocks (PUB, XPUB without XPUB_NODROP, ROUTER without
    /// ROUTER_MANDATORY).
    Hwm,
    /// ROUTER: no peer has the routing id (without ROUTER_MANDATORY).
    NoRoute,
    /// CONFLATE: replaced by a newer message before it was read.
    Conflate,
    /// A peer sent a frame over MAXMSGSIZE (its connection is closed).
    Oversize,
}

impl DropReason {
    /// Every reason, in the order the C and Python views list them.
    pub const ALL: [DropReason; 4] = [DropReason::Hwm, DropReason::NoRoute, DropReason::Conflate, DropReason::Oversize];

    /// The reason's name in the Python/Ruby views and the Prometheus labels.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Hwm => "hwm",
            DropReason::NoRoute => "no_route",
            DropReason::Conflate => "conflate",
            DropReason::Oversize => "oversize",
        }
    }
}

/// Messages dropped, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// At a peer's HWM (PUB, XPUB, RADIO; ROUTER without ROUTER_MANDATORY).
    pub hwm: u64,
    /// ROUTER: to a routing id no peer has.
    pub no_route: u64,
    /// Replaced under CONFLATE before anyone took them (either side).
    pub conflate: u64,
    /// A peer's frame over MAXMSGSIZE (the connection goes with it).
    pub oversize: u64,
}

impl Drops {
    /// The count for one reason.
    pub fn get(&self, reason: DropReason) -> u64 {
        match reason {
            DropReason::Hwm => self.hwm,
            DropReason::NoRoute => self.no_route,
            DropReason::Conflate => self.conflate,
            DropReason::Oversize => self.oversize,
        }
    }

    pub(crate) fn slot(&mut self, reason: DropReason) -> &mut u64 {
        match reason {
            DropReason::Hwm => &mut self.hwm,
            DropReason::NoRoute => &mut self.no_route,
            DropReason::Conflate => &mut self.conflate,
            DropReason::Oversize => &mut self.oversize,
        }
    }

    /// All reasons together.
    pub fn total(&self) -> u64 {
        self.hwm + self.no_route + self.conflate + self.oversize
    }
}

/// Handshakes that failed, by cause (the monitor's HANDSHAKE_FAILED_*
/// classes, with timeouts apart from the rest of NO_DETAIL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandshakeFailures {
    /// A ZMTP or mechanism protocol error (bad greeting, wrong CURVE key, ...).
    pub protocol: u64,
    /// Refused by ZAP, or the peer said so with a ZAP-style ERROR.
    pub auth: u64,
    /// HANDSHAKE_IVL passed.
    pub timeout: u64,
    /// The connection dropped, ZAP was unreachable, or any other cause.
    pub other: u64,
}

impl HandshakeFailures {
    /// All causes together.
    pub fn total(&self) -> u64 {
        self.protocol + self.auth + self.timeout + self.other
    }
}

/// One connection as the socket sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// The peer's routing id (as a ROUTER addresses it), if it has one.
    pub routing_id: Option<Vec<u8>>,
    /// The endpoint given to `bind`/`connect` this connection came from
    /// (resolved, as LAST_ENDPOINT); empty once that endpoint is gone.
    pub endpoint: String,
    /// The peer's address (its `Peer-Address` property), tcp and ipc only.
    pub remote_address: Option<String>,
    /// Both ends of the connection as version-2 monitor events name them
    /// (`tcp://ip:port`, `ipc://path`), where known: for inproc, and for a
    /// connection made while no monitor was attached, the bind side names
    /// only its local end and the connect side only its remote end, the
    /// endpoint given (as libzmq's unconnected endpoint pairs do).
    pub local: String,
    /// The remote end (see `local`).
    pub remote: String,
    /// As [`SocketStats::msgs_in`], for this peer.
    pub msgs_in: u64,
    /// As [`SocketStats::bytes_in`], for this peer.
    pub bytes_in: u64,
    /// As [`SocketStats::msgs_out`], for this peer.
    pub msgs_out: u64,
    /// As [`SocketStats::bytes_out`], for this peer.
    pub bytes_out: u64,
    /// As [`SocketStats::msgs_out_direct`], for this peer.
    pub msgs_out_direct: u64,
    /// As [`SocketStats::msgs_in_direct`], for this peer.
    pub msgs_in_direct: u64,
    /// Messages the peer sent that the socket has not read yet.
    pub queued_in: u64,
    /// Messages to the peer not yet taken by its connection (or inproc
    /// peer; a message its poll has seen counts as taken): 0 once the peer
    /// has read everything. Not libzmq's pipes-stats count, which
    /// [`crate::Socket::monitor_pipes_stats`] reports: that one goes by
    /// the reader's acknowledgements, sent at multiples of the LWM (over
    /// inproc in oxmq also when the reader drains).
    pub queued_out: u64,
    /// Drops attributed to this peer (HWM, and CONFLATE on the sending
    /// side or of messages it sent).
    pub drops: Drops,
}

/// A socket's statistics (see [`crate::Socket::stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// Messages (whole, multipart counted once) and bytes (the bodies of
    /// their frames) that crossed between this socket and its peers: taken
    /// from a peer (`_in`: including those a receiving CONFLATE then
    /// replaced) and handed to one (`_out`: a PUB message to three
    /// subscribers counts three times, a dropped one not at all, nor do
    /// frames taken back unsent, such as those of a multipart message left
    /// half-written when its connection went). ROUTER's
    /// routing-id frames are envelope, not traffic. Peers that are gone
    /// still count.
    pub msgs_in: u64,
    /// Body bytes of the messages in `msgs_in`.
    pub bytes_in: u64,
    /// Messages handed to peers (see `msgs_in`).
    pub msgs_out: u64,
    /// Body bytes of the messages in `msgs_out`.
    pub bytes_out: u64,
    /// Of `msgs_out`, those the sending thread wrote to the connection
    /// itself (large copy-mode sends, [`crate::Socket::send_slice`], on a
    /// connection with nothing queued) instead of handing them to the I/O
    /// thread.
    pub msgs_out_direct: u64,
    /// Of `msgs_in`, those the receiving thread read from the connection
    /// itself (a REQ's reply, a REP's request, while it waited for one on
    /// an idle connection) instead of taking them from the I/O thread.
    pub msgs_in_direct: u64,
    /// Messages dropped, by reason.
    pub drops: Drops,
    /// Reconnects scheduled (the monitor's CONNECT_RETRIED).
    pub reconnects: u64,
    /// Handshakes failed, by cause.
    pub handshake_failures: HandshakeFailures,
    /// Sum of the peers' `queued_in`.
    pub queued_in: u64,
    /// Sum of the peers' `queued_out`.
    pub queued_out: u64,
    /// The connections the socket has now.
    pub peers: Vec<PeerStats>,
}

/// What the I/O thread counts for a socket: relaxed atomics, written only
/// on reconnects and on failed or faulty connections. Lives in the
/// socket's `Monitor` slot, which every listener, session and connection
/// already holds.
#[derive(Default)]
pub(crate) struct IoCounters {
    reconnects: AtomicU64,
    hs_protocol: AtomicU64,
    hs_auth: AtomicU64,
    hs_timeout: AtomicU64,
    hs_other: AtomicU64,
    oversize: AtomicU64,
}

/// Why a handshake failed, as [`HandshakeFailures`] sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandshakeCause {
    Protocol,
    Auth,
    Timeout,
    Other,
}

impl IoCounters {
    pub(crate) fn note_reconnect(&self) {
        self.reconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// A frame over MAXMSGSIZE cost its connection.
    pub(crate) fn note_oversize(&self) {
        self.oversize.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn note_handshake_failed(&self, cause: HandshakeCause) {
        let c = match cause {
            HandshakeCause::Protocol => &self.hs_protocol,
            HandshakeCause::Auth => &self.hs_auth,
            HandshakeCause::Timeout => &self.hs_timeout,
            HandshakeCause::Other => &self.hs_other,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn reconnects(&self) -> u64 {
        self.reconnects.load(Ordering::Relaxed)
    }

    pub(crate) fn oversize(&self) -> u64 {
        self.oversize.load(Ordering::Relaxed)
    }

    pub(crate) fn handshake_failures(&self) -> HandshakeFailures {
        HandshakeFailures {
            protocol: self.hs_protocol.load(Ordering::Relaxed),
            auth: self.hs_auth.load(Ordering::Relaxed),
            timeout: self.hs_timeout.load(Ordering::Relaxed),
            other: self.hs_other.load(Ordering::Relaxed),
        }
    }
}

/// Traffic of pipes that went away, kept by the socket's thread.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Retired {
    pub(crate) msgs_in: u64,
    pub(crate) bytes_in: u64,
    pub(crate) msgs_out: u64,
    pub(crate) bytes_out: u64,
    pub(crate) msgs_out_direct: u64,
    pub(crate) msgs_in_direct: u64,
}

impl PeerStats {
    /// The counters by name, in a fixed order: the keys of the Python and
    /// Ruby views and the Prometheus metric names.
    pub fn counters(&self) -> [(&'static str, u64); 10] {
        let d = &self.drops;
        [
            ("msgs_in", self.msgs_in),
            ("bytes_in", self.bytes_in),
            ("msgs_out", self.msgs_out),
            ("bytes_out", self.bytes_out),
            ("queued_in", self.queued_in),
            ("queued_out", self.queued_out),
            ("drops_hwm", d.hwm),
            ("drops_no_route", d.no_route),
            ("drops_conflate", d.conflate),
            ("drops_oversize", d.oversize),
        ]
    }
}

impl SocketStats {
    /// The counters by name, as [`PeerStats::counters`] (whose names mean
    /// the same here, summed or for the whole socket), then the socket's own.
    pub fn counters(&self) -> [(&'static str, u64); 15] {
        let totals = PeerStats {
            msgs_in: self.msgs_in,
            bytes_in: self.bytes_in,
            msgs_out: self.msgs_out,
            bytes_out: self.bytes_out,
            queued_in: self.queued_in,
            queued_out: self.queued_out,
            drops: self.drops,
            ..PeerStats::default()
        };
        let h = &self.handshake_failures;
        let mut all = [("", 0); 15];
        let (shared, own) = all.split_at_mut(10);
        shared.copy_from_slice(&totals.counters());
        own.copy_from_slice(&[
            ("reconnects", self.reconnects),
            ("handshake_failed_protocol", h.protocol),
            ("handshake_failed_auth", h.auth),
            ("handshake_failed_timeout", h.timeout),
            ("handshake_failed_other", h.other),
        ]);
        all
    }

    /// The counter an oxmq-only `STATS_*` option reads (see `opt`).
    pub fn by_option(&self, option: i32) -> Option<u64> {
        use crate::options::opt;
        let h = &self.handshake_failures;
        Some(match option {
            opt::STATS_MSGS_IN => self.msgs_in,
            opt::STATS_BYTES_IN => self.bytes_in,
            opt::STATS_MSGS_OUT => self.msgs_out,
            opt::STATS_BYTES_OUT => self.bytes_out,
            opt::STATS_DROPS_HWM => self.drops.hwm,
            opt::STATS_DROPS_NO_ROUTE => self.drops.no_route,
            opt::STATS_DROPS_CONFLATE => self.drops.conflate,
            opt::STATS_DROPS_OVERSIZE => self.drops.oversize,
            opt::STATS_RECONNECTS => self.reconnects,
            opt::STATS_HANDSHAKE_FAILED_PROTOCOL => h.protocol,
            opt::STATS_HANDSHAKE_FAILED_AUTH => h.auth,
            opt::STATS_HANDSHAKE_FAILED_TIMEOUT => h.timeout,
            opt::STATS_HANDSHAKE_FAILED_OTHER => h.other,
            opt::STATS_QUEUED_IN => self.queued_in,
            opt::STATS_QUEUED_OUT => self.queued_out,
            opt::STATS_PEERS => self.peers.len() as u64,
            _ => return None,
        })
    }
}
