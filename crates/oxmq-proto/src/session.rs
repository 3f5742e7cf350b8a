//! The traffic phase of one connection, after the handshake: frames,
//! subscriptions and commands in and out, heartbeats on a clock the caller
//! passes in. No I/O: the caller owns the buffers and the socket.
//!
//! ```text
//!            bytes read                               bytes to write
//!   socket ─────────────► rx: BytesMut ─┐      ┌──► out: Vec<u8> ─────► socket
//!                                       ▼      │
//!                  poll_inbound / handle_frame │ encode_* / poll_transmit
//!                                  ┌───────────┴──────────┐
//!              Inbound ◄───────────┤       Session        ├◄──── now (handle_timeout)
//!  (frames, subscriptions)         │ Framing: Zmtp3 /     │
//!                                  │  Zmtp10 / Raw        │
//!                                  └──────────────────────┘
//! ```
//!
//! The framing is one enum ([`Framing`]): ZMTP 3.x (with its mechanism
//! codec and heartbeats), ZMTP/1.0, or raw bytes (STREAM and DGRAM over
//! tcp/ipc). Each carries only what it can use, so "heartbeats over raw
//! bytes" or "CURVE under ZMTP/1.0" cannot be represented.

use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};

use crate::command::Command;
use crate::error::{ProtocolError, SessionError};
use crate::frame::{encode_frame_header, encode_zmtp10_frame_header, Frame, FrameDecoder, FrameHeader, FLAG_MORE};
use crate::handshake::PeerInfo;
use crate::heartbeat::{Heartbeat, HeartbeatAction};
use crate::mechanism::curve::Opened;
use crate::mechanism::{CurveCodec, TrafficCodec};
use crate::socket_type::SocketType;

/// Socket-side settings of a session (the options libzmq reads for it).
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The local socket's type, which decides what the session does with subscriptions and JOIN/LEAVE.
    pub socket_type: SocketType,
    /// `ZMQ_MAXMSGSIZE`, checked per frame as libzmq does.
    pub max_msg_size: Option<u64>,
    /// `ZMQ_HEARTBEAT_IVL`; `None` or zero: no PINGs.
    pub heartbeat_ivl: Option<Duration>,
    /// `ZMQ_HEARTBEAT_TTL`, the TTL our PINGs carry.
    pub heartbeat_ttl: Option<Duration>,
    /// `ZMQ_HEARTBEAT_TIMEOUT`; `None` or zero: the interval.
    pub heartbeat_timeout: Option<Duration>,
}

impl SessionConfig {
    /// No heartbeats and no size limit.
    pub fn new(socket_type: SocketType) -> SessionConfig {
        SessionConfig {
            socket_type,
            max_msg_size: None,
            heartbeat_ivl: None,
            heartbeat_ttl: None,
            heartbeat_timeout: None,
        }
    }
}

/// The next whole CURVE frame at the front of `rx`, opened in place and
/// split off as its plaintext; `Ok(None)` until one is complete.
fn open_next(
    decoder: &FrameDecoder,
    codec: &mut CurveCodec,
    rx: &mut BytesMut,
) -> Result<Option<Frame>, ProtocolError> {
    let Some(h) = decoder.complete_header(rx)? else { return Ok(None) };
    let end = h.header_len + h.body_len;
    let opened = codec.open_in_place(&mut rx[h.header_len..end])?;
    rx.advance(h.header_len + Opened::PLAINTEXT_AT);
    let body = rx.split_to(h.body_len - Opened::PLAINTEXT_AT).freeze();
    Ok(Some(Frame { more: opened.more, command: opened.command, body }))
}

/// How traffic is framed on this connection.
#[derive(Debug)]
#[non_exhaustive]
pub enum Framing {
    /// ZMTP 3.x framing, which ZMTP/2.0 peers share (they send no commands).
    Zmtp3(Zmtp3),
    /// ZMTP/1.0 (RFC 13): `size flags body`, no commands, no mechanism.
    Zmtp10,
    /// Bytes as they are (STREAM; DGRAM over tcp/ipc): every read is one
    /// message, every frame's bytes go out back to back.
    Raw {
        /// STREAM: an empty frame from the socket closes the connection
        /// (DGRAM skips it).
        close_on_empty: bool,
    },
}

