//! Fuzz target `spec_binary`: the spec check (`diffattn_fuzz::spec`) started from specs in the
//! binary form (safetensors, DESIGN.md §7.8), with a dictionary of its header.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| diffattn_fuzz::spec(data));
