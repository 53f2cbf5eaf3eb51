# Sourced (not run) by the scripts beside it: moves to the repository root, puts
# cargo's bin folder on PATH and defines the few helpers they share.
# shellcheck shell=bash

DIFFATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$DIFFATTN_ROOT"

# rustup installs cargo and `cargo install`ed tools into $CARGO_HOME/bin; a
# non-login shell (CI, cron) may not have it on PATH yet.
if ! command -v cargo >/dev/null 2>&1 && [ -f "${CARGO_HOME:-$HOME/.cargo}/env" ]; then
  # shellcheck disable=SC1091
  . "${CARGO_HOME:-$HOME/.cargo}/env"
fi
case ":$PATH:" in
  *":${CARGO_HOME:-$HOME/.cargo}/bin:"*) ;;
  *) export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH" ;;
esac

# Where the browser tests find Debian's Chromium and its driver.
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

# The nightly toolchain of the shipped wasm builds (scripts/build-wasm) and of the fuzzers
# (scripts/fuzz), pinned to one date so that a build on a new machine is the same build: the
# wasm builds rebuild the standard library for size (`-Zbuild-std`, with panics that trap at
# once, `-Cpanic=immediate-abort`), which only nightly does; 29 KB off the page's gzipped wasm
# (ARCHITECTURE.md, "One build per SIMD flavour"). scripts/setup installs it with rust-src.
WASM_TOOLCHAIN="nightly-2026-05-20"

# The wasm-bindgen version pinned by Cargo.lock (the CLI must match it exactly).
wasm_bindgen_lock_version() {
  awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/^version = "|"$/, ""); print; exit }' Cargo.lock
}

# The cargo target directory (honours CARGO_TARGET_DIR and .cargo/config.toml).
cargo_target_dir() {
  cargo metadata --format-version 1 --no-deps --offline 2>/dev/null \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' \
    || echo "${CARGO_TARGET_DIR:-$DIFFATTN_ROOT/target}"
}
