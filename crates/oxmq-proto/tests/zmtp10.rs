//! ZMTP/1.0 (RFC 13) peers, as libzmq 4.3 speaks to them: detection from
//! the first octets, our identity in 1.0 framing, then 1.0 traffic framing.

use bytes::BytesMut;
use oxmq_proto::{
    encode_zmtp10_frame_header, zmtp10_header_len, FrameDecoder, Handshake, HandshakeConfig, HandshakeError,
    PlainConfig, ProtocolError, SocketType,
};

fn null(socket_type: SocketType, identity: &[u8]) -> Handshake {
    Handshake::new(HandshakeConfig::null(socket_type, identity))
}

/// A 1.0 frame as libzmq 2.x writes it: size (body + flags octet), flags, body.
fn v1_frame(body: &[u8], more: bool) -> Vec<u8> {
    let mut out = Vec::new();
    encode_zmtp10_frame_header(&mut out, more, body.len());
    out.extend_from_slice(body);
    out
}

fn sent(hs: &mut Handshake) -> Vec<u8> {
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    out
}

#[test]
fn short_frames_are_size_flags_body() {
    assert_eq!(v1_frame(b"hi", false), [3, 0, b'h', b'i']);
    assert_eq!(v1_frame(b"", true), [1, 1]);
    // 253 octets + flags = 254: still one size octet.
    assert_eq!(zmtp10_header_len(253), 2);
    assert_eq!(v1_frame(&[7; 253], false)[..2], [254, 0]);
}

#[test]
fn size_255_and_up_takes_the_long_form() {
    // libzmq's v1 encoder: a size (with flags) of 255 no longer fits,
    // 0xFF being the escape.
    assert_eq!(zmtp10_header_len(254), 10);
    let f = v1_frame(&[7; 254], true);
    assert_eq!(f[..10], [0xFF, 0, 0, 0, 0, 0, 0, 0, 255, 1]);
    assert_eq!(f.len(), 10 + 254);
}

#[test]
fn decoder_reads_both_forms_and_keeps_only_more() {
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&v1_frame(b"a", true));
    buf.extend_from_slice(&v1_frame(&[9; 300], false));
    // Flags 0xFE: libzmq masks everything but MORE, no reserved-bit error.
    buf.extend_from_slice(&[2, 0xFE, b'z']);
    let mut dec = FrameDecoder::zmtp10(None);
    let a = dec.decode(&mut buf).unwrap().unwrap();
    assert!(a.more && !a.command && &a.body[..] == b"a");
    let b = dec.decode(&mut buf).unwrap().unwrap();
    assert!(!b.more && b.body.len() == 300);
    let c = dec.decode(&mut buf).unwrap().unwrap();
    assert!(!c.more && !c.command && &c.body[..] == b"z");
    assert!(buf.is_empty());
}

#[test]
fn decoder_waits_for_whole_frames_octet_by_octet() {
    let whole = v1_frame(&[5; 400], true);
    let mut dec = FrameDecoder::zmtp10(None);
    let mut buf = BytesMut::new();
    for (i, b) in whole.iter().enumerate() {
        buf.extend_from_slice(&[*b]);
        let got = dec.decode(&mut buf).unwrap();
        assert_eq!(got.is_some(), i == whole.len() - 1, "octet {i}");
    }
    let h = FrameDecoder::zmtp10(None).pending_header(&whole[..12]).unwrap();
    assert_eq!((h.header_len, h.body_len, h.more), (10, 400, true));
}

#[test]
fn size_zero_is_refused_before_any_flags() {
    let mut dec = FrameDecoder::zmtp10(None);
    assert_eq!(dec.decode(&mut BytesMut::from(&[0u8][..])), Err(ProtocolError::EmptyZmtp10Frame));
    let long_zero = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(dec.decode(&mut BytesMut::from(&long_zero[..])), Err(ProtocolError::EmptyZmtp10Frame));
}

#[test]
fn oversized_lengths_are_refused_from_the_header_alone() {
    let mut dec = FrameDecoder::zmtp10(Some(100));
    // 101 octets of body (+1 flags): over MAXMSGSIZE, refused before the flags.
    assert_eq!(
        dec.decode(&mut BytesMut::from(&[102u8][..])),
        Err(ProtocolError::MessageTooLarge { size: 101, max: 100 })
    );
    assert_eq!(dec.decode(&mut BytesMut::from(&[101u8, 0][..])), Ok(None), "100 is allowed");
    let mut dec = FrameDecoder::zmtp10(None);
    let huge = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
    assert!(matches!(dec.decode(&mut BytesMut::from(&huge[..])), Err(ProtocolError::FrameTooLong { .. })));
}

#[test]
fn signature_padding_is_identity_length_plus_one() {
    // libzmq's signature is also the header of a 1.0 identity frame.
    let mut hs = null(SocketType::Dealer, b"abc");
    assert_eq!(sent(&mut hs), [0xFF, 0, 0, 0, 0, 0, 0, 0, 4, 0x7F]);
    let mut hs = null(SocketType::Push, b"");
    assert_eq!(sent(&mut hs), [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]);
}

