//! PLAIN (RFC 24), CURVE (RFC 25/26), GSSAPI (with a stand-in GSS-API
//! context) and the ZAP exchange (RFC 27) between two in-memory peers, plus
//! byte-level checks of what goes on the wire.

use bytes::{Bytes, BytesMut};
use oxmq_proto::{
    keypair_from_entropy, CurveCodec, CurveConfig, FrameDecoder, Handshake, HandshakeConfig, HandshakeError,
    MechanismConfig, Metadata, PeerInfo, PlainConfig, ProtocolError, SocketType, ZapReply, ZapRequest,
};
use zeroize::Zeroizing;

mod fake_gss;
use fake_gss::{fake_gssapi, FAKE_FAILURE};

type ZapFn = dyn FnMut(&ZapRequest) -> Option<ZapReply>;

struct Peer {
    hs: Handshake,
    inbox: BytesMut,
    result: Option<Result<PeerInfo, HandshakeError>>,
    zap_asked: Vec<ZapRequest>,
}

impl Peer {
    fn new(cfg: HandshakeConfig) -> Peer {
        Peer { hs: Handshake::new(cfg), inbox: BytesMut::new(), result: None, zap_asked: Vec::new() }
    }

    fn record(&mut self, r: Result<Option<PeerInfo>, HandshakeError>) {
        match r {
            Ok(Some(p)) => self.result = Some(Ok(p)),
            Ok(None) => {}
            Err(e) => self.result = Some(Err(e)),
        }
    }

    fn step(&mut self, incoming: &mut Vec<u8>, zap: &mut ZapFn) -> Vec<u8> {
        self.inbox.extend_from_slice(incoming);
        incoming.clear();
        if self.result.is_none() && !self.inbox.is_empty() {
            let r = self.hs.handle_input(&mut self.inbox);
            self.record(r);
        }
        if self.result.is_none() {
            if let Some(req) = self.hs.take_zap_request() {
                self.zap_asked.push(req.clone());
                let r = match zap(&req) {
                    Some(reply) => self.hs.handle_zap_reply(reply),
                    None => self.hs.handle_zap_unavailable(),
                };
                self.record(r);
            }
        }
        let mut out = Vec::new();
        self.hs.poll_transmit(&mut out);
        out
    }
}

fn run(a: HandshakeConfig, b: HandshakeConfig, zap: &mut ZapFn) -> (Peer, Peer) {
    let mut a = Peer::new(a);
    let mut b = Peer::new(b);
    let mut to_a = Vec::new();
    let mut to_b = Vec::new();
    let mut none = |_: &ZapRequest| -> Option<ZapReply> { None };
    for _ in 0..100 {
        let out_a = a.step(&mut to_a, &mut none);
        let out_b = b.step(&mut to_b, zap);
        let idle = out_a.is_empty() && out_b.is_empty();
        to_b.extend(out_a);
        to_a.extend(out_b);
        if idle && to_a.is_empty() && to_b.is_empty() {
            break;
        }
    }
    (a, b)
}

fn reply(status: &str, user: &str) -> ZapReply {
    let frames: Vec<(bool, Bytes)> = [&b""[..], b"1.0", b"1", status.as_bytes(), b"OK", user.as_bytes(), b""]
        .iter()
        .enumerate()
        .map(|(i, f)| (i < 6, Bytes::copy_from_slice(f)))
        .collect();
    ZapReply::parse(&frames).unwrap()
}

fn base(socket_type: SocketType, mechanism: MechanismConfig, as_server: bool, entropy: u8) -> HandshakeConfig {
    HandshakeConfig {
        as_server,
        mechanism,
        zap_domain: b"global".to_vec(),
        entropy: [entropy; 32],
        ..HandshakeConfig::null(socket_type, b"")
    }
}

fn plain_client(user: &str, pass: &str) -> HandshakeConfig {
    let creds = PlainConfig { username: user.as_bytes().to_vec(), password: Zeroizing::new(pass.as_bytes().to_vec()) };
    base(SocketType::Req, MechanismConfig::Plain(creds), false, 1)
}

