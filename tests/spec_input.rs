//! The spec format's reading and writing at its edges: the three ways in (text, bytes, a
//! reader) agree, the limits hold exactly at their values, and the streamed answer is the
//! same bytes as the one built whole.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

use diffattn::engine::StageId;
use diffattn::spec::{
    parse_page_spec, parse_spec, parse_spec_bytes, parse_spec_reader, stages_json, write_stages,
    StagesView,
};
use diffattn::text::limits::{MAX_MAP_CELLS, MAX_TOKENS, PAGE_MAX_TOKENS};

fn fixture_specs() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stages");
    let mut specs: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".spec.json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    specs.sort();
    assert!(specs.len() > 20, "the shared fixtures are there");
    specs
}

#[test]
fn text_bytes_and_reader_parse_every_fixture_alike() {
    for (name, text) in fixture_specs() {
        let from_text = parse_spec(&text);
        assert_eq!(parse_spec_bytes(text.as_bytes()), from_text, "{name}");
        assert_eq!(parse_spec_reader(text.as_bytes()), from_text, "{name}");
        // With a byte-order mark in front, all three read the same spec.
        let bom = format!("\u{FEFF}{text}");
        assert_eq!(parse_spec(&bom), from_text, "{name}");
        assert_eq!(parse_spec_bytes(bom.as_bytes()), from_text, "{name}");
        assert_eq!(parse_spec_reader(bom.as_bytes()), from_text, "{name}");
    }
}

#[test]
fn the_streamed_answer_is_the_bytes_of_the_whole_one_for_every_fixture() {
    for (name, text) in fixture_specs() {
        let Ok(stages) = parse_spec(&text).and_then(|s| s.run()) else {
            continue; // A fixture of a bad spec.
        };
        let whole = stages_json(&stages);
        for pretty in [false, true] {
            let mut streamed = Vec::new();
            write_stages(&mut streamed, &StagesView::new(&stages), pretty).unwrap();
            let expected = if pretty {
                serde_json::to_string_pretty(&whole)
            } else {
                serde_json::to_string(&whole)
            }
            .unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                expected + "\n",
                "{name}"
            );
        }
    }
}

#[test]
fn a_view_of_some_maps_writes_those_in_the_order_of_the_format() {
    let (_, text) = fixture_specs()
        .into_iter()
        .find(|(n, _)| n.starts_with("shiftdiff") && n.contains("symmetric"))
        .expect("a symmetric shift-difference fixture");
    let stages = parse_spec(&text).unwrap().run().unwrap();
    // Asked for in another order and with a repeat; written in the format's order.
    let view = StagesView::with_maps(&stages, &[StageId::Fused, StageId::ShiftedBack, StageId::A])
        .unwrap();
    assert_eq!(
        view.maps(),
        [StageId::A, StageId::ShiftedBack, StageId::Fused]
    );
    let v = serde_json::to_value(&view).unwrap();
    let keys: Vec<&String> = v["heads"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["a", "fused", "shifted_back"]); // serde_json's map sorts keys
    let whole = serde_json::to_value(stages_json(&stages)).unwrap();
    assert_eq!(v["heads"][1]["fused"], whole["heads"][1]["fused"]);
    assert_eq!(v["output"], whole["output"]);
}

/// A standard-attention spec of `tokens` one-wide tokens over `heads` heads of width 1.
fn spec(tokens: usize, heads: usize) -> String {
    let eye: Vec<String> = (0..heads)
        .map(|i| {
            let row: Vec<&str> = (0..heads).map(|j| if i == j { "1" } else { "0" }).collect();
            format!("[{}]", row.join(","))
        })
        .collect();
    let w = format!("[{}]", eye.join(","));
    let row = format!("[{}]", vec!["0.5"; heads].join(","));
    format!(
        r#"{{"mechanism": "standard", "heads": {heads}, "causal": true, "x": [{}],
           "w_q": {w}, "w_k": {w}, "w_v": {w}, "w_o": {w}}}"#,
        vec![row; tokens].join(",")
    )
}

#[test]
fn the_token_limit_holds_at_exactly_max_tokens() {
    let at = parse_spec(&spec(MAX_TOKENS, 1)).expect("2,048 tokens are allowed");
    assert_eq!(at.x.nrows(), 2048);
    let e = parse_spec(&spec(MAX_TOKENS + 1, 1)).unwrap_err();
    assert_eq!(e.field, "x");
    assert!(e.message.starts_with("more than 2,048 tokens"), "{e}");
}

