//! `pgm://` and `epgm://` on OpenPGM: a PUB/XPUB endpoint sends, a SUB/XSUB
//! endpoint receives. The socket settings are libzmq 4.3's (its
//! `pgm_socket.cpp`), so the two interoperate: RATE (kbit/s) caps the
//! original-data rate, RECOVERY_IVL and RATE size the transmit and receive
//! windows, MULTICAST_MAXTPDU is the MTU, MULTICAST_HOPS the TTL; multicast
//! loopback is off and ToS is Expedited Forwarding, as libzmq sets them.

use super::codec::{Decoder, Framing, PgmEncoder};
use super::sys::*;
use crate::channel::pipes::EnginePipe;
use crate::error::Error;
use crate::options::Options;
use crate::transport::packet::{PacketEngine, Step};
use libc::{c_int, c_void, socklen_t};
use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::time::Duration;

/// How often an idle engine looks whether its socket is still there.
const IDLE: Duration = Duration::from_millis(100);

/// `pgm_init` once per process, as libzmq does when a context is made.
/// Every OpenPGM call comes after this, so after the library loaded.
fn init_library() -> Result<(), Error> {
    pgm_api()?;
    static INIT: OnceLock<bool> = OnceLock::new();
    let ok = *INIT.get_or_init(|| {
        let mut err: *mut pgm_error_t = std::ptr::null_mut();
        // SAFETY: pgm_init takes an out-pointer for an error it allocates;
        // it is freed here. Calling it once per process is its contract.
        unsafe {
            let ok = pgm_init(&mut err);
            if !err.is_null() {
                pgm_error_free(err);
            }
            ok
        }
    });
    if ok {
        Ok(())
    } else {
        Err(Error::Io(std::io::Error::other("OpenPGM failed to initialise")))
    }
}

/// Takes (and frees) an OpenPGM error: `(domain, code)`.
fn take_error(err: &mut *mut pgm_error_t) -> Option<(c_int, c_int)> {
    if err.is_null() {
        return None;
    }
    // SAFETY: a non-null error comes from OpenPGM, which allocated it for us
    // to free; it is read once, freed, and the pointer cleared.
    unsafe {
        let e = ((**err).domain, (**err).code);
        pgm_error_free(*err);
        *err = std::ptr::null_mut();
        Some(e)
    }
}

/// What `pgm_getaddrinfo` made of a network string; freed on drop.
struct AddrInfo(*mut pgm_addrinfo_t);

impl Drop for AddrInfo {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful pgm_getaddrinfo and is freed once.
        unsafe { pgm_freeaddrinfo(self.0) }
    }
}

/// C's `atoi` cut to 16 bits, as libzmq reads a pgm port.
fn atoi_u16(s: &str) -> u16 {
    super::atoi(s) as u16
}

/// Parses `[iface;]group[;group...]:port` as libzmq does: the port after the
/// last `:`, the rest (under 255 bytes) handed to `pgm_getaddrinfo`. Any
/// failure is EINVAL, as in libzmq (a port that reads as 0 too).
fn resolve(network: &str) -> Result<(AddrInfo, u16), Error> {
    init_library()?;
    let Some(colon) = network.rfind(':') else {
        return Err(Error::Invalid("pgm endpoint needs a port (network:port)"));
    };
    if colon >= 255 {
        return Err(Error::Invalid("pgm network part too long"));
    }
    let port = atoi_u16(&network[colon + 1..]);
    let net = CString::new(&network[..colon]).map_err(|_| Error::Invalid("NUL in pgm endpoint"))?;
    let mut res: *mut pgm_addrinfo_t = std::ptr::null_mut();
    let mut err: *mut pgm_error_t = std::ptr::null_mut();
    // SAFETY: `net` is a valid C string; res and err are out-pointers this
    // function owns afterwards (AddrInfo frees res, take_error frees err).
    let ok = unsafe { pgm_getaddrinfo(net.as_ptr(), std::ptr::null(), &mut res, &mut err) };
    take_error(&mut err);
    if !ok || res.is_null() {
        return Err(Error::Invalid("pgm network does not resolve to an interface and group"));
    }
    let info = AddrInfo(res);
    if port == 0 {
        return Err(Error::Invalid("pgm port is 0"));
    }
    Ok((info, port))
}

