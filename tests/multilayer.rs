//! Multi-layer files (DESIGN.md §7.11): `{"layers": [spec, ...]}` in JSON and in the binary
//! form. Layer N reads exactly as the single-layer file of that spec; `diffattn stages --layer N`
//! picks it; bad files and numbers are errors that name the field and the range.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::fs;

use diffattn::spec::{
    parse_page_spec_bytes, parse_spec_bytes, parse_spec_bytes_layer, parse_spec_reader,
    parse_spec_reader_layer, SpecError,
};
use serde_json::{json, Value};

use common::{diffattn, safetensors_file, scratch_dir, stages_metadata, stderr};

const ARRAY_FIELDS: [&str; 5] = ["x", "w_q", "w_k", "w_v", "w_o"];

fn fixture(name: &str) -> Value {
    let path = format!("tests/fixtures/stages/{name}.spec.json");
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Two layers that differ in everything: mechanism, tokens, widths.
fn two() -> [Value; 2] {
    [
        fixture("standard_L12_H4_dm32_causal"),
        fixture("shiftdiff_L12_H4_dm32_causal_k-1_single_none"),
    ]
}

fn multi_json(layers: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({ "layers": layers })).unwrap()
}

/// Named F32 tensors: name, shape, values.
type Tensors = Vec<(String, Vec<usize>, Vec<f32>)>;

/// A safetensors file: F32 tensors and `spec` as `__metadata__.spec`.
fn safetensors(tensors: &Tensors, spec: &Value) -> Vec<u8> {
    safetensors_file(tensors, stages_metadata(spec))
}

/// A spec's array fields as tensors named `prefix` + field, and the rest.
fn split(spec: &Value, prefix: &str) -> (Tensors, Value) {
    let mut rest = spec.clone();
    let mut tensors = Vec::new();
    for name in ARRAY_FIELDS {
        let rows = rest.as_object_mut().unwrap().remove(name).unwrap();
        let rows: Vec<Vec<f64>> = serde_json::from_value(rows).unwrap();
        let values = rows.concat().iter().map(|&v| v as f32).collect();
        tensors.push((
            format!("{prefix}{name}"),
            vec![rows.len(), rows[0].len()],
            values,
        ));
    }
    (tensors, rest)
}

fn multi_binary(layers: &[Value]) -> Vec<u8> {
    let mut tensors = Vec::new();
    let mut rests = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        let (t, rest) = split(layer, &format!("layers.{i}."));
        tensors.extend(t);
        rests.push(rest);
    }
    safetensors(&tensors, &json!({ "layers": rests }))
}

fn stages_of_single(spec: &Value) -> diffattn::engine::Stages {
    parse_spec_bytes(&serde_json::to_vec(spec).unwrap())
        .and_then(|s| s.run())
        .unwrap()
}

#[test]
fn each_layer_of_a_json_or_binary_file_reads_as_its_single_layer_spec() {
    let layers = two();
    for file in [multi_json(&layers), multi_binary(&layers)] {
        for (i, layer) in layers.iter().enumerate() {
            let (spec, count) = parse_spec_bytes_layer(&file, i).unwrap();
            assert_eq!(count, 2);
            let single = parse_spec_bytes(&serde_json::to_vec(layer).unwrap()).unwrap();
            assert_eq!(spec, single, "layer {}", i + 1);
            assert_eq!(spec.run().unwrap(), stages_of_single(layer));
            let (from_reader, _) = parse_spec_reader_layer(&file[..], i).unwrap();
            assert_eq!(from_reader, single);
        }
        // The page's reader takes one layer (its JavaScript splits the file): `layers` is unknown.
        let e = parse_page_spec_bytes(&file).unwrap_err();
        assert!(e.field == "layers" || e.field == "spec", "{e}");
        // Without a number: the first layer.
        assert_eq!(
            parse_spec_bytes(&file).unwrap(),
            parse_spec_bytes_layer(&file, 0).unwrap().0
        );
        assert_eq!(
            parse_spec_reader(&file[..]).unwrap(),
            parse_spec_bytes(&file).unwrap()
        );
    }
}

#[test]
fn a_single_layer_file_reads_as_before_and_has_only_layer_1() {
    let layer = &two()[0];
    let text = serde_json::to_vec(layer).unwrap();
    let (binary, rest) = split(layer, "");
    let binary = safetensors(&binary, &rest);
    for file in [text, binary] {
        let (spec, count) = parse_spec_bytes_layer(&file, 0).unwrap();
        assert_eq!(count, 1);
        assert_eq!(spec, parse_spec_bytes(&file).unwrap());
        let e = parse_spec_bytes_layer(&file, 1).unwrap_err();
        assert_eq!(e.field, "layer");
        assert!(
            e.message.contains("single-layer") && e.message.contains("only 1"),
            "{e}"
        );
    }
}

fn error(file: &[u8], index: usize) -> SpecError {
    let bytes = parse_spec_bytes_layer(file, index).map(|_| ()).unwrap_err();
    let reader = parse_spec_reader_layer(file, index)
        .map(|_| ())
        .unwrap_err();
    // serde_json's column may differ by one between a slice and a reader.
    let head = |e: &SpecError| e.message.split(" at line").next().unwrap_or("").to_string();
    assert_eq!((&bytes.field, head(&bytes)), (&reader.field, head(&reader)));
    bytes
}