#[test]
fn the_page_reads_at_most_page_max_tokens_and_names_its_limit() {
    assert_eq!(
        PAGE_MAX_TOKENS, MAX_TOKENS,
        "the page draws what the library runs"
    );
    let at = parse_page_spec(&spec(PAGE_MAX_TOKENS, 1)).expect("2,048 tokens draw on the page");
    assert_eq!(at.x.nrows(), 2048);
    at.page_support().expect("and the page supports them");
    // The page's issue 14 case: 6,000 tokens are refused at row 2,049, naming the page's cap.
    for tokens in [PAGE_MAX_TOKENS + 1, 6000] {
        let e = parse_page_spec(&spec(tokens, 1)).unwrap_err();
        assert_eq!(e.field, "x");
        assert!(
            e.message.starts_with(
                "more than 2,048 tokens (rows); the limit is 2,048 \
                 (diffattn::text::limits::PAGE_MAX_TOKENS) on the page, as in `diffattn stages`"
            ),
            "{e}"
        );
    }
    // The page's check on the cells of a stage refuses a spec past them however it was made:
    // 9 query heads of 2,048 × 2,048 are more than the 33,554,432 cells it draws per stage.
    let mut wide = parse_spec(&spec(PAGE_MAX_TOKENS, 1)).unwrap();
    wide.heads = 9;
    let e = wide.page_support().unwrap_err();
    assert_eq!(e.field, "heads");
    assert!(
        e.message.starts_with(
            "9 softmax maps of 2048 × 2048 tokens are 37,748,736 cells per stage, more than the \
             page draws, 33,554,432"
        ),
        "{e}"
    );
    // Labels are counted against the page's cap too.
    let labels = format!("[{}]", vec!["\"t\""; PAGE_MAX_TOKENS + 1].join(","));
    let text = spec(2, 1).replacen('{', &format!("{{\"tokens\": {labels}, "), 1);
    let e = parse_page_spec(&text).unwrap_err();
    assert_eq!(e.field, "tokens");
    assert!(e.message.starts_with("more than 2,048 entries"), "{e}");
}

