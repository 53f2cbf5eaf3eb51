//! The real pretrained model, all-MiniLM-L6-v2 (docs/MINILM.md), against the real libraries:
//! the tokenizer against Hugging Face `tokenizers` on a wide set of strings, the forward pass
//! against transformers (float32, eager attention), and issue 19's figures recomputed on our
//! engine. The goldens are in tests/golden/minilm/ (made by scripts/golden-minilm; no Python
//! needed here). The model file is built by the set-up (scripts/setup runs scripts/fetch-model)
//! at weights/minilm/minilm.bin; these tests say so when it is missing.
//!
//! The weights file's own checks (hostile files, the same bytes twice) use a small seeded BERT
//! and need no model: tests/minilm_file.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::OnceLock;

use diffattn::engine::{run, Mechanism, Stages};
use diffattn::model::bert::{cosine, Bert};
use ndarray::{s, Array2, Array3};
use serde_json::Value;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/weights/minilm/minilm.bin");

/// The model the set-up built, loaded once for every test of this file.
fn model() -> &'static Bert {
    static MODEL_ONCE: OnceLock<Bert> = OnceLock::new();
    MODEL_ONCE.get_or_init(|| {
        let bytes = std::fs::read(MODEL).unwrap_or_else(|e| {
            panic!(
                "{MODEL}: {e}. The set-up builds the model: run scripts/setup \
                 (or scripts/fetch-model alone) first."
            )
        });
        Bert::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{MODEL}: {e}. Rebuild it with scripts/fetch-model."))
    })
}

fn golden(name: &str) -> Value {
    let path = format!("{}/tests/golden/minilm/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// The byte offset of each character index of `text`, and the end.
fn char_to_byte(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(b, _)| b)
        .chain([text.len()])
        .collect()
}

#[test]
fn the_tokenizer_agrees_with_hugging_face_on_every_string() {
    let bert = model();
    let g = golden("tokenizer.json");
    let cases = g["cases"].as_array().unwrap();
    assert!(cases.len() > 150, "{} cases", cases.len());
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let want = strings(&case["pieces"]);
        let got = bert.tokenizer().encode(text, usize::MAX);
        assert_eq!(got.pieces, want, "pieces of {text:?}");
        assert!(!got.truncated);
        // Offsets: transformers counts characters, we count bytes; [CLS] and [SEP] are (0, 0).
        let bytes = char_to_byte(text);
        for (i, (offset, o)) in got
            .offsets
            .iter()
            .zip(case["offsets"].as_array().unwrap())
            .enumerate()
        {
            let (a, b) = (o[0].as_u64().unwrap(), o[1].as_u64().unwrap());
            let want = (bytes[a as usize], bytes[b as usize]);
            let got = offset.clone().map_or((0, 0), |r| (r.start, r.end));
            assert_eq!(got, want, "offsets of piece {i} {:?} of {text:?}", want);
        }
    }
}

#[test]
fn a_text_past_512_pieces_is_cut_as_the_library_cuts_it() {
    let bert = model();
    for case in golden("tokenizer.json")["cut"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let got = bert.tokenizer().encode(text, bert.config().positions);
        assert_eq!(got.pieces, strings(&case["pieces"]));
        assert!(got.truncated, "the cut is reported");
        assert_eq!(got.ids.len(), 512);
    }
}

/// The largest difference between our maps and the golden's cells of one sentence.
fn largest_difference(ours: &[Array3<f32>], sentence: &Value) -> f32 {
    let mut worst = 0.0f32;
    if let Some(full) = sentence.get("attentions") {
        for (l, layer) in full.as_array().unwrap().iter().enumerate() {
            for (h, head) in layer.as_array().unwrap().iter().enumerate() {
                for (q, row) in head.as_array().unwrap().iter().enumerate() {
                    for (k, v) in floats(row).into_iter().enumerate() {
                        worst = worst.max((ours[l][[h, q, k]] - v).abs());
                    }
                }
            }
        }
    }
    if let Some(rows) = sentence.get("rows") {
        for (l, layer) in rows.as_array().unwrap().iter().enumerate() {
            for (h, cell) in layer.as_array().unwrap().iter().enumerate() {
                let q = cell["query"].as_u64().unwrap() as usize;
                for (k, v) in floats(&cell["values"]).into_iter().enumerate() {
                    worst = worst.max((ours[l][[h, q, k]] - v).abs());
                }
            }
        }
    }
    worst
}

