//! Heartbeat timers with an injected clock.

use std::time::{Duration, Instant};

use bytes::Bytes;
use oxmq_proto::{Command, Heartbeat, HeartbeatAction};

const MS: Duration = Duration::from_millis(1);

fn ping(ttl: u16) -> HeartbeatAction {
    HeartbeatAction::SendPing(Command::Ping { ttl_deciseconds: ttl, context: Bytes::new() })
}

#[test]
fn disabled_heartbeat_has_no_deadline() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    assert_eq!(hb.next_deadline(), None);
    assert_eq!(hb.handle_timeout(t0 + 1000 * MS), HeartbeatAction::None);
    let hb = Heartbeat::new(Some(Duration::ZERO), None, None, t0);
    assert_eq!(hb.next_deadline(), None, "zero means off, as in libzmq");
}

#[test]
fn sends_ping_every_interval_with_our_ttl() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(100 * MS), Some(2_500 * MS), Some(1_000 * MS), t0);
    assert_eq!(hb.next_deadline(), Some(t0 + 100 * MS));
    assert_eq!(hb.handle_timeout(t0 + 99 * MS), HeartbeatAction::None);
    assert_eq!(hb.handle_timeout(t0 + 100 * MS), ping(25));
    hb.on_traffic(t0 + 150 * MS);
    assert_eq!(hb.next_deadline(), Some(t0 + 200 * MS));
    assert_eq!(hb.handle_timeout(t0 + 200 * MS), ping(25));
}

#[test]
fn ping_wire_bytes_carry_ttl_in_deciseconds() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(10 * MS), Some(Duration::from_secs(30)), None, t0);
    let HeartbeatAction::SendPing(cmd) = hb.handle_timeout(t0 + 10 * MS) else { panic!() };
    let mut out = Vec::new();
    cmd.encode(&mut out);
    assert_eq!(out, [0x04, 7, 4, b'P', b'I', b'N', b'G', 0x01, 0x2C]);
}

#[test]
fn ttl_is_capped_at_u16_max() {
    let hb = Heartbeat::new(None, Some(Duration::from_secs(100_000)), None, Instant::now());
    assert_eq!(hb.ttl_deciseconds(), 0xFFFF);
}

#[test]
fn no_traffic_after_ping_within_timeout_is_dead() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(100 * MS), None, Some(50 * MS), t0);
    assert_eq!(hb.handle_timeout(t0 + 100 * MS), ping(0));
    assert_eq!(hb.next_deadline(), Some(t0 + 150 * MS));
    assert_eq!(hb.handle_timeout(t0 + 150 * MS), HeartbeatAction::Dead);
}

#[test]
fn traffic_after_ping_keeps_connection_alive() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(100 * MS), None, Some(50 * MS), t0);
    hb.handle_timeout(t0 + 100 * MS);
    hb.on_traffic(t0 + 140 * MS);
    assert_eq!(hb.next_deadline(), Some(t0 + 200 * MS));
    assert_eq!(hb.handle_timeout(t0 + 160 * MS), HeartbeatAction::None);
}

#[test]
fn timeout_defaults_to_interval() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(100 * MS), None, None, t0);
    hb.handle_timeout(t0 + 100 * MS);
    // The next PING is due at 200 too, but death wins.
    assert_eq!(hb.handle_timeout(t0 + 200 * MS), HeartbeatAction::Dead);
}

#[test]
fn timeout_is_not_pushed_back_by_later_pings() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(Some(100 * MS), None, Some(250 * MS), t0);
    hb.handle_timeout(t0 + 100 * MS);
    assert_eq!(hb.handle_timeout(t0 + 200 * MS), ping(0));
    assert_eq!(hb.handle_timeout(t0 + 300 * MS), ping(0));
    assert_eq!(hb.handle_timeout(t0 + 350 * MS), HeartbeatAction::Dead);
}

#[test]
fn peer_ping_ttl_expires_without_traffic() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    hb.on_traffic(t0);
    hb.on_ping(10, t0);
    assert_eq!(hb.next_deadline(), Some(t0 + 1000 * MS));
    assert_eq!(hb.handle_timeout(t0 + 999 * MS), HeartbeatAction::None);
    assert_eq!(hb.handle_timeout(t0 + 1000 * MS), HeartbeatAction::Dead);
}

#[test]
fn peer_ping_ttl_is_disarmed_by_traffic() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    hb.on_ping(10, t0);
    hb.on_traffic(t0 + 500 * MS);
    assert_eq!(hb.next_deadline(), None);
    assert_eq!(hb.handle_timeout(t0 + 5000 * MS), HeartbeatAction::None);
}

#[test]
fn peer_ping_ttl_zero_means_no_ttl() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    hb.on_ping(0, t0);
    assert_eq!(hb.next_deadline(), None);
}

#[test]
fn large_peer_ttl_does_not_overflow() {
    // libzmq multiplies the TTL into a u16 of milliseconds; we do not.
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    hb.on_ping(0xFFFF, t0);
    assert_eq!(hb.next_deadline(), Some(t0 + Duration::from_millis(6_553_500)));
}

#[test]
fn repeated_peer_pings_do_not_extend_ttl() {
    let t0 = Instant::now();
    let mut hb = Heartbeat::new(None, None, None, t0);
    hb.on_ping(10, t0);
    hb.on_ping(10, t0 + 500 * MS);
    assert_eq!(hb.next_deadline(), Some(t0 + 1000 * MS));
}
