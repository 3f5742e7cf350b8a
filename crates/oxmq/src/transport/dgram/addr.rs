//! DGRAM's address frames, read and written as libzmq 4.3.5 does: a
//! received datagram's sender as `a.b.c.d:port` and a NUL, a destination
//! through `inet_addr` and `atoi` (IPv4 only, no names).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

/// The address frame for a datagram from `from`: `ip:port` and a NUL, as
/// libzmq writes it. libzmq handles IPv4 senders only; `None` for others.
pub(crate) fn address_frame(from: SocketAddr) -> Option<Vec<u8>> {
    let (ip, port) = match from {
        SocketAddr::V4(a) => (*a.ip(), a.port()),
        SocketAddr::V6(a) => (a.ip().to_ipv4_mapped()?, a.port()),
    };
    let mut f = format!("{ip}:{port}").into_bytes();
    f.push(0);
    Some(f)
}

/// Where a message's address frame sends it, resolved as libzmq does: the
/// host before the last `:` through `inet_addr`, the port after it through
/// `atoi` (so a trailing NUL, as in a received address frame, is fine).
/// `None` when libzmq would drop the message.
pub(crate) fn destination(frame: &[u8]) -> Option<SocketAddrV4> {
    let colon = frame.iter().rposition(|&b| b == b':')?;
    let (host, port) = (c_str(&frame[..colon]), c_str(&frame[colon + 1..]));
    let port = atoi(port) as u16;
    if port == 0 {
        return None;
    }
    Some(SocketAddrV4::new(inet_addr(host)?, port))
}

/// The bytes a C function sees: up to the first NUL.
fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |n| &b[..n])
}

/// C's `atoi`: leading white space, an optional sign, decimal digits, the
/// rest ignored. Wraps like the `int` libzmq then narrows to 16 bits.
fn atoi(s: &[u8]) -> i32 {
    let s = &s[s.iter().take_while(|c| c.is_ascii_whitespace()).count()..];
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = s
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i32, |n, &d| n.wrapping_mul(10).wrapping_add(i32::from(d - b'0')));
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

/// POSIX `inet_addr`: one to four parts, each decimal, octal (leading 0) or
/// hex (0x), the last filling the remaining bytes; trailing white space
/// ends the address. 255.255.255.255 is its error value, so libzmq refuses
/// it too.
fn inet_addr(s: &[u8]) -> Option<Ipv4Addr> {
    let end = s.iter().position(|c| c.is_ascii_whitespace()).unwrap_or(s.len());
    let parts: Vec<&[u8]> = s[..end].split(|&c| c == b'.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut vals = Vec::with_capacity(4);
    for p in &parts {
        let (radix, digits) = match p {
            [b'0', b'x' | b'X', rest @ ..] => (16, rest),
            [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
            _ => (10, *p),
        };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let text = std::str::from_utf8(digits).ok()?;
        let v = if digits.is_empty() { 0 } else { u32::from_str_radix(text, radix).ok()? };
        if !text.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        vals.push(v);
    }
    let (last, head) = vals.split_last()?;
    if head.iter().any(|&v| v > 255) || u64::from(*last) >= 1u64 << (8 * (4 - head.len())) {
        return None;
    }
    let addr = head.iter().enumerate().fold(*last, |a, (i, &v)| a | (v << (24 - 8 * i)));
    (addr != u32::MAX).then(|| Ipv4Addr::from(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_frames_are_libzmqs() {
        assert_eq!(address_frame("127.0.0.1:5557".parse().unwrap()).unwrap(), b"127.0.0.1:5557\0");
        assert_eq!(address_frame("[::ffff:10.0.0.1]:9".parse().unwrap()).unwrap(), b"10.0.0.1:9\0");
        assert_eq!(address_frame("[::1]:9".parse().unwrap()), None);
    }

    #[test]
    fn destinations_resolve_as_inet_addr_and_atoi() {
        let d = |s: &[u8]| destination(s).map(|a| a.to_string());
        assert_eq!(d(b"127.0.0.1:5556").as_deref(), Some("127.0.0.1:5556"));
        assert_eq!(d(b"127.0.0.1:5556\0").as_deref(), Some("127.0.0.1:5556"), "a received address frame");
        assert_eq!(d(b"127.1:80").as_deref(), Some("127.0.0.1:80"), "inet_addr's short forms");
        assert_eq!(d(b"0x7f.0.0.010:80").as_deref(), Some("127.0.0.8:80"), "hex and octal parts");
        assert_eq!(d(b"10.0.0.1:80junk").as_deref(), Some("10.0.0.1:80"), "atoi stops at a non-digit");
        assert_eq!(d(b"10.0.0.1:70000").as_deref(), Some("10.0.0.1:4464"), "atoi's int narrowed to 16 bits");
        assert_eq!(d(b"a:b:10.0.0.1:1"), None, "the host is what comes before the last colon");
        for bad in [
            &b"127.0.0.1"[..],
            b"127.0.0.1:0",
            b"127.0.0.1:",
            b"localhost:80",
            b"255.255.255.255:80",
            b"1.2.3.4.5:80",
            b"256.0.0.1:80",
            b"",
            b":80",
            b"[::1]:80",
            b"1.2.3.09:80",
        ] {
            assert_eq!(destination(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
