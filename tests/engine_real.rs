//! Real layers in the engine (DESIGN.md §7): hand-derived cases and the identities that tie
//! rope, grouped-query attention, biases, the two pairings, V2 and hierarchical attention to the
//! mechanisms they extend; and spec errors that name the new fields.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{safetensors_file, stages_metadata};
use diffattn::spec::{parse_spec, parse_spec_bytes, stages_json, SpecError};
use serde_json::{json, Value};

/// Seeded numbers in (-1, 1), so the specs need no random crate.
fn numbers(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn matrix(seed: u64, rows: usize, cols: usize) -> Value {
    let v = numbers(seed, rows * cols);
    json!(v.chunks(cols).map(|r| r.to_vec()).collect::<Vec<_>>())
}

fn run(spec: &Value) -> Value {
    let stages = parse_spec(&spec.to_string())
        .and_then(|s| s.run())
        .unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(stages_json(&stages)).expect("JSON")
}

fn error(spec: &Value) -> SpecError {
    match parse_spec(&spec.to_string()).and_then(|s| s.run()) {
        Ok(_) => panic!("accepted {spec}"),
        Err(e) => e,
    }
}

fn max_difference(a: &Value, b: &Value) -> f64 {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .map(|(p, q)| max_difference(p, q))
            .fold(0.0, f64::max),
        (Value::Number(x), Value::Number(y)) => (x.as_f64().unwrap() - y.as_f64().unwrap()).abs(),
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => x
            .iter()
            .map(|(k, v)| max_difference(v, &y[k]))
            .fold(0.0, f64::max),
        _ => f64::INFINITY,
    }
}

/// A standard spec of `tokens` tokens, width `d`, `heads` heads over `kv_heads` key heads.
fn standard(tokens: usize, d: usize, heads: usize, kv_heads: usize) -> Value {
    let dh = d / heads;
    json!({"mechanism": "standard", "heads": heads, "kv_heads": kv_heads, "causal": true,
           "x": matrix(1, tokens, d), "w_q": matrix(2, heads * dh, d),
           "w_k": matrix(3, kv_heads * dh, d), "w_v": matrix(4, kv_heads * dh, d),
           "w_o": matrix(5, d, heads * dh)})
}

#[test]
fn rope_rotates_queries_and_keys_by_their_positions() {
    // d = head_dim = 2, all weights I, x_i = (1, 0). rotary_dim 2 has one frequency, θ^0 = 1,
    // so q_i = k_i = (cos i, sin i) and score(i, j) = cos(i - j) / sqrt(2):
    // row 0 = softmax([1, cos 1] / sqrt 2), A[0][1] = 1 / (1 + e^((1 - cos 1) / sqrt 2)) = 0.41909.
    let eye = json!([[1.0, 0.0], [0.0, 1.0]]);
    let spec = json!({"mechanism": "standard", "heads": 1, "causal": false,
        "x": [[1.0, 0.0], [1.0, 0.0]], "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye,
        "rope": {"layout": "half", "theta": 123.0}});
    let a = &run(&spec)["heads"][0]["a"];
    let want = 1.0 / (1.0 + ((1.0 - 1f64.cos()) / 2f64.sqrt()).exp());
    assert!((a[0][1].as_f64().unwrap() - want).abs() < 1e-6, "{a}");
    assert!((a[1][0].as_f64().unwrap() - want).abs() < 1e-6, "{a}");
}

#[test]
fn rope_sees_only_relative_positions() {
    let mut spec = standard(6, 8, 2, 2);
    spec["rope"] = json!({"layout": "interleaved", "theta": 10.0});
    let at_zero = run(&spec);
    spec["rope"]["positions"] = json!([100, 101, 102, 103, 104, 105]);
    assert!(max_difference(&run(&spec)["heads"], &at_zero["heads"]) < 1e-5);
    spec["rope"]["positions"] = json!([5, 1, 0, 2, 4, 3]);
    assert!(max_difference(&run(&spec)["heads"], &at_zero["heads"]) > 1e-3);
}

