//! Socket-type names, numbers and the RFC 37 compatibility table (and the draft types').

use oxmq_proto::SocketType::{self, *};

#[test]
fn raw_numbers_match_libzmq() {
    for (i, t) in SocketType::ALL.iter().enumerate() {
        assert_eq!(t.as_raw(), i as i32);
        assert_eq!(SocketType::from_raw(i as i32), Some(*t));
    }
    assert_eq!(SocketType::from_raw(11), Some(Stream), "ZMQ_STREAM (raw TCP, no ZMTP peer)");
    assert_eq!(SocketType::from_raw(12), Some(Server), "draft SERVER");
    assert_eq!(SocketType::from_raw(18), Some(Dgram), "draft DGRAM");
    assert_eq!(SocketType::from_raw(-1), None);
}

#[test]
fn wire_names_round_trip_case_sensitively() {
    let names = ["PAIR", "PUB", "SUB", "REQ", "REP", "DEALER", "ROUTER", "PULL", "PUSH", "XPUB", "XSUB"];
    for (t, n) in SocketType::ALL.iter().zip(names) {
        assert_eq!(t.wire_name(), n);
        assert_eq!(SocketType::from_wire_name(n.as_bytes()), Some(*t));
    }
    assert_eq!(SocketType::from_wire_name(b"dealer"), None);
    assert_eq!(SocketType::from_wire_name(b"client"), None);
    // Draft DGRAM has a wire name (libzmq's, used over ws://); lower case is not it.
    assert_eq!(SocketType::from_wire_name(b"dgram"), None);
    // A ZMTP peer announcing STREAM is known but compatible with nothing.
    assert!(SocketType::ALL.iter().all(|t| !Stream.is_compatible_with(*t)));
    assert_eq!(SocketType::from_wire_name(b"DEALER\0"), None);
}

#[test]
fn compatibility_table_matches_rfc_37() {
    let valid = [
        (Req, Rep),
        (Req, Router),
        (Rep, Dealer),
        (Dealer, Dealer),
        (Dealer, Router),
        (Router, Router),
        (Pub, Sub),
        (Pub, XSub),
        (XPub, Sub),
        (XPub, XSub),
        (Push, Pull),
        (Pair, Pair),
    ];
    for a in SocketType::ALL {
        for b in SocketType::ALL {
            let expected = valid.contains(&(a, b)) || valid.contains(&(b, a));
            assert_eq!(a.is_compatible_with(b), expected, "{a:?} <-> {b:?}");
        }
    }
}

#[test]
fn only_req_dealer_router_send_identity() {
    let senders: Vec<SocketType> = SocketType::ALL.into_iter().filter(|t| t.sends_identity()).collect();
    assert_eq!(senders, [Req, Dealer, Router]);
}

/// Draft types (RFC 41, 49, 51, 52; libzmq's mechanism_base check): wire
/// names, numbers, and who may talk to whom.
#[test]
fn draft_types_names_numbers_and_compatibility() {
    use SocketType::*;
    let expect = [
        (Server, 12, "SERVER"),
        (Client, 13, "CLIENT"),
        (Gather, 16, "GATHER"),
        (Scatter, 17, "SCATTER"),
        (Peer, 19, "PEER"),
        (Channel, 20, "CHANNEL"),
        (Radio, 14, "RADIO"),
        (Dish, 15, "DISH"),
    ];
    for (t, n, name) in expect {
        assert_eq!(t.as_raw(), n);
        assert_eq!(SocketType::from_raw(n), Some(t));
        assert_eq!(t.wire_name(), name);
        assert_eq!(SocketType::from_wire_name(name.as_bytes()), Some(t));
        assert!(t.is_thread_safe());
        assert!(!t.sends_identity());
    }
    // Draft DGRAM: not thread-safe; over ZMTP (ws:// only, as libzmq's
    // mechanism_t::check_socket_type) it pairs with DGRAM alone.
    assert!(!Dgram.is_thread_safe() && !Dgram.sends_identity());
    assert_eq!(Dgram.wire_name(), "DGRAM");
    assert_eq!(SocketType::from_wire_name(b"DGRAM"), Some(Dgram));
    assert!(Dgram.is_compatible_with(Dgram));
    assert!(SocketType::ALL
        .iter()
        .chain(&SocketType::DRAFT)
        .all(|t| !Dgram.is_compatible_with(*t) && !t.is_compatible_with(Dgram)));
    assert_eq!(SocketType::from_raw(21), None, "21: not a libzmq type");
    let pairs = [(Server, Client), (Gather, Scatter), (Peer, Peer), (Channel, Channel), (Radio, Dish)];
    let all: Vec<SocketType> = SocketType::ALL.into_iter().chain(SocketType::DRAFT).collect();
    for a in &all {
        for b in &all {
            let want = pairs.iter().any(|&(x, y)| (x, y) == (*a, *b) || (y, x) == (*a, *b))
                || (a.is_compatible_with(*b) && !a.is_thread_safe() && !b.is_thread_safe());
            assert_eq!(a.is_compatible_with(*b), want, "{a:?} with {b:?}");
        }
    }
    assert!(SocketType::ALL.iter().all(|t| !t.is_thread_safe()));
}
