//! PUB, XPUB, SUB and XSUB (RFC 29).
//!
//! Subscriptions travel upstream as internal messages (`FLAG_SUBSCRIBE` /
//! `FLAG_CANCEL`, body = topic); engines translate them to and from the wire
//! (SUBSCRIBE/CANCEL commands or the legacy 0x01/0x00 prefix).
//!
//! Publishers keep a [`PipeTrie`] (topic -> set of pipes, like libzmq's mtrie)
//! and filter at the source. Subscribers keep a [`CountedTrie`], send every
//! subscription upstream but a cancellation only when the count for that topic
//! drops to zero, resend the whole set to new and reconnected pipes, and (SUB
//! only) also filter what they receive.

use super::dist::Dist;
use super::trie::{CountedTrie, PipeTrie, RmResult};
use super::upstream::Upstream;
use super::{bool_value, int_value, Pattern};
use crate::channel::pipes::{PipeId, Pipes};
use crate::error::Error;
use crate::msg::{Msg, FLAG_CANCEL, FLAG_SUBSCRIBE};
use crate::options::opt;
use std::collections::VecDeque;

/// An XPUB subscription message as the user sees it: 0x01/0x00 + topic.
fn user_subscription(subscribe: bool, topic: &[u8]) -> Msg {
    let mut v = Vec::with_capacity(topic.len() + 1);
    v.push(subscribe as u8);
    v.extend_from_slice(topic);
    Msg::from_vec(v)
}

/// PUB (`is_pub`) and XPUB.
pub(crate) struct XPub {
    is_pub: bool,
    subs: PipeTrie,
    dist: Dist,
    /// In the middle of sending a multipart message.
    more_send: bool,
    verbose_subs: bool,
    verbose_unsubs: bool,
    /// Drop at the HWM (default) rather than block (XPUB_NODROP).
    lossy: bool,
    invert: bool,
    welcome: Option<Msg>,
    /// XPUB: subscription notices and upstream messages for the user.
    pending: VecDeque<Msg>,
    // XPUB_MANUAL / XPUB_MANUAL_LAST_VALUE / ONLY_FIRST_SUBSCRIBE.
    manual: Manual,
}

/// XPUB_MANUAL state, as libzmq keeps it: peers' (un)subscriptions are only
/// reported; the user applies them with SUBSCRIBE/UNSUBSCRIBE on the XPUB,
/// which act on the pipe of the notice received last.
#[derive(Default)]
struct Manual {
    on: bool,
    /// XPUB_MANUAL_LAST_VALUE: the first send after a notice goes to that pipe only.
    send_last_pipe: bool,
    /// What each peer asked for, so its departure reports every topic it had.
    requested: PipeTrie,
    /// The pipe of each queued notice (None: a departed peer's), in order;
    /// libzmq pairs them with notices when the user receives.
    pending_pipes: VecDeque<Option<PipeId>>,
    last_pipe: Option<PipeId>,
}

impl XPub {
    pub(crate) fn new(is_pub: bool) -> XPub {
        XPub {
            is_pub,
            subs: PipeTrie::default(),
            dist: Dist::default(),
            more_send: false,
            verbose_subs: false,
            verbose_unsubs: false,
            lossy: true,
            invert: false,
            welcome: None,
            pending: VecDeque::new(),
            manual: Manual::default(),
        }
    }

    /// Apply everything the peer sent: subscriptions update the trie (XPUB
    /// queues notices for the user); XPUB also passes other messages up.
    fn read_subscriptions(&mut self, id: PipeId, pipes: &mut Pipes) {
        let p = pipes.get_mut(id);
        while let Some(m) = p.read() {
            if m.is_subscribe() || m.is_cancel() {
                let subscribe = m.is_subscribe();
                let topic = m.as_slice();
                if self.manual.on {
                    if subscribe {
                        self.manual.requested.add(topic, id);
                    } else {
                        self.manual.requested.rm(topic, id);
                    }
                    // A PUB cannot receive the notices, so nothing is ever applied (libzmq alike).
                    if !self.is_pub {
                        self.manual.pending_pipes.push_back(Some(id));
                        self.pending.push_back(user_subscription(subscribe, topic));
                    }
                    continue;
                }
                let notify = if subscribe {
                    self.subs.add(topic, id) || self.verbose_subs
                } else {
                    // libzmq also notifies a cancellation it knew nothing about.
                    self.subs.rm(topic, id) != RmResult::ValuesRemain || self.verbose_unsubs
                };
                if notify && !self.is_pub {
                    self.pending.push_back(user_subscription(subscribe, topic));
                }
            } else if !self.is_pub && !m.is_internal() {
                self.pending.push_back(m);
            }
        }
    }
}