/// Checks an endpoint at connect/bind time, as libzmq does before it makes the engine.
pub(crate) fn check(network: &str) -> Result<(), Error> {
    resolve(network).map(|_| ())
}

/// An open OpenPGM socket; closed (flushing what it still holds) on drop.
struct PgmSock(*mut pgm_sock_t);

// SAFETY: an OpenPGM socket has no thread affinity; it is used by the one
// endpoint thread that owns it after being set up by the caller.
unsafe impl Send for PgmSock {}

impl Drop for PgmSock {
    fn drop(&mut self) {
        // SAFETY: the socket came from pgm_socket and is closed once.
        unsafe {
            pgm_close(self.0, true);
        }
    }
}

impl PgmSock {
    fn set<T>(&self, level: c_int, opt: c_int, v: &T) -> Result<(), Error> {
        // SAFETY: v points to a live T of the size given; OpenPGM copies it.
        let ok = unsafe {
            pgm_setsockopt(self.0, level, opt, (v as *const T).cast(), std::mem::size_of::<T>() as socklen_t)
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Invalid("OpenPGM refused a socket option"))
        }
    }

    fn get_int(&self, opt: c_int) -> Option<c_int> {
        let mut v: c_int = 0;
        let mut len = std::mem::size_of::<c_int>() as socklen_t;
        // SAFETY: v and len are live out-parameters of the sizes OpenPGM expects for int options.
        let ok = unsafe { pgm_getsockopt(self.0, IPPROTO_PGM, opt, (&mut v as *mut c_int).cast(), &mut len) };
        ok.then_some(v)
    }

    /// PGM_RATE_REMAIN / PGM_TIME_REMAIN as a duration.
    fn remaining(&self, opt: c_int) -> Duration {
        let mut tv = libc::timeval { tv_sec: 0, tv_usec: 0 };
        let mut len = std::mem::size_of::<libc::timeval>() as socklen_t;
        // SAFETY: tv and len are live out-parameters of the size OpenPGM writes for these options.
        let ok = unsafe { pgm_getsockopt(self.0, IPPROTO_PGM, opt, (&mut tv as *mut libc::timeval).cast(), &mut len) };
        if !ok {
            return IDLE;
        }
        Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
    }
}

/// libzmq's window size in sequence numbers: RECOVERY_IVL × RATE/8 bytes in TPDUs, at least 1.
fn sqns(o: &Options, tpdu: i32) -> c_int {
    let size = i64::from(o.recovery_ivl.max(0)) * (i64::from(o.rate.max(0)) / 8);
    (size / i64::from(tpdu.max(1))).clamp(1, i64::from(c_int::MAX)) as c_int
}

