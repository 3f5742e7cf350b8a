//! Interop peer: drives oxmq sockets from a line protocol on stdin/stdout, so
//! that the Python interop suite (tests/interop/matrix) can run oxmq against real
//! libzmq step by step.
//!
//! One command per line, fields separated by single spaces (a field may be
//! empty); one reply line per command: `ok`, `ok <payload>` or
//! `err <errno> <message>`. Frames are hex-encoded and a multipart message is
//! its frames joined with ',' (an empty frame is the empty string).
//!
//! ```text
//! socket <id> <TYPE>             PAIR PUB SUB REQ REP DEALER ROUTER PULL PUSH XPUB XSUB
//! setopt <id> <name> <value>     ints in decimal, byte options in hex
//! getopt <id> <name>             -> ok <decimal> | ok <hex> | ok <string>
//! bind <id> <endpoint>           -> ok <last_endpoint>
//! connect|unbind|disconnect <id> <endpoint>
//! send <id> <frames> [flags]     flags: ','-separated words: dontwait, sndmore
//! recv <id> [flags]              -> ok <frames>; flags: dontwait
//! close <id>
//! zap <policy>|off               start (or stop) a ZAP handler in this context (see `ZapPolicy`)
//! prop <id> <name>               -> ok <hex>: property of the last received message's peer
//! monitor <id>                   start collecting this socket's monitor events
//! event <id> <ms>                -> ok <event> <value>: the next monitor event
//! ping                           -> ok pong
//! quit                           close everything, terminate the context, exit
//! ```
//!
//! The protocol is documented for both peers in tests/interop/matrix/peerproto.py.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use oxmq::{opt, Context, Msg, Socket, SocketType};

/// errno values for failures of the peer itself (not of oxmq).
const EINVAL: i32 = 22;
const ENOTSOCK: i32 = 88;

enum Kind {
    Int,
    Bytes,
    Str,
}

fn option(name: &str) -> Option<(i32, Kind)> {
    use Kind::*;
    Some(match name {
        "routing_id" => (opt::ROUTING_ID, Bytes),
        "subscribe" => (opt::SUBSCRIBE, Bytes),
        "unsubscribe" => (opt::UNSUBSCRIBE, Bytes),
        "sndbuf" => (opt::SNDBUF, Int),
        "rcvbuf" => (opt::RCVBUF, Int),
        "rcvmore" => (opt::RCVMORE, Int),
        "events" => (opt::EVENTS, Int),
        "type" => (opt::TYPE, Int),
        "linger" => (opt::LINGER, Int),
        "reconnect_ivl" => (opt::RECONNECT_IVL, Int),
        "backlog" => (opt::BACKLOG, Int),
        "reconnect_ivl_max" => (opt::RECONNECT_IVL_MAX, Int),
        "maxmsgsize" => (opt::MAXMSGSIZE, Int),
        "sndhwm" => (opt::SNDHWM, Int),
        "rcvhwm" => (opt::RCVHWM, Int),
        "rcvtimeo" => (opt::RCVTIMEO, Int),
        "sndtimeo" => (opt::SNDTIMEO, Int),
        "last_endpoint" => (opt::LAST_ENDPOINT, Str),
        "router_mandatory" => (opt::ROUTER_MANDATORY, Int),
        "tcp_keepalive" => (opt::TCP_KEEPALIVE, Int),
        "immediate" => (opt::IMMEDIATE, Int),
        "xpub_verbose" => (opt::XPUB_VERBOSE, Int),
        "ipv6" => (opt::IPV6, Int),
        "probe_router" => (opt::PROBE_ROUTER, Int),
        "req_correlate" => (opt::REQ_CORRELATE, Int),
        "req_relaxed" => (opt::REQ_RELAXED, Int),
        "conflate" => (opt::CONFLATE, Int),
        "router_handover" => (opt::ROUTER_HANDOVER, Int),
        "connect_routing_id" => (opt::CONNECT_ROUTING_ID, Bytes),
        "handshake_ivl" => (opt::HANDSHAKE_IVL, Int),
        "xpub_nodrop" => (opt::XPUB_NODROP, Int),
        "invert_matching" => (opt::INVERT_MATCHING, Int),
        "heartbeat_ivl" => (opt::HEARTBEAT_IVL, Int),
        "heartbeat_ttl" => (opt::HEARTBEAT_TTL, Int),
        "heartbeat_timeout" => (opt::HEARTBEAT_TIMEOUT, Int),
        "xpub_verboser" => (opt::XPUB_VERBOSER, Int),
        "connect_timeout" => (opt::CONNECT_TIMEOUT, Int),
        "mechanism" => (opt::MECHANISM, Int),
        "plain_server" => (opt::PLAIN_SERVER, Int),
        "plain_username" => (opt::PLAIN_USERNAME, Bytes),
        "plain_password" => (opt::PLAIN_PASSWORD, Bytes),
        "curve_server" => (opt::CURVE_SERVER, Int),
        "curve_publickey" => (opt::CURVE_PUBLICKEY, Bytes),
        "curve_secretkey" => (opt::CURVE_SECRETKEY, Bytes),
        "curve_serverkey" => (opt::CURVE_SERVERKEY, Bytes),
        "zap_domain" => (opt::ZAP_DOMAIN, Bytes),
        "zap_enforce_domain" => (opt::ZAP_ENFORCE_DOMAIN, Int),
        _ => return None,
    })
}

