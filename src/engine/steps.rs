//! The one way to run a mechanism: staged steps whose results a caller can cache separately,
//! because each depends on fewer settings than the next (the list is in
//! [`crate::engine::mechanism`]'s header): [`Projection::new`], [`base_maps_into`] (with
//! [`apply_lambda`] and V2's [`lambda_table`]), [`shift_stages_into`], then [`output`].
//!
//! Each step is one function over a [`Block`] of the layer's stack: some heads and some query
//! rows, the whole stack being one block. Every row of every head is computed alone (its cells
//! depend on its own row of scores), so a block has exactly the bits it has in the whole stack
//! (tests/per_head.rs), and a page can compute the head it shows first, in blocks short enough
//! to leave room for a frame, and the others when something asks for them. [`run`](super::run)
//! is the steps in a row over the whole stack.

use std::ops::Range;

use ndarray::{Array2, Array3, ArrayView2, ArrayView3, Axis};

pub use super::block::Block;
use super::cosine;
use super::diff_transformer::{self, DiffTransformerMaps};
use super::diff_transformer_v2::{self, DiffTransformerV2Maps};
use super::error::EngineError;
use super::gated_attention;
use super::head_shape::HeadShape;
use super::hierarchical::{self, HierarchicalMaps};
use super::input_diff;
use super::mechanism::{Mechanism, MechanismKind};
use super::params::{Gate, ShiftDiffParams};
pub use super::project::Projection;
use super::projection::Weights;
use super::shift_diff::{self, ShiftDiffMaps};
use super::stage::StageId;
use super::standard;

/// Step 2: the maps before any shift, one map per head of a block's heads in each stack.
#[derive(Debug, Clone, PartialEq)]
pub enum BaseMaps {
    /// One attention map `A` per head, `(heads, queries, keys)`.
    Attention(Array3<f32>),
    /// The Differential Transformer's `A1`, `A2`, lambda and `A1 − λA2`.
    DiffTransformer(DiffTransformerMaps),
    /// V2's `A1`, `A2`, λ per token and head, and `A1 − λA2`.
    DiffTransformerV2(DiffTransformerV2Maps),
    /// Hierarchical attention's `local`, `segments` and token map `A`.
    Hierarchical(HierarchicalMaps),
}

impl Default for BaseMaps {
    /// No maps yet: a buffer for [`base_maps_into`] to fill.
    fn default() -> BaseMaps {
        BaseMaps::Attention(Array3::zeros((0, 0, 0)))
    }
}

impl BaseMaps {
    /// Every head's map of `stage`, `(heads, queries, columns)`, if these maps hold it. V2's λ
    /// table, one for every head, is `(1, tokens, heads)` ([`StageId::shared_by_heads`]).
    pub fn stage(&self, stage: StageId) -> Option<ArrayView3<'_, f32>> {
        match (self, stage) {
            (BaseMaps::Attention(a), StageId::A) => Some(a.view()),
            (BaseMaps::DiffTransformer(m), StageId::A1) => Some(m.a1.view()),
            (BaseMaps::DiffTransformer(m), StageId::A2) => Some(m.a2.view()),
            (BaseMaps::DiffTransformer(m), StageId::Diff) => Some(m.diff.view()),
            (BaseMaps::DiffTransformerV2(m), StageId::A1) => Some(m.a1.view()),
            (BaseMaps::DiffTransformerV2(m), StageId::A2) => Some(m.a2.view()),
            (BaseMaps::DiffTransformerV2(m), StageId::Diff) => Some(m.diff.view()),
            (BaseMaps::DiffTransformerV2(m), StageId::Lambda) => {
                Some(m.lambda.view().insert_axis(Axis(0)))
            }
            (BaseMaps::Hierarchical(m), StageId::Local) => Some(m.local.view()),
            (BaseMaps::Hierarchical(m), StageId::Segments) => Some(m.segments.view()),
            (BaseMaps::Hierarchical(m), StageId::A) => Some(m.a.view()),
            _ => None,
        }
    }

    /// V2's λ per token and head, `(tokens, heads)`.
    pub fn lambda_table(&self) -> Option<&Array2<f32>> {
        match self {
            BaseMaps::DiffTransformerV2(m) => Some(&m.lambda),
            _ => None,
        }
    }

    /// The Differential Transformer's lambda.
    pub fn lambda(&self) -> Option<f32> {
        match self {
            BaseMaps::DiffTransformer(m) => Some(m.lambda),
            _ => None,
        }
    }
}