fn open(udp_encap: bool, network: &str, receiver: bool, o: &Options) -> Result<PgmSock, Error> {
    let (info, port) = resolve(network)?;
    // SAFETY: a successful pgm_getaddrinfo gives at least one send and one
    // receive address; AddrInfo keeps them alive for this function.
    let (family, recv_addrs, send_addr) = unsafe {
        let ai = &*info.0;
        if ai.ai_recv_addrs_len == 0 || ai.ai_send_addrs_len == 0 {
            return Err(Error::Invalid("pgm network has no group"));
        }
        let recv = std::slice::from_raw_parts(ai.ai_recv_addrs, ai.ai_recv_addrs_len as usize);
        (ai.ai_send_addrs.as_ref().map_or(libc::AF_INET as u16, |a| a.gsr_group.ss_family), recv, &*ai.ai_send_addrs)
    };
    let mut raw: *mut pgm_sock_t = std::ptr::null_mut();
    let mut err: *mut pgm_error_t = std::ptr::null_mut();
    let proto = if udp_encap { libc::IPPROTO_UDP } else { IPPROTO_PGM };
    // SAFETY: out-pointers owned here; the socket is wrapped at once.
    let ok = unsafe { pgm_socket(&mut raw, family, libc::SOCK_SEQPACKET, proto, &mut err) };
    let e = take_error(&mut err);
    if !ok || raw.is_null() {
        // Raw IP (pgm://) needs CAP_NET_RAW: say so rather than EINVAL.
        if !udp_encap && e.map(|(_, c)| c) == Some(PGM_ERROR_PERM) {
            return Err(Error::Io(std::io::Error::from_raw_os_error(libc::EPERM)));
        }
        return Err(Error::Invalid("OpenPGM could not create the socket"));
    }
    let sock = PgmSock(raw);
    if udp_encap {
        let p = c_int::from(port);
        sock.set(IPPROTO_PGM, PGM_UDP_ENCAP_UCAST_PORT, &p)?;
        sock.set(IPPROTO_PGM, PGM_UDP_ENCAP_MCAST_PORT, &p)?;
    }
    if o.rcvbuf >= 0 {
        sock.set(libc::SOL_SOCKET, libc::SO_RCVBUF, &o.rcvbuf)?;
    }
    if o.sndbuf >= 0 {
        sock.set(libc::SOL_SOCKET, libc::SO_SNDBUF, &o.sndbuf)?;
    }
    let tpdu: c_int = o.multicast_maxtpdu;
    sock.set(IPPROTO_PGM, PGM_MTU, &tpdu)?;
    let ms = |n: c_int| n * 1000;
    let s = |n: c_int| n * 1_000_000;
    if receiver {
        sock.set(IPPROTO_PGM, PGM_RECV_ONLY, &1 as &c_int)?;
        sock.set(IPPROTO_PGM, PGM_RXW_SQNS, &sqns(o, tpdu))?;
        sock.set(IPPROTO_PGM, PGM_PEER_EXPIRY, &s(300))?;
        sock.set(IPPROTO_PGM, PGM_SPMR_EXPIRY, &ms(25))?;
        sock.set(IPPROTO_PGM, PGM_NAK_BO_IVL, &ms(50))?;
        sock.set(IPPROTO_PGM, PGM_NAK_RPT_IVL, &ms(200))?;
        sock.set(IPPROTO_PGM, PGM_NAK_RDATA_IVL, &ms(200))?;
        sock.set(IPPROTO_PGM, PGM_NAK_DATA_RETRIES, &50 as &c_int)?;
        sock.set(IPPROTO_PGM, PGM_NAK_NCF_RETRIES, &50 as &c_int)?;
    } else {
        let max_rte: c_int = ((i64::from(o.rate) * 1000) / 8).clamp(1, i64::from(c_int::MAX)) as c_int;
        let heartbeat: [c_int; 9] = [ms(100), ms(100), ms(100), ms(100), ms(1300), s(7), s(16), s(25), s(30)];
        sock.set(IPPROTO_PGM, PGM_SEND_ONLY, &1 as &c_int)?;
        sock.set(IPPROTO_PGM, PGM_ODATA_MAX_RTE, &max_rte)?;
        sock.set(IPPROTO_PGM, PGM_TXW_SQNS, &sqns(o, tpdu))?;
        sock.set(IPPROTO_PGM, PGM_AMBIENT_SPM, &s(30))?;
        sock.set(IPPROTO_PGM, PGM_HEARTBEAT_SPM, &heartbeat)?;
    }
    // A random GSI per socket, so two endpoints on one host are distinct sources.
    let mut addr = pgm_sockaddr_t { sa_port: port, ..Default::default() };
    let mut seed = [0u8; 8];
    getrandom::getrandom(&mut seed).map_err(|_| Error::Invalid("no randomness for the PGM GSI"))?;
    // SAFETY: gsi is a 6-byte out-buffer, seed a live 8-byte input.
    if !unsafe { pgm_gsi_create_from_data(&mut addr.sa_addr.gsi, seed.as_ptr(), seed.len()) } {
        return Err(Error::Invalid("OpenPGM could not make a GSI"));
    }
    // SAFETY: an all-zero sockaddr_storage is a valid value.
    let mut if_req: pgm_interface_req_t = unsafe { std::mem::zeroed() };
    if_req.ir_interface = recv_addrs[0].gsr_interface;
    if family == libc::AF_INET6 as u16 {
        // SAFETY: for AF_INET6 the storage holds a sockaddr_in6.
        let sa6: &libc::sockaddr_in6 = unsafe { &*(&recv_addrs[0].gsr_group as *const _ as *const libc::sockaddr_in6) };
        if_req.ir_scope_id = sa6.sin6_scope_id;
    }
    let req_len = std::mem::size_of::<pgm_interface_req_t>() as socklen_t;
    // SAFETY: all pointers are to live values of the sizes given.
    let ok = unsafe {
        pgm_bind3(
            sock.0,
            &addr,
            std::mem::size_of::<pgm_sockaddr_t>() as socklen_t,
            &if_req,
            req_len,
            &if_req,
            req_len,
            &mut err,
        )
    };
    let e = take_error(&mut err);
    if !ok {
        return Err(match e {
            Some((_, PGM_ERROR_NODEV)) => Error::Io(std::io::Error::from_raw_os_error(libc::ENODEV)),
            _ => Error::Invalid("OpenPGM could not bind to the interface"),
        });
    }
    for r in recv_addrs {
        // SAFETY: a group_req is the head of a group_source_req, as libzmq passes it.
        let ok = unsafe {
            pgm_setsockopt(sock.0, IPPROTO_PGM, PGM_JOIN_GROUP, (r as *const group_source_req).cast(), GROUP_REQ_LEN)
        };
        if !ok {
            return Err(Error::Invalid("OpenPGM could not join the group"));
        }
    }
    // SAFETY: as above.
    let ok = unsafe {
        pgm_setsockopt(
            sock.0,
            IPPROTO_PGM,
            PGM_SEND_GROUP,
            (send_addr as *const group_source_req).cast(),
            GROUP_REQ_LEN,
        )
    };
    if !ok {
        return Err(Error::Invalid("OpenPGM could not set the send group"));
    }
    drop(info);
    sock.set(IPPROTO_PGM, PGM_MULTICAST_LOOP, &0 as &c_int)?;
    sock.set(IPPROTO_PGM, PGM_MULTICAST_HOPS, &o.multicast_hops)?;
    if family != libc::AF_INET6 as u16 {
        // Expedited Forwarding, as libzmq asks; kernels may refuse it, which is fine.
        let _ = sock.set(IPPROTO_PGM, PGM_TOS, &((0x2e << 2) as c_int));
    }
    sock.set(IPPROTO_PGM, PGM_NOBLOCK, &1 as &c_int)?;
    // SAFETY: err is an out-pointer freed by take_error.
    let ok = unsafe { pgm_connect(sock.0, &mut err) };
    take_error(&mut err);
    if !ok {
        return Err(Error::Invalid("OpenPGM could not start the session"));
    }
    Ok(sock)
}

