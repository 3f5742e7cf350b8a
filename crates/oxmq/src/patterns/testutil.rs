//! Test harness: a pattern with in-memory pipes, driven the way the socket
//! drives it, and peers that act on the far ends of those pipes.

use super::{new_pattern, Pattern};
use crate::channel::pipes::{new_pipe_key, PipeId, Pipes, SocketPipe};
use crate::error::Error;
use crate::msg::{Msg, FLAG_CANCEL, FLAG_ROUTING_ID, FLAG_SUBSCRIBE};
use crate::options::Options;
use crate::pipe::{pipe, PipeReader, PipeWriter, WakeSlot};
use oxmq_proto::SocketType;

pub(crate) struct Harness {
    pub(crate) pattern: Box<dyn Pattern>,
    pub(crate) pipes: Pipes,
}

/// The far side of one connection.
pub(crate) struct Peer {
    pub(crate) id: PipeId,
    /// Into the socket.
    pub(crate) tx: Option<PipeWriter>,
    /// Out of the socket.
    pub(crate) rx: Option<PipeReader>,
}

impl Harness {
    pub(crate) fn new(kind: SocketType) -> Harness {
        Harness { pattern: new_pattern(kind, &Options::default()), pipes: Pipes::default() }
    }

    /// Connect a peer; `hwm` applies to both directions. `rid`: the routing-id
    /// frame the peer's side puts first (None: no such frame).
    pub(crate) fn connect_with(&mut self, hwm: usize, rid: Option<&[u8]>) -> Peer {
        let (out_w, out_r) = pipe(hwm, WakeSlot::new(), WakeSlot::new());
        let (mut in_w, in_r) = pipe(hwm, WakeSlot::new(), WakeSlot::new());
        if let Some(rid) = rid {
            in_w.write(Msg::from_slice(rid).with_flags(FLAG_ROUTING_ID));
            in_w.flush();
        }
        let id = self.pipes.insert(SocketPipe::new(out_w, in_r, 0, new_pipe_key()));
        self.pattern.attach(id, &mut self.pipes);
        self.reap();
        Peer { id, tx: Some(in_w), rx: Some(out_r) }
    }

    pub(crate) fn connect(&mut self, hwm: usize) -> Peer {
        self.connect_with(hwm, Some(b""))
    }

    /// Detach the pipes the pattern found dead, as the socket does.
    pub(crate) fn reap(&mut self) {
        while let Some(id) = self.pipes.dead.pop() {
            if self.pipes.contains(id) {
                self.pattern.detach(id, &mut self.pipes);
                self.pipes.remove(id);
            }
        }
    }

    pub(crate) fn alive(&self, p: &Peer) -> bool {
        self.pipes.contains(p.id)
    }

    /// Deliver `read_activated` for `p` (what the socket does on a wake-up).
    pub(crate) fn activate_read(&mut self, p: &Peer) {
        if self.pipes.contains(p.id) {
            self.pattern.read_activated(p.id, &mut self.pipes);
            if self.pipes.get(p.id).is_terminated() {
                self.pipes.mark_dead(p.id);
            }
        }
        self.reap();
    }

    pub(crate) fn activate_write(&mut self, p: &Peer) {
        if self.pipes.contains(p.id) {
            self.pattern.write_activated(p.id, &mut self.pipes);
        }
        self.reap();
    }

    pub(crate) fn send_frame(&mut self, body: &[u8], more: bool) -> Result<(), Error> {
        let r = self.pattern.send(Msg::from_slice(body).with_more(more), &mut self.pipes).map_err(|(_, e)| e);
        self.reap();
        r
    }

    /// Send a multipart message; stops at the first error.
    pub(crate) fn send(&mut self, frames: &[&[u8]]) -> Result<(), Error> {
        for (i, f) in frames.iter().enumerate() {
            self.send_frame(f, i + 1 < frames.len())?;
        }
        Ok(())
    }

    pub(crate) fn recv_frame(&mut self) -> Result<Msg, Error> {
        let r = self.pattern.recv(&mut self.pipes);
        self.reap();
        r
    }

    /// Receive one whole message.
    pub(crate) fn recv(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        let mut out = Vec::new();
        loop {
            let m = self.recv_frame()?;
            out.push(m.to_vec());
            if !m.more() {
                return Ok(out);
            }
        }
    }

    pub(crate) fn has_in(&mut self) -> bool {
        self.pattern.has_in(&mut self.pipes)
    }

    pub(crate) fn has_out(&mut self) -> bool {
        self.pattern.has_out(&mut self.pipes)
    }

    pub(crate) fn set_int(&mut self, option: i32, v: i32) -> Result<bool, Error> {
        self.pattern.set_option(option, &v.to_ne_bytes(), &mut self.pipes)
    }

    pub(crate) fn set_bytes(&mut self, option: i32, v: &[u8]) -> Result<bool, Error> {
        self.pattern.set_option(option, v, &mut self.pipes)
    }
}

pub(crate) fn m(frames: &[&[u8]]) -> Vec<Vec<u8>> {
    frames.iter().map(|f| f.to_vec()).collect()
}

impl Peer {
    /// Send a multipart message into the socket (without activation).
    pub(crate) fn put(&mut self, frames: &[&[u8]]) {
        let tx = self.tx.as_mut().unwrap();
        for (i, f) in frames.iter().enumerate() {
            tx.write(Msg::from_slice(f).with_more(i + 1 < frames.len()));
        }
        tx.flush();
    }

    /// Send and deliver `read_activated`.
    pub(crate) fn send(&mut self, h: &mut Harness, frames: &[&[u8]]) {
        self.put(frames);
        h.activate_read(self);
    }

    pub(crate) fn subscribe(&mut self, h: &mut Harness, topic: &[u8], on: bool) {
        let flag = if on { FLAG_SUBSCRIBE } else { FLAG_CANCEL };
        let tx = self.tx.as_mut().unwrap();
        tx.write(Msg::from_slice(topic).with_flags(flag));
        tx.flush();
        h.activate_read(self);
    }

    /// Every frame the socket wrote so far.
    pub(crate) fn frames(&mut self) -> Vec<Msg> {
        let rx = self.rx.as_mut().unwrap();
        let mut v = Vec::new();
        while let Some(m) = rx.read() {
            v.push(m);
        }
        v
    }

    /// Every whole message the socket wrote so far (bodies only).
    pub(crate) fn msgs(&mut self) -> Vec<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        for f in self.frames() {
            cur.push(f.to_vec());
            if !f.more() {
                out.push(std::mem::take(&mut cur));
            }
        }
        assert!(cur.is_empty(), "partial message visible to the peer");
        out
    }

    /// Subscription traffic: (subscribe?, topic).
    pub(crate) fn subs(&mut self) -> Vec<(bool, Vec<u8>)> {
        self.frames()
            .into_iter()
            .map(|f| {
                assert!(f.is_subscribe() || f.is_cancel(), "not a subscription: {f:?}");
                (f.is_subscribe(), f.to_vec())
            })
            .collect()
    }

    /// The peer goes away (both directions).
    pub(crate) fn close(&mut self) {
        self.tx = None;
        self.rx = None;
    }
}
