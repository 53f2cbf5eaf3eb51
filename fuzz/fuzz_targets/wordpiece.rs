//! Fuzz target `wordpiece`: see `diffattn_fuzz::wordpiece` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::wordpiece(data));
