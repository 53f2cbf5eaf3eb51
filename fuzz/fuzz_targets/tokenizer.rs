//! Fuzz target `tokenizer`: see `diffattn_fuzz::tokenizer` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::tokenizer(data));
