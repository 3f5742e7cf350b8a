//! Load balancer: each message goes to the next writable pipe, round-robin;
//! all frames of a multipart message go to the same pipe.

use super::array::RoundRobin;
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::Msg;

#[derive(Default)]
pub(crate) struct Lb {
    /// Active pipes are believed writable; the rest wait for `activated`.
    ring: RoundRobin,
    /// The pipe receiving the rest of the current multipart message.
    cur: Option<PipeId>,
    /// The pipe of the current multipart message went away: swallow its rest.
    dropping: bool,
}

impl Lb {
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.ring.attach(id);
    }

    /// The pipe has room again (`write_activated`).
    pub(crate) fn activated(&mut self, id: PipeId) {
        self.ring.activate(id);
    }

    pub(crate) fn detach(&mut self, id: PipeId) {
        if self.cur == Some(id) {
            self.cur = None;
            self.dropping = true;
        }
        self.ring.remove(id);
    }

    /// Whether a multipart message is in progress (its rest must follow).
    #[inline]
    pub(crate) fn in_message(&self) -> bool {
        self.cur.is_some() || self.dropping
    }

    /// Send one frame; returns the pipe it went to (`None` when dropped
    /// because its message's pipe disappeared). `Again` when no pipe can take
    /// a new message. Always inlined: see its `Outbound` impl.
    #[inline(always)]
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
        while let Some(id) = self.ring.current() {
            let p = pipes.get_mut(id);
            if p.out.check_write() {
                p.out.write(msg);
                if more {
                    self.cur = Some(id);
                } else {
                    p.out.flush();
                }
                self.ring.advance();
                return Ok(Some(id));
            }
            pipes.note_full(id);
            self.ring.deactivate_current();
        }
        Err((msg, Error::Again))
    }

    /// The pipe whose turn it is, outside a multipart message.
    pub(crate) fn direct_target(&self) -> Option<PipeId> {
        if self.in_message() {
            None
        } else {
            self.ring.current()
        }
    }

    /// The message of `direct_target`'s pipe went without the pipe.
    pub(crate) fn direct_sent(&mut self) {
        self.ring.advance();
    }

    /// Could a message be sent now?
    pub(crate) fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if self.in_message() {
            return true;
        }
        while let Some(id) = self.ring.current() {
            if pipes.get_mut(id).out.check_write() {
                return true;
            }
            pipes.note_full(id);
            self.ring.deactivate_current();
        }
        false
    }
}
