//! Fuzz target `spec`: see `diffattn_fuzz::spec` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::spec(data));
