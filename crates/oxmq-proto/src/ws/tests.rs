use super::*;

const RFC_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

#[test]
fn accept_key_matches_rfc_6455_example() {
    // RFC 6455 section 1.3.
    assert_eq!(accept_key(RFC_KEY), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    assert_eq!(new_key([0; 16]), "AAAAAAAAAAAAAAAAAAAAAA==");
}

#[test]
fn request_round_trip_and_protocol_choice() {
    let mut req = Vec::new();
    encode_request("/zeromq", "server.example.com:80", RFC_KEY, &client_protocols("NULL"), &mut req);
    assert_eq!(
        std::str::from_utf8(&req).unwrap(),
        "GET /zeromq HTTP/1.1\r\nHost: server.example.com:80\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ZWS2.0/NULL,ZWS2.0\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    req.extend_from_slice(b"\x82\x81"); // the first frame may follow at once
    let (r, len) = parse_request(&req, "NULL").unwrap().unwrap();
    assert_eq!(len, req.len() - 2);
    assert_eq!(r, Request { path: "/zeromq".into(), key: RFC_KEY.into(), protocol: "ZWS2.0/NULL".into() });
    // Incomplete: wait for more.
    assert_eq!(parse_request(&req[..40], "NULL"), Ok(None));
    // A PLAIN server does not take a NULL client.
    assert_eq!(parse_request(&req, "PLAIN"), Err(WsError::NoProtocol));
}

#[test]
fn request_headers_are_case_insensitive_and_lists_are_split() {
    let req = b"GET / HTTP/1.1\r\nhost: x\r\nUPGRADE: WebSocket\r\nconnection: keep-alive, Upgrade\r\n\
        sec-websocket-key: k\r\nSec-WebSocket-Protocol: chat\r\nSec-WebSocket-Protocol: superchat, ZWS2.0/CURVE\r\n\r\n";
    let (r, _) = parse_request(req, "CURVE").unwrap().unwrap();
    assert_eq!(r.protocol, "ZWS2.0/CURVE");
}

#[test]
fn bad_requests_are_refused() {
    for bad in [
        &b"POST / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n"[..],
        b"GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n",
        b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n",
        b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n",
        b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n",
        b"GET / HTTP/1.1\r\nUpgrade websocket\r\n\r\n",
        b"GET / HTTP/1.1\r\n\xff\xfe: x\r\n\r\n",
    ] {
        assert!(matches!(parse_request(bad, "NULL"), Err(WsError::BadUpgrade(_))), "{:?}", String::from_utf8_lossy(bad));
    }
    // Bare ZWS2.0 (no mechanism) does not serve a PLAIN server.
    let bare = b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Protocol: ZWS2.0\r\n\r\n";
    assert_eq!(parse_request(bare, "PLAIN"), Err(WsError::NoProtocol));
    // Endless headers are cut off.
    let mut long = b"GET / HTTP/1.1\r\n".to_vec();
    long.resize(MAX_UPGRADE_LEN + 1, b'a');
    assert!(matches!(parse_request(&long, "NULL"), Err(WsError::BadUpgrade(_))));
}

#[test]
fn response_is_checked() {
    let mut resp = Vec::new();
    encode_response(&accept_key(RFC_KEY), "ZWS2.0/NULL", &mut resp);
    assert_eq!(
        std::str::from_utf8(&resp).unwrap(),
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n"
    );
    let (r, len) = parse_response(&resp, RFC_KEY, "NULL").unwrap().unwrap();
    assert_eq!((r.protocol.as_str(), len), ("ZWS2.0/NULL", resp.len()));
    assert_eq!(parse_response(&resp[..20], RFC_KEY, "NULL"), Ok(None));
    assert!(matches!(parse_response(&resp, "other-key", "NULL"), Err(WsError::BadUpgrade(_))));
    assert_eq!(parse_response(&resp, RFC_KEY, "PLAIN"), Err(WsError::NoProtocol));
    assert!(matches!(parse_response(b"HTTP/1.1 404 Not Found\r\n\r\n", RFC_KEY, "NULL"), Err(WsError::BadUpgrade(_))));
    assert!(matches!(parse_response(b"SSH-2.0", RFC_KEY, "NULL"), Err(WsError::BadUpgrade(_))));
}

#[test]
fn implied_greeting_versions_and_roles() {
    let g = crate::Greeting::decode(&implied_peer_greeting("NULL", true)).unwrap();
    assert_eq!((g.major, g.minor, g.as_server, g.mechanism_name()), (3, 0, false, &b"NULL"[..]));
    let g = crate::Greeting::decode(&implied_peer_greeting("PLAIN", false)).unwrap();
    assert_eq!((g.minor, g.as_server), (0, true));
    let g = crate::Greeting::decode(&implied_peer_greeting("CURVE", true)).unwrap();
    assert_eq!((g.minor, g.as_server), (1, false));
}

/// The bytes of a server-to-client (unmasked) binary message.
fn unmasked(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![0x82];
    let n = body.len() + 1;
    if n <= 125 {
        v.push(n as u8);
    } else if n <= 0xFFFF {
        v.push(126);
        v.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        v.push(127);
        v.extend_from_slice(&(n as u64).to_be_bytes());
    }
    v.push(flags);
    v.extend_from_slice(body);
    v
}

fn decode_all(d: &mut WsDecoder, mut input: &[u8]) -> Result<(Vec<u8>, Vec<Control>), WsError> {
    let mut out = Vec::new();
    let mut controls = Vec::new();
    while !input.is_empty() {
        if let Some(c) = d.decode(&mut input, &mut out)? {
            controls.push(c);
        }
    }
    Ok((out, controls))
}

#[test]
fn decoder_turns_messages_into_zmtp_frames() {
    let mut input = unmasked(0x01, b"AB");
    input.extend(unmasked(0x00, b"C"));
    input.extend(unmasked(0x02, b"\x05READY"));
    input.extend(unmasked(0x00, &[7u8; 300]));
    let mut d = WsDecoder::new(false);
    let (out, controls) = decode_all(&mut d, &input).unwrap();
    assert!(controls.is_empty());
    let mut want = b"\x01\x02AB\x00\x01C\x04\x06\x05READY\x02".to_vec();
    want.extend_from_slice(&300u64.to_be_bytes());
    want.extend_from_slice(&[7u8; 300]);
    assert_eq!(out, want);
    // Byte by byte gives the same.
    let mut d = WsDecoder::new(false);
    let mut out = Vec::new();
    for b in &input {
        let mut one: &[u8] = std::slice::from_ref(b);
        assert_eq!(d.decode(&mut one, &mut out), Ok(None));
    }
    assert_eq!(out, want);
}

#[test]
fn decoder_unmasks_client_frames() {
    // RFC 6455 5.7's mask key, on a binary message: flags 00 + "Hello".
    let key = [0x37, 0xfa, 0x21, 0x3d];
    let payload = b"\x00Hello";
    let mut input = vec![0x82, 0x80 | payload.len() as u8];
    input.extend_from_slice(&key);
    input.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    let mut d = WsDecoder::new(true);
    assert_eq!(decode_all(&mut d, &input).unwrap().0, b"\x00\x05Hello");
    // The same frame unmasked is refused by a server, and masked by a client.
    assert!(decode_all(&mut WsDecoder::new(true), &unmasked(0, b"Hello")).is_err());
    assert!(decode_all(&mut WsDecoder::new(false), &input).is_err());
}

#[test]
fn decoder_reports_control_frames() {
    let mut input = vec![0x89, 0x02, b'h', b'i']; // ping "hi"
    input.extend([0x8A, 0x00]); // pong
    input.extend([0x88, 0x02, 0x03, 0xE8]); // close 1000
    let mut d = WsDecoder::new(false);
    let (out, controls) = decode_all(&mut d, &input).unwrap();
    assert_eq!(controls, vec![Control::Ping(b"hi".to_vec()), Control::Close(vec![0x03, 0xE8])]);
    assert_eq!(out, b"\x04\x05\x04PONG", "a pong reaches the engine as a PONG command");
}

#[test]
fn decoder_refuses_malformed_frames() {
    for bad in [
        &[0x02, 0x01, 0x00][..],                  // not FIN (fragment)
        &[0x80, 0x01, 0x00],                      // continuation
        &[0x81, 0x01, 0x00],                      // text
        &[0x83, 0x01, 0x00],                      // reserved opcode
        &[0xC2, 0x01, 0x00],                      // RSV1
        &[0x82, 0x00],                            // binary without flags octet
        &[0x89, 0x7E, 0x00, 0x7E],                // control frame > 125
        &[0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], // 64-bit length with the top bit
    ] {
        assert!(decode_all(&mut WsDecoder::new(false), bad).is_err(), "{bad:02x?}");
    }
}

#[test]
fn encoder_skips_the_greeting_and_frames_each_zmtp_frame() {
    let mut e = WsEncoder::new(false, [1; 32]);
    let mut zmtp = vec![0xAA; GREETING_LEN];
    zmtp.extend_from_slice(b"\x04\x06\x05READY\x01\x02AB\x00\x01C");
    zmtp.push(0x02);
    zmtp.extend_from_slice(&300u64.to_be_bytes());
    zmtp.extend_from_slice(&[7u8; 300]);
    let mut out = Vec::new();
    // Fed in awkward pieces.
    for chunk in zmtp.chunks(7) {
        e.encode(chunk, &mut out);
    }
    let mut want = unmasked(0x02, b"\x05READY");
    want.extend(unmasked(0x01, b"AB"));
    want.extend(unmasked(0x00, b"C"));
    want.extend(unmasked(0x00, &[7u8; 300]));
    assert_eq!(out, want);
}

#[test]
fn encoder_masks_and_round_trips_through_the_decoder() {
    let mut e = WsEncoder::new(true, [9; 32]);
    let mut zmtp = vec![0; GREETING_LEN];
    let frames = b"\x01\x03abc\x00\x00\x04\x05\x04PING\x00\x02hi".to_vec();
    zmtp.extend_from_slice(&frames);
    let mut out = Vec::new();
    e.encode(&zmtp, &mut out);
    assert!(out.iter().step_by(1).any(|b| *b & 0x80 != 0));
    let mut d = WsDecoder::new(true);
    let mut input = &out[..];
    let mut back = Vec::new();
    let mut controls = Vec::new();
    while !input.is_empty() {
        if let Some(c) = d.decode(&mut input, &mut back).unwrap() {
            controls.push(c);
        }
    }
    // The PING command went out as a WebSocket ping (empty, as libzmq's).
    assert_eq!(controls, vec![Control::Ping(vec![])]);
    assert_eq!(back, b"\x01\x03abc\x00\x00\x00\x02hi");
}

#[test]
fn answers_to_control_frames() {
    let mut e = WsEncoder::new(false, [0; 32]);
    let mut out = Vec::new();
    e.answer(&Control::Ping(b"xy".to_vec()), &mut out);
    e.answer(&Control::Close(vec![0x03, 0xE8, b'b', b'y', b'e']), &mut out);
    e.answer(&Control::Close(vec![]), &mut out);
    assert_eq!(out, [0x8A, 0x02, b'x', b'y', 0x88, 0x02, 0x03, 0xE8, 0x88, 0x00]);
}

#[test]
fn bare_zws2_is_served_for_null_only_and_after_the_mechanism_forms() {
    let req = |offer: &str| {
        format!(
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\n\
             Sec-WebSocket-Protocol: {offer}\r\n\r\n"
        )
    };
    let chosen = |offer: &str, mech: &str| parse_request(req(offer).as_bytes(), mech).map(|r| r.unwrap().0.protocol);
    assert_eq!(chosen("ZWS2.0", "NULL"), Ok("ZWS2.0".to_string()));
    assert_eq!(chosen("ZWS2.0/NULL,ZWS2.0", "NULL"), Ok("ZWS2.0/NULL".to_string()));
    assert_eq!(chosen("ZWS2.0,ZWS2.0/NULL", "NULL"), Ok("ZWS2.0".to_string()));
    assert_eq!(chosen("ZWS2.0", "PLAIN"), Err(WsError::NoProtocol));
    assert_eq!(bare_peer_type(crate::SocketType::Router), "REQ");
    assert_eq!(bare_peer_type(crate::SocketType::Push), "PULL");
    assert_eq!(bare_peer_type(crate::SocketType::Sub), "PUB");
}

#[test]
fn bare_routing_ids_become_ready_commands_and_back() {
    // In: the first message is the peer's routing id, then data as usual.
    let mut d = WsDecoder::new(false);
    d.expect_routing_id("DEALER");
    let mut input = unmasked(0x00, b"peer-7");
    input.extend(unmasked(0x00, b"data"));
    let (out, _) = decode_all(&mut d, &input).unwrap();
    let mut md = crate::Metadata::new();
    md.insert("Socket-Type", b"DEALER");
    md.insert("Identity", b"peer-7");
    let mut want = Vec::new();
    crate::Command::Ready(md).encode(&mut want);
    want.extend_from_slice(b"\x00\x04data");
    assert_eq!(out, want);
    // An over-long routing id is refused.
    let mut d = WsDecoder::new(false);
    d.expect_routing_id("DEALER");
    assert!(decode_all(&mut d, &unmasked(0x00, &[1; 256])).is_err());

    // Out: our READY leaves as our Identity (empty without one), then data.
    let mut e = WsEncoder::new(false, [0; 32]);
    e.send_routing_id_for_ready();
    let mut md = crate::Metadata::new();
    md.insert("Socket-Type", b"ROUTER");
    let mut zmtp = vec![0; GREETING_LEN];
    crate::Command::Ready(md).encode(&mut zmtp);
    zmtp.extend_from_slice(b"\x00\x02hi");
    let mut out = Vec::new();
    e.encode(&zmtp, &mut out);
    let mut want = unmasked(0x00, b"");
    want.extend(unmasked(0x00, b"hi"));
    assert_eq!(out, want);
}

#[test]
fn masking_is_the_same_whatever_the_split() {
    let body: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut zmtp = vec![0; GREETING_LEN];
    crate::encode_frame_header(&mut zmtp, false, false, body.len());
    zmtp.extend_from_slice(&body);
    let mut whole = Vec::new();
    WsEncoder::new(true, [5; 32]).encode(&zmtp, &mut whole);
    // Same seed, fed in odd pieces: identical bytes.
    let mut e = WsEncoder::new(true, [5; 32]);
    let mut pieces = Vec::new();
    for c in zmtp.chunks(13) {
        e.encode(c, &mut pieces);
    }
    assert_eq!(whole, pieces);
    // The key is in the header; every payload octet is XORed with it.
    let key = [whole[4], whole[5], whole[6], whole[7]];
    let payload: Vec<u8> = whole[8..].iter().enumerate().map(|(i, b)| b ^ key[i % 4]).collect();
    assert_eq!(payload[0], 0x00);
    assert_eq!(&payload[1..], &body[..]);
    // Decoded in odd pieces, the body comes back.
    let mut d = WsDecoder::new(true);
    let mut out = Vec::new();
    for c in whole.chunks(11) {
        let mut c = c;
        d.decode(&mut c, &mut out).unwrap();
    }
    assert_eq!(&out[9..], &body[..]);
}
