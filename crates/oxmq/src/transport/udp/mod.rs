//! Draft RADIO/DISH: the `udp://` transport, as libzmq 4.3.5 does it
//! (`udp_address.cpp`, `udp_engine.cpp`); DGRAM's raw datagrams use the
//! same sockets (`transport::dgram`).
//!
//! Each message is one datagram: `[group length: u8][group][body]`. There is
//! no handshake: a RADIO's udp pipe takes every group (it cannot hear
//! joins), and the DISH filters by its own joins.
//!
//! Files: `addr` (endpoint syntax and resolution), `socket` (the UDP socket:
//! opened as libzmq sets it up, pumped without blocking), `engine` (the
//! RADIO's and the DISH's engines). The socket is opened in the thread that
//! binds or connects, so errors reach that call; then the engine is one of
//! the context's I/O thread's packet engines (`transport::packet`): its
//! socket is registered with the thread's poll loop, and the engine runs on
//! the socket's edges and on its pipe's wake-ups, never on a timer.

mod addr;
mod engine;
mod socket;

pub(crate) use addr::parse;
pub(crate) use engine::{dish, radio};
pub(crate) use socket::{open_receiver, open_sender, pump_in, Outbox, Sent, RECV_BUF};

/// libzmq's `MAX_UDP_MSG`: the largest datagram it reads (and the size of
/// its send buffer). Larger datagrams are dropped here, on both sides.
pub(crate) const MAX_UDP_MSG: usize = 8192;

/// One datagram in libzmq's layout, or `None` when it would be too large.
fn encode(group: &[u8], body: &[u8]) -> Option<Vec<u8>> {
    let len = 1 + group.len() + body.len();
    if group.len() > usize::from(u8::MAX) || len > MAX_UDP_MSG {
        return None;
    }
    let mut d = Vec::with_capacity(len);
    d.push(group.len() as u8);
    d.extend_from_slice(group);
    d.extend_from_slice(body);
    Some(d)
}

/// Group and body of a datagram; `None` for a malformed one.
fn decode(d: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&glen, rest) = d.split_first()?;
    let glen = usize::from(glen);
    (rest.len() >= glen).then(|| rest.split_at(glen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagram_layout_is_libzmqs() {
        assert_eq!(encode(b"TV", b"Friends").unwrap(), b"\x02TVFriends");
        assert_eq!(decode(b"\x02TVFriends"), Some((&b"TV"[..], &b"Friends"[..])));
        assert_eq!(decode(b"\x00"), Some((&b""[..], &b""[..])));
        assert_eq!(decode(b""), None);
        assert_eq!(decode(b"\x05abc"), None, "group longer than the datagram");
        assert!(encode(b"g", &vec![0; MAX_UDP_MSG]).is_none());
        assert!(encode(b"g", &vec![0; MAX_UDP_MSG - 2]).is_some());
    }
}
