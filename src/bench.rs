//! The engine's own timing of one full attention layer, stage by stage: what
//! `diffattn bench` prints natively and `bench_engine` returns in wasm, so the two (and
//! PyTorch, `benches/peer_torch.py`) time the same work (docs/PERFORMANCE.md).
//!
//! The workload: the untrained model's weights (`d = 64`), `L` seeded vectors, no mask, and
//! the mechanism's default parameters (shift-difference: the page's defaults, with a shift
//! that changes every layer, as a dragged slider gives). One layer is the engine's staged
//! steps in a row, each timed: the projections `Q, K, V`, the maps (`A` for every head), the
//! shift stages (`shift(A)`, `D`, `G`, `A′` for every head, into buffers kept from one layer
//! to the next as the page keeps them) and the output `concat(A′·V)·W_oᵀ`. The clock is the
//! caller's, so this module runs anywhere.

use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::{Gate, ShiftDiffMaps, ShiftDiffParams};
use crate::engine::{
    base_maps_into, output, shift_stages_into, BaseMaps, Block, EngineError, Mechanism,
    MechanismKind, Projection,
};
use crate::model::Model;
use crate::text::{seeded_normal, seeded_normal_vec};

/// What to time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerBench {
    /// The sentence length `L`.
    pub tokens: usize,
    /// The number of heads `H` (diff heads for the Differential Transformer).
    pub heads: usize,
    /// Which mechanism.
    pub mechanism: MechanismKind,
    /// How many timed samples.
    pub reps: usize,
    /// The clock's resolution in ms: a sample repeats the layer until it lasts at least 200
    /// ticks (browsers without cross-origin isolation give 0.1 ms; natively 0), so that even a
    /// short stage's mean over the sample is resolved.
    pub clock_resolution_ms: f64,
    /// Untimed layers first, for at least this long (and at least one): a wasm engine compiles
    /// a function with its fast baseline compiler first and its optimising one once it is hot.
    pub warmup_ms: f64,
}

/// Samples of one layer's stages, in ms per layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerTimings {
    /// Layers per sample (1 unless a layer is short against the clock's resolution).
    pub batch: usize,
    /// `Q, K, V` from the tokens.
    pub projection_ms: Vec<f64>,
    /// The maps before any shift, every head.
    pub maps_ms: Vec<f64>,
    /// The shift stages, every head (0 for mechanisms without them).
    pub shift_ms: Vec<f64>,
    /// The output.
    pub output_ms: Vec<f64>,
    /// The whole layer.
    pub layer_ms: Vec<f64>,
}

/// The median of `v` (the mean of the middle two for an even count; NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The `q` quantile of `v` by linear interpolation between order statistics.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// The mechanism `kind` with the benchmark's parameters for `heads` heads: the page's
/// defaults (shift 1, single difference, circular fill, no renormalisation, gate
/// `α, β, γ = 0, 4, 0`; `τ = 10`; window 2) and, for the Differential Transformer, seeded
/// lambda vectors; `benches/engine.rs` times the same mechanisms.
pub fn mechanism(kind: MechanismKind, heads: usize, d_model: usize) -> Mechanism {
    match kind {
        MechanismKind::ShiftDiff => Mechanism::ShiftDiff(ShiftDiffParams {
            shift: 1,
            difference: Default::default(),
            fill: Default::default(),
            renormalize: Default::default(),
            gate: Gate::uniform(heads, 0.0, 4.0, 0.0),
        }),
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::DiffTransformer => {
            let d_h = d_model / heads.max(1) / 2;
            Mechanism::DiffTransformer(DiffTransformerParams {
                depth: 0,
                lambda_q1: seeded_normal_vec(d_h, 5, 0.1),
                lambda_k1: seeded_normal_vec(d_h, 6, 0.1),
                lambda_q2: seeded_normal_vec(d_h, 7, 0.1),
                lambda_k2: seeded_normal_vec(d_h, 8, 0.1),
                subln: vec![1.0; 2 * d_h],
                subln_eps: crate::engine::diff_transformer::RMS_NORM_EPS,
                ..Default::default()
            })
        }
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::Cosine => Mechanism::Cosine { tau: 10.0 },
        MechanismKind::Local => Mechanism::Local { window: 2 },
        // V2's λ comes from the seeded `W_λ` of `Model::layer_weights`; hierarchical with
        // segments of 8 tokens.
        MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 { lambda: None },
        MechanismKind::Hierarchical => Mechanism::Hierarchical { segment: 8 },
        // The output gate's W_og comes seeded from `Model::layer_weights` too.
        MechanismKind::GatedAttention => Mechanism::GatedAttention,
    }
}

