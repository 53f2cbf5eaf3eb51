//! Small cases with the expected values derived by hand in the comments.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::diff_transformer::{
    lambda, lambda_init, rms_norm_rows, DiffTransformerParams,
};
use diffattn::engine::shift_diff::{
    shift_diff_maps, Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill,
};
use diffattn::engine::{run, EngineError, Mask, Mechanism, Stages, Weights};
use ndarray::{array, Array2, Array3};

fn identity_weights(d: usize) -> Weights {
    let eye = Array2::<f32>::eye(d);
    Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap()
}

fn close(got: f32, want: f32) -> bool {
    (got - want).abs() < 1e-5
}

fn attention_maps(stages: Stages) -> Array3<f32> {
    match stages {
        Stages::Attention { a, .. } => a,
        other => panic!("expected plain attention stages, got {other:?}"),
    }
}

#[test]
fn standard_attention_of_two_orthogonal_tokens() {
    // x = I (two tokens, d = 2), all weights I, one head: Q = K = V = I.
    // Scores = I / sqrt(2): row 0 is [0.70711, 0].
    // softmax: e^0.70711 = 2.02811, so A[0] = [2.02811 / 3.02811, 1 / 3.02811] = [0.66976, 0.33024].
    let x = Array2::<f32>::eye(2);
    let a = attention_maps(
        run(
            x.view(),
            &identity_weights(2),
            1,
            false,
            &Mechanism::Standard,
        )
        .unwrap(),
    );
    assert!(
        close(a[[0, 0, 0]], 0.66976) && close(a[[0, 0, 1]], 0.33024),
        "{a:?}"
    );
    assert!(close(a[[0, 1, 1]], 0.66976) && close(a[[0, 1, 0]], 0.33024));
    // Causal: token 0 sees only itself; token 1 is unchanged.
    let a = attention_maps(
        run(
            x.view(),
            &identity_weights(2),
            1,
            true,
            &Mechanism::Standard,
        )
        .unwrap(),
    );
    assert_eq!((a[[0, 0, 0]], a[[0, 0, 1]]), (1.0, 0.0));
    assert!(close(a[[0, 1, 1]], 0.66976));
}

#[test]
fn output_mixes_values_with_the_map() {
    // Same layer: O = A·V·W_oᵀ = A (V = W_o = I), so the output equals the map.
    let x = Array2::<f32>::eye(2);
    let stages = run(
        x.view(),
        &identity_weights(2),
        1,
        false,
        &Mechanism::Standard,
    )
    .unwrap();
    let out = stages.output();
    assert!(close(out[[0, 0]], 0.66976) && close(out[[0, 1]], 0.33024));
}

fn one_row_params(shift: i64, difference: Difference, fill: ShiftFill) -> ShiftDiffParams {
    ShiftDiffParams {
        shift,
        difference,
        fill,
        renormalize: Renormalize::None,
        gate: Gate::uniform(1, 0.0, 0.0, 0.0),
    }
}

#[test]
fn symmetric_difference_by_hand() {
    // A = [0.5, 0.3, 0.2], k = 1 circular: shift_{+1}(A) = [0.2, 0.5, 0.3] and
    // shift_{-1}(A) = [0.3, 0.2, 0.5], so D = shift_{-1} - shift_{+1} = [0.1, -0.3, 0.2].
    // The gate is sigmoid(0) = 0.5, so A' = A + D/2 = [0.55, 0.15, 0.3].
    let a = array![[[0.5f32, 0.3, 0.2]]];
    let m = shift_diff_maps(
        &a,
        &one_row_params(1, Difference::Symmetric, ShiftFill::Circular),
        Mask::FULL,
    )
    .unwrap();
    let got: Vec<f32> = m.d.iter().copied().collect();
    for (g, w) in got.iter().zip([0.1, -0.3, 0.2]) {
        assert!(close(*g, w), "D = {got:?}");
    }
    let fused: Vec<f32> = m.fused.iter().copied().collect();
    for (g, w) in fused.iter().zip([0.55, 0.15, 0.3]) {
        assert!(close(*g, w), "A' = {fused:?}");
    }
}

