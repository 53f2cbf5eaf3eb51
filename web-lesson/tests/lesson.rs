//! Browser tests of the retrieval lesson's wasm module (`diffattn_lesson::Lesson`), run by
//! `wasm-bindgen-test-runner` in headless Chromium (`scripts/check`, or
//! `cargo test --target wasm32-unknown-unknown -p diffattn-lesson --test lesson`). The lesson on
//! the page is tested end to end by `tests/e2e/lesson.test.mjs`.
#![cfg(target_arch = "wasm32")]

use diffattn_lesson::Lesson;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "../../web/tests/support/mod.rs"]
mod support;

use support::{canvases, context_2d, error_message, get, num};

/// The lesson's handle (`diffattn_lesson::Lesson`, www/explorer/lesson.js): a retrieval file
/// loads, `ask()` gives the library's answer and the same two shares as
/// `diffattn::retrieval::ask` (what `diffattn retrieve` prints), a knob moves the shares, a
/// bad file and an unknown knob are errors, and `render` marks the answer on both axes.
#[wasm_bindgen_test]
fn the_lesson_handle_asks_with_the_library_measure_and_marks_the_answer() {
    const FILE: &[u8] = include_bytes!("../../weights/retrieval/shift_diff.bin");
    const TEXT: &str = "The room of Anna is 42. The film was long but never dull. The room of Ben is 15. What is the room of Anna?";
    let mut lesson = Lesson::new();
    let bad = lesson.load("broken", &FILE[..100]).map_err(error_message);
    assert!(bad.unwrap_err().starts_with("broken: retrieval weights"));
    lesson
        .load("m", FILE)
        .map_err(error_message)
        .expect("loads");
    lesson.set_text(TEXT);
    let asked = lesson.ask().map_err(error_message).expect("asks");
    let model = js_sys::Array::from(&get(&asked, "models")).get(0);
    let layers = js_sys::Array::from(&get(&model, "layers"));
    let last = layers.get(layers.length() - 1);
    // The library's numbers, as the command line computes them.
    let file = diffattn::model::RetrievalFile::from_bytes(FILE).expect("file");
    let lib = diffattn::retrieval::ask(&file.model, TEXT).expect("ask");
    let shares = lib.measure.as_ref().expect("measure").retrieving();
    assert_eq!(
        get(&model, "answer").as_string().unwrap(),
        lib.retrieval.answer.to_string()
    );
    assert_eq!(num(&last, "answer"), shares.answer);
    assert_eq!(num(&last, "noise"), shares.noise);
    let roles = js_sys::Array::from(&get(&asked, "roles"));
    let answer_at = lib.layout.as_ref().unwrap().answer_tokens()[0];
    assert_eq!(roles.get(answer_at as u32).as_string().unwrap(), "answer");
    // The shift knob: k = 0 turns the difference off, and the shares move.
    assert!(lesson.set_knob("m", 2, "lambda", 0.0).is_err());
    lesson
        .set_knob("m", 2, "shift", 0.0)
        .map_err(error_message)
        .expect("knob");
    let moved = lesson.ask().map_err(error_message).expect("asks");
    let m2 = js_sys::Array::from(&get(&moved, "models")).get(0);
    let l2 = js_sys::Array::from(&get(&m2, "layers"));
    assert_ne!(num(&l2.get(1), "answer"), shares.answer);
    // The maps of layer 2, with the answer marked on both axes in its colour.
    let cs = canvases(4, 400, 400);
    let marks = lesson
        .render("m", 2, cs.clone(), 12.0, "A′")
        .map_err(error_message)
        .expect("render");
    let marks = js_sys::Array::from(&marks);
    let ctx = context_2d(&cs[0]);
    let mut seen = 0;
    for m in marks.iter() {
        if get(&m, "role").as_string().unwrap() != "answer" {
            continue;
        }
        seen += 1;
        let x = num(&m, "x") + num(&m, "width") / 2.0;
        let y = num(&m, "y") + num(&m, "height") / 2.0;
        let px = ctx
            .get_image_data(x.floor(), y.floor(), 1.0, 1.0)
            .unwrap()
            .data();
        assert_eq!(&px[..3], &[214, 39, 40]);
    }
    assert_eq!(seen, 2);
    assert!(lesson.render("m", 3, cs, 12.0, "").is_err());
}

/// `spec_json(model)`: every layer of the model over the lesson's text as one multi-layer spec
/// (DESIGN.md §7.11), the library's `retrieval::specs` as `diffattn retrieve --spec` writes it:
/// it parses, has the model's layer count and each layer's heads, carries the tokens and a
/// moved knob, and each layer reads back through the spec reader to the forward's final maps.
#[wasm_bindgen_test]
fn spec_json_is_every_layer_of_the_model_over_the_text() {
    const FILES: [(&str, &[u8]); 2] = [
        (
            "shift_diff",
            include_bytes!("../../weights/retrieval/shift_diff.bin"),
        ),
        (
            "diff_transformer_v2",
            include_bytes!("../../weights/retrieval/diff_transformer_v2.bin"),
        ),
    ];
    const TEXT: &str = "The room of Anna is 42. The film was long but never dull. The room of Ben is 15. What is the room of Anna?";
    let mut lesson = Lesson::new();
    for (name, bytes) in FILES {
        lesson
            .load(name, bytes)
            .map_err(error_message)
            .expect("loads");
    }
    lesson.set_text(TEXT);
    assert!(lesson.spec_json("nope").is_err());
    for (name, bytes) in FILES {
        let text = lesson
            .spec_json(name)
            .map_err(error_message)
            .expect("a spec");
        let json = js_sys::JSON::parse(&text).expect("JSON");
        let layers = js_sys::Array::from(&get(&json, "layers"));
        let file = diffattn::model::RetrievalFile::from_bytes(bytes).expect("file");
        assert_eq!(layers.length() as usize, file.model.layers.len());
        let asked = diffattn::retrieval::ask(&file.model, TEXT).expect("ask");
        for (l, layer) in file.model.layers.iter().enumerate() {
            let entry = layers.get(l as u32);
            assert_eq!(num(&entry, "heads") as usize, layer.heads);
            assert_eq!(get(&entry, "causal").as_bool(), Some(true));
            let tokens = js_sys::Array::from(&get(&entry, "tokens"));
            assert_eq!(tokens.length() as usize, asked.tokens.len());
            let (spec, _) =
                diffattn::spec::parse_spec_bytes_layer(text.as_bytes(), l).expect("reads");
            let maps = spec.run().expect("runs");
            assert_eq!(
                maps.final_maps(),
                asked.retrieval.stages[l].final_maps(),
                "{name} layer {}",
                l + 1
            );
        }
    }
    // A moved shift is in the file.
    lesson
        .set_knob("shift_diff", 2, "shift", 3.0)
        .map_err(error_message)
        .expect("knob");
    let moved = js_sys::JSON::parse(&lesson.spec_json("shift_diff").unwrap()).unwrap();
    let last = js_sys::Array::from(&get(&moved, "layers")).get(1);
    assert_eq!(num(&last, "shift"), 3.0);
}
