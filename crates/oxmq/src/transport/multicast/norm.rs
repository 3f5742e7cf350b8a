//! `norm://[id,][iface;]addr:port` on the NRL NORM library, set up as libzmq
//! 4.3 sets it (its `norm_engine.cpp`): one NORM instance and session per
//! endpoint, TTL 255 and loopback on for multicast, a 2 MiB stream buffer,
//! 1400-byte segments with 16+4 FEC, congestion control on the sender,
//! stream sync on the receiver. PUB/XPUB send, SUB/XSUB receive.

use super::codec::{put_v2_frame, Decoder};
use super::sys::*;
use super::{poll_fds, EventFd};
use crate::error::Error;
use crate::io::EnginePipe;
use crate::options::Options;
use libc::{c_char, c_uint};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

const IDLE: Duration = Duration::from_millis(100);
const BUFFER: u32 = 2 * 1024 * 1024;

/// The parts of a norm endpoint.
#[derive(Debug, PartialEq, Eq)]
struct NormAddr {
    node_id: u32,
    iface: Option<String>,
    addr: String,
    port: u16,
}

/// libzmq's reading: an optional `id,` (atoi), an optional `iface;`, then
/// `addr:port` split at the last `:` (the port through atoi). Only a missing
/// `:` is an error there (EINVAL); the rest is the NORM library's to judge.
fn parse(network: &str) -> Result<NormAddr, Error> {
    let (node_id, rest) = match network.split_once(',') {
        Some((id, rest)) => (super::atoi(id) as u32, rest),
        None => (NORM_NODE_ANY, network),
    };
    let (iface, addr_port) = match rest.split_once(';') {
        Some((i, a)) => (Some(i.to_string()), a),
        None => (None, rest),
    };
    let Some(colon) = addr_port.rfind(':') else {
        return Err(Error::Invalid("norm endpoint needs a port (addr:port)"));
    };
    let port = super::atoi(&addr_port[colon + 1..]) as u16;
    Ok(NormAddr { node_id, iface, addr: addr_port[..colon].to_string(), port })
}

pub(crate) fn check(network: &str) -> Result<(), Error> {
    parse(network).map(|_| ())
}

/// A NORM instance with its session (and stream, when sending); stopped
/// and destroyed on drop.
struct Norm {
    instance: NormHandle,
    session: NormHandle,
    stream: NormHandle,
    sender: bool,
}

// SAFETY: NORM's API is thread-safe (it serialises calls into its own
// protocol thread); the handles are used by one endpoint thread after set-up.
unsafe impl Send for Norm {}

impl Drop for Norm {
    fn drop(&mut self) {
        // SAFETY: handles created by this value, each released once, in the order NORM documents.
        unsafe {
            if self.session != NORM_INVALID {
                if self.sender {
                    NormStopSender(self.session);
                } else {
                    NormStopReceiver(self.session);
                }
                NormDestroySession(self.session);
            }
            NormStopInstance(self.instance);
            NormDestroyInstance(self.instance);
        }
    }
}