#[test]
fn zero_fill_loses_the_mass_it_pushes_out() {
    // A = [0.5, 0.3, 0.2], k = 2 with zero fill: shift(A) = [0, 0, 0.5]; the 0.3 and 0.2 fall
    // off the end. D = A - shift(A) = [0.5, 0.3, -0.3], which no longer sums to 0.
    let a = array![[[0.5f32, 0.3, 0.2]]];
    let m = shift_diff_maps(
        &a,
        &one_row_params(2, Difference::Single, ShiftFill::Zero),
        Mask::FULL,
    )
    .unwrap();
    assert_eq!(m.shifted, array![[[0.0f32, 0.0, 0.5]]]);
    let d: Vec<f32> = m.d.iter().copied().collect();
    assert!(close(d[0], 0.5) && close(d[1], 0.3) && close(d[2], -0.3));
}

#[test]
fn gate_follows_its_three_scalars() {
    // alpha = 2, beta = 0, gamma = -1: G = sigmoid(2·A - 1). At A = 0.5 that is sigmoid(0) = 0.5;
    // at A = 0 it is sigmoid(-1) = 0.26894.
    let a = array![[[0.5f32, 0.0, 0.5]]];
    let mut p = one_row_params(1, Difference::Single, ShiftFill::Circular);
    p.gate = Gate::uniform(1, 2.0, 0.0, -1.0);
    let m = shift_diff_maps(&a, &p, Mask::FULL).unwrap();
    assert!(close(m.g[[0, 0, 0]], 0.5) && close(m.g[[0, 0, 1]], 0.26894));
}

#[test]
fn the_mask_holds_in_the_shifted_maps_and_the_softmax() {
    // Causal, 2 x 2: A = [[1, 0], [0.5, 0.5]]. k = 1 circular moves row 0's mass onto key 1,
    // which the mask forbids, so it is dropped: shift(A) row 0 = [0, 0] (DESIGN.md §2).
    // Row 1 = [0.5, 0.5] rotated is [0.5, 0.5], all allowed. D row 0 = [1, 0] - [0, 0] = [1, 0].
    // With alpha = beta = gamma = 0, G = 0.5, so A' row 0 = [1 + 0.5, 0] = [1.5, 0]; the
    // softmax over the one allowed key then gives exactly [1, 0].
    let a = array![[[1.0f32, 0.0], [0.5, 0.5]]];
    let mut p = one_row_params(1, Difference::Single, ShiftFill::Circular);
    let m = shift_diff_maps(&a, &p, Mask::causal(true)).unwrap();
    assert_eq!(m.shifted, array![[[0.0f32, 0.0], [0.5, 0.5]]]);
    assert_eq!(m.d, array![[[1.0f32, 0.0], [0.0, 0.0]]]);
    assert_eq!(m.fused, array![[[1.5f32, 0.0], [0.5, 0.5]]]);
    p.renormalize = Renormalize::Softmax;
    let m = shift_diff_maps(&a, &p, Mask::causal(true)).unwrap();
    assert_eq!((m.fused[[0, 0, 0]], m.fused[[0, 0, 1]]), (1.0, 0.0));
}

#[test]
fn lambda_by_hand() {
    // depth 0: lambda_init = 0.8 - 0.6 = 0.2. λq1·λk1 = 1·0.5 + 1·0.5 = 1 and λq2·λk2 = 0, so
    // lambda = e^1 - e^0 + 0.2 = 2.71828 - 1 + 0.2 = 1.91828.
    let p = DiffTransformerParams {
        depth: 0,
        lambda_q1: vec![1.0, 1.0],
        lambda_k1: vec![0.5, 0.5],
        lambda_q2: vec![0.0, 3.0],
        lambda_k2: vec![7.0, 0.0],
        subln: vec![1.0; 4],
        ..Default::default()
    };
    assert!(close(lambda_init(0), 0.2));
    assert!(close(lambda(&p), 1.91828));
    // depth 5: 0.8 - 0.6·e^-1.5 = 0.8 - 0.6·0.22313 = 0.66612.
    assert!(close(lambda_init(5), 0.66612));
}

