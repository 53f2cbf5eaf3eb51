//! Browser tests of the wasm boundary (`diffattn_web::Explorer`), run by
//! `wasm-bindgen-test-runner` in headless Chromium (`scripts/check`, or
//! `cargo test --target wasm32-unknown-unknown -p diffattn-web --test web`). What a person does on the page is
//! tested end to end by `tests/e2e/`; these tests pin the handle's contract with `www/explorer/engine.js`.
#![cfg(target_arch = "wasm32")]

use diffattn_web::Explorer;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

mod support;

use support::{canvases, context_2d, error_message, get, num};

/// The whole shown map of `stage`, through a window as large as any map, once the shown head's
/// work is done (a window computes nothing).
fn map_data(ex: &mut Explorer, stage: &str) -> Vec<f32> {
    ex.work(f64::INFINITY, false)
        .map_err(error_message)
        .unwrap();
    let m = ex
        .window(stage, 0, 0, usize::MAX, usize::MAX)
        .map_err(error_message)
        .expect("map");
    get(&m, "data")
        .dyn_into::<js_sys::Float32Array>()
        .expect("Float32Array")
        .to_vec()
}

/// `ex.update` with a patch written as JSON.
fn update(ex: &mut Explorer, patch: &str) -> Result<(), String> {
    frame(ex, patch).map(|_| ())
}

/// `update(patch)`: the frame it returns.
fn frame(ex: &mut Explorer, patch: &str) -> Result<JsValue, String> {
    let value = js_sys::JSON::parse(patch).expect("a JSON patch");
    ex.update(value).map_err(error_message)
}

fn view(ex: &Explorer) -> JsValue {
    ex.view().map_err(error_message).expect("view")
}

fn strings(v: &JsValue) -> Vec<String> {
    js_sys::Array::from(v)
        .iter()
        .filter_map(|t| t.as_string())
        .collect()
}

fn sentence(text: &str) -> Explorer {
    let mut ex = Explorer::new();
    ex.set_text(text).map_err(error_message).expect("set_text");
    ex
}

#[wasm_bindgen_test]
fn set_text_reports_tokens_and_truncation() {
    let mut ex = Explorer::new();
    let info = ex
        .set_text("This movie is not good!")
        .map_err(error_message)
        .unwrap();
    let tokens: Vec<String> = js_sys::Array::from(&get(&info, "tokens"))
        .iter()
        .filter_map(|t| t.as_string())
        .collect();
    assert_eq!(tokens, ["this", "movie", "is", "not", "good", "!"]);
    assert_eq!(get(&info, "truncated").as_bool(), Some(false));
    let long = "word ".repeat(2100);
    let info = ex.set_text(&long).map_err(error_message).unwrap();
    assert_eq!(num(&info, "total"), 2100.0);
    assert_eq!(get(&info, "truncated").as_bool(), Some(true));
    assert_eq!(js_sys::Array::from(&get(&info, "tokens")).length(), 2048);
}

