//! Replays the committed PLAIN and CURVE handshake corpora
//! (../../fuzz/corpus/{plain,curve}) through the fuzz target bodies, checks
//! that the recorded good transcripts still complete (so fuzzing starts
//! deep), and mutates every seed a little on each run.
//!
//! `OXMQ_WRITE_SEEDS=1 cargo test -p oxmq-proto --test fuzz_security_corpus`
//! rewrites the transcript seeds (needed only if the handshake bytes change).

use std::fs;
use std::path::PathBuf;

use oxmq_proto::fuzzing::security::{handshake, transcript, Mech};

mod corpus;

fn name(mech: Mech) -> &'static str {
    if mech == Mech::Plain {
        "plain"
    } else {
        "curve"
    }
}

/// Seed files are `mode chunk transcript...` (see `fuzzing::security::handshake`).
fn seed(mode: u8, chunk: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![mode, chunk];
    v.extend_from_slice(body);
    v
}

fn write_seeds(mech: Mech) {
    let d = corpus::corpus_dir(name(mech));
    fs::create_dir_all(&d).unwrap();
    for (name, serve) in [("seed-we-serve", true), ("seed-we-connect", false)] {
        let t = transcript(mech, serve);
        fs::write(d.join(name), seed(u8::from(serve), 0, &t)).unwrap();
        fs::write(d.join(format!("{name}-chunk7")), seed(u8::from(serve), 7, &t)).unwrap();
        fs::write(d.join(format!("{name}-zap400")), seed(u8::from(serve) | 2, 0, &t)).unwrap();
        fs::write(d.join(format!("{name}-nozap")), seed(u8::from(serve) | 6, 0, &t)).unwrap();
        fs::write(d.join(format!("{name}-truncated")), seed(u8::from(serve), 0, &t[..t.len() / 2])).unwrap();
    }
}

fn files(mech: Mech) -> Vec<(PathBuf, Vec<u8>)> {
    if std::env::var_os("OXMQ_WRITE_SEEDS").is_some() {
        write_seeds(mech);
    }
    corpus::files(name(mech))
}

fn replay(mech: Mech) {
    let seeds = files(mech);
    assert!(seeds.len() >= 10, "{mech:?} corpus has {} files", seeds.len());
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (path, data) in &seeds {
        let done = handshake(mech, data);
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "seed-we-serve" || name == "seed-we-connect" || name.ends_with("-chunk7") {
            assert!(done, "{name} must complete");
        }
        for _ in 0..40 {
            let mut m = data.clone();
            let i = 2 + (rand() as usize) % m.len().saturating_sub(2).max(1);
            if i < m.len() {
                match rand() % 3 {
                    0 => m[i] ^= 1 << (rand() % 8),
                    1 => m.truncate(i),
                    _ => m[i] = rand() as u8,
                }
            }
            handshake(mech, &m);
        }
    }
}

#[test]
fn plain_corpus_replays() {
    replay(Mech::Plain);
}

#[test]
fn curve_corpus_replays() {
    replay(Mech::Curve);
}
