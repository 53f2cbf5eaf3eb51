//! Fuzz target `bert`: see `diffattn_fuzz::bert` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::bert(data));
