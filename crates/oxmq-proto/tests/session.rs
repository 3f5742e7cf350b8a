//! The traffic phase ([`Session`]) between two in-memory peers with a
//! simulated clock, as quinn-proto tests its connections: no sockets, no
//! sleeps. Heartbeat timeouts of seconds run in microseconds.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use oxmq_proto::{
    keypair_from_entropy, CurveConfig, Framing, Handshake, HandshakeConfig, Inbound, MechanismConfig, Metadata,
    PeerInfo, ProtocolError, Session, SessionConfig, SessionError, SocketType,
};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zeroize::Zeroizing;

mod fake_gss;
use fake_gss::fake_gssapi;

/// One end: its session, the bytes it has received and not yet decoded,
/// what it decoded, and how it ended.
struct End {
    session: Session,
    rx: BytesMut,
    got: Vec<Inbound>,
    error: Option<SessionError>,
    /// Bytes this end has written and the link has not yet carried.
    out: Vec<u8>,
    /// The link to this end is cut: whatever the other end sends is lost.
    deaf: bool,
}

impl End {
    fn new(session: Session) -> End {
        End { session, rx: BytesMut::new(), got: Vec::new(), error: None, out: Vec::new(), deaf: false }
    }

    fn receive(&mut self, bytes: &[u8], now: Instant) {
        if self.deaf || bytes.is_empty() || self.error.is_some() {
            return;
        }
        self.rx.extend_from_slice(bytes);
        self.session.handle_bytes_received(now);
        loop {
            match self.session.poll_inbound(&mut self.rx, now) {
                Ok(Some(m)) => self.got.push(m),
                Ok(None) => break,
                Err(e) => {
                    self.error = Some(e);
                    break;
                }
            }
        }
    }

    fn send(&mut self, more: bool, body: &[u8]) {
        assert!(self.session.encode_frame(more, body, &mut self.out));
    }

    fn subscribe(&mut self, subscribe: bool, topic: &[u8]) {
        self.session.encode_subscription(subscribe, topic, &mut self.out);
    }

    fn frames(&mut self) -> Vec<(bool, Bytes)> {
        std::mem::take(&mut self.got)
            .into_iter()
            .map(|m| match m {
                Inbound::Frame { more, body } => (more, body),
                other => panic!("expected a frame, got {other:?}"),
            })
            .collect()
    }
}

/// Two ends joined by in-memory links, and the time both see.
struct Pair {
    a: End,
    b: End,
    now: Instant,
    /// Bytes delivered per step: 0 = everything at once.
    chunk: usize,
}

impl Pair {
    fn new(a: Session, b: Session, now: Instant) -> Pair {
        Pair { a: End::new(a), b: End::new(b), now, chunk: 0 }
    }

    /// Carries bytes both ways until neither end has anything to send.
    fn drive(&mut self) {
        for _ in 0..1_000_000 {
            self.a.session.poll_transmit(&mut self.a.out);
            self.b.session.poll_transmit(&mut self.b.out);
            if self.a.out.is_empty() && self.b.out.is_empty() {
                return;
            }
            let now = self.now;
            let chunk = self.chunk;
            Self::carry(&mut self.a, &mut self.b, chunk, now);
            Self::carry(&mut self.b, &mut self.a, chunk, now);
        }
        panic!("the pair never went idle");
    }

    fn carry(from: &mut End, to: &mut End, chunk: usize, now: Instant) {
        let n = if chunk == 0 { from.out.len() } else { chunk.min(from.out.len()) };
        let bytes: Vec<u8> = from.out.drain(..n).collect();
        to.receive(&bytes, now);
    }

    /// Moves the clock to `t` step by step, firing each end's timers when
    /// due and carrying what they send.
    fn advance_to(&mut self, t: Instant) {
        loop {
            let next = [self.a.session.poll_timeout(), self.b.session.poll_timeout()]
                .into_iter()
                .flatten()
                .filter(|d| *d <= t)
                .min();
            let Some(next) = next else { break };
            self.now = self.now.max(next);
            for end in [&mut self.a, &mut self.b] {
                if end.error.is_none() {
                    if let Err(e) = end.session.handle_timeout(self.now) {
                        end.error = Some(e);
                    }
                }
            }
            self.drive();
            if self.a.error.is_some() && self.b.error.is_some() {
                break;
            }
            // A dead end's timers no longer count.
            if self.a.error.is_some() || self.b.error.is_some() {
                let live = if self.a.error.is_some() { &self.b } else { &self.a };
                match live.session.poll_timeout() {
                    Some(d) if d <= t => {}
                    _ => break,
                }
            }
        }
        self.now = self.now.max(t);
    }

    fn advance(&mut self, d: Duration) {
        self.advance_to(self.now + d);
    }
}

fn peer(version: (u8, u8), socket_type: SocketType) -> PeerInfo {
    PeerInfo {
        version,
        socket_type,
        identity: None,
        metadata: Metadata::new(),
        user_id: None,
        zap_properties: Metadata::new(),
        filters_locally: false,
    }
}

fn session(cfg: &SessionConfig, version: (u8, u8), peer_type: SocketType, now: Instant) -> Session {
    Session::new(cfg, &peer(version, peer_type), None, now)
}

/// A NULL pair of these socket types that negotiated `version`.
fn null_pair(a: SessionConfig, b: SessionConfig, version: (u8, u8)) -> Pair {
    let now = Instant::now();
    let sa = session(&a, version, b.socket_type, now);
    let sb = session(&b, version, a.socket_type, now);
    Pair::new(sa, sb, now)
}

