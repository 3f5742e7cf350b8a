//! Fair queue: messages are taken from the readable pipes in turn; all frames
//! of a multipart message come from the same pipe.

use super::array::RoundRobin;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

#[derive(Default)]
pub(crate) struct Fq {
    /// Active pipes may hold data; the rest sleep until `activated`.
    ring: RoundRobin,
    /// The pipe whose multipart message is being read.
    cur: Option<PipeId>,
}

impl Fq {
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.ring.attach(id);
    }

    /// The peer flushed data into a sleeping pipe (`read_activated`).
    pub(crate) fn activated(&mut self, id: PipeId) {
        self.ring.activate(id);
    }

    pub(crate) fn detach(&mut self, id: PipeId) {
        if self.cur == Some(id) {
            self.cur = None;
        }
        self.ring.remove(id);
    }

    /// Receive one frame and the pipe it came from. Internal frames
    /// (stray subscriptions) are skipped. Always inlined: see its `Inbound` impl.
    #[inline(always)]
    pub(crate) fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
        if let Some(id) = self.cur {
            if let Some(msg) = pipes.get_mut(id).read() {
                if !msg.more() {
                    self.cur = None;
                }
                pipes.last_read = Some(id);
                return Ok((msg, id));
            }
            self.cur = None;
        }
        while let Some(id) = self.ring.current() {
            let p = pipes.get_mut(id);
            match p.read() {
                Some(msg) => {
                    if msg.is_internal() {
                        continue;
                    }
                    if msg.more() {
                        self.cur = Some(id);
                    }
                    self.ring.advance();
                    pipes.last_read = Some(id);
                    return Ok((msg, id));
                }
                None => {
                    if p.is_terminated() {
                        pipes.mark_dead(id);
                    }
                    self.ring.deactivate_current();
                }
            }
        }
        Err(Error::Again)
    }

    /// Could a frame be received now?
    pub(crate) fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.cur.is_some() {
            return true;
        }
        while let Some(id) = self.ring.current() {
            let p = pipes.get_mut(id);
            if p.check_read() {
                return true;
            }
            if p.is_terminated() {
                pipes.mark_dead(id);
            }
            self.ring.deactivate_current();
        }
        false
    }
}
