//! Commands and READY metadata, with the RFC 23/37 worked examples.

use bytes::{Bytes, BytesMut};
use oxmq_proto::{Command, FrameDecoder, Metadata, ProtocolError, UsageError};

fn body_of(cmd: &Command) -> Vec<u8> {
    let mut out = Vec::new();
    cmd.encode_body(&mut out);
    out
}

fn round_trip(cmd: Command) {
    let mut wire = Vec::new();
    cmd.encode(&mut wire);
    let mut buf = BytesMut::from(&wire[..]);
    let frame = FrameDecoder::new(None).decode(&mut buf).unwrap().unwrap();
    assert!(frame.command && !frame.more);
    assert!(buf.is_empty());
    assert_eq!(Command::parse(&frame.body).unwrap(), cmd);
}

/// RFC 23 worked example: a DEALER READY with an empty Identity.
const DEALER_READY_BODY: &[u8] = b"\x05READY\
\x0BSocket-Type\x00\x00\x00\x06DEALER\
\x08Identity\x00\x00\x00\x00";

#[test]
fn ready_from_dealer_with_empty_identity_has_body_size_41() {
    let mut m = Metadata::new();
    m.insert("Socket-Type", b"DEALER");
    m.insert("Identity", b"");
    let body = body_of(&Command::Ready(m.clone()));
    assert_eq!(body, DEALER_READY_BODY);
    assert_eq!(body.len(), 41);
    let mut wire = Vec::new();
    Command::Ready(m.clone()).encode(&mut wire);
    assert_eq!(&wire[..2], &[0x04, 41]);
    assert_eq!(Command::parse(&Bytes::from_static(DEALER_READY_BODY)).unwrap(), Command::Ready(m));
}

#[test]
fn ready_with_socket_type_only_has_body_size_28() {
    let mut m = Metadata::new();
    m.insert("Socket-Type", b"ROUTER");
    let body = body_of(&Command::Ready(m));
    assert_eq!(body, b"\x05READY\x0BSocket-Type\x00\x00\x00\x06ROUTER");
    assert_eq!(body.len(), 28);
}

#[test]
fn can_round_trip_every_command() {
    let mut m = Metadata::new();
    m.insert("Socket-Type", b"REQ");
    m.insert("X-Custom", &[0, 1, 2, 255]);
    round_trip(Command::Ready(m));
    round_trip(Command::Ready(Metadata::new()));
    round_trip(Command::Error { reason: b"Invalid credentials".to_vec() });
    round_trip(Command::Error { reason: Vec::new() });
    round_trip(Command::Subscribe(Bytes::from_static(b"topic")));
    round_trip(Command::Subscribe(Bytes::new()));
    round_trip(Command::Cancel(Bytes::from_static(b"topic")));
    round_trip(Command::Ping { ttl_deciseconds: 300, context: Bytes::from_static(b"ctx") });
    round_trip(Command::Ping { ttl_deciseconds: 0, context: Bytes::new() });
    round_trip(Command::Pong { context: Bytes::from_static(b"ctx") });
    round_trip(Command::Unknown { name: b"JOIN".to_vec(), data: Bytes::from_static(b"grp") });
    round_trip(Command::Subscribe(Bytes::from(vec![b'x'; 1000])));
}

#[test]
fn subscribe_and_cancel_wire_bytes() {
    assert_eq!(body_of(&Command::Subscribe(Bytes::from_static(b"A"))), b"\x09SUBSCRIBEA");
    assert_eq!(body_of(&Command::Cancel(Bytes::from_static(b"A"))), b"\x06CANCELA");
}

#[test]
fn ping_and_pong_wire_bytes() {
    let ping = Command::Ping { ttl_deciseconds: 0x0102, context: Bytes::from_static(b"c") };
    assert_eq!(body_of(&ping), b"\x04PING\x01\x02c");
    let pong = Command::Pong { context: Bytes::from_static(b"c") };
    assert_eq!(body_of(&pong), b"\x04PONGc");
}

#[test]
fn error_wire_bytes() {
    assert_eq!(body_of(&Command::Error { reason: b"400".to_vec() }), b"\x05ERROR\x03400");
}

#[test]
fn error_reason_is_truncated_to_255() {
    let body = body_of(&Command::Error { reason: vec![b'r'; 300] });
    assert_eq!(body[6], 255);
    assert_eq!(body.len(), 6 + 1 + 255);
}

#[test]
fn pong_for_echoes_and_truncates_context_to_16() {
    let ctx = Bytes::from_static(b"0123456789abcdefXYZ");
    assert_eq!(Command::pong_for(&ctx), Command::Pong { context: ctx.slice(..16) });
    let short = Bytes::from_static(b"abc");
    assert_eq!(Command::pong_for(&short), Command::Pong { context: short.clone() });
}

