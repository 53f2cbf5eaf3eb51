//! Drawing maps on a canvas for the wasm modules (`diffattn-canvas`): [`Painter`], one map in
//! its frame (plotters, through plotters-canvas, draws the frame; the plot's own pixels go on
//! as one image), for the page's module (`web/`) and the retrieval lesson's (`web-lesson/`).
//! A crate of its own so that both modules share it without either carrying the other's
//! exports: it has no `#[wasm_bindgen]` of its own, so linking it adds nothing to what a
//! module exports (tests/architecture.rs). Natively the crate is empty.
#![cfg(target_arch = "wasm32")]

mod draw;

pub use draw::Painter;

use wasm_bindgen::JsError;

/// An `Error` with `e`'s message.
fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}
