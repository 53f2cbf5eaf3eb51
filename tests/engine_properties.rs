//! Property tests for the invariants of DESIGN.md §1, §2 and §5, over random small sentences,
//! widths, head counts, shifts and gates.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::diff_transformer::DiffTransformerParams;
use diffattn::engine::shift_diff::{
    shift, shift_diff_maps, Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill,
};
use diffattn::engine::{run, standard, HeadShape, Mask, Mechanism, Projected, Stages, Weights};
use ndarray::{Array2, Array3, Axis};
use proptest::prelude::*;

/// A random layer: `tokens` rows of width `d = heads · 2 · half_width` (even, so the
/// Differential Transformer can split it too), values from `value`.
#[derive(Debug, Clone)]
struct Layer {
    x: Array2<f32>,
    weights: Weights,
    heads: usize,
}

fn layer_with(value: impl Strategy<Value = f32> + Clone + 'static) -> impl Strategy<Value = Layer> {
    (
        1usize..=7,
        prop::sample::select(vec![1usize, 2, 4]),
        1usize..=3,
    )
        .prop_flat_map(move |(tokens, heads, half_width)| {
            let d = heads * 2 * half_width;
            let matrix = |rows: usize| {
                prop::collection::vec(value.clone(), rows * d)
                    .prop_map(move |v| Array2::from_shape_vec((rows, d), v).expect("shape"))
            };
            (matrix(tokens), matrix(d), matrix(d), matrix(d), matrix(d)).prop_map(
                move |(x, w_q, w_k, w_v, w_o)| Layer {
                    x,
                    weights: Weights::new(w_q, w_k, w_v, w_o).expect("square weights"),
                    heads,
                },
            )
        })
}

fn ordinary() -> impl Strategy<Value = Layer> {
    layer_with(-3.0f32..3.0)
}

/// Values that include zeros, the f32 limits and everything between.
fn extreme() -> impl Strategy<Value = Layer> {
    layer_with(prop_oneof![
        3 => -3.0f32..3.0,
        1 => Just(0.0f32),
        1 => Just(f32::MAX),
        1 => Just(-f32::MAX),
        1 => -3.0e38f32..3.0e38,
        1 => -1.0e-38f32..1.0e-38,
    ])
}

fn fill() -> impl Strategy<Value = ShiftFill> {
    prop_oneof![Just(ShiftFill::Circular), Just(ShiftFill::Zero)]
}

fn difference() -> impl Strategy<Value = Difference> {
    prop_oneof![Just(Difference::Single), Just(Difference::Symmetric)]
}

/// Gate scalars small enough that `alpha·A + beta·D + gamma` stays within ±15, where the f32
/// sigmoid is still strictly between 0 and 1 (see `numeric::sigmoid`).
fn gate(heads: usize) -> impl Strategy<Value = Gate> {
    let v = || prop::collection::vec(-5.0f32..5.0, heads);
    (v(), v(), v()).prop_map(|(alpha, beta, gamma)| Gate { alpha, beta, gamma })
}

fn attention(layer: &Layer, causal: bool) -> Array3<f32> {
    let p = Projected::new(layer.x.view(), &layer.weights);
    let shape = HeadShape::plain(p.q.ncols(), layer.heads).expect("heads divide d");
    let all: Vec<usize> = (0..layer.heads).collect();
    let mut a = Array3::zeros((0, 0, 0));
    let rows = 0..p.q.nrows();
    standard::maps_into(
        p.q.view(),
        p.k.view(),
        &shape,
        Mask::causal(causal),
        &all,
        rows,
        1.0,
        &mut a,
    )
    .expect("rows within the tokens");
    a
}

