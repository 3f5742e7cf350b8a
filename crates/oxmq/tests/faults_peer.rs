//! Injected faults at the peer: a peer process SIGKILLed in the middle of a
//! multipart message, connections reset (RST) from either side, a half-open
//! connection (the peer's process stopped, its kernel still ACKing) caught by
//! heartbeats, and an EOF queued behind a backlog the HWM held up.
//!
//! Peer processes are this test binary run again with `OXMQ_FAULT_CHILD`
//! set: `child_entry` then plays the role and never returns to the harness.
//! Every test runs under the watchdog and bounds each wait.

mod common;

use common::*;
use oxmq::{monitor_event as ev, opt, Context, Socket, SocketType};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Child processes

struct Peer {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Peer {
    fn spawn(role: &str, endpoint: &str) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_entry", "--nocapture", "--test-threads=1", "-q"])
            .env("OXMQ_FAULT_CHILD", role)
            .env("OXMQ_FAULT_ENDPOINT", endpoint)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn child");
        let out = BufReader::new(child.stdout.take().unwrap());
        Peer { child, out }
    }

    /// Wait for the child to print `word` on a line of its own.
    fn expect_line(&mut self, word: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("read child stdout");
            assert!(n > 0, "child exited before printing {word:?}");
            if line.trim() == word {
                return;
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({sig})");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

trait Wire: Read + Write {}
impl<T: Read + Write> Wire for T {}

fn raw_connect(endpoint: &str) -> Box<dyn Wire> {
    if let Some(addr) = endpoint.strip_prefix("tcp://") {
        Box::new(TcpStream::connect(addr).expect("tcp connect"))
    } else {
        let path = endpoint.strip_prefix("ipc://").expect("tcp or ipc endpoint");
        Box::new(UnixStream::connect(path).expect("ipc connect"))
    }
}

fn raw_handshake(s: &mut dyn Wire, socket_type: &str) {
    s.write_all(&greeting("NULL")).unwrap();
    let mut g = [0u8; 64];
    s.read_exact(&mut g).unwrap();
    s.write_all(&ready_for(socket_type)).unwrap();
    // Their READY: flags, size, body.
    let mut head = [0u8; 2];
    s.read_exact(&mut head).unwrap();
    let mut body = vec![0u8; head[1] as usize];
    s.read_exact(&mut body).unwrap();
}

/// The child side. Does nothing when run as an ordinary test.
#[test]
fn child_entry() {
    let Ok(role) = std::env::var("OXMQ_FAULT_CHILD") else { return };
    let endpoint = std::env::var("OXMQ_FAULT_ENDPOINT").unwrap();
    match role.as_str() {
        // Five whole two-frame messages, then a third message torn in the
        // middle of its second frame; then wait to be killed.
        "raw-torn-push" => {
            let mut s = raw_connect(&endpoint);
            raw_handshake(&mut *s, "PUSH");
            for i in 0..5u8 {
                s.write_all(&frame(0x01, b"head")).unwrap();
                s.write_all(&frame(0x00, &[i; 300])).unwrap();
            }
            s.write_all(&frame(0x01, b"head")).unwrap();
            let mut partial = vec![0x02];
            partial.extend_from_slice(&(1u64 << 20).to_be_bytes());
            partial.extend_from_slice(&[7u8; 1000]);
            s.write_all(&partial).unwrap();
            s.flush().unwrap();
            println!("mid");
            std::thread::sleep(Duration::from_secs(60));
        }
        // An oxmq PUSH that keeps sending large multipart messages.
        "oxmq-push-big" => {
            let ctx = Context::new();
            let push = ctx.socket(SocketType::Push).unwrap();
            push.connect(&endpoint).unwrap();
            let big = vec![5u8; 4 << 20];
            for i in 0u32.. {
                push.send_multipart([&i.to_le_bytes()[..], &big[..], b"tail"], 0).unwrap();
                if i == 3 {
                    println!("sending");
                }
            }
        }
        // An oxmq PUSH that sends one message and then idles (to be stopped).
        "oxmq-push-idle" => {
            let ctx = Context::new();
            let push = ctx.socket(SocketType::Push).unwrap();
            push.connect(&endpoint).unwrap();
            push.send("hello", 0).unwrap();
            println!("up");
            std::thread::sleep(Duration::from_secs(60));
        }
        other => panic!("unknown child role {other}"),
    }
    std::process::exit(0);
}

// ---------------------------------------------------------------------------
// Helpers

fn still_serves(ctx: &Context, ep: &str, pull: &Socket) {
    let push = sock(ctx, SocketType::Push);
    push.connect(ep).unwrap();
    send_parts(&push, &[b"after", b"fault"]);
    assert_eq!(recv_parts(pull), vec![b"after".to_vec(), b"fault".to_vec()]);
}

// ---------------------------------------------------------------------------
// Killed mid-multipart

fn killed_mid_multipart(t: Transport) {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let mon = monitor(&ctx, &pull, u32::from(ev::DISCONNECTED));
    let ep = bind_fresh(t, &pull);
    let mut peer = Peer::spawn("raw-torn-push", &ep);
    peer.expect_line("mid");
    for i in 0..5u8 {
        assert_eq!(recv_parts(&pull), vec![b"head".to_vec(), vec![i; 300]], "whole message {i}");
    }
    peer.signal(libc::SIGKILL);
    wait_for(&mon, ev::DISCONNECTED);
    // The torn third message is dropped whole: not even its first frame.
    assert_nothing_within(&pull, 200);
    still_serves(&ctx, &ep, &pull);
}

#[test]
fn peer_killed_mid_multipart_tcp() {
    killed_mid_multipart(Transport::Tcp);
}

#[test]
fn peer_killed_mid_multipart_ipc() {
    killed_mid_multipart(Transport::IpcPath);
}

/// An oxmq peer killed while 4 MiB messages stream: whatever arrives is whole.
#[test]
fn oxmq_peer_killed_while_streaming_large_multipart() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let mon = monitor(&ctx, &pull, u32::from(ev::DISCONNECTED));
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = Peer::spawn("oxmq-push-big", &ep);
    peer.expect_line("sending");
    let mut next = 0u32;
    let deadline = Instant::now() + BOUND;
    // Until the kill a receive may wait as long as any (a loaded machine can
    // hold the child back for more than a few hundred ms); after it, a short
    // RCVTIMEO ends the loop once what was in flight has been read.
    while let Ok(parts) = pull.recv_multipart(0) {
        assert!(Instant::now() < deadline);
        if next == 2 {
            // Mid-stream: the next 4 MiB message is on its way.
            peer.signal(libc::SIGKILL);
            pull.set_option_int(opt::RCVTIMEO, 300).unwrap();
        }
        assert_eq!(parts.len(), 3, "torn message delivered");
        assert_eq!(parts[0].as_slice(), next.to_le_bytes(), "messages in order, none missing");
        assert_eq!(parts[1].len(), 4 << 20);
        assert!(parts[1].as_slice().iter().all(|&b| b == 5), "payload intact");
        assert_eq!(parts[2].as_slice(), b"tail");
        next += 1;
    }
    assert!(next >= 3, "the stream stopped before the kill ({next})");
    wait_for(&mon, ev::DISCONNECTED);
    pull.set_option_int(opt::RCVTIMEO, TIMEOUT_MS).unwrap();
    still_serves(&ctx, &ep, &pull);
}

// ---------------------------------------------------------------------------
// Connection reset

/// A peer that resets (SO_LINGER 0, so close sends RST) in the middle of a
/// multipart message: nothing partial is delivered, other peers carry on.
#[test]
fn reset_mid_multipart_drops_only_that_connection() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let mon = monitor(&ctx, &pull, u32::from(ev::DISCONNECTED));
    let ep = bind_fresh(Transport::Tcp, &pull);
    let other = sock(&ctx, SocketType::Push);
    other.connect(&ep).unwrap();
    send(&other, b"before");
    assert_eq!(recv(&pull), b"before");

    let mut raw = RawPeer::connect(&ep);
    raw.handshake("PUSH", None).unwrap();
    raw.write(&frame(0x01, b"head")).unwrap();
    raw.write(&frame(0x00, b"whole")).unwrap();
    raw.write(&frame(0x01, b"torn")).unwrap();
    assert_eq!(recv_parts(&pull), vec![b"head".to_vec(), b"whole".to_vec()]);
    socket2::SockRef::from(&raw.stream).set_linger(Some(Duration::ZERO)).unwrap();
    drop(raw);
    wait_for(&mon, ev::DISCONNECTED);
    assert_nothing_within(&pull, 200);
    send(&other, b"after");
    assert_eq!(recv(&pull), b"after");
}

/// The connecting side sees its connection reset right after the handshake:
/// it reconnects, and what it sends afterwards arrives on the new connection.
#[test]
fn connect_side_reconnects_after_reset() {
    let _g = guard();
    let ctx = Context::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = format!("tcp://{}", listener.local_addr().unwrap());
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option_int(opt::RECONNECT_IVL, 20).unwrap();
    let mon = monitor(&ctx, &dealer, u32::from(ev::CONNECTED | ev::DISCONNECTED));
    dealer.connect(&ep).unwrap();

    let (first, _) = listener.accept().unwrap();
    let mut first = RawPeer::from_stream(first);
    first.handshake("ROUTER", None).unwrap();
    wait_for(&mon, ev::CONNECTED);
    socket2::SockRef::from(&first.stream).set_linger(Some(Duration::ZERO)).unwrap();
    drop(first);
    wait_for(&mon, ev::DISCONNECTED);

    let (second, _) = listener.accept().unwrap();
    let mut second = RawPeer::from_stream(second);
    second.handshake("ROUTER", None).unwrap();
    send(&dealer, b"after reset");
    let f = second.read_frame().unwrap();
    assert!(!f.is_command());
    assert_eq!(f.body, b"after reset");
}

// ---------------------------------------------------------------------------
// Half-open connection

/// The peer's process is stopped (SIGSTOP): its kernel still holds the
/// connection open and ACKs, but nothing answers PINGs. Heartbeats must
/// notice and close it; the socket keeps serving others.
#[test]
fn half_open_peer_caught_by_heartbeats() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_option_int(opt::HEARTBEAT_TIMEOUT, 400).unwrap();
    let mon = monitor(&ctx, &pull, u32::from(ev::DISCONNECTED));
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut peer = Peer::spawn("oxmq-push-idle", &ep);
    peer.expect_line("up");
    assert_eq!(recv(&pull), b"hello");
    // Timed from before the signal: a thread held back between the two would
    // otherwise shorten what is measured.
    let start = Instant::now();
    peer.signal(libc::SIGSTOP);
    wait_for(&mon, ev::DISCONNECTED);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(300), "closed before the timeout could expire ({took:?})");
    still_serves(&ctx, &ep, &pull);
    peer.signal(libc::SIGKILL);
}