fn open(network: &str, sender: bool) -> Result<Norm, Error> {
    let a = parse(network)?;
    let addr = CString::new(a.addr.as_str()).map_err(|_| Error::Invalid("NUL in norm endpoint"))?;
    let iface = match &a.iface {
        Some(i) => Some(CString::new(i.as_str()).map_err(|_| Error::Invalid("NUL in norm endpoint"))?),
        None => None,
    };
    let fail = |what: &'static str| Error::Io(std::io::Error::other(what));
    // SAFETY: plain constructor; a null handle is failure.
    let instance = unsafe { NormCreateInstance(false) };
    if instance == NORM_INVALID {
        return Err(fail("NORM could not create an instance"));
    }
    let mut norm = Norm { instance, session: NORM_INVALID, stream: NORM_INVALID, sender };
    // SAFETY: instance is live; addr a valid C string NORM copies.
    norm.session = unsafe { NormCreateSession(instance, addr.as_ptr(), a.port, a.node_id) };
    if norm.session == NORM_INVALID {
        return Err(Error::Invalid("NORM could not create a session for the address"));
    }
    let s = norm.session;
    // SAFETY: s is a live session; strings are valid C strings NORM copies.
    unsafe {
        if NormIsUnicastAddress(addr.as_ptr()) {
            NormSetDefaultUnicastNack(s, true);
        } else {
            NormSetTTL(s, 255);
            NormSetRxPortReuse(s, true, std::ptr::null(), std::ptr::null(), 0);
            NormSetLoopback(s, true);
            if let Some(i) = &iface {
                NormSetMulticastInterface(s, i.as_ptr());
            }
        }
        if sender {
            if !NormStartSender(s, NormGetRandomSessionId(), BUFFER, 1400, 16, 4, 0) {
                return Err(fail("NORM could not start the sender"));
            }
            NormSetCongestionControl(s, true, true);
            norm.stream = NormStreamOpen(s, BUFFER, std::ptr::null(), 0);
            if norm.stream == NORM_INVALID {
                return Err(fail("NORM could not open the stream"));
            }
        } else {
            NormSetDefaultSyncPolicy(s, NORM_SYNC_STREAM);
            if !NormStartReceiver(s, BUFFER) {
                return Err(fail("NORM could not start the receiver"));
            }
        }
    }
    Ok(norm)
}

pub(crate) fn spawn(network: &str, sender: bool, o: &Options, pipe: EnginePipe) -> Result<(), Error> {
    let norm = open(network, sender)?;
    let wake = Arc::new(EventFd::new()?);
    let maxmsg = o.maxmsgsize;
    let res = if sender {
        pipe.out.reader_wake().set(wake.clone());
        std::thread::Builder::new().name("oxmq-norm".into()).spawn(move || run_sender(norm, pipe, wake))
    } else {
        std::thread::Builder::new().name("oxmq-norm".into()).spawn(move || run_receiver(norm, pipe, wake, maxmsg))
    };
    res.map(|_| ()).map_err(Error::Io)
}

fn wait(norm: &Norm, wake: &EventFd) {
    // SAFETY: the instance is live.
    let nfd = unsafe { NormGetDescriptor(norm.instance) };
    let mut fds = [
        libc::pollfd { fd: wake.fd(), events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: nfd, events: libc::POLLIN, revents: 0 },
    ];
    poll_fds(&mut fds, IDLE.as_millis() as i32);
    wake.drain();
}

fn next_event(norm: &Norm) -> Option<NormEvent> {
    let mut ev = NormEvent { kind: 0, session: NORM_INVALID, sender: NORM_INVALID, object: NORM_INVALID };
    // SAFETY: ev is a live out-parameter; no wait, so this never blocks.
    unsafe { NormGetNextEvent(norm.instance, &mut ev, false) }.then_some(ev)
}

fn run_sender(norm: Norm, mut pipe: EnginePipe, wake: Arc<EventFd>) {
    let mut tx_ready = true;
    let mut frame: Vec<u8> = Vec::new();
    let mut written = 0usize;
    let mut in_message = false;
    loop {
        while let Some(ev) = next_event(&norm) {
            match ev.kind {
                NORM_TX_QUEUE_VACANCY | NORM_TX_QUEUE_EMPTY => tx_ready = true,
                // SAFETY: the node handle comes with the event.
                NORM_REMOTE_SENDER_INACTIVE => unsafe { NormNodeDelete(ev.sender) },
                _ => {}
            }
        }
        while tx_ready {
            if written == frame.len() {
                let Some(m) = pipe.out.read() else { break };
                if m.is_internal() {
                    continue;
                }
                frame.clear();
                frame.push(if in_message { 0xff } else { 0x00 });
                put_v2_frame(&mut frame, m.as_slice(), m.more());
                in_message = m.more();
                written = 0;
            }
            let rest = &frame[written..];
            let len = c_uint::try_from(rest.len()).unwrap_or(c_uint::MAX);
            // SAFETY: rest is a live buffer of at least len bytes; NORM copies what it takes.
            let n = unsafe { NormStreamWrite(norm.stream, rest.as_ptr().cast::<c_char>(), len) };
            written += n as usize;
            if written < frame.len() {
                tx_ready = false;
                break;
            }
            // Each frame ends a NORM message, where a late receiver may start.
            // SAFETY: the stream is live.
            unsafe { NormStreamFlush(norm.stream, true, NORM_FLUSH_ACTIVE) };
        }
        if written == frame.len() && pipe.out.is_terminated() {
            return;
        }
        wait(&norm, &wake);
    }
}