fn every_mechanism(heads: usize, half_width: usize) -> Vec<Mechanism> {
    let d_h = half_width;
    vec![
        Mechanism::Standard,
        Mechanism::ShiftDiff(ShiftDiffParams {
            shift: 1,
            difference: Difference::Symmetric,
            fill: ShiftFill::Circular,
            renormalize: Renormalize::Softmax,
            gate: Gate::uniform(heads, 1.0, 2.0, -0.5),
        }),
        Mechanism::DiffTransformer(DiffTransformerParams {
            depth: 3,
            lambda_q1: vec![0.1; d_h],
            lambda_k1: vec![0.2; d_h],
            lambda_q2: vec![-0.1; d_h],
            lambda_k2: vec![0.3; d_h],
            subln: vec![1.0; 2 * d_h],
            ..Default::default()
        }),
        Mechanism::InputDiff,
        Mechanism::Cosine { tau: 10.0 },
        Mechanism::Local { window: 1 },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Rows of A sum to 1, or to 0 where every key is masked (input difference, first query).
    #[test]
    fn rows_of_every_attention_map_sum_to_one_or_zero(layer in ordinary(), causal: bool) {
        let half = layer.x.ncols() / layer.heads / 2;
        for mechanism in every_mechanism(layer.heads, half) {
            if matches!(mechanism, Mechanism::DiffTransformer(_) | Mechanism::ShiftDiff(_)) {
                continue;
            }
            let stages = run(layer.x.view(), &layer.weights, layer.heads, causal, &mechanism).unwrap();
            let Stages::Attention { a, .. } = stages else { unreachable!() };
            for (h, map) in a.axis_iter(Axis(0)).enumerate() {
                for (i, row) in map.axis_iter(Axis(0)).enumerate() {
                    let sum: f32 = row.sum();
                    let fully_masked = matches!(mechanism, Mechanism::InputDiff)
                        && (row.is_empty() || (causal && i == 0));
                    let want = if fully_masked { 0.0 } else { 1.0 };
                    prop_assert!((sum - want).abs() < 1e-5,
                        "{} head {h} row {i}: sum {sum}, want {want}", mechanism.name());
                    prop_assert!(row.iter().all(|&p| (0.0..=1.0).contains(&p)));
                }
            }
        }
    }

    /// A shift by any multiple of L is the identity in circular mode.
    #[test]
    fn circular_shift_by_a_multiple_of_l_is_the_identity(layer in ordinary(), m in -4i64..=4) {
        let a = attention(&layer, false);
        let l = a.len_of(Axis(2)) as i64;
        for map in a.axis_iter(Axis(0)) {
            prop_assert_eq!(shift(map, m * l, ShiftFill::Circular), map.to_owned());
        }
    }

    /// Circular single mode without a mask: each row of shift(A) is a permutation of A's row,
    /// rows of D sum to 0, A' = A + G ⊙ D exactly, 0 < G < 1, and rows of A' sum to
    /// 1 + Σ G ⊙ D. (With a mask the shifted rows are masked again, so these hold only
    /// without one: DESIGN.md §2.)
    #[test]
    fn circular_single_mode_invariants(
        (layer, gate) in ordinary().prop_flat_map(|l| { let h = l.heads; (Just(l), gate(h)) }),
        k in -20i64..20,
    ) {
        let a = attention(&layer, false);
        let params = ShiftDiffParams {
            shift: k, difference: Difference::Single, fill: ShiftFill::Circular,
            renormalize: Renormalize::None, gate,
        };
        let maps = shift_diff_maps(&a, &params, Mask::FULL).unwrap();
        for h in 0..layer.heads {
            for i in 0..a.len_of(Axis(1)) {
                let row = |m: &Array3<f32>| m.index_axis(Axis(0), h).row(i).to_vec();
                let (a_row, s_row, d_row, g_row, f_row) =
                    (row(&a), row(&maps.shifted), row(&maps.d), row(&maps.g), row(&maps.fused));
                let (mut sorted_a, mut sorted_s) = (a_row.clone(), s_row.clone());
                sorted_a.sort_by(f32::total_cmp);
                sorted_s.sort_by(f32::total_cmp);
                prop_assert_eq!(sorted_a, sorted_s);
                prop_assert!(d_row.iter().sum::<f32>().abs() < 1e-5);
                let mut gd_sum = 0.0f32;
                for j in 0..a_row.len() {
                    prop_assert!(g_row[j] > 0.0 && g_row[j] < 1.0, "G = {}", g_row[j]);
                    prop_assert_eq!(f_row[j], a_row[j] + g_row[j] * d_row[j]);
                    gd_sum += g_row[j] * d_row[j];
                }
                prop_assert!((f_row.iter().sum::<f32>() - (1.0 + gd_sum)).abs() < 1e-5);
            }
        }
    }

    /// The causal mask holds in every map (DESIGN.md §2): for every shift, fill, difference and
    /// renormalisation, `shift(A)`, `shift₋ₖ(A)`, `D` and `A'` are exactly 0 above the
    /// diagonal, and what is left of a shifted row is the unmasked shift of A's row.
    #[test]
    fn the_causal_mask_holds_in_every_shifted_map(
        (layer, gate) in ordinary().prop_flat_map(|l| { let h = l.heads; (Just(l), gate(h)) }),
        k in -20i64..20,
        fill in fill(),
        difference in difference(),
        softmax: bool,
    ) {
        let a = attention(&layer, true);
        let renormalize = if softmax { Renormalize::Softmax } else { Renormalize::None };
        let params = ShiftDiffParams { shift: k, difference, fill, renormalize, gate };
        let maps = shift_diff_maps(&a, &params, Mask::causal(true)).unwrap();
        let unmasked = shift_diff_maps(&a, &params, Mask::FULL).unwrap();
        let mut checked = vec![("shift(A)", &maps.shifted), ("D", &maps.d), ("A'", &maps.fused)];
        if let Some(back) = &maps.shifted_back {
            checked.push(("shift-k(A)", back));
        }
        for (name, m) in checked {
            for ((h, i, j), &v) in m.indexed_iter() {
                if j > i {
                    prop_assert_eq!(v, 0.0, "{} head {} cell ({}, {})", name, h, i, j);
                }
            }
        }
        for ((h, i, j), &v) in maps.shifted.indexed_iter() {
            if j <= i {
                prop_assert_eq!(v, unmasked.shifted[[h, i, j]]);
            }
        }
    }

    /// `k mod L == 0` makes D = 0 and A' = A (circular, no renormalisation), in both modes.
    #[test]
    fn zero_effective_shift_changes_nothing(
        (layer, gate) in ordinary().prop_flat_map(|l| { let h = l.heads; (Just(l), gate(h)) }),
        m in -3i64..=3,
        difference in difference(),
    ) {
        let a = attention(&layer, false);
        let l = a.len_of(Axis(2)) as i64;
        let params = ShiftDiffParams {
            shift: m * l, difference, fill: ShiftFill::Circular,
            renormalize: Renormalize::None, gate,
        };
        let maps = shift_diff_maps(&a, &params, Mask::FULL).unwrap();
        prop_assert!(maps.d.iter().all(|&d| d == 0.0));
        prop_assert_eq!(&maps.fused, &a);
    }

    /// The symmetric difference is shift_{-k}(A) - shift_{+k}(A), and renormalised rows of A'
    /// are probability distributions over the keys the mask allows.
    #[test]
    fn symmetric_difference_and_softmax_renormalisation(
        (layer, gate) in ordinary().prop_flat_map(|l| { let h = l.heads; (Just(l), gate(h)) }),
        k in -9i64..9, fill in fill(), causal: bool,
    ) {
        let a = attention(&layer, causal);
        let params = ShiftDiffParams {
            shift: k, difference: Difference::Symmetric, fill,
            renormalize: Renormalize::Softmax, gate,
        };
        let maps = shift_diff_maps(&a, &params, Mask::causal(causal)).unwrap();
        let back = maps.shifted_back.as_ref().expect("symmetric mode keeps shift_{-k}(A)");
        prop_assert_eq!(&maps.d, &(back - &maps.shifted));
        for map in maps.fused.axis_iter(Axis(0)) {
            for (i, row) in map.axis_iter(Axis(0)).enumerate() {
                prop_assert!((row.sum() - 1.0).abs() < 1e-5);
                for (j, &p) in row.iter().enumerate() {
                    prop_assert!(p >= 0.0);
                    if causal && j > i { prop_assert_eq!(p, 0.0); }
                }
            }
        }
    }

    /// Zero fill: the uncovered cells of shift(A) are 0 and the rest is A moved by k.
    #[test]
    fn zero_fill_moves_and_pads(layer in ordinary(), k in -9i64..9) {
        let a = attention(&layer, false);
        for map in a.axis_iter(Axis(0)) {
            let s = shift(map, k, ShiftFill::Zero);
            for ((i, j), &v) in s.indexed_iter() {
                let from = j as i64 - k;
                let want = if (0..map.ncols() as i64).contains(&from) { map[[i, from as usize]] } else { 0.0 };
                prop_assert_eq!(v, want);
            }
        }
    }

    /// Every mechanism's every stage is finite for any finite input, including all-zero rows
    /// and entries at the f32 limit, and the same input gives bit-identical stages.
    #[test]
    fn stages_are_finite_and_reproducible(layer in extreme(), causal: bool) {
        let half = layer.x.ncols() / layer.heads / 2;
        for mechanism in every_mechanism(layer.heads, half) {
            let first = run(layer.x.view(), &layer.weights, layer.heads, causal, &mechanism).unwrap();
            let json = serde_json::to_value(diffattn::spec::stages_json(&first)).unwrap();
            let mut numbers = Vec::new();
            collect_numbers(&json, &mut numbers);
            prop_assert!(numbers.iter().all(|v| v.is_finite()), "{} produced a non-finite value", mechanism.name());
            let second = run(layer.x.view(), &layer.weights, layer.heads, causal, &mechanism).unwrap();
            prop_assert!(bitwise_equal(&first, &second), "{} is not reproducible", mechanism.name());
        }
    }
}

/// serde_json writes non-finite f32 as `null`, so a finite check must also see nulls.
fn collect_numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::Null => out.push(f64::NAN),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_numbers(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_numbers(x, out)),
        _ => {}
    }
}