/// The state of a ZMTP 3.x (or 2.0) connection's traffic phase.
pub struct Zmtp3 {
    /// CURVE or GSSAPI: every traffic frame is boxed and unboxed through it.
    codec: Option<TrafficCodec>,
    /// `None` for ZMTP/2.0 peers (no PING) and when no timer is set.
    heartbeat: Option<Heartbeat>,
    /// The peer speaks 3.1: subscriptions go as SUBSCRIBE/CANCEL commands,
    /// not as the 3.0 messages `\x01topic` / `\x00topic`.
    subscription_commands: bool,
}

impl std::fmt::Debug for Zmtp3 {
    // The codec holds the session key: show only which one there is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let codec = match &self.codec {
            None => "none",
            Some(TrafficCodec::Curve(_)) => "CURVE",
            Some(TrafficCodec::Gssapi(_)) => "GSSAPI",
        };
        f.debug_struct("Zmtp3")
            .field("codec", &codec)
            .field("heartbeat", &self.heartbeat)
            .field("subscription_commands", &self.subscription_commands)
            .finish()
    }
}

impl Zmtp3 {
    /// Whether traffic is boxed (CURVE, or GSSAPI unless in plaintext).
    pub fn is_boxed(&self) -> bool {
        self.codec.is_some()
    }

    /// The heartbeat timers, when HEARTBEAT_IVL or a peer's PING armed them.
    pub fn heartbeat(&self) -> Option<&Heartbeat> {
        self.heartbeat.as_ref()
    }

    /// Whether subscriptions travel as SUBSCRIBE/CANCEL commands (ZMTP 3.1) rather than as messages (3.0 and older).
    pub fn subscription_commands(&self) -> bool {
        self.subscription_commands
    }
}

/// What the socket does with subscriptions, which decides what inbound
/// commands mean and how outbound subscriptions are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// PUB/XPUB: reads SUBSCRIBE/CANCEL and 3.0 subscription messages.
    Publisher,
    /// RADIO (draft): reads JOIN/LEAVE.
    Radio,
    /// DISH (draft): writes JOIN/LEAVE, as commands, to every 3.x peer.
    Dish,
    Other,
}

impl Role {
    fn of(socket_type: SocketType) -> Role {
        match socket_type {
            SocketType::Pub | SocketType::XPub => Role::Publisher,
            SocketType::Radio => Role::Radio,
            SocketType::Dish => Role::Dish,
            _ => Role::Other,
        }
    }
}

/// What the peer sent, for the socket.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Inbound {
    /// One data frame of a message (`more`: frames follow).
    Frame {
        /// More frames of the same message follow.
        more: bool,
        /// The frame's data.
        body: Bytes,
    },
    /// A subscription (`subscribe`) or its cancellation, from SUBSCRIBE/
    /// CANCEL, JOIN/LEAVE or a ZMTP 3.0 subscription message. `in_band`:
    /// it came as a message, and so takes its turn under the receive HWM as
    /// one; commands do not.
    Subscription {
        /// A subscription (true) or its cancellation (false).
        subscribe: bool,
        /// The topic prefix (from JOIN/LEAVE: the group).
        topic: Bytes,
        /// It came as a message (ZMTP 3.0 and older), so it takes its turn under the receive HWM as one; commands do not.
        in_band: bool,
    },
}