#[test]
fn the_forward_pass_agrees_with_transformers() {
    let bert = model();
    let g = golden("forward.json");
    let mut report = Vec::new();
    for sentence in g["sentences"].as_array().unwrap() {
        let text = sentence["text"].as_str().unwrap();
        let encoded = bert.encode(text, true).unwrap();
        assert_eq!(
            encoded.pieces.pieces,
            strings(&sentence["pieces"]),
            "{text:?}"
        );
        let want = floats(&sentence["embedding"]);
        let cos = cosine(&encoded.forward.embedding, &want);
        assert!(cos >= 0.9999, "{text:?}: embedding cosine {cos}");
        let maps: Vec<Array3<f32>> = encoded
            .forward
            .layers
            .iter()
            .map(|l| l.attention.clone())
            .collect();
        assert_eq!(maps.len(), 6);
        let worst = largest_difference(&maps, sentence);
        assert!(worst <= 0.005, "{text:?}: an attention cell {worst} away");
        report.push(format!(
            "{} pieces: cosine {cos:.7}, largest cell difference {worst:.5}",
            encoded.pieces.ids.len()
        ));
    }
    // The figures for docs/MINILM.md (`cargo test --test minilm -- --nocapture`).
    eprintln!("{}", report.join("\n"));
}

#[test]
fn each_layers_maps_are_the_engines_standard_mechanism_on_its_real_projections() {
    let bert = model();
    let encoded = bert
        .encode(
            "The animal didn't cross the street because it was too tired.",
            true,
        )
        .unwrap();
    for (n, layer) in encoded.forward.layers.iter().enumerate() {
        let weights = bert.attention_weights(n).unwrap();
        let stages = run(
            layer.input.view(),
            weights,
            bert.heads(),
            false,
            &Mechanism::Standard,
        )
        .unwrap();
        let Stages::Attention { a, .. } = stages else {
            panic!("standard attention has one map per head");
        };
        assert_eq!(a, layer.attention, "layer {}: the same bits", n + 1);
    }
}

/// The mean over rows of the mass on the first and last keys ([CLS] and [SEP]).
fn sink(m: &Array2<f32>) -> f32 {
    let n = m.ncols();
    m.rows().into_iter().map(|r| r[0] + r[n - 1]).sum::<f32>() / m.nrows() as f32
}

#[test]
fn the_issues_figures_hold_on_our_engine() {
    let bert = model();
    let g = golden("forward.json");
    let facts = &g["facts"];
    let text = facts["sentence"].as_str().unwrap();
    let encoded = bert.encode(text, true).unwrap();
    let pieces = &encoded.pieces.pieces;
    let at = |w: &str| pieces.iter().position(|p| p == w).unwrap();
    let (it, animal) = (at("it"), at("animal"));
    // Layers and heads from 1, as the issue writes them.
    let a = |layer: usize, head: usize| -> Array2<f32> {
        encoded.forward.layers[layer - 1]
            .attention
            .slice(s![head - 1, .., ..])
            .to_owned()
    };
    let n = pieces.len();
    let subdiagonal = (1..n).map(|i| a(1, 3)[[i, i - 1]]).sum::<f32>() / (n - 1) as f32;
    let masses: Vec<f32> = (1..=6)
        .flat_map(|l| (1..=12).map(move |h| (l, h)))
        .map(|(l, h)| sink(&a(l, h)))
        .collect();
    let min = masses.iter().copied().fold(f32::INFINITY, f32::min);
    let max = masses.iter().copied().fold(0.0, f32::max);
    let d42 = a(4, 2) - &(a(4, 8) * 0.8);
    let d612 = a(6, 12) - &(a(6, 6) * 0.5);
    let embed = |t: &str| bert.encode(t, false).unwrap().forward.embedding;
    let food = embed("A man is eating food.");
    let ours = [
        ("layer1_head3_subdiagonal", subdiagonal),
        ("layer4_head2_it_animal", a(4, 2)[[it, animal]]),
        ("layer4_head2_cls_sep", sink(&a(4, 2))),
        ("cls_sep_min", min),
        ("cls_sep_max", max),
        ("layer4_head2_minus_0.8_head8_cls_sep", sink(&d42)),
        ("layer4_head2_minus_0.8_head8_it_animal", d42[[it, animal]]),
        ("layer6_head12_cls_sep", sink(&a(6, 12))),
        ("layer6_head12_it_animal", a(6, 12)[[it, animal]]),
        ("layer6_head12_minus_0.5_head6_cls_sep", sink(&d612)),
        (
            "layer6_head12_minus_0.5_head6_it_animal",
            d612[[it, animal]],
        ),
        (
            "cosine_food_bread",
            cosine(&food, &embed("A man is eating a piece of bread.")),
        ),
        (
            "cosine_food_stock",
            cosine(&food, &embed("The stock market fell sharply today.")),
        ),
    ];
    for (name, value) in ours {
        let want = facts[name].as_f64().unwrap() as f32;
        eprintln!("{name}: ours {value:.4}, transformers {want:.4}");
        assert!((value - want).abs() <= 0.005, "{name}: {value} vs {want}");
    }
    // The issue's words, to two decimals: a previous-token head, «it» on «animal».
    assert!(subdiagonal >= 0.995, "layer 1 head 3: {subdiagonal}");
    assert!((a(4, 2)[[it, animal]] - 0.68).abs() < 0.01);
}