fn hb(socket_type: SocketType, ivl_ms: u64, ttl_ms: u64, timeout_ms: u64) -> SessionConfig {
    let ms = |v: u64| (v > 0).then(|| Duration::from_millis(v));
    SessionConfig {
        heartbeat_ivl: ms(ivl_ms),
        heartbeat_ttl: ms(ttl_ms),
        heartbeat_timeout: ms(timeout_ms),
        ..SessionConfig::new(socket_type)
    }
}

/// A real CURVE handshake between two in-memory ends (no ZAP handler), then
/// sessions on its codecs.
fn curve_pair(a: SessionConfig, b: SessionConfig) -> Pair {
    let (server_public, server_secret) = keypair_from_entropy([7; 32]);
    let (client_public, client_secret) = keypair_from_entropy([8; 32]);
    let server = MechanismConfig::Curve(CurveConfig {
        public_key: server_public,
        secret_key: Zeroizing::new(*server_secret),
        server_key: [0; 32],
    });
    let client = MechanismConfig::Curve(CurveConfig {
        public_key: client_public,
        secret_key: Zeroizing::new(*client_secret),
        server_key: server_public,
    });
    let p = handshaken_pair(a, b, server, client);
    for end in [&p.a, &p.b] {
        assert!(matches!(end.session.framing(), Framing::Zmtp3(z) if z.is_boxed()));
    }
    p
}

/// A GSSAPI handshake over the stand-in Kerberos, then sessions on its
/// wrap codecs (none in `plaintext`); `wraps`: how many wraps each
/// context makes before it expires.
fn gssapi_pair(a: SessionConfig, b: SessionConfig, plaintext: bool, wraps: Option<usize>) -> Pair {
    let mech = || MechanismConfig::Gssapi(fake_gssapi(plaintext, false, wraps));
    handshaken_pair(a, b, mech(), mech())
}

/// A real handshake between two in-memory ends (`a` the server, no ZAP
/// handler), then sessions on what it found and the codecs it handed over.
fn handshaken_pair(a: SessionConfig, b: SessionConfig, server: MechanismConfig, client: MechanismConfig) -> Pair {
    let hs_cfg = |socket_type, as_server, mechanism, entropy| HandshakeConfig {
        as_server,
        mechanism,
        entropy: [entropy; 32],
        ..HandshakeConfig::null(socket_type, b"")
    };
    let mut ha = Handshake::new(hs_cfg(a.socket_type, true, server, 1));
    let mut hb = Handshake::new(hs_cfg(b.socket_type, false, client, 2));
    let (mut to_a, mut to_b) = (BytesMut::new(), BytesMut::new());
    let (mut pa, mut pb) = (None, None);
    for _ in 0..20 {
        let mut out = Vec::new();
        ha.poll_transmit(&mut out);
        to_b.extend_from_slice(&out);
        out.clear();
        hb.poll_transmit(&mut out);
        to_a.extend_from_slice(&out);
        for (hs, rx, done) in [(&mut ha, &mut to_a, &mut pa), (&mut hb, &mut to_b, &mut pb)] {
            if done.is_none() && !rx.is_empty() {
                let mut r = hs.handle_input(rx).expect("handshake");
                if r.is_none() && hs.take_zap_request().is_some() {
                    r = hs.handle_zap_unavailable().expect("no ZAP handler is fine");
                }
                *done = r;
            }
        }
    }
    let (pa, pb) = (pa.expect("a finished"), pb.expect("b finished"));
    assert!(to_a.is_empty() && to_b.is_empty());
    let now = Instant::now();
    Pair::new(Session::new(&a, &pa, ha.take_codec(), now), Session::new(&b, &pb, hb.take_codec(), now), now)
}

fn cfg(socket_type: SocketType) -> SessionConfig {
    SessionConfig::new(socket_type)
}

// ---- framing: ZMTP 3.x ----

#[test]
fn can_round_trip_multipart_messages_in_any_chunking() {
    for chunk in [0, 1, 3, 7, 300] {
        let mut p = null_pair(cfg(SocketType::Dealer), cfg(SocketType::Router), (3, 1));
        p.chunk = chunk;
        let big = vec![0xAB; 70_000];
        p.a.send(true, b"");
        p.a.send(true, b"hello");
        p.a.send(false, &big);
        p.drive();
        let got = p.b.frames();
        assert_eq!(got, vec![(true, Bytes::new()), (true, Bytes::from_static(b"hello")), (false, Bytes::from(big))]);
        assert!(p.b.error.is_none());
    }
}

#[test]
fn frames_are_flags_size_body_with_the_long_form_past_255() {
    let now = Instant::now();
    let mut s = session(&cfg(SocketType::Push), (3, 1), SocketType::Pull, now);
    let mut out = Vec::new();
    assert!(s.encode_frame(true, b"ab", &mut out));
    assert_eq!(out, [0x01, 2, b'a', b'b']);
    out.clear();
    assert!(s.encode_frame_header(false, 256, &mut out));
    assert_eq!(out, [0x02, 0, 0, 0, 0, 0, 0, 1, 0]);
    // Whole frames either side of the boundary, appended after what is there.
    out.clear();
    assert!(s.encode_frame(false, &[7; 255], &mut out));
    assert!(s.encode_frame(true, &[9; 256], &mut out));
    assert_eq!(out[..2], [0x00, 255]);
    assert!(out[2..257].iter().all(|&b| b == 7));
    assert_eq!(out[257..266], [0x03, 0, 0, 0, 0, 0, 0, 1, 0]);
    assert!(out[266..].iter().all(|&b| b == 9));
    assert_eq!(out.len(), 266 + 256);
}