fn plain_server() -> HandshakeConfig {
    base(SocketType::Rep, MechanismConfig::Plain(PlainConfig::default()), true, 2)
}

struct Keys {
    public: [u8; 32],
    secret: Zeroizing<[u8; 32]>,
}

fn keys(seed: u8) -> Keys {
    let (public, secret) = keypair_from_entropy([seed; 32]);
    Keys { public, secret }
}

fn curve_client(me: &Keys, server: [u8; 32]) -> HandshakeConfig {
    let c = CurveConfig { public_key: me.public, secret_key: me.secret.clone(), server_key: server };
    base(SocketType::Dealer, MechanismConfig::Curve(c), false, 3)
}

fn curve_server(me: &Keys) -> HandshakeConfig {
    let c = CurveConfig { public_key: me.public, secret_key: me.secret.clone(), server_key: [0; 32] };
    base(SocketType::Router, MechanismConfig::Curve(c), true, 4)
}

fn ok(p: &Peer) -> &PeerInfo {
    p.result.as_ref().expect("finished").as_ref().expect("succeeded")
}

fn err(p: &Peer) -> &HandshakeError {
    p.result.as_ref().expect("finished").as_ref().expect_err("failed")
}

/// Splits bytes into frames, for wire-level assertions.
fn frames(bytes: &[u8]) -> Vec<Bytes> {
    let mut buf = BytesMut::from(bytes);
    let mut dec = FrameDecoder::new(None);
    let mut out = Vec::new();
    while let Ok(Some(f)) = dec.decode(&mut buf) {
        out.push(f.body);
    }
    out
}

/// Our greeting goes out in libzmq's steps: feed the peer's signature and
/// major version (octets 0-10 of any 3.x greeting) to get all 64 octets.
const PEER_SIGNATURE_AND_MAJOR: [u8; 11] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3];

fn whole_greeting(hs: &mut Handshake) -> Vec<u8> {
    let mut buf = BytesMut::from(&PEER_SIGNATURE_AND_MAJOR[..]);
    assert_eq!(hs.handle_input(&mut buf), Ok(None));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    assert_eq!(out.len(), 64);
    out
}

#[test]
fn plain_client_hello_is_rfc24_layout() {
    let mut hs = Handshake::new(plain_client("admin", "secret"));
    let out = whole_greeting(&mut hs);
    assert_eq!(&out[12..17], b"PLAIN");
    assert_eq!(out[32], 0, "client greeting says as-server 0");
    let mut out = out;
    out[32] = 1; // the peer's greeting: a PLAIN server
    let mut buf = BytesMut::from(&out[11..64]);
    hs.handle_input(&mut buf).unwrap();
    out.clear();
    hs.poll_transmit(&mut out);
    assert_eq!(out, b"\x04\x13\x05HELLO\x05admin\x06secret");
}

#[test]
fn plain_server_greeting_says_as_server() {
    let mut hs = Handshake::new(plain_server());
    let out = whole_greeting(&mut hs);
    assert_eq!(out[32], 1);
}

#[test]
fn plain_with_zap_200_completes_and_sets_user_id() {
    let mut zap = |req: &ZapRequest| {
        assert_eq!(req.mechanism, "PLAIN");
        assert_eq!(req.domain, b"global");
        assert_eq!(req.credentials, vec![b"admin".to_vec(), b"secret".to_vec()]);
        let frames = req.frames(b"127.0.0.1");
        assert_eq!(frames.len(), 9);
        assert_eq!(&frames[..5], &[&b""[..], b"1.0", b"1", b"global", b"127.0.0.1"]);
        assert_eq!(frames[6], &b"PLAIN"[..]);
        Some(reply("200", "alice"))
    };
    let (c, mut s) = run(plain_client("admin", "secret"), plain_server(), &mut zap);
    assert_eq!(ok(&c).socket_type, SocketType::Rep);
    let sp = ok(&s);
    assert_eq!(sp.socket_type, SocketType::Req);
    assert_eq!(sp.user_id.as_deref(), Some(&b"alice"[..]));
    assert_eq!(s.zap_asked.len(), 1);
    assert!(s.hs.take_codec().is_none(), "PLAIN boxes nothing");
}

