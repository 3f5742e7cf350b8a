//! Replays the committed corpus of every AFL++ target (fuzz/corpus/<target>,
//! minimised with afl-cmin) and the named crash regressions
//! (fuzz/regressions/<target>/*) through the same bodies the fuzzer ran.

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(d) => d.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

#[test]
fn corpus_replays_without_failure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (name, body) in oxmq_afl::TARGETS {
        let corpus = files(&root.join("corpus").join(name));
        assert!(!corpus.is_empty(), "corpus for {name} is empty");
        let regressions = files(&root.join("regressions").join(name));
        for f in corpus.iter().chain(&regressions) {
            let data = std::fs::read(f).unwrap();
            // A failure names the input, so it can be reproduced alone.
            eprintln!("replay {name} {}", f.display());
            body(&data);
        }
        println!("{name}: {} corpus inputs, {} regressions replayed", corpus.len(), regressions.len());
    }
}
