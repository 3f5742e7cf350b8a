//! Records the monocoque-rs version this binary is built against, so its JSON
//! lines (and the report) name it.
fn main() {
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut ver = "unknown".to_string();
    let mut it = lock.lines();
    while let Some(l) = it.next() {
        if l == "name = \"monocoque-rs\"" {
            if let Some(v) = it.next().and_then(|v| v.strip_prefix("version = \"")) {
                ver = v.trim_end_matches('"').to_string();
            }
        }
    }
    println!("cargo:rustc-env=MONOCOQUE_VERSION={ver}");
    println!("cargo:rerun-if-changed=Cargo.lock");
}