#[test]
fn rms_norm_by_hand() {
    // x = [3, 4]: mean(x²) = 12.5, rms = sqrt(12.5 + 1e-5) = 3.53553, so x/rms = [0.84853,
    // 1.13137]; a weight of [1, 2] doubles the second channel.
    let y = rms_norm_rows(
        array![[3.0f32, 4.0]].view(),
        array![1.0f32, 2.0].view(),
        1e-5,
    );
    assert!(
        close(y[[0, 0]], 0.84853) && close(y[[0, 1]], 2.26274),
        "{y:?}"
    );
    // A zero row stays zero rather than dividing by sqrt(eps).
    let z = rms_norm_rows(
        array![[0.0f32, 0.0]].view(),
        array![1.0f32, 1.0].view(),
        1e-5,
    );
    assert_eq!(z, array![[0.0f32, 0.0]]);
}

#[test]
fn diff_transformer_with_equal_maps_scales_a1_by_one_minus_lambda() {
    // With W = I, d = 4 and one diff head: Q1 = K1 = x[:, 0..2] and Q2 = K2 = x[:, 2..4]. If the
    // two halves of every token are equal, A1 = A2, and lambda = e^0 - e^0 + 0.2 = 0.2 at
    // depth 0, so A1 - lambda·A2 = 0.8·A1.
    let x = array![
        [1.0f32, 0.0, 1.0, 0.0],
        [0.0, 1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0, 1.0]
    ];
    let p = DiffTransformerParams {
        depth: 0,
        lambda_q1: vec![0.0; 2],
        lambda_k1: vec![0.0; 2],
        lambda_q2: vec![0.0; 2],
        lambda_k2: vec![0.0; 2],
        subln: vec![1.0; 4],
        ..Default::default()
    };
    let stages = run(
        x.view(),
        &identity_weights(4),
        1,
        false,
        &Mechanism::DiffTransformer(p),
    )
    .unwrap();
    let Stages::DiffTransformer { maps, .. } = stages else {
        panic!("wrong stages")
    };
    assert!(close(maps.lambda, 0.2));
    assert_eq!(maps.a1, maps.a2);
    for (d, a) in maps.diff.iter().zip(maps.a1.iter()) {
        assert!(close(*d, 0.8 * a));
    }
}

#[test]
fn input_difference_of_one_token_has_no_keys_and_zero_output() {
    let x = array![[1.0f32, 2.0]];
    let stages = run(
        x.view(),
        &identity_weights(2),
        1,
        false,
        &Mechanism::InputDiff,
    )
    .unwrap();
    assert_eq!(stages.final_maps().dim(), (1, 1, 0));
    assert_eq!(stages.output(), &array![[0.0f32, 0.0]]);
}

#[test]
fn input_difference_keys_are_steps() {
    // x = [[0, 0], [1, 0], [1, 1]]: the steps are Δ = [[1, 0], [0, 1]]. Query 2 is [1, 1] and
    // scores both steps 1/sqrt(2): uniform [0.5, 0.5]. Causal query 1 sees only the step into
    // token 1, and causal query 0 sees nothing: a zero row.
    let x = array![[0.0f32, 0.0], [1.0, 0.0], [1.0, 1.0]];
    let a = attention_maps(
        run(
            x.view(),
            &identity_weights(2),
            1,
            true,
            &Mechanism::InputDiff,
        )
        .unwrap(),
    );
    assert_eq!(a.dim(), (1, 3, 2));
    assert_eq!((a[[0, 0, 0]], a[[0, 0, 1]]), (0.0, 0.0));
    assert_eq!((a[[0, 1, 0]], a[[0, 1, 1]]), (1.0, 0.0));
    assert!(close(a[[0, 2, 0]], 0.5) && close(a[[0, 2, 1]], 0.5));
}