#[test]
fn nan_and_infinity_literals_are_named_as_what_json_does_not_have() {
    // As Python's json.dump writes them (allow_nan=True, its default), on one line and
    // pretty-printed over several.
    for (literal, field) in [
        ("NaN", "x[0][0]"),
        ("Infinity", "x[0][0]"),
        ("-Infinity", "x[0][0]"),
    ] {
        for pretty in [false, true] {
            let mut text = spec(2, 1).replacen("0.5", literal, 1);
            if pretty {
                text = text.replace(", ", ",\n  ").replace("[[", "[\n    [");
            }
            let hint = format!("({literal} is not a JSON number: JSON has no NaN or infinity");
            for e in [
                parse_spec(&text).unwrap_err(),
                parse_spec_bytes(text.as_bytes()).unwrap_err(),
                parse_page_spec(&text).unwrap_err(),
            ] {
                assert_eq!(e.field, field, "{literal} {pretty}: {e}");
                assert!(e.message.contains(&hint), "{literal} {pretty}: {e}");
            }
            // The reader cannot look back at the text; it still names the field.
            let e = parse_spec_reader(text.as_bytes()).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
    }
    // Other syntax errors and numbers out of range get no such hint.
    for text in [
        spec(2, 1).replacen("0.5", "Nope", 1),
        spec(2, 1).replacen("0.5", "1e999", 1),
        spec(2, 1).replacen("0.5", "-", 1),
    ] {
        let e = parse_spec(&text).unwrap_err();
        assert_eq!(e.field, "x[0][0]", "{e}");
        assert!(!e.message.contains("not a JSON number"), "{e}");
    }
}

#[test]
fn the_cell_limit_holds_at_exactly_max_map_cells() {
    // 8 heads × 2,048² is exactly MAX_MAP_CELLS.
    let at = parse_spec(&spec(MAX_TOKENS, 8)).expect("at the cell limit");
    assert_eq!(at.map_cells(), Some(MAX_MAP_CELLS));
    // 16 heads: 1,448 tokens fit (33,547,264 cells), 1,449 do not (33,593,616).
    assert!(parse_spec(&spec(1448, 16)).is_ok());
    let e = parse_spec(&spec(1449, 16)).unwrap_err();
    assert_eq!(e.field, "x");
    assert!(
        e.message
            .starts_with("1,449 tokens × 1,449 keys × 16 heads = 33,593,616 cells per map"),
        "{e}"
    );
}

#[test]
fn a_spec_built_by_hand_is_checked_before_it_runs() {
    // Spec's fields are public, so `run` checks the limits again.
    let good = parse_spec(&spec(4, 2)).unwrap();
    let mut s = good.clone();
    s.x = ndarray::Array2::zeros((MAX_TOKENS + 1, 2));
    let e = s.run().unwrap_err();
    assert_eq!(
        e.to_string(),
        "x: 2,049 tokens, more than the limit of 2,048 (diffattn::text::limits::MAX_TOKENS)"
    );
    let mut s = good.clone();
    s.heads = 16;
    s.x = ndarray::Array2::zeros((MAX_TOKENS, 2));
    let e = s.run().unwrap_err();
    assert_eq!(e.field, "x");
    assert!(e.message.contains("MAX_MAP_CELLS"), "{e}");
}

#[test]
fn input_difference_counts_its_keys_as_steps() {
    // L tokens have L - 1 steps: 2,049 tokens can never pass the token limit, but the cells of
    // a map are heads × L × (L - 1).
    let s = parse_spec(&spec(3, 1).replace("\"standard\"", "\"input_diff\"")).unwrap();
    assert_eq!(s.map_cells(), Some(3 * 2));
}

#[test]
fn duplicate_fields_are_errors() {
    let text = spec(2, 1).replace(r#""heads": 1,"#, r#""heads": 1, "heads": 1,"#);
    let e = parse_spec(&text).unwrap_err();
    assert!(e.message.contains("duplicate field `heads`"), "{e}");
}

/// A spec in the binary form (DESIGN.md §7.8): `x` as an F32 tensor of `rows × cols`, the
/// other fields in the metadata.
fn safetensors_with_x(rows: usize, cols: usize) -> Vec<u8> {
    safetensors_declaring(rows, rows, cols)
}

/// [`safetensors_with_x`] whose header declares `declared` rows of `x` but holds `rows`.
fn safetensors_declaring(declared: usize, rows: usize, cols: usize) -> Vec<u8> {
    let eye: Vec<Vec<f32>> = (0..cols)
        .map(|i| (0..cols).map(|j| f32::from(u8::from(i == j))).collect())
        .collect();
    let spec = serde_json::json!({
        "mechanism": "standard", "heads": 1, "causal": true,
        "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye,
    });
    let data: Vec<u8> = (0..rows * cols)
        .flat_map(|_| 0.5f32.to_le_bytes())
        .collect();
    let header = serde_json::json!({
        "x": {"dtype": "F32", "shape": [declared, cols], "data_offsets": [0, data.len()]},
        "__metadata__": {"format": "diffattn.stages", "version": "1", "spec": spec.to_string()},
    });
    let header = header.to_string().into_bytes();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header);
    file.extend(data);
    file
}

#[test]
fn the_binary_form_obeys_the_same_limits_before_it_allocates() {
    let at = parse_spec_bytes(&safetensors_with_x(MAX_TOKENS, 1)).expect("2,048 tokens");
    assert_eq!(at.x.nrows(), MAX_TOKENS);
    // The reader takes the same file and gives the same spec.
    assert_eq!(
        parse_spec_reader(&safetensors_with_x(MAX_TOKENS, 1)[..]),
        Ok(at)
    );
    let e = parse_spec_bytes(&safetensors_with_x(MAX_TOKENS + 1, 1)).unwrap_err();
    assert_eq!(e.field, "x");
    assert!(e.message.contains("more than 2,048 tokens"), "{e}");
    // A declared shape is refused before its values are read: this file holds no data for
    // the 2^40 rows it announces.
    let e = parse_spec_bytes(&safetensors_declaring(1 << 40, 1, 1)).unwrap_err();
    assert!(e.message.contains("more than 2,048 tokens"), "{e}");
}

#[test]
fn bytes_that_are_not_utf8_are_refused_even_where_the_parser_skips() {
    // Found by the `spec` fuzzer (fuzz/regressions/spec/invalid_utf8_in_an_ignored_key.json):
    // a byte 0x87 in a key inside the ignored `stages`. serde_json checks the UTF-8 of what it
    // keeps, not of what it skips, so the reader accepted what the bytes parser refused.
    let mut bytes = spec(2, 1).trim_end_matches('}').to_string().into_bytes();
    bytes.extend_from_slice(b", \"stages\": {\"head\x87\": [[0]]}}");
    assert!(parse_spec_bytes(&bytes).is_err());
    let e = parse_spec_reader(&bytes[..]).unwrap_err();
    assert!(e.message.contains("not UTF-8 at byte"), "{e}");
}

#[test]
fn a_w_lambda_narrower_than_d_model_is_refused_not_a_panic() {
    // Found by the `spec` fuzzer (fuzz/regressions/spec/w_lambda_narrower_than_d_model.json):
    // V2's `w_lambda` with one row per head but 3 columns where d_model is 4. Only its rows were
    // counted, so the product λ = σ(x·w_lambdaᵀ) panicked on its inner dimensions.
    let v2 = |w_lambda: &str| {
        format!(
            r#"{{"mechanism": "diff_transformer_v2", "heads": 1, "head_dim": 2, "causal": true,
               "x": [[0, 0, 0.5, -1], [0, 3, 2, 0]],
               "w_q": [[0.5, -1, 0, 1], [0, 1, 0.5, 0], [1, 0, -1, 0.25], [0.1, 0.2, 0.3, 0.4]],
               "w_k": [[0.5, -0.25, 1, 1], [0, 1, 0.5, 0]],
               "w_v": [[0.5, -0.25, 0, 1], [0, 1, 0.5, 0]],
               "w_o": [[1, 0], [0, 1], [0.5, 0.5], [-1, 0]],
               "w_lambda": {w_lambda}}}"#
        )
    };
    assert!(parse_spec(&v2("[[0.1, -0.2, 0, 0.3]]")).is_ok());
    let e = parse_spec(&v2("[[0.1, -0.2, 0]]")).unwrap_err();
    assert!(e.to_string().contains("w_lambda"), "{e}");
    assert!(e.to_string().contains("width 4"), "{e}");
}