fn socket_type(name: &str) -> Option<SocketType> {
    let raw = match name {
        "PAIR" => 0,
        "PUB" => 1,
        "SUB" => 2,
        "REQ" => 3,
        "REP" => 4,
        "DEALER" => 5,
        "ROUTER" => 6,
        "PULL" => 7,
        "PUSH" => 8,
        "XPUB" => 9,
        "XSUB" => 10,
        _ => return None,
    };
    SocketType::from_raw(raw)
}

/// A failed command: errno and message, as sent back in `err <errno> <message>`.
struct Failure(i32, String);

impl From<oxmq::Error> for Failure {
    fn from(e: oxmq::Error) -> Self {
        Failure(e.errno(), e.to_string())
    }
}

fn bad(msg: impl Into<String>) -> Failure {
    Failure(EINVAL, msg.into())
}

fn hex_encode(data: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(data.len() * 2);
    for &b in data {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
}

fn hex_decode(text: &str) -> Result<Vec<u8>, Failure> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let pairs = text.as_bytes().chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return Err(bad("odd-length hex"));
    }
    pairs
        .map(|pair| match (nibble(pair[0]), nibble(pair[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err(bad("bad hex digit")),
        })
        .collect()
}

fn encode_frames(frames: &[Msg]) -> String {
    let mut out = String::new();
    for (i, f) in frames.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        hex_encode(f.as_slice(), &mut out);
    }
    out
}

fn decode_frames(text: &str) -> Result<Vec<Msg>, Failure> {
    text.split(',').map(|part| hex_decode(part).map(Msg::from_vec)).collect()
}

fn parse_flags(field: Option<&str>) -> Result<i32, Failure> {
    let mut flags = 0;
    for word in field.unwrap_or("").split(',').filter(|w| !w.is_empty()) {
        flags |= match word {
            "dontwait" => oxmq::DONTWAIT,
            "sndmore" => oxmq::SNDMORE,
            other => return Err(bad(format!("unknown flag {other}"))),
        };
    }
    Ok(flags)
}

struct Peer {
    ctx: Context,
    sockets: HashMap<String, Socket>,
    monitors: HashMap<String, Socket>,
    zap: Option<std::thread::JoinHandle<()>>,
    zap_stop: Arc<AtomicBool>,
}

/// What the peer's ZAP handler answers, from `zap <policy>`:
/// `allow:<user-id>`, `deny:<status>`, `plain:<user>:<password>:<user-id>`
/// (200 for those credentials, 400 otherwise), `curve:<hex key>:<user-id>`
/// (200 for that client key, 400 otherwise). Fields are hex-encoded.
struct ZapPolicy {
    kind: String,
    args: Vec<Vec<u8>>,
}

impl ZapPolicy {
    fn parse(text: &str) -> Result<ZapPolicy, Failure> {
        let mut parts = text.split(':');
        let kind = parts.next().unwrap_or("").to_string();
        let args = parts.map(hex_decode).collect::<Result<Vec<_>, _>>()?;
        let want = match kind.as_str() {
            "allow" | "deny" => 1,
            "plain" => 3,
            "curve" => 2,
            _ => return Err(bad(format!("unknown zap policy {kind}"))),
        };
        if args.len() != want {
            return Err(bad("wrong number of zap policy fields"));
        }
        Ok(ZapPolicy { kind, args })
    }