#[test]
fn cosine_attention_ignores_length_and_zero_vectors_score_zero() {
    // Tokens [2, 0], [5, 0] and [0, 0]: the first two point the same way (cosine 1), the third
    // is zero (cosine 0). With tau = ln 4, query 0's scores are [ln 4, ln 4, 0], so its row is
    // [4, 4, 1] / 9.
    let x = array![[2.0f32, 0.0], [5.0, 0.0], [0.0, 0.0]];
    let tau = 4.0f32.ln();
    let a = attention_maps(
        run(
            x.view(),
            &identity_weights(2),
            1,
            false,
            &Mechanism::Cosine { tau },
        )
        .unwrap(),
    );
    assert!(close(a[[0, 0, 0]], 4.0 / 9.0) && close(a[[0, 0, 2]], 1.0 / 9.0));
    // The zero query scores every key 0: uniform.
    assert!(close(a[[0, 2, 0]], 1.0 / 3.0));
}

#[test]
fn local_attention_radius_zero_is_the_identity_and_a_wide_radius_is_standard() {
    let x = array![[1.0f32, 0.5], [0.2, 1.0], [0.3, 0.3], [1.0, 1.0]];
    let w = identity_weights(2);
    let a0 = attention_maps(run(x.view(), &w, 2, false, &Mechanism::Local { window: 0 }).unwrap());
    for h in 0..2 {
        assert_eq!(a0.index_axis(ndarray::Axis(0), h), Array2::<f32>::eye(4));
    }
    let wide = run(x.view(), &w, 2, true, &Mechanism::Local { window: 3 }).unwrap();
    let full = run(x.view(), &w, 2, true, &Mechanism::Standard).unwrap();
    assert_eq!(wide, full);
}

#[test]
fn bad_sizes_are_errors_that_name_the_field() {
    let x = Array2::<f32>::zeros((3, 4));
    let w = identity_weights(4);
    assert!(matches!(
        run(x.view(), &w, 3, false, &Mechanism::Standard),
        Err(EngineError::HeadsDoNotDivide {
            heads: 3,
            width: 4,
            ..
        })
    ));
    assert_eq!(
        run(x.view(), &w, 0, false, &Mechanism::Standard),
        Err(EngineError::ZeroHeads)
    );
    let narrow = Array2::<f32>::zeros((3, 5));
    let err = run(narrow.view(), &w, 1, false, &Mechanism::Standard).unwrap_err();
    assert!(err.to_string().starts_with("x:"), "{err}");
    let gate = ShiftDiffParams {
        gate: Gate::uniform(1, 0.0, 0.0, 0.0),
        ..one_row_params(1, Difference::Single, ShiftFill::Circular)
    };
    let err = run(x.view(), &w, 2, false, &Mechanism::ShiftDiff(gate)).unwrap_err();
    assert!(err.to_string().starts_with("gate.alpha:"), "{err}");
    let square = Weights::new(
        Array2::eye(4),
        Array2::eye(3),
        Array2::eye(4),
        Array2::eye(4),
    );
    assert!(square.unwrap_err().to_string().starts_with("w_k:"));
}

/// `x = [[s, 0, 0, 0], [0, 0, 0, 0]]` with `W = I` and one diff head of width `d_h = 2`:
/// `Q1 = K1 = x[:, 0..2]`, `Q2 = K2 = x[:, 2..4] = 0`. With `s² = √2·ln 3` the first row of
/// `A1`'s scores is `[s²/√2, 0] = [ln 3, 0]` at `T = 1`.
fn tempered(temperature: f32) -> diffattn::engine::diff_transformer::DiffTransformerMaps {
    let s = (2.0f32.sqrt() * 3.0f32.ln()).sqrt();
    let x = array![[s, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]];
    let p = DiffTransformerParams {
        lambda_q1: vec![0.0; 2],
        lambda_k1: vec![0.0; 2],
        lambda_q2: vec![0.0; 2],
        lambda_k2: vec![0.0; 2],
        subln: vec![1.0; 4],
        temperature,
        ..Default::default()
    };
    let stages = run(
        x.view(),
        &identity_weights(4),
        1,
        false,
        &Mechanism::DiffTransformer(p),
    )
    .unwrap();
    let Stages::DiffTransformer { maps, .. } = stages else {
        panic!("wrong stages")
    };
    maps
}

