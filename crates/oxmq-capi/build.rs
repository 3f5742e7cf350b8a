//! Give the cdylib libzmq's soname, so that programs and bindings linked
//! against `libzmq.so.5` load it unchanged.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzmq.so.5");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