/// One incoming stream: `None` until a message start has been found.
type Streams = HashMap<usize, Option<Decoder>>;

fn run_receiver(norm: Norm, mut pipe: EnginePipe, wake: Arc<EventFd>, maxmsg: Option<u64>) {
    let mut streams: Streams = HashMap::new();
    let mut buf = vec![0u8; 8192];
    loop {
        while pipe.out.read().is_some() {}
        if pipe.inn.is_reader_gone() || pipe.out.is_terminated() {
            return;
        }
        while let Some(ev) = next_event(&norm) {
            match ev.kind {
                NORM_RX_OBJECT_NEW | NORM_RX_OBJECT_UPDATED => {
                    read_stream(&mut streams, ev.object, &mut buf, maxmsg, &mut pipe)
                }
                NORM_RX_OBJECT_ABORTED => {
                    streams.remove(&(ev.object as usize));
                }
                NORM_REMOTE_SENDER_INACTIVE => {
                    // SAFETY: the node handle comes with the event.
                    unsafe { NormNodeDelete(ev.sender) }
                }
                _ => {}
            }
        }
        wait(&norm, &wake);
    }
}

fn read_stream(streams: &mut Streams, obj: NormHandle, buf: &mut [u8], maxmsg: Option<u64>, pipe: &mut EnginePipe) {
    let slot = streams.entry(obj as usize).or_insert(None);
    loop {
        if slot.is_none() {
            // SAFETY: obj is a live stream handle from a NORM event.
            if !unsafe { NormStreamSeekMsgStart(obj) } {
                return;
            }
            let mut sync = 0u8;
            let mut n: c_uint = 1;
            // SAFETY: a one-byte out-buffer.
            let ok = unsafe { NormStreamRead(obj, (&mut sync as *mut u8).cast(), &mut n) };
            if !ok || n == 0 {
                return;
            }
            if sync == 0 {
                *slot = Some(Decoder::norm_synced(maxmsg));
            }
            continue;
        }
        let mut n = buf.len() as c_uint;
        // SAFETY: buf is a live out-buffer of n bytes.
        let ok = unsafe { NormStreamRead(obj, buf.as_mut_ptr().cast(), &mut n) };
        if !ok {
            // A gap in the stream: look for the next message start.
            *slot = None;
            continue;
        }
        if n == 0 {
            return;
        }
        let Some(dec) = slot.as_mut() else { return };
        if dec.feed(&buf[..n as usize], |frames| super::push_message(pipe, frames)).is_err() {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_read_as_libzmq_reads_them() {
        assert_eq!(
            parse("7,lo;239.192.1.1:5556").unwrap(),
            NormAddr { node_id: 7, iface: Some("lo".into()), addr: "239.192.1.1".into(), port: 5556 }
        );
        assert_eq!(
            parse("239.192.1.1:5556").unwrap(),
            NormAddr { node_id: NORM_NODE_ANY, iface: None, addr: "239.192.1.1".into(), port: 5556 }
        );
        assert_eq!(check("lo;239.192.1.1").unwrap_err().errno(), libc::EINVAL);
    }
}
