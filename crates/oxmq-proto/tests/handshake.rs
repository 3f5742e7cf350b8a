//! Handshakes between two in-memory peers, and against hand-built bytes.

use bytes::{Bytes, BytesMut};
use oxmq_proto::{
    Command, FrameDecoder, Handshake, HandshakeConfig, HandshakeError, Metadata, PeerInfo, ProtocolError, SocketType,
};

fn config(socket_type: SocketType, identity: &[u8]) -> HandshakeConfig {
    HandshakeConfig::null(socket_type, identity)
}

/// One side of the harness: its state machine, inbound buffer and result.
struct Peer {
    hs: Handshake,
    inbox: BytesMut,
    result: Option<Result<PeerInfo, HandshakeError>>,
}

impl Peer {
    fn new(cfg: HandshakeConfig) -> Peer {
        Peer { hs: Handshake::new(cfg), inbox: BytesMut::new(), result: None }
    }

    /// Feeds up to `chunk` pending inbound bytes; returns bytes to send.
    fn step(&mut self, incoming: &mut Vec<u8>, chunk: usize) -> Vec<u8> {
        let n = chunk.min(incoming.len());
        self.inbox.extend_from_slice(&incoming[..n]);
        incoming.drain(..n);
        if self.result.is_none() && (n > 0 || !self.inbox.is_empty()) {
            match self.hs.handle_input(&mut self.inbox) {
                Ok(Some(p)) => self.result = Some(Ok(p)),
                Ok(None) => {}
                Err(e) => self.result = Some(Err(e)),
            }
        }
        let mut out = Vec::new();
        self.hs.poll_transmit(&mut out);
        out
    }
}

/// Pumps bytes both ways, `chunk` at a time, until neither side moves.
fn run(a: HandshakeConfig, b: HandshakeConfig, chunk: usize) -> (Peer, Peer) {
    let mut a = Peer::new(a);
    let mut b = Peer::new(b);
    let mut to_a = Vec::new();
    let mut to_b = Vec::new();
    a.hs.poll_transmit(&mut to_b);
    b.hs.poll_transmit(&mut to_a);
    for _ in 0..10_000 {
        let out_a = a.step(&mut to_a, chunk);
        let out_b = b.step(&mut to_b, chunk);
        let idle = out_a.is_empty() && out_b.is_empty() && to_a.is_empty() && to_b.is_empty();
        to_b.extend(out_a);
        to_a.extend(out_b);
        if idle {
            break;
        }
    }
    (a, b)
}

fn ok(p: &Peer) -> &PeerInfo {
    p.result.as_ref().expect("handshake finished").as_ref().expect("handshake succeeded")
}

fn err(p: &Peer) -> &HandshakeError {
    p.result.as_ref().expect("handshake finished").as_ref().expect_err("handshake failed")
}

fn greeting(major: u8, minor: u8, mechanism: &[u8]) -> Vec<u8> {
    let mut g = vec![0u8; 64];
    g[..12].copy_from_slice(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, major, minor]);
    g[12..12 + mechanism.len()].copy_from_slice(mechanism);
    g
}

fn ready(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut m = Metadata::new();
    for (n, v) in props {
        m.insert(n, v);
    }
    let mut out = Vec::new();
    Command::Ready(m).encode(&mut out);
    out
}

fn feed(hs: &mut Handshake, bytes: &[u8]) -> (Result<Option<PeerInfo>, HandshakeError>, BytesMut) {
    let mut buf = BytesMut::from(bytes);
    let r = hs.handle_input(&mut buf);
    (r, buf)
}

