//! DESIGN.md §7.9 on hand-derived cases: the query and key norms (Qwen3, OLMo 2, Gemma 3), the
//! scores' own scale (Gemma), the soft cap (Gemma 2), learned sinks (gpt-oss) and the relative
//! position bias (T5), and the spec errors that name them.
//! Captured layers of those models against transformers: tests/golden.rs.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::{MechanismKind, StageId};
use diffattn::explorer::{Explorer, SettingsPatch};
use diffattn::model::Model;
use diffattn::spec::{parse_spec, spec_json};
use serde_json::{json, Value};

/// Two tokens x = [1, 0] and [0, 2], one head of width 2, identity projections, no mask: the
/// products q·k are [[1, 0], [0, 4]].
fn spec(extra: Value) -> Value {
    let eye = json!([[1.0, 0.0], [0.0, 1.0]]);
    let mut s = json!({
        "mechanism": "standard", "heads": 1, "causal": false,
        "x": [[1.0, 0.0], [0.0, 2.0]],
        "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye,
    });
    for (k, v) in extra.as_object().expect("an object") {
        s[k] = v.clone();
    }
    s
}

/// Row 0 of the map.
fn row0(spec: &Value) -> [f64; 2] {
    let stages = parse_spec(&spec.to_string())
        .and_then(|s| s.run())
        .expect("runs");
    let a = stages.final_maps();
    [f64::from(a[[0, 0, 0]]), f64::from(a[[0, 0, 1]])]
}

/// softmax of a row of two scores, its first entry: 1 / (1 + e^(s1 − s0)).
fn first_of(s0: f64, s1: f64) -> f64 {
    1.0 / (1.0 + (s1 - s0).exp())
}

fn close(got: [f64; 2], first: f64) {
    assert!((got[0] - first).abs() < 1e-6, "{got:?} vs {first}");
    assert!((got[1] - (1.0 - first)).abs() < 1e-6, "{got:?}");
}

#[test]
fn the_default_scale_is_one_over_the_root_of_the_head_width() {
    // Row 0's scores: [1, 0] / sqrt(2).
    close(row0(&spec(json!({}))), first_of(1.0 / 2f64.sqrt(), 0.0));
    // Given as itself, the same bits.
    let explicit = spec(json!({ "scale": 1.0 / 2f32.sqrt() }));
    assert_eq!(row0(&explicit), row0(&spec(json!({}))));
}

#[test]
fn a_scale_multiplies_the_products() {
    close(row0(&spec(json!({ "scale": 1.0 }))), first_of(1.0, 0.0));
    close(row0(&spec(json!({ "scale": 3.0 }))), first_of(3.0, 0.0));
}

#[test]
fn the_soft_cap_bends_every_score_through_tanh() {
    // c·tanh(s / c) with s = 3·1 and c = 2: 2·tanh(1.5).
    let capped = spec(json!({ "scale": 3.0, "softcap": 2.0 }));
    close(row0(&capped), first_of(2.0 * 1.5f64.tanh(), 0.0));
    // A cap far above every score changes nothing that shows.
    let loose = row0(&spec(json!({ "scale": 3.0, "softcap": 1e6 })));
    close(loose, first_of(3.0, 0.0));
}

#[test]
fn a_query_norm_per_head_rescales_each_query_to_unit_mean_square() {
    // q_0 = [1, 0]: mean square 1/2, so q_0 → [√2, 0]·w; with w = [1, 3] still [√2, 0]. The
    // keys stay [1, 0] and [0, 2]: scores √2 and 0 (scale 1).
    let normed = spec(json!({ "scale": 1.0, "q_norm": [1.0, 3.0], "qk_norm_eps": 1e-12 }));
    close(row0(&normed), first_of(2f64.sqrt(), 0.0));
    // And the keys: k_1 = [0, 2] → [0, √2]·[1, 3] = [0, 3√2]; q_0 = [1, 0] unnormalised: scores
    // 1·√2 (k_0 = [√2, 0]) and 0.
    let keys = spec(json!({ "scale": 1.0, "k_norm": [1.0, 3.0], "qk_norm_eps": 1e-12 }));
    close(row0(&keys), first_of(2f64.sqrt(), 0.0));
}

