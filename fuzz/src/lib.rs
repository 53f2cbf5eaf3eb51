//! The properties the fuzz targets check. The same file is compiled into the repository's
//! tests (`tests/fuzz_inputs.rs`), which run every committed seed and regression through it on
//! stable Rust, so an input the fuzzer once broke stays a test.
//!
//! Each check takes any bytes and panics only when a promise of the crate is broken: no panic
//! in parsing or running, no NaN or infinity in any output, readers that agree.

#[path = "checks.rs"]
mod checks;

#[path = "bert_checks.rs"]
mod bert_checks;

pub use bert_checks::{bert, wordpiece};
pub use checks::{model, spec, tokenizer};