#[test]
fn sends_greeting_in_libzmqs_three_steps() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let ours = greeting(3, 1, b"NULL");
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    assert_eq!(out, ours[..10], "the signature alone until the peer shows its own");
    out.clear();
    hs.poll_transmit(&mut out);
    assert!(out.is_empty(), "nothing more until the peer's signature");
    assert_eq!(feed(&mut hs, &ours[..9]).0, Ok(None));
    hs.poll_transmit(&mut out);
    assert!(out.is_empty());
    assert_eq!(feed(&mut hs, &ours[9..10]).0, Ok(None));
    hs.poll_transmit(&mut out);
    assert_eq!(out, [3], "then the major version");
    out.clear();
    assert_eq!(feed(&mut hs, &ours[10..11]).0, Ok(None));
    hs.poll_transmit(&mut out);
    assert_eq!(out, ours[11..], "then, to a 3.x peer, the rest");
    assert_eq!(hs.peer_minor_version(), None);
}

#[test]
fn dealer_router_complete_in_memory() {
    let (a, b) = run(config(SocketType::Dealer, b"dealer-id"), config(SocketType::Router, b""), usize::MAX);
    let pa = ok(&a);
    let pb = ok(&b);
    assert_eq!(pa.socket_type, SocketType::Router);
    assert_eq!(pb.socket_type, SocketType::Dealer);
    assert_eq!(pb.identity, Some(Bytes::from_static(b"dealer-id")));
    // ROUTER sends an empty Identity, which reads as none.
    assert_eq!(pa.identity, None);
    assert_eq!(pa.metadata.get_exact("Identity"), Some(&b""[..]));
    assert_eq!(pa.version, (3, 1));
    assert_eq!(a.hs.peer_minor_version(), Some(1));
    assert!(a.hs.is_complete() && b.hs.is_complete());
}

#[test]
fn every_compatible_pair_completes() {
    for x in SocketType::ALL {
        for y in SocketType::ALL {
            let (a, b) = run(config(x, b""), config(y, b""), usize::MAX);
            if x.is_compatible_with(y) {
                assert_eq!(ok(&a).socket_type, y);
                assert_eq!(ok(&b).socket_type, x);
            } else {
                assert_eq!(*err(&a), HandshakeError::IncompatibleSocketType { ours: x, theirs: y });
                assert_eq!(*err(&b), HandshakeError::IncompatibleSocketType { ours: y, theirs: x });
            }
        }
    }
}

#[test]
fn byte_at_a_time_feeding_completes() {
    let (a, b) = run(config(SocketType::Req, b"r"), config(SocketType::Rep, b"ignored"), 1);
    assert_eq!(ok(&a).socket_type, SocketType::Rep);
    assert_eq!(ok(&b).identity, Some(Bytes::from_static(b"r")));
    // REP does not send Identity at all.
    assert_eq!(ok(&a).metadata.get("Identity"), None);
}

#[test]
fn incompatible_socket_types_fail_both_ways() {
    let (a, b) = run(config(SocketType::Pub, b""), config(SocketType::Push, b""), usize::MAX);
    assert_eq!(*err(&a), HandshakeError::IncompatibleSocketType { ours: SocketType::Pub, theirs: SocketType::Push });
    assert_eq!(*err(&b), HandshakeError::IncompatibleSocketType { ours: SocketType::Push, theirs: SocketType::Pub });
}

#[test]
fn our_ready_is_exactly_libzmq_dealer_ready() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    out.clear();
    let (r, _) = feed(&mut hs, &greeting(3, 1, b"NULL"));
    assert_eq!(r, Ok(None));
    hs.poll_transmit(&mut out);
    // The rest of our greeting (from the major version on), then READY.
    let mut expected = greeting(3, 1, b"NULL")[10..].to_vec();
    expected.extend_from_slice(&[0x04, 41]);
    expected.extend_from_slice(b"\x05READY\x0BSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x00");
    assert_eq!(out, expected);
}

#[test]
fn pub_ready_has_no_identity() {
    let mut hs = Handshake::new(config(SocketType::Pub, b"ignored"));
    let mut out = Vec::new();
    feed(&mut hs, &greeting(3, 1, b"NULL")).0.unwrap();
    hs.poll_transmit(&mut out);
    assert_eq!(&out[64..], [&[0x04u8, 25][..], b"\x05READY\x0BSocket-Type\x00\x00\x00\x03PUB"].concat());
}