/// A Differential Transformer spec of one diff head over `x` (two tokens, d = 4, W = I), with
/// `extra` fields.
fn diff_transformer_spec(extra: &str) -> String {
    let eye = "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]";
    format!(
        r#"{{"mechanism": "diff_transformer", "heads": 1, "causal": false,
            "x": [[1.5, 0, 0, 0], [0, 0, 0, 0]], "w_q": {eye}, "w_k": {eye}, "w_v": {eye}, "w_o": {eye},
            "depth": 0, "lambda_q1": [0, 0], "lambda_k1": [0, 0], "lambda_q2": [0, 0], "lambda_k2": [0, 0],
            "subln": [1, 1, 1, 1]{extra}}}"#
    )
}

#[test]
fn the_temperature_is_an_optional_field_of_diff_transformer_specs_written_back_when_not_one() {
    use diffattn::engine::Mechanism;
    let temperature = |spec: &diffattn::spec::Spec| match &spec.mechanism {
        Mechanism::DiffTransformer(p) => p.temperature,
        other => panic!("{other:?}"),
    };
    let plain = diffattn::spec::parse_spec(&diff_transformer_spec("")).unwrap();
    assert_eq!(temperature(&plain), 1.0, "absent: the paper's maps");
    let hot =
        diffattn::spec::parse_spec(&diff_transformer_spec(r#", "temperature": 2.5"#)).unwrap();
    assert_eq!(temperature(&hot), 2.5);
    for bad in ["0", "-1"] {
        let err = diffattn::spec::parse_spec(&diff_transformer_spec(&format!(
            r#", "temperature": {bad}"#
        )))
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("temperature:"), "{err}");
    }
    // An export names it only when it is not 1, so today's exports are unchanged.
    let json = |s: &diffattn::spec::Spec| {
        serde_json::to_string(&diffattn::spec::spec_json(s, None)).unwrap()
    };
    assert!(!json(&plain).contains("temperature"));
    assert!(json(&hot).contains(r#""temperature":2.5"#));
    let again = diffattn::spec::parse_spec(&json(&hot)).unwrap();
    assert_eq!(
        temperature(&again),
        2.5,
        "it opens again with its temperature"
    );
}

/// A gated attention fixture of the real-layer set (grouped-query attention, rope, biases,
/// `b_output_gate`), made by tests/fixtures/real/make.py.
fn gated_fixture() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real/gatedattention_L7_H4_kv2_d16_causal_rope_half_bias.spec.json");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_gated_attention_spec_is_written_back_and_reads_again_as_itself() {
    // The output gate's fields go out in an export (spec_json) and come back unchanged, and
    // the streamed answer (per head a, output_gate, gated; then output_gate_mean) is the bytes
    // of the whole one.
    let spec = parse_spec(&gated_fixture()).unwrap();
    let gate = spec.weights.output_gate.as_ref().expect("w_output_gate");
    assert_eq!(gate.w.dim(), (16, 16));
    assert_eq!(gate.b.as_ref().map(|b| b.len()), Some(16));
    let json = serde_json::to_string(&diffattn::spec::spec_json(&spec, None)).unwrap();
    assert!(json.contains("\"w_output_gate\"") && json.contains("\"b_output_gate\""));
    assert_eq!(parse_spec(&json).unwrap(), spec);
    let stages = spec.run().unwrap();
    let whole = serde_json::to_string(&stages_json(&stages)).unwrap();
    let mut streamed = Vec::new();
    write_stages(&mut streamed, &StagesView::new(&stages), false).unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), whole + "\n");
    let v: serde_json::Value = serde_json::from_str(&stages_json_text(&stages)).unwrap();
    let head = v["heads"][3].as_object().unwrap();
    let keys: Vec<&str> = head.keys().map(String::as_str).collect();
    assert_eq!(keys, ["a", "gated", "output_gate"]); // serde_json's map sorts keys
    assert_eq!(v["heads"][3]["output_gate"][6].as_array().unwrap().len(), 4);
    assert_eq!(v["output_gate_mean"][6].as_array().unwrap().len(), 4);
}