#[test]
fn every_mechanism_the_layer_allows_runs_on_its_real_projections() {
    use diffattn::engine::diff_transformer::DiffTransformerParams;
    use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
    let bert = model();
    let encoded = bert
        .encode(
            "The animal didn't cross the street because it was too tired.",
            true,
        )
        .unwrap();
    // Layer 4 (index 3), the vectors entering it and its real projections.
    let x = &encoded.forward.layers[3].input;
    let weights = bert.attention_weights(3).unwrap();
    let heads = bert.heads();
    let shift_diff = Mechanism::ShiftDiff(ShiftDiffParams {
        shift: 1,
        difference: Difference::Single,
        fill: ShiftFill::Circular,
        renormalize: Renormalize::None,
        gate: Gate {
            alpha: vec![0.0; heads],
            beta: vec![4.0; heads],
            gamma: vec![0.0; heads],
        },
    });
    // The Differential Transformer at 6 diff heads pairs the layer's own heads (1, 2), (3, 4)
    // …, 32 wide each, with a fixed λ = 0.8 (no λ was learned: a standard model).
    let d_h = 384 / (2 * 6);
    let diff_transformer = Mechanism::DiffTransformer(DiffTransformerParams {
        depth: 0,
        lambda_q1: vec![0.0; d_h],
        lambda_k1: vec![0.0; d_h],
        lambda_q2: vec![0.0; d_h],
        lambda_k2: vec![0.0; d_h],
        subln: vec![1.0; 2 * d_h],
        lambda: Some(0.8),
        ..Default::default()
    });
    let cases = [
        ("standard", Mechanism::Standard, heads),
        ("shift_diff", shift_diff, heads),
        ("cosine", Mechanism::Cosine { tau: 10.0 }, heads),
        ("local", Mechanism::Local { window: 2 }, heads),
        ("input_diff", Mechanism::InputDiff, heads),
        (
            "hierarchical",
            Mechanism::Hierarchical { segment: 4 },
            heads,
        ),
        ("diff_transformer", diff_transformer, 6),
    ];
    for (name, mechanism, h) in cases {
        let stages = run(x.view(), weights, h, false, &mechanism)
            .unwrap_or_else(|e| panic!("{name} on layer 4: {e}"));
        let maps = stages.final_maps();
        assert!(maps.iter().all(|v| v.is_finite()), "{name}: finite maps");
        assert!(stages.output().iter().all(|v| v.is_finite()), "{name}");
        assert_eq!(stages.output().dim(), x.dim(), "{name}: the layer's width");
    }
    // V2 needs a query projection of two heads per head, which a standard layer has not: a
    // clear error naming it, not a map.
    let v2 = Mechanism::DiffTransformerV2 { lambda: Some(0.5) };
    for h in [6, 12] {
        let e = run(x.view(), weights, h, false, &v2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("w_q") || e.contains("w_k"),
            "V2 at {h} heads: {e}"
        );
    }
}

