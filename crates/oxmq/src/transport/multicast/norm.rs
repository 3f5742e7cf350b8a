//! `norm://[id,][iface;]addr:port` on the NRL NORM library, set up as libzmq
//! 4.3 sets it (its `norm_engine.cpp`): one NORM instance and session per
//! endpoint, TTL 255 and loopback on for multicast, a 2 MiB stream buffer,
//! 1400-byte segments with 16+4 FEC, congestion control on the sender,
//! stream sync on the receiver. PUB/XPUB send, SUB/XSUB receive.

use super::codec::{put_v2_frame, Decoder};
use super::sys::*;
use crate::channel::pipes::EnginePipe;
use crate::error::Error;
use crate::options::Options;
use crate::transport::packet::{PacketEngine, Step};
use libc::{c_char, c_uint};
use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::RawFd;
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
    // Every NORM call comes after this, so after the library loaded.
    norm_api()?;
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

/// Opens the NORM session in the caller's thread (so errors reach
/// connect/bind); an I/O thread then runs the engine on NORM's descriptor.
pub(crate) fn engine(
    network: &str,
    sender: bool,
    o: &Options,
    pipe: EnginePipe,
) -> Result<Box<dyn PacketEngine>, Error> {
    let norm = open(network, sender)?;
    if sender {
        Ok(Box::new(Sender { pipe, tx_ready: true, frame: Vec::new(), written: 0, in_message: false, norm }))
    } else {
        Ok(Box::new(Receiver { pipe, streams: HashMap::new(), buf: vec![0u8; 8192], maxmsg: o.maxmsgsize, norm }))
    }
}

fn descriptor(norm: &Norm) -> Vec<(RawFd, bool)> {
    // SAFETY: the instance is live.
    vec![(unsafe { NormGetDescriptor(norm.instance) }, false)]
}

fn next_event(norm: &Norm) -> Option<NormEvent> {
    let mut ev = NormEvent { kind: 0, session: NORM_INVALID, sender: NORM_INVALID, object: NORM_INVALID };
    // SAFETY: ev is a live out-parameter; no wait, so this never blocks.
    unsafe { NormGetNextEvent(norm.instance, &mut ev, false) }.then_some(ev)
}

/// PUB/XPUB: each frame is written to the NORM stream behind its sync
/// byte, then the stream is flushed as the end of a NORM message.
struct Sender {
    pipe: EnginePipe,
    tx_ready: bool,
    frame: Vec<u8>,
    written: usize,
    in_message: bool,
    norm: Norm,
}

impl PacketEngine for Sender {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        descriptor(&self.norm)
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        while let Some(ev) = next_event(&self.norm) {
            match ev.kind {
                NORM_TX_QUEUE_VACANCY | NORM_TX_QUEUE_EMPTY => self.tx_ready = true,
                // SAFETY: the node handle comes with the event.
                NORM_REMOTE_SENDER_INACTIVE => unsafe { NormNodeDelete(ev.sender) },
                _ => {}
            }
        }
        while self.tx_ready {
            if self.written == self.frame.len() {
                let Some(m) = self.pipe.out.read() else { break };
                if m.is_internal() {
                    continue;
                }
                self.frame.clear();
                self.frame.push(if self.in_message { 0xff } else { 0x00 });
                put_v2_frame(&mut self.frame, m.as_slice(), m.more());
                self.in_message = m.more();
                self.written = 0;
            }
            let rest = &self.frame[self.written..];
            let len = c_uint::try_from(rest.len()).unwrap_or(c_uint::MAX);
            // SAFETY: rest is a live buffer of at least len bytes; NORM copies what it takes.
            let n = unsafe { NormStreamWrite(self.norm.stream, rest.as_ptr().cast::<c_char>(), len) };
            self.written += n as usize;
            if self.written < self.frame.len() {
                // NORM_TX_QUEUE_VACANCY resumes.
                self.tx_ready = false;
                break;
            }
            // Each frame ends a NORM message, where a late receiver may start.
            // SAFETY: the stream is live.
            unsafe { NormStreamFlush(self.norm.stream, true, NORM_FLUSH_ACTIVE) };
        }
        if self.written == self.frame.len() && self.pipe.out.is_terminated() {
            return Step::Done;
        }
        Step::Wait(Some(IDLE))
    }
}

/// One incoming stream: `None` until a message start has been found.
type Streams = HashMap<usize, Option<Decoder>>;

/// SUB/XSUB: every sender's stream, joined at a message start (a 0x00 sync
/// byte) and rejoined after a gap or a bad frame.
struct Receiver {
    pipe: EnginePipe,
    streams: Streams,
    buf: Vec<u8>,
    maxmsg: Option<u64>,
    norm: Norm,
}

impl PacketEngine for Receiver {
    fn fds(&self) -> Vec<(RawFd, bool)> {
        descriptor(&self.norm)
    }

    fn pipe(&mut self) -> &mut EnginePipe {
        &mut self.pipe
    }

    fn step(&mut self) -> Step {
        while self.pipe.out.read().is_some() {}
        if self.pipe.inn.is_reader_gone() || self.pipe.out.is_terminated() {
            return Step::Done;
        }
        while let Some(ev) = next_event(&self.norm) {
            match ev.kind {
                NORM_RX_OBJECT_NEW | NORM_RX_OBJECT_UPDATED => {
                    read_stream(&mut self.streams, ev.object, &mut self.buf, self.maxmsg, &mut self.pipe)
                }
                NORM_RX_OBJECT_ABORTED => {
                    self.streams.remove(&(ev.object as usize));
                }
                NORM_REMOTE_SENDER_INACTIVE => {
                    // SAFETY: the node handle comes with the event.
                    unsafe { NormNodeDelete(ev.sender) }
                }
                _ => {}
            }
        }
        Step::Wait(Some(IDLE))
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
