//! AFL++ target `curve` (body in oxmq-proto's fuzzing module; corpus in fuzz/corpus/curve).
fn main() {
    oxmq_afl::abort_on_panic();
    afl::fuzz_nohook!(|data: &[u8]| oxmq_afl::curve(data));
}