#[test]
fn plain_zap_400_sends_error_and_client_sees_status() {
    let mut zap = |_: &ZapRequest| Some(reply("400", ""));
    let (c, s) = run(plain_client("admin", "wrong"), plain_server(), &mut zap);
    assert_eq!(err(&s), &HandshakeError::AuthFailed { status: 400 });
    assert_eq!(err(&c), &HandshakeError::PeerError { reason: b"400".to_vec() });
    assert_eq!(err(&c).zap_status_code(), Some(400));
}

#[test]
fn plain_zap_300_closes_without_error() {
    let mut zap = |_: &ZapRequest| Some(reply("300", ""));
    let (c, s) = run(plain_client("a", "b"), plain_server(), &mut zap);
    assert_eq!(err(&s), &HandshakeError::AuthFailed { status: 300 });
    assert!(c.result.is_none(), "the client heard nothing: libzmq sends no ERROR for 300");
}

#[test]
fn plain_server_without_zap_handler_refuses() {
    let mut zap = |_: &ZapRequest| None;
    let (_, s) = run(plain_client("a", "b"), plain_server(), &mut zap);
    assert_eq!(err(&s), &HandshakeError::ZapUnavailable);
}

#[test]
fn plain_hello_with_trailing_bytes_is_malformed() {
    let mut hs = Handshake::new(plain_server());
    let mut g = vec![0u8; 64];
    g[..12].copy_from_slice(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1]);
    g[12..17].copy_from_slice(b"PLAIN");
    g.extend_from_slice(b"\x04\x0c\x05HELLO\x01a\x01bXX");
    let mut buf = BytesMut::from(&g[..]);
    let e = hs.handle_input(&mut buf).unwrap_err();
    assert_eq!(e, HandshakeError::Protocol(ProtocolError::MalformedCommand { name: b"HELLO".to_vec() }));
}

#[test]
fn curve_handshake_sizes_follow_rfc26() {
    let s = keys(9);
    let c = keys(8);
    let mut client = Handshake::new(curve_client(&c, s.public));
    let mut server = Handshake::new(curve_server(&s));
    let to_s = whole_greeting(&mut client);
    let to_c = whole_greeting(&mut server);
    assert_eq!(to_c[32], 1, "CURVE_SERVER greeting");
    // Client: greeting then HELLO.
    let mut buf = BytesMut::from(&to_c[11..]);
    client.handle_input(&mut buf).unwrap();
    let mut out = Vec::new();
    client.poll_transmit(&mut out);
    let hello = frames(&out);
    assert_eq!(hello.len(), 1);
    assert_eq!(hello[0].len(), 200);
    assert_eq!(&hello[0][..8], b"\x05HELLO\x01\x00");
    assert!(hello[0][8..80].iter().all(|&b| b == 0), "72 octets of anti-amplification padding");
    assert_eq!(&hello[0][112..120], &1u64.to_be_bytes(), "first short nonce is 1, big-endian");
    // Server: WELCOME of 168 octets.
    let mut sbuf = BytesMut::from(&to_s[11..]);
    sbuf.extend_from_slice(&out);
    server.handle_input(&mut sbuf).unwrap();
    let mut out = Vec::new();
    server.poll_transmit(&mut out);
    let welcome = frames(&out);
    assert_eq!(welcome[0].len(), 168);
    assert_eq!(&welcome[0][..8], b"\x07WELCOME");
    // Client: INITIATE of 257 + metadata octets, short nonce 2.
    let mut cbuf = BytesMut::from(&out[..]);
    client.handle_input(&mut cbuf).unwrap();
    let mut out = Vec::new();
    client.poll_transmit(&mut out);
    let initiate = frames(&out);
    assert!(initiate[0].len() > 257);
    assert_eq!(&initiate[0][..9], b"\x08INITIATE");
    assert_eq!(&initiate[0][105..113], &2u64.to_be_bytes());
}

