//! Load balancer: each message goes to the next writable pipe, round-robin;
//! all frames of a multipart message go to the same pipe.

use super::array::PipeArray;
use crate::error::Error;
use crate::msg::Msg;
use crate::socket::pipes::{PipeId, Pipes};

#[derive(Default)]
pub(crate) struct Lb {
    /// `[0, active)`: pipes believed writable; the rest wait for `activated`.
    pipes: PipeArray,
    active: usize,
    /// Next pipe to try for a new message.
    current: usize,
    /// The pipe receiving the rest of the current multipart message.
    cur: Option<PipeId>,
    /// The pipe of the current multipart message went away: swallow its rest.
    dropping: bool,
}

impl Lb {
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.pipes.push(id);
        self.activated(id);
    }

    /// The pipe has room again (`write_activated`).
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
            self.dropping = true;
        }
        if i < self.active {
            self.deactivate_at(i);
        }
        self.pipes.remove(id);
    }

    /// Move the active pipe at `i` out of the active prefix.
    fn deactivate_at(&mut self, i: usize) {
        self.active -= 1;
        self.pipes.swap(i, self.active);
        if self.current >= self.active {
            self.current = 0;
        }
    }

    /// Whether a multipart message is in progress (its rest must follow).
    #[inline]
    pub(crate) fn in_message(&self) -> bool {
        self.cur.is_some() || self.dropping
    }

    /// Send one frame; returns the pipe it went to (`None` when dropped
    /// because its message's pipe disappeared). `Again` when no pipe can take
    /// a new message.
    #[inline]
    pub(crate) fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<Option<PipeId>, (Msg, Error)> {
        let more = msg.more();
        if let Some(id) = self.cur {
            let p = pipes.get_mut(id);
            p.out.write(msg);
            if !more {
                p.out.flush();
                self.cur = None;
            }
            return Ok(Some(id));
        }
        if self.dropping {
            self.dropping = more;
            return Ok(None);
        }
        while self.active > 0 {
            let id = self.pipes.at(self.current);
            let p = pipes.get_mut(id);
            if p.out.check_write() {
                p.out.write(msg);
                if more {
                    self.cur = Some(id);
                } else {
                    p.out.flush();
                }
                self.current += 1;
                if self.current >= self.active {
                    self.current = 0;
                }
                return Ok(Some(id));
            }
            // Full (writer now marked waiting) or peer gone: out of rotation
            // until `write_activated`, or until the socket detaches it.
            self.deactivate_at(self.current);
        }
        Err((msg, Error::Again))
    }

    /// Could a message be sent now?
    pub(crate) fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if self.in_message() {
            return true;
        }
        while self.active > 0 {
            let id = self.pipes.at(self.current);
            if pipes.get_mut(id).out.check_write() {
                return true;
            }
            self.deactivate_at(self.current);
        }
        false
    }
}
