//! The page's state without the browser: caching, head choices, cells and specs.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::{MechanismKind, StageId};
use diffattn::explorer::{Explorer, Need, Recomputations};
use diffattn::model::Model;

fn explorer(text: &str) -> Explorer {
    let mut e = Explorer::new(Model::untrained());
    e.set_text(text);
    e.compute().unwrap();
    e
}

#[test]
fn moving_the_shift_recomputes_only_the_shift_stages() {
    let mut e = explorer("this movie is not good at all");
    let a_before = e.map(StageId::A).unwrap().to_owned();
    let fused_before = e.map(StageId::Fused).unwrap().to_owned();
    let r0 = e.recomputations();
    e.update_shift(|s| s.shift = 2).unwrap();
    e.compute().unwrap();
    let r1 = e.recomputations();
    assert_eq!(
        (r1.projections, r1.maps),
        (r0.projections, r0.maps),
        "A was recomputed"
    );
    assert_eq!(r1.shift_stages, r0.shift_stages + 1);
    assert_eq!(e.map(StageId::A).unwrap(), a_before);
    assert_ne!(e.map(StageId::Fused).unwrap(), fused_before);
}

#[test]
fn typing_that_keeps_the_tokens_recomputes_nothing() {
    let mut e = explorer("The cat sat");
    let r0 = e.recomputations();
    // A trailing space, extra spaces and another case give the same tokens.
    e.set_text("The cat sat ");
    e.set_text("the  CAT sat");
    e.compute().unwrap();
    assert_eq!(e.recomputations(), r0);
    e.set_text("The cat sat.");
    e.compute().unwrap();
    let r1 = e.recomputations();
    assert_eq!(
        (r1.projections, r1.maps, r1.shift_stages),
        (r0.projections + 1, r0.maps + 1, r0.shift_stages + 1)
    );
    assert_eq!(e.labels(), ["the", "cat", "sat", "."]);
}

#[test]
fn picking_a_head_or_an_unchanged_value_recomputes_nothing() {
    let mut e = explorer("a b c d e");
    e.compute_all().unwrap();
    let r0 = e.recomputations();
    e.set_head(3).unwrap();
    e.update_shift(|s| s.shift = 1).unwrap(); // unchanged
    e.update_maps(|m| m.causal = false).unwrap(); // unchanged
    e.update_maps(|m| m.heads = 4).unwrap(); // unchanged
    e.compute().unwrap();
    assert_eq!(e.recomputations(), r0);
}

#[test]
fn the_shown_head_is_computed_first_and_a_head_once_computed_is_kept() {
    // Four heads; only the shown one is computed by a render.
    let mut e = explorer("the cat sat on the mat");
    assert_eq!(e.settings().maps.heads, 4);
    assert_eq!(e.missing_heads(), vec![1, 2, 3]);
    let r0 = e.recomputations();
    assert_eq!((r0.projections, r0.maps, r0.shift_stages), (1, 1, 1));
    // Another head: its maps and shift stages, once; the projections are shared.
    e.set_head(2).unwrap();
    e.compute().unwrap();
    let r1 = e.recomputations();
    assert_eq!((r1.projections, r1.maps, r1.shift_stages), (1, 2, 2));
    assert_eq!(
        e.missing_heads(),
        vec![1, 3],
        "the shown head first, then the lowest"
    );
    // Back and forth: nothing.
    for h in [0, 2, 0] {
        e.set_head(h).unwrap();
        e.compute().unwrap();
    }
    assert_eq!(e.recomputations(), r1);
    // A shift tick recomputes the shown head's shift stages only; the other kept heads
    // recompute theirs when shown again, never their maps.
    e.update_shift(|s| s.shift = 3).unwrap();
    e.compute().unwrap();
    let r2 = e.recomputations();
    assert_eq!((r2.maps, r2.shift_stages), (2, 3));
    e.set_head(2).unwrap();
    e.compute().unwrap();
    assert_eq!(
        (e.recomputations().maps, e.recomputations().shift_stages),
        (2, 4)
    );
    // What needs every head computes the rest, one piece at a time or all at once.
    while e.missing_heads().len() == 2 {
        assert!(e.work(Need::Every).unwrap());
    }
    assert_eq!(e.missing_heads(), vec![3]);
    e.layer_output().unwrap().unwrap();
    assert!(e.missing_heads().is_empty());
    assert!(!e.work(Need::Every).unwrap());
    assert_eq!(e.recomputations().maps, 4, "each head's maps once");
}

#[test]
fn changing_heads_recomputes_maps_not_projections() {
    let mut e = explorer("the cat sat on the mat");
    let a4 = e.map(StageId::A).unwrap().to_owned();
    let r0 = e.recomputations();
    e.update_maps(|m| m.heads = 8).unwrap();
    e.compute().unwrap();
    let r1 = e.recomputations();
    assert_eq!(
        r1,
        Recomputations {
            projections: r0.projections,
            maps: r0.maps + 1,
            shift_stages: r0.shift_stages + 1,
            lambda: r0.lambda,
        }
    );
    assert_ne!(e.map(StageId::A).unwrap(), a4);
}

#[test]
fn head_choices_are_divisors_of_the_width() {
    let mut e = explorer("x");
    assert_eq!(e.head_choices(), vec![1, 2, 4, 8, 16, 32, 64]);
    assert!(e.update_maps(|m| m.heads = 3).is_err());
    e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
        .unwrap();
    assert_eq!(e.head_choices(), vec![1, 2, 4, 8, 16, 32]);
    e.update_maps(|m| m.heads = 32).unwrap();
    // Going back to a mechanism where 32 is still allowed keeps it; the head index stays valid.
    e.set_head(31).unwrap();
    e.update_maps(|m| m.mechanism = MechanismKind::Standard)
        .unwrap();
    assert_eq!(e.settings().maps.heads, 32);
}