#[test]
fn small_frames_may_bypass_the_session_only_where_it_would_not_look_at_them() {
    let now = Instant::now();
    let rx = [0x00, 3, b'a', b'b', b'c'];
    let s = session(&cfg(SocketType::Pull), (3, 1), SocketType::Push, now);
    let h = s.small_data_frame(&rx, 64).unwrap().expect("plain data frame");
    assert_eq!((h.header_len, h.body_len, h.more), (2, 3, false));
    assert_eq!(s.small_data_frame(&rx, 2).unwrap(), None, "over the size asked for");
    assert_eq!(s.small_data_frame(&rx[..4], 64).unwrap(), None, "incomplete");
    assert_eq!(s.small_data_frame(&[0x04, 1, 0], 64).unwrap(), None, "commands go through the session");
    let publisher = session(&cfg(SocketType::XPub), (3, 1), SocketType::XSub, now);
    assert_eq!(publisher.small_data_frame(&rx, 64).unwrap(), None, "a publisher reads subscriptions");
    assert!(matches!(s.small_data_frame(&[0x08, 0], 64), Err(ProtocolError::ReservedFlagBits { .. })));
}

// ---- heartbeats ----

#[test]
fn heartbeat_ping_is_answered_and_keeps_the_connection() {
    let mut p = null_pair(hb(SocketType::Dealer, 1000, 0, 0), cfg(SocketType::Router), (3, 1));
    let start = p.now;
    assert_eq!(p.a.session.poll_timeout(), Some(start + Duration::from_secs(1)));
    assert_eq!(p.b.session.poll_timeout(), None);
    p.advance(Duration::from_secs(60));
    assert!(p.a.error.is_none() && p.b.error.is_none());
    assert!(p.a.got.is_empty() && p.b.got.is_empty(), "PING and PONG never reach the socket");
    // 60 PINGs went out; each PONG disarmed the timeout.
    assert_eq!(p.a.session.poll_timeout(), Some(start + Duration::from_secs(61)));
}

#[test]
fn pong_echoes_the_ping_context() {
    let now = Instant::now();
    let mut s = session(&cfg(SocketType::Router), (3, 1), SocketType::Dealer, now);
    let mut rx = BytesMut::from(&b"\x04\x0a\x04PING\x00\x0aCTX"[..]);
    assert_eq!(s.poll_inbound(&mut rx, now), Ok(None));
    let mut out = Vec::new();
    s.poll_transmit(&mut out);
    assert_eq!(out, b"\x04\x08\x04PONGCTX");
}

#[test]
fn commands_wait_for_the_caller_and_pings_do_not_pile_up_meanwhile() {
    let now = Instant::now();
    let mut s = session(&hb(SocketType::Dealer, 100, 0, 10_000), (3, 1), SocketType::Router, now);
    let mut rx = BytesMut::from(&b"\x04\x07\x04PING\x00\x00"[..]);
    assert_eq!(s.poll_inbound(&mut rx, now), Ok(None));
    // Five intervals pass while a long message is being written.
    for i in 1..=5 {
        s.handle_timeout(now + Duration::from_millis(100 * i)).unwrap();
    }
    let mut out = Vec::new();
    s.poll_transmit(&mut out);
    assert_eq!(out, b"\x04\x05\x04PONG\x04\x07\x04PING\x00\x00", "the PONG, then one PING");
    out.clear();
    s.handle_timeout(now + Duration::from_millis(600)).unwrap();
    s.poll_transmit(&mut out);
    assert_eq!(out, b"\x04\x07\x04PING\x00\x00", "the next interval's PING");
}

#[test]
fn heartbeat_timeout_closes_a_silent_peer_and_not_before() {
    let mut p = null_pair(hb(SocketType::Dealer, 1000, 0, 3000), cfg(SocketType::Router), (3, 1));
    let start = p.now;
    p.a.deaf = true; // the peer's PONGs are lost
    p.advance(Duration::from_millis(3999));
    assert_eq!(p.a.error, None, "first PING at 1 s, timeout 3 s after it");
    p.advance(Duration::from_millis(1));
    assert_eq!(p.a.error, Some(SessionError::PeerSilent));
    assert_eq!(p.now, start + Duration::from_secs(4));
}

#[test]
fn heartbeat_timeout_defaults_to_the_interval() {
    let mut p = null_pair(hb(SocketType::Dealer, 500, 0, 0), cfg(SocketType::Router), (3, 1));
    p.a.deaf = true;
    p.advance(Duration::from_millis(999));
    assert_eq!(p.a.error, None);
    p.advance(Duration::from_millis(1));
    assert_eq!(p.a.error, Some(SessionError::PeerSilent));
}

