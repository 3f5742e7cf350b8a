//! AFL++ target `handshake` (body in the library; corpus in fuzz/corpus/handshake).
fn main() {
    oxmq_afl::abort_on_panic();
    afl::fuzz_nohook!(|data: &[u8]| oxmq_afl::handshake(data));
}