#[test]
fn the_explorer_draws_a_real_layer_labelled_with_its_word_pieces_and_runs_every_mechanism_there() {
    use diffattn::engine::{MechanismKind, StageId};
    use diffattn::explorer::{Explorer, SettingsPatch};
    use diffattn::model::Model;
    use diffattn::pretrained::Feed;
    use std::sync::Arc;

    let bert = model();
    let text = "The animal didn't cross the street because it was too tired.";
    let encoded = bert.encode(text, true).unwrap();
    let mut ex = Explorer::new(Model::untrained());
    ex.set_text(text);
    let words = ex.labels().to_vec();
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::Standard),
        layer: Some(4),
        ..Default::default()
    })
    .unwrap();
    // The model beside the explorer, as in the page (its own wasm module there).
    let mut feed = Feed::new(Arc::new(bert.clone()));
    feed.attach(&mut ex);
    assert!(ex.is_pretrained());
    assert_eq!(ex.layers(), 6);
    assert_eq!(
        ex.labels(),
        encoded.pieces.pieces.as_slice(),
        "the word pieces, [CLS] and [SEP]"
    );
    assert_eq!(ex.settings().maps.heads, 12, "the model's own heads");
    assert_eq!(ex.d_model(), 384);
    assert!(!ex.predicts(), "no sentiment: the model has no classifier");
    // Layer 4, head 2: the model's own map, bit for bit; the model ran as far as layer 4.
    ex.set_head(1).unwrap();
    feed.compute(&mut ex).unwrap();
    assert_eq!(feed.model_layers(), 3, "layers 1 to 3 give layer 4's input");
    let model_map = encoded.forward.layers[3]
        .attention
        .slice(s![1, .., ..])
        .to_owned();
    assert_eq!(ex.map(StageId::A).unwrap().to_owned(), model_map);
    // Layer 1, head 3, the previous-token head: the vectors and weights follow the layer.
    let before = ex.recomputations();
    ex.update(&SettingsPatch {
        layer: Some(1),
        head: Some(2),
        ..Default::default()
    })
    .unwrap();
    feed.compute(&mut ex).unwrap();
    assert_eq!(ex.recomputations().projections, before.projections + 1);
    assert_eq!(
        feed.model_layers(),
        3,
        "a lower layer: nothing of the model again"
    );
    let a = ex.map(StageId::A).unwrap().to_owned();
    assert_eq!(a, encoded.forward.layers[0].attention.slice(s![2, .., ..]));
    // A layer the model has not: an error naming it, nothing changed.
    let e = ex
        .update(&SettingsPatch {
            layer: Some(7),
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("1 to 6"), "{e}");
    assert_eq!(ex.settings().maps.layer, 1);
    // Every mechanism but V2 draws its final map on the real layer.
    let choices = ex.mechanism_choices();
    assert!(
        !choices.contains(&MechanismKind::DiffTransformerV2),
        "V2 needs W_λ"
    );
    assert!(ex
        .update(&SettingsPatch {
            mechanism: Some(MechanismKind::DiffTransformerV2),
            ..Default::default()
        })
        .is_err());
    for kind in choices {
        ex.update(&SettingsPatch {
            mechanism: Some(kind),
            layer: Some(4),
            ..Default::default()
        })
        .unwrap();
        feed.compute(&mut ex).unwrap();
        let map = ex
            .map(ex.final_stage())
            .unwrap_or_else(|| panic!("{kind:?}: a final map"));
        assert!(map.iter().all(|v| v.is_finite()), "{kind:?}");
    }
    // The Differential Transformer pairs each of the model's heads with a partner: A1 is the
    // head shown, A2 the next head, or the head `partner` names; issue 19's figure for layer 4,
    // head 2 − 0.8 × head 8 comes out of the explorer.
    let head_map = |l: usize, h: usize| {
        encoded.forward.layers[l - 1]
            .attention
            .slice(s![h - 1, .., ..])
            .to_owned()
    };
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::DiffTransformer),
        layer: Some(4),
        head: Some(1),
        ..Default::default()
    })
    .unwrap();
    assert_eq!((ex.settings().maps.heads, ex.head_width()), (12, 32));
    assert_eq!(
        ex.head_choices(),
        vec![12],
        "each of the model's heads, paired"
    );
    feed.compute(&mut ex).unwrap();
    assert_eq!(ex.partner_of(1), Some(2));
    assert_eq!(ex.map(StageId::A1).unwrap(), head_map(4, 2));
    assert_eq!(
        ex.map(StageId::A2).unwrap(),
        head_map(4, 3),
        "the next head by default"
    );
    ex.update(&SettingsPatch {
        partner: Some(8),
        lambda: Some(Some(0.8)),
        ..Default::default()
    })
    .unwrap();
    feed.compute(&mut ex).unwrap();
    assert_eq!(ex.map(StageId::A2).unwrap(), head_map(4, 8));
    let diff = ex.map(StageId::Diff).unwrap().to_owned();
    let want = g_facts()["layer4_head2_minus_0.8_head8_cls_sep"]
        .as_f64()
        .unwrap() as f32;
    assert!(
        (sink(&diff) - want).abs() < 0.005,
        "{} vs transformers' {want}",
        sink(&diff)
    );
    let e = ex
        .update(&SettingsPatch {
            partner: Some(13),
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("1 to 12"), "{e}");
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::Standard),
        partner: Some(0),
        lambda: Some(None),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(ex.settings().maps.heads, 12);
    // Shift-difference computes shift(A), D, G and A′ from the model's own A.
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::ShiftDiff),
        heads: Some(12),
        head: Some(1),
        ..Default::default()
    })
    .unwrap();
    feed.compute(&mut ex).unwrap();
    assert_eq!(ex.map(StageId::A).unwrap().to_owned(), model_map);
    let (d, shifted) = (
        ex.map(StageId::D).unwrap().to_owned(),
        ex.map(StageId::Shifted).unwrap().to_owned(),
    );
    assert_eq!(d, &model_map - &shifted);
    // Typing keeps the model; a longer text is cut at 512 pieces, and says so.
    let info = feed.set_text(&mut ex, &"word ".repeat(600));
    assert!(
        info.truncated && info.total == 602 && ex.len() == 512,
        "{} of {}",
        ex.len(),
        info.total
    );
    assert!(feed.set_text(&mut ex, "   ").tokens.is_empty() && ex.is_empty());
    // Another model leaves the pretrained one: the word tokens again.
    feed.set_text(&mut ex, text);
    ex.set_model(Model::untrained());
    assert!(!ex.is_pretrained());
    assert_eq!(ex.labels(), words.as_slice());
}