#[test]
fn peer_ttl_closes_when_nothing_follows_its_ping() {
    // A pings every second with a TTL of 2.5 s; then A goes quiet (its
    // link to B is cut after the first PING).
    let mut p = null_pair(hb(SocketType::Dealer, 1000, 2500, 60_000), cfg(SocketType::Router), (3, 1));
    let start = p.now;
    p.advance(Duration::from_secs(1));
    assert!(p.b.error.is_none());
    p.b.deaf = true;
    p.advance(Duration::from_millis(2499));
    assert_eq!(p.b.error, None, "the TTL runs from the PING at 1 s");
    p.advance(Duration::from_millis(1));
    assert_eq!(p.b.error, Some(SessionError::PeerSilent));
    assert_eq!(p.now, start + Duration::from_millis(3500));
}

/// A PING with a TTL of 1 s (10 deciseconds), as a peer would send it.
const PING_TTL_1S: &[u8] = b"\x04\x07\x04PING\x00\x0a";

#[test]
fn any_traffic_disarms_the_ttl() {
    let now = Instant::now();
    let ms = |n| now + Duration::from_millis(n);
    for data_at in [None, Some(900)] {
        let mut end = End::new(session(&cfg(SocketType::Router), (3, 1), SocketType::Dealer, now));
        end.receive(PING_TTL_1S, now);
        assert_eq!(end.session.poll_timeout(), Some(ms(1000)));
        if let Some(t) = data_at {
            end.receive(b"\x00\x01x", ms(t));
            assert_eq!(end.session.poll_timeout(), None, "traffic disarmed the TTL");
        }
        let verdict = end.session.handle_timeout(ms(1000));
        match data_at {
            None => assert_eq!(verdict, Err(SessionError::PeerSilent)),
            Some(_) => assert_eq!(verdict, Ok(())),
        }
    }
}

#[test]
fn each_ping_rearms_the_ttl_from_its_own_arrival() {
    // A PING is traffic too: it disarms the old TTL, then arms its own.
    let now = Instant::now();
    let mut end = End::new(session(&cfg(SocketType::Router), (3, 1), SocketType::Dealer, now));
    end.receive(PING_TTL_1S, now);
    end.receive(PING_TTL_1S, now + Duration::from_millis(600));
    assert_eq!(end.session.poll_timeout(), Some(now + Duration::from_millis(1600)));
}

#[test]
fn zmtp_2_0_peers_get_no_pings() {
    let mut p = null_pair(hb(SocketType::Dealer, 100, 0, 0), cfg(SocketType::Router), (2, 0));
    assert_eq!(p.a.session.poll_timeout(), None);
    p.advance(Duration::from_secs(10));
    assert!(p.a.error.is_none());
}

// ---- subscriptions ----

fn sub_pair(version: (u8, u8)) -> Pair {
    null_pair(cfg(SocketType::XPub), cfg(SocketType::Sub), version)
}

#[test]
fn zmtp_3_1_subscriptions_are_commands() {
    let mut p = sub_pair((3, 1));
    p.b.subscribe(true, b"ab");
    assert_eq!(p.b.out, b"\x04\x0c\x09SUBSCRIBEab");
    p.b.subscribe(false, b"ab");
    p.drive();
    assert_eq!(
        p.a.got,
        vec![
            Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"ab"), in_band: false },
            Inbound::Subscription { subscribe: false, topic: Bytes::from_static(b"ab"), in_band: false },
        ]
    );
}

#[test]
fn zmtp_3_0_subscriptions_are_messages() {
    let mut p = sub_pair((3, 0));
    p.b.subscribe(true, b"ab");
    assert_eq!(p.b.out, b"\x00\x03\x01ab");
    p.b.subscribe(false, b"");
    p.drive();
    assert_eq!(
        p.a.got,
        vec![
            Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"ab"), in_band: true },
            Inbound::Subscription { subscribe: false, topic: Bytes::new(), in_band: true },
        ]
    );
}

#[test]
fn a_publisher_reads_both_forms_from_any_peer_but_not_inside_a_message() {
    let mut p = sub_pair((3, 1));
    // A 3.0-style subscription message from a 3.1 peer (libzmq takes it).
    p.b.out.extend_from_slice(b"\x00\x02\x01x");
    // A two-frame message whose frames start with 1 and 0: data, not subscriptions.
    p.b.send(true, b"\x01a");
    p.b.send(false, b"\x00b");
    // An empty message and one starting with 2: data.
    p.b.send(false, b"");
    p.b.send(false, b"\x02c");
    p.drive();
    assert_eq!(
        p.a.got,
        vec![
            Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"x"), in_band: true },
            Inbound::Frame { more: true, body: Bytes::from_static(b"\x01a") },
            Inbound::Frame { more: false, body: Bytes::from_static(b"\x00b") },
            Inbound::Frame { more: false, body: Bytes::new() },
            Inbound::Frame { more: false, body: Bytes::from_static(b"\x02c") },
        ]
    );
}

#[test]
fn subscribe_commands_to_a_non_publisher_are_ignored() {
    let mut p = null_pair(cfg(SocketType::Sub), cfg(SocketType::XPub), (3, 1));
    p.b.out.extend_from_slice(b"\x04\x0b\x09SUBSCRIBEa");
    p.drive();
    assert!(p.a.got.is_empty() && p.a.error.is_none());
}

#[test]
fn dish_joins_and_leaves_reach_the_radio() {
    let mut p = null_pair(cfg(SocketType::Radio), cfg(SocketType::Dish), (3, 1));
    p.b.subscribe(true, b"grp");
    assert_eq!(p.b.out, b"\x04\x08\x04JOINgrp");
    p.b.subscribe(false, b"grp");
    p.drive();
    assert_eq!(
        p.a.got,
        vec![
            Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"grp"), in_band: false },
            Inbound::Subscription { subscribe: false, topic: Bytes::from_static(b"grp"), in_band: false },
        ]
    );
}

