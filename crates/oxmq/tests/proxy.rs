//! The core proxy: forwarding both ways, steering (PAUSE / RESUME /
//! TERMINATE / STATISTICS), capture (socket, prefixed, hook), ROUTER id
//! swapping, back-pressure, termination by the context, and the wait hook.

mod common;

use common::*;
use oxmq::proxy::{Capture, CaptureSocket, ProxyStats, Side, SideStats};
use oxmq::{errno, opt, Context, Error, Msg, Proxy, Socket, SocketType, WaitHook, DONTWAIT};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// A proxy thread's sockets, bound on fresh inproc endpoints.
struct Rig {
    ctx: Context,
    front_ep: String,
    back_ep: String,
    cap_ep: String,
    ctl_ep: String,
}

impl Rig {
    fn new() -> Rig {
        Rig {
            ctx: Context::new(),
            front_ep: inproc_endpoint(),
            back_ep: inproc_endpoint(),
            cap_ep: inproc_endpoint(),
            ctl_ep: inproc_endpoint(),
        }
    }

    fn bound(&self, kind: SocketType, ep: &str) -> Socket {
        let s = sock(&self.ctx, kind);
        s.bind(ep).unwrap();
        s
    }

    fn connected(&self, kind: SocketType, ep: &str) -> Socket {
        let s = sock(&self.ctx, kind);
        s.connect(ep).unwrap();
        s
    }

    /// PULL -> PUSH proxy with a PUSH capture and a PAIR control, in a thread.
    fn spawn_pipeline(&self) -> thread::JoinHandle<(oxmq::Result<()>, ProxyStats)> {
        let front = self.bound(SocketType::Pull, &self.front_ep);
        let back = self.bound(SocketType::Push, &self.back_ep);
        let cap = self.bound(SocketType::Push, &self.cap_ep);
        let ctl = self.bound(SocketType::Pair, &self.ctl_ep);
        thread::spawn(move || {
            let mut capture = CaptureSocket::new(&cap);
            let mut proxy = Proxy::new(&front, &back).capture(&mut capture).control(&ctl);
            let r = proxy.run();
            (r, proxy.stats())
        })
    }
}

fn stats_reply(ctl: &Socket) -> [u64; 8] {
    send(ctl, b"STATISTICS");
    let parts = recv_parts(ctl);
    assert_eq!(parts.len(), 8, "STATISTICS answers eight frames");
    let mut out = [0u64; 8];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = u64::from_ne_bytes(p.as_slice().try_into().expect("each statistic is a u64"));
    }
    out
}

#[test]
fn forwards_captures_counts_and_terminates() {
    let _g = guard();
    let rig = Rig::new();
    let proxy = rig.spawn_pipeline();
    let push = rig.connected(SocketType::Push, &rig.front_ep);
    let pull = rig.connected(SocketType::Pull, &rig.back_ep);
    let mon = rig.connected(SocketType::Pull, &rig.cap_ep);
    let ctl = rig.connected(SocketType::Pair, &rig.ctl_ep);

    send_parts(&push, &[b"ab", b"cde"]);
    send(&push, b"f");
    assert_eq!(recv_parts(&pull), vec![b"ab".to_vec(), b"cde".to_vec()]);
    assert_eq!(recv(&pull), b"f");
    assert_eq!(recv_parts(&mon), vec![b"ab".to_vec(), b"cde".to_vec()]);
    assert_eq!(recv(&mon), b"f");

    // A multipart message counts once, with the sum of its frame sizes.
    assert_eq!(stats_reply(&ctl), [2, 6, 0, 0, 0, 0, 2, 6]);
    // The control commands reach the capture too.
    assert_eq!(recv(&mon), b"STATISTICS");

    send(&ctl, b"TERMINATE");
    let (r, stats) = proxy.join().unwrap();
    r.expect("TERMINATE ends the proxy with success");
    assert_eq!(stats.frontend, SideStats { msg_in: 2, bytes_in: 6, msg_out: 0, bytes_out: 0 });
    assert_eq!(stats.backend, SideStats { msg_in: 0, bytes_in: 0, msg_out: 2, bytes_out: 6 });
    assert_eq!(recv(&mon), b"TERMINATE");
}

#[test]
fn pause_holds_messages_until_resume() {
    let _g = guard();
    let rig = Rig::new();
    let proxy = rig.spawn_pipeline();
    let push = rig.connected(SocketType::Push, &rig.front_ep);
    let pull = rig.connected(SocketType::Pull, &rig.back_ep);
    // The capture send blocks without a peer, as libzmq's does.
    let _mon = rig.connected(SocketType::Pull, &rig.cap_ep);
    let ctl = rig.connected(SocketType::Pair, &rig.ctl_ep);

    send(&push, b"before");
    assert_eq!(recv(&pull), b"before");
    send(&ctl, b"PAUSE");
    assert_eq!(recv(&ctl), b"", "PAUSE is answered with an empty frame");
    // STATISTICS is served while paused (its reply also shows PAUSE was taken).
    assert_eq!(stats_reply(&ctl)[0], 1);
    send(&push, b"during");
    assert_nothing_within(&pull, 200);
    assert_eq!(stats_reply(&ctl)[0], 1, "nothing forwarded while paused");
    send(&ctl, b"RESUME");
    assert_eq!(recv(&ctl), b"");
    assert_eq!(recv(&pull), b"during");
    send(&ctl, b"TERMINATE");
    proxy.join().unwrap().0.unwrap();
}

