//! A retrieval model over one text as a multi-layer spec (DESIGN.md §7.11;
//! `diffattn::retrieval::specs`, `diffattn retrieve --spec`): every layer of the written file,
//! read back by the spec reader and run by the engine, gives the final maps of the retrieval
//! forward at that layer (the maps the lesson's measure reads), with the model's layer and head
//! counts; and a small model checked by hand.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{diffattn, retrieval_file, retrieval_heldout, scratch_dir, RETRIEVAL_MECHANISMS};
use diffattn::engine::{Mechanism, Weights};
use diffattn::model::{RetrievalFile, TokenTable, UNKNOWN_TOKEN};
use diffattn::names::name_of;
use diffattn::retrieval::{ask, ask_with, layer_specs, Asked, Layer, RetrievalModel};
use diffattn::spec::{layers_json, parse_spec_bytes_layer};
use ndarray::{array, Array1, Array2, ArrayView3};

fn load(mechanism: &str) -> RetrievalFile {
    retrieval_file(mechanism)
}

/// Three held-out contexts: the first, one from the middle and the last (short and long ones,
/// one to six facts).
fn contexts() -> Vec<String> {
    let all: Vec<String> = retrieval_heldout()
        .into_iter()
        .map(|(_, _, text)| text)
        .collect();
    assert!(all.len() >= 3, "held-out contexts");
    vec![
        all[0].clone(),
        all[all.len() / 2].clone(),
        all[all.len() - 1].clone(),
    ]
}