#[test]
fn curve_handshake_asks_zap_with_client_key_then_boxes_traffic() {
    let s = keys(1);
    let c = keys(2);
    let client_public = c.public;
    let mut zap = move |req: &ZapRequest| {
        assert_eq!(req.mechanism, "CURVE");
        assert_eq!(req.credentials, vec![client_public.to_vec()]);
        Some(reply("200", "curve-user"))
    };
    let (mut cp, mut sp) = run(curve_client(&c, s.public), curve_server(&s), &mut zap);
    assert_eq!(ok(&cp).socket_type, SocketType::Router);
    assert_eq!(ok(&sp).socket_type, SocketType::Dealer);
    assert_eq!(ok(&sp).user_id.as_deref(), Some(&b"curve-user"[..]));
    let mut cc = cp.hs.take_codec().expect("client codec");
    let mut sc = sp.hs.take_codec().expect("server codec");

    // Client to server: a two-part message and a command, flags preserved.
    let mut wire = Vec::new();
    cc.encode(true, false, &[b"he", b"llo"], &mut wire);
    cc.encode(false, true, &[b"\x04PING\x00\x00"], &mut wire);
    let got = frames(&wire);
    assert_eq!(got[0].len(), CurveCodec::boxed_len(5));
    assert_eq!(&got[0][..8], b"\x07MESSAGE");
    assert_eq!(&got[0][8..16], &3u64.to_be_bytes(), "client MESSAGE nonces go on after HELLO=1, INITIATE=2");
    assert_eq!(wire[0], 0, "the outer frame carries no flags");
    let m1 = sc.decode(got[0].clone()).unwrap();
    assert!(m1.more && !m1.command);
    assert_eq!(&m1.body[..], b"hello");
    let m2 = sc.decode(got[1].clone()).unwrap();
    assert!(!m2.more && m2.command);
    // Replaying a box is refused.
    assert_eq!(sc.decode(got[1].clone()).unwrap_err(), ProtocolError::InvalidSequence);

    // Server to client; a flipped bit fails authentication.
    let mut wire = Vec::new();
    sc.encode(false, false, &[&[7u8; 100_000]], &mut wire);
    let mut got = frames(&wire);
    let mut tampered = got[0].to_vec();
    tampered[50] ^= 1;
    assert_eq!(cc.decode(Bytes::from(tampered)).unwrap_err(), ProtocolError::Cryptographic { what: "MESSAGE" });
    let big = cc.decode(got.remove(0)).unwrap();
    assert_eq!(big.body.len(), 100_000);
    assert!(big.body.iter().all(|&b| b == 7));
}

#[test]
fn curve_wrong_server_key_fails_hello() {
    let s = keys(1);
    let c = keys(2);
    let wrong = keys(3).public;
    let mut zap = |_: &ZapRequest| Some(reply("200", ""));
    let (_, sp) = run(curve_client(&c, wrong), curve_server(&s), &mut zap);
    assert_eq!(err(&sp), &HandshakeError::Protocol(ProtocolError::Cryptographic { what: "HELLO" }));
}

/// A low-order server key (all zeros here) makes no box; the server refuses
/// the client's HELLO as one that does not open, and nothing panics.
#[test]
fn curve_low_order_server_key_fails_hello() {
    let s = keys(1);
    let c = keys(2);
    let mut zap = |_: &ZapRequest| Some(reply("200", ""));
    let (_, sp) = run(curve_client(&c, [0; 32]), curve_server(&s), &mut zap);
    assert_eq!(err(&sp), &HandshakeError::Protocol(ProtocolError::Cryptographic { what: "HELLO" }));
}

