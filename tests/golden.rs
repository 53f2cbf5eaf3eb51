//! The goldens of `tests/golden/` (made by `scripts/golden-transformers`): layers captured from
//! transformers' DiffLlama, Llama, Qwen2, Mistral, Qwen3, Qwen3-Next, OLMo 2, Gemma 2, Gemma 3,
//! gpt-oss, BERT, RoBERTa, DistilBERT, GPT-2, ViT, T5 and BART and from the official Differential
//! Transformer V1/V2 code, run through `diffattn stages`' path, reproduce the softmax maps and
//! output those libraries computed within 1e-4 relative to the largest value of each.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use diffattn::spec::{parse_spec_bytes, stages_json};
use serde_json::Value;

const TOLERANCE: f64 = 1e-4;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The F32 tensors of a safetensors file, flattened, with their shapes. (A reader of its own,
/// so the goldens are not read by the code they test.)
fn read_tensors(path: &Path) -> BTreeMap<String, (Vec<usize>, Vec<f64>)> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(&bytes[8..8 + n]).expect("a JSON header");
    let data = &bytes[8 + n..];
    let mut out = BTreeMap::new();
    for (name, info) in header.iter().filter(|(k, _)| *k != "__metadata__") {
        assert_eq!(info["dtype"], "F32", "{name}");
        let shape: Vec<usize> = serde_json::from_value(info["shape"].clone()).expect("shape");
        let [begin, end]: [usize; 2] =
            serde_json::from_value(info["data_offsets"].clone()).expect("offsets");
        let values = data[begin..end]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
            .collect();
        out.insert(name.clone(), (shape, values));
    }
    out
}

/// Every number of a JSON value (nested arrays), in row-major order.
fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| flatten(i, out)),
        Value::Number(n) => out.push(n.as_f64().expect("a number")),
        other => panic!("not a number: {other}"),
    }
}

/// The stages' values of a golden tensor: `a`, `a1`, `a2` stacked over the heads, or the
/// top-level `lambda` and `output`.
fn stage_values(stages: &Value, name: &str) -> Vec<f64> {
    let mut out = Vec::new();
    match name {
        "output" | "lambda" => flatten(&stages[name], &mut out),
        _ => stages["heads"]
            .as_array()
            .expect("heads")
            .iter()
            .for_each(|h| flatten(&h[name], &mut out)),
    }
    out
}

fn relative_error(got: &[f64], want: &[f64]) -> f64 {
    let top = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    let worst = got.iter().zip(want).fold(0.0f64, |m, (g, w)| {
        let d = (g - w).abs();
        // A NaN counts as the worst possible difference.
        if d.is_nan() || d > m {
            if d.is_nan() {
                f64::INFINITY
            } else {
                d
            }
        } else {
            m
        }
    });
    worst / top
}

fn cases() -> Vec<String> {
    let manifest: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(golden_dir().join("manifest.json")).expect("manifest"),
    )
    .expect("manifest JSON");
    manifest.keys().cloned().collect()
}

#[test]
fn every_golden_layer_is_reproduced_within_1e_4_relative() {
    let names = cases();
    assert!(
        names.len() >= 20,
        "expected the goldens, found {}",
        names.len()
    );
    let mut failures = Vec::new();
    for name in &names {
        let dir = golden_dir();
        let spec = std::fs::read(dir.join(format!("{name}.spec.safetensors"))).expect("spec");
        let stages = match parse_spec_bytes(&spec).and_then(|s| s.run()) {
            Ok(s) => serde_json::to_value(stages_json(&s)).expect("serialise"),
            Err(e) => {
                failures.push(format!("{name}: rejected: {e}"));
                continue;
            }
        };
        let golden = read_tensors(&dir.join(format!("{name}.golden.safetensors")));
        assert!(golden.contains_key("output"), "{name}");
        for (key, (shape, want)) in &golden {
            let got = stage_values(&stages, key);
            if got.len() != want.len() {
                failures.push(format!(
                    "{name}.{key}: {} values, golden {shape:?}",
                    got.len()
                ));
                continue;
            }
            let error = relative_error(&got, want);
            if error > TOLERANCE {
                failures.push(format!("{name}.{key}: relative error {error:.2e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cli_opens_a_binary_spec() {
    let path = golden_dir().join("diffllama_L8_H4_kv4_d32_layer1.spec.safetensors");
    let out = common::diffattn(&["stages", path.to_str().expect("a UTF-8 path")], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stages: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let golden =
        read_tensors(&golden_dir().join("diffllama_L8_H4_kv4_d32_layer1.golden.safetensors"));
    for key in ["a1", "a2", "output"] {
        assert!(
            relative_error(&stage_values(&stages, key), &golden[key].1) <= TOLERANCE,
            "{key}"
        );
    }
    assert!(stages["lambda"].is_number());
}

#[test]
fn a_wrong_pairing_is_caught_by_the_same_measure() {
    // The measure can fail: the same DiffLlama capture read with the official pairing.
    let dir = golden_dir();
    let bytes =
        std::fs::read(dir.join("diffllama_L8_H4_kv4_d32_layer1.spec.safetensors")).expect("spec");
    let mut spec = parse_spec_bytes(&bytes).expect("a valid spec");
    spec.weights.layout.pairing = diffattn::engine::Pairing::Adjacent;
    let stages = serde_json::to_value(stages_json(&spec.run().expect("runs"))).expect("JSON");
    let golden = read_tensors(&dir.join("diffllama_L8_H4_kv4_d32_layer1.golden.safetensors"));
    assert!(relative_error(&stage_values(&stages, "a2"), &golden["a2"].1) > 1e-2);
}