fn stages_json_text(stages: &diffattn::engine::Stages) -> String {
    serde_json::to_string(&stages_json(stages)).unwrap()
}

#[test]
fn the_output_gate_belongs_to_gated_attention_and_may_come_as_tensors() {
    let text = gated_fixture();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Another mechanism with an output gate is refused, naming the field; gated attention
    // without one too.
    value["mechanism"] = "standard".into();
    let e = parse_spec(&value.to_string()).unwrap_err();
    assert!(e.to_string().starts_with("w_output_gate:"), "{e}");
    value["mechanism"] = "gated_attention".into();
    let gate = value
        .as_object_mut()
        .unwrap()
        .remove("w_output_gate")
        .unwrap();
    let bias = value
        .as_object_mut()
        .unwrap()
        .remove("b_output_gate")
        .unwrap();
    let e = parse_spec(&value.to_string()).unwrap_err();
    assert!(e.to_string().starts_with("w_output_gate:"), "{e}");
    // The binary form (DESIGN.md §7.8): W_og and b_og as F32 tensors, the rest in the metadata.
    let floats = |v: &serde_json::Value| -> Vec<f32> {
        let mut out = Vec::new();
        let mut push = |x: &serde_json::Value| out.push(x.as_f64().unwrap() as f32);
        match v.as_array().unwrap()[0] {
            serde_json::Value::Array(_) => v.as_array().unwrap().iter().for_each(|r| {
                r.as_array().unwrap().iter().for_each(&mut push);
            }),
            _ => v.as_array().unwrap().iter().for_each(push),
        }
        out
    };
    let (w, b) = (floats(&gate), floats(&bias));
    let data: Vec<u8> = w.iter().chain(&b).flat_map(|x| x.to_le_bytes()).collect();
    let header = serde_json::json!({
        "w_output_gate": {"dtype": "F32", "shape": [16, 16], "data_offsets": [0, 4 * w.len()]},
        "b_output_gate": {"dtype": "F32", "shape": [16], "data_offsets": [4 * w.len(), data.len()]},
        "__metadata__": {"format": "diffattn.stages", "version": "1", "spec": value.to_string()},
    })
    .to_string()
    .into_bytes();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header);
    file.extend(data);
    assert_eq!(
        parse_spec_bytes(&file).unwrap(),
        parse_spec(&text).unwrap(),
        "the tensors read as the JSON fields"
    );
}