#[test]
fn the_temperature_divides_both_maps_scores_by_hand() {
    // T = 1: softmax([ln 3, 0]) = [3, 1] / 4. T = 2: softmax([ln 3 / 2, 0]) = [√3, 1] / (√3 + 1)
    // = [0.63397, 0.36603]. T = 1/2: softmax([2 ln 3, 0]) = [9, 1] / 10. The second row (a zero
    // query) and A2 (zero queries and keys) score 0 everywhere: [1/2, 1/2] at any T. λ = e^0 −
    // e^0 + 0.2 = 0.2, so A1 − λ·A2 = A1 − 0.1.
    for (t, first) in [(1.0f32, 0.75f32), (2.0, 0.63397), (0.5, 0.9)] {
        let m = tempered(t);
        assert!(
            close(m.a1[[0, 0, 0]], first),
            "T = {t}: {}",
            m.a1[[0, 0, 0]]
        );
        assert!(close(m.a1[[0, 0, 1]], 1.0 - first), "T = {t}");
        assert_eq!(m.a1.index_axis(ndarray::Axis(1), 1), array![[0.5f32, 0.5]]);
        assert_eq!(m.a2, array![[[0.5f32, 0.5], [0.5, 0.5]]]);
        assert!(close(m.diff[[0, 0, 0]], first - 0.1), "T = {t}");
    }
    // T = 1 is the paper's maps bit for bit: the scale 1/√d_h over 1 is 1/√d_h.
    let paper = DiffTransformerParams::default();
    assert_eq!(paper.temperature, 1.0);
    assert_eq!(
        (1.0f32 / 2.0f32.sqrt() / 1.0).to_bits(),
        (1.0f32 / 2.0f32.sqrt()).to_bits()
    );
}

#[test]
fn a_temperature_that_is_not_positive_and_finite_is_refused_by_name() {
    for t in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
        let x = array![[1.0f32, 0.0, 0.0, 0.0]];
        let p = DiffTransformerParams {
            lambda_q1: vec![0.0; 2],
            lambda_k1: vec![0.0; 2],
            lambda_q2: vec![0.0; 2],
            lambda_k2: vec![0.0; 2],
            subln: vec![1.0; 4],
            temperature: t,
            ..Default::default()
        };
        let err = run(
            x.view(),
            &identity_weights(4),
            1,
            false,
            &Mechanism::DiffTransformer(p),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                EngineError::Shape {
                    field: "temperature",
                    ..
                }
            ),
            "T = {t}: {err:?}"
        );
    }
}

/// The identity layer of width 2 with gated attention's output gate `W_og` (and `b_og`).
fn gated_weights(w_og: Array2<f32>, b_og: Option<[f32; 2]>) -> Weights {
    identity_weights(2)
        .with_output_gate(w_og, b_og.map(|b| ndarray::Array1::from(b.to_vec())))
        .unwrap()
}

/// The gate, the gated heads and the output of a gated attention run.
fn gated_stages(stages: Stages) -> (Array3<f32>, Array2<f32>, Array2<f32>, Array2<f32>) {
    match stages {
        Stages::GatedAttention {
            a,
            gate,
            gated,
            output,
            ..
        } => (a, gate, gated, output),
        other => panic!("expected gated attention stages, got {other:?}"),
    }
}

#[test]
fn gated_attention_with_a_zero_gate_halves_each_head() {
    // x = I, all weights I, one head: A = [[0.66976, 0.33024], [0.33024, 0.66976]] as in
    // standard_attention_of_two_orthogonal_tokens, A·V = A. W_og = 0: every logit is 0 and
    // σ(0) = 1/2, so the gated head and the output (W_o = I) are A / 2.
    let x = Array2::<f32>::eye(2);
    let w = gated_weights(Array2::zeros((2, 2)), None);
    let (a, gate, gated, output) =
        gated_stages(run(x.view(), &w, 1, false, &Mechanism::GatedAttention).unwrap());
    assert!(close(a[[0, 0, 0]], 0.66976) && close(a[[0, 0, 1]], 0.33024));
    assert!(gate.iter().all(|&g| g == 0.5), "{gate:?}");
    for (got, want) in [
        (gated[[0, 0]], 0.33488),
        (gated[[0, 1]], 0.16512),
        (gated[[1, 0]], 0.16512),
        (gated[[1, 1]], 0.33488),
    ] {
        assert!(close(got, want), "{gated:?}");
    }
    assert_eq!(output, gated);
    // Causal: token 0 sees only itself, A[0] = [1, 0], so its output is V[0] / 2 = [0.5, 0].
    let (_, _, _, output) =
        gated_stages(run(x.view(), &w, 1, true, &Mechanism::GatedAttention).unwrap());
    assert_eq!((output[[0, 0]], output[[0, 1]]), (0.5, 0.0));
}

