//! One block at a time: the engine's staged steps over a block of the stack (one head, and
//! its query rows in blocks of any size: `Projection::project_into`, `base_maps_into`,
//! `apply_lambda`, `shift_stages_into`, `mix_into`) give every map the bits it has when every
//! head and row is computed together (`engine::run`), for every mechanism and layout the
//! fixtures hold: V2, the Differential Transformer in both pairings, hierarchical, input
//! difference, causal and windowed masks, grouped-query heads, rotary positions, biases. The
//! explorer, which computes the shown head first, in pieces, and the others when asked, draws
//! the same bits and gives the same output.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use diffattn::engine::shift_diff::ShiftDiffMaps;
use diffattn::engine::{
    apply_lambda, base_maps_into, mix_into, run, shift_stages_into, BaseMaps, Block, Mechanism,
    Projection, StageId, Stages,
};
use diffattn::explorer::{Explorer, Need};
use diffattn::model::Model;
use ndarray::{array, Array2, ArrayView2, ArrayView3, Axis};

fn same_bits(a: ArrayView2<f32>, b: ArrayView2<f32>) -> bool {
    a.dim() == b.dim() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Every stage of `stages` with its maps, `(heads, queries, columns)`.
fn stacks(stages: &Stages) -> Vec<(StageId, ArrayView3<'_, f32>)> {
    match stages {
        Stages::Attention { a, .. } | Stages::GatedAttention { a, .. } => {
            vec![(StageId::A, a.view())]
        }
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

/// Splits `0..n` into blocks of `size` rows (the last one shorter).
fn blocks_of(n: usize, size: usize) -> Vec<std::ops::Range<usize>> {
    (0..n)
        .step_by(size.max(1))
        .map(|s| s..(s + size).min(n))
        .collect()
}

#[test]
fn each_head_alone_in_blocks_of_rows_has_the_bits_of_every_head_together() {
    let specs = common::fixture_specs();
    assert!(specs.len() >= 100, "{} fixtures", specs.len());
    for (name, spec) in &specs {
        let (heads, causal, mechanism) = (spec.heads, spec.causal, &spec.mechanism);
        let whole = run(spec.x.view(), &spec.weights, heads, causal, mechanism).unwrap();
        let tokens = spec.x.nrows();
        // Block sizes that cut through the engine's own blocks of 16 rows and the last row.
        for size in [1, 3, 16, tokens.max(1)] {
            let mut projection = Projection::empty();
            for rows in blocks_of(tokens, size) {
                let kind = mechanism.kind();
                Projection::project_into(
                    kind,
                    spec.x.view(),
                    &spec.weights,
                    heads,
                    rows,
                    &mut projection,
                )
                .unwrap();
            }
            assert_eq!(
                projection,
                Projection::new(mechanism.kind(), spec.x.view(), &spec.weights, heads).unwrap(),
                "{name}: projection in blocks of {size}"
            );
            let mut finals = Vec::new();
            for h in 0..heads {
                let mut base = BaseMaps::default();
                let mut shift = ShiftDiffMaps::empty();
                let mut has_shift = false;
                for rows in blocks_of(tokens, size) {
                    let block = Block {
                        heads: h..h + 1,
                        queries: rows,
                    };
                    base_maps_into(
                        mechanism,
                        &projection,
                        &spec.weights,
                        heads,
                        causal,
                        &block,
                        &mut base,
                    )
                    .unwrap();
                }
                apply_lambda(mechanism, &projection, &mut base, h).unwrap();
                for rows in blocks_of(tokens, size) {
                    let block = Block {
                        heads: h..h + 1,
                        queries: rows,
                    };
                    has_shift =
                        shift_stages_into(mechanism, &base, causal, &block, &mut shift).unwrap();
                }
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
                        "{name}: head {h}, {stage:?} in blocks of {size} differs"
                    );
                }
                if let Stages::DiffTransformerV2 { maps, .. } = &whole {
                    let column = base.lambda_table().unwrap();
                    assert!(same_bits(
                        column.view(),
                        maps.lambda.slice(ndarray::s![.., h..h + 1])
                    ));
                }
                let final_stage = mechanism.kind().final_stage();
                let map = base
                    .stage(final_stage)
                    .map(|m| m.index_axis_move(Axis(0), 0).to_owned())
                    .unwrap_or_else(|| shift.fused.index_axis(Axis(0), 0).to_owned());
                finals.push(map);
            }
            // The output head by head, in any order, into one concatenation.
            let mut concat = Array2::zeros((0, 0));
            for h in (0..heads).rev() {
                mix_into(
                    mechanism,
                    &projection,
                    &spec.weights,
                    heads,
                    h..h + 1,
                    &|h| finals[h].view(),
                    &mut concat,
                )
                .unwrap();
            }
            let out = spec.weights.out(concat.view());
            assert!(
                same_bits(out.view(), whole.output().view()),
                "{name}: output"
            );
        }
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
        let (heads, causal) = (spec.heads, spec.causal);
        let fixed = with_fixed_lambda(&spec.mechanism, 0.3);
        let projection =
            Projection::new(spec.mechanism.kind(), spec.x.view(), &spec.weights, heads).unwrap();
        let mut whole = BaseMaps::default();
        let all = Block::all(heads, spec.x.nrows());
        base_maps_into(
            &fixed,
            &projection,
            &spec.weights,
            heads,
            causal,
            &all,
            &mut whole,
        )
        .unwrap();
        for h in 0..heads {
            let mut one = BaseMaps::default();
            let block = Block::head(h, spec.x.nrows());
            base_maps_into(
                &spec.mechanism,
                &projection,
                &spec.weights,
                heads,
                causal,
                &block,
                &mut one,
            )
            .unwrap();
            assert!(apply_lambda(&fixed, &projection, &mut one, h).unwrap());
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
fn a_block_past_the_heads_or_rows_is_an_error_naming_it() {
    let (_, spec) = common::fixture_specs().remove(0);
    let heads = spec.heads;
    let tokens = spec.x.nrows();
    let projection =
        Projection::new(spec.mechanism.kind(), spec.x.view(), &spec.weights, heads).unwrap();
    let mut out = BaseMaps::default();
    let (m, w, c) = (&spec.mechanism, &spec.weights, spec.causal);
    let past_heads = Block {
        heads: heads..heads + 1,
        queries: 0..tokens,
    };
    let err = base_maps_into(m, &projection, w, heads, c, &past_heads, &mut out).unwrap_err();
    assert!(err.to_string().contains("head"), "{err}");
    let past_rows = Block {
        heads: 0..1,
        queries: tokens..tokens + 1,
    };
    let err = base_maps_into(m, &projection, w, heads, c, &past_rows, &mut out).unwrap_err();
    assert!(err.to_string().contains("queries"), "{err}");
}

#[test]
fn by_hand_the_second_head_alone_is_the_second_map_and_its_second_row_alone_is_its_row() {
    // d = 2, two heads of width 1, W = I: head 0 sees x[:, 0], head 1 sees x[:, 1]. Token rows
    // (1, 0) and (0, 2): head 1's scores are q·k = [[0, 0], [0, 4]], so its row 0 is uniform
    // [1/2, 1/2] and row 1 is softmax([0, 4]) = [1/(1+e⁴), e⁴/(1+e⁴)].
    let eye = Array2::<f32>::eye(2);
    let w = diffattn::engine::Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap();
    let x = array![[1.0f32, 0.0], [0.0, 2.0]];
    let p = Projection::new(Mechanism::Standard.kind(), x.view(), &w, 2).unwrap();
    let mut one = BaseMaps::default();
    let block = Block::head(1, 2);
    base_maps_into(&Mechanism::Standard, &p, &w, 2, false, &block, &mut one).unwrap();
    let a = one.stage(StageId::A).unwrap();
    assert_eq!(a.dim(), (1, 2, 2));
    assert_eq!(a[[0, 0, 0]], 0.5);
    assert_eq!(a[[0, 0, 1]], 0.5);
    let e4 = 4f32.exp();
    assert!((a[[0, 1, 1]] - e4 / (1.0 + e4)).abs() < 1e-6, "{a}");
    // Row 1 alone: row 0 stays as it was (zeros in a fresh buffer), row 1 is the same.
    let mut row = BaseMaps::default();
    let block = Block {
        heads: 1..2,
        queries: 1..2,
    };
    base_maps_into(&Mechanism::Standard, &p, &w, 2, false, &block, &mut row).unwrap();
    let r = row.stage(StageId::A).unwrap();
    assert_eq!((r[[0, 0, 0]], r[[0, 0, 1]]), (0.0, 0.0));
    assert_eq!(r[[0, 1, 1]].to_bits(), a[[0, 1, 1]].to_bits());
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
        // Only the shown head is computed.
        let r = e.recomputations();
        assert_eq!(r.maps, 1, "{name}");
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
        while e.work(Need::Every).unwrap() {}
        assert!(e.missing_heads().is_empty(), "{name}");
        assert!(e.progress(Need::Every).finished, "{name}");
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