#[test]
fn the_cell_readout_adds_up() {
    let mut e = explorer("not good , not bad");
    e.set_head(1).unwrap();
    e.compute().unwrap();
    let cell = e.cell(3, 1).unwrap();
    assert_eq!((cell.query.as_str(), cell.key.as_str()), ("not", "good"));
    let v = |s| cell.values.iter().find(|(id, _)| *id == s).unwrap().1;
    // A'ij = Aij + Gij · Dij, and D = A - shift(A), exactly as the engine computes them.
    assert_eq!(
        v(StageId::Fused),
        v(StageId::A) + v(StageId::G) * v(StageId::D)
    );
    assert_eq!(v(StageId::D), v(StageId::A) - v(StageId::Shifted));
    let row_sum = |s| cell.row_sums.iter().find(|(id, _)| *id == s).unwrap().1;
    assert!((row_sum(StageId::A) - 1.0).abs() < 1e-5);
    assert_eq!(cell.gate, Some((0.0, 4.0, 0.0)));
    assert!(e.cell(5, 0).is_none(), "row 5 is past the 5 tokens");
}

#[test]
fn each_mechanism_shows_its_own_stages() {
    let mut e = explorer("one two three");
    let names = |e: &Explorer| e.stages().iter().map(|s| s.label()).collect::<Vec<_>>();
    assert_eq!(names(&e), ["A", "shift(A)", "D", "G", "A′"]);
    e.update_shift(|s| s.difference = diffattn::engine::shift_diff::Difference::Symmetric)
        .unwrap();
    assert_eq!(names(&e), ["A", "shift(A)", "shift₋ₖ(A)", "D", "G", "A′"]);
    e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
        .unwrap();
    e.compute().unwrap();
    assert_eq!(names(&e), ["A1", "A2", "A1 − λ·A2"]);
    assert!(e.lambda().is_some());
    e.update_maps(|m| m.mechanism = MechanismKind::InputDiff)
        .unwrap();
    e.compute().unwrap();
    assert_eq!(e.map(StageId::A).unwrap().dim(), (3, 2));
    assert_eq!(e.key_labels(), ["one→two", "two→three"]);
}

#[test]
fn an_empty_sentence_draws_nothing_and_fails_nothing() {
    let mut e = explorer("   \u{200B}  ");
    assert!(e.is_empty());
    e.compute().unwrap();
    assert!(e.map(StageId::A).is_none());
    assert!(e.cell(0, 0).is_none());
    assert!(e.stages_json().is_err());
}

#[test]
fn export_matches_the_cli_format_and_the_cached_maps() {
    let mut e = explorer("a short sentence");
    e.compute_all().unwrap();
    let json = e.stages_json().unwrap();
    assert_eq!(json.heads.len(), 4);
    let head0_fused = json.heads[0].fused.as_ref().unwrap();
    let cached = e.maps(StageId::Fused).unwrap();
    for (i, row) in head0_fused.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, cached[[0, i, j]]);
        }
    }
}

#[test]
fn a_loaded_spec_is_drawn_and_a_broken_one_names_its_field() {
    let mut e = explorer("hello");
    let spec = r#"{"mechanism": "shift_diff", "heads": 2, "causal": true, "x": [[1,0,0,1],[0,1,1,0],[1,1,0,0]],
      "w_q": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]], "w_k": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],
      "w_v": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]], "w_o": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]],
      "shift": 2, "difference": "single", "renormalize": "none",
      "gate": {"alpha": [1, 2], "beta": [0.5, -0.5], "gamma": [0, 1]}}"#;
    e.load_spec(spec).unwrap();
    e.compute().unwrap();
    assert!(e.is_spec());
    assert_eq!(e.labels(), ["t0", "t1", "t2"]);
    assert_eq!(e.head_choices(), vec![2]);
    assert_eq!(e.settings().shift.shift, 2);
    e.set_head(1).unwrap();
    e.compute().unwrap();
    assert_eq!(
        e.cell(0, 0).unwrap().gate,
        Some((2.0, -0.5, 1.0)),
        "the spec's per-head gate"
    );
    let err = e
        .load_spec(&spec.replace(r#""alpha": [1, 2]"#, r#""alpha": [1]"#))
        .unwrap_err();
    assert_eq!(err.field, "gate.alpha");
    // A rejected spec leaves the previous one in place.
    assert_eq!(e.labels(), ["t0", "t1", "t2"]);
    e.set_text("back to text");
    assert!(!e.is_spec());
    assert_eq!(e.head_choices().len(), 7);
}

#[test]
fn the_page_draws_specs_of_at_most_page_max_tokens_and_refuses_longer_ones_by_that_limit() {
    let spec = |tokens: usize| {
        let x = vec!["[1, 0]"; tokens].join(",");
        format!(
            r#"{{"mechanism": "standard", "heads": 1, "causal": false, "x": [{x}],
               "w_q": [[1,0],[0,1]], "w_k": [[1,0],[0,1]], "w_v": [[1,0],[0,1]], "w_o": [[1,0],[0,1]]}}"#
        )
    };
    let mut e = explorer("hello there");
    e.load_spec(&spec(diffattn::text::PAGE_MAX_TOKENS)).unwrap();
    assert_eq!(e.labels().len(), 2048);
    // Opening it computed the first head alone, not every head.
    e.compute().unwrap();
    assert_eq!(e.recomputations().maps, 2);
    // Past the library's limit, the page refuses a spec while it reads x, by its own limit,
    // and keeps what it drew.
    for tokens in [2049, 6000] {
        let err = e.load_spec(&spec(tokens)).unwrap_err();
        assert_eq!(err.field, "x");
        assert!(
            err.message.starts_with("more than 2,048 tokens (rows); the limit is 2,048 (diffattn::text::limits::PAGE_MAX_TOKENS) on the page"),
            "{err}"
        );
        assert_eq!(e.labels().len(), 2048, "the previous spec stays");
    }
}