/// Times `bench.reps` samples of one layer with the clock `now_ms` (milliseconds from any
/// origin), after the untimed warm-up. Errors are the engine's (heads not dividing `d`).
pub fn time_layer(
    bench: &LayerBench,
    now_ms: &dyn Fn() -> f64,
) -> Result<LayerTimings, EngineError> {
    let model = Model::untrained();
    // The weights the page draws with: V2's second half of `W_q` and its `W_λ` are seeded.
    let weights = &*model.layer_weights(bench.mechanism, bench.heads);
    let d = weights.d_model();
    let x = seeded_normal(bench.tokens, d, 9, 1.0);
    weights.check_input(x.view())?;
    let mut mechanism = mechanism(bench.mechanism, bench.heads, d);
    let mut shift = ShiftDiffMaps::empty();
    let mut base = BaseMaps::default();
    let block = Block::all(bench.heads, bench.tokens);
    let mut layers = 0usize;
    // One layer, each stage's end time (from `t0`) added into `acc`.
    let mut layer = |acc: &mut [f64; 4]| -> Result<(), EngineError> {
        if let Mechanism::ShiftDiff(p) = &mut mechanism {
            p.shift = 1 + (layers % 8) as i64;
        }
        layers += 1;
        let t0 = now_ms();
        let projection = Projection::new(bench.mechanism, x.view(), weights, bench.heads)?;
        let t1 = now_ms();
        let heads = bench.heads;
        base_maps_into(
            &mechanism,
            &projection,
            weights,
            heads,
            false,
            &block,
            &mut base,
        )?;
        let t2 = now_ms();
        let has_shift = shift_stages_into(&mechanism, &base, false, &block, &mut shift)?;
        let t3 = now_ms();
        let finals = match (&base, has_shift) {
            (_, true) => &shift.fused,
            (BaseMaps::Attention(a), false) => a,
            (BaseMaps::DiffTransformer(m), false) => &m.diff,
            (BaseMaps::DiffTransformerV2(m), false) => &m.diff,
            (BaseMaps::Hierarchical(m), false) => &m.a,
        };
        let out = output(&mechanism, &projection, weights, heads, &|h| {
            finals.index_axis(ndarray::Axis(0), h)
        })?;
        let t4 = now_ms();
        std::hint::black_box(out);
        for (a, t) in acc.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3]) {
            *a += t;
        }
        Ok(())
    };
    let t0 = now_ms();
    layer(&mut [0.0; 4])?;
    let mut warm = 1usize;
    let mut last = t0;
    while now_ms() - t0 < bench.warmup_ms {
        // The second half of the warm-up alone sets the batch: by then the code is optimised.
        if 2.0 * (now_ms() - t0) < bench.warmup_ms {
            last = now_ms();
            warm = 0;
        }
        layer(&mut [0.0; 4])?;
        warm += 1;
    }
    // A layer's mean time over the warm-up's end, not one layer's: a single slow layer (a
    // preempted one on a shared machine, under a coarse clock) would give batches of one, and
    // every stage's time would be whole ticks.
    let once = (now_ms() - last) / warm.max(1) as f64;
    let target = 200.0 * bench.clock_resolution_ms;
    let batch = if once >= target {
        1
    } else {
        ((target / once.max(1e-3)).ceil() as usize).clamp(1, 1000)
    };
    let mut out = LayerTimings {
        batch,
        ..Default::default()
    };
    for _ in 0..bench.reps.max(1) {
        let mut acc = [0.0f64; 4];
        for _ in 0..batch {
            layer(&mut acc)?;
        }
        let per = acc.map(|t| t / batch as f64);
        out.projection_ms.push(per[0]);
        out.maps_ms.push(per[1]);
        out.shift_ms.push(per[2]);
        out.output_ms.push(per[3]);
        out.layer_ms.push(per.iter().sum());
    }
    Ok(out)
}

