//! The HTTP/1.1 upgrade of ZWS 2.0: build and parse the client's request and
//! the server's `101` answer, pick the `Sec-WebSocket-Protocol`, and the
//! ZMTP greeting the agreed protocol implies for the peer.

use super::WsError;

/// RFC 6455's fixed GUID appended to the client's key.
const ACCEPT_GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// Longest upgrade request or response accepted (the whole header block).
pub const MAX_UPGRADE_LEN: usize = 8192;
/// The ZMTP greeting length the engine writes and expects; ZWS has none.
pub(super) const GREETING_LEN: usize = crate::greeting::GREETING_LEN;

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`.
pub fn accept_key(key: &str) -> String {
    use base64::Engine as _;
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(key.as_bytes());
    h.update(ACCEPT_GUID);
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// A fresh `Sec-WebSocket-Key`: 16 random octets, base64.
pub fn new_key(random: [u8; 16]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(random)
}

/// What a client offers in `Sec-WebSocket-Protocol` for a mechanism's wire
/// name (`NULL`, `PLAIN`, `CURVE`), as libzmq does.
pub fn client_protocols(mechanism: &str) -> String {
    match mechanism {
        "NULL" => "ZWS2.0/NULL,ZWS2.0".to_string(),
        m => format!("ZWS2.0/{m}"),
    }
}

/// The bare protocol (NULL only): no mechanism and no READY; each side's
/// first message is its routing id (see [`WsDecoder::expect_routing_id`]).
pub const BARE: &str = "ZWS2.0";

/// Whether a side running `mechanism` accepts `protocol`.
fn serves(mechanism: &str, protocol: &str) -> bool {
    protocol.strip_prefix("ZWS2.0/") == Some(mechanism) || (mechanism == "NULL" && protocol == BARE)
}

/// Bare `ZWS2.0` never names the peer's socket type; the engine is told
/// the first type that pairs with ours (libzmq does no check in that mode).
pub fn bare_peer_type(ours: crate::SocketType) -> &'static str {
    (0..64)
        .filter_map(crate::SocketType::from_raw)
        .find(|t| ours.is_compatible_with(*t))
        .map_or("PAIR", |t| t.wire_name())
}

/// The client's upgrade request.
pub fn encode_request(path: &str, host: &str, key: &str, protocols: &str, out: &mut Vec<u8>) {
    let path = if path.is_empty() { "/" } else { path };
    out.extend_from_slice(
        format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: {protocols}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .as_bytes(),
    );
}

/// The server's `101` answer.
pub fn encode_response(accept: &str, protocol: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n"
        )
        .as_bytes(),
    );
}

/// A parsed, accepted upgrade request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The request's path, which the listener compares with its endpoint's.
    pub path: String,
    /// `Sec-WebSocket-Key`, which the answer's `Sec-WebSocket-Accept` must hash.
    pub key: String,
    /// The protocol chosen for our mechanism.
    pub protocol: String,
}

/// A parsed, accepted `101` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The `ZWS2.0/...` protocol the server chose for our mechanism.
    pub protocol: String,
}

/// Splits the header block at its end. `Ok(None)`: incomplete.
fn header_block(buf: &[u8]) -> Result<Option<(&str, usize)>, WsError> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        if buf.len() > MAX_UPGRADE_LEN {
            return Err(WsError::BadUpgrade("header block too long"));
        }
        return Ok(None);
    };
    if end + 4 > MAX_UPGRADE_LEN {
        return Err(WsError::BadUpgrade("header block too long"));
    }
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| WsError::BadUpgrade("not ASCII"))?;
    Ok(Some((text, end + 4)))
}

/// Iterates `name: value` header lines (after the first line).
fn headers<'a>(lines: std::str::Split<'a, &'a str>) -> impl Iterator<Item = Result<(&'a str, &'a str), WsError>> {
    lines.map(|line| {
        let (name, value) = line.split_once(':').ok_or(WsError::BadUpgrade("header line without ':'"))?;
        if name.is_empty() || name.contains([' ', '\n', '\r']) || value.contains('\n') {
            return Err(WsError::BadUpgrade("malformed header line"));
        }
        Ok((name, value.trim()))
    })
}

fn has_token(value: &str, token: &str) -> bool {
    value.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Parses the client's request from the start of `buf` for a server running
/// `mechanism`. Returns the request and its length, `Ok(None)` if more bytes
/// are needed.
pub fn parse_request(buf: &[u8], mechanism: &str) -> Result<Option<(Request, usize)>, WsError> {
    let Some((text, len)) = header_block(buf)? else { return Ok(None) };
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let rest = first.strip_prefix("GET ").ok_or(WsError::BadUpgrade("not a GET request"))?;
    let path = rest.trim_start_matches(' ');
    let path = path.strip_suffix(" HTTP/1.1").ok_or(WsError::BadUpgrade("not HTTP/1.1"))?;
    if path.is_empty() || path.contains(' ') {
        return Err(WsError::BadUpgrade("bad request target"));
    }
    let (mut upgrade, mut connection, mut key, mut protocol) = (false, false, None, None);
    for h in headers(lines) {
        let (name, value) = h?;
        if name.eq_ignore_ascii_case("upgrade") {
            upgrade = value.eq_ignore_ascii_case("websocket");
        } else if name.eq_ignore_ascii_case("connection") {
            connection |= has_token(value, "upgrade");
        } else if name.eq_ignore_ascii_case("sec-websocket-key") {
            key = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("sec-websocket-protocol") && protocol.is_none() {
            // The header may repeat or list several; the first match wins.
            protocol = value.split(',').map(str::trim).find(|p| serves(mechanism, p)).map(str::to_string);
        }
    }
    if !upgrade || !connection {
        return Err(WsError::BadUpgrade("not a WebSocket upgrade"));
    }
    let key = key.filter(|k| !k.is_empty()).ok_or(WsError::BadUpgrade("no Sec-WebSocket-Key"))?;
    let protocol = protocol.ok_or(WsError::NoProtocol)?;
    Ok(Some((Request { path: path.to_string(), key, protocol }, len)))
}

/// Parses the server's answer to a request sent with `key` and `mechanism`.
pub fn parse_response(buf: &[u8], key: &str, mechanism: &str) -> Result<Option<(Response, usize)>, WsError> {
    let Some((text, len)) = header_block(buf)? else {
        // Fail fast on anything that cannot become a 101 answer.
        let n = buf.len().min(9);
        if buf[..n] != b"HTTP/1.1 "[..n] {
            return Err(WsError::BadUpgrade("not an HTTP/1.1 response"));
        }
        return Ok(None);
    };
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let status = first.strip_prefix("HTTP/1.1 ").ok_or(WsError::BadUpgrade("not an HTTP/1.1 response"))?;
    if status.trim_start_matches(' ').split(' ').next() != Some("101") {
        return Err(WsError::BadUpgrade("the server refused the upgrade"));
    }
    let (mut upgrade, mut connection, mut accept, mut protocol) = (false, false, None, None);
    for h in headers(lines) {
        let (name, value) = h?;
        if name.eq_ignore_ascii_case("upgrade") {
            upgrade = value.eq_ignore_ascii_case("websocket");
        } else if name.eq_ignore_ascii_case("connection") {
            connection |= has_token(value, "upgrade");
        } else if name.eq_ignore_ascii_case("sec-websocket-accept") {
            accept = Some(value);
        } else if name.eq_ignore_ascii_case("sec-websocket-protocol") {
            if protocol.is_some() {
                return Err(WsError::BadUpgrade("several protocols chosen"));
            }
            protocol = Some(value.to_string());
        }
    }
    if !upgrade || !connection {
        return Err(WsError::BadUpgrade("not a WebSocket upgrade"));
    }
    if accept != Some(accept_key(key).as_str()) {
        return Err(WsError::BadUpgrade("wrong Sec-WebSocket-Accept"));
    }
    let protocol = protocol.ok_or(WsError::NoProtocol)?;
    if !serves(mechanism, &protocol) {
        return Err(WsError::NoProtocol);
    }
    Ok(Some((Response { protocol }, len)))
}

/// The ZMTP greeting ZWS implies for the peer: version 3.1 under CURVE
/// (libzmq's ws CURVE sends subscriptions as commands inside boxes) and
/// 3.0 otherwise (libzmq's ws encoder writes subscriptions as the legacy
/// `0x01`/`0x00`-prefixed messages), with the mechanism both sides agreed
/// on and the opposite as-server role. The engine reads it as if the peer
/// had sent it, so the ZMTP mechanisms run unchanged.
pub fn implied_peer_greeting(mechanism: &str, we_are_server: bool) -> [u8; GREETING_LEN] {
    let peer_server = mechanism != "NULL" && !we_are_server;
    let mut g = crate::greeting::Greeting::new(mechanism, peer_server).expect("built-in mechanism names fit");
    g.minor = u8::from(mechanism == "CURVE");
    g.encode()
}