fn trained(mechanism: &str) -> Model {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("weights/{mechanism}.bin"));
    Model::from_bytes(&std::fs::read(path).expect("shipped weights")).expect("a valid model")
}

#[test]
fn a_trained_model_brings_its_settings_and_its_prediction_matches_the_model() {
    for mechanism in MechanismKind::ALL.map(MechanismKind::key) {
        let model = trained(mechanism);
        let text = "the acting is wonderful but the plot is not good";
        let want = model.classify(&diffattn::text::tokenize(text)).unwrap();
        let mut e = explorer(text);
        e.set_model(model.clone());
        assert_eq!(e.settings().maps.mechanism.key(), mechanism);
        assert_eq!(Some(e.settings().maps.heads), model.trained_heads());
        assert!(!e.settings().maps.causal);
        let got = e.prediction().unwrap().expect("a trained model predicts");
        // Same engine, same settings, same order of operations: the same bits.
        assert_eq!(
            (got.label, got.probability),
            (want.label, want.probability),
            "{mechanism}"
        );
    }
}

#[test]
fn the_trained_gate_holds_until_a_slider_moves() {
    let model = trained("shift_diff");
    let mut e = explorer("a fine film");
    e.set_model(model.clone());
    assert!(e.gate_is_learned());
    assert_eq!(e.gate(), model.gate(e.settings().maps.heads).unwrap());
    e.update_shift(|s| s.beta = 2.0).unwrap();
    assert!(!e.gate_is_learned());
    assert_eq!(e.gate().beta, vec![2.0; e.settings().maps.heads]);
    // Moving away from the trained settings still predicts, from the maps on screen.
    e.update_shift(|s| s.shift = 3).unwrap();
    assert!(e.prediction().unwrap().is_some());
    // Another mechanism's maps mean nothing to this classifier: no prediction.
    e.update_maps(|m| m.mechanism = MechanismKind::Standard)
        .unwrap();
    assert!(e.prediction().unwrap().is_none());
    // Back to the untrained model: no prediction, the settings stay.
    e.set_model(Model::untrained());
    assert!(e.prediction().unwrap().is_none());
    assert_eq!(e.head_choices(), vec![1, 2, 4, 8, 16, 32, 64]);
}

#[test]
fn a_shift_setter_cannot_touch_the_maps_and_a_bad_value_changes_nothing() {
    let mut e = explorer("the cat sat on the mat");
    let before = *e.settings();
    // A non-finite gate scalar is refused and leaves every setting as it was.
    let err = e.update_shift(|s| s.beta = f32::NAN).unwrap_err();
    assert!(err.to_string().starts_with("gate.beta:"), "{err}");
    assert_eq!(*e.settings(), before);
    // So is a head count that does not divide the width, and tau = inf.
    assert!(e.update_maps(|m| m.heads = 5).is_err());
    assert!(e.update_maps(|m| m.tau = f32::INFINITY).is_err());
    assert_eq!(*e.settings(), before);
    // tau does not shape standard attention's maps: changing it recomputes nothing.
    let r0 = e.recomputations();
    e.update_maps(|m| m.tau = 3.0).unwrap();
    e.compute().unwrap();
    assert_eq!(e.recomputations(), r0);
}

#[test]
fn a_new_mechanism_snaps_the_heads_to_a_count_it_allows() {
    let mut e = explorer("one two three four");
    e.update_maps(|m| m.heads = 64).unwrap();
    // 64 heads do not divide d / 2 = 32 for the Differential Transformer: the nearest is 32.
    e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
        .unwrap();
    assert_eq!(e.settings().maps.heads, 32);
    assert_eq!(e.head_width(), 1);
}

#[test]
fn the_causal_mask_holds_in_every_map_and_the_cells_say_so() {
    let mut e = explorer("a b c d e");
    e.update_maps(|m| m.causal = true).unwrap();
    e.update_shift(|s| s.shift = 2).unwrap();
    e.compute().unwrap();
    for stage in e.stages() {
        let map = e.map(stage).unwrap();
        for ((i, j), &v) in map.indexed_iter() {
            if j > i && stage != StageId::G {
                assert_eq!(v, 0.0, "{stage:?} ({i}, {j})");
            }
        }
    }
    assert!(e.cell(1, 3).unwrap().masked);
    assert!(!e.cell(3, 1).unwrap().masked);
}

#[test]
fn moved_away_names_the_controls_that_left_the_trained_settings() {
    let mut e = explorer("a fine film");
    assert!(
        e.moved_away().is_empty(),
        "the untrained model has nothing to leave"
    );
    e.set_model(trained("shift_diff"));
    assert!(e.moved_away().is_empty());
    e.update_shift(|s| s.shift = 3).unwrap();
    e.update_maps(|m| m.heads = 8).unwrap();
    assert_eq!(e.moved_away(), ["heads", "shift"]);
    e.update_shift(|s| s.alpha = 1.0).unwrap();
    assert_eq!(e.moved_away(), ["heads", "shift", "gate"]);
    // Another mechanism than the trained one: nothing to compare with.
    e.update_maps(|m| m.mechanism = MechanismKind::Standard)
        .unwrap();
    assert!(e.moved_away().is_empty());
}