impl Pattern for XPub {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.dist.attach(id);
        // A multicast pipe takes everything, silently (libzmq's subscribe_to_all).
        if pipes.get(id).all_groups {
            self.subs.add(b"", id);
        }
        if let Some(w) = &self.welcome {
            let p = pipes.get_mut(id);
            p.out.write(w.clone());
            p.out.flush();
        }
        self.read_subscriptions(id, pipes);
    }

    fn detach(&mut self, id: PipeId, _pipes: &mut Pipes) {
        if self.manual.on {
            // Every topic the peer had is reported, whoever else has it.
            let is_pub = self.is_pub;
            let (pending, manual) = (&mut self.pending, &mut self.manual);
            let pending_pipes = &mut manual.pending_pipes;
            manual.requested.rm_pipe(id, |topic, _| {
                if !is_pub {
                    pending.push_back(user_subscription(false, topic));
                    pending_pipes.push_back(None);
                }
            });
            for p in pending_pipes.iter_mut() {
                if *p == Some(id) {
                    *p = None;
                }
            }
            manual.last_pipe = None;
            self.subs.rm_pipe(id, |_, _| {});
            self.dist.detach(id);
            return;
        }
        let is_pub = self.is_pub;
        let verbose_unsubs = self.verbose_unsubs;
        let pending = &mut self.pending;
        self.subs.rm_pipe(id, |topic, last| {
            if !is_pub && (last || verbose_unsubs) {
                pending.push_back(user_subscription(false, topic));
            }
        });
        self.dist.detach(id);
    }

    fn read_activated(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.read_subscriptions(id, pipes);
    }

    fn write_activated(&mut self, id: PipeId, _pipes: &mut Pipes) {
        self.dist.activated(id);
    }

    #[inline]
    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        let more = msg.more();
        if !self.more_send {
            let last_only = if self.manual.send_last_pipe { self.manual.last_pipe.take() } else { None };
            if !more && !self.invert && self.subs.is_empty() {
                // Nobody subscribed: nothing to do.
                return Ok(());
            }
            self.dist.unmatch();
            let dist = &mut self.dist;
            match last_only {
                // XPUB_MANUAL_LAST_VALUE: the pipe just subscribed, if the message matches it.
                Some(last) => self.subs.match_pipes(msg.as_slice(), |p| {
                    if p == last {
                        dist.match_pipe(p, pipes)
                    }
                }),
                None => self.subs.match_pipes(msg.as_slice(), |p| dist.match_pipe(p, pipes)),
            }
            if self.invert {
                self.dist.reverse_match();
            }
            if !self.lossy && !self.dist.matching_have_room(pipes) {
                return Err((msg, Error::Again));
            }
        }
        self.dist.send_to_matching(msg, pipes);
        if !more {
            self.dist.unmatch();
        }
        self.more_send = more;
        Ok(())
    }

    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg, Error> {
        if self.is_pub {
            return Err(Error::NotSupported);
        }
        let m = self.pending.pop_front().ok_or(Error::Again)?;
        if self.manual.on {
            if let Some(p) = self.manual.pending_pipes.pop_front() {
                self.manual.last_pipe = p;
            }
        }
        Ok(m)
    }

    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        !self.is_pub && !self.pending.is_empty()
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }

    fn set_option(&mut self, option: i32, value: &[u8], _pipes: &mut Pipes) -> Result<bool, Error> {
        match option {
            opt::XPUB_VERBOSE => {
                self.verbose_subs = bool_value(value)?;
                self.verbose_unsubs = false;
            }
            opt::XPUB_VERBOSER => {
                self.verbose_subs = bool_value(value)?;
                self.verbose_unsubs = self.verbose_subs;
            }
            opt::XPUB_NODROP => self.lossy = !bool_value(value)?,
            opt::XPUB_WELCOME_MSG => {
                self.welcome = if value.is_empty() { None } else { Some(Msg::from_slice(value)) };
            }
            opt::INVERT_MATCHING => self.invert = int_value(value)? != 0,
            opt::XPUB_MANUAL => self.manual.on = bool_value(value)?,
            opt::XPUB_MANUAL_LAST_VALUE => {
                self.manual.on = bool_value(value)?;
                self.manual.send_last_pipe = self.manual.on;
            }
            // Validated only: what libzmq 4.3.5 does with and without it is
            // what oxmq always does (only single-frame messages from a peer
            // are subscriptions; python/tests/test_xpub_options.py compares).
            opt::ONLY_FIRST_SUBSCRIBE => {
                bool_value(value)?;
            }
            // XPUB_MANUAL: the user applies a notice to the pipe it came from;
            // with no such pipe (none received yet, or its peer left) nothing happens.
            opt::SUBSCRIBE | opt::UNSUBSCRIBE if self.manual.on => {
                if let Some(last) = self.manual.last_pipe {
                    if option == opt::SUBSCRIBE {
                        self.subs.add(value, last);
                    } else {
                        self.subs.rm(value, last);
                    }
                }
            }
            opt::SUBSCRIBE | opt::UNSUBSCRIBE => return Err(Error::Invalid("SUBSCRIBE on an XPUB needs XPUB_MANUAL")),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn get_option_int(&self, option: i32) -> Option<i64> {
        match option {
            opt::INVERT_MATCHING => Some(self.invert as i64),
            opt::TOPICS_COUNT => Some(self.subs.num_topics() as i64),
            _ => None,
        }
    }
}

/// SUB (`is_sub`) and XSUB.
pub(crate) struct XSub {
    is_sub: bool,
    subs: CountedTrie,
    up: Upstream,
    /// In the middle of receiving a (matching) multipart message.
    more_recv: bool,
    /// XSUB: in the middle of sending a multipart message.
    more_send: bool,
    /// A first frame read by `has_in`.
    prefetched: Option<Msg>,
    invert: bool,
}

impl XSub {
    pub(crate) fn new(is_sub: bool) -> XSub {
        XSub {
            is_sub,
            subs: CountedTrie::default(),
            up: Upstream::default(),
            more_recv: false,
            more_send: false,
            prefetched: None,
            invert: false,
        }
    }

    /// Record a (un)subscription and tell every publisher. Subscriptions
    /// bypass the HWM: they are few and must not be lost.
    fn subscribe(&mut self, topic: &[u8], subscribe: bool, pipes: &mut Pipes) {
        let flag = if subscribe {
            self.subs.add(topic);
            FLAG_SUBSCRIBE
        } else {
            if !self.subs.rm(topic) {
                return;
            }
            FLAG_CANCEL
        };
        self.up.tell_all(topic, flag, pipes);
    }

    #[inline]
    fn wanted(&self, first: &Msg) -> bool {
        !self.is_sub || (self.subs.matches(first.as_slice()) != self.invert)
    }

    /// Discard the rest of a message whose first frame had `more`.
    fn skip_rest(&mut self, mut more: bool, pipes: &mut Pipes) {
        while more {
            match self.up.fq.recv(pipes) {
                Ok((m, _)) => more = m.more(),
                Err(_) => break,
            }
        }
    }
}

impl Pattern for XSub {
    fn attach(&mut self, id: PipeId, pipes: &mut Pipes) {
        self.up.attach(id, pipes, |f| self.subs.for_each(f));
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
        self.up.resend(id, pipes, |f| self.subs.for_each(f));
    }

    fn send(&mut self, msg: Msg, pipes: &mut Pipes) -> Result<(), (Msg, Error)> {
        if self.is_sub {
            return Err((msg, Error::NotSupported));
        }
        let more = msg.more();
        if !self.more_send {
            if let Some((&kind @ (0 | 1), topic)) = msg.as_slice().split_first() {
                self.subscribe(topic, kind == 1, pipes);
                return Ok(());
            }
        }
        self.up.dist.send_to_all(msg, pipes);
        self.more_send = more;
        Ok(())
    }

    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg, Error> {
        if let Some(m) = self.prefetched.take() {
            self.more_recv = m.more();
            return Ok(m);
        }
        loop {
            let (m, _) = self.up.fq.recv(pipes)?;
            if self.more_recv || self.wanted(&m) {
                self.more_recv = m.more();
                return Ok(m);
            }
            self.skip_rest(m.more(), pipes);
        }
    }

    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.more_recv || self.prefetched.is_some() {
            return true;
        }
        loop {
            match self.up.fq.recv(pipes) {
                Err(_) => return false,
                Ok((m, _)) => {
                    if self.wanted(&m) {
                        self.prefetched = Some(m);
                        return true;
                    }
                    self.skip_rest(m.more(), pipes);
                }
            }
        }
    }

    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        !self.is_sub
    }

    fn set_option(&mut self, option: i32, value: &[u8], pipes: &mut Pipes) -> Result<bool, Error> {
        match option {
            opt::SUBSCRIBE if self.is_sub => self.subscribe(value, true, pipes),
            opt::UNSUBSCRIBE if self.is_sub => self.subscribe(value, false, pipes),
            opt::INVERT_MATCHING => self.invert = int_value(value)? != 0,
            // As on XPUB: validated; oxmq's XSUB already sends what libzmq 4.3.5's does either way.
            opt::ONLY_FIRST_SUBSCRIBE => {
                bool_value(value)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn get_option_int(&self, option: i32) -> Option<i64> {
        match option {
            opt::INVERT_MATCHING => Some(self.invert as i64),
            opt::TOPICS_COUNT => Some(self.subs.num_topics() as i64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{m, Harness};
    use crate::error::Error;
    use crate::options::opt;
    use oxmq_proto::SocketType;

    #[test]
    fn pub_without_subscribers_drops() {
        let mut h = Harness::new(SocketType::Pub);
        h.send(&[b"nobody"]).unwrap();
        let mut a = h.connect(0);
        h.send(&[b"still nobody"]).unwrap();
        h.send(&[b"multi", b"part"]).unwrap();
        assert!(a.frames().is_empty());
        assert!(h.has_out());
        assert!(!h.has_in());
        assert_eq!(h.recv_frame().unwrap_err(), Error::NotSupported);
    }

    #[test]
    fn pub_filters_by_prefix() {
        let mut h = Harness::new(SocketType::Pub);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        let mut c = h.connect(0);
        let mut d = h.connect(0);
        a.subscribe(&mut h, b"A", true);
        b.subscribe(&mut h, b"AB", true);
        c.subscribe(&mut h, b"", true);
        d.subscribe(&mut h, b"A", true);
        d.subscribe(&mut h, b"AB", true); // overlapping: still one copy
        h.send(&[b"ABC"]).unwrap();
        h.send(&[b"AX", b"more"]).unwrap();
        h.send(&[b"B"]).unwrap();
        h.send(&[b""]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"ABC"]), m(&[b"AX", b"more"])]);
        assert_eq!(b.msgs(), vec![m(&[b"ABC"])]);
        assert_eq!(c.msgs(), vec![m(&[b"ABC"]), m(&[b"AX", b"more"]), m(&[b"B"]), m(&[b""])]);
        assert_eq!(d.msgs(), vec![m(&[b"ABC"]), m(&[b"AX", b"more"])]);
        a.subscribe(&mut h, b"A", false);
        h.send(&[b"A1"]).unwrap();
        assert!(a.msgs().is_empty());
        assert_eq!(d.msgs(), vec![m(&[b"A1"])]);
    }

    #[test]
    fn pub_subscriptions_per_pipe_are_a_set() {
        // A libzmq SUB sends each SUBSCRIBE but a CANCEL only for its last one.
        let mut h = Harness::new(SocketType::Pub);
        let mut a = h.connect(0);
        a.subscribe(&mut h, b"T", true);
        a.subscribe(&mut h, b"T", true);
        a.subscribe(&mut h, b"T", false);
        h.send(&[b"T1"]).unwrap();
        assert!(a.msgs().is_empty());
    }

    #[test]
    fn pub_multipart_follows_first_frame_set() {
        let mut h = Harness::new(SocketType::Pub);
        let mut a = h.connect(0);
        a.subscribe(&mut h, b"x", true);
        h.send_frame(b"x1", true).unwrap();
        // A subscriber joining mid-message gets nothing of it.
        let mut b = h.connect(0);
        b.subscribe(&mut h, b"", true);
        h.send_frame(b"y", true).unwrap();
        h.send_frame(b"z", false).unwrap();
        h.send(&[b"after"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"x1", b"y", b"z"])]);
        assert_eq!(b.msgs(), vec![m(&[b"after"])]);
    }

    #[test]
    fn pub_drops_at_hwm_per_subscriber() {
        let mut h = Harness::new(SocketType::Pub);
        let mut slow = h.connect(2);
        let mut fast = h.connect(0);
        slow.subscribe(&mut h, b"", true);
        fast.subscribe(&mut h, b"", true);
        for i in 0..5u8 {
            h.send(&[&[i], b"tail"]).unwrap();
        }
        assert_eq!(slow.msgs(), vec![m(&[&[0], b"tail"]), m(&[&[1], b"tail"])]);
        assert_eq!(fast.msgs().len(), 5);
        h.activate_write(&slow);
        h.send(&[b"again"]).unwrap();
        assert_eq!(slow.msgs(), vec![m(&[b"again"])]);
    }

    #[test]
    fn pub_detaches_gone_subscriber() {
        let mut h = Harness::new(SocketType::Pub);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"", true);
        b.subscribe(&mut h, b"", true);
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        h.send(&[b"m"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"m"])]);
    }

    #[test]
    fn xpub_reports_first_subscribe_and_last_unsubscribe() {
        let mut h = Harness::new(SocketType::XPub);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        assert!(!h.has_in());
        a.subscribe(&mut h, b"A", true);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        b.subscribe(&mut h, b"A", true);
        a.subscribe(&mut h, b"A", true);
        assert_eq!(h.recv(), Err(Error::Again), "duplicates are filtered");
        a.subscribe(&mut h, b"A", false);
        assert_eq!(h.recv(), Err(Error::Again), "b still subscribed");
        b.subscribe(&mut h, b"A", false);
        assert_eq!(h.recv().unwrap(), m(&[b"\x00A"]));
        // Publishing still works as for PUB.
        b.subscribe(&mut h, b"", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01"]));
        h.send(&[b"data"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"data"])]);
        assert!(a.msgs().is_empty());
    }

    #[test]
    fn xpub_verbose_and_verboser() {
        let mut h = Harness::new(SocketType::XPub);
        assert!(h.set_int(opt::XPUB_VERBOSE, 1).unwrap());
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"A", true);
        b.subscribe(&mut h, b"A", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        a.subscribe(&mut h, b"A", false);
        assert_eq!(h.recv(), Err(Error::Again), "VERBOSE passes all subscribes only");
        assert!(h.set_int(opt::XPUB_VERBOSER, 1).unwrap());
        a.subscribe(&mut h, b"A", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        a.subscribe(&mut h, b"A", false);
        assert_eq!(h.recv().unwrap(), m(&[b"\x00A"]));
        assert_eq!(h.set_int(opt::XPUB_VERBOSE, -1), Err(Error::Invalid("")));
    }

    #[test]
    fn xpub_reports_unsubscriptions_of_a_gone_peer() {
        let mut h = Harness::new(SocketType::XPub);
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"only-a", true);
        a.subscribe(&mut h, b"shared", true);
        b.subscribe(&mut h, b"shared", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01only-a"]));
        assert_eq!(h.recv().unwrap(), m(&[b"\x01shared"]));
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        assert_eq!(h.recv().unwrap(), m(&[b"\x00only-a"]));
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn xpub_nodrop_blocks_at_hwm() {
        let mut h = Harness::new(SocketType::XPub);
        h.set_int(opt::XPUB_NODROP, 1).unwrap();
        let mut a = h.connect(1);
        a.subscribe(&mut h, b"", true);
        h.send(&[b"1"]).unwrap();
        assert_eq!(h.send(&[b"2"]), Err(Error::Again));
        assert_eq!(a.msgs(), vec![m(&[b"1"])]);
        h.activate_write(&a);
        h.send(&[b"2"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"2"])]);
    }

    #[test]
    fn xpub_passes_upstream_messages_and_sends_welcome() {
        let mut h = Harness::new(SocketType::XPub);
        h.set_bytes(opt::XPUB_WELCOME_MSG, b"welcome").unwrap();
        let mut a = h.connect(0);
        assert_eq!(a.msgs(), vec![m(&[b"welcome"])]);
        a.send(&mut h, &[b"up", b"stream"]);
        assert_eq!(h.recv().unwrap(), m(&[b"up", b"stream"]));
    }

    #[test]
    fn xpub_manual_applies_only_what_the_user_subscribes() {
        let mut h = Harness::new(SocketType::XPub);
        assert_eq!(h.set_bytes(opt::SUBSCRIBE, b"A"), Err(Error::Invalid("")), "not manual: EINVAL");
        h.set_int(opt::XPUB_MANUAL, 1).unwrap();
        assert!(h.set_bytes(opt::SUBSCRIBE, b"A").unwrap(), "no notice received yet: a no-op");
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"A", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        h.send(&[b"A0"]).unwrap();
        assert!(a.msgs().is_empty(), "a notice alone subscribes nobody");
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        h.send(&[b"A1"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"A1"])]);
        assert!(b.msgs().is_empty());
        // Every notice is passed up, duplicates included, each naming its own pipe.
        b.subscribe(&mut h, b"A", true);
        a.subscribe(&mut h, b"A", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap(); // b
        assert_eq!(h.recv().unwrap(), m(&[b"\x01A"]));
        h.send(&[b"A2"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"A2"])]);
        assert_eq!(b.msgs(), vec![m(&[b"A2"])]);
        b.subscribe(&mut h, b"A", false);
        assert_eq!(h.recv().unwrap(), m(&[b"\x00A"]));
        h.send(&[b"A3"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"A3"])], "a cancel is applied by the user too");
        h.set_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
        h.send(&[b"A4"]).unwrap();
        assert!(b.msgs().is_empty());
        assert_eq!(a.msgs(), vec![m(&[b"A3"]), m(&[b"A4"])]);
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn xpub_manual_reports_every_topic_of_a_gone_peer() {
        let mut h = Harness::new(SocketType::XPub);
        h.set_int(opt::XPUB_MANUAL, 1).unwrap();
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        for peer in [&mut a, &mut b] {
            peer.subscribe(&mut h, b"S", true);
            assert_eq!(h.recv().unwrap(), m(&[b"\x01S"]));
            h.set_bytes(opt::SUBSCRIBE, b"S").unwrap();
        }
        a.subscribe(&mut h, b"only-a", true);
        assert_eq!(h.recv().unwrap(), m(&[b"\x01only-a"]));
        a.close();
        h.activate_read(&a);
        assert!(!h.alive(&a));
        let mut gone = vec![h.recv().unwrap(), h.recv().unwrap()];
        gone.sort_by(|x, y| x[0].as_slice().cmp(y[0].as_slice()));
        assert_eq!(gone, vec![m(&[b"\x00S"]), m(&[b"\x00only-a"])], "shared topics too");
        // The notice names no pipe: SUBSCRIBE is a no-op, b is untouched.
        h.set_bytes(opt::UNSUBSCRIBE, b"S").unwrap();
        h.send(&[b"S1"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"S1"])]);
    }

    #[test]
    fn xpub_manual_last_value_goes_to_the_new_subscriber_only() {
        let mut h = Harness::new(SocketType::XPub);
        h.set_int(opt::XPUB_MANUAL_LAST_VALUE, 1).unwrap();
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"T", true);
        h.recv().unwrap();
        h.set_bytes(opt::SUBSCRIBE, b"T").unwrap();
        h.send(&[b"T0"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"T0"])]);
        b.subscribe(&mut h, b"T", true);
        h.recv().unwrap();
        h.set_bytes(opt::SUBSCRIBE, b"T").unwrap();
        h.send(&[b"T-last", b"value"]).unwrap();
        assert_eq!(b.msgs(), vec![m(&[b"T-last", b"value"])]);
        assert!(a.msgs().is_empty(), "the last value goes to the new subscriber only");
        h.send(&[b"T1"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"T1"])]);
        assert_eq!(b.msgs(), vec![m(&[b"T1"])]);
        // After that send the pipe is forgotten: a later SUBSCRIBE is a no-op.
        h.set_bytes(opt::SUBSCRIBE, b"U").unwrap();
        h.send(&[b"U1"]).unwrap();
        assert!(a.msgs().is_empty() && b.msgs().is_empty());
    }

    #[test]
    fn only_first_subscribe_is_validated() {
        for kind in [SocketType::XPub, SocketType::XSub, SocketType::Pub] {
            let mut h = Harness::new(kind);
            assert!(h.set_int(opt::ONLY_FIRST_SUBSCRIBE, 1).unwrap());
            assert!(h.set_int(opt::ONLY_FIRST_SUBSCRIBE, 0).unwrap());
            assert_eq!(h.set_int(opt::ONLY_FIRST_SUBSCRIBE, -1), Err(Error::Invalid("")));
        }
    }

    #[test]
    fn sub_sends_subscriptions_counted_and_resends_on_attach_and_hiccup() {
        let mut h = Harness::new(SocketType::Sub);
        assert!(h.set_bytes(opt::SUBSCRIBE, b"early").unwrap());
        let mut a = h.connect(0);
        assert_eq!(a.subs(), vec![(true, b"early".to_vec())]);
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        assert_eq!(a.subs(), vec![(true, b"A".to_vec()), (true, b"A".to_vec())]);
        h.set_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
        assert!(a.subs().is_empty(), "cancel only when the count reaches zero");
        h.set_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
        assert_eq!(a.subs(), vec![(false, b"A".to_vec())]);
        h.set_bytes(opt::UNSUBSCRIBE, b"never").unwrap();
        assert!(a.subs().is_empty());
        h.set_bytes(opt::SUBSCRIBE, b"B").unwrap();
        a.subs();
        h.pattern.hiccuped(a.id, &mut h.pipes);
        let mut again = a.subs();
        again.sort();
        assert_eq!(again, vec![(true, b"B".to_vec()), (true, b"early".to_vec())]);
        let mut b = h.connect(0);
        assert_eq!(b.subs().len(), 2);
    }

    #[test]
    fn sub_filters_received_messages() {
        let mut h = Harness::new(SocketType::Sub);
        let mut a = h.connect(0);
        a.send(&mut h, &[b"A1"]);
        assert!(!h.has_in(), "nothing subscribed");
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        a.send(&mut h, &[b"B1"]);
        a.send(&mut h, &[b"A2", b"x"]);
        a.send(&mut h, &[b"B2", b"y"]);
        a.send(&mut h, &[b"A3"]);
        assert!(h.has_in());
        assert_eq!(h.recv().unwrap(), m(&[b"A2", b"x"]));
        assert_eq!(h.recv().unwrap(), m(&[b"A3"]));
        assert_eq!(h.recv(), Err(Error::Again));
        assert_eq!(h.send(&[b"x"]), Err(Error::NotSupported));
        assert!(!h.has_out());
    }

    #[test]
    fn sub_invert_matching() {
        let mut h = Harness::new(SocketType::Sub);
        h.set_int(opt::INVERT_MATCHING, 1).unwrap();
        h.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        let mut a = h.connect(0);
        a.send(&mut h, &[b"A1"]);
        a.send(&mut h, &[b"B1"]);
        assert_eq!(h.recv().unwrap(), m(&[b"B1"]));
        assert_eq!(h.recv(), Err(Error::Again));
    }

    #[test]
    fn pub_invert_matching() {
        let mut h = Harness::new(SocketType::Pub);
        h.set_int(opt::INVERT_MATCHING, 1).unwrap();
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        a.subscribe(&mut h, b"A", true);
        h.send(&[b"A1"]).unwrap();
        h.send(&[b"B1"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"B1"])]);
        assert_eq!(b.msgs(), vec![m(&[b"A1"]), m(&[b"B1"])]);
    }

    #[test]
    fn xsub_turns_user_messages_into_subscriptions_and_does_not_filter() {
        let mut h = Harness::new(SocketType::XSub);
        assert!(!h.set_bytes(opt::SUBSCRIBE, b"x").unwrap(), "XSUB has no SUBSCRIBE option");
        let mut a = h.connect(0);
        let mut b = h.connect(0);
        h.send(&[b"\x01topic"]).unwrap();
        h.send(&[b"\x01topic"]).unwrap();
        h.send(&[b"\x00topic"]).unwrap();
        assert_eq!(a.subs(), vec![(true, b"topic".to_vec()), (true, b"topic".to_vec())]);
        assert_eq!(b.subs().len(), 2);
        h.send(&[b"\x00topic"]).unwrap();
        assert_eq!(a.subs(), vec![(false, b"topic".to_vec())]);
        assert_eq!(b.subs(), vec![(false, b"topic".to_vec())]);
        h.send(&[b"data", b"\x01not-a-sub"]).unwrap();
        assert_eq!(a.msgs(), vec![m(&[b"data", b"\x01not-a-sub"])]);
        assert_eq!(b.msgs(), vec![m(&[b"data", b"\x01not-a-sub"])]);
        a.send(&mut h, &[b"anything"]);
        assert_eq!(h.recv().unwrap(), m(&[b"anything"]));
        h.send(&[b"\x01new"]).unwrap();
        let mut c = h.connect(0);
        assert_eq!(c.subs(), vec![(true, b"new".to_vec())]);
    }
}