/// The figures of tests/golden/minilm/forward.json.
fn g_facts() -> Value {
    golden("forward.json")["facts"].clone()
}

#[test]
fn the_explorer_says_how_close_a_second_sentence_is_and_how_far_the_mechanism_moves_it() {
    use diffattn::engine::MechanismKind;
    use diffattn::explorer::{Explorer, SettingsPatch};
    use diffattn::model::Model;
    use diffattn::pretrained::Feed;
    use std::sync::Arc;

    let facts = g_facts();
    let mut ex = Explorer::new(Model::untrained());
    ex.set_text("A man is eating food.");
    ex.set_other_text("A man is eating a piece of bread.");
    assert!(!ex.compares(), "only a pretrained model compares");
    let mut feed = Feed::new(Arc::new(model().clone()));
    feed.attach(&mut ex);
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::Standard),
        layer: Some(4),
        ..Default::default()
    })
    .unwrap();
    assert!(ex.compares());
    assert_eq!(ex.similarity(), None, "not before the work for every head");
    feed.compute_all(&mut ex).unwrap();
    let s = ex.similarity().unwrap();
    let want = facts["cosine_food_bread"].as_f64().unwrap() as f32;
    assert!(
        (s.model - want).abs() < 0.005,
        "{} vs transformers' {want}",
        s.model
    );
    // The standard mechanism at the model's heads is the model's own attention: nothing moves.
    assert!((s.mechanism - s.model).abs() < 1e-4, "{s:?}");
    // Shift-difference at layer 4 moves the embedding; the model's own figure stays.
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::ShiftDiff),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(ex.similarity(), None, "the mechanism's output changed");
    feed.compute_all(&mut ex).unwrap();
    let moved = ex.similarity().unwrap();
    assert!((moved.model - s.model).abs() < 1e-6);
    assert!((moved.mechanism - moved.model).abs() > 1e-3, "{moved:?}");
    assert!(moved.mechanism.is_finite() && moved.mechanism.abs() <= 1.0);
    // An unrelated sentence is far, by the model.
    ex.set_other_text("The stock market fell sharply today.");
    feed.compute_all(&mut ex).unwrap();
    let far = ex.similarity().unwrap();
    let want = facts["cosine_food_stock"].as_f64().unwrap() as f32;
    assert!((far.model - want).abs() < 0.005, "{} vs {want}", far.model);
    ex.set_other_text("  ");
    assert!(!ex.compares() && ex.similarity().is_none());
}