#[test]
fn bad_multi_layer_files_are_errors_naming_the_field() {
    let [a, b] = two();
    let says = |e: SpecError, field: &str, words: &str| {
        assert!(
            e.field == field && e.message.contains(words),
            "{field} / {words}: got {e}"
        );
    };
    // A number past the last layer names the range, in JSON and binary.
    for file in [
        multi_json(&[a.clone(), b.clone()]),
        multi_binary(&[a.clone(), b.clone()]),
    ] {
        says(
            error(&file, 2),
            "layer",
            "3 asked of a file of 2 layers: expected 1 to 2",
        );
    }
    says(error(&multi_json(&[]), 0), "layers", "an empty list");
    says(error(b"{\"layers\": 3}", 0), "layers", "a list of layers");
    says(
        error(b"{\"layers\": null}", 0),
        "layers",
        "a list of layers",
    );
    // Another entry that is not an object is an error even when another layer is read.
    let file = serde_json::to_vec(&json!({"layers": [a, 3]})).unwrap();
    says(error(&file, 0), "layers[1]", "a spec (a JSON object)");
    says(error(&file, 1), "layers[1]", "a spec (a JSON object)");
    // The picked layer is checked as a spec is: the path names the layer.
    let mut bad = b.clone();
    bad["heads"] = json!(3);
    let e = error(&multi_json(&[a.clone(), bad]), 1);
    assert!(e.to_string().contains("heads"), "{e}");
    let mut typo = a.clone();
    typo["shiftfill"] = json!("zero");
    says(
        error(&multi_json(&[typo]), 0),
        "layers[0].shiftfill",
        "unknown field",
    );
    // Files do not nest, and `layers` stands alone.
    let nested = json!({"layers": [{"layers": [a.clone()]}]});
    says(
        error(&serde_json::to_vec(&nested).unwrap(), 0),
        "layers[0].layers",
        "unknown field",
    );
    let beside = json!({"layers": [a.clone()], "model": "m"});
    says(
        error(&serde_json::to_vec(&beside).unwrap(), 0),
        "spec",
        "`layers` only",
    );
    let after = format!(r#"{{"model": "m", "layers": [{a}]}}"#);
    says(error(after.as_bytes(), 0), "layers", "unknown field");
    // Binary: tensors are named layers.I.FIELD, I within the list.
    let (mut tensors, rest) = split(&a, "layers.0.");
    let spec = json!({ "layers": [rest.clone()] });
    let plain = split(&a, "").0;
    for (name, shape, values) in [
        (plain[0].0.clone(), plain[0].1.clone(), plain[0].2.clone()),
        (
            "layers.1.x".to_string(),
            plain[0].1.clone(),
            plain[0].2.clone(),
        ),
        ("layers.00.b_q".to_string(), vec![32], vec![0.0; 32]),
        ("layers.0.gate".to_string(), vec![1], vec![0.0]),
    ] {
        let mut with = tensors.clone();
        with.push((name.clone(), shape, values));
        let e = parse_spec_bytes_layer(&safetensors(&with, &spec), 0).unwrap_err();
        assert_eq!(e.field, name, "{e}");
    }
    // A field both a tensor and in the spec, within a layer.
    let mut doubled = rest.clone();
    doubled["x"] = a["x"].clone();
    let e = parse_spec_bytes_layer(&safetensors(&tensors, &json!({"layers": [doubled]})), 0);
    assert_eq!(e.unwrap_err().field, "x");
    // A layer's tensor missing.
    tensors.retain(|t| t.0 != "layers.0.w_o");
    let e = parse_spec_bytes_layer(&safetensors(&tensors, &spec), 0).unwrap_err();
    assert_eq!(e.field, "w_o", "{e}");
}

#[test]
fn stages_layer_n_prints_that_layers_stages() {
    let layers = two();
    let dir = scratch_dir("stages_layer_n");
    let json_file = dir.join("two.json");
    let binary_file = dir.join("two.safetensors");
    fs::write(&json_file, multi_json(&layers)).unwrap();
    fs::write(&binary_file, multi_binary(&layers)).unwrap();
    for (i, layer) in layers.iter().enumerate() {
        let single = diffattn(&["stages"], &layer.to_string());
        assert!(single.status.success(), "{}", stderr(&single));
        for file in [&json_file, &binary_file] {
            let n = (i + 1).to_string();
            let out = diffattn(&["stages", "--layer", &n, file.to_str().unwrap()], "");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(out.stdout, single.stdout, "layer {n} of {}", file.display());
        }
    }
    // Default: the first layer.
    let first = diffattn(&["stages", json_file.to_str().unwrap()], "");
    assert_eq!(
        first.stdout,
        diffattn(&["stages"], &layers[0].to_string()).stdout
    );
    // From standard input too.
    let text = String::from_utf8(multi_json(&layers)).unwrap();
    let piped = diffattn(&["stages", "--layer", "2"], &text);
    assert_eq!(
        piped.stdout,
        diffattn(&["stages"], &layers[1].to_string()).stdout
    );
    for (n, words) in [
        (
            "3",
            "--layer 3 asked of a file of 2 layers: expected 1 to 2",
        ),
        ("0", "expected a layer number from 1"),
        ("two", "expected a layer number from 1"),
    ] {
        let out = diffattn(&["stages", "--layer", n, json_file.to_str().unwrap()], "");
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(words), "{}", stderr(&out));
    }
    let out = diffattn(&["stages", "--layer", "2"], &layers[0].to_string());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("single-layer spec: only 1"),
        "{}",
        stderr(&out)
    );
}
