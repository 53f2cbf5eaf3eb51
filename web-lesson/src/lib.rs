//! The retrieval lesson's wasm module (`diffattn-lesson`, built by scripts/build-wasm into
//! `pkg/diffattn_lesson.js` and one `.wasm` per SIMD flavour): one handle, [`Lesson`], over the
//! library's retrieval models (`diffattn::retrieval`, docs/LESSON.md). Only the lesson's page
//! (`?lesson=retrieval`, www/lesson-page.js) loads it; the page's module (`web/`) does not
//! carry it. Its maps are drawn by `diffattn_canvas::Painter`, as the page's are.
//!
//! Natively the crate is empty (its tests run in headless Chromium: `tests/lesson.rs`).
#![cfg(target_arch = "wasm32")]

mod lesson;

use wasm_bindgen::prelude::*;

pub use lesson::Lesson;

/// Installs the panic hook once, when the module is instantiated: a panic then prints its
/// message to the console before the call traps with a `WebAssembly.RuntimeError`.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version, so the lesson's page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
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
