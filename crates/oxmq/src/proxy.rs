//! The proxy (libzmq 4.3's `zmq_proxy` / `zmq_proxy_steerable`), the one
//! every binding calls: the C ABI, Python's `proxy`, `proxy_steerable` and
//! `monitored_queue`, and the devices built on them.
//!
//! Whole multipart messages move from a readable side to the other while
//! that side can take them, a burst at a time, each frame moved (never
//! copied) from the receive to the send. A capture sees a copy of every
//! frame, and of every control command, as libzmq's capture socket does.
//!
//! Steering is libzmq 4.3.5's: one-frame commands on the control socket,
//! `PAUSE` (stop forwarding, keep serving commands), `RESUME`, `TERMINATE`
//! (return `Ok`) and `STATISTICS` (reply with eight native-endian u64
//! frames: frontend messages in, bytes in, messages out, bytes out, then
//! the same for the backend; a multipart message counts once, with the sum
//! of its frame sizes). Every other frame read from the control socket,
//! unknown ones included, is answered with one empty frame and leaves the
//! state as it was, so a REP control socket serves any sequence of commands
//! (libzmq 4.3.5's own test_proxy_steerable steers through REQ/REP). Each
//! frame of a multipart command is read as a command of its own, as libzmq
//! reads one frame per command. libzmq 4.3.5 swaps PAUSE and RESUME (its
//! comparison of "PAUSE" is inverted); oxmq keeps the documented meaning.
//!
//! The proxy waits through [`crate::poll_with`]: the caller's [`WaitHook`]
//! says what a signal means (a language runtime runs its handlers there).

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{opt, POLLIN, POLLOUT};
use crate::poll::{poll, poll_with, PollItem};
use crate::socket::{Socket, DONTWAIT, SNDMORE};
use crate::wait::{CoreWait, WaitHook};
use oxmq_proto::SocketType;

/// Messages forwarded per readiness before looking at the other side (libzmq's burst).
const BURST: usize = 1000;

/// One side of the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first socket (`frontend`).
    Frontend,
    /// The second socket (`backend`).
    Backend,
}

/// Counters of one side, as libzmq's STATISTICS reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideStats {
    /// Messages received on this side.
    pub msg_in: u64,
    /// Bytes of the messages received on this side.
    pub bytes_in: u64,
    /// Messages sent on this side.
    pub msg_out: u64,
    /// Bytes of the messages sent on this side.
    pub bytes_out: u64,
}

/// Both sides' counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// The frontend's counters.
    pub frontend: SideStats,
    /// The backend's counters.
    pub backend: SideStats,
}

impl ProxyStats {
    /// The eight values of a STATISTICS reply, in libzmq's order.
    pub fn values(&self) -> [u64; 8] {
        let (f, b) = (&self.frontend, &self.backend);
        [f.msg_in, f.bytes_in, f.msg_out, f.bytes_out, b.msg_in, b.bytes_in, b.msg_out, b.bytes_out]
    }
}

/// Sees every frame the proxy forwards, and each control command.
pub trait Capture {
    /// `frame` was forwarded from `from` (`None`: a control command);
    /// `more` says whether more frames of its message follow. An error ends
    /// the proxy with it.
    fn capture(&mut self, from: Option<Side>, frame: &Msg, more: bool) -> Result<()>;
}

/// Captures to a socket: libzmq's capture socket, or, with prefixes, pyzmq's
/// `monitored_queue` (each message preceded by a frame naming its side).
pub struct CaptureSocket<'a> {
    socket: &'a Socket,
    prefixes: Option<[Msg; 2]>,
    at_message_start: bool,
}