/// The largest `|a − b|` of two maps of the same shape.
fn max_difference(a: ArrayView3<f32>, b: ArrayView3<f32>) -> f32 {
    assert_eq!(a.dim(), b.dim(), "the maps' shapes");
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Every layer of `file` (the JSON text of a multi-layer spec) read back and run: its final
/// maps against the forward's at that layer within 1e-6, its heads, mechanism, mask, tokens
/// and labels.
fn check_file(file: &[u8], model: &RetrievalModel, asked: &Asked, what: &str) {
    let json: serde_json::Value = serde_json::from_slice(file).expect("JSON");
    let layers = json["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), model.layers.len(), "{what}: the layer count");
    assert_eq!(json.as_object().unwrap().len(), 1, "{what}: only `layers`");
    for (l, layer) in model.layers.iter().enumerate() {
        let (spec, count) = parse_spec_bytes_layer(file, l).expect("a layer reads");
        assert_eq!(count, model.layers.len());
        assert!(spec.causal, "{what}: layer {l} is causal");
        assert_eq!(spec.heads, layer.heads, "{what}: layer {l}'s heads");
        assert_eq!(spec.mechanism, asked.mechanisms[l], "{what}: layer {l}");
        assert_eq!(spec.meta.tokens.as_deref(), Some(&asked.tokens[..]));
        assert_eq!(spec.meta.layer, Some(l as u64));
        let stages = spec.run().expect("the engine runs the layer");
        let ours = stages.final_maps();
        let forward = asked.retrieval.stages[l].final_maps();
        assert_eq!(ours.dim().0, layer.heads, "{what}: layer {l}'s maps");
        let d = max_difference(ours.view(), forward.view());
        assert!(d <= 1e-6, "{what}: layer {l}: maps differ by {d}");
    }
}

#[test]
fn every_layer_of_the_written_file_gives_the_forward_maps_of_that_layer() {
    let out = scratch_dir("retrieval-stages");
    for mechanism in RETRIEVAL_MECHANISMS {
        let file = load(mechanism);
        for (c, text) in contexts().iter().enumerate() {
            let path = out.join(format!("{mechanism}-{c}.json"));
            let run = diffattn(
                &[
                    "retrieve",
                    "--mechanism",
                    mechanism,
                    "--spec",
                    path.to_str().unwrap(),
                    text,
                ],
                "",
            );
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            assert!(run.stdout.is_empty(), "--spec writes the file only");
            let bytes = std::fs::read(&path).expect("the written spec");
            let asked = ask(&file.model, text).expect("asks");
            check_file(&bytes, &file.model, &asked, &format!("{mechanism} {c}"));
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(json["layers"][0]["model"], format!("retrieval/{mechanism}"));
        }
    }
}

#[test]
fn diffattn_stages_draws_each_layer_of_the_file_as_the_forward_does() {
    // The command line end to end: `retrieve --spec -` to standard output, then
    // `stages --layer N` of that file; the final map of each head is the forward's.
    let text = &contexts()[1];
    let out = scratch_dir("retrieval-stages-cli");
    for mechanism in ["shift_diff", "diff_transformer_v2"] {
        let run = diffattn(
            &["retrieve", "--mechanism", mechanism, "--spec", "-", text],
            "",
        );
        assert!(run.status.success());
        let path = out.join(format!("{mechanism}.json"));
        std::fs::write(&path, &run.stdout).unwrap();
        let file = load(mechanism);
        let asked = ask(&file.model, text).unwrap();
        for (l, layer) in file.model.layers.iter().enumerate() {
            let n = (l + 1).to_string();
            let drawn = diffattn(&["stages", "--layer", &n, path.to_str().unwrap()], "");
            assert!(
                drawn.status.success(),
                "{}",
                String::from_utf8_lossy(&drawn.stderr)
            );
            let json: serde_json::Value = serde_json::from_slice(&drawn.stdout).unwrap();
            let heads = json["heads"].as_array().expect("heads");
            assert_eq!(heads.len(), layer.heads);
            let key = name_of(layer.mechanism.kind().final_stage());
            let forward = asked.retrieval.stages[l].final_maps();
            for (h, head) in heads.iter().enumerate() {
                let rows = head[key].as_array().expect("the final map");
                for (i, row) in rows.iter().enumerate() {
                    for (j, v) in row.as_array().unwrap().iter().enumerate() {
                        let d = (v.as_f64().unwrap() as f32 - forward[[h, i, j]]).abs();
                        assert!(d <= 1e-6, "{mechanism} layer {n} head {h} [{i}, {j}]: {d}");
                    }
                }
            }
        }
    }
    // Every layer, and --layer is refused beside --spec.
    let both = diffattn(&["retrieve", "--spec", "-", "--layer", "2", text], "");
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn the_lessons_moved_knobs_are_in_the_file_and_give_the_moved_maps() {
    // A moved shift (shift_diff) and a moved λ (diff_transformer): the spec holds the moved
    // parameter, and its maps are the forward's with it.
    let text = &contexts()[0];
    for (mechanism, knob, value) in [
        ("shift_diff", "shift", 2.0),
        ("diff_transformer", "lambda", 0.1),
    ] {
        let file = load(mechanism);
        let mut knobs = diffattn::retrieval::Knobs::of(&file.model);
        let last = file.model.layers.len() - 1;
        assert!(knobs.set(last, knob, value), "{mechanism} has {knob}");
        let mechanisms = knobs.mechanisms(&file.model);
        let asked = ask_with(&file.model, text, &mechanisms).unwrap();
        let specs = layer_specs(&file.model, mechanism, &asked);
        assert_eq!(specs[last].mechanism, mechanisms[last]);
        assert_ne!(specs[last].mechanism, file.model.layers[last].mechanism);
        let bytes = layers_json(&specs).to_text(false).unwrap().into_bytes();
        check_file(&bytes, &file.model, &asked, mechanism);
    }
}

/// A model of width 2 checked by hand: two tokens, a standard layer with `W_q = W_k = 0`
/// (each query's row uniform over the keys the causal mask allows) and `W_v = W_o = I`, then a
/// local layer of window 1.
fn small_model() -> RetrievalModel {
    let table = TokenTable::new(
        vec![UNKNOWN_TOKEN.into(), "a".into(), "b".into()],
        array![[0.0f32, 0.0], [1.0, 0.0], [0.0, 2.0]],
    )
    .unwrap();
    let zero = Array2::<f32>::zeros((2, 2));
    let eye = Array2::<f32>::eye(2);
    let layers = vec![
        Layer {
            weights: Weights::new(zero.clone(), zero.clone(), eye.clone(), eye.clone()).unwrap(),
            mechanism: Mechanism::Standard,
            heads: 1,
        },
        Layer {
            weights: Weights::new(zero.clone(), zero, eye.clone(), eye).unwrap(),
            mechanism: Mechanism::Local { window: 1 },
            heads: 2,
        },
    ];
    RetrievalModel::new(table, layers, Array2::zeros((100, 2)), Array1::zeros(100)).unwrap()
}

#[test]
fn a_small_model_by_hand() {
    let model = small_model();
    let asked = ask(&model, "a b").unwrap();
    assert_eq!(asked.tokens, ["a", "b"]);
    let text = layers_json(&layer_specs(&model, "small", &asked))
        .to_text(true)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let layers = json["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2);
    // Layer 0: x₀ = the table's rows of "a" and "b".
    let first = &layers[0];
    assert_eq!(first["mechanism"], "standard");
    assert_eq!(first["heads"], 1);
    assert_eq!(first["causal"], true);
    assert_eq!(first["x"], serde_json::json!([[1.0, 0.0], [0.0, 2.0]]));
    assert_eq!(first["w_v"], serde_json::json!([[1.0, 0.0], [0.0, 1.0]]));
    assert_eq!(first["tokens"], serde_json::json!(["a", "b"]));
    assert_eq!(first["model"], "retrieval/small");
    assert_eq!(first["layer"], 0);
    // Layer 1: x₁ = x₀ + the mean of the rows up to each token (A is uniform over the allowed
    // keys, V = x₀, W_o = I): row 0 is (1, 0) + (1, 0) = (2, 0); row 1 is
    // (0, 2) + ((1, 0) + (0, 2)) / 2 = (0.5, 3).
    let second = &layers[1];
    assert_eq!(second["mechanism"], "local");
    assert_eq!(second["window"], 1);
    assert_eq!(second["heads"], 2);
    assert_eq!(second["x"], serde_json::json!([[2.0, 0.0], [0.5, 3.0]]));
    assert_eq!(second["layer"], 1);
    assert!(
        second.get("stages").is_none(),
        "a reader computes the stages"
    );
    // Read back, layer 1's maps are each head's uniform causal rows: [[1, 0], [0.5, 0.5]].
    let (spec, _) = parse_spec_bytes_layer(text.as_bytes(), 1).unwrap();
    let maps = spec.run().unwrap().final_maps().clone();
    for h in 0..2 {
        assert_eq!(maps[[h, 0, 0]], 1.0);
        assert_eq!(maps[[h, 0, 1]], 0.0);
        assert_eq!(maps[[h, 1, 0]], 0.5);
        assert_eq!(maps[[h, 1, 1]], 0.5);
    }
}