// ---- CURVE ----

#[test]
fn curve_traffic_flows_both_ways_boxed() {
    let mut p = curve_pair(cfg(SocketType::Router), cfg(SocketType::Dealer));
    let big = vec![7u8; 100_000];
    p.a.send(true, b"id");
    p.a.send(false, b"from server");
    p.b.send(false, &big);
    let plain = b"from server";
    assert!(!p.a.out.windows(plain.len()).any(|w| w == plain), "the body is boxed");
    let mut header = Vec::new();
    assert!(!p.b.session.encode_frame_header(false, 10, &mut header), "CURVE bodies are never sent as they are");
    assert!(header.is_empty());
    assert!(p.b.session.small_data_frame(b"\x00\x01x", 64).unwrap().is_none(), "CURVE frames must be unboxed");
    p.drive();
    assert_eq!(p.b.frames(), vec![(true, Bytes::from_static(b"id")), (false, Bytes::from_static(plain))]);
    assert_eq!(p.a.frames(), vec![(false, Bytes::from(big))]);
}

/// Frames of every size around the box's own boundaries (block 0, the
/// small/large switch) arrive whole however the bytes are cut, each opened
/// where it lies in the receive buffer.
#[test]
fn curve_frames_of_every_size_arrive_in_any_chunking() {
    let sizes = [0usize, 1, 30, 31, 32, 33, 38, 39, 64, 1022, 1023, 1024, 1025, 5000, 70_000];
    let bodies: Vec<Vec<u8>> = sizes.iter().map(|&n| (0..n).map(|i| (i * 31 + n) as u8).collect()).collect();
    for chunk in [0, 13, 4096] {
        let mut p = curve_pair(cfg(SocketType::Router), cfg(SocketType::Dealer));
        p.chunk = chunk;
        for (i, b) in bodies.iter().enumerate() {
            p.a.send(i + 1 < bodies.len(), b);
        }
        p.drive();
        let want: Vec<(bool, Bytes)> =
            bodies.iter().enumerate().map(|(i, b)| (i + 1 < bodies.len(), Bytes::from(b.clone()))).collect();
        assert_eq!(p.b.error, None, "chunk {chunk}");
        assert_eq!(p.b.frames(), want, "chunk {chunk}");
    }
}

/// The engine reads a large frame's body into a buffer of its own: the box
/// is opened there and the body handed on is that buffer, not a copy. A
/// forged box in such a buffer is refused as in the receive buffer.
#[test]
fn a_curve_frame_in_its_own_buffer_is_opened_there() {
    let mut p = curve_pair(cfg(SocketType::Router), cfg(SocketType::Dealer));
    let body: Vec<u8> = (0..50_000).map(|i| (i % 251) as u8).collect();
    p.a.send(true, &body);
    let wire = std::mem::take(&mut p.a.out);
    let h = p.b.session.pending_header(&wire).expect("a complete header");
    let own = wire[h.header_len..].to_vec();
    let start = own.as_ptr() as usize;
    let got = p.b.session.handle_owned_frame(h.more, h.command, own, Bytes::from, p.now).unwrap();
    let Some(Inbound::Frame { more: true, body: got }) = got else { panic!("expected a frame, got {got:?}") };
    assert_eq!(got, body);
    assert_eq!(got.as_ptr() as usize, start + 33, "the plaintext where the box was, after its header");

    p.a.send(false, &body);
    let mut wire = std::mem::take(&mut p.a.out);
    let last = wire.len() - 1;
    wire[last] ^= 1;
    let h = p.b.session.pending_header(&wire).expect("a complete header");
    let err = p.b.session.handle_owned_frame(h.more, h.command, wire[h.header_len..].to_vec(), Bytes::from, p.now);
    assert_eq!(err.unwrap_err(), SessionError::Protocol(ProtocolError::Cryptographic { what: "MESSAGE" }));
}

#[test]
fn curve_subscriptions_and_heartbeats_are_boxed_commands() {
    let mut p = curve_pair(hb(SocketType::XPub, 1000, 0, 0), cfg(SocketType::Sub));
    p.b.subscribe(true, b"topic");
    assert!(!p.b.out.windows(9).any(|w| w == b"SUBSCRIBE"));
    p.drive();
    assert_eq!(
        p.a.got,
        vec![Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"topic"), in_band: false }]
    );
    p.advance(Duration::from_secs(30));
    assert!(p.a.error.is_none() && p.b.error.is_none(), "boxed PINGs were answered by boxed PONGs");
}

#[test]
fn curve_refuses_an_altered_box() {
    let mut p = curve_pair(cfg(SocketType::Router), cfg(SocketType::Dealer));
    p.a.send(false, b"payload");
    let last = p.a.out.len() - 1;
    p.a.out[last] ^= 1;
    p.drive();
    assert_eq!(p.b.error, Some(SessionError::Protocol(ProtocolError::Cryptographic { what: "MESSAGE" })));
}

#[test]
fn curve_refuses_a_replayed_box() {
    let mut p = curve_pair(cfg(SocketType::Router), cfg(SocketType::Dealer));
    p.a.send(false, b"once");
    let replay = p.a.out.clone();
    p.drive();
    p.a.out.extend_from_slice(&replay);
    p.drive();
    assert_eq!(p.b.error, Some(SessionError::Protocol(ProtocolError::InvalidSequence)));
}