#[test]
fn rep_control_is_answered_for_every_command() {
    // libzmq 4.3.5: STATISTICS gets its eight frames, every other command
    // (unknown ones included) one empty frame, so REQ/REP steering works.
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Pull, &rig.front_ep);
    let back = rig.bound(SocketType::Push, &rig.back_ep);
    let ctl = rig.bound(SocketType::Rep, &rig.ctl_ep);
    let proxy = thread::spawn(move || Proxy::new(&front, &back).control(&ctl).run());
    let req = rig.connected(SocketType::Req, &rig.ctl_ep);
    assert_eq!(stats_reply(&req), [0; 8]);
    for cmd in [b"PAUSE".as_slice(), b"RESUME", b"NONSENSE"] {
        send(&req, cmd);
        assert_eq!(recv_parts(&req), vec![Vec::<u8>::new()], "{:?} is answered with one empty frame", cmd);
    }
    assert_eq!(stats_reply(&req), [0; 8]);
    send(&req, b"TERMINATE");
    assert_eq!(recv_parts(&req), vec![Vec::<u8>::new()]);
    proxy.join().unwrap().unwrap();
}

#[test]
fn each_frame_of_a_multipart_command_is_a_command() {
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Pull, &rig.front_ep);
    let back = rig.bound(SocketType::Push, &rig.back_ep);
    let ctl = rig.bound(SocketType::Pair, &rig.ctl_ep);
    let proxy = thread::spawn(move || Proxy::new(&front, &back).control(&ctl).run());
    let c = rig.connected(SocketType::Pair, &rig.ctl_ep);
    send_parts(&c, &[b"NONSENSE", b"TERMINATE"]);
    proxy.join().unwrap().expect("the second frame terminates the proxy");
    assert_eq!(recv(&c), b"");
    assert_eq!(recv(&c), b"");
}

#[test]
fn context_termination_ends_the_proxy_with_eterm() {
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Router, &rig.front_ep);
    let back = rig.bound(SocketType::Dealer, &rig.back_ep);
    let proxy = thread::spawn(move || {
        let r = Proxy::new(&front, &back).run();
        drop((front, back));
        r
    });
    let req = rig.connected(SocketType::Req, &rig.front_ep);
    let rep = rig.connected(SocketType::Rep, &rig.back_ep);
    send(&req, b"ping");
    assert_eq!(recv(&rep), b"ping");
    send(&rep, b"pong");
    assert_eq!(recv(&req), b"pong");
    drop((req, rep));
    rig.ctx.term();
    assert_errno(proxy.join().unwrap(), errno::ETERM);
}

#[test]
fn one_socket_echoes() {
    let _g = guard();
    let rig = Rig::new();
    let echo = rig.bound(SocketType::Router, &rig.front_ep);
    let ctl = rig.bound(SocketType::Pair, &rig.ctl_ep);
    let proxy = thread::spawn(move || Proxy::new(&echo, &echo).control(&ctl).run());
    let dealer = rig.connected(SocketType::Dealer, &rig.front_ep);
    send(&dealer, b"hi");
    assert_eq!(recv(&dealer), b"hi");
    let c = rig.connected(SocketType::Pair, &rig.ctl_ep);
    // As libzmq: in counted on the frontend, out on the backend.
    let s = stats_reply(&c);
    assert_eq!((s[0], s[6]), (1, 1));
    assert_eq!((s[2], s[4]), (0, 0));
    send(&c, b"TERMINATE");
    proxy.join().unwrap().unwrap();
}