#[test]
fn a_norm_over_the_whole_row_is_one_group() {
    // Two heads of width 1 (d_h = 1): a weight of 2 values is the whole row (OLMo 2), not a head.
    // Query row 0 = [1, 0] → [√2, 0]; head 0 scores √2·k: keys [1, 0] → 1, [0, 2] → 0.
    let s = spec(json!({ "heads": 2, "scale": 1.0, "q_norm": [1.0, 1.0], "qk_norm_eps": 1e-12 }));
    close(row0(&s), first_of(2f64.sqrt(), 0.0));
}

#[test]
fn a_sink_joins_each_rows_softmax_and_takes_its_share() {
    // Row 0's scores [1, 0] (scale 1) and a sink logit 0: e / (e + 1 + 1) and 1 / (e + 2); the
    // row sums to (e + 1) / (e + 2), the rest went to the sink.
    let e = 1f64.exp();
    let got = row0(&spec(json!({ "scale": 1.0, "sinks": [0.0] })));
    assert!((got[0] - e / (e + 2.0)).abs() < 1e-6, "{got:?}");
    assert!((got[1] - 1.0 / (e + 2.0)).abs() < 1e-6, "{got:?}");
    // A sink far below every score takes nothing that shows.
    close(
        row0(&spec(json!({ "scale": 1.0, "sinks": [-100.0] }))),
        first_of(1.0, 0.0),
    );
}

#[test]
fn a_relative_bias_adds_each_offsets_value_to_the_scores() {
    // Offsets j − i from −1 to 1: row 0 (i = 0) reads columns 1 (j = 0) and 2 (j = 1).
    // Scores [1, 0] (scale 1) + [0.5, 2] = [1.5, 2].
    let biased = spec(json!({ "scale": 1.0, "relative_bias": [[9.0, 0.5, 2.0]] }));
    close(row0(&biased), first_of(1.5, 2.0));
    // Row 1 (i = 1) reads columns 0 (j = 0, offset −1) and 1: scores [0, 4] + [9, 0.5].
    let stages = parse_spec(&biased.to_string())
        .and_then(|s| s.run())
        .unwrap();
    let a = stages.final_maps();
    let want = first_of(9.0, 4.5);
    assert!((f64::from(a[[0, 1, 0]]) - want).abs() < 1e-6);
}

#[test]
fn the_fields_are_written_back_when_a_spec_is_exported() {
    let s = spec(
        json!({ "scale": 0.7, "softcap": 5.0, "q_norm": [1.0, 2.0], "k_norm": [0.5, 1.5], "qk_norm_eps": 1e-5, "sinks": [0.3], "relative_bias": [[0.1, 0.2, 0.3]] }),
    );
    let parsed = parse_spec(&s.to_string()).expect("valid");
    let out = serde_json::to_value(spec_json(&parsed, None)).expect("JSON");
    for field in [
        "scale",
        "softcap",
        "q_norm",
        "k_norm",
        "qk_norm_eps",
        "sinks",
    ] {
        assert!(out.get(field).is_some(), "{field} is exported");
    }
    let again = parse_spec(&out.to_string()).expect("the export reads back");
    assert_eq!(again.run().unwrap(), parsed.run().unwrap());
}

#[test]
fn bad_fields_are_named() {
    let cases = [
        (
            json!({ "q_norm": [1.0, 1.0, 1.0] }),
            "q_norm: expected 2 values",
        ),
        (
            json!({ "qk_norm_eps": 1e-6 }),
            "qk_norm_eps: given without q_norm or k_norm",
        ),
        (json!({ "scale": 0.0 }), "scale: must be positive"),
        (json!({ "softcap": -1.0 }), "softcap: must be positive"),
        (
            json!({ "mechanism": "cosine", "tau": 1.0, "scale": 2.0 }),
            "scale: only the scaled dot product",
        ),
        (
            json!({ "mechanism": "hierarchical", "segment": 1, "softcap": 2.0 }),
            "softcap: only the scaled dot product",
        ),
        (
            json!({ "mechanism": "input_diff", "k_norm": [1.0, 1.0] }),
            "k_norm: input_diff",
        ),
        (
            json!({ "sinks": [0.0, 0.0] }),
            "sinks: expected 1 values (one per softmax query head)",
        ),
        (
            json!({ "mechanism": "cosine", "tau": 1.0, "sinks": [0.0] }),
            "sinks: only the scaled dot product",
        ),
        (
            json!({ "relative_bias": [[0.0, 0.0]] }),
            "relative_bias: expected 1 x 3 (one row per softmax query head",
        ),
    ];
    for (extra, want) in cases {
        let err = parse_spec(&spec(extra.clone()).to_string()).expect_err("refused");
        assert!(err.to_string().contains(want), "{extra}: {err}");
    }
}