#[test]
fn grouped_query_attention_is_multi_head_with_repeated_keys_and_values() {
    // kv_heads 1 of 2 heads: both query heads use key/value head 0, as a spec whose w_k and w_v
    // repeat that head's rows does with kv_heads 2.
    let grouped = standard(5, 8, 2, 1);
    let mut full = grouped.clone();
    full["kv_heads"] = json!(2);
    for w in ["w_k", "w_v"] {
        let rows = grouped[w].as_array().unwrap();
        full[w] = json!(rows.iter().chain(rows).cloned().collect::<Vec<_>>());
    }
    assert!(max_difference(&run(&grouped), &run(&full)) < 1e-6);
}

#[test]
fn a_value_bias_moves_every_output_row_by_w_o_b_v() {
    // Rows of A sum to 1, so A·(V + 1·b_vᵀ) = A·V + 1·b_vᵀ: the output moves by W_o·b_v + b_o.
    let spec = standard(4, 4, 2, 2);
    let mut biased = spec.clone();
    biased["b_v"] = json!([1.0, 0.0, 0.0, 0.0]);
    biased["b_o"] = json!([0.0, 0.0, 0.0, 0.5]);
    let (plain, moved) = (run(&spec), run(&biased));
    let w_o = &spec["w_o"];
    for i in 0..4 {
        for c in 0..4 {
            let shift =
                moved["output"][i][c].as_f64().unwrap() - plain["output"][i][c].as_f64().unwrap();
            let want = w_o[c][0].as_f64().unwrap() + if c == 3 { 0.5 } else { 0.0 };
            assert!(
                (shift - want).abs() < 1e-5,
                "row {i}, column {c}: {shift} vs {want}"
            );
        }
    }
}

fn diff_spec(pairing: &str) -> Value {
    // 2 diff heads of width 2 without grouping: 4 query heads, 4 key heads, d = 8.
    json!({"mechanism": "diff_transformer", "heads": 2, "causal": true, "pairing": pairing,
        "x": matrix(11, 6, 8), "w_q": matrix(12, 8, 8), "w_k": matrix(13, 8, 8),
        "w_v": matrix(14, 8, 8), "w_o": matrix(15, 8, 8), "depth": 1,
        "lambda_q1": [0.1, 0.2], "lambda_k1": [0.3, -0.1], "lambda_q2": [0.2, 0.1], "lambda_k2": [0.1, 0.4]})
}

#[test]
fn the_two_pairings_are_a_permutation_of_heads_apart() {
    // adjacent diff head h takes blocks 2h, 2h+1 of width 2 in w_q, w_k and w_v; halves takes
    // blocks h and h + 2. Moving halves' blocks [0, 1, 2, 3] to adjacent order [0, 2, 1, 3]
    // makes the same layer.
    let halves = diff_spec("halves");
    let mut adjacent = diff_spec("adjacent");
    for w in ["w_q", "w_k", "w_v"] {
        let rows = halves[w].as_array().unwrap();
        let order = [0, 1, 4, 5, 2, 3, 6, 7];
        adjacent[w] = json!(order.iter().map(|&r| rows[r].clone()).collect::<Vec<_>>());
    }
    assert!(max_difference(&run(&halves), &run(&adjacent)) < 1e-5);
    assert!(max_difference(&run(&halves), &run(&diff_spec("adjacent"))) > 1e-3);
}

#[test]
fn lambda_init_can_replace_depth() {
    let by_depth = run(&diff_spec("halves"));
    let mut spec = diff_spec("halves");
    spec.as_object_mut().unwrap().remove("depth");
    spec["lambda_init"] = json!(0.8 - 0.6 * (-0.3f64).exp());
    assert!(max_difference(&run(&spec), &by_depth) < 1e-6);
}

