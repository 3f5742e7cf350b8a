#![no_main]
use oxmq_proto::fuzzing::security::{handshake, Mech};
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    handshake(Mech::Curve, data);
});
