//! SOCKS5 client (RFC 1928, with RFC 1929 user/password), for SOCKS_PROXY:
//! a tcp connect goes to the proxy, which is asked to CONNECT to the
//! endpoint's host and port; ZMTP (or STREAM's raw bytes) follows on the same
//! connection. As libzmq: one method offered (user/password when
//! SOCKS_USERNAME is set, else none); the target host is sent as an IPv4 or
//! IPv6 address when it is a literal one, else as a name for the proxy to
//! resolve.
//!
//! No I/O here: the I/O thread writes [`Socks5::pending`], reads exactly
//! [`Socks5::want`] bytes at a time (so nothing after the proxy's reply is
//! consumed) and hands them to [`Socks5::feed`].

use super::endpoint::{TcpAddr, TcpHost};
use std::net::IpAddr;

/// Why the proxy did not connect us.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SocksError {
    /// Not SOCKS5, or not what was asked (another method, a bad address type).
    Protocol,
    /// The proxy accepted none of our methods, or refused the credentials.
    Auth,
    /// The CONNECT failed; RFC 1928's reply code.
    Refused(u8),
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Waiting for the method selection (2 bytes).
    Method,
    /// Waiting for the user/password status (2 bytes).
    Auth,
    /// Waiting for the CONNECT reply (5 bytes, then the rest of its address).
    Reply,
    Done,
}

const NO_AUTH: u8 = 0x00;
const USER_PASS: u8 = 0x02;

pub(crate) struct Socks5 {
    state: State,
    method: u8,
    /// Bytes to send now.
    out: Vec<u8>,
    /// The reply read so far.
    inbuf: Vec<u8>,
    /// Sent after the method (and authentication) is settled.
    request: Vec<u8>,
    /// The RFC 1929 request, when authenticating.
    auth: Vec<u8>,
}

impl Socks5 {
    /// A client asking for `target`. Credentials longer than RFC 1929 allows
    /// (255 bytes) are refused here; libzmq asserts on them.
    pub(crate) fn new(target: &TcpAddr, user: &[u8], pass: &[u8]) -> Option<Socks5> {
        let port = target.port?;
        let mut request = vec![5, 1, 0];
        match &target.host {
            TcpHost::Ip(IpAddr::V4(a)) => {
                request.push(1);
                request.extend_from_slice(&a.octets());
            }
            TcpHost::Ip(IpAddr::V6(a)) => {
                request.push(4);
                request.extend_from_slice(&a.octets());
            }
            TcpHost::Name(name) => {
                let name = name.as_bytes();
                request.push(3);
                request.push(u8::try_from(name.len()).ok()?);
                request.extend_from_slice(name);
            }
            TcpHost::Any => return None,
        }
        request.extend_from_slice(&port.to_be_bytes());
        let (method, auth) = if user.is_empty() {
            (NO_AUTH, Vec::new())
        } else {
            let mut a = vec![1, u8::try_from(user.len()).ok()?];
            a.extend_from_slice(user);
            a.push(u8::try_from(pass.len()).ok()?);
            a.extend_from_slice(pass);
            (USER_PASS, a)
        };
        Some(Socks5 { state: State::Method, method, out: vec![5, 1, method], inbuf: Vec::new(), request, auth })
    }

    /// What to write to the proxy now.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.out
    }

    /// `n` bytes of [`pending`](Self::pending) were written.
    pub(crate) fn consumed(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    /// How many bytes to read next (0: done, or nothing expected before our
    /// pending bytes are written).
    pub(crate) fn want(&self) -> usize {
        let total = match self.state {
            State::Method | State::Auth => 2,
            State::Reply if self.inbuf.len() < 5 => 5,
            State::Reply => match self.inbuf[3] {
                1 => 10,
                3 => 7 + self.inbuf[4] as usize,
                _ => 22,
            },
            State::Done => return 0,
        };
        total - self.inbuf.len()
    }

    /// Whether the proxy has connected us.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Take bytes the proxy sent (at most [`want`](Self::want)).
    pub(crate) fn feed(&mut self, data: &[u8]) -> Result<(), SocksError> {
        debug_assert!(data.len() <= self.want());
        self.inbuf.extend_from_slice(data);
        if self.state == State::Reply && self.inbuf.len() >= 4 && !matches!(self.inbuf[3], 1 | 3 | 4) {
            // An unknown address type: its length is unknown too.
            return Err(SocksError::Protocol);
        }
        if self.want() > 0 {
            return Ok(());
        }
        let msg = std::mem::take(&mut self.inbuf);
        match self.state {
            State::Method => {
                if msg[0] != 5 {
                    return Err(SocksError::Protocol);
                }
                if msg[1] == 0xff {
                    return Err(SocksError::Auth);
                }
                if msg[1] != self.method {
                    return Err(SocksError::Protocol);
                }
                if self.method == USER_PASS {
                    self.out.append(&mut self.auth);
                    self.state = State::Auth;
                } else {
                    self.out.append(&mut self.request);
                    self.state = State::Reply;
                }
            }
            State::Auth => {
                // RFC 1929: version 1, status 0 = success.
                if msg[0] != 1 {
                    return Err(SocksError::Protocol);
                }
                if msg[1] != 0 {
                    return Err(SocksError::Auth);
                }
                self.out.append(&mut self.request);
                self.state = State::Reply;
            }
            State::Reply => {
                if msg[0] != 5 || msg[2] != 0 || !matches!(msg[3], 1 | 3 | 4) {
                    return Err(SocksError::Protocol);
                }
                if msg[1] != 0 {
                    return Err(SocksError::Refused(msg[1]));
                }
                self.state = State::Done;
            }
            State::Done => {}
        }
        Ok(())
    }
}