#[test]
fn prefixed_capture_and_router_id_swap() {
    let _g = guard();
    let rig = Rig::new();
    let a = rig.bound(SocketType::Router, &rig.front_ep);
    let b = rig.bound(SocketType::Router, &rig.back_ep);
    let mon = rig.bound(SocketType::Pull, &rig.cap_ep);
    let cap = rig.connected(SocketType::Push, &rig.cap_ep);
    let ctl = rig.bound(SocketType::Pair, &rig.ctl_ep);
    let proxy = thread::spawn(move || {
        let mut capture = CaptureSocket::prefixed(&cap, b"in", b"out");
        Proxy::new(&a, &b).capture(&mut capture).control(&ctl).swap_router_ids().run()
    });
    let alice = sock(&rig.ctx, SocketType::Dealer);
    alice.set_option_bytes(opt::ROUTING_ID, b"alice").unwrap();
    alice.connect(&rig.front_ep).unwrap();
    let bob = sock(&rig.ctx, SocketType::Router);
    bob.set_option_bytes(opt::ROUTING_ID, b"bob").unwrap();
    bob.connect(&rig.back_ep).unwrap();
    // The back ROUTER knows bob by his id once connected: probe until routed.
    let c = rig.connected(SocketType::Pair, &rig.ctl_ep);
    // alice -> proxy: [bob, hello]; the front ROUTER prepends alice's id;
    // swapped, the back ROUTER routes to bob, who sees [proxy-id, alice, hello].
    assert!(eventually(Duration::from_secs(5), || {
        send_parts(&alice, &[b"bob", b"hello"]);
        bob.recv(DONTWAIT).is_ok() || {
            thread::sleep(Duration::from_millis(20));
            false
        }
    }));
    let rest = recv_parts(&bob);
    assert_eq!(rest, vec![b"alice".to_vec(), b"hello".to_vec()]);
    let captured = recv_parts(&mon);
    assert_eq!(captured[0], b"in");
    assert_eq!(captured[1..], [b"bob".to_vec(), b"alice".to_vec(), b"hello".to_vec()]);
    send(&c, b"TERMINATE");
    proxy.join().unwrap().unwrap();
}

/// A capture hook that counts frames and fails on a marker.
struct Counting {
    frames: Arc<AtomicUsize>,
}

impl Capture for Counting {
    fn capture(&mut self, from: Option<Side>, frame: &Msg, _more: bool) -> oxmq::Result<()> {
        if from.is_some() {
            self.frames.fetch_add(1, Ordering::SeqCst);
        }
        if frame.as_slice() == b"stop" {
            return Err(Error::NotSupported);
        }
        Ok(())
    }
}

#[test]
fn capture_hook_sees_frames_and_its_error_ends_the_proxy() {
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Pull, &rig.front_ep);
    let back = rig.bound(SocketType::Push, &rig.back_ep);
    let frames = Arc::new(AtomicUsize::new(0));
    let counted = frames.clone();
    let proxy = thread::spawn(move || {
        let mut hook = Counting { frames: counted };
        Proxy::new(&front, &back).capture(&mut hook).run()
    });
    let push = rig.connected(SocketType::Push, &rig.front_ep);
    let pull = rig.connected(SocketType::Pull, &rig.back_ep);
    send_parts(&push, &[b"1", b"2", b"3"]);
    assert_eq!(recv_parts(&pull).len(), 3);
    assert_eq!(frames.load(Ordering::SeqCst), 3);
    send(&push, b"stop");
    assert_errno(proxy.join().unwrap(), errno::ENOTSUP);
}

#[test]
fn waits_for_a_full_backend_without_losing_messages() {
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Pull, &rig.front_ep);
    let back = rig.bound(SocketType::Push, &rig.back_ep);
    back.set_option_int(opt::SNDHWM, 2).unwrap();
    let ctl = rig.bound(SocketType::Pair, &rig.ctl_ep);
    let proxy = thread::spawn(move || Proxy::new(&front, &back).control(&ctl).run());
    let push = rig.connected(SocketType::Push, &rig.front_ep);
    for i in 0..50u32 {
        push.send(Msg::from_slice(&i.to_le_bytes()), 0).unwrap();
    }
    // No reader yet: the proxy holds what the backend cannot take.
    thread::sleep(Duration::from_millis(100));
    let pull = sock(&rig.ctx, SocketType::Pull);
    pull.set_option_int(opt::RCVHWM, 2).unwrap();
    pull.connect(&rig.back_ep).unwrap();
    for i in 0..50u32 {
        assert_eq!(recv(&pull), i.to_le_bytes(), "message {i} in order");
    }
    let c = rig.connected(SocketType::Pair, &rig.ctl_ep);
    assert_eq!(stats_reply(&c)[0], 50);
    send(&c, b"TERMINATE");
    proxy.join().unwrap().unwrap();
}

/// A runtime's hook: asked at least every slice; its error ends the proxy.
struct Ticks {
    checks: usize,
    stop_after: usize,
}

impl WaitHook for Ticks {
    fn slice(&self) -> Option<Duration> {
        Some(Duration::from_millis(10))
    }

    fn check(&mut self) -> oxmq::Result<()> {
        self.checks += 1;
        if self.checks >= self.stop_after {
            return Err(Error::Interrupted);
        }
        Ok(())
    }
}

#[test]
fn wait_hook_is_asked_every_slice_and_can_stop_the_proxy() {
    let _g = guard();
    let rig = Rig::new();
    let front = rig.bound(SocketType::Pull, &rig.front_ep);
    let back = rig.bound(SocketType::Push, &rig.back_ep);
    let push = rig.connected(SocketType::Push, &rig.front_ep);
    let pull = rig.connected(SocketType::Pull, &rig.back_ep);
    send(&push, b"x");
    let mut hook = Ticks { checks: 0, stop_after: 5 };
    let r = Proxy::new(&front, &back).run_with(&mut hook);
    assert_errno(r, errno::EINTR);
    assert_eq!(hook.checks, 5);
    // It forwarded between the slices.
    assert_eq!(recv(&pull), b"x");
}
