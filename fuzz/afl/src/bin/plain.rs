//! AFL++ target `plain` (body in oxmq-proto's fuzzing module; corpus in fuzz/corpus/plain).
fn main() {
    oxmq_afl::abort_on_panic();
    afl::fuzz_nohook!(|data: &[u8]| oxmq_afl::plain(data));
}