#[test]
fn a_map_window_is_the_slice_of_the_map_clipped_to_it() {
    let e = explorer("one two three four five");
    let map = e.map(StageId::Fused).unwrap().to_owned();
    let w = e.map_window(StageId::Fused, 1, 2, 2, 10).unwrap();
    assert_eq!(w.dim(), (2, 3), "columns 2..5 of rows 1..3");
    assert_eq!(w[[0, 0]], map[[1, 2]]);
    assert_eq!(w[[1, 2]], map[[2, 4]]);
    assert_eq!(e.map_window(StageId::A, 9, 9, 3, 3).unwrap().dim(), (0, 0));
    assert!(e.map_window(StageId::A1, 0, 0, 1, 1).is_none());
}

#[test]
fn the_parameter_readout_follows_the_mechanism() {
    let mut e = explorer("x y");
    assert_eq!(e.parameter_readout(), None);
    e.update_maps(|m| {
        m.mechanism = MechanismKind::Local;
        m.window = 3;
    })
    .unwrap();
    assert_eq!(e.parameter_readout().as_deref(), Some("w = 3"));
    e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
        .unwrap();
    e.compute().unwrap();
    let readout = e.parameter_readout().unwrap();
    let lambda = e.lambda().unwrap();
    assert_eq!(readout, format!("λ = {lambda:.4}").replace('-', "\u{2212}"));
}

#[test]
fn an_exported_spec_opens_again_and_draws_the_same_maps_bit_for_bit() {
    for mechanism in MechanismKind::ALL {
        // A λ moved away from the learned one travels in the spec (`lambda`) too.
        let moves = if mechanism.takes(diffattn::engine::Parameter::Lambda) {
            vec![false, true]
        } else {
            vec![false]
        };
        for moved in moves {
            let mut e = explorer("the cat sat on the mat");
            e.set_model(trained(mechanism.key()));
            e.update_shift(|s| s.shift = 2).unwrap();
            if moved {
                e.update_shift(|s| s.lambda = Some(0.375)).unwrap();
            }
            e.compute_all().unwrap();
            let stages = e.stages();
            let before: Vec<_> = stages
                .iter()
                .map(|&s| e.maps(s).unwrap().to_owned())
                .collect();
            let json = serde_json::to_string(&e.export_spec().unwrap()).unwrap();
            let mut again = Explorer::new(Model::untrained());
            again.load_spec(&json).unwrap();
            again.compute_all().unwrap();
            assert_eq!(
                again.labels(),
                e.labels(),
                "{mechanism:?}: the tokens label the axes"
            );
            assert_eq!(again.stages(), stages);
            for (s, want) in stages.iter().zip(&before) {
                let got = again.maps(*s).unwrap();
                assert_eq!(
                    got.mapv(f32::to_bits),
                    want.mapv(f32::to_bits),
                    "{mechanism:?} {s:?} (λ moved: {moved})"
                );
            }
            if moved {
                assert_eq!(again.lambda().or_else(|| again.lambda_at(0)), Some(0.375));
            }
        }
    }
}

#[test]
fn the_row_view_has_every_stage_but_the_gate_and_g_times_d() {
    let e = explorer("one two three four");
    let lines = e.row_lines(2).unwrap();
    let labels: Vec<&str> = lines.iter().map(|l| l.label).collect();
    assert_eq!(labels, ["A", "shift(A)", "D", "G ⊙ D", "A′"]);
    let (g, d) = (e.map(StageId::G).unwrap(), e.map(StageId::D).unwrap());
    for (j, v) in lines[3].values.iter().enumerate() {
        assert_eq!(*v, g[[2, j]] * d[[2, j]]);
    }
    // A′ = A + G ⊙ D along the row.
    for j in 0..4 {
        assert_eq!(lines[4].values[j], lines[0].values[j] + lines[3].values[j]);
    }
    assert!(e.row_lines(4).is_none(), "row 4 is past the 4 tokens");
}

/// The shown head's map of `stage` (the one computed).
fn maps_of(e: &Explorer, stage: StageId) -> ndarray::Array2<f32> {
    e.map(stage).unwrap().to_owned()
}