#[test]
fn curve_without_zap_handler_admits_unless_enforced() {
    let s = keys(1);
    let c = keys(2);
    let mut none = |_: &ZapRequest| None;
    let (cp, sp) = run(curve_client(&c, s.public), curve_server(&s), &mut none);
    ok(&cp);
    assert_eq!(ok(&sp).user_id, None);

    let mut enforced = curve_server(&s);
    enforced.zap_enforce_domain = true;
    let (_, sp) = run(curve_client(&c, s.public), enforced, &mut none);
    assert_eq!(err(&sp), &HandshakeError::ZapUnavailable);
}

#[test]
fn curve_zap_500_sends_error() {
    let s = keys(1);
    let c = keys(2);
    let mut zap = |_: &ZapRequest| Some(reply("500", ""));
    let (cp, sp) = run(curve_client(&c, s.public), curve_server(&s), &mut zap);
    assert_eq!(err(&sp), &HandshakeError::AuthFailed { status: 500 });
    assert_eq!(err(&cp).zap_status_code(), Some(500));
}

#[test]
fn curve_truncated_and_garbage_commands_fail_cleanly() {
    let s = keys(1);
    for body in [&b"\x05HELLO"[..], b"\x05HELLO\x02\x00", b"\x08INITIATE", b"\x03FOO", b""] {
        let mut hs = Handshake::new(curve_server(&s));
        let mut g = vec![0u8; 64];
        g[..12].copy_from_slice(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1]);
        g[12..17].copy_from_slice(b"CURVE");
        oxmq_proto::encode_frame(&mut g, false, true, body);
        let mut buf = BytesMut::from(&g[..]);
        assert!(hs.handle_input(&mut buf).is_err(), "{body:?}");
    }
}

#[test]
fn null_with_zap_domain_asks_before_ready() {
    let mut a = HandshakeConfig::null(SocketType::Push, b"");
    a.zap_domain = b"dom".to_vec();
    let b = HandshakeConfig::null(SocketType::Pull, b"");
    let mut zap = |req: &ZapRequest| {
        assert_eq!(req.mechanism, "NULL");
        assert!(req.credentials.is_empty());
        Some(reply("200", "u"))
    };
    let (pb, pa) = run(b, a, &mut zap);
    ok(&pb);
    assert_eq!(ok(&pa).user_id.as_deref(), Some(&b"u"[..]));
    assert_eq!(pa.zap_asked.len(), 1);
}

#[test]
fn zap_reply_validation_uses_libzmq_codes() {
    use oxmq_proto::error::zmq_codes::*;
    let good: Vec<(bool, Bytes)> = [&b""[..], b"1.0", b"1", b"200", b"OK", b"", b""]
        .iter()
        .enumerate()
        .map(|(i, f)| (i < 6, Bytes::copy_from_slice(f)))
        .collect();
    assert!(ZapReply::parse(&good).is_ok());
    let with = |i: usize, v: &'static [u8]| {
        let mut f = good.clone();
        f[i].1 = Bytes::from_static(v);
        ZapReply::parse(&f).unwrap_err()
    };
    assert_eq!(with(1, b"2.0"), HandshakeError::BadZapReply { code: ZAP_BAD_VERSION });
    assert_eq!(with(2, b"2"), HandshakeError::BadZapReply { code: ZAP_BAD_REQUEST_ID });
    assert_eq!(with(3, b"201"), HandshakeError::BadZapReply { code: ZAP_INVALID_STATUS_CODE });
    assert_eq!(with(6, b"\x05"), HandshakeError::BadZapReply { code: ZAP_INVALID_METADATA });
    assert_eq!(ZapReply::parse(&good[..6]).unwrap_err(), HandshakeError::BadZapReply { code: ZAP_MALFORMED_REPLY });
    let mut meta = Metadata::new();
    meta.insert("Hello", b"World");
    let mut enc = Vec::new();
    meta.encode(&mut enc);
    let mut f = good.clone();
    f[6].1 = Bytes::from(enc);
    assert_eq!(ZapReply::parse(&f).unwrap().metadata.get("Hello"), Some(&b"World"[..]));
}