fn bitwise_equal(a: &Stages, b: &Stages) -> bool {
    let bits = |s: &Stages| {
        let json = serde_json::to_value(diffattn::spec::stages_json(s)).unwrap();
        let mut n = Vec::new();
        collect_numbers(&json, &mut n);
        n.iter().map(|v| (*v as f32).to_bits()).collect::<Vec<_>>()
    };
    bits(a) == bits(b)
}

/// A random layer with a random output gate `W_og` (`d x d`, values in −1..1) for gated
/// attention (DESIGN.md §4.1).
fn gated_layer() -> impl Strategy<Value = (Layer, Array2<f32>)> {
    ordinary().prop_flat_map(|layer| {
        let d = layer.x.ncols();
        let w = prop::collection::vec(-1.0f32..1.0, d * d)
            .prop_map(move |v| Array2::from_shape_vec((d, d), v).expect("d x d"));
        (Just(layer), w)
    })
}

/// Runs gated attention over `layer` with output gate `w_og` and the bias `bias` on every
/// channel (none when `None`).
fn run_gated(layer: &Layer, w_og: &Array2<f32>, bias: Option<f32>, causal: bool) -> Stages {
    let d = layer.x.ncols();
    let weights = layer
        .weights
        .clone()
        .with_output_gate(w_og.clone(), bias.map(|b| ndarray::Array1::from_elem(d, b)))
        .expect("a d x d gate");
    run(
        layer.x.view(),
        &weights,
        layer.heads,
        causal,
        &Mechanism::GatedAttention,
    )
    .expect("gated attention runs")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Gated attention's maps are standard attention's, bit for bit: rows sum to 1 under
    /// either mask and the mask's cells are 0 (the gate scales values, never weights); the gate
    /// is within 0..1 everywhere, strictly where its logit is moderate; each gated channel is
    /// A·V's times its gate; and the gate's table is each head's mean over its channels.
    #[test]
    fn gated_attentions_maps_are_standard_and_its_gate_is_within_zero_and_one(
        (layer, w_og) in gated_layer(),
        causal: bool,
    ) {
        let gated = run_gated(&layer, &w_og, None, causal);
        let standard = run(layer.x.view(), &layer.weights, layer.heads, causal, &Mechanism::Standard)
            .unwrap();
        let Stages::GatedAttention { a, gate, gated: heads_out, head_dim, .. } = gated else {
            unreachable!()
        };
        let Stages::Attention { a: a_standard, .. } = standard else { unreachable!() };
        prop_assert_eq!(&a, &a_standard);
        for map in a.axis_iter(Axis(0)) {
            for (i, row) in map.axis_iter(Axis(0)).enumerate() {
                prop_assert!((row.sum() - 1.0).abs() < 1e-5);
                if causal {
                    prop_assert!(row.iter().skip(i + 1).all(|&p| p == 0.0));
                }
            }
        }
        let logits = layer.x.dot(&w_og.t());
        for (g, z) in gate.iter().zip(logits.iter()) {
            prop_assert!((0.0..=1.0).contains(g), "gate {g}");
            if z.abs() < 15.0 {
                prop_assert!(*g > 0.0 && *g < 1.0, "gate {g} at logit {z}");
            }
        }
        // A·V of every head, from the standard maps, gated channel by channel.
        let v = layer.x.dot(&layer.weights.w_v.t());
        for h in 0..layer.heads {
            let cols = h * head_dim..(h + 1) * head_dim;
            let av = a.index_axis(Axis(0), h).dot(&v.slice(ndarray::s![.., cols.clone()]));
            let g = gate.slice(ndarray::s![.., cols.clone()]);
            let got = heads_out.slice(ndarray::s![.., cols]);
            for ((o, a_v), g) in got.iter().zip(av.iter()).zip(g.iter()) {
                prop_assert!((o - a_v * g).abs() <= 1e-4 * (1.0 + a_v.abs()), "{o} vs {a_v}·{g}");
            }
        }
        let table = diffattn::engine::gated_attention::mean_table(gate.view(), layer.heads, head_dim);
        for t in 0..table.nrows() {
            for h in 0..layer.heads {
                let mean = gate.row(t).iter().skip(h * head_dim).take(head_dim).sum::<f32>()
                    / head_dim as f32;
                prop_assert!((table[[t, h]] - mean).abs() < 1e-6);
            }
        }
    }

    /// W_og = 0 halves every head's output (σ(0) = 1/2), so the layer output is half standard
    /// attention's; a large positive bias (σ = 1) gives standard attention's output exactly and a
    /// large negative one (σ = 0) silences every head.
    #[test]
    fn gated_attention_halves_opens_and_closes_with_its_gate(
        (layer, w_og) in gated_layer(),
        causal: bool,
    ) {
        let standard = run(layer.x.view(), &layer.weights, layer.heads, causal, &Mechanism::Standard)
            .unwrap();
        let zero = Array2::zeros(w_og.dim());
        let half = run_gated(&layer, &zero, None, causal);
        for (h, s) in half.output().iter().zip(standard.output().iter()) {
            prop_assert!((h - 0.5 * s).abs() <= 1e-5 * (1.0 + s.abs()), "{h} vs {s} / 2");
        }
        let open = run_gated(&layer, &w_og, Some(1.0e4), causal);
        prop_assert_eq!(open.output(), standard.output());
        let closed = run_gated(&layer, &w_og, Some(-1.0e4), causal);
        prop_assert!(closed.output().iter().all(|&o| o == 0.0));
    }
}