#[test]
fn the_lambda_slider_recomputes_only_a1_minus_lambda_a2_and_goes_back_to_the_learned_lambda() {
    for kind in [
        MechanismKind::DiffTransformer,
        MechanismKind::DiffTransformerV2,
    ] {
        let mut e = explorer("the plot is thin but the acting is warm");
        e.update_maps(|m| m.mechanism = kind).unwrap();
        e.compute().unwrap();
        assert!(e.lambda_is_learned());
        assert!(e.kind().takes(diffattn::engine::Parameter::Lambda));
        let (a1, a2, diff) = (
            maps_of(&e, StageId::A1),
            maps_of(&e, StageId::A2),
            maps_of(&e, StageId::Diff),
        );
        assert_eq!(e.settings().shift.lambda, None, "{kind:?}: λ is unset");
        let learned = e.lambda_shown().unwrap();
        assert_eq!(
            Some(learned),
            e.learned_lambda(),
            "{kind:?}: the slider shows the learned λ, the maps' bit for bit"
        );
        let r0 = e.recomputations();
        e.update_shift(|s| s.lambda = Some(1.25)).unwrap();
        e.compute().unwrap();
        let r1 = e.recomputations();
        assert_eq!(
            (r1.projections, r1.maps, r1.lambda),
            (r0.projections, r0.maps, r0.lambda + 1),
            "{kind:?}: only A1 − λ·A2 is recomputed"
        );
        assert!(!e.lambda_is_learned());
        assert_eq!(
            e.moved_away(),
            Vec::<&str>::new(),
            "the untrained model has nothing to leave"
        );
        assert_eq!(maps_of(&e, StageId::A1), a1);
        assert_eq!(maps_of(&e, StageId::A2), a2);
        let want = &a1 - &(&a2 * 1.25f32);
        assert_eq!(
            maps_of(&e, StageId::Diff),
            want,
            "{kind:?}: A1 − 1.25·A2 from the kept maps"
        );
        assert_eq!(e.cell(2, 1).unwrap().lambda, Some(1.25));
        if kind == MechanismKind::DiffTransformerV2 {
            let table = e.map(StageId::Lambda).unwrap();
            assert_eq!(table.dim(), (9, e.settings().maps.heads), "tokens × heads");
            assert!(
                table.iter().all(|&l| l == 1.25),
                "the slider's λ for every token and head"
            );
        }
        e.reset_lambda();
        e.compute().unwrap();
        assert!(e.lambda_is_learned());
        assert_eq!(
            e.recomputations().maps,
            r0.maps,
            "going back recomputes no map either"
        );
        assert_eq!(
            maps_of(&e, StageId::Diff),
            diff,
            "{kind:?}: back to the learned λ bit for bit"
        );
        assert_eq!(e.settings().shift.lambda, None);
        assert_eq!(e.lambda_shown(), Some(learned));
    }
}

#[test]
fn v2_draws_a_lambda_per_token_and_head_and_its_output_follows_the_slider() {
    let mut e = explorer("a b c d e f");
    e.update_maps(|m| {
        m.mechanism = MechanismKind::DiffTransformerV2;
        m.heads = 2;
    })
    .unwrap();
    e.compute().unwrap();
    let labels: Vec<_> = e.stages().iter().map(|s| s.label()).collect();
    assert_eq!(labels, ["A1", "A2", "λ", "A1 − λ·A2"]);
    let table = e.map(StageId::Lambda).unwrap().to_owned();
    assert_eq!(table.dim(), (6, 2));
    assert!(table.iter().all(|&l| l > 0.0 && l < 1.0), "σ(x·W_λ)");
    assert!(
        table.column(0) != table.column(1) || table.row(0) != table.row(1),
        "not one λ"
    );
    let mean = table.mean().unwrap();
    assert!(
        (e.lambda_shown().unwrap() - mean).abs() < 1e-6,
        "the slider shows their mean"
    );
    // Each row of A1 − λ·A2 subtracts its own token's λ.
    let (a1, a2, diff) = (
        e.map(StageId::A1).unwrap(),
        e.map(StageId::A2).unwrap(),
        e.map(StageId::Diff).unwrap(),
    );
    for i in 0..6 {
        for j in 0..6 {
            assert_eq!(diff[[i, j]], a1[[i, j]] - table[[i, 0]] * a2[[i, j]]);
        }
    }
    assert_eq!(
        e.cell(4, 2).unwrap().lambda,
        Some(table[[4, 0]]),
        "the cell's own λ"
    );
    assert_eq!(e.column_labels(StageId::Lambda), ["1", "2"]);
    assert_eq!(
        e.column_of_key(StageId::Lambda, 5),
        0,
        "the shown head's column"
    );
    e.set_head(1).unwrap();
    assert_eq!(e.column_of_key(StageId::Lambda, 5), 1);
    assert_eq!(
        e.map(StageId::Lambda).unwrap(),
        table.view(),
        "one table for every head"
    );
    let json = |e: &mut Explorer| e.stages_json().unwrap().output;
    let before = json(&mut e);
    e.update_shift(|s| s.lambda = Some(0.0)).unwrap();
    e.compute().unwrap();
    let after = json(&mut e);
    assert_ne!(before, after, "the output follows λ");
    // λ = 0 leaves A1 alone.
    assert_eq!(e.map(StageId::Diff).unwrap(), e.map(StageId::A1).unwrap());
}

#[test]
fn the_segment_size_recomputes_the_maps_of_hierarchical_attention_only() {
    let mut e = explorer("one two three four five six seven");
    e.update_maps(|m| m.mechanism = MechanismKind::Hierarchical)
        .unwrap();
    e.compute().unwrap();
    assert_eq!(e.settings().maps.segment, 4);
    assert_eq!(e.map(StageId::Segments).unwrap().dim(), (7, 2));
    assert_eq!(e.column_labels(StageId::Segments), ["1–4", "5–7"]);
    assert_eq!(e.parameter_readout().as_deref(), Some("s = 4"));
    let r0 = e.recomputations();
    e.update_maps(|m| m.segment = 3).unwrap();
    e.compute().unwrap();
    let r1 = e.recomputations();
    assert_eq!((r1.projections, r1.maps), (r0.projections, r0.maps + 1));
    assert_eq!(e.map(StageId::Segments).unwrap().dim(), (7, 3));
    assert_eq!(e.column_labels(StageId::Segments), ["1–3", "4–6", "7"]);
    assert_eq!(
        (
            e.column_of_key(StageId::Segments, 5),
            e.key_of_column(StageId::Segments, 2)
        ),
        (1, 6)
    );
    for row in e.map(StageId::A).unwrap().rows() {
        assert!((row.sum() - 1.0).abs() < 1e-5, "rows of A sum to 1");
    }
    // Another mechanism ignores the segment: nothing is recomputed.
    e.update_maps(|m| m.mechanism = MechanismKind::Standard)
        .unwrap();
    e.compute().unwrap();
    let r2 = e.recomputations();
    e.update_maps(|m| m.segment = 5).unwrap();
    e.compute().unwrap();
    assert_eq!(e.recomputations(), r2);
    assert!(
        e.update_maps(|m| m.segment = 0).is_err(),
        "a segment has a token at least"
    );
}

