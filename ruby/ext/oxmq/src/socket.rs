//! `ZMQ::Socket`: the native methods (lib/oxmq/socket.rb adds rbczmq's sugar).
//!
//! Hot path of `send`/`recv`: enter the slot (one atomic), the core's
//! non-blocking operation with the GVL held, leave (one atomic); `recv`
//! allocates the result string. Only on EAGAIN does a call take the slow
//! path: release the GVL and sleep on the socket's descriptor (see `wait`),
//! retrying whenever it fires, until done, SNDTIMEO/RCVTIMEO, close, or an
//! interrupt.

use crate::errors::{core_error, zmq_error};
use crate::frame::{Frame, Message};
use crate::pin;
use crate::reaper;
use crate::slot::{Guard, Slot};
use crate::wait::{without_gvl, GvlWait};
use magnus::value::ReprValue;
use magnus::{Error, IntoValue, RHash, RString, Ruby, Value};
use oxmq::option_table;
use oxmq::{errno, opt, Msg, OptionValue, DONTWAIT, SNDMORE};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// rbczmq's `ZMQ::Frame` send flags (czmq's ZFRAME_*).
pub(crate) const FRAME_MORE: i64 = 1;
pub(crate) const FRAME_REUSE: i64 = 2;
pub(crate) const FRAME_DONTWAIT: i64 = 4;

#[magnus::wrap(class = "ZMQ::Socket", free_immediately, size)]
pub(crate) struct Socket {
    /// Taken (once) by `drop`.
    pub(crate) slot: ManuallyDrop<Arc<Slot>>,
}

impl Socket {
    pub(crate) fn new(slot: Arc<Slot>) -> Socket {
        Socket { slot: ManuallyDrop::new(slot) }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // Runs inside the GC, so nobody can reach this socket any more:
        // close it with LINGER 0 (as czmq's destroy), and let the reaper
        // thread drop the slot, whose context reference may be the last one
        // (dropping that waits for the other sockets' LINGER).
        if let Ok(s) = self.slot.enter() {
            let _ = s.set_option_int(opt::LINGER, 0);
        }
        self.slot.close();
        // SAFETY: `drop` runs once and `slot` is not used after this.
        let slot = unsafe { ManuallyDrop::take(&mut self.slot) };
        reaper::dispose(Box::new(slot));
    }
}

type ZResult<T> = Result<T, oxmq::Error>;

