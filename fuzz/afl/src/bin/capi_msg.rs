//! AFL++ target `capi_msg` (body in the library; corpus in fuzz/corpus/capi_msg).
fn main() {
    oxmq_afl::abort_on_panic();
    afl::fuzz_nohook!(|data: &[u8]| oxmq_afl::capi_msg(data));
}
