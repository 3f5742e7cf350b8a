//! The subscriber side shared by SUB/XSUB and DISH: messages fair-queued in
//! from every publisher, and the subscriptions (DISH: joins) sent up to all
//! of them, resent whole to a new or reconnected pipe.

use super::dist::Dist;
use super::fq::Fq;
use super::notice_departure;
use crate::channel::pipes::{PipeId, Pipes};
use crate::msg::{Msg, FLAG_SUBSCRIBE};

#[derive(Default)]
pub(crate) struct Upstream {
    /// Where messages come from.
    pub(super) fq: Fq,
    /// Where subscriptions go (XSUB also sends user messages through it).
    pub(super) dist: Dist,
}

impl Upstream {
    /// A pipe joins; it gets every current subscription (`each` lists them).
    pub(crate) fn attach(&mut self, id: PipeId, pipes: &mut Pipes, each: impl FnOnce(&mut dyn FnMut(&[u8]))) {
        self.fq.attach(id);
        self.dist.attach(id);
        self.resend(id, pipes, each);
    }

    pub(crate) fn detach(&mut self, id: PipeId) {
        self.fq.detach(id);
        self.dist.detach(id);
    }

    pub(crate) fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        notice_departure(id, pipes);
        self.fq.activated(id);
    }

    pub(crate) fn write_activated(&mut self, id: PipeId) {
        self.dist.activated(id);
    }

    /// Send every current subscription to one (new or reconnected) pipe.
    /// `each` calls its argument once per topic (group).
    pub(crate) fn resend(&self, id: PipeId, pipes: &mut Pipes, each: impl FnOnce(&mut dyn FnMut(&[u8]))) {
        let p = pipes.get_mut(id);
        let mut any = false;
        each(&mut |topic| {
            p.out.write(Msg::from_slice(topic).with_flags(FLAG_SUBSCRIBE));
            any = true;
        });
        if any {
            p.out.flush();
        }
    }

    /// Tell every publisher of one (un)subscription, bypassing the HWM:
    /// they are few, and losing one would silently change what arrives.
    pub(crate) fn tell_all(&self, topic: &[u8], flag: u8, pipes: &mut Pipes) {
        let msg = Msg::from_slice(topic).with_flags(flag);
        self.dist.for_each_pipe(|id| {
            let p = pipes.get_mut(id);
            p.out.write(msg.clone());
            p.out.flush();
        });
    }
}
