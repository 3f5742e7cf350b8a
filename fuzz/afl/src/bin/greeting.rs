//! AFL++ target `greeting` (body in the library; corpus in fuzz/corpus/greeting).
fn main() {
    oxmq_afl::abort_on_panic();
    afl::fuzz_nohook!(|data: &[u8]| oxmq_afl::greeting(data));
}