#[test]
fn zmtp_30_peer_is_negotiated_as_30() {
    let mut hs = Handshake::new(config(SocketType::Sub, b""));
    let mut input = greeting(3, 0, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PUB")]));
    let (r, rest) = feed(&mut hs, &input);
    assert_eq!(r.unwrap().unwrap().version, (3, 0));
    assert_eq!(hs.peer_minor_version(), Some(0));
    assert!(rest.is_empty());
}

#[test]
fn newer_major_is_treated_as_31() {
    let mut hs = Handshake::new(config(SocketType::Sub, b""));
    let mut input = greeting(4, 0, b"NULL");
    input.extend(ready(&[("Socket-Type", b"XPUB")]));
    let (r, _) = feed(&mut hs, &input);
    assert_eq!(r.unwrap().unwrap().version, (3, 1));
    assert_eq!(hs.peer_minor_version(), Some(1));
}

#[test]
fn bytes_after_ready_are_left_for_the_frame_decoder() {
    let mut hs = Handshake::new(config(SocketType::Pull, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PUSH")]));
    input.extend_from_slice(&[0x01, 1, b'a', 0x00, 2, b'b', b'c', 0x04]);
    let (r, mut rest) = feed(&mut hs, &input);
    assert!(r.unwrap().is_some());
    assert_eq!(&rest[..], &[0x01, 1, b'a', 0x00, 2, b'b', b'c', 0x04]);
    let mut dec = FrameDecoder::new(None);
    assert_eq!(&dec.decode(&mut rest).unwrap().unwrap().body[..], b"a");
    assert_eq!(&dec.decode(&mut rest).unwrap().unwrap().body[..], b"bc");
    assert_eq!(dec.decode(&mut rest).unwrap(), None);
    // After completion nothing more is consumed.
    let mut more = BytesMut::from(&[0x00, 0][..]);
    assert_eq!(hs.handle_input(&mut more), Ok(None));
    assert_eq!(more.len(), 2);
}

#[test]
fn mechanism_mismatch_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let (r, _) = feed(&mut hs, &greeting(3, 1, b"PLAIN"));
    let e = r.unwrap_err();
    assert_eq!(e, HandshakeError::MechanismMismatch { ours: b"NULL".to_vec(), theirs: b"PLAIN".to_vec() });
    assert_eq!(e.zmq_protocol_error_code(), 0x1100_0002);
}

#[test]
fn mechanism_padding_must_match_too() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut g = greeting(3, 1, b"NULL");
    g[20] = b'X';
    assert!(matches!(feed(&mut hs, &g).0, Err(HandshakeError::MechanismMismatch { .. })));
}

#[test]
fn bad_signature_is_refused_at_first_octet() {
    // With ZAP asked for, a ZMTP/1.0 peer is refused (libzmq); without,
    // it is spoken to (tests/zmtp10.rs).
    let mut cfg = config(SocketType::Dealer, b"");
    cfg.zap_domain = b"global".to_vec();
    let mut hs = Handshake::new(cfg);
    // A ZMTP/1.0 peer opens with its identity frame: length then flags.
    let (r, _) = feed(&mut hs, &[0x01]);
    assert_eq!(r, Err(HandshakeError::UnsupportedVersion { major: 1 }));
    // The failure is sticky.
    assert_eq!(feed(&mut hs, &[0xFF]).0, Err(HandshakeError::UnsupportedVersion { major: 1 }));
}

#[test]
fn bad_signature_octet_9_is_refused_after_10_octets() {
    let mut cfg = config(SocketType::Dealer, b"");
    cfg.zap_domain = b"global".to_vec();
    let mut hs = Handshake::new(cfg);
    let (r, _) = feed(&mut hs, &[0xFF, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(r, Ok(None));
    let (r, _) = feed(&mut hs, &[0x7E]);
    assert_eq!(r, Err(HandshakeError::UnsupportedVersion { major: 1 }));
}

/// A ZMTP/2.0 peer as libzmq 3.x speaks it (RFC 15): signature, revision
/// 01, socket type, then its identity as a 2.0 frame.
fn zmtp20_greeting(socket_type: u8, identity: &[u8]) -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1 + identity.len() as u8, 0x7F, 0x01, socket_type];
    g.extend_from_slice(&[0x00, identity.len() as u8]);
    g.extend_from_slice(identity);
    g
}

#[test]
fn zmtp_20_peer_is_answered_in_2_0() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b"me"));
    let mut out = Vec::new();
    let mut input = zmtp20_greeting(6 /* ROUTER */, b"peer-id");
    // Traffic after the identity frame stays in the buffer.
    input.extend_from_slice(&[0x00, 0x02, b'h', b'i']);
    let (r, rest) = feed(&mut hs, &input);
    let peer = r.unwrap().expect("complete after the identity frame");
    assert_eq!(peer.version, (2, 0));
    assert_eq!(peer.socket_type, SocketType::Router);
    assert_eq!(peer.identity.as_deref(), Some(&b"peer-id"[..]));
    assert_eq!(&rest[..], &[0x00, 0x02, b'h', b'i']);
    assert_eq!(hs.peer_minor_version(), Some(0));
    hs.poll_transmit(&mut out);
    // Our signature, major 3, then a 2.0 greeting's socket type and our
    // identity frame: never a 3.x octet after the major version.
    let mut expected = greeting(3, 1, b"NULL")[..11].to_vec();
    expected[8] = 3; // libzmq's padding: identity length + 1
    expected.extend_from_slice(&[5 /* DEALER */, 0x00, 2, b'm', b'e']);
    assert_eq!(out, expected);
}