#[test]
fn curve_commands_held_past_a_message_are_boxed_in_wire_order() {
    // The caller holds commands while a message is under way (RFC 37 puts
    // them only between messages); a PING boxed when it fell due would carry
    // an older nonce than the frames written before it.
    let mut p = curve_pair(cfg(SocketType::Router), hb(SocketType::Dealer, 1000, 0, 0));
    p.now += Duration::from_secs(1);
    p.b.session.handle_timeout(p.now).unwrap();
    assert!(p.b.session.has_transmit(), "the PING is due");
    p.b.send(true, b"head");
    p.b.send(false, b"tail");
    p.b.session.poll_transmit(&mut p.b.out);
    p.drive();
    assert_eq!(p.a.error, None, "nonces in the order the boxes reach the wire");
    assert_eq!(p.a.frames(), vec![(true, Bytes::from_static(b"head")), (false, Bytes::from_static(b"tail"))]);
    assert_eq!(p.b.error, None);
    assert!(!p.b.session.has_transmit());
}

// ---- GSSAPI ----

#[test]
fn gssapi_traffic_flows_both_ways_wrapped() {
    let mut p = gssapi_pair(cfg(SocketType::Router), cfg(SocketType::Dealer), false, None);
    assert!(matches!(p.a.session.framing(), Framing::Zmtp3(z) if z.is_boxed()));
    let big = vec![7u8; 100_000];
    p.a.send(true, b"id");
    p.a.send(false, b"from server");
    p.b.send(false, &big);
    let plain = b"from server";
    assert!(!p.a.out.windows(plain.len()).any(|w| w == plain), "the body is wrapped");
    assert!(p.a.out.windows(8).any(|w| w == b"\x07MESSAGE"), "each frame goes in a MESSAGE command");
    let mut header = Vec::new();
    assert!(!p.b.session.encode_frame_header(false, 10, &mut header), "wrapped bodies are never sent as they are");
    assert!(header.is_empty());
    assert!(p.b.session.small_data_frame(b"\x00\x01x", 64).unwrap().is_none(), "GSSAPI frames must be unwrapped");
    p.drive();
    assert_eq!(p.b.frames(), vec![(true, Bytes::from_static(b"id")), (false, Bytes::from_static(plain))]);
    assert_eq!(p.a.frames(), vec![(false, Bytes::from(big))]);
    assert!(p.a.session.check_codec().is_ok() && p.b.session.check_codec().is_ok());
}

#[test]
fn gssapi_subscriptions_and_heartbeats_are_wrapped_commands() {
    let mut p = gssapi_pair(hb(SocketType::XPub, 1000, 0, 0), cfg(SocketType::Sub), false, None);
    p.b.subscribe(true, b"topic");
    assert!(!p.b.out.windows(9).any(|w| w == b"SUBSCRIBE"));
    p.drive();
    assert_eq!(
        p.a.got,
        vec![Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"topic"), in_band: false }]
    );
    p.advance(Duration::from_secs(30));
    assert!(p.a.error.is_none() && p.b.error.is_none(), "wrapped PINGs were answered by wrapped PONGs");
}

#[test]
fn gssapi_plaintext_leaves_traffic_as_zmtp_frames() {
    let mut p = gssapi_pair(cfg(SocketType::Push), cfg(SocketType::Pull), true, None);
    assert!(matches!(p.a.session.framing(), Framing::Zmtp3(z) if !z.is_boxed()));
    p.a.send(false, b"clear");
    assert_eq!(p.a.out, b"\x00\x05clear");
    p.drive();
    assert_eq!(p.b.frames(), vec![(false, Bytes::from_static(b"clear"))]);
}

#[test]
fn gssapi_refuses_a_token_it_cannot_unwrap() {
    let mut p = gssapi_pair(cfg(SocketType::Router), cfg(SocketType::Dealer), false, None);
    p.a.send(false, b"payload");
    // The stand-in's tokens start with `W`; anything else fails to unwrap.
    let w = p.a.out.iter().position(|&b| b == b'W').expect("a wrap token");
    p.a.out[w] = b'X';
    p.drive();
    assert_eq!(p.b.error, Some(SessionError::Protocol(ProtocolError::Cryptographic { what: "MESSAGE" })));
}

#[test]
fn gssapi_an_expired_context_writes_nothing_more_and_ends_the_session() {
    // Each context wraps its READY in the handshake, then one frame.
    let mut p = gssapi_pair(cfg(SocketType::Dealer), cfg(SocketType::Dealer), false, Some(2));
    p.a.send(false, b"one");
    assert!(p.a.session.check_codec().is_ok());
    let written = p.a.out.len();
    p.a.send(false, b"two");
    assert_eq!(p.a.out.len(), written, "a frame the context cannot wrap is not written");
    assert_eq!(
        p.a.session.check_codec(),
        Err(SessionError::Protocol(ProtocolError::Cryptographic { what: "MESSAGE" }))
    );
    p.drive();
    assert_eq!(p.b.frames(), vec![(false, Bytes::from_static(b"one"))]);
}

// ---- ZMTP/1.0 ----

