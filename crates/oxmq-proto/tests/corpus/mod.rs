//! The committed fuzz corpus (../../fuzz/corpus/<target>/), shared by the
//! replay tests.

use std::fs;
use std::path::{Path, PathBuf};

pub(crate) fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target)
}

pub(crate) fn files(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = fs::read_dir(corpus_dir(target))
        .unwrap_or_else(|e| panic!("corpus for {target}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let data = fs::read(&p).unwrap();
            (p, data)
        })
        .collect();
    out.sort();
    out
}
