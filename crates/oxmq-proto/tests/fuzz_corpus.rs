//! Replays the committed fuzz corpus (../../fuzz/corpus/*) through the fuzz
//! target bodies; none may panic.

use std::fs;

use bytes::BytesMut;
use oxmq_proto::{fuzzing, Handshake, HandshakeConfig, SocketType};

mod corpus;

use corpus::{corpus_dir, files};

#[test]
fn decoder_corpus_does_not_panic() {
    let seeds = files("decoder");
    assert!(seeds.len() >= 12, "decoder corpus has {} files", seeds.len());
    for (path, data) in seeds {
        eprintln!("{}", path.display());
        fuzzing::decode(&data);
    }
}

#[test]
fn handshake_corpus_does_not_panic() {
    let seeds = files("handshake");
    assert!(seeds.len() >= 12, "handshake corpus has {} files", seeds.len());
    for (path, data) in seeds {
        eprintln!("{}", path.display());
        fuzzing::handshake(&data);
    }
}

/// The "valid" seeds must really reach the end of the handshake, or the
/// fuzzer would start from a shallow state.
#[test]
fn valid_handshake_seeds_complete() {
    for name in ["seed-dealer-router", "seed-router-dealer-identity-bytewise", "seed-sub-pub-zmtp30", "seed-push-pull"]
    {
        let data = fs::read(corpus_dir("handshake").join(name)).unwrap();
        let mut hs = Handshake::new(HandshakeConfig::null(SocketType::from_raw(i32::from(data[0])).unwrap(), b""));
        let mut buf = BytesMut::from(&data[2..]);
        assert!(hs.handle_input(&mut buf).unwrap().is_some(), "{name}");
    }
}

/// A poor man's fuzzer so every `cargo test` explores a little beyond the
/// seeds: deterministic byte flips, truncations and splices.
#[test]
fn mutated_corpus_does_not_panic() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for target in ["decoder", "handshake"] {
        let seeds = files(target);
        for (_, seed) in &seeds {
            for _ in 0..300 {
                let mut data = seed.clone();
                for _ in 0..=(rand() % 4) {
                    if data.is_empty() {
                        break;
                    }
                    let i = (rand() as usize) % data.len();
                    match rand() % 4 {
                        0 => data[i] ^= 1 << (rand() % 8),
                        1 => data[i] = rand() as u8,
                        2 => data.truncate(i),
                        _ => {
                            let (_, other) = &seeds[(rand() as usize) % seeds.len()];
                            data.extend_from_slice(&other[2.min(other.len())..]);
                        }
                    }
                }
                match target {
                    "decoder" => fuzzing::decode(&data),
                    _ => fuzzing::handshake(&data),
                }
            }
        }
    }
}