#[test]
fn the_page_says_what_the_sink_took_from_the_row_it_points_at() {
    let mut e = Explorer::new(Model::untrained());
    e.load_spec(&spec(json!({ "scale": 1.0, "sinks": [0.0] })).to_string())
        .unwrap();
    e.compute().unwrap();
    let cell = e.cell(0, 1).expect("a cell");
    let sum = cell.row_sums[0].1;
    // (e + 1) / (e + 2) of row 0 stays, 1 / (e + 2) went to the sink.
    let e1 = 1f64.exp();
    assert!((f64::from(sum) - (e1 + 1.0) / (e1 + 2.0)).abs() < 1e-6);
    assert_eq!(cell.sink.len(), 1, "one map, A, lost mass to the sink");
    assert!((f64::from(cell.sink[0].1) - 1.0 / (e1 + 2.0)).abs() < 1e-6);
    // Without sinks the readout has no sink line.
    e.load_spec(&spec(json!({})).to_string()).unwrap();
    e.compute().unwrap();
    assert!(e.cell(0, 1).unwrap().sink.is_empty());
}

#[test]
fn the_sink_strip_beside_a_holds_each_rows_share_and_its_cell_says_so() {
    // Products [[1, 0], [0, 4]] unscaled, and a sink of ln 2 (e^σ = 2): row 0 keeps
    // (e + 1) / (e + 3) and gives 2 / (e + 3) to the sink; row 1 gives 2 / (e^4 + 3).
    let mut e = Explorer::new(Model::untrained());
    let ln2 = 2f32.ln();
    e.load_spec(&spec(json!({ "scale": 1.0, "sinks": [ln2] })).to_string())
        .unwrap();
    e.compute().unwrap();
    let (e1, e4) = (1f64.exp(), 4f64.exp());
    let want = [2.0 / (e1 + 3.0), 2.0 / (e4 + 3.0)];
    assert!(e.has_sink(StageId::A));
    let shares = e.sink_shares(StageId::A, 0).expect("A has a sink strip");
    assert_eq!(shares.len(), 2);
    for (got, want) in shares.iter().zip(want) {
        assert!((f64::from(*got) - want).abs() < 1e-6, "{got} vs {want}");
    }
    // The strip is the column past the two keys; its cell of row 0 is the sink's share, and
    // the row's sum is what the keys kept.
    assert!(e.is_sink_column(2) && !e.is_sink_column(1));
    let cell = e.cell(0, 2).expect("the strip's cell");
    assert!(cell.sink_cell && cell.values.is_empty() && !cell.masked);
    assert_eq!(cell.sink[0].0, StageId::A);
    assert!((f64::from(cell.sink[0].1) - want[0]).abs() < 1e-6);
    let kept = f64::from(cell.row_sums[0].1);
    assert!((kept - (e1 + 1.0) / (e1 + 3.0)).abs() < 1e-6, "{kept}");
    // A key's cell names the strip's share too, and is no strip cell.
    let key = e.cell(1, 1).expect("a key's cell");
    assert!(!key.sink_cell && (f64::from(key.sink[0].1) - want[1]).abs() < 1e-6);

    // Cosine attention, which the page also runs on this layer, has scores of its own and
    // no sink: its rows sum to 1 and it has no strip.
    e.update(&SettingsPatch {
        mechanism: Some(MechanismKind::Cosine),
        ..Default::default()
    })
    .unwrap();
    e.compute().unwrap();
    assert!(!e.has_sink(StageId::A) && e.sink_shares(StageId::A, 0).is_none());
    assert!(!e.is_sink_column(2) && e.cell(0, 1).unwrap().sink.is_empty());
    // The same layer without its sink: no strip, no column past the keys.
    e.load_spec(&spec(json!({ "scale": 1.0 })).to_string())
        .unwrap();
    e.compute().unwrap();
    assert!(!e.has_sink(StageId::A) && e.sink_shares(StageId::A, 0).is_none());
    assert!(!e.is_sink_column(2) && e.cell(0, 2).is_none());
}