/// The traffic phase of one connection.
///
/// Call-order contract (the caller owns the socket, `rx` and `out`):
/// 1. Create it when the handshake completes ([`Session::new`], with the
///    handshake's [`PeerInfo`] and [`TrafficCodec`]) or at once for a raw connection
///    ([`Session::raw`]). Bytes the handshake left in its buffer belong to
///    this session: keep them in `rx`. If
///    [`subscribe_peer_to_all`](Self::subscribe_peer_to_all) says so, give
///    the socket a subscription to everything first.
/// 2. After every read, call
///    [`handle_bytes_received`](Self::handle_bytes_received) (the peer is
///    alive), then [`poll_inbound`](Self::poll_inbound) until `Ok(None)`.
///    A caller that reads a large body into its own buffer (see
///    [`pending_header`](Self::pending_header)) passes the completed frame to
///    [`handle_frame`](Self::handle_frame) instead. A caller may copy small
///    data frames straight out of `rx` where
///    [`small_data_frame`](Self::small_data_frame) allows it.
/// 3. Write outbound messages with [`encode_frame`](Self::encode_frame) (or
///    [`encode_frame_header`](Self::encode_frame_header) followed by the
///    body from the caller's own buffer) and subscriptions with
///    [`encode_subscription`](Self::encode_subscription).
/// 4. Sleep until [`poll_timeout`](Self::poll_timeout); then call
///    [`handle_timeout`](Self::handle_timeout).
/// 5. After 2 and 4, append [`poll_transmit`](Self::poll_transmit)'s
///    output (PONGs, PINGs) to what goes to the socket, but only between
///    messages: never after a frame with MORE until the message's last
///    frame (RFC 37: `traffic = *(command / message)`). Holding them for
///    one message is safe: they are boxed only when taken, so CURVE and
///    GSSAPI sequence numbers stay in wire order.
/// 6. Any `Err` ends the connection: close it. The session is not to be
///    used again.
#[derive(Debug)]
pub struct Session {
    framing: Framing,
    role: Role,
    decoder: FrameDecoder,
    /// Commands waiting for [`Session::poll_transmit`], not yet encoded:
    /// a codec's nonce must follow the order they reach the wire.
    transmit: Vec<Command>,
    /// The last inbound data frame had MORE: the next one continues a
    /// message, so it is not a 3.0 subscription. Tracked for publishers
    /// only, which see every frame (see [`Session::small_data_frame`] and
    /// `poll_inbound`'s shortcut).
    in_message: bool,
    subscribe_all: bool,
    /// Data frames are the bytes on the wire and the socket takes them as
    /// they are (no CURVE box, not a publisher's possible subscription):
    /// fixed by the framing and role, so worked out once.
    plain_data: bool,
}

impl Session {
    /// The session after a ZMTP handshake that found `peer`; `codec` is the
    /// handshake's (CURVE, GSSAPI), `now` starts the heartbeat interval.
    pub fn new(config: &SessionConfig, peer: &PeerInfo, codec: Option<TrafficCodec>, now: Instant) -> Session {
        let role = Role::of(config.socket_type);
        let (framing, decoder) = if peer.version.0 == 1 {
            (Framing::Zmtp10, FrameDecoder::zmtp10(config.max_msg_size))
        } else {
            let heartbeat = (peer.version.0 >= 3)
                .then(|| Heartbeat::new(config.heartbeat_ivl, config.heartbeat_ttl, config.heartbeat_timeout, now));
            let zmtp3 = Zmtp3 { codec, heartbeat, subscription_commands: peer.version >= (3, 1) };
            (Framing::Zmtp3(zmtp3), FrameDecoder::new(config.max_msg_size))
        };
        Session {
            framing,
            role,
            decoder,
            transmit: Vec::new(),
            in_message: false,
            // An unversioned 1.0 SUB filters locally and never subscribes:
            // libzmq subscribes it to everything.
            subscribe_all: role == Role::Publisher && peer.version.0 == 1 && peer.filters_locally,
            plain_data: false,
        }
        .with_plain_data()
    }

    fn with_plain_data(mut self) -> Session {
        self.plain_data = self.role != Role::Publisher
            && matches!(self.framing, Framing::Zmtp3(Zmtp3 { codec: None, .. }) | Framing::Zmtp10);
        self
    }

    /// A raw connection (no handshake): STREAM, or DGRAM over tcp/ipc.
    pub fn raw(socket_type: SocketType) -> Session {
        Session {
            framing: Framing::Raw { close_on_empty: socket_type != SocketType::Dgram },
            role: Role::of(socket_type),
            decoder: FrameDecoder::new(None),
            transmit: Vec::new(),
            in_message: false,
            subscribe_all: false,
            plain_data: false,
        }
    }

    /// How this session frames traffic (ZMTP 3.x with its codec, ZMTP/1.0, or raw STREAM bytes).
    pub fn framing(&self) -> &Framing {
        &self.framing
    }