fn golden(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read(path).expect("a golden spec")
}

#[test]
fn a_captured_layer_draws_with_its_tokens_name_layer_and_fixed_heads() {
    let mut e = explorer("hello");
    e.load_spec_bytes(&golden(
        "diffllama_L24_H8_kv2_d64_layer2_bias_theta5e5.spec.safetensors",
    ))
    .unwrap();
    e.compute().unwrap();
    assert!(e.is_spec());
    let info = e.layer_info().unwrap();
    assert_eq!(info.model.as_deref(), Some("random DiffLlamaForCausalLM"));
    assert_eq!(info.layer, Some(2));
    assert!(info.labelled && info.biases);
    assert_eq!(
        (info.heads, info.kv_heads, info.head_dim, info.d_model),
        (4, 1, 8, 64)
    );
    let (layout, theta) = info.rope.unwrap();
    assert_eq!(
        (layout, theta),
        (diffattn::engine::RopeLayout::Half, Some(500000.0))
    );
    let meta_tokens = e.meta().unwrap().tokens.clone().unwrap();
    assert_eq!(
        e.labels(),
        meta_tokens.as_slice(),
        "the axes are the captured tokens"
    );
    assert_eq!(e.head_choices(), vec![4], "the weights fix the heads");
    let err = e.update_maps(|m| m.heads = 2).unwrap_err();
    assert!(err.to_string().contains("heads"), "{err}");
    assert_eq!(e.settings().maps.heads, 4);
    // The mechanisms offered are those the layer's weights run: each computes, the others fail.
    let choices = e.mechanism_choices();
    assert!(choices.contains(&MechanismKind::DiffTransformer));
    for kind in MechanismKind::ALL {
        let ran = e
            .update_maps(|m| m.mechanism = kind)
            .and_then(|()| e.compute());
        assert_eq!(ran.is_ok(), choices.contains(&kind), "{kind:?}: {ran:?}");
        e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
            .unwrap();
    }
    // The captured λ until the slider moves, and back.
    e.compute().unwrap();
    let captured = e.lambda().unwrap();
    e.update_shift(|s| s.lambda = Some(0.1)).unwrap();
    e.compute().unwrap();
    assert_eq!(e.lambda(), Some(0.1));
    assert_eq!(e.moved_away(), ["lambda"], "away from the captured λ");
    e.reset_lambda();
    e.compute().unwrap();
    assert_eq!(e.lambda(), Some(captured));
    assert!(e.moved_away().is_empty());
}

#[test]
fn a_captured_v2_layer_draws_its_lambda_table() {
    let mut e = explorer("hello");
    e.load_spec_bytes(&golden("official_v2_L11_H2_kv1_hd8_d32.spec.safetensors"))
        .unwrap();
    e.compute().unwrap();
    assert_eq!(e.kind(), MechanismKind::DiffTransformerV2);
    assert_eq!(e.map(StageId::Lambda).unwrap().dim(), (11, 2));
    assert_eq!(e.head_choices(), vec![2]);
    assert!(e
        .mechanism_choices()
        .contains(&MechanismKind::DiffTransformerV2));
}

#[test]
fn the_page_refuses_a_spec_past_its_token_cap_and_says_why() {
    let tokens = diffattn::text::PAGE_MAX_TOKENS + 1;
    let row = "[1, 0]";
    let x = vec![row; tokens].join(",");
    let spec = format!(
        r#"{{"mechanism": "standard", "heads": 1, "causal": false, "x": [{x}], "w_q": [[1,0],[0,1]], "w_k": [[1,0],[0,1]], "w_v": [[1,0],[0,1]], "w_o": [[1,0],[0,1]]}}"#
    );
    let mut e = explorer("hello");
    let err = e.load_spec(&spec).unwrap_err();
    assert_eq!(err.field, "x");
    assert!(
        err.message.contains("more than 2,048 tokens") && err.message.contains("PAGE_MAX_TOKENS"),
        "{}",
        err.message
    );
    assert!(!e.is_spec(), "a refused spec leaves the page as it was");
    // The page's cap is the library's: the CLI refuses it too, by its own name.
    let cli = diffattn::spec::parse_spec(&spec).unwrap_err();
    assert!(cli.message.contains("MAX_TOKENS"), "{}", cli.message);
}

#[test]
fn the_extremes_found_piece_by_piece_are_those_of_the_whole_map() {
    use diffattn::engine::shift_diff::Difference;
    use diffattn::render::MapStats;
    // 600 tokens: each map is computed in several pieces of rows (diffattn::explorer::piece_rows).
    let words: Vec<&str> = "the film was not good but the actors were wonderful"
        .split(' ')
        .collect();
    let text: Vec<&str> = (0..600).map(|i| words[i % words.len()]).collect();
    let mut e = explorer(&text.join(" "));
    assert!(
        diffattn::explorer::piece_rows(600) < 600,
        "more than one piece"
    );
    for difference in [Difference::Single, Difference::Symmetric] {
        e.update_shift(|s| s.difference = difference).unwrap();
        e.compute().unwrap();
        for stage in e.stages() {
            let map = e.map(stage).unwrap().to_owned();
            assert_eq!(
                e.head_stats(stage, e.head()),
                Some(MapStats::of(map.view())),
                "{stage:?}"
            );
        }
    }
}

