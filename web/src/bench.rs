//! The engine timed alone in the browser (cargo feature `bench`, so the page's wasm never
//! carries it): `bench_engine` for the native/wasm ratio of docs/PERFORMANCE.md.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::js::{js_error, to_js};

thread_local! {
    /// The page's `performance`, looked up once: `web_sys::window()` checks the global's class
    /// and the getter crosses into JavaScript twice more, about 2 µs a reading that the stages
    /// around it were charged with (a layer reads the clock five times).
    static PERFORMANCE: Option<web_sys::Performance> =
        web_sys::window().and_then(|w| w.performance());
}

fn now_ms() -> f64 {
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, |p| p.now()))
}

/// Times the engine alone in wasm (`diffattn::bench`, the same workload as `diffattn bench`
/// natively), for the side-by-side tables of docs/PERFORMANCE.md: `reps` samples of one full
/// shift-difference layer on `tokens` seeded vectors with the untrained model's weights and
/// `heads` heads. Returns `{ kernels: "simd128" | "portable", maps_ms, shift_ms, layer: {
/// layer_ms, projection_ms, maps_ms, shift_ms, output_ms, batch } }`, each a number[] with one
/// entry per sample (ms per layer); the top-level `maps_ms` is the projections and the maps
/// (what a new sentence costs), `shift_ms` the shift stages (what a shift tick costs).
#[wasm_bindgen]
pub fn bench_engine(tokens: usize, heads: usize, reps: usize) -> Result<JsValue, JsError> {
    use diffattn::bench::{time_layer, LayerBench};
    #[derive(Serialize)]
    struct Layer {
        batch: usize,
        layer_ms: Vec<f64>,
        projection_ms: Vec<f64>,
        maps_ms: Vec<f64>,
        shift_ms: Vec<f64>,
        output_ms: Vec<f64>,
    }
    #[derive(Serialize)]
    struct Timings {
        kernels: &'static str,
        maps_ms: Vec<f64>,
        shift_ms: Vec<f64>,
        layer: Layer,
    }
    let bench = LayerBench {
        tokens,
        heads,
        mechanism: diffattn::engine::MechanismKind::ShiftDiff,
        reps,
        // Without cross-origin isolation the browser's clock moves in 0.1 ms steps: short
        // layers are repeated within a sample (diffattn::bench).
        clock_resolution_ms: 0.1,
        // Long enough for V8 to tier the kernels up from Liftoff to TurboFan.
        warmup_ms: 300.0,
    };
    let t = time_layer(&bench, &now_ms).map_err(js_error)?;
    let maps_ms = t.projection_ms.iter().zip(&t.maps_ms).map(|(p, m)| p + m);
    to_js(&Timings {
        kernels: diffattn::engine::kernels::active_path(),
        maps_ms: maps_ms.collect(),
        shift_ms: t.shift_ms.clone(),
        layer: Layer {
            batch: t.batch,
            layer_ms: t.layer_ms,
            projection_ms: t.projection_ms,
            maps_ms: t.maps_ms,
            shift_ms: t.shift_ms,
            output_ms: t.output_ms,
        },
    })
}

/// Times opening a spec file's `bytes` (JSON or safetensors) as the page does
/// (`diffattn::bench::time_spec_open`): `{ parse_ms, checks_ms, projection_ms, maps_ms, load_ms }`,
/// the steps of `Explorer.load_spec_bytes` and then that call whole, in ms. The bytes' copy
/// into wasm memory happens before this runs; `bench_bytes_in` times it alone.
#[wasm_bindgen]
pub fn bench_spec_open(bytes: &[u8]) -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Timings {
        parse_ms: f64,
        checks_ms: f64,
        projection_ms: f64,
        maps_ms: f64,
        load_ms: f64,
    }
    let t = diffattn::bench::time_spec_open(bytes, &now_ms).map_err(js_error)?;
    to_js(&Timings {
        parse_ms: t.parse_ms,
        checks_ms: t.checks_ms,
        projection_ms: t.projection_ms,
        maps_ms: t.maps_ms,
        load_ms: t.load_ms,
    })
}

/// The length of `bytes`: a call that only copies them into wasm memory, to time that copy.
#[wasm_bindgen]
pub fn bench_bytes_in(bytes: &[u8]) -> usize {
    bytes.len()
}