#[test]
fn v2_lambda_is_a_sigmoid_per_token_and_head() {
    // W_λ = 0 gives λ = σ(0) = 1/2 everywhere, so diff = A1 - A2 / 2.
    let spec = json!({"mechanism": "diff_transformer_v2", "heads": 2, "kv_heads": 1, "head_dim": 4,
        "causal": true, "x": matrix(21, 5, 8), "w_q": matrix(22, 16, 8), "w_k": matrix(23, 4, 8),
        "w_v": matrix(24, 4, 8), "w_o": matrix(25, 8, 8), "w_lambda": vec![vec![0.0; 8]; 2]});
    let out = run(&spec);
    assert_eq!(out["lambda"], json!(vec![vec![0.5, 0.5]; 5]));
    let head = &out["heads"][1];
    for i in 0..5 {
        for j in 0..5 {
            let (a1, a2, diff) = (
                head["a1"][i][j].as_f64().unwrap(),
                head["a2"][i][j].as_f64().unwrap(),
                head["diff"][i][j].as_f64().unwrap(),
            );
            assert!((diff - (a1 - 0.5 * a2)).abs() < 1e-6);
        }
    }
}

#[test]
fn hierarchical_by_hand() {
    // One head of width 1, W = 1, x = (0, 1, 2), segments {0, 1} and {2}, no mask.
    // Row 0 scores 0 everywhere: 1/3 each on tokens 0, 1 and segment 1. Row 2 sees itself
    // (score 4) and segment 0's mean key 0.5 (score 1): s = e / (e^4 + e) = 1 / (e^3 + 1).
    let one = json!([[1.0]]);
    let spec = json!({"mechanism": "hierarchical", "heads": 1, "causal": false, "segment": 2,
        "x": [[0.0], [1.0], [2.0]], "w_q": one, "w_k": one, "w_v": one, "w_o": one});
    let head = &run(&spec)["heads"][0];
    let s = 1.0 / (1f64.exp().powi(3) + 1.0);
    let third = 1.0 / 3.0;
    let want_a = json!([
        [third, third, third],
        [0.0, 0.0, 0.0],
        [s / 2.0, s / 2.0, 1.0 - s]
    ]);
    for j in 0..3 {
        for i in [0, 2] {
            assert!(
                (head["a"][i][j].as_f64().unwrap() - want_a[i][j].as_f64().unwrap()).abs() < 1e-6,
                "a[{i}][{j}]"
            );
        }
    }
    assert!((head["segments"][2][0].as_f64().unwrap() - s).abs() < 1e-6);
    assert_eq!(head["segments"][2][1], json!(0.0));
    assert_eq!(head["local"][0][2], json!(0.0));
}

#[test]
fn hierarchical_is_standard_attention_at_segment_1_and_at_segment_l() {
    let mut spec = standard(7, 8, 2, 1);
    spec["rope"] = json!({"layout": "half", "theta": 10.0});
    let plain = run(&spec);
    spec["mechanism"] = json!("hierarchical");
    for size in [1, 7, 30] {
        spec["segment"] = json!(size);
        let got = run(&spec);
        assert!(
            max_difference(&got["output"], &plain["output"]) < 1e-5,
            "segment {size}"
        );
        for h in 0..2 {
            assert!(max_difference(&got["heads"][h]["a"], &plain["heads"][h]["a"]) < 1e-6);
        }
    }
}