#[test]
fn the_temperature_recomputes_the_differential_transformers_maps_and_no_other_mechanism_uses_it() {
    use diffattn::explorer::SettingsPatch;
    let hot = SettingsPatch {
        temperature: Some(2.0),
        ..Default::default()
    };
    let mut e = explorer("the plot is thin but the acting is warm");
    e.update_maps(|m| m.mechanism = MechanismKind::DiffTransformer)
        .unwrap();
    e.compute().unwrap();
    let (a1, diff, r0) = (
        maps_of(&e, StageId::A1),
        maps_of(&e, StageId::Diff),
        e.recomputations(),
    );
    e.update(&hot).unwrap();
    e.compute().unwrap();
    assert_eq!(e.recomputations().maps, r0.maps + 1, "A1 and A2 again");
    let warm = maps_of(&e, StageId::A1);
    // Scores over T = 2 are flatter: every row's largest weight is smaller (or the same).
    for (row, was) in warm.rows().into_iter().zip(a1.rows()) {
        let max = |r: ndarray::ArrayView1<f32>| r.iter().copied().fold(0.0, f32::max);
        assert!(max(row) <= max(was) + 1e-6);
        assert!((row.sum() - 1.0).abs() < 1e-5, "rows still sum to 1");
    }
    assert_ne!(warm, a1);
    assert_eq!(
        e.moved_away(),
        Vec::<&str>::new(),
        "nothing to leave untrained"
    );
    // Back to T = 1: the maps of before, bit for bit.
    e.update_maps(|m| m.temperature = 1.0).unwrap();
    e.compute().unwrap();
    assert_eq!(maps_of(&e, StageId::A1), a1);
    assert_eq!(maps_of(&e, StageId::Diff), diff);
    // Refused values name it and change nothing.
    for t in [0.0f32, -0.5, f32::NAN] {
        let err = e.update_maps(|m| m.temperature = t).unwrap_err();
        assert!(err.to_string().starts_with("temperature:"), "{err}");
    }
    assert_eq!(e.settings().maps.temperature, 1.0);
    // Cosine attention does not take it: moving it recomputes nothing there.
    e.update_maps(|m| m.mechanism = MechanismKind::Cosine)
        .unwrap();
    e.compute().unwrap();
    let r = e.recomputations();
    e.update(&hot).unwrap();
    e.compute().unwrap();
    assert_eq!(e.recomputations(), r);
    assert!(!MechanismKind::Cosine.takes(diffattn::engine::Parameter::Temperature));
}

#[test]
fn a_trained_differential_transformer_moved_to_another_temperature_says_so() {
    let mut e = Explorer::new(Model::untrained());
    e.set_text("a fine film");
    let model = Model::from_bytes(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/weights/diff_transformer.bin"
        ))
        .unwrap(),
    )
    .unwrap();
    e.set_model(model);
    assert_eq!(e.settings().maps.temperature, 1.0, "trained at T = 1");
    e.update_maps(|m| m.temperature = 0.5).unwrap();
    assert_eq!(e.moved_away(), ["temperature"]);
}

#[test]
fn the_closest_head_to_a_map_is_the_head_that_drew_it() {
    // Head 3's own A is closest to head 3 (cosine 1), whatever the head shown; another
    // sentence's map has another shape and matches nothing.
    let mut e = explorer("the acting is wonderful but the plot is thin");
    e.update_maps(|m| m.heads = 4).unwrap();
    e.compute_all().unwrap();
    let reference: Vec<f32> = e.head_map(StageId::A, 2).unwrap().iter().copied().collect();
    let closest = e.closest_head(StageId::A, &reference).unwrap().unwrap();
    assert_eq!(closest.head, 2);
    assert_eq!(closest.cosines.len(), 4);
    assert!((closest.cosines[2] - 1.0).abs() < 1e-6);
    assert!(closest
        .cosines
        .iter()
        .all(|&c| (0.0..=1.0 + 1e-6).contains(&c)));
    assert_eq!(e.closest_head(StageId::A, &reference[..10]).unwrap(), None);
}

#[test]
fn a_heads_statistics_are_read_on_its_map_with_the_mask_and_where_the_keys_sit() {
    use diffattn::explorer::SettingsPatch;
    // Input difference under a causal mask: key j is the step into token j + 1, so query i's
    // previous token is key i − 2, and query 0 sees no key at all.
    let mut e = explorer("the film was not good but the actors were wonderful");
    e.update(&SettingsPatch {
        mechanism: Some(MechanismKind::InputDiff),
        causal: Some(true),
        ..Default::default()
    })
    .unwrap();
    e.compute_all().unwrap();
    assert_eq!(e.sink_keys(), vec![0], "the first key, not a BERT's [CLS]");
    for head in 0..e.settings().maps.heads {
        let s = e.head_statistics(StageId::A, head).expect("computed");
        let map = e.head_map(StageId::A, head).unwrap();
        let n = map.nrows();
        // Read off the map: query 0 has no allowed key (a row of zeros), every other row is a
        // softmax over keys 0..i (positions 1..=i).
        let rows: Vec<usize> = (1..n).collect();
        let sink = rows.iter().map(|&i| map[[i, 0]]).sum::<f32>() / rows.len() as f32;
        let before: Vec<usize> = (2..n).collect();
        let previous = before.iter().map(|&i| map[[i, i - 2]]).sum::<f32>() / before.len() as f32;
        assert_eq!(s.rows, n - 1, "head {head}");
        assert!(
            (s.sink - sink).abs() < 1e-5,
            "head {head}: {} vs {sink}",
            s.sink
        );
        assert!(
            (s.previous - previous).abs() < 1e-5,
            "head {head}: {} vs {previous}",
            s.previous
        );
        assert_eq!(s.next, 0.0, "causal: nothing after the query");
        assert!(!s.negative && s.entropy > 0.0);
    }
    // A head not computed yet has none.
    e.update(&SettingsPatch {
        causal: Some(false),
        ..Default::default()
    })
    .unwrap();
    assert!(e.head_statistics(StageId::A, 1).is_none());
}