    /// Whether a data frame goes out as a plain ZMTP 3.x header and the
    /// body as it is (no mechanism box, no ZMTP/1.0 or raw framing), so
    /// that another writer may frame one with
    /// [`encode_frame_header`](crate::encode_frame_header) alone.
    pub fn frames_in_clear(&self) -> bool {
        matches!(self.framing, Framing::Zmtp3(Zmtp3 { codec: None, .. }))
    }

    /// Whether another reader may take whole messages of data frames off
    /// the wire between two of this session's reads without showing them to
    /// it (as `oxmq`'s receiving thread does): plain ZMTP 3.x frames in
    /// clear, none a subscription, no heartbeat timer waiting for traffic
    /// (only the session would see it), at a message boundary. Anything
    /// else that reader finds (a command, a malformed header) it must hand
    /// to the session unread.
    pub fn others_may_read(&self) -> bool {
        self.plain_data
            && !self.in_message
            && matches!(&self.framing, Framing::Zmtp3(Zmtp3 { codec: None, heartbeat, .. })
                if heartbeat.as_ref().is_none_or(|h| !h.watches_traffic()))
    }

    /// Whether the socket must subscribe this peer to everything, once,
    /// before its first message (a PUB or XPUB facing an unversioned ZMTP/1.0
    /// SUB, which filters locally).
    pub fn subscribe_peer_to_all(&self) -> bool {
        self.subscribe_all
    }

    // ---- inbound ----

    /// Bytes arrived: the peer is alive (disarms the heartbeat timeout and
    /// the peer's TTL).
    #[inline]
    pub fn handle_bytes_received(&mut self, now: Instant) {
        if let Framing::Zmtp3(Zmtp3 { heartbeat: Some(hb), .. }) = &mut self.framing {
            hb.on_traffic(now);
        }
    }

    /// The header of a complete data frame of at most `max_body` octets at
    /// the front of `rx` whose body the caller may copy out and skip
    /// (advancing `rx` by `header_len + body_len`) without the session:
    /// only where the bytes on the wire are the frame and the session would
    /// do nothing with it but hand it on (no CURVE or GSSAPI box, not a publisher's
    /// possible subscription). `Ok(None)` otherwise; errors as
    /// [`poll_inbound`](Self::poll_inbound)'s for a malformed header.
    #[inline]
    pub fn small_data_frame(&self, rx: &[u8], max_body: usize) -> Result<Option<FrameHeader>, ProtocolError> {
        if !self.plain_data {
            return Ok(None);
        }
        if let Some(h) = self.decoder.complete_short_data(rx) {
            return Ok((h.body_len <= max_body).then_some(h));
        }
        match self.decoder.complete_header(rx)? {
            Some(h) if !h.command && h.body_len <= max_body => Ok(Some(h)),
            _ => Ok(None),
        }
    }

    /// The header of the incomplete, valid frame at the front of `rx`, so
    /// the caller can read its body straight into a buffer of its own and
    /// pass the whole frame to [`handle_frame`](Self::handle_frame).
    /// `None` for raw connections, incomplete or invalid headers.
    #[inline]
    pub fn pending_header(&self, rx: &[u8]) -> Option<FrameHeader> {
        match self.framing {
            Framing::Raw { .. } => None,
            _ => self.decoder.pending_header(rx),
        }
    }

    /// The next thing the peer sent, taken off the front of `rx`; commands
    /// are answered (into [`poll_transmit`](Self::poll_transmit)'s queue)
    /// and skipped. `Ok(None)`: more bytes are needed. On a raw connection
    /// everything in `rx` is one frame.
    #[inline]
    pub fn poll_inbound(&mut self, rx: &mut BytesMut, now: Instant) -> Result<Option<Inbound>, SessionError> {
        // Data frames that need no unboxing and cannot be subscriptions are
        // handed on at once: the common case, kept small enough to inline.
        if self.plain_data {
            match self.decoder.decode(rx)? {
                Some(frame) if !frame.command => {
                    return Ok(Some(Inbound::Frame { more: frame.more, body: frame.body }))
                }
                Some(frame) => {
                    if let Some(inbound) = self.handle_frame(frame, now)? {
                        return Ok(Some(inbound));
                    }
                }
                None => return Ok(None),
            }
        }
        self.poll_inbound_slow(rx, now)
    }