#[test]
fn zmtp_1_0_frames_are_size_flags_body() {
    let mut p = null_pair(cfg(SocketType::Push), cfg(SocketType::Pull), (1, 0));
    assert!(matches!(p.a.session.framing(), Framing::Zmtp10));
    p.a.send(true, b"ab");
    assert_eq!(p.a.out, [3, 1, b'a', b'b']);
    let big = vec![1u8; 300];
    p.a.send(false, &big);
    assert_eq!(&p.a.out[4..14], &[0xFF, 0, 0, 0, 0, 0, 0, 1, 45, 0]);
    p.drive();
    assert_eq!(p.b.frames(), vec![(true, Bytes::from_static(b"ab")), (false, Bytes::from(big))]);
}

#[test]
fn zmtp_1_0_has_no_pings_and_subscribes_with_messages() {
    let mut p = null_pair(hb(SocketType::Sub, 100, 0, 0), cfg(SocketType::Pub), (1, 0));
    assert_eq!(p.a.session.poll_timeout(), None);
    p.a.subscribe(true, b"t");
    assert_eq!(p.a.out, [3, 0, 1, b't']);
    p.drive();
    assert_eq!(
        p.b.got,
        vec![Inbound::Subscription { subscribe: true, topic: Bytes::from_static(b"t"), in_band: true }]
    );
}

#[test]
fn a_publisher_subscribes_an_unversioned_1_0_peer_to_everything() {
    let now = Instant::now();
    let mut unversioned = peer((1, 0), SocketType::Sub);
    unversioned.filters_locally = true;
    assert!(Session::new(&cfg(SocketType::Pub), &unversioned, None, now).subscribe_peer_to_all());
    assert!(!Session::new(&cfg(SocketType::Pull), &unversioned, None, now).subscribe_peer_to_all());
    assert!(!session(&cfg(SocketType::Pub), (1, 0), SocketType::Sub, now).subscribe_peer_to_all());
}

#[test]
fn zmtp_1_0_refuses_a_size_of_zero() {
    let mut p = null_pair(cfg(SocketType::Push), cfg(SocketType::Pull), (1, 0));
    p.a.out.push(0);
    p.drive();
    assert_eq!(p.b.error, Some(SessionError::Protocol(ProtocolError::EmptyZmtp10Frame)));
}

// ---- raw (STREAM, DGRAM) ----

#[test]
fn stream_raw_bytes_pass_unframed_and_an_empty_frame_closes() {
    let mut p = Pair::new(Session::raw(SocketType::Stream), Session::raw(SocketType::Stream), Instant::now());
    assert!(matches!(p.a.session.framing(), Framing::Raw { close_on_empty: true }));
    p.a.send(false, b"GET / HTTP/1.0\r\n");
    p.a.send(false, b"\r\n");
    assert_eq!(p.a.out, b"GET / HTTP/1.0\r\n\r\n");
    p.drive();
    assert_eq!(p.b.frames(), vec![(false, Bytes::from_static(b"GET / HTTP/1.0\r\n\r\n"))]);
    let mut out = Vec::new();
    assert!(!p.a.session.encode_frame(false, b"", &mut out), "STREAM: an empty frame closes");
    assert!(out.is_empty());
    assert!(!p.a.session.encode_frame_header(false, 10, &mut out), "raw bodies go through encode_frame");
    p.a.session.encode_subscription(true, b"x", &mut out);
    assert!(out.is_empty(), "no subscriptions on raw connections");
    assert_eq!(p.a.session.poll_timeout(), None);
    assert_eq!(p.a.session.pending_header(b"\x00\xff"), None, "raw bytes have no headers");
}

#[test]
fn raw_bytes_are_never_parsed() {
    let now = Instant::now();
    let mut s = Session::raw(SocketType::Stream);
    // What would be a malformed ZMTP frame is just bytes here.
    let mut rx = BytesMut::from(&[0xFF, 0xFF, 0x04, 0x00][..]);
    assert_eq!(
        s.poll_inbound(&mut rx, now),
        Ok(Some(Inbound::Frame { more: false, body: Bytes::from_static(&[0xFF, 0xFF, 0x04, 0x00]) }))
    );
    assert_eq!(s.poll_inbound(&mut rx, now), Ok(None));
}

#[test]
fn dgram_skips_empty_frames() {
    let mut s = Session::raw(SocketType::Dgram);
    let mut out = Vec::new();
    assert!(s.encode_frame(true, b"", &mut out));
    assert!(s.encode_frame(false, b"data", &mut out));
    assert_eq!(out, b"data");
}

// ---- malformed input: a typed error, never a panic ----

fn fed(socket_type: SocketType, version: (u8, u8), bytes: &[u8]) -> Result<Vec<Inbound>, SessionError> {
    let now = Instant::now();
    let mut s = Session::new(
        &SessionConfig { max_msg_size: Some(1000), ..cfg(socket_type) },
        &peer(version, SocketType::Dealer),
        None,
        now,
    );
    let mut rx = BytesMut::from(bytes);
    let mut got = Vec::new();
    while let Some(m) = s.poll_inbound(&mut rx, now)? {
        got.push(m);
    }
    Ok(got)
}

#[test]
fn refuses_reserved_flag_bits() {
    assert_eq!(
        fed(SocketType::Router, (3, 1), b"\x08\x00"),
        Err(SessionError::Protocol(ProtocolError::ReservedFlagBits { flags: 8 }))
    );
}

