//! The engine timed alone in the browser (cargo feature `bench`, so the page's wasm never
//! carries it): `bench_engine` for the native/wasm ratio of docs/PERFORMANCE.md.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::js::{js_error, to_js};
use crate::model::Model;

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// `{ maps_ms: number[], shift_ms: number[] }`: one entry per repetition.
#[derive(Serialize)]
struct EngineTimingsJs {
    maps_ms: Vec<f64>,
    shift_ms: Vec<f64>,
}

/// Times the engine alone in wasm, for the native/wasm ratio of docs/PERFORMANCE.md: on
/// `tokens` seeded vectors with the untrained model's weights and `heads` heads, `reps` times
/// each, (1) the projections and the maps `A` (what a new sentence costs) and (2) the shift
/// stages of every head (what a shift-slider tick costs). The workload is the one
/// `benches/engine.rs` times natively (`page_engine/*`), so the two medians compare.
#[wasm_bindgen]
pub fn bench_engine(tokens: usize, heads: usize, reps: usize) -> Result<JsValue, JsError> {
    use crate::engine::shift_diff::{shift_diff_maps_into, Gate, ShiftDiffMaps, ShiftDiffParams};
    use crate::engine::{standard, Mask, Projected};
    let weights = Model::untrained().weights;
    let x = crate::text::seeded_normal(tokens, weights.d_model(), 9, 1.0);
    // The page's default shift settings (single difference, circular fill, no renormalisation,
    // gate 0, 4, 0), as in benches/engine.rs.
    let mut params = ShiftDiffParams {
        shift: 1,
        difference: Default::default(),
        fill: Default::default(),
        renormalize: Default::default(),
        gate: Gate::uniform(heads, 0.0, 4.0, 0.0),
    };
    let projected = Projected::new(x.view(), &weights);
    let a = standard::attention(projected.q.view(), projected.k.view(), heads, Mask::FULL)
        .map_err(js_error)?;
    let maps_ms = time_per_call(reps, |_| {
        let p = Projected::new(x.view(), &weights);
        let maps =
            standard::attention(p.q.view(), p.k.view(), heads, Mask::FULL).map_err(js_error)?;
        std::hint::black_box(maps);
        Ok(())
    })?;
    // Reused buffers, as the page's explorer reuses them from one tick to the next.
    let mut stages = ShiftDiffMaps::empty();
    let shift_ms = time_per_call(reps, |call| {
        // A different shift each time, as a dragged slider gives.
        params.shift = 1 + (call % 8) as i64;
        shift_diff_maps_into(&a, &params, Mask::FULL, &mut stages).map_err(js_error)?;
        std::hint::black_box(&stages);
        Ok(())
    })?;
    let out = EngineTimingsJs { maps_ms, shift_ms };
    to_js(&out)
}

/// `reps` samples of the time one call of `f` takes, in ms (`f` gets a running call count).
/// Without cross-origin isolation the browser's clock moves in 0.1 ms steps, so calls shorter
/// than 2 ms are repeated within a sample and the sample divided by the count.
fn time_per_call(
    reps: usize,
    mut f: impl FnMut(usize) -> Result<(), JsError>,
) -> Result<Vec<f64>, JsError> {
    let t0 = now_ms();
    f(0)?;
    let once = now_ms() - t0;
    let batch = if once >= 2.0 {
        1
    } else {
        ((2.0 / once.max(0.01)).ceil() as usize).min(1000)
    };
    let mut call = 1;
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t0 = now_ms();
        for _ in 0..batch {
            f(call)?;
            call += 1;
        }
        samples.push((now_ms() - t0) / batch as f64);
    }
    Ok(samples)
}