#[test]
fn secrets_stay_out_of_debug_output() {
    let cfg = plain_client("admin", "hunter2");
    let shown = format!("{cfg:?}");
    assert!(shown.contains("admin") && !shown.contains("hunter2"), "{shown}");
    let req = ZapRequest {
        domain: vec![],
        routing_id: vec![],
        mechanism: "PLAIN",
        credentials: vec![b"admin".to_vec(), b"hunter2".to_vec()],
    };
    assert!(!format!("{req:?}").contains("hunter2"));
    let k = keys(5);
    let c = curve_client(&k, [0; 32]);
    let shown = format!("{c:?}");
    assert!(!shown.contains(&format!("{:?}", &k.secret[..4])), "{shown}");
}

/// The ERROR a libzmq 4.3.5 PLAIN server sends after a ZAP 400, captured
/// from pyzmq's bundled libzmq: its name octets read `^RROR` (see
/// `mechanism::LIBZMQ_ERROR`), and its clients expect just that.
#[test]
fn plain_client_understands_libzmq_error_bytes() {
    let mut hs = Handshake::new(plain_client("admin", "wrong"));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    let mut wire = vec![0u8; 64];
    wire[..12].copy_from_slice(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1]);
    wire[12..17].copy_from_slice(b"PLAIN");
    wire[32] = 1;
    wire.extend_from_slice(b"\x04\x09\x5eRROR\x03400");
    let mut buf = BytesMut::from(&wire[..]);
    let e = hs.handle_input(&mut buf).unwrap_err();
    assert_eq!(e, HandshakeError::PeerError { reason: b"400".to_vec() });
    assert_eq!(e.zap_status_code(), Some(400));
}

fn gss(socket_type: SocketType, as_server: bool, plaintext: bool, fail_step: bool) -> HandshakeConfig {
    base(socket_type, MechanismConfig::Gssapi(fake_gssapi(plaintext, fail_step, None)), as_server, 9)
}

/// `\x07MESSAGE len W(flags + body ^ 0x5A)`, as the fake wraps it.
fn fake_message(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut out = b"\x07MESSAGE".to_vec();
    out.extend_from_slice(&(body.len() as u32 + 2).to_be_bytes());
    out.push(b'W');
    out.extend(std::iter::once(flags).chain(body.iter().copied()).map(|b| b ^ 0x5A));
    out
}