#[test]
fn zmtp_20_peer_byte_by_byte() {
    let mut hs = Handshake::new(config(SocketType::Pull, b""));
    let input = zmtp20_greeting(8 /* PUSH */, b"");
    let mut buf = BytesMut::new();
    for (i, b) in input.iter().enumerate() {
        buf.extend_from_slice(&[*b]);
        let r = hs.handle_input(&mut buf).unwrap();
        assert_eq!(r.is_some(), i == input.len() - 1, "octet {i}");
    }
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    // No routing id: an empty frame.
    assert_eq!(&out[10..], &[3, 7, 0x00, 0x00]);
}

#[test]
fn zmtp_20_identity_frame_carries_the_routing_id_of_any_socket_type() {
    // libzmq 4.3.5 (checked with tests/compat/behaviour/zmtp20_peer.py): a PULL with
    // ZMQ_ROUTING_ID sends it to a 2.0 peer, though 3.x READY would not.
    let mut hs = Handshake::new(config(SocketType::Pull, b"pull-id"));
    let _ = feed(&mut hs, &zmtp20_greeting(8 /* PUSH */, b""));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    assert_eq!(&out[10..], b"\x03\x07\x00\x07pull-id");
}

#[test]
fn zmtp_20_identity_must_be_a_plain_frame() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = zmtp20_greeting(5, b"");
    input[12] = 0x04; // command flag: garbage from a 2.0 peer
    assert!(matches!(feed(&mut hs, &input).0, Err(HandshakeError::Protocol(_))));
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = zmtp20_greeting(5, b"");
    input[12] = 0xF0; // reserved flag bits
    assert!(matches!(feed(&mut hs, &input).0, Err(HandshakeError::Protocol(_))));
}

#[test]
fn zmtp_20_peer_is_refused_with_security_after_11_octets() {
    // libzmq speaks 2.0 only when no mechanism or ZAP is asked for; a 2.0
    // peer never sends 64 octets, so refusal must not wait for them.
    let mut cfg = config(SocketType::Dealer, b"");
    cfg.zap_domain = b"global".to_vec();
    let mut hs = Handshake::new(cfg);
    let (r, _) = feed(&mut hs, &[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0x01]);
    assert_eq!(r, Err(HandshakeError::UnsupportedVersion { major: 2 }));
}

