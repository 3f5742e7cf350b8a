//! Accept filters, as libzmq applies them to each accepted connection before
//! any byte is read: TCP_ACCEPT_FILTER (peer address in one of the
//! `address[/bits]` masks) and IPC_FILTER_UID/GID/PID (the peer's
//! credentials from SO_PEERCRED; a GID filter also admits members of that
//! group). A refused connection is closed at once; the listener's monitor
//! reports ACCEPT_FAILED.

use crate::options::Options;
use std::ffi::CStr;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;

/// Parse a TCP_ACCEPT_FILTER value (`192.168.1.0/24`, `10.0.0.1`, an IPv6
/// address only when IPV6 is on), as libzmq's `tcp_address_mask_t`: numeric
/// only, the value ends at a NUL.
pub(crate) fn parse_tcp_filter(value: &[u8], ipv6: bool) -> Option<(IpAddr, u8)> {
    let value = value.split(|&b| b == 0).next().unwrap_or_default();
    let s = std::str::from_utf8(value).ok()?;
    let (addr, bits) = match s.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    if addr.is_ipv6() && !ipv6 {
        return None;
    }
    let full = if addr.is_ipv4() { 32 } else { 128 };
    let bits = match bits {
        None => full,
        Some(b) => b.parse::<u8>().ok().filter(|&b| b <= full)?,
    };
    Some((addr, bits))
}

fn masked_eq(a: &[u8], b: &[u8], bits: u8) -> bool {
    let full = bits as usize / 8;
    if a[..full] != b[..full] {
        return false;
    }
    let rest = bits % 8;
    rest == 0 || (a[full] ^ b[full]) & (0xffu8 << (8 - rest)) == 0
}

/// Whether a tcp peer passes TCP_ACCEPT_FILTER (no filter: everyone).
pub(crate) fn tcp_peer_allowed(opts: &Options, peer: &SocketAddr) -> bool {
    if opts.tcp_accept_filters.is_empty() {
        return true;
    }
    opts.tcp_accept_filters.iter().any(|(net, bits)| match (net, peer.ip()) {
        (IpAddr::V4(n), IpAddr::V4(p)) => masked_eq(&n.octets(), &p.octets(), *bits),
        (IpAddr::V6(n), IpAddr::V6(p)) => masked_eq(&n.octets(), &p.octets(), *bits),
        _ => false,
    })
}

/// The credentials of the process at the other end of a Unix socket.
pub(crate) fn peer_cred(fd: RawFd) -> Option<libc::ucred> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len)
    };
    (rc == 0).then_some(cred)
}

/// Whether an ipc peer passes IPC_FILTER_* (no filter: everyone).
pub(crate) fn ipc_peer_allowed(opts: &Options, fd: RawFd) -> bool {
    if opts.ipc_filter_uids.is_empty() && opts.ipc_filter_gids.is_empty() && opts.ipc_filter_pids.is_empty() {
        return true;
    }
    let Some(cred) = peer_cred(fd) else {
        return false;
    };
    // The options keep libzmq's C ints; uid/gid compare as the same bits.
    if opts.ipc_filter_uids.contains(&(cred.uid as i32))
        || opts.ipc_filter_gids.contains(&(cred.gid as i32))
        || opts.ipc_filter_pids.contains(&cred.pid)
    {
        return true;
    }
    let Some(user) = user_name(cred.uid) else {
        return false;
    };
    opts.ipc_filter_gids.iter().any(|&g| group_has_member(g as libc::gid_t, &user))
}

/// The name of user `uid` (getpwuid_r: the I/O thread is not the only caller of the non-reentrant form).
fn user_name(uid: libc::uid_t) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: an all-zero passwd is a valid value to be overwritten.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the sizes given; on success `out`
    // points at `pw`, whose strings live in `buf`.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: `pw_name` is a NUL-terminated string inside `buf`, still alive.
    Some(unsafe { CStr::from_ptr(pw.pw_name) }.to_bytes().to_vec())
}

/// Whether `user` is listed as a member of group `gid`.
fn group_has_member(gid: libc::gid_t, user: &[u8]) -> bool {
    let mut buf = vec![0u8; 16384];
    // SAFETY: an all-zero group is a valid value to be overwritten.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: as in `user_name`.
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr().cast(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || gr.gr_mem.is_null() {
        return false;
    }
    let mut p = gr.gr_mem;
    // SAFETY: `gr_mem` is a NULL-terminated array of NUL-terminated strings in `buf`.
    unsafe {
        while !(*p).is_null() {
            if CStr::from_ptr(*p).to_bytes() == user {
                return true;
            }
            p = p.add(1);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_filter_syntax_as_libzmq() {
        assert_eq!(parse_tcp_filter(b"127.0.0.1", false), Some(("127.0.0.1".parse().unwrap(), 32)));
        assert_eq!(parse_tcp_filter(b"127.0.0.1/8", false), Some(("127.0.0.1".parse().unwrap(), 8)));
        assert_eq!(parse_tcp_filter(b"127.0.0.1\0junk", false), Some(("127.0.0.1".parse().unwrap(), 32)));
        assert_eq!(parse_tcp_filter(b"10.0.0.0/33", false), None);
        assert_eq!(parse_tcp_filter(b"::1", false), None, "IPv6 needs the IPV6 option");
        assert_eq!(parse_tcp_filter(b"::1", true), Some(("::1".parse().unwrap(), 128)));
        assert_eq!(parse_tcp_filter(b"localhost", false), None, "numeric only");
        assert_eq!(parse_tcp_filter(b"", false), None);
    }

    #[test]
    fn tcp_filter_matches_masked_addresses() {
        let mut o = Options::default();
        let peer = |s: &str| SocketAddr::new(s.parse().unwrap(), 1);
        assert!(tcp_peer_allowed(&o, &peer("10.1.2.3")), "no filter");
        o.tcp_accept_filters.push(parse_tcp_filter(b"10.1.0.0/17", false).unwrap());
        assert!(tcp_peer_allowed(&o, &peer("10.1.127.3")));
        assert!(!tcp_peer_allowed(&o, &peer("10.1.128.3")));
        assert!(!tcp_peer_allowed(&o, &peer("::1")), "another family");
        o.tcp_accept_filters.push(parse_tcp_filter(b"0.0.0.0/0", false).unwrap());
        assert!(tcp_peer_allowed(&o, &peer("192.168.0.1")));
    }
}