#[test]
fn new_fields_name_themselves_when_wrong() {
    let cases = [
        ("kv_heads", json!(3), "kv_heads", "a divisor of heads 2"),
        ("w_k", matrix(3, 8, 8), "w_k", "key heads 1 x head_dim 4"),
        ("b_q", json!([1.0]), "b_q", "8 values"),
        ("head_dim", json!(0), "head_dim", "positive"),
        (
            "rope",
            json!({"layout": "spiral", "theta": 1.0}),
            "rope.layout",
            "\"half\" or \"interleaved\"",
        ),
        (
            "rope",
            json!({"layout": "half"}),
            "rope",
            "exactly one of theta and inv_freq",
        ),
        (
            "rope",
            json!({"layout": "half", "theta": -1.0}),
            "rope.theta",
            "positive",
        ),
        (
            "rope",
            json!({"layout": "half", "theta": 1.0, "rotary_dim": 3}),
            "rope.rotary_dim",
            "even",
        ),
        (
            "rope",
            json!({"layout": "half", "inv_freq": [1.0]}),
            "rope.inv_freq",
            "2 values",
        ),
        (
            "rope",
            json!({"layout": "half", "theta": 1.0, "positions": [0, 1]}),
            "rope.positions",
            "4 integers",
        ),
        (
            "rope",
            json!({"layout": "half", "theta": 1.0, "positions": [0, 1, 2, -3]}),
            "rope.positions[3]",
            ">= 0",
        ),
        ("tokens", json!(["a"]), "tokens", "4 labels"),
        (
            "pairing",
            json!("halves"),
            "pairing",
            "only diff_transformer",
        ),
        ("mechanism", json!("hierarchical"), "segment", "missing"),
        (
            "mechanism",
            json!("diff_transformer_v2"),
            "w_q",
            "query heads 4",
        ),
    ];
    for (key, value, field, words) in cases {
        let mut spec = standard(4, 8, 2, 1);
        spec[key] = value;
        let e = error(&spec);
        assert!(
            e.field == field && e.message.contains(words),
            "{field}: got {e}"
        );
    }
    let mut spec = diff_spec("halves");
    spec["lambda_init"] = json!(0.3);
    let e = error(&spec);
    assert!(
        e.field == "depth" && e.message.contains("exactly one of depth and lambda_init"),
        "{e}"
    );
    let mut spec = standard(4, 8, 2, 2);
    spec["mechanism"] = json!("input_diff");
    spec["rope"] = json!({"layout": "half", "theta": 1.0});
    assert_eq!(error(&spec).field, "rope");
}

#[test]
fn the_binary_form_reads_like_the_json_and_names_its_faults() {
    let spec = standard(3, 4, 2, 2);
    let mut rest = spec.clone();
    let mut tensors = Vec::new();
    for name in ["x", "w_q", "w_k", "w_v", "w_o"] {
        let rows = rest.as_object_mut().unwrap().remove(name).unwrap();
        let rows: Vec<Vec<f64>> = serde_json::from_value(rows).unwrap();
        tensors.push((
            name,
            vec![rows.len(), rows[0].len()],
            rows.concat().iter().map(|&v| v as f32).collect(),
        ));
    }
    let meta = stages_metadata;
    let binary = parse_spec_bytes(&safetensors_file(&tensors, meta(&rest)))
        .and_then(|s| s.run())
        .expect("runs");
    let text = parse_spec(&spec.to_string())
        .and_then(|s| s.run())
        .expect("runs");
    assert_eq!(binary, text);

    let fails = |bytes: Vec<u8>| parse_spec_bytes(&bytes).expect_err("an error");
    let e = fails(safetensors_file(
        &tensors,
        json!({"format": "other", "version": "1", "spec": "{}"}),
    ));
    assert_eq!(e.field, "__metadata__.format");
    let mut doubled = rest.clone();
    doubled["x"] = spec["x"].clone();
    assert_eq!(fails(safetensors_file(&tensors, meta(&doubled))).field, "x");
    let mut extra = tensors.clone();
    extra.push(("gate", vec![2], vec![0.0, 0.0]));
    assert_eq!(fails(safetensors_file(&extra, meta(&rest))).field, "gate");
    let mut bytes = safetensors_file(&tensors, meta(&rest));
    bytes.truncate(bytes.len() - 4);
    assert!(fails(bytes).message.contains("do not fit"));
}