/// Opens the socket in the caller's thread (so errors reach connect/bind);
/// an I/O thread then runs the engine.
pub(crate) fn engine(
    udp_encap: bool,
    network: &str,
    sender: bool,
    o: &Options,
    pipe: EnginePipe,
) -> Result<Box<dyn PacketEngine>, Error> {
    let sock = open(udp_encap, network, !sender, o)?;
    let fd = |opt| sock.get_int(opt).unwrap_or(-1);
    if sender {
        let fds = [
            (fd(PGM_SEND_SOCK), true),
            (fd(PGM_RECV_SOCK), false),
            (fd(PGM_REPAIR_SOCK), false),
            (fd(PGM_PENDING_SOCK), false),
        ];
        let mss = sock.get_int(PGM_MSS).unwrap_or(1400).max(3) as usize;
        Ok(Box::new(Sender { fds: fds.to_vec(), mss, sock, pipe, enc: PgmEncoder::new(), apdu: None }))
    } else {
        let fds = vec![(fd(PGM_RECV_SOCK), false), (fd(PGM_PENDING_SOCK), false)];
        Ok(Box::new(Receiver { fds, sock, pipe, peers: HashMap::new(), buf: vec![0u8; 65536], maxmsg: o.maxmsgsize }))
    }
}

/// PUB/XPUB: the socket's messages, cut into APDUs at the rate allowed;
/// NAKs from receivers are served (repairs) between sends.
struct Sender {
    fds: Vec<(RawFd, bool)>,
    mss: usize,
    enc: PgmEncoder,
    apdu: Option<Vec<u8>>,
    // Dropped after `pipe`'s fields are done with: the socket flushes on close.
    pipe: EnginePipe,
    sock: PgmSock,
}