#[test]
fn gated_attention_gates_each_head_by_its_own_channels() {
    // x = I, weights I, two heads of one channel (d_h = 1, scale 1/√1 = 1).
    // Head 0 reads channel 0: q = k = v = [1, 0] for tokens 0, 1. Row 0 scores [1, 0]:
    //   A = [e/(e+1), 1/(e+1)] = [0.73106, 0.26894]; row 1 scores [0, 0]: [0.5, 0.5].
    //   A·V = [0.73106, 0.5].
    // Head 1 reads channel 1 (q = k = v = [0, 1]): A·V = [0.5, 0.73106].
    // W_og = diag(ln 3, −ln 3): token 0's logits [ln 3, 0] → gate [3/4, 1/2];
    //   token 1's logits [0, −ln 3] → gate [1/2, 1/4].
    // Gated (W_o = I: the output): token 0 [0.73106·3/4, 0.5·1/2] = [0.54829, 0.25],
    //   token 1 [0.5·1/2, 0.73106·1/4] = [0.25, 0.18277].
    let ln3 = 3f32.ln();
    let x = Array2::<f32>::eye(2);
    let w = gated_weights(array![[ln3, 0.0], [0.0, -ln3]], None);
    let (a, gate, gated, output) =
        gated_stages(run(x.view(), &w, 2, false, &Mechanism::GatedAttention).unwrap());
    assert!(close(a[[0, 0, 0]], 0.73106) && close(a[[1, 1, 1]], 0.73106));
    let want_gate = [[0.75, 0.5], [0.5, 0.25]];
    let want_out = [[0.54829, 0.25], [0.25, 0.18277]];
    for t in 0..2 {
        for c in 0..2 {
            assert!(close(gate[[t, c]], want_gate[t][c]), "{gate:?}");
            assert!(close(gated[[t, c]], want_out[t][c]), "{gated:?}");
            assert!(close(output[[t, c]], want_out[t][c]), "{output:?}");
        }
    }
    // With b_og = [−ln 3, ln 3]: token 0's logits [0, ln 3] → [1/2, 3/4], token 1's
    // [−ln 3, 0] → [1/4, 1/2]; output [0.73106/2, 0.5·3/4] = [0.36553, 0.375] and
    // [0.5/4, 0.73106/2] = [0.125, 0.36553].
    let w = gated_weights(array![[ln3, 0.0], [0.0, -ln3]], Some([-ln3, ln3]));
    let (_, _, _, output) =
        gated_stages(run(x.view(), &w, 2, false, &Mechanism::GatedAttention).unwrap());
    let want = [[0.36553, 0.375], [0.125, 0.36553]];
    for t in 0..2 {
        for c in 0..2 {
            assert!(close(output[[t, c]], want[t][c]), "{output:?}");
        }
    }
}

#[test]
fn gated_attention_without_its_output_gate_names_the_field() {
    let x = Array2::<f32>::eye(2);
    let e = run(
        x.view(),
        &identity_weights(2),
        1,
        false,
        &Mechanism::GatedAttention,
    )
    .unwrap_err();
    assert!(e.to_string().contains("w_output_gate"), "{e}");
    // A gate of the wrong height (3 rows for heads x head_dim = 2) is refused, naming it.
    let w = identity_weights(2)
        .with_output_gate(Array2::zeros((3, 2)), None)
        .unwrap();
    let e = run(x.view(), &w, 1, false, &Mechanism::GatedAttention).unwrap_err();
    assert!(e.to_string().contains("w_output_gate"), "{e}");
}