impl<'a> CaptureSocket<'a> {
    /// Each frame, as it is.
    pub fn new(socket: &'a Socket) -> CaptureSocket<'a> {
        CaptureSocket { socket, prefixes: None, at_message_start: true }
    }

    /// Each message after a frame holding `frontend` or `backend`, the side
    /// it came from (control commands have no prefix).
    pub fn prefixed(socket: &'a Socket, frontend: &[u8], backend: &[u8]) -> CaptureSocket<'a> {
        let prefixes = Some([Msg::from_slice(frontend), Msg::from_slice(backend)]);
        CaptureSocket { socket, prefixes, at_message_start: true }
    }
}

impl Capture for CaptureSocket<'_> {
    fn capture(&mut self, from: Option<Side>, frame: &Msg, more: bool) -> Result<()> {
        if let (Some(side), Some(prefixes), true) = (from, &self.prefixes, self.at_message_start) {
            self.socket.send(prefixes[side as usize].clone(), SNDMORE)?;
        }
        self.at_message_start = !more;
        self.socket.send(frame.clone_detached(), if more { SNDMORE } else { 0 })
    }
}

/// Whether the proxy forwards.
#[derive(Clone, Copy, PartialEq)]
enum State {
    Active,
    Paused,
    Terminated,
}

/// A proxy between two sockets (or one socket and itself); see the module docs.
pub struct Proxy<'a> {
    sockets: [&'a Socket; 2],
    capture: Option<&'a mut dyn Capture>,
    control: Option<&'a Socket>,
    swap_router_ids: bool,
    stats: ProxyStats,
}

impl<'a> Proxy<'a> {
    /// Forward between `frontend` and `backend` (the same socket: it echoes).
    pub fn new(frontend: &'a Socket, backend: &'a Socket) -> Proxy<'a> {
        Proxy {
            sockets: [frontend, backend],
            capture: None,
            control: None,
            swap_router_ids: false,
            stats: ProxyStats::default(),
        }
    }