/// Step 2: rows `block.queries` of the maps of `mechanism` for the heads `block.heads` (of
/// `heads`), over a projection of `weights`, into `out`, whose stacks hold one map per head of
/// the block (map `i` is head `block.heads.start + i`) over every row; `out` is made anew when
/// it does not fit (another mechanism or size), else its other rows are left as they were. The
/// head layout is resolved and checked here. Every block has the bits it has in the whole
/// stack; V2's λ has the columns of the block's heads.
pub fn base_maps_into(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    causal: bool,
    block: &Block,
    out: &mut BaseMaps,
) -> Result<(), EngineError> {
    let mask = mechanism.mask(causal);
    let shape = HeadShape::resolve(mechanism.kind(), weights, heads)?;
    let queries = block.queries.clone();
    // The query heads of the mechanisms with one query head per head (the Differential
    // Transformers pick their pairs from the block's heads themselves).
    let query_heads: Vec<usize> = block.heads.clone().collect();
    let (q, k, logits) = match projection {
        Projection::Steps(p) => {
            block.check(heads, p.q.nrows())?;
            return match mechanism {
                Mechanism::InputDiff => {
                    let a = attention_of(out);
                    input_diff::maps_into(p, &shape, causal, &query_heads, queries, a)
                }
                _ => Err(mismatch(
                    "a projection of the tokens",
                    "a projection of the steps between tokens",
                )),
            };
        }
        Projection::Tokens { projected, .. } => (
            projected.q.view(),
            projected.k.view(),
            projection.lambda_logits(),
        ),
    };
    block.check(heads, q.nrows())?;
    if mechanism.kind() == MechanismKind::GatedAttention {
        gated_attention::check(weights, &shape)?;
    }
    match mechanism {
        Mechanism::Standard
        | Mechanism::ShiftDiff(_)
        | Mechanism::Local { .. }
        | Mechanism::GatedAttention => standard::maps_into(
            q,
            k,
            &shape,
            mask,
            &query_heads,
            queries,
            1.0,
            attention_of(out),
        ),
        Mechanism::Cosine { tau } => {
            let a = attention_of(out);
            cosine::maps_into(q, k, &shape, mask, *tau, &query_heads, queries, a)
        }
        Mechanism::DiffTransformer(params) => {
            if !matches!(out, BaseMaps::DiffTransformer(_)) {
                *out = BaseMaps::DiffTransformer(DiffTransformerMaps::empty());
            }
            let BaseMaps::DiffTransformer(maps) = out else {
                unreachable!("made above")
            };
            let pairing = weights.layout.pairing;
            let of = block.heads.clone();
            diff_transformer::maps_into(q, k, &shape, pairing, mask, params, of, queries, maps)
        }
        Mechanism::DiffTransformerV2 { lambda } => {
            if !matches!(out, BaseMaps::DiffTransformerV2(_)) {
                *out = BaseMaps::DiffTransformerV2(DiffTransformerV2Maps::empty());
            }
            let BaseMaps::DiffTransformerV2(maps) = out else {
                unreachable!("made above")
            };
            let of = block.heads.clone();
            diff_transformer_v2::maps_into(q, k, logits, &shape, mask, *lambda, of, queries, maps)
        }
        Mechanism::Hierarchical { segment } => {
            if !matches!(out, BaseMaps::Hierarchical(_)) {
                *out = BaseMaps::Hierarchical(HierarchicalMaps::empty());
            }
            let BaseMaps::Hierarchical(maps) = out else {
                unreachable!("made above")
            };
            let of = block.heads.clone();
            hierarchical::maps_into(q, k, &shape, mask, *segment, of, queries, maps)
        }
        Mechanism::InputDiff => Err(mismatch(
            "a projection of the steps between tokens",
            "a projection of the tokens",
        )),
    }
}

/// The one stack of `out` when it holds one map `A` per head, made so when it holds another
/// mechanism's maps.
fn attention_of(out: &mut BaseMaps) -> &mut Array3<f32> {
    if !matches!(out, BaseMaps::Attention(_)) {
        *out = BaseMaps::default();
    }
    match out {
        BaseMaps::Attention(a) => a,
        _ => unreachable!("made above"),
    }
}

/// Step 2b: puts the λ of `mechanism` (a fixed one, or back to the learned one) into maps
/// computed earlier for the heads from `first_head` on, recomputing only `A1 − λ·A2` (never
/// `A1` and `A2`), so a λ slider costs one subtraction per cell. Returns whether anything
/// changed; a mechanism without λ changes nothing.
pub fn apply_lambda(
    mechanism: &Mechanism,
    projection: &Projection,
    base: &mut BaseMaps,
    first_head: usize,
) -> Result<bool, EngineError> {
    match (mechanism, base) {
        (Mechanism::DiffTransformer(params), BaseMaps::DiffTransformer(maps)) => {
            Ok(diff_transformer::set_lambda(maps, params))
        }
        (Mechanism::DiffTransformerV2 { lambda }, BaseMaps::DiffTransformerV2(maps)) => {
            let logits = projection.lambda_logits();
            let total = logits.map_or(0, |l| l.ncols());
            let of = first_head..first_head + maps.lambda.ncols();
            let table = diff_transformer_v2::lambda_columns(logits, total, *lambda, of)?;
            Ok(diff_transformer_v2::set_lambda(maps, table))
        }
        _ => Ok(false),
    }
}