    /// (status, user id) for a request's frames (after REP stripped the envelope).
    fn decide(&self, req: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
        let creds = req.get(6..).unwrap_or_default();
        let ok = |user: &[u8]| (b"200".to_vec(), user.to_vec());
        let no = (b"400".to_vec(), Vec::new());
        match self.kind.as_str() {
            "allow" => ok(&self.args[0]),
            "deny" => (self.args[0].clone(), Vec::new()),
            "plain" if creds.len() == 2 && creds[0] == self.args[0] && creds[1] == self.args[1] => ok(&self.args[2]),
            "curve" if creds.len() == 1 && creds[0] == self.args[0] => ok(&self.args[1]),
            _ => no,
        }
    }
}

impl Peer {
    fn stop_zap(&mut self) {
        self.zap_stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.zap.take() {
            let _ = t.join();
        }
    }

    fn sock(&self, id: Option<&str>) -> Result<&Socket, Failure> {
        let id = id.ok_or_else(|| bad("missing socket id"))?;
        self.sockets.get(id).ok_or_else(|| Failure(ENOTSOCK, format!("no socket {id}")))
    }

    /// Runs one command; `Ok(None)` is a bare `ok`.
    fn handle(&mut self, fields: &[&str]) -> Result<Option<String>, Failure> {
        let arg = |i: usize| fields.get(i).copied();
        let need = |i: usize, what: &str| arg(i).ok_or_else(|| bad(format!("missing {what}")));
        match fields[0] {
            "ping" => Ok(Some("pong".into())),
            "socket" => {
                let id = need(1, "socket id")?;
                let name = need(2, "socket type")?;
                let kind = socket_type(name).ok_or_else(|| bad(format!("unknown socket type {name}")))?;
                let s = self.ctx.socket(kind)?;
                self.sockets.insert(id.to_string(), s);
                Ok(None)
            }
            "setopt" => {
                let s = self.sock(arg(1))?;
                let name = need(2, "option name")?;
                let value = arg(3).unwrap_or("");
                match option(name).ok_or_else(|| bad(format!("unknown option {name}")))? {
                    (num, Kind::Int) => {
                        let v: i64 = value.parse().map_err(|_| bad(format!("bad integer {value}")))?;
                        s.set_option_int(num, v)?;
                    }
                    (num, Kind::Bytes) => s.set_option_bytes(num, &hex_decode(value)?)?,
                    (num, Kind::Str) => s.set_option_bytes(num, value.as_bytes())?,
                }
                Ok(None)
            }
            "getopt" => {
                let s = self.sock(arg(1))?;
                let name = need(2, "option name")?;
                Ok(Some(match option(name).ok_or_else(|| bad(format!("unknown option {name}")))? {
                    (num, Kind::Int) => s.get_option_int(num)?.to_string(),
                    (num, Kind::Bytes) => {
                        let mut out = String::new();
                        hex_encode(&s.get_option_bytes(num)?, &mut out);
                        out
                    }
                    (num, Kind::Str) => {
                        let mut raw = s.get_option_bytes(num)?;
                        // libzmq returns string options NUL-terminated.
                        while raw.last() == Some(&0) {
                            raw.pop();
                        }
                        String::from_utf8_lossy(&raw).into_owned()
                    }
                }))
            }
            "bind" => {
                let s = self.sock(arg(1))?;
                s.bind(need(2, "endpoint")?)?;
                Ok(Some(s.last_endpoint()?))
            }
            "connect" => {
                self.sock(arg(1))?.connect(need(2, "endpoint")?)?;
                Ok(None)
            }
            "unbind" => {
                self.sock(arg(1))?.unbind(need(2, "endpoint")?)?;
                Ok(None)
            }
            "disconnect" => {
                self.sock(arg(1))?.disconnect(need(2, "endpoint")?)?;
                Ok(None)
            }
            "send" => {
                let s = self.sock(arg(1))?;
                let frames = decode_frames(arg(2).unwrap_or(""))?;
                let flags = parse_flags(arg(3))?;
                s.send_multipart(frames, flags)?;
                Ok(None)
            }
            "recv" => {
                let s = self.sock(arg(1))?;
                let flags = parse_flags(arg(2))?;
                let frames = s.recv_multipart(flags)?;
                Ok(Some(encode_frames(&frames)))
            }
            "zap" => {
                let text = need(1, "policy")?;
                self.stop_zap();
                if text == "off" {
                    return Ok(None);
                }
                let policy = ZapPolicy::parse(text)?;
                let rep = self.ctx.socket(SocketType::Rep)?;
                rep.set_option_int(opt::RCVTIMEO, 50)?;
                rep.set_option_int(opt::LINGER, 0)?;
                rep.bind("inproc://zeromq.zap.01")?;
                self.zap_stop = Arc::new(AtomicBool::new(false));
                let stop = self.zap_stop.clone();
                self.zap = Some(std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(req) = rep.recv_multipart(0) else { continue };
                        let req: Vec<Vec<u8>> = req.iter().map(|m| m.to_vec()).collect();
                        let (status, user) = policy.decide(&req);
                        let id = req.get(1).cloned().unwrap_or_default();
                        let reply = [b"1.0".to_vec(), id, status, b"OK".to_vec(), user, Vec::new()];
                        let _ = rep.send_multipart(reply.into_iter().map(Msg::from_vec), 0);
                    }
                }));
                Ok(None)
            }
            "prop" => {
                let s = self.sock(arg(1))?;
                let value = s
                    .peer_property(need(2, "property name")?)
                    .ok_or_else(|| Failure(EINVAL, "no such property".into()))?;
                let mut out = String::new();
                hex_encode(&value, &mut out);
                Ok(Some(out))
            }
            "monitor" => {
                let id = need(1, "socket id")?;
                let ep = format!("inproc://interop-monitor-{id}");
                self.sock(Some(id))?.monitor(Some(&ep), 0xffff)?;
                let reader = self.ctx.socket(SocketType::Pair)?;
                reader.connect(&ep)?;
                self.monitors.insert(id.to_string(), reader);
                Ok(None)
            }
            "event" => {
                let id = need(1, "socket id")?;
                let ms: i64 = need(2, "timeout")?.parse().map_err(|_| bad("bad timeout"))?;
                let reader = self.monitors.get(id).ok_or_else(|| Failure(ENOTSOCK, format!("no monitor {id}")))?;
                reader.set_option_int(opt::RCVTIMEO, ms)?;
                let parts = reader.recv_multipart(0)?;
                let head = parts[0].as_slice();
                if head.len() != 6 {
                    return Err(bad("malformed monitor event"));
                }
                let event = u16::from_ne_bytes([head[0], head[1]]);
                let value = u32::from_ne_bytes([head[2], head[3], head[4], head[5]]);
                Ok(Some(format!("{event} {value}")))
            }
            "close" => {
                let id = need(1, "socket id")?;
                self.monitors.remove(id);
                self.sockets.remove(id).ok_or_else(|| Failure(ENOTSOCK, format!("no socket {id}")))?;
                Ok(None)
            }
            other => Err(bad(format!("unknown command {other}"))),
        }
    }
}

fn main() {
    let mut peer = Peer {
        ctx: Context::new(),
        sockets: HashMap::new(),
        monitors: HashMap::new(),
        zap: None,
        zap_stop: Arc::new(AtomicBool::new(false)),
    };
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break, // EOF: the harness went away
            Ok(_) => {}
            Err(e) => {
                eprintln!("interop_peer: reading stdin: {e}");
                break;
            }
        }
        let text = line.trim_end_matches(['\n', '\r']);
        let fields: Vec<&str> = text.split(' ').collect();
        if fields[0] == "quit" {
            break;
        }
        let reply = match peer.handle(&fields) {
            Ok(None) => "ok".to_string(),
            Ok(Some(payload)) => format!("ok {payload}"),
            Err(Failure(errno, msg)) => format!("err {errno} {}", msg.replace('\n', " ")),
        };
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    peer.stop_zap();
    peer.monitors.clear();
    peer.sockets.clear();
    peer.ctx.term();
    let _ = writeln!(out, "ok").and_then(|_| out.flush());
}