// ---------------------------------------------------------------------------
// EOF behind a backlog (regression)

/// Regression (found by the soak): a peer sends more than the RCVHWM and
/// closes. Its FIN is queued behind data the engine had stopped reading at
/// the HWM; when the socket drained the pipe the engine's short read was
/// taken for "drained", the EOF had no edge of its own, and the connection
/// sat in CLOSE_WAIT forever, one descriptor leaked per such peer.
#[test]
fn eof_behind_hwm_backlog_closes_connection() {
    let _g = guard();
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option_int(opt::RCVHWM, 10).unwrap();
    let mon = monitor(&ctx, &pull, u32::from(ev::DISCONNECTED));
    let ep = bind_fresh(Transport::Tcp, &pull);
    let mut raw = RawPeer::connect(&ep);
    raw.handshake("PUSH", None).unwrap();
    // More than the engine reads ahead, so most of it (and the FIN) is still
    // in the kernel when the HWM stops the engine.
    const N: u32 = 1000;
    let mut burst = Vec::new();
    for i in 0..N {
        let mut body = vec![0u8; 1000];
        body[..4].copy_from_slice(&i.to_le_bytes());
        burst.extend_from_slice(&frame(0x00, &body));
    }
    let mut writer = raw.stream.try_clone().unwrap();
    let w = std::thread::spawn(move || {
        writer.write_all(&burst).unwrap();
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    // Let the FIN arrive while the engine is held at the HWM.
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..N {
        assert_eq!(recv(&pull)[..4], i.to_le_bytes());
    }
    w.join().unwrap();
    wait_for(&mon, ev::DISCONNECTED);
    assert!(raw.wait_closed(BOUND), "the socket never closed its side");
}

/// A connect the peer's kernel leaves unanswered (its accept queue is full,
/// so it drops every SYN) must not hold up the I/O thread: another
/// connection of the same context still carries messages. Regression: once
/// such a connect outlived the 250 ms between address attempts with no
/// address left to try, the session's timer came due again at once, and the
/// I/O thread spun on it for as long as the connect took.
#[test]
fn an_unanswered_connect_does_not_stall_the_io_thread() {
    let _g = guard();
    // A listener that never accepts, with a backlog of 0: its queue holds one
    // connection, and the kernel drops the SYNs of the next ones.
    let full = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    full.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into()).unwrap();
    full.listen(0).unwrap();
    let full_port = full.local_addr().unwrap().as_socket().unwrap().port();
    let mut fillers = Vec::new();
    for _ in 0..2 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        let _ = s.connect(&std::net::SocketAddr::from(([127, 0, 0, 1], full_port)).into());
        fillers.push(s);
    }
    let ctx = Context::new();
    let stuck = sock(&ctx, SocketType::Dealer);
    stuck.connect(&format!("tcp://127.0.0.1:{full_port}")).unwrap();
    // Past the 250 ms after which the stalled session's timer came due.
    std::thread::sleep(Duration::from_millis(400));
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    let ep = bind_fresh(Transport::Tcp, &pull);
    connect_to(&ep, &push);
    send(&push, b"through");
    assert_eq!(recv(&pull), b"through");
    drop(fillers);
}