#[test]
fn the_head_statistics_find_the_previous_token_head_and_the_sinks_of_the_real_model() {
    use diffattn::engine::{MechanismKind, StageId};
    use diffattn::explorer::{Explorer, SettingsPatch};
    use diffattn::model::Model;
    use diffattn::pretrained::Feed;
    use std::sync::Arc;

    let bert = model();
    let g = golden("forward.json");
    let facts = &g["facts"];
    let text = facts["sentence"].as_str().unwrap();
    let mut ex = Explorer::new(Model::untrained());
    ex.set_text(text);
    let mut feed = Feed::new(Arc::new(bert.clone()));
    feed.attach(&mut ex);
    let at = |ex: &mut Explorer, feed: &mut Feed, layer: usize| {
        ex.update(&SettingsPatch {
            mechanism: Some(MechanismKind::Standard),
            layer: Some(layer),
            ..Default::default()
        })
        .unwrap();
        feed.compute_all(ex).unwrap();
    };
    // [CLS] and [SEP] are the sinks: the first and the last piece.
    let n = ex.labels().len();
    assert_eq!(ex.sink_keys(), vec![0, n - 1]);
    at(&mut ex, &mut feed, 1);
    let l1h3 = ex.head_statistics(StageId::A, 2).unwrap();
    let want = facts["layer1_head3_subdiagonal"].as_f64().unwrap() as f32;
    assert!(
        (l1h3.previous - want).abs() < 1e-3,
        "{} vs {want}",
        l1h3.previous
    );
    assert_eq!(
        l1h3.previous, l1h3.signed_previous,
        "a softmax map: both agree"
    );
    assert!(l1h3.entropy < 0.05, "one key per row: {}", l1h3.entropy);
    at(&mut ex, &mut feed, 4);
    let l4h2 = ex.head_statistics(StageId::A, 1).unwrap();
    let want = facts["layer4_head2_cls_sep"].as_f64().unwrap() as f32;
    assert!((l4h2.sink - want).abs() < 1e-3, "{} vs {want}", l4h2.sink);
    // The lowest and highest sink mass of the 72 heads are the golden's.
    let mut masses = Vec::new();
    for layer in 1..=6 {
        at(&mut ex, &mut feed, layer);
        for head in 0..12 {
            masses.push(ex.head_statistics(StageId::A, head).unwrap().sink);
        }
    }
    let min = masses.iter().copied().fold(f32::INFINITY, f32::min);
    let max = masses.iter().copied().fold(0.0, f32::max);
    assert!(
        (min - facts["cls_sep_min"].as_f64().unwrap() as f32).abs() < 1e-3,
        "{min}"
    );
    assert!(
        (max - facts["cls_sep_max"].as_f64().unwrap() as f32).abs() < 1e-3,
        "{max}"
    );
    // Layer 4 under the Differential Transformer, head 2 paired with head 8 at λ = 0.8: the
    // signed sink mass is the raw difference's, issue 19's measure.
    ex.update(&SettingsPatch {
        mechanism: Some(MechanismKind::DiffTransformer),
        layer: Some(4),
        partner: Some(8),
        lambda: Some(Some(0.8)),
        ..Default::default()
    })
    .unwrap();
    feed.compute_all(&mut ex).unwrap();
    let d = ex.head_statistics(ex.final_stage(), 1).unwrap();
    let want = facts["layer4_head2_minus_0.8_head8_cls_sep"]
        .as_f64()
        .unwrap() as f32;
    assert!(
        (d.signed_sink - want).abs() < 1e-3,
        "{} vs {want}",
        d.signed_sink
    );
    assert!(d.negative && d.sink > d.signed_sink);
}