/// V2's λ table of every head, `(tokens, heads)`, for `mechanism` over `projection`; `None`
/// for any other mechanism. What the page draws as V2's λ map (one for every head) without
/// computing every head's maps.
pub fn lambda_table(
    mechanism: &Mechanism,
    projection: &Projection,
    heads: usize,
) -> Option<Result<Array2<f32>, EngineError>> {
    let Mechanism::DiffTransformerV2 { lambda } = mechanism else {
        return None;
    };
    Some(diff_transformer_v2::lambda_table(
        projection.lambda_logits(),
        heads,
        *lambda,
    ))
}

/// Gated attention's output gate table of every head, `(tokens, heads)`: the gate's mean over
/// each head's channels (DESIGN.md §4.1), for `mechanism` over `projection`; `None` for any
/// other mechanism. What the page draws as the output gate's strip (one table for every
/// head), like V2's [`lambda_table`].
pub fn output_gate_table(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
) -> Option<Result<Array2<f32>, EngineError>> {
    if *mechanism != Mechanism::GatedAttention {
        return None;
    }
    let table = || {
        let shape = HeadShape::resolve(MechanismKind::GatedAttention, weights, heads)?;
        gated_attention::check(weights, &shape)?;
        let gate = gated_attention::gate(projection.gate_logits(), heads * shape.head_dim)?;
        Ok(gated_attention::mean_table(
            gate.view(),
            heads,
            shape.head_dim,
        ))
    };
    Some(table())
}

/// Step 3: rows `block.queries` of the shift stages of `mechanism` into `out` (reusing its
/// buffers), from maps `base` of the heads `block.heads` (each head with its own gate).
/// Returns `false`, leaving `out` as it was, for a mechanism without shift stages.
pub fn shift_stages_into(
    mechanism: &Mechanism,
    base: &BaseMaps,
    causal: bool,
    block: &Block,
    out: &mut ShiftDiffMaps,
) -> Result<bool, EngineError> {
    let (Mechanism::ShiftDiff(params), BaseMaps::Attention(a)) = (mechanism, base) else {
        return Ok(false);
    };
    let gate = &params.gate;
    if block.heads.len() != a.dim().0 {
        return Err(mismatch(
            "one map per head of the block",
            "another number of maps",
        ));
    }
    let of = block.heads.clone();
    let slice = |v: &[f32]| v.get(of.clone()).map(<[f32]>::to_vec);
    let gate = match (slice(&gate.alpha), slice(&gate.beta), slice(&gate.gamma)) {
        (Some(alpha), Some(beta), Some(gamma)) => Gate { alpha, beta, gamma },
        // Too few scalars for the block's heads: the gate's own error, naming the field.
        _ => {
            return Err(match gate.check(block.heads.end) {
                Err(err) => err,
                Ok(()) => mismatch("a gate scalar per head", "fewer"),
            })
        }
    };
    let params = ShiftDiffParams {
        gate,
        ..params.clone()
    };
    let mask = mechanism.mask(causal);
    shift_diff::shift_diff_maps_into(a, &params, mask, block.queries.clone(), out)?;
    Ok(true)
}

/// Step 4: the heads `of`'s share of the heads' concatenation before the output projection,
/// from each head's final map (`final_of(h)`: `A′`, `A1 − λ·A2` or `A`, `(queries, keys)`,
/// wherever a caller keeps it): the values mixed with it (the Differential Transformer
/// normalises each head, §3), into the head's columns of `concat`, which is made anew when it
/// does not fit. The layer output is then `weights.out(concat)`.
pub fn mix_into<'a>(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    of: Range<usize>,
    final_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
    concat: &mut Array2<f32>,
) -> Result<(), EngineError> {
    let v = projection.values();
    let shape = HeadShape::resolve(mechanism.kind(), weights, heads)?;
    if of.end > heads {
        return Err(EngineError::Shape {
            field: "head",
            expected: format!("heads within 0..{heads}"),
            found: format!("{of:?}"),
        });
    }
    match mechanism {
        Mechanism::DiffTransformer(params) => {
            let pairing = weights.layout.pairing;
            diff_transformer::mix_into(heads, of, final_of, v, &shape, pairing, params, concat)
        }
        Mechanism::GatedAttention => {
            gated_attention::check(weights, &shape)?;
            standard::mix_into(heads, of.clone(), final_of, v, &shape, concat);
            let logits = projection.gate_logits();
            gated_attention::gate_into(concat, logits, of, shape.head_dim)?;
        }
        _ => standard::mix_into(heads, of, final_of, v, &shape, concat),
    }
    Ok(())
}

/// The layer output `(tokens, d)` from every head's final map: [`mix_into`] over every head,
/// projected back (`·W_oᵀ + b_o`).
pub fn output<'a>(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    final_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
) -> Result<Array2<f32>, EngineError> {
    let mut concat = Array2::zeros((0, 0));
    mix_into(
        mechanism,
        projection,
        weights,
        heads,
        0..heads,
        final_of,
        &mut concat,
    )?;
    Ok(weights.out(concat.view()))
}

/// The error for stages that do not belong to the mechanism they are used with (a caller's
/// cache out of step; `run` never makes one).
fn mismatch(expected: &str, found: &str) -> EngineError {
    EngineError::Shape {
        field: "mechanism",
        expected: expected.to_string(),
        found: found.to_string(),
    }
}
