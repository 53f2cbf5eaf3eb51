//! Fuzz target `model`: see `diffattn_fuzz::model` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::model(data));
