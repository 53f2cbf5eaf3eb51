//! DESIGN.md §7.10 on hand-derived cases: cross-attention reads its keys and values from a
//! second sequence (`x_kv`, an encoder-decoder's encoder output), so its maps are tokens × keys;
//! what it refuses, naming the field. Captured BART and T5 cross-attention against
//! transformers: tests/golden.rs.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::spec::{parse_spec, spec_json};
use serde_json::{json, Value};

/// Two queries x = [1, 0] and [0, 1], three keys x_kv = [1, 0], [0, 2], [0, 0], one head of
/// width 2, identity projections, scale 1: the products are [[1, 0, 0], [0, 2, 0]].
fn spec(extra: Value) -> Value {
    let eye = json!([[1.0, 0.0], [0.0, 1.0]]);
    let mut s = json!({
        "mechanism": "standard", "heads": 1, "causal": false, "scale": 1.0,
        "x": [[1.0, 0.0], [0.0, 1.0]],
        "x_kv": [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]],
        "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye,
    });
    for (k, v) in extra.as_object().expect("an object") {
        s[k] = v.clone();
    }
    s
}

#[test]
fn the_maps_are_queries_by_keys_of_the_second_sequence() {
    let stages = parse_spec(&spec(json!({})).to_string())
        .and_then(|s| s.run())
        .expect("runs");
    let a = stages.final_maps();
    assert_eq!(a.dim(), (1, 2, 3), "one head, two queries, three keys");
    // Row 0: softmax([1, 0, 0]) = [e, 1, 1] / (e + 2).
    let e = 1f32.exp();
    for (j, want) in [e, 1.0, 1.0].into_iter().enumerate() {
        assert!((a[[0, 0, j]] - want / (e + 2.0)).abs() < 1e-6);
    }
    // Row 1: softmax([0, 2, 0]); no causal mask, so query 0 sees every key.
    let e2 = 2f32.exp();
    assert!((a[[0, 1, 1]] - e2 / (e2 + 2.0)).abs() < 1e-6);
    // The output mixes x_kv's values: row 0 = Σ_j a_0j · x_kv_j.
    let out = stages.output();
    assert!((out[[0, 0]] - e / (e + 2.0)).abs() < 1e-6);
    assert!((out[[0, 1]] - 2.0 / (e + 2.0)).abs() < 1e-6);
}

#[test]
fn key_tokens_label_the_columns_and_come_back_in_the_export() {
    let s = spec(json!({ "tokens": ["Le", "chat"], "key_tokens": ["the", "cat", "</s>"] }));
    let parsed = parse_spec(&s.to_string()).expect("valid");
    let out = serde_json::to_value(spec_json(&parsed, None)).expect("JSON");
    assert_eq!(out["key_tokens"], json!(["the", "cat", "</s>"]));
    assert_eq!(out["x_kv"].as_array().map(Vec::len), Some(3));
    let again = parse_spec(&out.to_string()).expect("the export reads back");
    assert_eq!(again.run().unwrap(), parsed.run().unwrap());
}

#[test]
fn what_cross_attention_cannot_be_is_named() {
    let cases = [
        (
            json!({ "causal": true }),
            "x_kv: cross-attention has no causal mask",
        ),
        (
            json!({ "mechanism": "local", "window": 1 }),
            "x_kv: only standard attention",
        ),
        (
            json!({ "x_kv": [[1.0, 0.0, 0.0]] }),
            "x_kv: rows of width 2",
        ),
        (
            json!({ "rope": { "layout": "half", "theta": 10000.0 } }),
            "x_kv: cross-attention has no rotary positions",
        ),
        (
            json!({ "key_tokens": ["a", "b"] }),
            "key_tokens: expected 3 labels (one per row of x_kv)",
        ),
    ];
    for (extra, want) in cases {
        let err = parse_spec(&spec(extra.clone()).to_string()).expect_err("refused");
        assert!(err.to_string().contains(want), "{extra}: {err}");
    }
    let mut plain = spec(json!({ "key_tokens": ["a", "b", "c"] }));
    plain.as_object_mut().unwrap().remove("x_kv");
    let err = parse_spec(&plain.to_string()).expect_err("refused");
    assert!(
        err.to_string().contains("key_tokens: given without x_kv"),
        "{err}"
    );
}

#[test]
fn the_page_labels_rows_with_the_queries_and_columns_with_the_second_sequence() {
    use diffattn::engine::{MechanismKind, StageId};
    use diffattn::explorer::Explorer;
    use diffattn::model::Model;
    let s = spec(json!({ "tokens": ["Le", "chat"], "key_tokens": ["the", "cat", "</s>"] }));
    parse_spec(&s.to_string())
        .unwrap()
        .page_support()
        .expect("the page draws it");
    let mut e = Explorer::new(Model::untrained());
    e.load_spec(&s.to_string()).unwrap();
    e.compute().unwrap();
    assert_eq!(e.labels(), ["Le", "chat"]);
    assert_eq!(e.key_labels(), ["the", "cat", "</s>"]);
    assert_eq!(e.key_count(), 3);
    assert_eq!(e.map(StageId::A).unwrap().dim(), (2, 3));
    assert_eq!(e.cell(1, 2).unwrap().key, "</s>");
    // Only standard attention reads a second sequence's keys.
    assert_eq!(e.mechanism_choices(), vec![MechanismKind::Standard]);
    // No key of the second sequence is after a query: the causal mask is refused, by name,
    // and the maps stay as they were (the page hides the control: `is_cross`).
    assert!(e.is_cross());
    let before = e.map(StageId::A).unwrap().to_owned();
    let err = e.update_maps(|m| m.causal = true).expect_err("refused");
    assert!(err.to_string().contains("causal"), "{err}");
    e.compute().unwrap();
    assert_eq!(e.map(StageId::A).unwrap(), before);
    assert!(!e.settings().maps.causal);
}