/// SOCKS_PROXY's value, `host:port`, as a tcp address.
pub(crate) fn proxy_addr(value: &[u8]) -> Option<TcpAddr> {
    let s = std::str::from_utf8(value).ok()?;
    match super::endpoint::parse_endpoint(&format!("tcp://{s}")).ok()? {
        super::endpoint::Endpoint::Tcp(a) if a.port.is_some() => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn target(host: TcpHost, port: u16) -> TcpAddr {
        TcpAddr { host, port: Some(port), source: None }
    }

    /// Drive a client against scripted proxy answers; returns what it sent.
    fn run(c: &mut Socks5, answers: &[&[u8]]) -> Result<Vec<u8>, SocksError> {
        let mut sent = Vec::new();
        for a in answers {
            sent.extend_from_slice(c.pending());
            c.consumed(c.pending().len());
            let mut rest: &[u8] = a;
            while !rest.is_empty() {
                let n = c.want().min(rest.len());
                assert!(n > 0, "more bytes than the reply has");
                c.feed(&rest[..n])?;
                rest = &rest[n..];
            }
        }
        sent.extend_from_slice(c.pending());
        Ok(sent)
    }

    #[test]
    fn no_auth_ipv4_target() {
        let mut c = Socks5::new(&target(TcpHost::Ip(Ipv4Addr::new(10, 0, 0, 1).into()), 5555), b"", b"").unwrap();
        let sent = run(&mut c, &[&[5, 0], &[5, 0, 0, 1, 127, 0, 0, 1, 0x1f, 0x90]]).unwrap();
        assert_eq!(sent, [5, 1, 0, 5, 1, 0, 1, 10, 0, 0, 1, 0x15, 0xb3]);
        assert!(c.is_done());
        assert_eq!(c.want(), 0);
    }

    #[test]
    fn user_pass_and_a_name_with_a_name_in_the_reply() {
        let mut c = Socks5::new(&target(TcpHost::Name("example.org".into()), 80), b"joe", b"pw").unwrap();
        let reply: &[u8] = &[5, 0, 0, 3, 4, b'h', b'o', b's', b't', 0, 80];
        let sent = run(&mut c, &[&[5, 2], &[1, 0], reply]).unwrap();
        let mut want = vec![5, 1, 2, 1, 3, b'j', b'o', b'e', 2, b'p', b'w', 5, 1, 0, 3, 11];
        want.extend_from_slice(b"example.org");
        want.extend_from_slice(&[0, 80]);
        assert_eq!(sent, want);
        assert!(c.is_done());
    }

    #[test]
    fn ipv6_target_and_reply() {
        let mut c = Socks5::new(&target(TcpHost::Ip("::1".parse().unwrap()), 1), b"", b"").unwrap();
        let mut reply = vec![5, 0, 0, 4];
        reply.extend_from_slice(&[0; 18]);
        let sent = run(&mut c, &[&[5, 0], &reply]).unwrap();
        assert_eq!(&sent[3..7], &[5, 1, 0, 4]);
        assert_eq!(sent.len(), 3 + 4 + 16 + 2);
        assert!(c.is_done());
    }

    #[test]
    fn failures() {
        let t = target(TcpHost::Ip(Ipv4Addr::LOCALHOST.into()), 9);
        let mut c = Socks5::new(&t, b"", b"").unwrap();
        assert_eq!(run(&mut c, &[&[5, 0xff]]), Err(SocksError::Auth));
        let mut c = Socks5::new(&t, b"", b"").unwrap();
        assert_eq!(run(&mut c, &[&[4, 0]]), Err(SocksError::Protocol));
        let mut c = Socks5::new(&t, b"", b"").unwrap();
        assert_eq!(run(&mut c, &[&[5, 2]]), Err(SocksError::Protocol), "a method we did not offer");
        let mut c = Socks5::new(&t, b"u", b"p").unwrap();
        assert_eq!(run(&mut c, &[&[5, 2], &[1, 1]]), Err(SocksError::Auth));
        let mut c = Socks5::new(&t, b"", b"").unwrap();
        assert_eq!(run(&mut c, &[&[5, 0], &[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]]), Err(SocksError::Refused(5)));
        let mut c = Socks5::new(&t, b"", b"").unwrap();
        assert_eq!(run(&mut c, &[&[5, 0], &[5, 0, 0, 9, 0]]), Err(SocksError::Protocol));
        assert!(Socks5::new(&t, &[b'u'; 256], b"").is_none(), "RFC 1929 limits names to 255 bytes");
    }

    #[test]
    fn proxy_address_syntax() {
        assert_eq!(proxy_addr(b"127.0.0.1:1080").unwrap().port, Some(1080));
        assert!(proxy_addr(b"localhost:1080").is_some());
        assert!(proxy_addr(b"127.0.0.1").is_none());
        assert!(proxy_addr(b"\xff:1").is_none());
    }
}
