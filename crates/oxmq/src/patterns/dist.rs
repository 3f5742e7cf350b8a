//! Distributor: fan a message out to a chosen set of pipes (PUB/XPUB's
//! subscribers, XSUB's publishers). A pipe at its HWM is skipped for that
//! message (and leaves the set until `write_activated`); the distributor
//! never blocks. The pipe set is chosen on a message's first frame and kept
//! for all its frames.

use super::array::PipeArray;
use crate::channel::pipes::{PipeId, Pipes};
use crate::monitor::drop_reason;
use crate::msg::Msg;

/// Pipes are kept partitioned:
/// `[0, matching)` chosen for the current message,
/// `[matching, active)` writable but not chosen,
/// `[active, eligible)` became writable during a multipart message (they join
/// at the next message),
/// `[eligible, len)` at their HWM, waiting for `activated`.
#[derive(Default)]
pub(crate) struct Dist {
    pipes: PipeArray,
    matching: usize,
    active: usize,
    eligible: usize,
    /// In the middle of a multipart message.
    more: bool,
}

impl Dist {
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.pipes.push(id);
        self.activated(id);
    }

    /// The pipe has room again (`write_activated`).
    pub(crate) fn activated(&mut self, id: PipeId) {
        let Some(i) = self.pipes.index(id) else {
            return;
        };
        if i < self.eligible {
            return;
        }
        self.pipes.swap(i, self.eligible);
        self.eligible += 1;
        if !self.more {
            // Outside a message `active == eligible - 1` here.
            self.pipes.swap(self.eligible - 1, self.active);
            self.active += 1;
        }
    }

    /// Move `id` out of all partitions (to the inactive tail).
    fn deactivate(&mut self, id: PipeId) {
        let Some(mut i) = self.pipes.index(id) else {
            return;
        };
        if i < self.matching {
            self.matching -= 1;
            self.pipes.swap(i, self.matching);
            i = self.matching;
        }
        if i < self.active {
            self.active -= 1;
            self.pipes.swap(i, self.active);
            i = self.active;
        }
        if i < self.eligible {
            self.eligible -= 1;
            self.pipes.swap(i, self.eligible);
        }
    }

    pub(crate) fn detach(&mut self, id: PipeId) {
        self.deactivate(id);
        self.pipes.remove(id);
    }

    /// Every attached pipe, writable or not.
    pub(crate) fn for_each_pipe(&self, mut f: impl FnMut(PipeId)) {
        for i in 0..self.pipes.len() {
            f(self.pipes.at(i));
        }
    }

    /// Choose `id` for the current message (no-op if already chosen). A
    /// pipe left out for being full loses the message: a drop.
    #[inline]
    pub(crate) fn match_pipe(&mut self, id: PipeId, pipes: &mut Pipes) {
        if let Some(i) = self.pipes.index(id) {
            if i >= self.matching && i < self.active {
                self.pipes.swap(i, self.matching);
                self.matching += 1;
            } else if i >= self.eligible {
                skipped_full(id, pipes);
            }
        }
    }

    #[inline]
    pub(crate) fn unmatch(&mut self) {
        self.matching = 0;
    }

    /// Choose exactly the writable pipes that were not chosen (INVERT_MATCHING).
    pub(crate) fn reverse_match(&mut self) {
        let prev = self.matching;
        self.matching = 0;
        for i in prev..self.active {
            self.pipes.swap(i, self.matching);
            self.matching += 1;
        }
    }

    /// Whether every chosen pipe can take a new message (XPUB_NODROP).
    pub(crate) fn matching_have_room(&mut self, pipes: &mut Pipes) -> bool {
        (0..self.matching).all(|i| pipes.get_mut(self.pipes.at(i)).out.check_write())
    }

    /// Send one frame to the chosen pipes. On a first frame, chosen pipes
    /// that cannot take a new message are dropped from the choice (and
    /// deactivated). No chosen pipe: the frame is dropped.
    #[inline]
    pub(crate) fn send_to_matching(&mut self, mut msg: Msg, pipes: &mut Pipes) {
        let more = msg.more();
        if !self.more {
            let mut i = 0;
            while i < self.matching {
                let id = self.pipes.at(i);
                if pipes.get_mut(id).out.check_write() {
                    i += 1;
                } else {
                    pipes.note_full(id);
                    pipes.note_dropped(drop_reason::HWM, id);
                    self.deactivate(id);
                }
            }
        }
        if self.matching > 0 {
            let last = self.matching - 1;
            if last > 0 {
                msg.make_shareable();
            }
            for i in 0..last {
                let p = pipes.get_mut(self.pipes.at(i));
                p.out.write(msg.clone());
                if !more {
                    p.out.flush();
                }
            }
            let p = pipes.get_mut(self.pipes.at(last));
            p.out.write(msg);
            if !more {
                p.out.flush();
            }
        }
        if !more {
            // Pipes activated during the message join now.
            self.active = self.eligible;
        }
        self.more = more;
    }

    /// Send one frame to every writable pipe.
    pub(crate) fn send_to_all(&mut self, msg: Msg, pipes: &mut Pipes) {
        let more = msg.more();
        if !self.more {
            self.matching = self.active;
        }
        self.send_to_matching(msg, pipes);
        if !more {
            self.matching = 0;
        }
    }
}

/// A chosen pipe that was full when last written (not one whose reader is
/// gone: it is on its way out).
#[cold]
fn skipped_full(id: PipeId, pipes: &mut Pipes) {
    if !pipes.get(id).out.is_reader_gone() {
        pipes.note_dropped(drop_reason::HWM, id);
    }
}