#[test]
fn gssapi_handshake_is_libzmq_layout_and_wraps_ready_and_traffic() {
    let mut zap = |_: &ZapRequest| Some(reply("200", "kerberos-user"));
    let (cp, sp) =
        run(gss(SocketType::Dealer, false, false, false), gss(SocketType::Router, true, false, false), &mut zap);
    assert_eq!(ok(&cp).socket_type, SocketType::Router);
    assert_eq!(ok(&sp).socket_type, SocketType::Dealer);
    assert_eq!(ok(&sp).user_id.as_deref(), Some(&b"kerberos-user"[..]));
    let asked: Vec<_> = sp.zap_asked.iter().map(|r| (r.mechanism, r.credentials.clone())).collect();
    assert_eq!(asked, vec![("GSSAPI", vec![b"client@OXMQ.TEST".to_vec()])]);

    // The same handshake command by command.
    let mut c = Handshake::new(gss(SocketType::Dealer, false, false, false));
    let mut s = Handshake::new(gss(SocketType::Router, true, false, false));
    let from_c = whole_greeting(&mut c);
    let from_s = whole_greeting(&mut s);
    assert_eq!(&from_c[12..18], b"GSSAPI");
    assert_eq!(from_c[32], 0, "client's as-server octet");
    assert_eq!(from_s[32], 1, "server's as-server octet");
    let feed = |hs: &mut Handshake, bytes: &[u8]| {
        let mut buf = BytesMut::from(bytes);
        let r = hs.handle_input(&mut buf);
        let mut out = Vec::new();
        hs.poll_transmit(&mut out);
        (r, out)
    };
    // Each side has the peer's first 11 octets already (whole_greeting).
    let (r, c_out) = feed(&mut c, &from_s[11..]);
    assert_eq!(r, Ok(None));
    // INITIATE as a command frame: flags 0x04, size, name, 4-octet length, token.
    assert_eq!(c_out, b"\x04\x13\x08INITIATE\x00\x00\x00\x06AP-REQ");
    let mut to_s = from_c[11..].to_vec();
    to_s.extend_from_slice(&c_out);
    let (r, s_out) = feed(&mut s, &to_s);
    assert_eq!(r, Ok(None));
    assert_eq!(s_out, b"\x04\x13\x08INITIATE\x00\x00\x00\x06AP-REP");
    let mut buf = BytesMut::from(&s_out[..]);
    assert_eq!(c.handle_input(&mut buf), Ok(None));
    let mut c_out = Vec::new();
    c.poll_transmit(&mut c_out);
    assert_eq!(c_out, b"\x04\x00", "no token left: an empty command frame, as libzmq sends");
    let mut buf = BytesMut::from(&c_out[..]);
    assert_eq!(s.handle_input(&mut buf), Ok(None));
    let req = s.take_zap_request().expect("ZAP asked once the context is up");
    assert_eq!(req.credentials, vec![b"client@OXMQ.TEST".to_vec()]);
    assert_eq!(s.handle_zap_unavailable(), Ok(None), "no handler: admitted, as libzmq");
    let mut s_out = Vec::new();
    s.poll_transmit(&mut s_out);
    let ready = frames(&s_out);
    assert_eq!(s_out[0], 0x04, "the wrapped READY is a command frame");
    assert_eq!(
        &ready[0][..],
        fake_message(0, b"\x05READY\x0bSocket-Type\x00\x00\x00\x06ROUTER\x08Identity\x00\x00\x00\x00")
    );
    let mut buf = BytesMut::from(&s_out[..]);
    let peer = c.handle_input(&mut buf).unwrap().expect("client done after READY");
    assert_eq!(peer.socket_type, SocketType::Router);
    let mut c_out = Vec::new();
    c.poll_transmit(&mut c_out);
    assert_eq!(
        &frames(&c_out)[0][..],
        fake_message(0, b"\x05READY\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x00")
    );
    let mut buf = BytesMut::from(&c_out[..]);
    assert!(s.handle_input(&mut buf).unwrap().is_some());

    // Traffic: one flag-less frame per part, flags inside the wrap.
    let mut cc = c.take_codec().expect("client codec");
    let mut sc = s.take_codec().expect("server codec");
    let mut wire = Vec::new();
    cc.encode(true, false, &[b"he", b"llo"], &mut wire);
    cc.encode(false, true, &[b"\x04PING\x00\x00"], &mut wire);
    assert_eq!(wire[0], 0, "no MORE or COMMAND on the outer frame");
    let got = frames(&wire);
    assert_eq!(&got[0][..], fake_message(1, b"hello"));
    let m = sc.decode(got[0].clone()).unwrap();
    assert!(m.more && !m.command);
    assert_eq!(&m.body[..], b"hello");
    let m = sc.decode(got[1].clone()).unwrap();
    assert!(!m.more && m.command);
    // A token the context refuses, and a length that lies.
    let mut bad = got[0].to_vec();
    bad[12] = b'X';
    assert_eq!(sc.decode(Bytes::from(bad)).unwrap_err(), ProtocolError::Cryptographic { what: "MESSAGE" });
    let mut short = got[0].to_vec();
    short.pop();
    assert_eq!(
        sc.decode(Bytes::from(short)).unwrap_err(),
        ProtocolError::MalformedCommand { name: b"MESSAGE".to_vec() }
    );
}