#[test]
fn zmtp_10_versioned_peer_is_refused_with_zap() {
    // Revision 0 (a versioned ZMTP/1.0 greeting): spoken only without
    // security, as libzmq does.
    let mut cfg = config(SocketType::Dealer, b"");
    cfg.zap_domain = b"global".to_vec();
    let mut hs = Handshake::new(cfg);
    let (r, _) = feed(&mut hs, &[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0x00]);
    assert_eq!(r, Err(HandshakeError::UnsupportedVersion { major: 1 }));
}

#[test]
fn peer_error_during_handshake_is_reported() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    Command::Error { reason: b"400".to_vec() }.encode(&mut input);
    let e = feed(&mut hs, &input).0.unwrap_err();
    assert_eq!(e, HandshakeError::PeerError { reason: b"400".to_vec() });
    assert_eq!(e.zap_status_code(), Some(400));
    assert_eq!(HandshakeError::PeerError { reason: b"oops".to_vec() }.zap_status_code(), None);
}

#[test]
fn message_frame_before_ready_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend_from_slice(&[0x00, 1, b'x']);
    let e = feed(&mut hs, &input).0.unwrap_err();
    assert_eq!(e, HandshakeError::Protocol(ProtocolError::UnexpectedMessage));
    assert_eq!(e.zmq_protocol_error_code(), 0x1000_0001);
}

#[test]
fn other_command_before_ready_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    Command::Ping { ttl_deciseconds: 0, context: Bytes::new() }.encode(&mut input);
    assert_eq!(
        feed(&mut hs, &input).0,
        Err(HandshakeError::Protocol(ProtocolError::UnexpectedCommand { name: b"PING".to_vec() }))
    );
}

#[test]
fn ready_without_socket_type_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Identity", b"")]));
    assert_eq!(feed(&mut hs, &input).0, Err(HandshakeError::Protocol(ProtocolError::MissingSocketType)));
}

#[test]
fn socket_type_property_name_is_case_sensitive() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("socket-type", b"ROUTER")]));
    assert!(feed(&mut hs, &input).0.is_err());
}

#[test]
fn unknown_socket_type_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"NOPE")]));
    assert_eq!(
        feed(&mut hs, &input).0,
        Err(HandshakeError::UnknownSocketType { ours: SocketType::Dealer, theirs: b"NOPE".to_vec() })
    );
    // A draft type is known, and refused as incompatible.
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"CLIENT")]));
    assert_eq!(
        feed(&mut hs, &input).0,
        Err(HandshakeError::IncompatibleSocketType { ours: SocketType::Dealer, theirs: SocketType::Client })
    );
}

#[test]
fn malformed_ready_metadata_is_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend_from_slice(&[0x04, 9]);
    input.extend_from_slice(b"\x05READY\x0BSo");
    let e = feed(&mut hs, &input).0.unwrap_err();
    assert!(matches!(e, HandshakeError::Protocol(ProtocolError::MalformedMetadata { .. })));
}

#[test]
fn reserved_flags_during_handshake_are_refused() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend_from_slice(&[0x84, 0]);
    assert_eq!(feed(&mut hs, &input).0, Err(HandshakeError::Protocol(ProtocolError::ReservedFlagBits { flags: 0x84 })));
}

#[test]
fn max_msg_size_applies_to_handshake_commands() {
    let mut hs = Handshake::new(config(SocketType::Dealer, b""));
    hs.set_max_msg_size(Some(10));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"ROUTER")]));
    assert!(matches!(
        feed(&mut hs, &input).0,
        Err(HandshakeError::Protocol(ProtocolError::MessageTooLarge { size: 28, max: 10 }))
    ));
}

#[test]
fn ready_received_before_greeting_flush_still_sends_our_ready() {
    // The peer's greeting and READY arrive in one read, before we flushed
    // anything: completion is reported, and our READY is still emitted.
    let mut hs = Handshake::new(config(SocketType::Push, b""));
    let mut input = greeting(3, 1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PULL")]));
    assert!(feed(&mut hs, &input).0.unwrap().is_some());
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    assert_eq!(&out[..64], &greeting(3, 1, b"NULL")[..]);
    assert_eq!(&out[64..], &ready(&[("Socket-Type", b"PUSH")])[..]);
}
