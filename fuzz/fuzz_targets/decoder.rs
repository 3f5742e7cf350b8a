#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| oxmq_proto::fuzzing::decode(data));