    /// Show every forwarded frame and control command to `capture`.
    pub fn capture(mut self, capture: &'a mut dyn Capture) -> Proxy<'a> {
        self.capture = Some(capture);
        self
    }

    /// Take PAUSE / RESUME / TERMINATE / STATISTICS from `control`.
    pub fn control(mut self, control: &'a Socket) -> Proxy<'a> {
        self.control = Some(control);
        self
    }

    /// Between two ROUTERs, swap each message's first two frames (the
    /// sender's id and the addressee's), as pyzmq's `monitored_queue` does,
    /// so a message from A naming B reaches B naming A.
    pub fn swap_router_ids(mut self) -> Proxy<'a> {
        self.swap_router_ids = self.sockets.iter().all(|s| s.socket_type() == SocketType::Router) && !self.one_socket();
        self
    }

    /// The counters so far (what STATISTICS answers).
    pub fn stats(&self) -> ProxyStats {
        self.stats
    }

    fn one_socket(&self) -> bool {
        std::ptr::eq(self.sockets[0], self.sockets[1])
    }

    /// Run until TERMINATE (`Ok`) or an error: ETERM when the context ends,
    /// EINTR when a signal interrupts a wait (as libzmq).
    pub fn run(&mut self) -> Result<()> {
        self.run_with(&mut CoreWait)
    }

    /// [`Proxy::run`], with `hook` deciding what a signal means.
    pub fn run_with(&mut self, hook: &mut dyn WaitHook) -> Result<()> {
        let mut state = State::Active;
        // blocked[d]: side d is readable but the other side cannot take a
        // message; until it can, wait for the other side's POLLOUT instead
        // of d's POLLIN (which would wake us at once, again and again).
        let mut blocked = [false, false];
        let sides = if self.one_socket() { 1 } else { 2 };
        loop {
            {
                let mut wait: Vec<PollItem<'_>> = Vec::with_capacity(3);
                if state == State::Active {
                    for d in 0..sides {
                        let other_blocked = sides == 2 && blocked[1 - d];
                        let events = if blocked[d] { 0 } else { POLLIN } | if other_blocked { POLLOUT } else { 0 };
                        wait.push(PollItem::from_socket(self.sockets[d], events));
                    }
                }
                if let Some(c) = self.control {
                    wait.push(PollItem::from_socket(c, POLLIN));
                }
                poll_with(&mut wait, -1, hook)?;
            }
            // What is ready now, on every socket.
            let mut all: Vec<PollItem<'_>> = Vec::with_capacity(3);
            for d in 0..sides {
                all.push(PollItem::from_socket(self.sockets[d], POLLIN | POLLOUT));
            }
            if let Some(c) = self.control {
                all.push(PollItem::from_socket(c, POLLIN));
            }
            poll(&mut all, 0)?;
            let readable: Vec<bool> = all.iter().map(|i| i.is_readable()).collect();
            let writable: Vec<bool> = all.iter().map(|i| i.is_writable()).collect();
            drop(all);
            if self.control.is_some() && readable[sides] {
                state = self.command(state, hook)?;
                if state == State::Terminated {
                    return Ok(());
                }
            }
            if state != State::Active {
                continue;
            }
            for d in 0..sides {
                let to = 1 - d;
                if !readable[d] {
                    blocked[d] = false;
                } else if sides == 1 || writable[to] {
                    blocked[d] = false;
                    self.forward(d, to, hook)?;
                } else {
                    blocked[d] = true;
                }
            }
        }
    }

    /// Move up to [`BURST`] whole messages from side `from` to side `to`.
    fn forward(&mut self, from: usize, to: usize, hook: &mut dyn WaitHook) -> Result<()> {
        let (src, dst) = (self.sockets[from], self.sockets[to]);
        let side = if from == 0 { Side::Frontend } else { Side::Backend };
        for _ in 0..BURST {
            let first = match src.recv(DONTWAIT) {
                Ok(m) => m,
                Err(Error::Again) => return Ok(()),
                Err(e) => return Err(e),
            };
            let mut size = first.len() as u64;
            let mut more = first.more();
            let mut next = Some(first);
            if self.swap_router_ids && more {
                // The rest of a message is already queued: it arrived whole.
                let second = src.recv(DONTWAIT)?;
                size += second.len() as u64;
                let more_after = second.more();
                self.send(dst, second.with_more(true), side, true, hook)?;
                more = more_after;
                next = next.map(|m| m.with_more(more));
            }
            while let Some(frame) = next.take() {
                if more {
                    let m = src.recv(DONTWAIT)?;
                    size += m.len() as u64;
                    let following = m.more();
                    self.send(dst, frame, side, true, hook)?;
                    next = Some(m);
                    more = following;
                } else {
                    self.send(dst, frame, side, false, hook)?;
                }
            }
            let stats = [&mut self.stats.frontend, &mut self.stats.backend];
            let [front, back] = stats;
            // One socket: libzmq still counts in on the frontend, out on the backend.
            let (f, t) = if from == 0 { (front, back) } else { (back, front) };
            f.msg_in += 1;
            f.bytes_in += size;
            t.msg_out += 1;
            t.bytes_out += size;
        }
        Ok(())
    }

    /// Capture `frame`, then send it to `dst`, waiting (as libzmq's blocking
    /// send does, within `dst`'s SNDTIMEO) while `dst` cannot take it.
    fn send(&mut self, dst: &Socket, frame: Msg, from: Side, more: bool, hook: &mut dyn WaitHook) -> Result<()> {
        if let Some(c) = self.capture.as_deref_mut() {
            c.capture(Some(from), &frame, more)?;
        }
        let flags = if more { SNDMORE } else { 0 };
        let mut pending = Some(frame);
        let mut timeout = None;
        loop {
            match dst.send_from(&mut pending, flags | DONTWAIT) {
                Err(Error::Again) => {}
                other => return other,
            }
            let ms = match timeout {
                Some(ms) => ms,
                None => *timeout.insert(dst.get_option_int(opt::SNDTIMEO)?),
            };
            if ms == 0 || poll_with(&mut [PollItem::from_socket(dst, POLLOUT)], ms, hook)? == 0 {
                return Err(Error::Again);
            }
        }
    }

    /// Serve one control command; the state it leaves the proxy in.
    fn command(&mut self, state: State, hook: &mut dyn WaitHook) -> Result<State> {
        let Some(control) = self.control else { return Ok(state) };
        let cmd = match control.recv(DONTWAIT) {
            Ok(m) => m,
            Err(Error::Again) => return Ok(state),
            Err(e) => return Err(e),
        };
        if let Some(c) = self.capture.as_deref_mut() {
            c.capture(None, &cmd, false)?;
        }
        let next = match cmd.as_slice() {
            b"STATISTICS" => {
                let values = self.stats.values();
                for (i, v) in values.iter().enumerate() {
                    let flags = if i + 1 < values.len() { SNDMORE } else { 0 };
                    send_blocking(control, Msg::from_slice(&v.to_ne_bytes()), flags, hook)?;
                }
                return Ok(state);
            }
            b"PAUSE" => State::Paused,
            b"RESUME" => State::Active,
            b"TERMINATE" => State::Terminated,
            _ => state,
        };
        // libzmq 4.3.5 answers every other command with an empty frame.
        send_blocking(control, Msg::from_slice(&[]), 0, hook)?;
        Ok(next)
    }
}

/// A blocking send through the caller's wait hook (libzmq's proxy sends its
/// control replies blocking; the first frame may fail).
fn send_blocking(control: &Socket, frame: Msg, flags: i32, hook: &mut dyn WaitHook) -> Result<()> {
    let mut pending = Some(frame);
    loop {
        match control.send_from(&mut pending, flags | DONTWAIT) {
            Err(Error::Again) => {}
            other => other?,
        }
        if pending.is_none() {
            return Ok(());
        }
        poll_with(&mut [PollItem::from_socket(control, POLLOUT)], -1, hook)?;
    }
}