#[test]
fn gssapi_plaintext_sends_ready_in_clear_and_leaves_traffic_alone() {
    let mut zap = |_: &ZapRequest| None;
    let (mut cp, mut sp) =
        run(gss(SocketType::Req, false, true, false), gss(SocketType::Rep, true, true, false), &mut zap);
    assert_eq!(ok(&cp).socket_type, SocketType::Rep);
    assert_eq!(ok(&sp).socket_type, SocketType::Req);
    assert!(cp.hs.take_codec().is_none() && sp.hs.take_codec().is_none());
}

#[test]
fn gssapi_zap_refusal_closes_without_error_command() {
    let mut zap = |_: &ZapRequest| Some(reply("400", ""));
    let (cp, sp) =
        run(gss(SocketType::Dealer, false, false, false), gss(SocketType::Router, true, false, false), &mut zap);
    assert_eq!(err(&sp), &HandshakeError::AuthFailed { status: 400 });
    assert!(cp.result.is_none(), "the client hears nothing; its side ends when the connection closes");
}

#[test]
fn gssapi_failures_stall_as_libzmq_and_carry_no_token() {
    // Our own first step fails (no credentials): nothing is sent, the
    // handshake waits for its timer and then reports the failure.
    let mut zap = |_: &ZapRequest| None;
    let (cp, sp) =
        run(gss(SocketType::Dealer, false, false, true), gss(SocketType::Router, true, false, false), &mut zap);
    assert!(cp.result.is_none() && sp.result.is_none(), "both wait, as with libzmq");
    let e = cp.hs.local_failure().expect("the client knows why");
    assert_eq!(e, HandshakeError::Gssapi { major: FAKE_FAILURE.major, minor: FAKE_FAILURE.minor });
    assert!(!e.to_string().contains("AP-"));
    assert_eq!(sp.hs.local_failure(), None);

    // The acceptor refuses the token: the server stalls; a command arriving
    // meanwhile is unexpected (libzmq: ZMTP_UNEXPECTED_COMMAND).
    let (cp, mut sp) =
        run(gss(SocketType::Dealer, false, false, false), gss(SocketType::Router, true, false, true), &mut zap);
    assert!(cp.result.is_none() && sp.result.is_none());
    assert!(matches!(sp.hs.local_failure(), Some(HandshakeError::Gssapi { .. })));
    let mut late = Vec::new();
    oxmq_proto::encode_frame(&mut late, false, true, b"\x08INITIATE\x00\x00\x00\x00");
    let mut buf = BytesMut::from(&late[..]);
    assert_eq!(
        sp.hs.handle_input(&mut buf),
        Err(HandshakeError::Protocol(ProtocolError::UnexpectedCommand { name: b"INITIATE".to_vec() }))
    );

    // INITIATE whose length says more than it holds, and another command.
    for (body, want) in [
        (&b"\x08INITIATE\x00\x00\x00\x09AP-REQ"[..], ProtocolError::MalformedCommand { name: b"INITIATE".to_vec() }),
        (&b"\x08INITIATE\x00\x00"[..], ProtocolError::MalformedCommand { name: b"INITIATE".to_vec() }),
        (&b"\x05HELLO"[..], ProtocolError::UnexpectedCommand { name: b"HELLO".to_vec() }),
    ] {
        let mut s = Handshake::new(gss(SocketType::Router, true, false, false));
        let mut input = whole_greeting(&mut Handshake::new(gss(SocketType::Dealer, false, false, false)));
        input.drain(..PEER_SIGNATURE_AND_MAJOR.len());
        let mut buf = BytesMut::from(&PEER_SIGNATURE_AND_MAJOR[..]);
        let _ = s.handle_input(&mut buf);
        let mut all = input;
        oxmq_proto::encode_frame(&mut all, false, true, body);
        let mut buf = BytesMut::from(&all[..]);
        assert_eq!(s.handle_input(&mut buf), Err(HandshakeError::Protocol(want)));
    }
}
