//! `ZMQ::Frame` (one frame) and `ZMQ::Message` (a list of frames), rbczmq's
//! wrappers of czmq's zframe/zmsg. Both hold core messages (`oxmq::Msg`), so
//! sending a frame or a message hands its body to the core without a copy.
//! Interior mutability through `RefCell`: these objects are only touched
//! with the GVL held and no borrow lives across a call into Ruby.

use crate::errors::zmq_error;
use magnus::{Error, RArray, RString, Ruby};
use oxmq::{errno, Msg};
use std::cell::RefCell;
use std::collections::VecDeque;

#[magnus::wrap(class = "ZMQ::Frame", free_immediately, size)]
pub(crate) struct Frame {
    /// `None` once sent without REUSE, or destroyed.
    msg: RefCell<Option<Msg>>,
}

fn destroyed() -> Error {
    zmq_error(errno::EFAULT, Some("ZMQ::Frame has been sent or destroyed"))
}

impl Frame {
    pub(crate) fn from_msg(m: Msg) -> Frame {
        Frame { msg: RefCell::new(Some(m)) }
    }

    /// A copy of the message (cheap: large bodies are shared).
    pub(crate) fn msg(&self) -> Result<Msg, Error> {
        self.msg.borrow().clone().ok_or_else(destroyed)
    }

    pub(crate) fn consume(&self) {
        self.msg.borrow_mut().take();
    }

    pub(crate) fn new(ruby: &Ruby, data: Option<RString>) -> Frame {
        Frame::from_msg(match data {
            Some(s) => crate::pin::msg_from(ruby, s),
            None => Msg::new(),
        })
    }

    pub(crate) fn data(ruby: &Ruby, rb_self: &Self) -> Result<RString, Error> {
        let b = rb_self.msg.borrow();
        let m = b.as_ref().ok_or_else(destroyed)?;
        Ok(ruby.str_from_slice(m.as_slice()))
    }

    pub(crate) fn size(&self) -> Result<usize, Error> {
        Ok(self.msg.borrow().as_ref().ok_or_else(destroyed)?.len())
    }

    pub(crate) fn is_more(&self) -> Result<bool, Error> {
        Ok(self.msg.borrow().as_ref().ok_or_else(destroyed)?.more())
    }

    pub(crate) fn set_more(&self, more: bool) -> Result<(), Error> {
        self.msg.borrow_mut().as_mut().ok_or_else(destroyed)?.set_more(more);
        Ok(())
    }

    pub(crate) fn eq(&self, other: &Frame) -> bool {
        match (&*self.msg.borrow(), &*other.msg.borrow()) {
            (Some(a), Some(b)) => a.as_slice() == b.as_slice(),
            _ => false,
        }
    }

    pub(crate) fn dup(&self) -> Result<Frame, Error> {
        Ok(Frame::from_msg(self.msg()?))
    }

    pub(crate) fn destroy(&self) {
        self.consume();
    }

    pub(crate) fn is_destroyed(&self) -> bool {
        self.msg.borrow().is_none()
    }
}

#[magnus::wrap(class = "ZMQ::Message", free_immediately, size)]
pub(crate) struct Message {
    frames: RefCell<VecDeque<Msg>>,
}

impl Message {
    pub(crate) fn from_frames(frames: Vec<Msg>) -> Message {
        Message { frames: RefCell::new(frames.into()) }
    }

    pub(crate) fn new() -> Message {
        Message::from_frames(Vec::new())
    }

    /// Take every frame out (for a send), leaving the message empty.
    pub(crate) fn take_frames(&self) -> Result<Vec<Msg>, Error> {
        Ok(std::mem::take(&mut *self.frames.borrow_mut()).into())
    }

    pub(crate) fn push(&self, frame: &Frame) -> Result<bool, Error> {
        let m = frame.msg()?;
        self.frames.borrow_mut().push_front(m);
        Ok(true)
    }

    pub(crate) fn add(&self, frame: &Frame) -> Result<bool, Error> {
        let m = frame.msg()?;
        self.frames.borrow_mut().push_back(m);
        Ok(true)
    }

    pub(crate) fn pushstr(ruby: &Ruby, rb_self: &Self, s: RString) -> bool {
        let m = crate::pin::msg_from(ruby, s);
        rb_self.frames.borrow_mut().push_front(m);
        true
    }

    pub(crate) fn addstr(ruby: &Ruby, rb_self: &Self, s: RString) -> bool {
        let m = crate::pin::msg_from(ruby, s);
        rb_self.frames.borrow_mut().push_back(m);
        true
    }

    pub(crate) fn pop(&self) -> Option<Frame> {
        let m = self.frames.borrow_mut().pop_front()?;
        Some(Frame::from_msg(m))
    }

    pub(crate) fn popstr(ruby: &Ruby, rb_self: &Self) -> Option<RString> {
        let m = rb_self.frames.borrow_mut().pop_front()?;
        Some(ruby.str_from_slice(m.as_slice()))
    }

    pub(crate) fn first(&self) -> Option<Frame> {
        self.frames.borrow().front().cloned().map(Frame::from_msg)
    }

    pub(crate) fn last(&self) -> Option<Frame> {
        self.frames.borrow().back().cloned().map(Frame::from_msg)
    }

    pub(crate) fn size(&self) -> usize {
        self.frames.borrow().len()
    }

    pub(crate) fn content_size(&self) -> usize {
        self.frames.borrow().iter().map(Msg::len).sum()
    }

    /// The frames' bodies, in order, as strings.
    pub(crate) fn to_a(ruby: &Ruby, rb_self: &Self) -> RArray {
        let frames = rb_self.frames.borrow().clone();
        let ary = ruby.ary_new_capa(frames.len());
        for m in frames {
            let _ = ary.push(ruby.str_from_slice(m.as_slice()));
        }
        ary
    }

    pub(crate) fn frames(&self) -> RArray {
        let frames = self.frames.borrow().clone();
        let ary = RArray::with_capacity(frames.len());
        for m in frames {
            let _ = ary.push(Frame::from_msg(m));
        }
        ary
    }

    pub(crate) fn eq(&self, other: &Message) -> bool {
        let (a, b) = (self.frames.borrow(), other.frames.borrow());
        a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.as_slice() == y.as_slice())
    }

    pub(crate) fn dup(&self) -> Message {
        Message { frames: RefCell::new(self.frames.borrow().clone()) }
    }

    pub(crate) fn destroy(&self) {
        self.frames.borrow_mut().clear();
    }
}
