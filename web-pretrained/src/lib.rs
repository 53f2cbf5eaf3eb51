//! The pretrained model's wasm module (`diffattn-pretrained`, built by scripts/build-wasm into
//! `pkg/diffattn_pretrained.js` and one `.wasm` per SIMD flavour): the model's code (the BERT
//! reader and forward pass, the word-piece tokenizer with its Unicode tables) ships with the
//! model, fetched with its weights file on first use of `weights=minilm`
//! (www/explorer/weights.js, `pretrained`), never by the page's first view. One handle,
//! [`Encoder`], over `diffattn::model::bert`: the page's explorer (`web/`, another module)
//! never holds the model, only what one layer needs, which www/explorer/pretrained.js hands it
//! from here (ARCHITECTURE.md, "Where the pretrained model enters").
//!
//! * `encoder`: [`Encoder`], one text through the model in pieces (`work(layer, budget_ms)`),
//!   the vectors entering a layer and its attention weights handed out, the similarity to a
//!   second sentence from the explorer's layer output; the model read once per instance;
//! * `bench` (cargo feature `bench` only): the model's whole forward timed, and the test hook
//!   `trap_for_tests`.
//!
//! Natively the crate is empty (the model's native path is `diffattn::pretrained::Feed`).
#![cfg(target_arch = "wasm32")]

#[cfg(feature = "bench")]
mod bench;
mod encoder;

use wasm_bindgen::prelude::*;

#[cfg(feature = "bench")]
pub use bench::BenchBert;
pub use encoder::Encoder;

/// The crate version, so the noise lesson's page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Installs the panic hook once, when the module is instantiated: a panic then prints its
/// message to the console before the call traps with a `WebAssembly.RuntimeError`.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// A value as JavaScript sees it (JSON-compatible: maps as objects).
fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}

/// An `Error` with `e`'s message.
fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The page's clock (ms).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
