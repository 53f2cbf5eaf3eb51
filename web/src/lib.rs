//! The page's wasm module (`diffattn-web`, built by scripts/build-wasm into `pkg/diffattn.js`
//! and one `.wasm` per SIMD flavour): the page's `#[wasm_bindgen]` boundary over the library
//! `diffattn`, which has none. A crate of its own because wasm-bindgen's exports from every
//! linked crate end up in a module: what this crate and its dependencies export is what the
//! page downloads, and neither the pretrained model's code (it ships beside the model, in
//! `web-pretrained/`) nor the retrieval lesson's (`web-lesson/`, loaded by the lesson's page
//! only) is among them. Split by concern:
//!
//! * `handle`: [`Explorer`], the page's one handle over `diffattn::explorer` (settings patches,
//!   models); its methods are split by concern over `render` (drawing on canvases), `hover`
//!   (hit-testing, cells, windows), `files` (specs and exports: the spec reader and the JSON
//!   and SVG exports) and `work` (the work in pieces between frames: `work(budget_ms, every)`);
//! * `pretrained`: the handle's side of a pretrained model that runs in its own module
//!   (`web-pretrained/`): what one layer needs handed in, the similarity handed back;
//! * `js`: the JavaScript-shaped values it takes and returns, each with its shape in a comment;
//! * one map on a canvas (plotters for the frame, the plot's pixels as one image) is
//!   `diffattn_canvas::Painter` (`web-canvas/`, shared with the lesson's module; it exports
//!   nothing);
//! * `bench` (cargo feature `bench` only, so it never ships in the page's wasm): the engine
//!   timed alone in the browser, for docs/PERFORMANCE.md.
//!
//! Free functions: [`start`] (the panic hook), [`version`], [`defaults`], [`mechanisms`],
//! [`names`] and [`max_tokens`],
//! which the page reads once so that Rust is the one source of the defaults and of what each
//! mechanism shows.
//!
//! Natively the crate is empty (its tests run in headless Chromium: `tests/web.rs`).
#![cfg(target_arch = "wasm32")]

#[cfg(feature = "bench")]
mod bench;
mod files;
mod grid;
mod handle;
mod hover;
mod js;
mod model_view;
mod pretrained;
mod render;
mod work;

use wasm_bindgen::prelude::*;

#[cfg(feature = "bench")]
pub use bench::{bench_bytes_in, bench_engine, bench_spec_open};
pub use handle::Explorer;

use diffattn::engine::MechanismKind;
use diffattn::explorer::Settings;
use js::{to_js, MechanismJs, SettingsJs};

/// Installs the panic hook once, when the module is instantiated: a panic then prints its
/// message to the console before the call traps with a `WebAssembly.RuntimeError`.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version, so the page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The default settings (see `SettingsJs`), the one set the page starts from.
#[wasm_bindgen]
pub fn defaults() -> Result<JsValue, JsError> {
    to_js(&SettingsJs::new(&Settings::default(), 0, false, true))
}

/// Every mechanism of the registry, in the page's order: `[{ name, stages, parameters,
/// final_stage }]` (`stages` with the symmetric difference's extra map).
#[wasm_bindgen]
pub fn mechanisms() -> Result<JsValue, JsError> {
    let all: Vec<MechanismJs> = MechanismKind::ALL
        .into_iter()
        .map(MechanismJs::new)
        .collect();
    to_js(&all)
}

/// Every name the page may use, from `diffattn::names`: `{ mechanisms, differences, fills,
/// renormalizations, stages, parameters }`, each a list of strings in order.
#[wasm_bindgen]
pub fn names() -> Result<JsValue, JsError> {
    use diffattn::engine::shift_diff::{Difference, Renormalize, ShiftFill};
    use diffattn::engine::{Parameter, StageId};
    use diffattn::names::names as of;
    /// `{ mechanisms, differences, fills, renormalizations, stages, parameters }`
    #[derive(serde::Serialize)]
    struct NamesJs {
        mechanisms: Vec<&'static str>,
        differences: Vec<&'static str>,
        fills: Vec<&'static str>,
        renormalizations: Vec<&'static str>,
        stages: Vec<&'static str>,
        parameters: Vec<&'static str>,
    }
    to_js(&NamesJs {
        mechanisms: MechanismKind::ALL.map(MechanismKind::key).to_vec(),
        differences: of::<Difference>(),
        fills: of::<ShiftFill>(),
        renormalizations: of::<Renormalize>(),
        stages: of::<StageId>(),
        parameters: of::<Parameter>(),
    })
}

/// The canonical name of a stage written any accepted way (`"A"` and `"a"` are `"a"`,
/// `"shift"` is `"shifted"`), or `undefined` for no stage.
#[wasm_bindgen]
pub fn stage_name(name: &str) -> Option<String> {
    diffattn::names::parse::<diffattn::engine::StageId>("stage", name.trim())
        .ok()
        .map(|s| diffattn::names::name_of(s).to_string())
}

/// The most tokens a sentence is drawn with; the rest of a longer text is cut off.
#[wasm_bindgen]
pub fn max_tokens() -> usize {
    // The page's own cap, until its budgets hold at the library's 2,048 (text::limits).
    diffattn::text::PAGE_MAX_TOKENS
}