#[test]
fn refuses_a_command_with_more() {
    assert_eq!(
        fed(SocketType::Router, (3, 1), b"\x05\x00"),
        Err(SessionError::Protocol(ProtocolError::CommandWithMore))
    );
}

#[test]
fn refuses_frames_over_maxmsgsize_from_the_header_alone() {
    assert_eq!(
        fed(SocketType::Router, (3, 1), b"\x02\x00\x00\x00\x00\x00\x00\x03\xe9"),
        Err(SessionError::Protocol(ProtocolError::MessageTooLarge { size: 1001, max: 1000 }))
    );
}

#[test]
fn refuses_truncated_commands() {
    // Name length 9, but only 4 octets follow.
    assert!(matches!(
        fed(SocketType::Router, (3, 1), b"\x04\x05\x09PING"),
        Err(SessionError::Protocol(ProtocolError::MalformedCommand { .. }))
    ));
    // A PING without its TTL.
    assert!(matches!(
        fed(SocketType::Router, (3, 1), b"\x04\x06\x04PING\x00"),
        Err(SessionError::Protocol(ProtocolError::MalformedCommand { name })) if name == b"PING"
    ));
    assert!(matches!(
        fed(SocketType::Router, (3, 1), b"\x04\x00"),
        Err(SessionError::Protocol(ProtocolError::MalformedCommand { .. }))
    ));
}

#[test]
fn an_error_command_ends_the_session_with_its_reason() {
    assert_eq!(
        fed(SocketType::Router, (3, 1), b"\x04\x0a\x05ERROR\x03bye"),
        Err(SessionError::PeerError { reason: b"bye".to_vec() })
    );
}

#[test]
fn unknown_commands_and_pongs_are_ignored() {
    assert_eq!(
        fed(SocketType::Router, (3, 1), b"\x04\x05\x04PONG\x04\x04\x03FOO\x00\x01x"),
        Ok(vec![Inbound::Frame { more: false, body: Bytes::from_static(b"x") }])
    );
}

// ---- property tests (no cargo-fuzz needed) ----

/// Arbitrary bytes in arbitrary chunks, into every framing and role: the
/// session returns frames or a typed error, never panics or loops.
#[test]
fn arbitrary_bytes_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5e55_1011);
    let now = Instant::now();
    let kinds: [(SocketType, (u8, u8)); 6] = [
        (SocketType::XPub, (3, 1)),
        (SocketType::XPub, (3, 0)),
        (SocketType::Radio, (3, 1)),
        (SocketType::Router, (2, 0)),
        (SocketType::Pub, (1, 0)),
        (SocketType::Pull, (1, 0)),
    ];
    for round in 0..3000 {
        let (socket_type, version) = kinds[round % kinds.len()];
        let config = SessionConfig { max_msg_size: (round % 3 == 0).then_some(64), ..hb(socket_type, 100, 200, 0) };
        let mut s = Session::new(&config, &peer(version, SocketType::Dealer), None, now);
        let len = (rng.next_u32() % 300) as usize;
        let mut data = vec![0u8; len];
        rng.fill_bytes(&mut data);
        // Bias towards plausible headers: small sizes and valid flags.
        if len > 2 && round % 2 == 0 {
            data[0] &= 0x05;
            data[1] %= 16;
        }
        let mut rx = BytesMut::new();
        let mut out = Vec::new();
        'feed: for part in data.chunks(1 + (rng.next_u32() % 17) as usize) {
            rx.extend_from_slice(part);
            s.handle_bytes_received(now);
            loop {
                match s.poll_inbound(&mut rx, now) {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(_) => break 'feed,
                }
            }
            s.poll_transmit(&mut out);
        }
    }
}

/// Random sequences of messages and subscriptions, encoded by one end and
/// delivered in random chunks, arrive exactly as sent, in every framing.
#[test]
fn random_traffic_round_trips_in_every_framing() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x0b5e55ed);
    for round in 0..60 {
        let version = [(3, 1), (3, 0), (2, 0), (1, 0)][round % 4];
        let mut p = if round % 5 == 4 {
            curve_pair(cfg(SocketType::XPub), cfg(SocketType::XSub))
        } else if round % 5 == 3 {
            gssapi_pair(cfg(SocketType::XPub), cfg(SocketType::XSub), false, None)
        } else {
            null_pair(cfg(SocketType::XPub), cfg(SocketType::XSub), version)
        };
        p.chunk = 1 + (rng.next_u32() % 50) as usize;
        let mut expected = Vec::new();
        for _ in 0..(rng.next_u32() % 20) {
            let mut body = vec![0u8; (rng.next_u32() % 400) as usize];
            rng.fill_bytes(&mut body);
            let body = Bytes::from(body);
            if rng.next_u32() % 4 == 0 {
                let subscribe = rng.next_u32() % 2 == 0;
                p.b.subscribe(subscribe, &body);
                let in_band = !matches!(p.b.session.framing(), Framing::Zmtp3(z) if z.subscription_commands());
                expected.push(Inbound::Subscription { subscribe, topic: body, in_band });
            } else {
                // Multipart, so none of these reads as a 3.0 subscription.
                p.b.send(true, &body);
                p.b.send(false, b"end");
                expected.push(Inbound::Frame { more: true, body });
                expected.push(Inbound::Frame { more: false, body: Bytes::from_static(b"end") });
            }
        }
        p.drive();
        assert_eq!(p.a.error, None);
        assert_eq!(p.a.got, expected, "round {round}");
    }
}