#[test]
fn short_identity_first_octet_is_a_1_0_peer() {
    let mut hs = null(SocketType::Router, b"me");
    let _ = sent(&mut hs);
    // libzmq 2.x: identity "old" as a 1.0 frame, then a message "hi" with MORE.
    let mut input = v1_frame(b"old", false);
    input.extend_from_slice(&v1_frame(b"hi", true));
    let mut buf = BytesMut::from(&input[..1]);
    assert_eq!(hs.handle_input(&mut buf), Ok(None), "the size octet alone is not enough");
    // Detected at once: our identity's body follows the signature, nothing else.
    assert_eq!(sent(&mut hs), b"me");
    buf.extend_from_slice(&input[1..]);
    let peer = hs.handle_input(&mut buf).unwrap().expect("complete after the identity frame");
    assert_eq!(peer.version, (1, 0));
    assert!(peer.filters_locally);
    assert_eq!(peer.identity.as_deref(), Some(&b"old"[..]));
    // An unversioned peer never names its type: taken as compatible.
    assert_eq!(peer.socket_type, SocketType::Router);
    assert_eq!(hs.peer_minor_version(), Some(0));
    assert_eq!(&buf[..], &v1_frame(b"hi", true)[..], "traffic stays for a 1.0 decoder");
    assert!(sent(&mut hs).is_empty());
}

#[test]
fn long_identity_with_flags_0_at_octet_9_is_a_1_0_peer() {
    // An identity of 300 octets: 0xFF, 8-octet size, flags 0 -> bit 0 of
    // octet 9 clear, so unversioned, detected after 10 octets.
    let id = [b'x'; 300];
    let input = v1_frame(&id, false);
    assert_eq!(input[0], 0xFF);
    let mut hs = null(SocketType::Pull, b"");
    let _ = sent(&mut hs);
    let mut buf = BytesMut::from(&input[..9]);
    assert_eq!(hs.handle_input(&mut buf), Ok(None));
    assert!(sent(&mut hs).is_empty(), "no major version octet to a maybe-versioned peer yet");
    buf.extend_from_slice(&input[9..]);
    let peer = hs.handle_input(&mut buf).unwrap().unwrap();
    assert_eq!(peer.identity.as_deref(), Some(&id[..]));
    assert!(buf.is_empty());
    assert!(sent(&mut hs).is_empty(), "an empty identity has no body to send");
}

#[test]
fn garbage_identity_frame_fails_the_handshake() {
    // A first octet of 0 is a 1.0 frame of size 0: EPROTO in libzmq.
    let mut hs = null(SocketType::Pull, b"");
    let r = hs.handle_input(&mut BytesMut::from(&[0u8, 1, 2][..]));
    assert_eq!(r, Err(HandshakeError::Protocol(ProtocolError::EmptyZmtp10Frame)));
    // MAXMSGSIZE applies to the identity frame too.
    let mut hs = null(SocketType::Pull, b"");
    hs.set_max_msg_size(Some(10));
    let r = hs.handle_input(&mut BytesMut::from(&[0xFF, 0, 0, 0, 0, 0, 0, 1, 0, 0][..]));
    assert!(matches!(r, Err(HandshakeError::Protocol(ProtocolError::MessageTooLarge { .. }))));
}

#[test]
fn security_or_zap_refuses_a_1_0_peer() {
    let mut cfg = HandshakeConfig::null(SocketType::Pull, b"");
    cfg.mechanism = oxmq_proto::MechanismConfig::Plain(PlainConfig::default());
    let mut hs = Handshake::new(cfg);
    let r = hs.handle_input(&mut BytesMut::from(&v1_frame(b"", false)[..]));
    assert_eq!(r, Err(HandshakeError::UnsupportedVersion { major: 1 }));
}

#[test]
fn versioned_1_0_greeting_gets_a_1_0_identity_frame() {
    // Revision 0 (libzmq's ZMTP_1_0): the 2.0-sized greeting, then 1.0 framing.
    let mut hs = null(SocketType::Dealer, b"id");
    let _ = sent(&mut hs);
    let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0x00, 6 /* ROUTER */];
    input.extend_from_slice(&v1_frame(b"", false));
    input.extend_from_slice(&v1_frame(b"data", false));
    let mut buf = BytesMut::from(&input[..]);
    let peer = hs.handle_input(&mut buf).unwrap().unwrap();
    assert_eq!(peer.version, (1, 0));
    assert_eq!(peer.socket_type, SocketType::Router);
    assert!(!peer.filters_locally, "libzmq subscribes only unversioned peers to everything");
    assert_eq!(sent(&mut hs), [3, 5 /* DEALER */, 3, 0, b'i', b'd']);
    assert_eq!(&buf[..], &v1_frame(b"data", false)[..]);
}

#[test]
fn two_oxmq_handshakes_never_take_each_other_for_1_0() {
    // Our own signature has 0x7F at octet 9 whatever the identity length.
    for id in [&b""[..], &[b'q'; 255][..]] {
        let mut hs = null(SocketType::Dealer, id);
        let sig = sent(&mut hs);
        let mut other = null(SocketType::Router, b"");
        let _ = sent(&mut other);
        assert_eq!(other.handle_input(&mut BytesMut::from(&sig[..])), Ok(None));
        assert_eq!(sent(&mut other), [3]);
    }
}
