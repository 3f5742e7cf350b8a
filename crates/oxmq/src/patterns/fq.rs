//! Fair queue: messages are taken round-robin from the readable pipes, one
//! whole message at a time (all frames of a multipart message from one pipe).

use super::array::PipeArray;
use crate::error::Error;
use crate::msg::Msg;
use crate::socket::pipes::{PipeId, Pipes};

#[derive(Default)]
pub(crate) struct Fq {
    /// `[0, active)`: pipes that may hold data; the rest sleep until `activated`.
    pipes: PipeArray,
    active: usize,
    current: usize,
    /// The pipe whose multipart message is being read.
    cur: Option<PipeId>,
}

impl Fq {
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.pipes.push(id);
        self.activated(id);
    }

    /// The peer flushed data into a sleeping pipe (`read_activated`).
    pub(crate) fn activated(&mut self, id: PipeId) {
        if let Some(i) = self.pipes.index(id) {
            if i >= self.active {
                self.pipes.swap(i, self.active);
                self.active += 1;
            }
        }
    }

    pub(crate) fn detach(&mut self, id: PipeId) {
        let Some(i) = self.pipes.index(id) else {
            return;
        };
        if self.cur == Some(id) {
            self.cur = None;
        }
        if i < self.active {
            self.deactivate_at(i);
        }
        self.pipes.remove(id);
    }

    fn deactivate_at(&mut self, i: usize) {
        self.active -= 1;
        self.pipes.swap(i, self.active);
        if self.current >= self.active {
            self.current = 0;
        }
    }

    /// Receive one frame and the pipe it came from. Internal frames
    /// (stray subscriptions) are skipped.
    #[inline]
    pub(crate) fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, PipeId), Error> {
        if let Some(id) = self.cur {
            // The rest of a message is flushed together with its first frame.
            if let Some(msg) = pipes.get_mut(id).read() {
                if !msg.more() {
                    self.cur = None;
                }
                return Ok((msg, id));
            }
            self.cur = None;
        }
        while self.active > 0 {
            let id = self.pipes.at(self.current);
            let p = pipes.get_mut(id);
            match p.read() {
                Some(msg) => {
                    if msg.is_internal() {
                        continue;
                    }
                    if msg.more() {
                        self.cur = Some(id);
                    }
                    self.current += 1;
                    if self.current >= self.active {
                        self.current = 0;
                    }
                    return Ok((msg, id));
                }
                None => {
                    // The reader is now marked asleep: `read_activated` brings it back.
                    if p.is_terminated() {
                        pipes.mark_dead(id);
                    }
                    self.deactivate_at(self.current);
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
        while self.active > 0 {
            let id = self.pipes.at(self.current);
            let p = pipes.get_mut(id);
            if p.check_read() {
                return true;
            }
            if p.is_terminated() {
                pipes.mark_dead(id);
            }
            self.deactivate_at(self.current);
        }
        false
    }
}