/// How long opening a spec file takes, step by step, in ms: the page's
/// [`Explorer::load_spec_bytes`](crate::explorer::Explorer::load_spec_bytes) split into its
/// steps, then the same call whole (docs/PERFORMANCE.md, "A captured layer of a 1B model").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecOpenTimings {
    /// The bytes parsed: the safetensors header, every value decoded and checked finite, the
    /// fields validated (or the JSON text read).
    pub parse_ms: f64,
    /// The limits and what the page draws (`check_limits`, `page_support`).
    pub checks_ms: f64,
    /// `Q, K, V` (and V2's λ logits) from the tokens.
    pub projection_ms: f64,
    /// The maps before any shift, every head.
    pub maps_ms: f64,
    /// The explorer's `load_spec_bytes` of the same bytes, all of the above in one call.
    pub load_ms: f64,
}

/// Times opening the spec file `bytes` (JSON or safetensors) as the page does, on the clock
/// `now_ms`; an error is the page's message for the file.
pub fn time_spec_open(
    bytes: &[u8],
    now_ms: &dyn Fn() -> f64,
) -> Result<SpecOpenTimings, crate::spec::SpecError> {
    let t0 = now_ms();
    let spec = crate::spec::parse_page_spec_bytes(bytes)?;
    let t1 = now_ms();
    spec.check_limits()?;
    spec.page_support()?;
    let t2 = now_ms();
    let (kind, heads) = (spec.mechanism.kind(), spec.heads);
    let projection = Projection::new(kind, spec.x.view(), &spec.weights, heads)?;
    let t3 = now_ms();
    let mut base = BaseMaps::default();
    let block = Block::all(heads, spec.x.nrows());
    let (mechanism, causal) = (&spec.mechanism, spec.causal);
    base_maps_into(
        mechanism,
        &projection,
        &spec.weights,
        heads,
        causal,
        &block,
        &mut base,
    )?;
    let t4 = now_ms();
    drop((base, projection, spec));
    let mut explorer = crate::explorer::Explorer::new(Model::untrained());
    let t5 = now_ms();
    explorer.load_spec_bytes(bytes)?;
    let t6 = now_ms();
    Ok(SpecOpenTimings {
        parse_ms: t1 - t0,
        checks_ms: t2 - t1,
        projection_ms: t3 - t2,
        maps_ms: t4 - t3,
        load_ms: t6 - t5,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_times_a_small_layer() {
        // No timing is asserted: only that every stage ran and was measured.
        let tick = std::cell::Cell::new(0.0);
        let clock = || {
            tick.set(tick.get() + 1.0);
            tick.get()
        };
        // Every mechanism, V2 included: it runs on the page's weights (`Model::layer_weights`:
        // the seeded second half of `W_q` and `W_λ`), which the square untrained ones lack.
        for kind in MechanismKind::ALL {
            let bench = LayerBench {
                tokens: 5,
                heads: 2,
                mechanism: kind,
                reps: 3,
                clock_resolution_ms: 0.0,
                warmup_ms: 0.0,
            };
            let t = time_layer(&bench, &clock).unwrap();
            assert_eq!(t.layer_ms.len(), 3);
            assert_eq!(t.layer_ms[0], 4.0, "four stages of one tick each");
        }
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        let bad = LayerBench {
            tokens: 4,
            heads: 3,
            mechanism: MechanismKind::ShiftDiff,
            reps: 1,
            clock_resolution_ms: 0.0,
            warmup_ms: 0.0,
        };
        assert!(time_layer(&bad, &clock).is_err());
    }

    #[test]
    fn opening_a_spec_is_timed_step_by_step_and_a_bad_one_is_its_message() {
        let tick = std::cell::Cell::new(0.0);
        let clock = || {
            tick.set(tick.get() + 1.0);
            tick.get()
        };
        let spec = br#"{"mechanism": "standard", "heads": 1, "causal": true,
          "x": [[1.0], [2.0]], "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]], "w_o": [[1.0]]}"#;
        let t = time_spec_open(spec, &clock).unwrap();
        assert_eq!(
            [
                t.parse_ms,
                t.checks_ms,
                t.projection_ms,
                t.maps_ms,
                t.load_ms
            ],
            [1.0; 5]
        );
        let e = time_spec_open(b"{}", &clock).unwrap_err().to_string();
        assert!(e.contains("mechanism"), "{e}");
    }
}