impl PacketEngine for Sender {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        self.fds.clone()
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        let sock = &self.sock;
        let mut timer: Option<Duration> = None;
        // Upstream: NAKs and SPMRs (nothing is ever delivered on a send-only socket).
        let mut scratch = [0u8; 64];
        let mut read = 0usize;
        let mut err: *mut pgm_error_t = std::ptr::null_mut();
        // SAFETY: scratch is a live buffer of the length given; from is not asked for.
        let st = unsafe {
            pgm_recvfrom(
                sock.0,
                scratch.as_mut_ptr().cast::<c_void>(),
                scratch.len(),
                0,
                &mut read,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut err,
            )
        };
        take_error(&mut err);
        match st {
            PGM_IO_STATUS_TIMER_PENDING => timer = Some(sock.remaining(PGM_TIME_REMAIN)),
            PGM_IO_STATUS_RATE_LIMITED => timer = Some(sock.remaining(PGM_RATE_REMAIN)),
            _ => {}
        }
        loop {
            while self.enc.queued() < self.mss {
                match self.pipe.out.read() {
                    Some(m) if m.is_internal() => {}
                    Some(m) => self.enc.push(m.as_slice(), m.more()),
                    None => break,
                }
            }
            if self.apdu.is_none() {
                self.apdu = self.enc.next_apdu(self.mss);
            }
            let Some(a) = self.apdu.as_ref() else { break };
            let mut written = 0usize;
            // SAFETY: a is a live buffer of the length given.
            let st = unsafe { pgm_send(sock.0, a.as_ptr().cast(), a.len(), &mut written) };
            match st {
                PGM_IO_STATUS_NORMAL => self.apdu = None,
                PGM_IO_STATUS_RATE_LIMITED => {
                    let t = sock.remaining(PGM_RATE_REMAIN);
                    timer = Some(timer.map_or(t, |x| x.min(t)));
                    break;
                }
                // The send socket's writable edge runs this again.
                PGM_IO_STATUS_WOULD_BLOCK | PGM_IO_STATUS_CONGESTION => break,
                // An APDU OpenPGM will not take is dropped, as a lossy link would.
                _ => self.apdu = None,
            }
        }
        if self.apdu.is_none() && self.enc.queued() == 0 && self.pipe.out.is_terminated() {
            return Step::Done;
        }
        Step::Wait(Some(timer.unwrap_or(IDLE).min(IDLE)))
    }
}

/// One source (by TSI): `None` until a packet shows where a message starts.
type Peers = HashMap<pgm_tsi_t, Option<Decoder>>;

