//! The native half of the `oxmq` Ruby gem: rbczmq's API (`ZMQ::Context`,
//! `ZMQ::Socket`, `ZMQ::Frame`, `ZMQ::Message`, polling) over the `oxmq`
//! crate. The Ruby half (ruby/lib) adds constants, symbols, option
//! accessors, `ZMQ::Poller`, `ZMQ::Logger` and the exception classes.
//!
//! Memory safety by construction: each socket sits in a [`slot::Slot`]
//! (enter/leave counting, freed once by whoever closes it last); blocking
//! waits release the GVL and wake for Ruby's interrupts ([`wait`]); GC free
//! functions never block ([`reaper`]); frozen strings are lent to the core
//! without a copy and released under the GVL ([`pin`]).

#![deny(unsafe_op_in_unsafe_fn)]

mod context;
mod errors;
mod frame;
mod pin;
mod poll;
mod reaper;
mod slot;
mod socket;
mod wait;

use context::Context;
use frame::{Frame, Message};
use magnus::{function, method, prelude::*, Error, Ruby};
use socket::Socket;

#[magnus::init(name = "oxmq")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let zmq = ruby.define_module("ZMQ")?;
    zmq.define_singleton_method("__poll", function!(poll::poll, 2))?;
    zmq.define_singleton_method("__lent_strings", function!(Socket::lent_strings, 0))?;

    let ctx = zmq.define_class("Context", ruby.class_object())?;
    ctx.define_singleton_method("__new", function!(Context::new, 0))?;
    ctx.define_method("__socket", method!(Context::socket, 1))?;
    ctx.define_method("destroy", method!(Context::destroy, 0))?;
    ctx.define_method("destroyed?", method!(Context::is_destroyed, 0))?;
    ctx.define_method("linger", method!(Context::linger, 0))?;
    ctx.define_method("linger=", method!(Context::set_linger, 1))?;
    ctx.define_method("__set", method!(Context::set, 2))?;
    ctx.define_method("__get", method!(Context::get, 1))?;

    let sock = zmq.define_class("Socket", ruby.class_object())?;
    sock.undef_default_alloc_func();
    sock.define_method("send", method!(Socket::send, 1))?;
    sock.define_method("sendm", method!(Socket::sendm, 1))?;
    sock.define_method("recv", method!(Socket::recv, 0))?;
    sock.define_method("recv_nonblock", method!(Socket::recv_nonblock, 0))?;
    sock.define_method("__send_frame", method!(Socket::send_frame, 2))?;
    sock.define_method("recv_frame", method!(Socket::recv_frame, 0))?;
    sock.define_method("recv_frame_nonblock", method!(Socket::recv_frame_nonblock, 0))?;
    sock.define_method("send_message", method!(Socket::send_message, 1))?;
    sock.define_method("recv_message", method!(Socket::recv_message, 0))?;
    sock.define_method("__bind", method!(Socket::bind, 1))?;
    sock.define_method("__connect", method!(Socket::connect, 1))?;
    sock.define_method("__unbind", method!(Socket::unbind, 1))?;
    sock.define_method("__disconnect", method!(Socket::disconnect, 1))?;
    sock.define_method("__monitor", method!(Socket::monitor, 4))?;
    sock.define_method("close", method!(Socket::close, 0))?;
    sock.define_method("closed?", method!(Socket::is_closed, 0))?;
    sock.define_method("type", method!(Socket::socket_type, 0))?;
    sock.define_method("fd", method!(Socket::fd, 0))?;
    sock.define_method("events", method!(Socket::events, 0))?;
    sock.define_method("rcvmore?", method!(Socket::rcvmore, 0))?;
    sock.define_method("getsockopt", method!(Socket::getsockopt, 1))?;
    sock.define_method("setsockopt", method!(Socket::setsockopt, 2))?;
    sock.define_method("stats", method!(Socket::stats, 0))?;

    let frame = zmq.define_class("Frame", ruby.class_object())?;
    frame.undef_default_alloc_func();
    frame.define_singleton_method("__new", function!(Frame::new, 1))?;
    frame.define_method("data", method!(Frame::data, 0))?;
    frame.define_method("size", method!(Frame::size, 0))?;
    frame.define_method("more?", method!(Frame::is_more, 0))?;
    frame.define_method("more=", method!(Frame::set_more, 1))?;
    frame.define_method("==", method!(Frame::eq, 1))?;
    frame.define_method("dup", method!(Frame::dup, 0))?;
    frame.define_method("destroy", method!(Frame::destroy, 0))?;
    frame.define_method("destroyed?", method!(Frame::is_destroyed, 0))?;

    let msg = zmq.define_class("Message", ruby.class_object())?;
    msg.undef_default_alloc_func();
    msg.define_singleton_method("__new", function!(Message::new, 0))?;
    msg.define_method("push", method!(Message::push, 1))?;
    msg.define_method("add", method!(Message::add, 1))?;
    msg.define_method("pushstr", method!(Message::pushstr, 1))?;
    msg.define_method("addstr", method!(Message::addstr, 1))?;
    msg.define_method("pop", method!(Message::pop, 0))?;
    msg.define_method("popstr", method!(Message::popstr, 0))?;
    msg.define_method("first", method!(Message::first, 0))?;
    msg.define_method("last", method!(Message::last, 0))?;
    msg.define_method("size", method!(Message::size, 0))?;
    msg.define_method("content_size", method!(Message::content_size, 0))?;
    msg.define_method("to_a", method!(Message::to_a, 0))?;
    msg.define_method("frames", method!(Message::frames, 0))?;
    msg.define_method("==", method!(Message::eq, 1))?;
    msg.define_method("dup", method!(Message::dup, 0))?;
    msg.define_method("destroy", method!(Message::destroy, 0))?;
    Ok(())
}
