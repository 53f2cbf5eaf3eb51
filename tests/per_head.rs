//! One head at a time: the engine's staged steps for some heads only (`base_maps_of`,
//! `apply_lambda_of`, `shift_stages_of_into`, `output_of`) give every map the bits it has when
//! every head is computed together (`engine::run`), for every mechanism and layout the fixtures
//! hold: V2, the Differential Transformer in both pairings, hierarchical, input difference,
//! causal and windowed masks, grouped-query heads, rotary positions, biases. The explorer, which
//! computes the shown head first and the others when asked, draws the same bits and gives the
//! same output.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use diffattn::engine::shift_diff::ShiftDiffMaps;
use diffattn::engine::{
    apply_lambda_of, base_maps, base_maps_of, output_of, run, shift_stages_of_into, Mechanism,
    Projection, StageId, Stages,
};
use diffattn::explorer::Explorer;
use diffattn::model::Model;
use ndarray::{array, Array2, ArrayView2, ArrayView3, Axis};

fn same_bits(a: ArrayView2<f32>, b: ArrayView2<f32>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Every stage of `stages` with its maps, `(heads, queries, columns)`.
fn stacks(stages: &Stages) -> Vec<(StageId, ArrayView3<'_, f32>)> {
    match stages {
        Stages::Attention { a, .. } => vec![(StageId::A, a.view())],
        Stages::ShiftDiff { a, maps, .. } => {
            let mut out = vec![
                (StageId::A, a.view()),
                (StageId::Shifted, maps.shifted.view()),
                (StageId::D, maps.d.view()),
                (StageId::G, maps.g.view()),
                (StageId::Fused, maps.fused.view()),
            ];
            if let Some(back) = &maps.shifted_back {
                out.push((StageId::ShiftedBack, back.view()));
            }
            out
        }
        Stages::DiffTransformer { maps, .. } => vec![
            (StageId::A1, maps.a1.view()),
            (StageId::A2, maps.a2.view()),
            (StageId::Diff, maps.diff.view()),
        ],
        Stages::DiffTransformerV2 { maps, .. } => vec![
            (StageId::A1, maps.a1.view()),
            (StageId::A2, maps.a2.view()),
            (StageId::Diff, maps.diff.view()),
        ],
        Stages::Hierarchical { maps, .. } => vec![
            (StageId::Local, maps.local.view()),
            (StageId::Segments, maps.segments.view()),
            (StageId::A, maps.a.view()),
        ],
    }
}

/// The spec's mechanism with a fixed λ in place of the learned one (V1 and V2), else itself.
fn with_fixed_lambda(m: &Mechanism, lambda: f32) -> Mechanism {
    match m {
        Mechanism::DiffTransformer(p) => {
            let mut p = p.clone();
            p.lambda = Some(lambda);
            Mechanism::DiffTransformer(p)
        }
        Mechanism::DiffTransformerV2 { .. } => Mechanism::DiffTransformerV2 {
            lambda: Some(lambda),
        },
        other => other.clone(),
    }
}

#[test]
fn each_head_alone_has_the_bits_of_every_head_together() {
    let specs = common::fixture_specs();
    assert!(specs.len() >= 100, "{} fixtures", specs.len());
    for (name, spec) in &specs {
        let whole = run(
            spec.x.view(),
            &spec.weights,
            spec.heads,
            spec.causal,
            &spec.mechanism,
        )
        .unwrap();
        let projection = Projection::new(spec.mechanism.kind(), spec.x.view(), &spec.weights);
        let mut finals = Vec::new();
        for h in 0..spec.heads {
            let base = base_maps_of(
                &spec.mechanism,
                &projection,
                &spec.weights,
                spec.heads,
                spec.causal,
                h..h + 1,
            )
            .unwrap();
            let mut shift = ShiftDiffMaps::empty();
            let has_shift =
                shift_stages_of_into(&spec.mechanism, &base, spec.causal, h, &mut shift).unwrap();
            for (stage, stack) in stacks(&whole) {
                let one = base
                    .stage(stage)
                    .or_else(|| {
                        has_shift
                            .then(|| shift.stage(stage))
                            .flatten()
                            .map(|m| m.view())
                    })
                    .unwrap_or_else(|| panic!("{name}: head {h} has no {stage:?}"));
                assert_eq!(one.len_of(Axis(0)), 1, "{name}: {stage:?}");
                assert!(
                    same_bits(one.index_axis(Axis(0), 0), stack.index_axis(Axis(0), h)),
                    "{name}: head {h}, {stage:?} differs"
                );
            }
            if let Stages::DiffTransformerV2 { maps, .. } = &whole {
                let column = base.lambda_table().unwrap();
                assert!(same_bits(
                    column.view(),
                    maps.lambda.slice(ndarray::s![.., h..h + 1])
                ));
            }
            let final_stage = spec.mechanism.kind().final_stage();
            let map = base
                .stage(final_stage)
                .map(|m| m.index_axis_move(Axis(0), 0).to_owned())
                .unwrap_or_else(|| shift.fused.index_axis(Axis(0), 0).to_owned());
            finals.push(map);
        }
        let out = output_of(
            &spec.mechanism,
            &projection,
            &spec.weights,
            spec.heads,
            &|h| finals[h].view(),
        )
        .unwrap();
        assert!(
            same_bits(out.view(), whole.output().view()),
            "{name}: output"
        );
    }
}

#[test]
fn a_new_lambda_put_into_one_head_has_the_bits_of_every_head_computed_with_it() {
    for (name, spec) in common::fixture_specs() {
        if !matches!(
            spec.mechanism,
            Mechanism::DiffTransformer(_) | Mechanism::DiffTransformerV2 { .. }
        ) {
            continue;
        }
        let fixed = with_fixed_lambda(&spec.mechanism, 0.3);
        let projection = Projection::new(spec.mechanism.kind(), spec.x.view(), &spec.weights);
        let whole = base_maps(&fixed, &projection, &spec.weights, spec.heads, spec.causal).unwrap();
        for h in 0..spec.heads {
            let mut one = base_maps_of(
                &spec.mechanism,
                &projection,
                &spec.weights,
                spec.heads,
                spec.causal,
                h..h + 1,
            )
            .unwrap();
            assert!(apply_lambda_of(&fixed, &projection, &mut one, h).unwrap());
            let want = whole.stage(StageId::Diff).unwrap();
            let got = one.stage(StageId::Diff).unwrap();
            assert!(
                same_bits(got.index_axis(Axis(0), 0), want.index_axis(Axis(0), h)),
                "{name}: head {h}"
            );
        }
    }
}

#[test]
fn a_head_range_past_the_heads_is_an_error_naming_the_head() {
    let (_, spec) = common::fixture_specs().remove(0);
    let projection = Projection::new(spec.mechanism.kind(), spec.x.view(), &spec.weights);
    let heads = spec.heads;
    let err = base_maps_of(
        &spec.mechanism,
        &projection,
        &spec.weights,
        heads,
        spec.causal,
        heads..heads + 1,
    )
    .unwrap_err();
    assert!(err.to_string().contains("head"), "{err}");
}

#[test]
fn by_hand_the_second_head_alone_is_the_second_map() {
    // d = 2, two heads of width 1, W = I: head 0 sees x[:, 0], head 1 sees x[:, 1]. Token rows
    // (1, 0) and (0, 2): head 1's scores are q·k = [[0, 0], [0, 4]], so its row 0 is uniform
    // [1/2, 1/2] and row 1 is softmax([0, 4]) = [1/(1+e⁴), e⁴/(1+e⁴)].
    let eye = Array2::<f32>::eye(2);
    let w = diffattn::engine::Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap();
    let x = array![[1.0f32, 0.0], [0.0, 2.0]];
    let p = Projection::new(Mechanism::Standard.kind(), x.view(), &w);
    let one = base_maps_of(&Mechanism::Standard, &p, &w, 2, false, 1..2).unwrap();
    let a = one.stage(StageId::A).unwrap();
    assert_eq!(a.dim(), (1, 2, 2));
    assert_eq!(a[[0, 0, 0]], 0.5);
    assert_eq!(a[[0, 0, 1]], 0.5);
    let e4 = 4f32.exp();
    assert!((a[[0, 1, 1]] - e4 / (1.0 + e4)).abs() < 1e-6, "{a}");
}

#[test]
fn the_explorer_computes_the_shown_head_first_and_every_head_with_the_same_bits() {
    for (name, spec) in common::fixture_specs() {
        if spec.page_support().is_err() {
            continue;
        }
        let whole = spec.run().unwrap();
        let heads = spec.heads;
        let mut e = Explorer::new(Model::untrained());
        e.load(spec).unwrap_or_else(|err| panic!("{name}: {err}"));
        let last = heads - 1;
        e.set_head(last).unwrap();
        e.compute().unwrap();
        // Only the shown head (and the head loading checked) is computed.
        let r = e.recomputations();
        assert_eq!(r.maps, if last == 0 { 1 } else { 2 }, "{name}");
        let missing = e.missing_heads();
        assert_eq!(missing.len(), heads - 1, "{name}: {missing:?}");
        let stages = stacks(&whole);
        for &(stage, stack) in &stages {
            let got = e.head_map(stage, last).unwrap();
            assert!(
                same_bits(got, stack.index_axis(Axis(0), last)),
                "{name}: {stage:?}"
            );
        }
        while e.compute_next().unwrap() {}
        assert!(e.missing_heads().is_empty(), "{name}");
        assert_eq!(
            e.recomputations().maps,
            heads as u64,
            "{name}: each head once"
        );
        for &(stage, stack) in &stages {
            let got = e.maps(stage).unwrap();
            assert!(
                got.iter()
                    .zip(stack)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{name}: {stage:?}"
            );
        }
        let out = e.layer_output().unwrap().unwrap();
        assert!(
            same_bits(out.view(), whole.output().view()),
            "{name}: output"
        );
        // Switching heads back and forth recomputes nothing.
        let r = e.recomputations();
        for h in (0..heads).rev() {
            e.set_head(h).unwrap();
            e.compute().unwrap();
        }
        assert_eq!(e.recomputations(), r, "{name}");
    }
}
