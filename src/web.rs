//! The wasm boundary: the only module with `#[wasm_bindgen]`. (Being written.)

use wasm_bindgen::prelude::*;

/// Installs the panic hook once, when the module is instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version, so the page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
