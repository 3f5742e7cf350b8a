//! Where a large received body sits in memory (`bufpool::Placed`): half of
//! 4 KiB away from where its first byte most likely sits in the sender's
//! kernel pages (its distance from the start of its message), so that the
//! kernel's copy into it never runs at the slow relative offsets (1-15
//! bytes either way modulo 4 KiB). Checked on both read paths: the I/O
//! thread's (PULL) and a waiting caller's own (REQ, REP), and after the
//! smaller frames of a multipart message.

mod common;

use common::*;
use oxmq::{Context, Msg, SocketType};

const LEN: usize = 256 * 1024;
/// A ZMTP frame header for a body of `LEN` bytes: flags, then 8 length bytes.
const LONG_HEADER: usize = 9;
/// A short frame's header: flags, then 1 length byte.
const SHORT_HEADER: usize = 2;

#[track_caller]
fn assert_placed(msg: &Msg, source_at: usize) {
    let want = (source_at + 2048) % 4096;
    let got = msg.as_slice().as_ptr() as usize % 4096;
    assert_eq!(got, want, "body {} bytes from its message's start", source_at);
}

fn fill(i: u8) -> Vec<u8> {
    vec![i; LEN]
}

#[test]
fn pull_bodies_are_placed_by_their_distance_from_the_message_start() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    link(Transport::Tcp, &pull, &push);
    for i in 0..4u8 {
        push.send_slice(&fill(i), 0).unwrap();
        let m = pull.recv(0).unwrap();
        assert_eq!(m.as_slice(), &fill(i)[..]);
        assert_placed(&m, LONG_HEADER);
    }
    // After a 100-byte first frame (header and body) of the same message.
    send_parts(&push, &[&[7u8; 100], &fill(9)]);
    let first = pull.recv(0).unwrap();
    assert_eq!(first.as_slice(), &[7u8; 100][..]);
    let m = pull.recv(0).unwrap();
    assert_eq!(m.as_slice(), &fill(9)[..]);
    assert_placed(&m, SHORT_HEADER + 100 + LONG_HEADER);
}

#[test]
fn round_trip_bodies_are_placed_after_the_empty_delimiter() {
    let (ctx_rep, ctx_req) = (Context::new(), Context::new());
    let rep = sock(&ctx_rep, SocketType::Rep);
    let req = sock(&ctx_req, SocketType::Req);
    link(Transport::Tcp, &rep, &req);
    for i in 0..6u8 {
        req.send_slice(&fill(i), 0).unwrap();
        let asked = rep.recv(0).unwrap();
        assert_eq!(asked.as_slice(), &fill(i)[..]);
        // The REQ's envelope: an empty delimiter frame before the body.
        assert_placed(&asked, SHORT_HEADER + LONG_HEADER);
        rep.send(asked, 0).unwrap();
        let answer = req.recv(0).unwrap();
        assert_eq!(answer.as_slice(), &fill(i)[..]);
        assert_placed(&answer, SHORT_HEADER + LONG_HEADER);
    }
}