#[test]
fn ping_with_long_context_parses() {
    let body = Bytes::from(b"\x04PING\x00\x0A0123456789abcdefXYZ".to_vec());
    match Command::parse(&body).unwrap() {
        Command::Ping { ttl_deciseconds, context } => {
            assert_eq!(ttl_deciseconds, 10);
            assert_eq!(context.len(), 19);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_commands_parse_as_unknown() {
    let cmd = Command::parse(&Bytes::from_static(b"\x04JOINgroup")).unwrap();
    assert_eq!(cmd, Command::Unknown { name: b"JOIN".to_vec(), data: Bytes::from_static(b"group") });
    // Names are case-sensitive, as in libzmq.
    let cmd = Command::parse(&Bytes::from_static(b"\x05ready")).unwrap();
    assert!(matches!(cmd, Command::Unknown { .. }));
}

#[test]
fn rejects_empty_command_body() {
    assert_eq!(Command::parse(&Bytes::new()), Err(ProtocolError::MalformedCommand { name: Vec::new() }));
}

#[test]
fn rejects_truncated_command_name() {
    assert!(matches!(Command::parse(&Bytes::from_static(b"\x05REA")), Err(ProtocolError::MalformedCommand { .. })));
}

#[test]
fn rejects_truncated_ping_ttl() {
    assert_eq!(
        Command::parse(&Bytes::from_static(b"\x04PING\x01")),
        Err(ProtocolError::MalformedCommand { name: b"PING".to_vec() })
    );
}

#[test]
fn rejects_truncated_error_reason() {
    let err = Command::parse(&Bytes::from_static(b"\x05ERROR\x05abc")).unwrap_err();
    assert_eq!(err, ProtocolError::MalformedCommand { name: b"ERROR".to_vec() });
    assert_eq!(err.zmq_protocol_error_code(), 0x1000_0015);
    assert!(Command::parse(&Bytes::from_static(b"\x05ERROR")).is_err());
}

#[test]
fn rejects_truncated_metadata_value_length() {
    let err = Command::parse(&Bytes::from_static(b"\x05READY\x0BSocket-Type\x00\x00")).unwrap_err();
    assert_eq!(err, ProtocolError::MalformedMetadata { offset: 12 });
    assert_eq!(err.zmq_protocol_error_code(), 0x1000_0018);
}

#[test]
fn rejects_truncated_metadata_value() {
    assert_eq!(Metadata::decode(b"\x03abc\x00\x00\x00\x05xyz"), Err(ProtocolError::MalformedMetadata { offset: 4 }));
}

#[test]
fn rejects_truncated_metadata_name() {
    assert_eq!(Metadata::decode(b"\x0BSocket"), Err(ProtocolError::MalformedMetadata { offset: 0 }));
}

#[test]
fn rejects_trailing_metadata_octet() {
    // libzmq refuses a lone octet after the last property.
    let mut buf = b"\x01a\x00\x00\x00\x00".to_vec();
    buf.push(0x01);
    assert_eq!(Metadata::decode(&buf), Err(ProtocolError::MalformedMetadata { offset: 6 }));
}

#[test]
fn rejects_huge_metadata_value_length() {
    assert!(Metadata::decode(b"\x01a\xFF\xFF\xFF\xFFx").is_err());
}

#[test]
fn metadata_keeps_order_and_get_ignores_case() {
    let m = Metadata::decode(b"\x01b\x00\x00\x00\x01B\x01a\x00\x00\x00\x01A").unwrap();
    let names: Vec<&str> = m.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["b", "a"]);
    assert_eq!(m.get("B"), Some(&b"B"[..]));
    assert_eq!(m.get_exact("B"), None);
    assert_eq!(m.len(), 2);
    let mut re = Vec::new();
    m.encode(&mut re);
    assert_eq!(Metadata::decode(&re).unwrap(), m);
}

#[test]
fn metadata_try_insert_rejects_what_the_wire_cannot_carry() {
    let mut m = Metadata::new();
    assert_eq!(m.try_insert("", b"v"), Err(UsageError::BadPropertyNameLength { len: 0 }));
    let long = "n".repeat(256);
    assert_eq!(m.try_insert(&long, b"v"), Err(UsageError::BadPropertyNameLength { len: 256 }));
    assert!(m.try_insert(&"n".repeat(255), b"v").is_ok());
    assert!(m.is_empty() || m.len() == 1);
}

#[test]
fn empty_metadata_decodes() {
    assert!(Metadata::decode(b"").unwrap().is_empty());
}