#[test]
fn a_differential_layer_with_sinks_has_a_strip_beside_a1_and_a2_and_none_beside_the_difference() {
    // Two diff heads' worth of softmax heads (2H = 2 for H = 1), each with its own sink.
    let mut e = Explorer::new(Model::untrained());
    let eye4 = json!([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0]
    ]);
    let layer = json!({
        "mechanism": "diff_transformer", "heads": 1, "causal": true, "depth": 0, "scale": 1.0,
        "x": [[1.0, 0.0, 0.0, 1.0], [0.0, 2.0, 1.0, 0.0]],
        "w_q": eye4, "w_k": eye4, "w_v": eye4, "w_o": eye4,
        "lambda_q1": [0.0, 0.0], "lambda_k1": [0.0, 0.0], "lambda_q2": [0.0, 0.0], "lambda_k2": [0.0, 0.0],
        "sinks": [0.0, 1.0],
    });
    e.load_spec(&layer.to_string()).unwrap();
    e.compute().unwrap();
    assert!(e.has_sink(StageId::A1) && e.has_sink(StageId::A2));
    assert!(!e.has_sink(StageId::Diff) && e.sink_shares(StageId::Diff, 0).is_none());
    // Causal row 0 sees key 0 only: A1's score q·k = 1 (x₀'s first half [1, 0] with itself),
    // A2's 1 (its second half [0, 1]); so A1 gives 1 / (e + 1) to a sink of 0, A2 e / (e + e).
    let e1 = 1f64.exp();
    let a1 = e.sink_shares(StageId::A1, 0).unwrap();
    let a2 = e.sink_shares(StageId::A2, 0).unwrap();
    assert!(
        (f64::from(a1[0]) - 1.0 / (e1 + 1.0)).abs() < 1e-6,
        "{}",
        a1[0]
    );
    assert!((f64::from(a2[0]) - 0.5).abs() < 1e-6, "{}", a2[0]);
    let cell = e.cell(0, 2).expect("the strips' cell");
    let stages: Vec<StageId> = cell.sink.iter().map(|s| s.0).collect();
    assert_eq!(stages, [StageId::A1, StageId::A2]);
}

#[test]
fn the_formula_above_the_map_says_how_this_layer_makes_its_scores() {
    let mut e = Explorer::new(Model::untrained());
    let formula = |e: &mut Explorer, extra: Value| {
        e.load_spec(&spec(extra).to_string()).unwrap();
        e.compute().unwrap();
        e.formula(diffattn::engine::StageId::A)
    };
    // A plain layer keeps the registry's formula.
    assert_eq!(formula(&mut e, json!({})), "A = softmax(QKᵀ/√dₕ + M)");
    // T5: unscaled, biased by offset. Gemma 2: its own scale, capped. gpt-oss: a sink.
    assert_eq!(
        formula(
            &mut e,
            json!({ "scale": 1.0, "relative_bias": [[0.0, 0.0, 0.0]] })
        ),
        "A = softmax(s·QKᵀ + B + M)"
    );
    assert_eq!(
        formula(&mut e, json!({ "scale": 0.5, "softcap": 50.0 })),
        "A = softmax(c·tanh((s·QKᵀ)/c) + M)"
    );
    assert_eq!(
        formula(&mut e, json!({ "sinks": [0.0], "q_norm": [1.0, 1.0] })),
        "A = softmax(Q̂K̂ᵀ/√dₕ + M), with a learned sink σₕ"
    );
}
