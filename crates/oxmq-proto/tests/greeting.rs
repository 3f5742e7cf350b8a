//! RFC 23/37 greeting, clause by clause.

use oxmq_proto::{Greeting, ProtocolError, UsageError, GREETING_LEN};

fn null_31_bytes() -> [u8; 64] {
    let mut g = [0u8; 64];
    g[..12].copy_from_slice(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1]);
    g[12..16].copy_from_slice(b"NULL");
    g
}

#[test]
fn greeting_null_31_encodes_as_libzmq() {
    let g = Greeting::new("NULL", false).unwrap();
    assert_eq!(g.encode(), null_31_bytes());
    assert_eq!(GREETING_LEN, 64);
}

#[test]
fn greeting_as_server_is_octet_32() {
    let g = Greeting::new("PLAIN", true).unwrap();
    let b = g.encode();
    assert_eq!(b[32], 1);
    assert_eq!(&b[12..17], b"PLAIN");
    assert!(b[17..32].iter().all(|&x| x == 0));
    assert!(b[33..].iter().all(|&x| x == 0), "filler must be zeros");
}

#[test]
fn can_round_trip_greeting() {
    for (mech, srv) in [("NULL", false), ("PLAIN", true), ("CURVE", false), ("GSSAPI", true)] {
        let g = Greeting::new(mech, srv).unwrap();
        let d = Greeting::decode(&g.encode()).unwrap();
        assert_eq!(d, g);
        assert_eq!(d.mechanism_name(), mech.as_bytes());
    }
}

#[test]
fn greeting_padding_is_not_validated() {
    let mut b = null_31_bytes();
    b[1..9].copy_from_slice(&[0xAB; 8]);
    assert!(Greeting::decode(&b).is_ok());
    // libzmq only looks at bit 0 of octet 9.
    b[9] = 0x01;
    assert!(Greeting::decode(&b).is_ok());
}

#[test]
fn rejects_bad_signature_octet_0() {
    let mut b = null_31_bytes();
    b[0] = 0xFE;
    assert_eq!(Greeting::decode(&b), Err(ProtocolError::BadSignature));
}

#[test]
fn rejects_bad_signature_octet_9_bit_0() {
    let mut b = null_31_bytes();
    b[9] = 0x7E;
    assert_eq!(Greeting::decode(&b), Err(ProtocolError::BadSignature));
}

#[test]
fn rejects_zmtp_2_0_and_1_0_revisions() {
    let mut b = null_31_bytes();
    b[10] = 1;
    assert_eq!(Greeting::decode(&b), Err(ProtocolError::UnsupportedVersion { major: 2 }));
    b[10] = 0;
    assert_eq!(Greeting::decode(&b), Err(ProtocolError::UnsupportedVersion { major: 1 }));
}

#[test]
fn zmtp_30_and_31_negotiation() {
    let mut b = null_31_bytes();
    b[11] = 0;
    assert_eq!(Greeting::decode(&b).unwrap().negotiated_version(), (3, 0));
    b[11] = 1;
    assert_eq!(Greeting::decode(&b).unwrap().negotiated_version(), (3, 1));
    b[11] = 7;
    assert_eq!(Greeting::decode(&b).unwrap().negotiated_version(), (3, 1));
    // A higher major is spoken to as 3.1 even with minor 0.
    b[10] = 4;
    b[11] = 0;
    assert_eq!(Greeting::decode(&b).unwrap().negotiated_version(), (3, 1));
}

#[test]
fn mechanism_name_stops_at_nul() {
    let g = Greeting::decode(&null_31_bytes()).unwrap();
    assert_eq!(g.mechanism_name(), b"NULL");
}

#[test]
fn greeting_new_rejects_bad_mechanism_names() {
    assert_eq!(Greeting::new("", false), Err(UsageError::BadMechanismNameLength { len: 0 }));
    let long = "X".repeat(21);
    assert_eq!(Greeting::new(&long, false), Err(UsageError::BadMechanismNameLength { len: 21 }));
    assert!(Greeting::new(&"X".repeat(20), false).is_ok());
}
