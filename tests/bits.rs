//! The same bits natively, with and without SIMD, as the hashes committed in
//! `tests/bits/golden.txt` (which `tests/web.rs` checks in wasm): the engine's kernels do the
//! same IEEE operations in the same order on every target (src/engine/kernels/mod.rs).
//!
//! After a change that is meant to change the maps, write the new hashes with
//! `DIFFATTN_BLESS_BITS=1 cargo test --test bits` and commit them with the change.
#![cfg(not(target_arch = "wasm32"))]

#[path = "bits/cases.rs"]
mod cases;

use diffattn::engine::kernels;

const GOLDEN: &str = include_str!("bits/golden.txt");

#[test]
fn every_map_has_the_committed_bits_with_and_without_simd() {
    // One test, so that switching the kernels off does not race another test (and the bits
    // are the same either way, which is the point).
    let fast = cases::lines();
    kernels::force_portable(true);
    let portable = cases::lines();
    kernels::force_portable(false);
    assert_eq!(
        fast, portable,
        "the SIMD path and the scalar reference differ"
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bits/golden.txt");
    if std::env::var_os("DIFFATTN_BLESS_BITS").is_some() {
        std::fs::write(path, fast.join("\n") + "\n").expect("write the golden hashes");
        return;
    }
    let golden: Vec<&str> = GOLDEN.lines().collect();
    assert_eq!(
        fast.len(),
        golden.len(),
        "cases added or removed: bless the hashes"
    );
    for (got, want) in fast.iter().zip(&golden) {
        assert_eq!(got, want, "{} path", kernels::active_path());
    }
}