impl Socket {
    #[inline]
    fn enter(&self) -> Result<Guard<'_>, Error> {
        self.slot.enter().map_err(|e| zmq_error(e, None))
    }

    /// Run `op` (non-blocking) until it succeeds; block between attempts
    /// unless `nonblock`. `timeout_opt` is SNDTIMEO or RCVTIMEO. `Ok(None)`:
    /// `nonblock` and nothing could be done.
    #[inline]
    fn run<T>(
        &self,
        nonblock: bool,
        timeout_opt: i32,
        mut op: impl FnMut(&oxmq::Socket) -> ZResult<T>,
    ) -> Result<Option<T>, Error> {
        let sock = self.enter()?;
        match op(&sock) {
            Ok(v) => Ok(Some(v)),
            Err(oxmq::Error::Again) if nonblock => Ok(None),
            Err(oxmq::Error::Again) => self.block(&sock, timeout_opt, op).map(Some),
            Err(e) => Err(core_error(e)),
        }
    }

    /// The slow path: the core retries `op` until done, the timeout option
    /// passes, the socket is closed, or an interrupt raises.
    #[cold]
    fn block<T>(
        &self,
        sock: &Guard<'_>,
        timeout_opt: i32,
        op: impl FnMut(&oxmq::Socket) -> ZResult<T>,
    ) -> Result<T, Error> {
        let timeout_ms = sock.get_option_int(timeout_opt).map_err(core_error)?;
        let mut hook = GvlWait::new()?;
        // A receive may read its connection itself while it waits (REQ/REP).
        let block = if timeout_opt == opt::RCVTIMEO { oxmq::block_recv_with } else { oxmq::block_with };
        block(sock, timeout_ms, &mut hook, op).map_err(|e| hook.error(e))
    }

    /// One non-blocking attempt; `false` when it would have blocked.
    fn send_nonblock(&self, msg: Msg, flags: i32) -> Result<bool, Error> {
        let mut pending = Some(msg);
        Ok(self.run(true, opt::SNDTIMEO, |s| s.send_from(&mut pending, flags | DONTWAIT))?.is_some())
    }

    // --- Ruby methods -----------------------------------------------------

    pub(crate) fn send(ruby: &Ruby, rb_self: &Self, data: RString) -> Result<bool, Error> {
        pin::drain(ruby);
        rb_self.send_frame_blocking(pin::msg_from(ruby, data), 0)
    }

    pub(crate) fn sendm(ruby: &Ruby, rb_self: &Self, data: RString) -> Result<bool, Error> {
        pin::drain(ruby);
        rb_self.send_frame_blocking(pin::msg_from(ruby, data), SNDMORE)
    }

    /// Blocking send that keeps the message across retries.
    #[inline]
    fn send_frame_blocking(&self, msg: Msg, flags: i32) -> Result<bool, Error> {
        let sock = self.enter()?;
        // Written to its connection by this thread when the core's policy
        // allows (REQ/REP), with the GVL released: a first attempt with
        // DONTWAIT only queues, waking the I/O thread for every message.
        if flags & (DONTWAIT | SNDMORE) == 0 && sock.lends_direct() {
            let wake = crate::wait::thread_wake().map_err(|e| zmq_error(e, None))?;
            match without_gvl(wake, || sock.try_send_lent_direct(&msg, flags)) {
                Some(Ok(true)) => return Ok(true),
                Some(Err(e)) => return Err(core_error(e)),
                Some(Ok(false)) | None => {}
            }
        }
        let mut pending = Some(msg);
        match sock.send_from(&mut pending, flags | DONTWAIT) {
            Ok(()) => Ok(true),
            Err(oxmq::Error::Again) => {
                self.block(&sock, opt::SNDTIMEO, |s| s.send_from(&mut pending, flags | DONTWAIT))?;
                Ok(true)
            }
            Err(e) => Err(core_error(e)),
        }
    }

    pub(crate) fn recv(ruby: &Ruby, rb_self: &Self) -> Result<RString, Error> {
        pin::drain(ruby);
        let m = rb_self.run(false, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.expect("blocking recv returns a message");
        Ok(ruby.str_from_slice(m.as_slice()))
    }

    pub(crate) fn recv_nonblock(ruby: &Ruby, rb_self: &Self) -> Result<Option<RString>, Error> {
        pin::drain(ruby);
        Ok(rb_self.run(true, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.map(|m| ruby.str_from_slice(m.as_slice())))
    }

    /// `send_frame(frame, flags)`: flags are `ZMQ::Frame::MORE | REUSE | DONTWAIT`.
    /// Without REUSE the frame is consumed (rbczmq/czmq semantics).
    pub(crate) fn send_frame(ruby: &Ruby, rb_self: &Self, frame: &Frame, flags: i64) -> Result<bool, Error> {
        pin::drain(ruby);
        if flags & !(FRAME_MORE | FRAME_REUSE | FRAME_DONTWAIT) != 0 {
            return Err(zmq_error(errno::EINVAL, Some("Invalid argument: unknown frame flags")));
        }
        let msg = frame.msg()?;
        let mut zflags = 0;
        if flags & FRAME_MORE != 0 {
            zflags |= SNDMORE;
        }
        let sent = if flags & FRAME_DONTWAIT != 0 {
            rb_self.send_nonblock(msg, zflags)?
        } else {
            rb_self.send_frame_blocking(msg, zflags)?
        };
        if sent && flags & FRAME_REUSE == 0 {
            frame.consume();
        }
        if !sent {
            return Err(zmq_error(errno::EAGAIN, None));
        }
        Ok(true)
    }

    pub(crate) fn recv_frame(ruby: &Ruby, rb_self: &Self) -> Result<Frame, Error> {
        pin::drain(ruby);
        let m = rb_self.run(false, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.expect("blocking recv returns a message");
        Ok(Frame::from_msg(m))
    }

    pub(crate) fn recv_frame_nonblock(ruby: &Ruby, rb_self: &Self) -> Result<Option<Frame>, Error> {
        pin::drain(ruby);
        Ok(rb_self.run(true, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.map(Frame::from_msg))
    }

    /// Send every frame of `msg` as one message; the message is emptied
    /// (its frames move into the core without a copy).
    pub(crate) fn send_message(ruby: &Ruby, rb_self: &Self, msg: &Message) -> Result<(), Error> {
        pin::drain(ruby);
        let frames = msg.take_frames()?;
        let n = frames.len();
        if n == 0 {
            return Err(zmq_error(errno::EINVAL, Some("Invalid argument: empty message")));
        }
        for (i, m) in frames.into_iter().enumerate() {
            let flags = if i + 1 < n { SNDMORE } else { 0 };
            rb_self.send_frame_blocking(m, flags)?;
        }
        Ok(())
    }

    /// Receive all frames of one message (blocking for the first only: the
    /// rest arrived with it).
    pub(crate) fn recv_message(ruby: &Ruby, rb_self: &Self) -> Result<Message, Error> {
        pin::drain(ruby);
        let first = rb_self.run(false, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.expect("blocking recv returns a message");
        let mut more = first.more();
        let mut frames = vec![first];
        while more {
            let m = rb_self.run(false, opt::RCVTIMEO, |s| s.recv(DONTWAIT))?.expect("blocking recv returns a message");
            more = m.more();
            frames.push(m);
        }
        Ok(Message::from_frames(frames))
    }

    pub(crate) fn bind(&self, endpoint: String) -> Result<(), Error> {
        self.enter()?.bind(&endpoint).map_err(core_error)
    }

    pub(crate) fn connect(&self, endpoint: String) -> Result<(), Error> {
        self.enter()?.connect(&endpoint).map_err(core_error)
    }

    pub(crate) fn unbind(&self, endpoint: String) -> Result<(), Error> {
        self.enter()?.unbind(&endpoint).map_err(core_error)
    }

    pub(crate) fn disconnect(&self, endpoint: String) -> Result<(), Error> {
        self.enter()?.disconnect(&endpoint).map_err(core_error)
    }

    /// `zmq_socket_monitor_versioned`: events on a socket of `sink_type`
    /// (PAIR, PUB, PUSH) bound at the inproc `endpoint` (nil stops).
    pub(crate) fn monitor(
        &self,
        endpoint: Option<String>,
        events: u64,
        version: i32,
        sink_type: i32,
    ) -> Result<(), Error> {
        let sink = oxmq::SocketType::from_raw(sink_type).ok_or_else(|| zmq_error(errno::EINVAL, None))?;
        self.enter()?.monitor_versioned(endpoint.as_deref(), events, version, sink).map_err(core_error)
    }

    pub(crate) fn close(&self) {
        self.slot.close();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.slot.is_closed()
    }

    pub(crate) fn socket_type(&self) -> i32 {
        self.slot.kind.as_raw()
    }

    pub(crate) fn fd(&self) -> Result<i32, Error> {
        self.enter()?.fd().map_err(core_error)
    }

    pub(crate) fn events(&self) -> Result<i64, Error> {
        Ok(self.enter()?.events().map_err(core_error)? as i64)
    }

    pub(crate) fn rcvmore(&self) -> Result<bool, Error> {
        Ok(self.enter()?.rcvmore())
    }

    /// `getsockopt(option)`: an Integer, or a (binary) String for byte options.
    pub(crate) fn getsockopt(ruby: &Ruby, rb_self: &Self, option: i32) -> Result<Value, Error> {
        match rb_self.enter()?.get_option(option).map_err(core_error)? {
            OptionValue::Int(v) => Ok(v.into_value_with(ruby)),
            OptionValue::Bytes(b) => Ok(ruby.str_from_slice(&b).into_value_with(ruby)),
        }
    }

    /// `setsockopt(option, value)`: a String where the core's option table
    /// says the option takes bytes, an Integer or true/false elsewhere
    /// (numbers the table does not know included: the core answers EINVAL).
    /// The table decides, not the value's class, so a String never reaches
    /// an integer option as its raw bytes; a value of the wrong kind is a
    /// TypeError, as pyzmq raises for one.
    pub(crate) fn setsockopt(ruby: &Ruby, rb_self: &Self, option: i32, value: Value) -> Result<(), Error> {
        let sock = rb_self.enter()?;
        let string = RString::from_value(value);
        if option_table::takes_bytes(option) != string.is_some() {
            let want = if string.is_some() { "an Integer or true/false" } else { "a String" };
            return Err(Error::new(ruby.exception_type_error(), format!("socket option {option} takes {want}")));
        }
        let r = if let Some(s) = string {
            // SAFETY: copied by the core before any Ruby call.
            sock.set_option_bytes(option, unsafe { s.as_slice() })
        } else if value.is_kind_of(ruby.class_true_class()) {
            sock.set_option_int(option, 1)
        } else if value.is_kind_of(ruby.class_false_class()) {
            sock.set_option_int(option, 0)
        } else {
            let v: i64 = magnus::TryConvert::try_convert(value)?;
            sock.set_option_int(option, v)
        };
        r.map_err(core_error)
    }

    /// oxmq-only: the socket's counters as a Hash of Symbols, with `:peers`,
    /// an Array of one Hash per connection (see `oxmq::SocketStats`).
    pub(crate) fn stats(ruby: &Ruby, rb_self: &Self) -> Result<RHash, Error> {
        let stats = rb_self.enter()?.stats().map_err(core_error)?;
        let out = ruby.hash_new();
        for (name, value) in stats.counters() {
            out.aset(ruby.to_symbol(name), value)?;
        }
        let peers = ruby.ary_new_capa(stats.peers.len());
        for p in &stats.peers {
            let h = ruby.hash_new();
            h.aset(ruby.to_symbol("routing_id"), p.routing_id.as_deref().map(|r| ruby.str_from_slice(r)))?;
            h.aset(ruby.to_symbol("endpoint"), ruby.str_new(&p.endpoint))?;
            h.aset(ruby.to_symbol("remote_address"), p.remote_address.as_deref().map(|a| ruby.str_new(a)))?;
            for (name, value) in p.counters() {
                h.aset(ruby.to_symbol(name), value)?;
            }
            peers.push(h)?;
        }
        out.aset(ruby.to_symbol("peers"), peers)?;
        Ok(out)
    }

    /// Frozen strings lent to the core and not yet released (for the specs).
    pub(crate) fn lent_strings(ruby: &Ruby) -> usize {
        pin::lent_count(ruby)
    }
}