    #[inline(never)]
    fn poll_inbound_slow(&mut self, rx: &mut BytesMut, now: Instant) -> Result<Option<Inbound>, SessionError> {
        if let Framing::Raw { .. } = self.framing {
            if rx.is_empty() {
                return Ok(None);
            }
            return Ok(Some(Inbound::Frame { more: false, body: rx.split().freeze() }));
        }
        // CURVE: each whole frame is opened where it lies in `rx`, then split
        // off as its plaintext alone: no allocation and no copy of its own
        // before the caller takes its bytes.
        if let Framing::Zmtp3(Zmtp3 { codec: Some(TrafficCodec::Curve(_)), .. }) = self.framing {
            while let Some(frame) = self.next_curve_frame(rx)? {
                if let Some(inbound) = self.handle_plain_frame(frame, now)? {
                    return Ok(Some(inbound));
                }
            }
            return Ok(None);
        }
        while let Some(frame) = self.decoder.decode(rx)? {
            if self.plain_data && !frame.command {
                return Ok(Some(Inbound::Frame { more: frame.more, body: frame.body }));
            }
            if let Some(inbound) = self.handle_frame(frame, now)? {
                return Ok(Some(inbound));
            }
        }
        Ok(None)
    }

    /// Under CURVE, the next whole frame in `rx`, opened in place.
    fn next_curve_frame(&mut self, rx: &mut BytesMut) -> Result<Option<Frame>, ProtocolError> {
        match &mut self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(TrafficCodec::Curve(codec)), .. }) => {
                open_next(&self.decoder, codec, rx)
            }
            _ => Ok(None),
        }
    }

    /// One whole frame as it came off the wire (still boxed under CURVE or GSSAPI):
    /// what it means for the socket, if anything.
    pub fn handle_frame(&mut self, frame: Frame, now: Instant) -> Result<Option<Inbound>, SessionError> {
        let frame = match &mut self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(codec), .. }) => {
                let u = codec.decode(frame.body)?;
                Frame { more: u.more, command: u.command, body: u.body }
            }
            _ => frame,
        };
        self.handle_plain_frame(frame, now)
    }

    /// [`handle_frame`](Self::handle_frame) for a whole frame whose body the
    /// caller read into a buffer of its own (`more` and `command` from its
    /// header): a CURVE box is opened in that buffer, and `freeze` turns the
    /// buffer into the body handed on, which then starts at the plaintext.
    /// No copy of the body is made, where `handle_frame` on a body that is
    /// not its buffer's only view must copy it to open it.
    pub fn handle_owned_frame<B: AsMut<[u8]>>(
        &mut self,
        more: bool,
        command: bool,
        mut body: B,
        freeze: impl FnOnce(B) -> Bytes,
        now: Instant,
    ) -> Result<Option<Inbound>, SessionError> {
        let frame = match &mut self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(TrafficCodec::Curve(codec)), .. }) => {
                let opened = codec.open_in_place(body.as_mut())?;
                Frame { more: opened.more, command: opened.command, body: freeze(body).slice(Opened::PLAINTEXT_AT..) }
            }
            _ => return self.handle_frame(Frame { more, command, body: freeze(body) }, now),
        };
        self.handle_plain_frame(frame, now)
    }

    /// A frame as the peer meant it (unboxed, if it was boxed).
    fn handle_plain_frame(&mut self, frame: Frame, now: Instant) -> Result<Option<Inbound>, SessionError> {
        if let Framing::Raw { .. } = self.framing {
            return Ok(Some(Inbound::Frame { more: false, body: frame.body }));
        }
        if frame.command {
            return self.on_command(&frame.body, now);
        }
        let first = !self.in_message;
        self.in_message = frame.more;
        let body = frame.body;
        if self.role == Role::Publisher && first && !frame.more && !body.is_empty() && body[0] <= 1 {
            // A ZMTP 3.0 subscription message; libzmq 4.3 takes it from any peer.
            return Ok(Some(Inbound::Subscription { subscribe: body[0] == 1, topic: body.slice(1..), in_band: true }));
        }
        Ok(Some(Inbound::Frame { more: frame.more, body }))
    }

    fn on_command(&mut self, body: &Bytes, now: Instant) -> Result<Option<Inbound>, SessionError> {
        let subscription = |subscribe, topic| Ok(Some(Inbound::Subscription { subscribe, topic, in_band: false }));
        match Command::parse(body)? {
            Command::Ping { ttl_deciseconds, context } => {
                self.queue_command(Command::pong_for(&context));
                if let Framing::Zmtp3(Zmtp3 { heartbeat: Some(hb), .. }) = &mut self.framing {
                    hb.on_ping(ttl_deciseconds, now);
                }
                Ok(None)
            }
            Command::Subscribe(topic) if self.role == Role::Publisher => subscription(true, topic),
            Command::Cancel(topic) if self.role == Role::Publisher => subscription(false, topic),
            Command::Error { reason } => Err(SessionError::PeerError { reason }),
            // Draft RADIO/DISH: a DISH's JOIN/LEAVE reach the RADIO as subscriptions.
            Command::Unknown { name, data } if self.role == Role::Radio => match &name[..] {
                b"JOIN" => subscription(true, data),
                b"LEAVE" => subscription(false, data),
                _ => Ok(None),
            },
            // libzmq ignores PONG payloads and unknown commands.
            _ => Ok(None),
        }
    }

    // ---- outbound ----

    /// Appends one data frame of an outbound message. Returns false (and
    /// appends nothing) when the frame asks to close the connection: an
    /// empty frame to a STREAM peer.
    #[inline]
    pub fn encode_frame(&mut self, more: bool, body: &[u8], out: &mut Vec<u8>) -> bool {
        // The common case, small enough to inline into the caller's loop:
        // ZMTP 3.x without a codec writes the header and the bytes.
        if let Framing::Zmtp3(Zmtp3 { codec: None, .. }) = self.framing {
            if body.len() <= 255 {
                // The short form written here: one reservation for header and
                // body, and no call per frame into `encode_frame_header`.
                out.reserve(2 + body.len());
                out.extend_from_slice(&[if more { FLAG_MORE } else { 0 }, body.len() as u8]);
            } else {
                encode_frame_header(out, more, false, body.len());
            }
            out.extend_from_slice(body);
            return true;
        }
        self.encode_frame_other(more, body, out)
    }

    #[inline(never)]
    fn encode_frame_other(&mut self, more: bool, body: &[u8], out: &mut Vec<u8>) -> bool {
        match &mut self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(codec), .. }) => codec.encode(more, false, &[body], out),
            Framing::Zmtp3(_) => {
                encode_frame_header(out, more, false, body.len());
                out.extend_from_slice(body);
            }
            Framing::Zmtp10 => {
                encode_zmtp10_frame_header(out, more, body.len());
                out.extend_from_slice(body);
            }
            Framing::Raw { close_on_empty } => {
                if body.is_empty() {
                    // DGRAM: an empty frame adds no bytes to the stream
                    // (libzmq aborts the process on it; oxmq writes the rest).
                    return !*close_on_empty;
                }
                out.extend_from_slice(body);
            }
        }
        true
    }

    /// Appends only the header of a data frame of `len` octets, for a caller
    /// that writes the body from its own buffer right after (so a large
    /// body is never copied). Returns false, appending nothing, where the
    /// body cannot go on the wire as it is (CURVE or GSSAPI boxes it; raw connections
    /// are left to [`encode_frame`](Self::encode_frame)): use that instead.
    #[inline]
    pub fn encode_frame_header(&mut self, more: bool, len: usize, out: &mut Vec<u8>) -> bool {
        match &self.framing {
            Framing::Zmtp3(Zmtp3 { codec: None, .. }) => encode_frame_header(out, more, false, len),
            Framing::Zmtp10 => encode_zmtp10_frame_header(out, more, len),
            _ => return false,
        }
        true
    }

    /// Appends a subscription (`subscribe`) or its cancellation in the form
    /// the peer reads: SUBSCRIBE/CANCEL for 3.1, a message for 3.0 and
    /// older, JOIN/LEAVE from a DISH. Nothing on a raw connection.
    pub fn encode_subscription(&mut self, subscribe: bool, topic: &[u8], out: &mut Vec<u8>) {
        let command_name: Option<&[u8]> = match (self.role, subscribe) {
            (Role::Dish, true) => Some(b"\x04JOIN"),
            (Role::Dish, false) => Some(b"\x05LEAVE"),
            _ => match &self.framing {
                Framing::Zmtp3(z) if z.subscription_commands => {
                    Some(if subscribe { b"\x09SUBSCRIBE" } else { b"\x06CANCEL" })
                }
                _ => None,
            },
        };
        let parts: [&[u8]; 2] = match command_name {
            Some(name) => [name, topic],
            None => [if subscribe { b"\x01" } else { b"\x00" }, topic],
        };
        let command = command_name.is_some();
        match &mut self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(codec), .. }) => codec.encode(false, command, &parts, out),
            Framing::Zmtp3(_) => {
                encode_frame_header(out, false, command, parts[0].len() + parts[1].len());
                out.extend_from_slice(parts[0]);
                out.extend_from_slice(parts[1]);
            }
            // A 1.0 peer has no commands (a DISH never meets one: the
            // socket types are refused in the handshake).
            Framing::Zmtp10 if !command => {
                encode_zmtp10_frame_header(out, false, parts[0].len() + parts[1].len());
                out.extend_from_slice(parts[0]);
                out.extend_from_slice(parts[1]);
            }
            Framing::Zmtp10 | Framing::Raw { .. } => {}
        }
    }

    // ---- timers and commands ----

    /// When [`handle_timeout`](Self::handle_timeout) must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.framing {
            Framing::Zmtp3(Zmtp3 { heartbeat: Some(hb), .. }) => hb.next_deadline(),
            _ => None,
        }
    }

    /// Runs the heartbeat timers: queues a PING when one is due; an error
    /// when the peer stayed silent past the timeout or its TTL.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), SessionError> {
        let Framing::Zmtp3(Zmtp3 { heartbeat: Some(hb), .. }) = &mut self.framing else {
            return Ok(());
        };
        match hb.handle_timeout(now) {
            HeartbeatAction::None => Ok(()),
            HeartbeatAction::SendPing(ping) => {
                // One PING held back behind a long message is enough; more
                // would only pile up while it is written.
                if !self.transmit.iter().any(|c| matches!(c, Command::Ping { .. })) {
                    self.queue_command(ping);
                }
                Ok(())
            }
            HeartbeatAction::Dead => Err(SessionError::PeerSilent),
        }
    }

    /// Appends the command frames the session wants sent (PONGs, PINGs),
    /// boxed now under CURVE or GSSAPI. Call it only between messages (see
    /// the type's contract).
    #[inline]
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        if !self.transmit.is_empty() {
            self.encode_commands(out);
        }
    }

    #[inline(never)]
    fn encode_commands(&mut self, out: &mut Vec<u8>) {
        for cmd in self.transmit.drain(..) {
            match &mut self.framing {
                Framing::Zmtp3(Zmtp3 { codec: Some(codec), .. }) => {
                    let mut body = Vec::with_capacity(cmd.body_len());
                    cmd.encode_body(&mut body);
                    codec.encode(false, true, &[&body], out);
                }
                Framing::Zmtp3(_) => cmd.encode(out),
                // queue_command keeps nothing for these.
                Framing::Zmtp10 | Framing::Raw { .. } => {}
            }
        }
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) has anything.
    pub fn has_transmit(&self) -> bool {
        !self.transmit.is_empty()
    }

    /// An error once the codec can no longer box (a GSSAPI context that
    /// expired): the frames it was given were not written, so the
    /// connection must close. Check after encoding.
    #[inline]
    pub fn check_codec(&self) -> Result<(), SessionError> {
        match &self.framing {
            Framing::Zmtp3(Zmtp3 { codec: Some(c), .. }) if c.is_broken() => {
                Err(SessionError::Protocol(ProtocolError::Cryptographic { what: "MESSAGE" }))
            }
            _ => Ok(()),
        }
    }

    fn queue_command(&mut self, cmd: Command) {
        // No commands exist on ZMTP/1.0 or raw connections.
        if let Framing::Zmtp3(_) = self.framing {
            self.transmit.push(cmd);
        }
    }
}