#[wasm_bindgen_test]
fn a_render_computes_the_shown_head_and_work_the_others() {
    let mut ex = sentence("the film was not bad at all");
    update(&mut ex, r#"{"heads": 8, "head": 3}"#).unwrap();
    ex.render(canvases(5, 300, 300), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    assert_eq!(ex.pending_heads(), 7, "only the shown head is computed");
    let maps = |ex: &Explorer| num(&ex.recomputations().map_err(error_message).unwrap(), "maps");
    assert_eq!(maps(&ex), 1.0);
    // Work of no time still does one piece (here: the next head's maps, 7 tokens being one
    // piece), and heads done count only whole heads; a long call does the rest and the output.
    let step = ex.work(0.0, true).map_err(error_message).unwrap();
    assert_eq!((num(&step, "done"), num(&step, "total")), (1.0, 8.0));
    assert_eq!(maps(&ex), 2.0);
    let step = ex.work(1e9, true).map_err(error_message).unwrap();
    assert_eq!(num(&step, "done"), 8.0);
    assert_eq!(get(&step, "finished").as_bool(), Some(true));
    assert_eq!(ex.pending_heads(), 0);
    assert_eq!(maps(&ex), 8.0, "each head once");
    // Every head cached: the all-heads view and another head recompute nothing.
    ex.render_all_heads(canvases(8, 200, 200), 10.0, "")
        .map_err(error_message)
        .unwrap();
    update(&mut ex, r#"{"head": 6}"#).unwrap();
    ex.render(canvases(5, 300, 300), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    assert_eq!(maps(&ex), 8.0);
    // The untrained model predicts nothing, so it needs no other head.
    assert!(!ex.predicts());
}

#[wasm_bindgen_test]
fn render_draws_every_stage_and_hit_testing_finds_cells() {
    let mut ex = sentence("the film was not bad at all");
    let stages = js_sys::Array::from(&get(&view(&ex), "stages"));
    let labels: Vec<String> = stages
        .iter()
        .map(|s| get(&s, "label").as_string().unwrap())
        .collect();
    assert_eq!(labels, ["A", "shift(A)", "D", "G", "A′"]);
    let ids: Vec<String> = stages
        .iter()
        .map(|s| get(&s, "id").as_string().unwrap())
        .collect();
    assert_eq!(ids, ["a", "shifted", "d", "g", "fused"]);
    let cs = canvases(5, 400, 360);
    let timings = ex
        .render(cs.clone(), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    assert!(num(&timings, "compute_ms") >= 0.0 && num(&timings, "draw_ms") >= 0.0);
    for (i, canvas) in cs.iter().enumerate() {
        let rect = ex.cell_rect(i, 3, 4).map_err(error_message).unwrap();
        let (x, y) = (
            num(&rect, "x") + num(&rect, "width") / 2.0,
            num(&rect, "y") + num(&rect, "height") / 2.0,
        );
        // The centre of cell (3, 4) hits that cell, and it is painted (not the background).
        assert_eq!(ex.hit(i, x, y), Some(vec![3, 4]));
        let ctx = context_2d(&canvas);
        let pixel = ctx.get_image_data(x, y, 1.0, 1.0).unwrap().data().to_vec();
        assert_eq!(pixel[3], 255, "stage {i}: opaque");
        assert!(
            pixel[..3] != [255, 255, 255],
            "stage {i}: cell is painted, got {pixel:?}"
        );
    }
    assert_eq!(ex.hit(0, -5.0, -5.0), None);
}

#[wasm_bindgen_test]
fn the_shift_changes_later_stages_but_not_a() {
    let mut ex = sentence("one two three four five");
    let a = map_data(&mut ex, "a");
    let fused = map_data(&mut ex, "fused");
    update(&mut ex, r#"{"shift": 2}"#).unwrap();
    assert_eq!(map_data(&mut ex, "a"), a);
    assert_ne!(map_data(&mut ex, "fused"), fused);
    let recomputed = ex.recomputations().map_err(error_message).unwrap();
    assert_eq!(num(&recomputed, "maps"), 1.0, "A was computed once");
    update(&mut ex, r#"{"heads": 8}"#).unwrap();
    assert_ne!(map_data(&mut ex, "a"), a);
}

#[wasm_bindgen_test]
fn a_cell_carries_the_arithmetic_of_the_fused_map() {
    let mut ex = sentence("not good , not bad");
    update(&mut ex, r#"{"alpha": 1.5, "beta": 3.0, "gamma": -0.5}"#).unwrap();
    // Hovering computes nothing: the maps come from work (or a render) first.
    assert!(ex.cell(3, 1).unwrap().is_undefined());
    ex.work(f64::INFINITY, false)
        .map_err(error_message)
        .unwrap();
    let cell = ex.cell(3, 1).map_err(error_message).unwrap();
    assert_eq!(get(&cell, "query").as_string().as_deref(), Some("not"));
    assert_eq!(get(&cell, "key").as_string().as_deref(), Some("good"));
    let values = get(&cell, "values");
    let (a, d, g, fused) = (
        num(&values, "a"),
        num(&values, "d"),
        num(&values, "g"),
        num(&values, "fused"),
    );
    assert!((fused - (a + g * d)).abs() < 1e-6);
    assert_eq!(num(&get(&cell, "gate"), "beta"), 3.0);
    assert!((num(&get(&cell, "row_sum"), "a") - 1.0).abs() < 1e-5);
    assert!(ex.cell(99, 0).unwrap().is_undefined());
}

#[wasm_bindgen_test]
fn bad_input_is_a_readable_error_and_the_handle_keeps_working() {
    let mut ex = sentence("still works");
    assert!(update(&mut ex, r#"{"mechanism": "magic"}"#)
        .unwrap_err()
        .starts_with("mechanism: unknown \"magic\""));
    assert!(update(&mut ex, r#"{"heads": 3}"#)
        .unwrap_err()
        .starts_with("heads:"));
    let msg = update(&mut ex, r#"{"shiftt": 2}"#).unwrap_err();
    assert_eq!(msg, "shiftt: not a setting (did you mean \"shift\"?)");
    assert!(update(&mut ex, r#"{"shift": "two"}"#)
        .unwrap_err()
        .contains("shift"));
    assert!(update(&mut ex, r#"{"head": 0}"#)
        .unwrap_err()
        .starts_with("head:"));
    // One bad value in a patch changes nothing, not even the good ones beside it.
    let before = ex.settings().map_err(error_message).unwrap();
    assert!(update(&mut ex, r#"{"shift": 5, "head": 9}"#).is_err());
    assert_eq!(
        num(&ex.settings().map_err(error_message).unwrap(), "shift"),
        num(&before, "shift")
    );
    assert!(error_message(ex.load_spec("{").unwrap_err()).contains("not valid JSON"));
    let msg = error_message(ex.load_spec(r#"{"mechanism": "standard", "heads": 1, "causal": false, "x": [[1, 2]], "w_q": [[1]], "w_k": [[1]], "w_v": [[1]], "w_o": [[1]]}"#).unwrap_err());
    assert!(msg.starts_with("x:"), "{msg}");
    ex.render(canvases(5, 300, 300), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    assert_eq!(map_data(&mut ex, "a").len(), 4);
}

#[wasm_bindgen_test]
fn every_mechanism_renders() {
    for mechanism in [
        "standard",
        "shift_diff",
        "diff_transformer",
        "input_diff",
        "cosine",
        "local",
    ] {
        let mut ex = sentence("a sentence of six tokens");
        update(&mut ex, &format!(r#"{{"mechanism": "{mechanism}"}}"#)).unwrap();
        let v = view(&ex);
        let n = js_sys::Array::from(&get(&v, "stages")).length() as usize;
        ex.render(canvases(n, 300, 300), 12.0, vec![])
            .map_err(error_message)
            .unwrap();
        let heads: Vec<f64> = js_sys::Array::from(&get(&v, "head_choices"))
            .iter()
            .filter_map(|h| h.as_f64())
            .collect();
        assert!(heads.contains(&4.0), "{mechanism}: {heads:?}");
        ex.render_all_heads(canvases(4, 200, 200), 10.0, "")
            .map_err(error_message)
            .unwrap();
        let readout = get(&view(&ex), "readout").as_string().unwrap_or_default();
        assert_eq!(
            mechanism == "diff_transformer",
            readout.starts_with("λ = "),
            "{readout}"
        );
    }
}

#[wasm_bindgen_test]
fn exports_are_json_and_svg() {
    let mut ex = sentence("export me");
    let json: serde_json::Value =
        serde_json::from_str(&ex.export_json().map_err(error_message).unwrap()).unwrap();
    // A spec (it opens again with load_spec), with the stages for reading.
    assert_eq!(json["heads"], 4);
    assert_eq!(json["tokens"], serde_json::json!(["export", "me"]));
    assert_eq!(json["stages"]["heads"].as_array().map(Vec::len), Some(4));
    assert!(json["stages"]["heads"][0]["fused"].is_array());
    let mut again = Explorer::new();
    again
        .load_spec(&ex.export_json().map_err(error_message).unwrap())
        .map_err(error_message)
        .unwrap();
    assert_eq!(map_data(&mut again, "fused"), map_data(&mut ex, "fused"));
    let svg = ex.export_svg("fused").map_err(error_message).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("A′"));
    assert!(ex
        .export_panel_svg()
        .map_err(error_message)
        .unwrap()
        .contains("shift(A)"));
    assert!(error_message(ex.export_svg("a1").unwrap_err()).starts_with("stage:"));
}

#[wasm_bindgen_test]
fn a_spec_replaces_the_sentence_until_cleared() {
    let mut ex = sentence("typed words");
    let spec = r#"{"mechanism": "cosine", "heads": 1, "causal": false, "tau": 2.0,
        "x": [[1, 0], [0, 1], [1, 1]], "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]],
        "w_v": [[1, 0], [0, 1]], "w_o": [[1, 0], [0, 1]]}"#;
    ex.load_spec(spec).map_err(error_message).unwrap();
    let v = view(&ex);
    assert_eq!(get(&v, "spec").as_bool(), Some(true));
    assert_eq!(js_sys::Array::from(&get(&v, "head_choices")).length(), 1);
    assert_eq!(map_data(&mut ex, "a").len(), 9);
    let info = ex.clear_spec().map_err(error_message).unwrap();
    assert_eq!(js_sys::Array::from(&get(&info, "tokens")).length(), 2);
    assert_eq!(get(&view(&ex), "spec").as_bool(), Some(false));
}

#[path = "../../tests/bits/cases.rs"]
mod bits_cases;

/// The wasm build under test (baseline, or simd128 when built with
/// `-C target-feature=+simd128`, as `scripts/check` also runs it) gives every map, output and
/// `exp` the bits of a native run, committed in `tests/bits/golden.txt` (`tests/bits.rs`
/// checks the native side); and in the SIMD build the scalar reference agrees too.
#[wasm_bindgen_test]
fn every_map_has_the_bits_of_a_native_run() {
    use diffattn::engine::kernels;
    let golden: Vec<&str> = include_str!("../../tests/bits/golden.txt")
        .lines()
        .collect();
    let got = bits_cases::lines();
    assert_eq!(got.len(), golden.len(), "cases added or removed");
    for (got, want) in got.iter().zip(&golden) {
        assert_eq!(got, want, "{} path", kernels::active_path());
    }
    if kernels::active_path() != "portable" {
        kernels::force_portable(true);
        let portable = bits_cases::lines();
        kernels::force_portable(false);
        assert_eq!(portable.len(), golden.len());
        for (got, want) in portable.iter().zip(&golden) {
            assert_eq!(got, want, "portable path");
        }
    }
}

#[wasm_bindgen_test]
fn a_trained_model_loads_brings_its_settings_and_predicts() {
    let mut ex = sentence("a wonderful , moving and beautifully acted film");
    assert!(
        ex.prediction()
            .map_err(error_message)
            .unwrap()
            .is_undefined(),
        "untrained: no prediction"
    );
    let info = ex
        .load_model(include_bytes!("../../weights/shift_diff.bin"))
        .map_err(error_message)
        .unwrap();
    assert_eq!(get(&info, "trained").as_bool(), Some(true));
    assert_eq!(
        get(&info, "mechanism").as_string().as_deref(),
        Some("shift_diff")
    );
    let settings = ex.settings().map_err(error_message).unwrap();
    assert_eq!(
        num(&settings, "heads"),
        num(&get(&info, "trained_with"), "heads")
    );
    assert_eq!(get(&settings, "gate_learned").as_bool(), Some(true));
    let p = ex.prediction().map_err(error_message).unwrap();
    let label = get(&p, "label").as_string().unwrap();
    assert!(label == "positive" || label == "negative");
    let prob = num(&p, "probability");
    assert!((0.5..=1.0).contains(&prob), "{prob}");
    ex.render(canvases(5, 300, 300), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    // A corrupt file is an error naming the weights; the trained model stays.
    let msg = error_message(ex.load_model(&[1, 2, 3]).unwrap_err());
    assert!(msg.starts_with("weights:"), "{msg}");
    assert_eq!(
        get(&ex.model_info().map_err(error_message).unwrap(), "trained").as_bool(),
        Some(true)
    );
    ex.use_untrained().map_err(error_message).unwrap();
    assert!(ex
        .prediction()
        .map_err(error_message)
        .unwrap()
        .is_undefined());
}

#[wasm_bindgen_test]
fn the_view_says_what_to_draw_without_the_page_knowing_the_mechanism() {
    let mut ex = sentence("the cat sat");
    let v = view(&ex);
    assert_eq!(
        strings(&get(&v, "parameters")),
        ["shift", "difference", "fill", "renormalize", "gate"]
    );
    assert_eq!(get(&v, "final_stage").as_string().as_deref(), Some("fused"));
    assert_eq!(num(&v, "head_width"), 16.0, "d = 64 over 4 heads");
    assert_eq!(get(&v, "masked").as_bool(), Some(false));
    update(&mut ex, r#"{"mechanism": "input_diff", "causal": true}"#).unwrap();
    let v = view(&ex);
    assert_eq!(strings(&get(&v, "parameters")), Vec::<String>::new());
    assert_eq!((num(&v, "tokens"), num(&v, "keys")), (3.0, 2.0));
    assert_eq!(get(&v, "masked").as_bool(), Some(true));
    let labels = ex.labels().map_err(error_message).unwrap();
    assert_eq!(strings(&get(&labels, "keys")), ["the→cat", "cat→sat"]);
    // The defaults and the registry come from Rust.
    let defaults = diffattn_web::defaults().map_err(error_message).unwrap();
    assert_eq!(
        get(&defaults, "mechanism").as_string().as_deref(),
        Some("shift_diff")
    );
    assert_eq!(num(&defaults, "head"), 1.0, "heads count from 1");
    let all = js_sys::Array::from(&diffattn_web::mechanisms().map_err(error_message).unwrap());
    assert_eq!(
        all.length() as usize,
        diffattn::engine::MechanismKind::ALL.len(),
        "the page has every mechanism of the registry"
    );
}

/// `labels()` hands over the same object while the labels stay as they are (the page asks on
/// every render, and a slider's tick changes no label), and new ones when the keys or the
/// words change.
#[wasm_bindgen_test]
fn labels_are_the_same_object_until_they_change() {
    let mut ex = sentence("the cat sat");
    let first = ex.labels().map_err(error_message).unwrap();
    update(&mut ex, r#"{"shift": 2}"#).unwrap();
    let again = ex.labels().map_err(error_message).unwrap();
    assert!(
        js_sys::Object::is(&first, &again),
        "a shift keeps the labels"
    );
    update(&mut ex, r#"{"mechanism": "input_diff"}"#).unwrap();
    let steps = ex.labels().map_err(error_message).unwrap();
    assert!(
        !js_sys::Object::is(&first, &steps),
        "steps between tokens are new keys"
    );
    assert_eq!(strings(&get(&steps, "keys")), ["the→cat", "cat→sat"]);
    ex.set_text("dogs chase cats")
        .map_err(error_message)
        .unwrap();
    let typed = ex.labels().map_err(error_message).unwrap();
    assert_eq!(strings(&get(&typed, "rows")), ["dogs", "chase", "cats"]);
    assert_eq!(strings(&get(&typed, "keys")), ["dogs→chase", "chase→cats"]);
}

#[wasm_bindgen_test]
fn lambda_is_a_setting_and_goes_back_to_the_learned_one() {
    let mut ex = sentence("the cat sat on the mat");
    update(&mut ex, r#"{"mechanism": "diff_transformer_v2"}"#).unwrap();
    map_data(&mut ex, "diff");
    let v = view(&ex);
    assert_eq!(strings(&get(&v, "parameters")), ["lambda"]);
    assert_eq!(get(&v, "lambda_per_token").as_bool(), Some(true));
    assert_eq!(get(&v, "lambda_learned").as_bool(), Some(true));
    let stages = js_sys::Array::from(&get(&v, "stages"));
    let columns: Vec<String> = stages
        .iter()
        .map(|s| get(&s, "columns").as_string().unwrap())
        .collect();
    assert_eq!(columns, ["keys", "keys", "heads", "keys"]);
    let learned = map_data(&mut ex, "lambda");
    assert_eq!(learned.len(), 6 * 4, "tokens × heads");
    update(&mut ex, r#"{"lambda": 0.25}"#).unwrap();
    assert!(map_data(&mut ex, "lambda").iter().all(|&l| l == 0.25));
    let settings = ex.settings().map_err(error_message).unwrap();
    assert_eq!(
        (
            num(&settings, "lambda"),
            get(&settings, "lambda_learned").as_bool()
        ),
        (0.25, Some(false))
    );
    let back = ex.reset_lambda().map_err(error_message).unwrap();
    assert_eq!(get(&back, "lambda_learned").as_bool(), Some(true));
    assert_eq!(map_data(&mut ex, "lambda"), learned);
    assert_eq!(
        strings(
            &ex.column_labels("lambda")
                .map_err(error_message)
                .unwrap()
                .into_iter()
                .map(JsValue::from)
                .collect::<js_sys::Array>()
        ),
        ["1", "2", "3", "4"]
    );
    update(&mut ex, r#"{"mechanism": "hierarchical", "segment": 2}"#).unwrap();
    assert_eq!(
        num(&ex.settings().map_err(error_message).unwrap(), "segment"),
        2.0
    );
    assert_eq!(map_data(&mut ex, "segments").len(), 6 * 3);
    assert!(
        update(&mut ex, r#"{"segmnt": 2}"#)
            .unwrap_err()
            .contains("segment"),
        "unknown keys name the closest"
    );
}

#[wasm_bindgen_test]
fn a_captured_layer_opens_from_its_bytes_with_its_layout() {
    let mut ex = sentence("hello");
    let bytes =
        include_bytes!("../../tests/golden/official_v2_L11_H2_kv1_hd8_d32.spec.safetensors");
    let tokens = ex.load_spec_bytes(bytes).map_err(error_message).unwrap();
    assert_eq!(num(&tokens, "total"), 11.0);
    let v = view(&ex);
    assert_eq!(get(&v, "spec").as_bool(), Some(true));
    assert_eq!(
        strings(&get(&v, "mechanism_choices")),
        ["diff_transformer_v2"]
    );
    let layer = get(&v, "layer");
    assert_eq!(
        (
            num(&layer, "heads"),
            num(&layer, "kv_heads"),
            num(&layer, "head_dim")
        ),
        (2.0, 1.0, 8.0)
    );
    assert_eq!(js_sys::Array::from(&get(&v, "head_choices")).length(), 1);
    assert!(update(&mut ex, r#"{"heads": 1}"#)
        .unwrap_err()
        .contains("heads"));
    // Bytes that are neither JSON nor safetensors leave the layer drawn.
    let err = ex
        .load_spec_bytes(&[0xff, 0xfe, 0x00])
        .map_err(error_message)
        .unwrap_err();
    assert!(err.contains("neither JSON"), "{err}");
    assert_eq!(get(&view(&ex), "spec").as_bool(), Some(true));
}

#[wasm_bindgen_test]
fn a_window_is_the_part_of_the_map_asked_for() {
    let mut ex = sentence("one two three four five six");
    let whole = map_data(&mut ex, "d");
    let w = ex.window("d", 2, 1, 2, 3).map_err(error_message).unwrap();
    assert_eq!((num(&w, "rows"), num(&w, "cols")), (2.0, 3.0));
    let data = get(&w, "data")
        .dyn_into::<js_sys::Float32Array>()
        .unwrap()
        .to_vec();
    // Row 2, columns 1..4 of a 6 x 6 map, then row 3.
    assert_eq!(data[..3], whole[2 * 6 + 1..2 * 6 + 4]);
    assert_eq!(data[3..], whole[3 * 6 + 1..3 * 6 + 4]);
}

#[wasm_bindgen_test]
fn moving_away_from_a_trained_model_is_reported_by_name() {
    let mut ex = sentence("a fine film");
    ex.load_model(include_bytes!("../../weights/shift_diff.bin"))
        .map_err(error_message)
        .unwrap();
    assert_eq!(
        strings(&get(&view(&ex), "moved_away")),
        Vec::<String>::new()
    );
    update(&mut ex, r#"{"shift": 3, "causal": true}"#).unwrap();
    assert_eq!(strings(&get(&view(&ex), "moved_away")), ["causal", "shift"]);
}

#[wasm_bindgen_test]
fn a_viewport_draws_part_of_the_map_and_hits_whole_map_cells() {
    // 40 tokens, causal: zoom into rows 20..28 and keys 10..18.
    let text: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let mut ex = sentence(&text.join(" "));
    update(&mut ex, r#"{"causal": true}"#).unwrap();
    ex.set_viewport(20, 10, 8, 8);
    let v = ex.viewport().map_err(error_message).unwrap();
    assert_eq!(
        ["row", "col", "rows", "cols", "total_rows", "total_cols"].map(|k| num(&v, k)),
        [20.0, 10.0, 8.0, 8.0, 40.0, 40.0]
    );
    let cs = canvases(5, 400, 360);
    ex.render(cs.clone(), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    let a = map_data(&mut ex, "a");
    for i in 0..5 {
        // A whole-map cell inside the viewport has a rectangle, and its centre hits it.
        let rect = ex.cell_rect(i, 22, 13).map_err(error_message).unwrap();
        let (x, y) = (
            num(&rect, "x") + num(&rect, "width") / 2.0,
            num(&rect, "y") + num(&rect, "height") / 2.0,
        );
        assert_eq!(ex.hit(i, x, y), Some(vec![22, 13]));
        // Eight cells across: each is an eighth of the plot, far larger than a 40th.
        assert!(num(&rect, "width") >= 30.0, "{}", num(&rect, "width"));
        // A cell outside it has none.
        assert!(ex
            .cell_rect(i, 5, 5)
            .map_err(error_message)
            .unwrap()
            .is_undefined());
    }
    // The pixels of the A map at (22, 13) are the colour of that whole-map value: compare
    // with the same cell drawn in a whole-map render with the same scale.
    let ctx = context_2d(&cs[0]);
    let rect = ex.cell_rect(0, 22, 13).map_err(error_message).unwrap();
    let zoomed = ctx
        .get_image_data(num(&rect, "x") + 2.0, num(&rect, "y") + 2.0, 1.0, 1.0)
        .unwrap()
        .data()
        .to_vec();
    assert!(a[22 * 40 + 13] > 0.0);
    ex.set_viewport(0, 0, 0, 0);
    ex.render(cs.clone(), 12.0, vec![])
        .map_err(error_message)
        .unwrap();
    let rect = ex.cell_rect(0, 22, 13).map_err(error_message).unwrap();
    assert!(num(&rect, "width") < 10.0);
    let whole = ctx
        .get_image_data(
            num(&rect, "x") + num(&rect, "width") / 2.0,
            num(&rect, "y") + num(&rect, "height") / 2.0,
            1.0,
            1.0,
        )
        .unwrap()
        .data()
        .to_vec();
    assert_eq!(zoomed, whole, "the colour scale is the whole map's");
    // A viewport past the end of a shorter sentence is moved back inside it.
    ex.set_viewport(100, 100, 8, 8);
    let v = ex.viewport().map_err(error_message).unwrap();
    assert_eq!([num(&v, "row"), num(&v, "col")], [32.0, 32.0]);
}

#[wasm_bindgen_test]
fn the_overview_fills_its_canvas_with_the_whole_map() {
    let text: Vec<String> = (0..64).map(|i| format!("w{i}")).collect();
    let mut ex = sentence(&text.join(" "));
    update(&mut ex, r#"{"causal": true}"#).unwrap();
    ex.set_viewport(8, 8, 16, 16);
    ex.work(f64::INFINITY, false)
        .map_err(error_message)
        .unwrap();
    let c = canvases(1, 128, 128).remove(0);
    ex.render_overview(c.clone(), "")
        .map_err(error_message)
        .unwrap();
    let ctx = context_2d(&c);
    let data = ctx
        .get_image_data(0.0, 0.0, 128.0, 128.0)
        .unwrap()
        .data()
        .to_vec();
    let pixel = |x: usize, y: usize| data[(y * 128 + x) * 4..(y * 128 + x) * 4 + 4].to_vec();
    // Every pixel is drawn (opaque), and the top-right corner, above the diagonal of a causal
    // map, is hatched grey.
    assert!(data.chunks_exact(4).all(|p| p[3] == 255));
    let corner = pixel(127, 0);
    assert_eq!(corner[0], corner[1]);
    assert_eq!(corner[1], corner[2]);
    assert!(ex.render_overview(c, "nope").is_err());
}

#[wasm_bindgen_test]
fn a_change_returns_one_frame_the_settings_and_the_view_with_the_learned_lambda_before_any_map() {
    let mut ex = sentence("the cat sat on the mat");
    let f = frame(
        &mut ex,
        r#"{"mechanism": "diff_transformer_v2", "shift": 3}"#,
    )
    .unwrap();
    let (settings, view) = (get(&f, "settings"), get(&f, "view"));
    assert_eq!(
        get(&settings, "mechanism").as_string().as_deref(),
        Some("diff_transformer_v2")
    );
    assert_eq!(num(&settings, "shift"), 3.0);
    assert_eq!(get(&settings, "lambda_learned").as_bool(), Some(true));
    assert_eq!(strings(&get(&view, "parameters")), ["lambda"]);
    let maps = num(&ex.recomputations().map_err(error_message).unwrap(), "maps");
    assert_eq!(maps, 0.0, "the frame computes no map");
    // V2's learned λ is the mean of its λ table, known before any map is drawn: the same
    // number the table drawn after gives.
    let shown = num(&settings, "lambda") as f32;
    let table = map_data(&mut ex, "lambda");
    let mean = table.iter().sum::<f32>() / table.len() as f32;
    assert!(
        (shown - mean).abs() < 1e-6,
        "{shown} against the table's mean {mean}"
    );
    assert_eq!(
        get(&view, "readout").as_string().unwrap(),
        format!("λ̄ = {shown:.4}")
    );
    // A chosen λ, then `null`: back to the learned one, in the next frame.
    let f = frame(&mut ex, r#"{"lambda": 0.25}"#).unwrap();
    let s = get(&f, "settings");
    assert_eq!(
        (num(&s, "lambda"), get(&s, "lambda_learned").as_bool()),
        (0.25, Some(false))
    );
    assert_eq!(
        strings(&get(&get(&f, "view"), "moved_away")),
        Vec::<String>::new()
    );
    let f = frame(&mut ex, r#"{"lambda": null}"#).unwrap();
    let s = get(&f, "settings");
    assert_eq!(get(&s, "lambda_learned").as_bool(), Some(true));
    assert_eq!(num(&s, "lambda") as f32, shown);
    // A refused patch changes nothing; `frame()` reads what the engine has.
    assert!(frame(&mut ex, r#"{"shift": 4, "head": 99}"#).is_err());
    assert_eq!(
        num(
            &get(
                &ex.current_frame().map_err(error_message).unwrap(),
                "settings"
            ),
            "shift"
        ),
        3.0
    );
}

#[wasm_bindgen_test]
fn the_model_views_statistics_and_cells_come_once_a_head_is_computed() {
    const PER_HEAD: usize = 9;
    let text = "the cat sat on the mat because it was tired";
    let mut ex = sentence(text);
    update(
        &mut ex,
        r#"{"mechanism": "standard", "heads": 4, "causal": true}"#,
    )
    .unwrap();
    let n = 10usize;
    // Nothing computed yet: nine zeros per head (rows 0), and no cells drawn.
    let before = ex.head_statistics("a").map_err(error_message).unwrap();
    assert_eq!(before.len(), 4 * PER_HEAD);
    assert!(before.iter().all(|&x| x == 0.0));
    let c = canvases(1, 40, 40).remove(0);
    assert!(!ex
        .render_head_cells(c.clone(), "a", 2)
        .map_err(error_message)
        .unwrap());
    // Every head computed: each head's figures, read back against its map (the shown head's,
    // through a window): the entropy of each row, the mass on the first token, the cell
    // before the diagonal.
    ex.work(f64::INFINITY, true).map_err(error_message).unwrap();
    let stats = ex.head_statistics("a").map_err(error_message).unwrap();
    let map = map_data(&mut ex, "a");
    assert_eq!(map.len(), n * n);
    let rows: Vec<&[f32]> = map.chunks(n).collect();
    let entropy = rows
        .iter()
        .map(|r| {
            -r.iter()
                .filter(|&&p| p > 0.0)
                .map(|&p| f64::from(p) * f64::from(p).ln())
                .sum::<f64>()
        })
        .sum::<f64>()
        / n as f64;
    let sink = rows.iter().map(|r| f64::from(r[0])).sum::<f64>() / n as f64;
    let previous = (1..n).map(|i| f64::from(rows[i][i - 1])).sum::<f64>() / (n - 1) as f64;
    let head = &stats[..PER_HEAD];
    assert!(
        (f64::from(head[0]) - entropy).abs() < 1e-4,
        "{} vs {entropy}",
        head[0]
    );
    assert!(
        (f64::from(head[1]) - sink).abs() < 1e-5,
        "{} vs {sink}",
        head[1]
    );
    assert!(
        (f64::from(head[2]) - previous).abs() < 1e-5,
        "{} vs {previous}",
        head[2]
    );
    assert_eq!(head[3], 0.0, "causal: no next token");
    assert_eq!(
        (head[7], head[8]),
        (0.0, n as f32),
        "no negative cell; every row counted"
    );
    assert_eq!(ex.sink_keys(), vec![0]);
    // Head 3's cells fill the canvas, the causal mask hatched grey in the top-right corner.
    assert!(ex
        .render_head_cells(c.clone(), "a", 2)
        .map_err(error_message)
        .unwrap());
    let data = context_2d(&c)
        .get_image_data(0.0, 0.0, 40.0, 40.0)
        .unwrap()
        .data()
        .to_vec();
    assert!(data.chunks_exact(4).all(|p| p[3] == 255));
    let corner = &data[39 * 4..40 * 4];
    assert!(
        corner[0] == corner[1] && corner[1] == corner[2],
        "{corner:?}"
    );
    assert!(ex.head_statistics("nope").is_err());
}