/// SUB/XSUB: APDUs from every source, each joined at its first message
/// start; a gap (data loss) or a bad frame drops the source back to
/// waiting for the next start. Subscriptions from the socket are dropped
/// (PGM has no upstream for them; SUB filters locally).
struct Receiver {
    fds: Vec<(RawFd, bool)>,
    peers: Peers,
    buf: Vec<u8>,
    maxmsg: Option<u64>,
    pipe: EnginePipe,
    sock: PgmSock,
}

impl PacketEngine for Receiver {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        self.fds.clone()
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        while self.pipe.out.read().is_some() {}
        if self.pipe.inn.is_reader_gone() || self.pipe.out.is_terminated() {
            return Step::Done;
        }
        // Bounded, so one busy source cannot hold the I/O thread.
        for _ in 0..256 {
            let mut read = 0usize;
            let mut from = pgm_sockaddr_t::default();
            let mut fromlen = std::mem::size_of::<pgm_sockaddr_t>() as socklen_t;
            let mut err: *mut pgm_error_t = std::ptr::null_mut();
            // SAFETY: buf, from and fromlen are live out-parameters of the sizes given.
            let st = unsafe {
                pgm_recvfrom(
                    self.sock.0,
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    0,
                    &mut read,
                    &mut from,
                    &mut fromlen,
                    &mut err,
                )
            };
            take_error(&mut err);
            match st {
                PGM_IO_STATUS_NORMAL => {
                    deliver(&mut self.peers, from.sa_addr, &self.buf[..read], self.maxmsg, &mut self.pipe)
                }
                PGM_IO_STATUS_RESET => {
                    // Data loss: every source rejoins at its next message start.
                    for d in self.peers.values_mut() {
                        *d = None;
                    }
                }
                PGM_IO_STATUS_TIMER_PENDING => return Step::Wait(Some(self.sock.remaining(PGM_TIME_REMAIN).min(IDLE))),
                PGM_IO_STATUS_RATE_LIMITED => return Step::Wait(Some(self.sock.remaining(PGM_RATE_REMAIN).min(IDLE))),
                _ => return Step::Wait(Some(IDLE)),
            }
        }
        // More may be waiting: run again at once.
        Step::Again
    }
}

fn deliver(peers: &mut Peers, tsi: pgm_tsi_t, apdu: &[u8], maxmsg: Option<u64>, pipe: &mut EnginePipe) {
    if apdu.len() < 2 {
        return;
    }
    let offset = usize::from(u16::from_be_bytes([apdu[0], apdu[1]]));
    let mut data = &apdu[2..];
    let slot = peers.entry(tsi).or_insert(None);
    if slot.is_none() {
        if offset == 0xffff || offset > data.len() {
            return;
        }
        data = &data[offset..];
        *slot = Some(Decoder::new(Framing::V1, maxmsg));
    }
    let Some(dec) = slot.as_mut() else { return };
    let res = dec.feed(data, |frames| super::push_message(pipe, frames));
    if res.is_err() {
        *slot = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_read_as_atoi() {
        assert_eq!(atoi_u16("5555"), 5555);
        assert_eq!(atoi_u16("70000"), 4464);
        assert_eq!(atoi_u16("x"), 0);
        assert_eq!(atoi_u16("12ab"), 12);
    }

    #[test]
    fn bad_networks_are_einval() {
        for bad in ["239.192.1.1", "lo;239.192.1.1:0", "nosuchif0;239.192.1.1:5555", "lo;239.192.1.1:x"] {
            assert_eq!(check(bad).unwrap_err().errno(), libc::EINVAL, "{bad}");
        }
    }

    #[test]
    fn window_is_libzmqs() {
        let o = Options::default();
        // 10 s at 100 kbit/s in 1500-byte TPDUs, as libzmq computes it.
        assert_eq!(sqns(&o, 1500), (10_000 * (100 / 8)) / 1500);
    }
}