#[test]
fn gated_attention_draws_its_output_gate_per_token_and_head_beside_a() {
    // The untrained model draws its output gate W_og from its seed; the page's stages are A
    // and the gate's mean per token (row) and head (column), one table for every head, which a
    // hovered cell reads in the shown head's column (DESIGN.md §4.1).
    let mut e = explorer("a b c d e f");
    e.update_maps(|m| {
        m.mechanism = MechanismKind::GatedAttention;
        m.heads = 4;
    })
    .unwrap();
    e.compute().unwrap();
    let labels: Vec<_> = e.stages().iter().map(|s| s.label()).collect();
    assert_eq!(labels, ["A", "mean Gₒ"]);
    let table = e.map(StageId::OutputGate).unwrap().to_owned();
    assert_eq!(table.dim(), (6, 4));
    assert!(
        table.iter().all(|&g| g > 0.0 && g < 1.0),
        "a mean of sigmoids"
    );
    let stages = e.stages_json().unwrap();
    let want = stages.output_gate_mean.expect("gated attention's table");
    for (t, row) in want.iter().enumerate() {
        for (h, &g) in row.iter().enumerate() {
            assert!((table[[t, h]] - g).abs() < 1e-6, "the CLI's table");
        }
    }
    e.set_head(2).unwrap();
    e.compute().unwrap();
    let cell = e.cell(4, 1).unwrap();
    assert_eq!(
        cell.values,
        [
            (StageId::A, e.map(StageId::A).unwrap()[[4, 1]]),
            (StageId::OutputGate, table[[4, 2]]),
        ],
        "the hovered query's gate in the shown head"
    );
    assert_eq!(cell.lambda, None, "the gate is not a λ");
    // Its channels (d over 4 heads), the gate per channel that a hover shows.
    let channels = cell.output_gate.expect("the gate per channel");
    assert_eq!(channels.len(), e.d_model() / 4);
    assert!(channels.iter().all(|&g| g > 0.0 && g < 1.0));
    let mean = channels.iter().sum::<f32>() / channels.len() as f32;
    assert!(
        (mean - table[[4, 2]]).abs() < 1e-6,
        "the table's cell is their mean"
    );
    assert_eq!(e.learned_lambda(), None);
    assert_eq!(e.column_labels(StageId::OutputGate), ["1", "2", "3", "4"]);
    // Two heads re-split the same W_og: the table's cells are means over 16 channels now.
    e.update_maps(|m| m.heads = 2).unwrap();
    e.compute().unwrap();
    let two = e.map(StageId::OutputGate).unwrap().to_owned();
    for t in 0..6 {
        let pair = (table[[t, 0]] + table[[t, 1]]) / 2.0;
        assert!(
            (two[[t, 0]] - pair).abs() < 1e-6,
            "the mean of two heads' means"
        );
    }
    // Back to standard attention: no gate, no table.
    e.update_maps(|m| m.mechanism = MechanismKind::Standard)
        .unwrap();
    e.compute().unwrap();
    assert!(e.map(StageId::OutputGate).is_none());
}

#[test]
fn a_gated_attention_spec_draws_its_reference_table() {
    // A real layer (grouped-query heads, rope, biases, b_og) opened as a spec: the page's
    // table is the float64 reference's output_gate_mean (tests/fixtures/real/) within 1e-4.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    let name = "gatedattention_L7_H4_kv2_d16_causal_rope_half_bias";
    let spec = std::fs::read_to_string(dir.join(format!("{name}.spec.json"))).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).unwrap(),
    )
    .unwrap();
    let mut e = Explorer::new(Model::untrained());
    e.load_spec(&spec).unwrap();
    e.compute().unwrap();
    let table = e.map(StageId::OutputGate).unwrap();
    assert_eq!(table.dim(), (7, 4));
    for (t, row) in expected["output_gate_mean"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        for (h, want) in row.as_array().unwrap().iter().enumerate() {
            let want = want.as_f64().unwrap() as f32;
            assert!((table[[t, h]] - want).abs() < 1e-4, "({t}, {h})");
        }
    }
    // Switching such a spec to gated attention is refused by a spec without W_og.
    let plain = spec.replace("gated_attention", "standard");
    let plain: serde_json::Value = serde_json::from_str(&plain).unwrap();
    let mut plain = plain.as_object().unwrap().clone();
    plain.remove("w_output_gate");
    plain.remove("b_output_gate");
    e.load_spec(&serde_json::Value::Object(plain).to_string())
        .unwrap();
    let e2 = e.update_maps(|m| m.mechanism = MechanismKind::GatedAttention);
    assert!(e2.unwrap_err().to_string().contains("w_output_gate"));
}
