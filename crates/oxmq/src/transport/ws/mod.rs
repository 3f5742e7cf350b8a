//! ws:// and wss:// connections (ZWS 2.0) as the engine sees them: a byte
//! stream of ZMTP frames, like tcp's.
//!
//! The translation lives here, so the engine (and with it the tcp and ipc
//! paths) knows nothing of WebSocket: this stage performs the HTTP upgrade,
//! turns the WebSocket messages the peer sends into ZMTP frames for the
//! engine, and the engine's ZMTP frames into WebSocket messages. ZWS has no
//! ZMTP greeting: the engine's own greeting is swallowed on the way out,
//! and once the upgrade is done the engine is handed the greeting ZWS
//! implies for the peer (see `oxmq_proto::ws::implied_peer_greeting`), so
//! NULL, PLAIN and CURVE run exactly as over tcp.
//!
//! Readiness contract with the engine (edge-triggered polling): a read
//! returns fewer bytes than asked only after the socket said WouldBlock or
//! EOF, and output accepted by `writev` but not yet on the wire is flushed
//! by [`WsStream::flush_pending`], which the engine calls when it has
//! nothing else to write.

// wss://: rustls under the WebSocket stage.
mod tls;

use crate::error::Error;
use crate::transport::endpoint::WsAddr;
use oxmq_proto::ws::{self, Control, WsDecoder, WsEncoder};
use oxmq_proto::SocketType;
use rustls::pki_types::ServerName;
use std::io::{self, IoSlice, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use tls::Tls;

/// Most input taken from one `writev`, bounding the translated copy.
const WRITE_CHUNK: usize = 1024 * 1024;
/// Bytes read from the socket per read call.
const READ_CHUNK: usize = 64 * 1024;
/// Unsent output past which a peer that keeps pinging but does not read
/// its answers is dropped (its pongs would otherwise pile up here).
const MAX_UNSENT: usize = 16 * 1024 * 1024;

enum Side {
    /// We connected: the upgrade request went out with this key.
    Client {
        key: String,
    },
    Server,
}

pub(crate) struct WsStream {
    pub(crate) tcp: mio::net::TcpStream,
    /// wss://: the TLS session over `tcp`.
    tls: Option<Tls>,
    side: Side,
    /// Our mechanism's wire name; the peer must agree on it.
    mechanism: &'static str,
    /// Bare ZWS2.0: the socket type the engine is told the peer has.
    bare_peer: &'static str,
    upgraded: bool,
    /// Socket bytes of the (incomplete) upgrade request or response.
    upgrade_in: Vec<u8>,
    dec: WsDecoder,
    enc: WsEncoder,
    /// ZMTP bytes for the engine, from `zin_pos` on.
    zin: Vec<u8>,
    zin_pos: usize,
    /// WebSocket bytes for the peer, from `out_pos` on.
    out: Vec<u8>,
    out_pos: usize,
    /// Control-frame answers waiting for the encoder to finish a frame.
    answers: Vec<Control>,
    read_buf: Vec<u8>,
    eof: bool,
}

impl WsStream {
    fn new(
        tcp: mio::net::TcpStream,
        tls: Option<Tls>,
        side: Side,
        mechanism: &'static str,
        ours: SocketType,
    ) -> WsStream {
        let client = matches!(side, Side::Client { .. });
        WsStream {
            tcp,
            tls,
            side,
            mechanism,
            bare_peer: ws::bare_peer_type(ours),
            upgraded: false,
            upgrade_in: Vec::new(),
            dec: WsDecoder::new(!client),
            enc: WsEncoder::new(client, crate::security::fresh_entropy()),
            zin: Vec::new(),
            zin_pos: 0,
            out: Vec::new(),
            out_pos: 0,
            answers: Vec::new(),
            read_buf: vec![0; READ_CHUNK],
            eof: false,
        }
    }

    /// An accepted connection: waits for the client's upgrade request.
    pub(crate) fn server(
        tcp: mio::net::TcpStream,
        tls: Option<Tls>,
        mechanism: &'static str,
        ours: SocketType,
    ) -> WsStream {
        WsStream::new(tcp, tls, Side::Server, mechanism, ours)
    }

    /// A connected socket: queues the upgrade request for `host` and `path`.
    pub(crate) fn client(
        tcp: mio::net::TcpStream,
        tls: Option<Tls>,
        host: &str,
        path: &str,
        mechanism: &'static str,
        ours: SocketType,
    ) -> WsStream {
        let mut nonce = [0u8; 16];
        nonce.copy_from_slice(&crate::security::fresh_entropy()[..16]);
        let key = ws::new_key(nonce);
        let mut s = WsStream::new(tcp, tls, Side::Client { key: key.clone() }, mechanism, ours);
        ws::encode_request(path, host, &key, &ws::client_protocols(mechanism), &mut s.out);
        s
    }

    pub(crate) fn fd(&self) -> i32 {
        self.tcp.as_raw_fd()
    }

    /// Output accepted from the engine (or our own) not yet on the wire.
    pub(crate) fn has_pending(&self) -> bool {
        self.out_pos < self.out.len() || self.tls.as_ref().is_some_and(Tls::wants_write)
    }

    /// Fills `dst` with ZMTP bytes; see the module's readiness contract.
    pub(crate) fn read(&mut self, dst: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let mut filled = 0;
        loop {
            let avail = &self.zin[self.zin_pos..];
            let n = avail.len().min(dst.len() - filled);
            for (d, s) in dst[filled..filled + n].iter_mut().zip(avail) {
                d.write(*s);
            }
            filled += n;
            self.zin_pos += n;
            if self.zin_pos == self.zin.len() {
                self.zin.clear();
                self.zin_pos = 0;
            }
            if filled == dst.len() || self.eof {
                return Ok(filled);
            }
            let mut buf = std::mem::take(&mut self.read_buf);
            let res = self.read_socket(&mut buf);
            let res = match res {
                Ok(0) => {
                    self.eof = true;
                    Ok(())
                }
                Ok(n) => self.ingest(&buf[..n]),
                Err(e) => Err(e),
            };
            self.read_buf = buf;
            match res {
                Ok(()) => {}
                // The error (WouldBlock included) comes back on the next call.
                Err(_) if filled > 0 => return Ok(filled),
                Err(e) => return Err(e),
            }
        }
    }

    /// Translates the engine's ZMTP bytes; returns how many it took.
    pub(crate) fn writev(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if !self.flush_pending()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut taken = 0;
        for b in bufs {
            let take = b.len().min(WRITE_CHUNK - taken);
            self.enc.encode(&b[..take], &mut self.out);
            taken += take;
            if taken == WRITE_CHUNK {
                break;
            }
        }
        self.send_answers();
        self.flush_pending()?;
        Ok(taken)
    }

    /// Writes what is queued. `Ok(true)`: nothing is left.
    pub(crate) fn flush_pending(&mut self) -> io::Result<bool> {
        loop {
            if let Some(tls) = &mut self.tls {
                let mut n = 0;
                if self.out_pos < self.out.len() {
                    n = tls.write_plain(&self.out[self.out_pos..])?;
                    self.out_pos += n;
                }
                if !tls.flush(&mut self.tcp)? {
                    return Ok(false);
                }
                if self.out_pos == self.out.len() {
                    self.out.clear();
                    self.out_pos = 0;
                    return Ok(true);
                }
                if n == 0 {
                    // The session holds all it will before its handshake ends.
                    return Ok(false);
                }
                continue;
            }
            if self.out_pos == self.out.len() {
                self.out.clear();
                self.out_pos = 0;
                return Ok(true);
            }
            match send(&self.tcp, &self.out[self.out_pos..]) {
                Ok(n) => self.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    fn read_socket(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.tls {
            Some(tls) => {
                let n = tls.read_plain(&mut self.tcp, buf);
                // The TLS handshake may want to answer.
                let _ = tls.flush(&mut self.tcp);
                n
            }
            None => loop {
                match (&self.tcp).read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => return r,
                }
            },
        }
    }

    fn ingest(&mut self, data: &[u8]) -> io::Result<()> {
        if self.upgraded {
            return self.decode(data);
        }
        self.upgrade_in.extend_from_slice(data);
        let res = match &self.side {
            Side::Server => ws::parse_request(&self.upgrade_in, self.mechanism).map(|r| {
                r.map(|(req, len)| {
                    ws::encode_response(&ws::accept_key(&req.key), &req.protocol, &mut self.out);
                    (req.protocol, len)
                })
            }),
            Side::Client { key } => {
                ws::parse_response(&self.upgrade_in, key, self.mechanism).map(|r| r.map(|(r, len)| (r.protocol, len)))
            }
        };
        let len = match res {
            Ok(Some((protocol, len))) => {
                if protocol == ws::BARE {
                    self.dec.expect_routing_id(self.bare_peer);
                    self.enc.send_routing_id_for_ready();
                }
                len
            }
            Ok(None) => return Ok(()),
            Err(e) => {
                if let Side::Server = self.side {
                    // Best effort: tell an HTTP client why before hanging up.
                    self.out.extend_from_slice(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                    let _ = self.flush_pending();
                }
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        };
        self.upgraded = true;
        let server = matches!(self.side, Side::Server);
        self.zin.extend_from_slice(&ws::implied_peer_greeting(self.mechanism, server));
        let rest = self.upgrade_in.split_off(len);
        self.upgrade_in = Vec::new();
        let _ = self.flush_pending();
        self.decode(&rest)
    }

    fn decode(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() && !self.eof {
            match self.dec.decode(&mut data, &mut self.zin) {
                Ok(None) => {}
                Ok(Some(c)) => {
                    if let Control::Close(_) = c {
                        // Nothing after a close counts.
                        self.eof = true;
                    }
                    self.answers.push(c);
                }
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
        }
        if !self.answers.is_empty() {
            self.send_answers();
            let _ = self.flush_pending();
            if self.out.len() - self.out_pos > MAX_UNSENT {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "ws peer does not read its control answers"));
            }
        }
        Ok(())
    }

    /// Control answers go out between messages, never inside one.
    fn send_answers(&mut self) {
        if self.answers.is_empty() || !self.enc.at_boundary() {
            return;
        }
        for c in std::mem::take(&mut self.answers) {
            self.enc.answer(&c, &mut self.out);
        }
    }
}

/// One `send` that never raises SIGPIPE.
fn send(tcp: &mio::net::TcpStream, data: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `data` is readable for its length during the call.
        let n = unsafe { libc::send(tcp.as_raw_fd(), data.as_ptr().cast(), data.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `Write` for rustls: sends without SIGPIPE.
pub(crate) struct NoSigpipe<'a>(pub(crate) &'a mio::net::TcpStream);

impl Write for NoSigpipe<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        send(self.0, buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The wire name of the mechanism the socket's options select.
fn mechanism_name(opts: &crate::options::Options) -> &'static str {
    match opts.security.mechanism_config() {
        oxmq_proto::MechanismConfig::Plain(_) => "PLAIN",
        oxmq_proto::MechanismConfig::Curve(_) => "CURVE",
        _ => "NULL",
    }
}

/// What a ws:// or wss:// listener adds to each accepted tcp connection.
pub(crate) struct WsListen {
    tls: Option<Arc<rustls::ServerConfig>>,
    mechanism: &'static str,
    socket_type: SocketType,
}

impl WsListen {
    /// EINVAL for wss:// without a usable certificate and key.
    pub(crate) fn new(
        addr: &WsAddr,
        opts: &crate::options::Options,
        socket_type: SocketType,
    ) -> Result<WsListen, Error> {
        let tls = if addr.tls { Some(tls::server_config(opts)?) } else { None };
        Ok(WsListen { tls, mechanism: mechanism_name(opts), socket_type })
    }

    pub(crate) fn wrap(&self, tcp: mio::net::TcpStream) -> io::Result<WsStream> {
        let tls = self.tls.as_ref().map(Tls::server).transpose()?;
        Ok(WsStream::server(tcp, tls, self.mechanism, self.socket_type))
    }
}

/// What a ws:// or wss:// connecter adds to each connected tcp socket.
pub(crate) struct WsConnect {
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    host: String,
    path: String,
    mechanism: &'static str,
    socket_type: SocketType,
}

impl WsConnect {
    /// EINVAL for unusable WSS_TRUST_PEM or host names.
    pub(crate) fn new(
        addr: &WsAddr,
        opts: &crate::options::Options,
        socket_type: SocketType,
    ) -> Result<WsConnect, Error> {
        let tls = if addr.tls { Some(tls::client_config(opts, &addr.host)?) } else { None };
        let (host, path) = (addr.host.clone(), addr.path.clone());
        Ok(WsConnect { tls, host, path, mechanism: mechanism_name(opts), socket_type })
    }

    /// Turns a connected tcp stream into a ws stream (the upgrade request
    /// is queued at once).
    pub(crate) fn wrap(&self, tcp: mio::net::TcpStream) -> io::Result<WsStream> {
        let tls = self.tls.as_ref().map(|(cfg, name)| Tls::client(cfg, name.clone())).transpose()?;
        Ok(WsStream::client(tcp, tls, &self.host, &self.path, self.mechanism, self.socket_type))
    }
}
