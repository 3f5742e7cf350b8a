//! Draft RADIO and DISH (libzmq 4.3.5's `radio.cpp`, `dish.cpp`).
//!
//! In a pipe, a grouped message is two frames, as on the wire: the group
//! (MORE), then the body. DISH's joins and leaves travel upstream as the
//! internal subscription messages (`FLAG_SUBSCRIBE` / `FLAG_CANCEL`, body =
//! group); engines turn them into ZMTP JOIN/LEAVE commands. libzmq sends
//! those as command frames whatever the peer's ZMTP minor version; unlike
//! SUBSCRIBE there is no 3.0 data-frame form.
//!
//! RADIO filters on the sending side by exact group; a `udp://` pipe takes
//! every group (it cannot hear joins) and the receiving DISH filters again.

use super::dist::Dist;
use super::upstream::Upstream;
use super::{bool_value, Pattern};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::{Msg, FLAG_CANCEL, FLAG_SUBSCRIBE, GROUP_MAX_LENGTH};
use crate::options::opt;
use std::collections::{HashMap, HashSet};

pub(crate) struct Radio {
    /// Group -> the pipes that joined it (a pipe joining twice is listed twice, as libzmq's multimap).
    groups: HashMap<Vec<u8>, Vec<PipeId>>,
    /// udp:// pipes: every message goes to them.
    all_groups: Vec<PipeId>,
    dist: Dist,
    /// Drop at the HWM (default) rather than EAGAIN (XPUB_NODROP).
    lossy: bool,
}

impl Radio {
    pub(crate) fn new() -> Radio {
        Radio { groups: HashMap::new(), all_groups: Vec::new(), dist: Dist::default(), lossy: true }
    }

    fn read_joins(&mut self, id: PipeId, pipes: &mut Pipes) {
        let p = pipes.get_mut(id);
        while let Some(m) = p.read() {
            if m.is_subscribe() {
                self.groups.entry(m.as_slice().to_vec()).or_default().push(id);
            } else if m.is_cancel() {
                if let Some(list) = self.groups.get_mut(m.as_slice()) {
                    if let Some(i) = list.iter().position(|&x| x == id) {
                        list.swap_remove(i);
                    }
                    if list.is_empty() {
                        self.groups.remove(m.as_slice());
                    }
                }
            }
            // A DISH never sends data; libzmq drops whatever else arrives.
        }
    }
}

impl Pattern for Radio {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.dist.attach(id);
        if pipes.get(id).all_groups {
            self.all_groups.push(id);
        } else {
            self.read_joins(id, pipes);
        }
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.groups.retain(|_, list| {
            list.retain(|&x| x != id);
            !list.is_empty()
        });
        self.all_groups.retain(|&x| x != id);
        self.dist.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.read_joins(id, pipes);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.dist.activated(id);
    }

    fn send(&mut self, mut msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if msg.more() {
            return Err((msg, Error::Invalid("RADIO sends single-part messages only")));
        }
        self.dist.unmatch();
        if let Some(list) = self.groups.get(msg.group()) {
            for &p in list {
                self.dist.match_pipe(p, pipes);
            }
        }
        for &p in &self.all_groups {
            self.dist.match_pipe(p, pipes);
        }
        if !self.lossy && !self.dist.matching_have_room(pipes) {
            self.dist.unmatch();
            return Err((msg, Error::Again));
        }
        let group = Msg::from_slice(msg.group()).with_more(true);
        let _ = msg.set_group(b"");
        self.dist.send_to_matching(group, pipes);
        self.dist.send_to_matching(msg, pipes);
        self.dist.unmatch();
        Ok(())
    }

    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg, Error> {
        Err(Error::NotSupported)
    }

    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        if option == opt::XPUB_NODROP {
            self.lossy = !bool_value(value)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn get_option_int(&self, option: i32) -> Option<i64> {
        (option == opt::THREAD_SAFE).then_some(1)
    }
}

pub(crate) struct Dish {
    groups: HashSet<Vec<u8>>,
    up: Upstream,
    /// A matching message read by `has_in`.
    prefetched: Option<Msg>,
}

/// The length check libzmq's `zmq_join`/`zmq_leave` make first.
fn check_group(group: &[u8]) -> Result<(), Error> {
    if group.len() > GROUP_MAX_LENGTH {
        return Err(Error::Invalid("group longer than ZMQ_GROUP_MAX_LENGTH"));
    }
    Ok(())
}

impl Dish {
    pub(crate) fn new() -> Dish {
        Dish { groups: HashSet::new(), up: Upstream::default(), prefetched: None }
    }

    /// The next well-formed message of a joined group. A peer that breaks
    /// the two-frame form (libzmq's `dish_session_t` answers EFAULT and
    /// drops the connection) loses its pipe.
    fn next(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        loop {
            let (group, id) = self.up.fq.recv(pipes)?;
            if !group.more() || group.len() > GROUP_MAX_LENGTH {
                self.drop_peer(group.more(), id, pipes);
                continue;
            }
            let (mut body, _) = match self.up.fq.recv(pipes) {
                Ok(b) => b,
                Err(_) => continue,
            };
            if body.more() {
                self.drop_peer(true, id, pipes);
                continue;
            }
            if !self.groups.contains(group.as_slice()) {
                continue;
            }
            body.set_group(group.as_slice())?;
            return Ok(body);
        }
    }

    fn drop_peer(&mut self, mut more: bool, id: PipeId, pipes: &mut Pipes) {
        while more {
            match self.up.fq.recv(pipes) {
                Ok((m, _)) => more = m.more(),
                Err(_) => break,
            }
        }
        pipes.mark_dead(id);
    }
}

impl Pattern for Dish {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.up.attach(id, pipes, |f| self.groups.iter().for_each(|g| f(g)));
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.up.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.up.read_activated(id, pipes);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.up.write_activated(id);
    }

    fn hiccuped(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.up.resend(id, pipes, |f| self.groups.iter().for_each(|g| f(g)));
    }

    fn send(&mut self, msg: Msg, _pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        Err((msg, Error::NotSupported))
    }

    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        match self.prefetched.take() {
            Some(m) => Ok(m),
            None => self.next(pipes),
        }
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.prefetched.is_none() {
            self.prefetched = self.next(pipes).ok();
        }
        self.prefetched.is_some()
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        // libzmq's dish_t::xhas_out: joins can be made at any time.
        true
    }

    fn join(&mut self, group: &[u8], pipes: &mut Pipes) -> Result<(), Error> {
        check_group(group)?;
        if !self.groups.insert(group.to_vec()) {
            return Err(Error::Invalid("group already joined"));
        }
        self.up.tell_all(group, FLAG_SUBSCRIBE, pipes);
        Ok(())
    }

    fn leave(&mut self, group: &[u8], pipes: &mut Pipes) -> Result<(), Error> {
        check_group(group)?;
        if !self.groups.remove(group) {
            return Err(Error::Invalid("group not joined"));
        }
        self.up.tell_all(group, FLAG_CANCEL, pipes);
        Ok(())
    }

    fn get_option_int(&self, option: i32) -> Option<i64> {
        (option == opt::THREAD_SAFE).then_some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Harness;
    use crate::error::Error;
    use oxmq_proto::SocketType;

    #[test]
    fn radio_refuses_multipart_and_recv() {
        let mut h = Harness::new(SocketType::Radio);
        assert!(matches!(h.send(&[b"a", b"b"]), Err(Error::Invalid(_))));
        assert_eq!(h.recv_frame().unwrap_err(), Error::NotSupported);
        assert!(h.has_out());
        assert!(!h.has_in());
    }
}
