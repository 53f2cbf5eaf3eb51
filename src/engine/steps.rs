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

use ndarray::{s, Array2, Array3, ArrayView2, ArrayView3, Axis};

pub use super::block::Block;
use super::cosine;
use super::diff_transformer::{self, DiffTransformerMaps};
use super::diff_transformer_v2::{self, DiffTransformerV2Maps};
use super::error::EngineError;
use super::gated_attention;
use super::head_shape::HeadShape;
use super::hierarchical::{self, HierarchicalMaps};
use super::input_diff::{self, InputDiffProjected};
use super::layout::QkNorm;
use super::mechanism::{Mechanism, MechanismKind};
use super::params::{Gate, ShiftDiffParams};
use super::projection::{Projected, Weights};
use super::shift_diff::{self, ShiftDiffMaps};
use super::stage::StageId;
use super::standard;

/// Step 1: the queries, keys and values of one sentence.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// Queries from the tokens, keys and values from the steps between them.
    Steps(InputDiffProjected),
    /// Queries, keys and values from the tokens; `rotated_for` is the head width their queries
    /// and keys were rotated for, when the layer has rotary positions.
    Tokens {
        /// `Q`, `K` (rotated when the layer has rotary positions), `V`, V2's λ logits.
        projected: Projected,
        /// The head width of the rotation, if any.
        rotated_for: Option<usize>,
    },
}

impl Projection {
    /// Step 1, whole: every row of [`project_into`](Self::project_into).
    pub fn new(
        kind: MechanismKind,
        x: ArrayView2<f32>,
        weights: &Weights,
        heads: usize,
    ) -> Result<Projection, EngineError> {
        let mut out = Projection::empty();
        Projection::project_into(kind, x, weights, heads, 0..x.nrows(), &mut out)?;
        Ok(out)
    }

    /// No projection yet: a buffer for [`project_into`](Self::project_into) to fill.
    pub fn empty() -> Projection {
        Projection::Tokens {
            projected: Projected {
                q: Array2::zeros((0, 0)),
                k: Array2::zeros((0, 0)),
                v: Array2::zeros((0, 0)),
                lambda_logits: None,
                gate_logits: None,
            },
            rotated_for: None,
        }
    }

    /// Step 1: rows `rows` of the queries, keys and values of `x` (`(tokens, d)`) as `kind`
    /// needs them with `heads` heads, into `out` (made anew when it does not fit: another kind
    /// of keys, other sizes; else its other rows are left as they were). Queries and keys are
    /// rotated here when the layer has rotary positions (their angles depend on the head width,
    /// so on `heads`). Input difference's keys and values are the steps into tokens
    /// `rows.start + 1 ..= rows.end`, row `j` being the step from token `j` to `j + 1`. Each
    /// row depends on its own token alone, so a block has the bits of the whole projection.
    pub fn project_into(
        kind: MechanismKind,
        x: ArrayView2<f32>,
        weights: &Weights,
        heads: usize,
        rows: Range<usize>,
        out: &mut Projection,
    ) -> Result<(), EngineError> {
        let tokens = x.nrows();
        standard::check_rows(&rows, tokens)?;
        let rope = weights.layout.rope.as_ref();
        if kind.projects_steps() {
            if rope.is_some() {
                return Err(EngineError::Shape {
                    field: "rope",
                    expected: "no rope (input_diff's keys are steps between tokens)".to_string(),
                    found: "rope".to_string(),
                });
            }
            let steps = tokens.saturating_sub(1);
            let fits = |p: &InputDiffProjected| {
                p.q.dim() == (tokens, weights.w_q.nrows())
                    && p.k.dim() == (steps, weights.w_k.nrows())
                    && p.v.dim() == (steps, weights.w_v.nrows())
            };
            if !matches!(out, Projection::Steps(p) if fits(p)) {
                *out = Projection::Steps(InputDiffProjected {
                    q: Array2::zeros((tokens, weights.w_q.nrows())),
                    k: Array2::zeros((steps, weights.w_k.nrows())),
                    v: Array2::zeros((steps, weights.w_v.nrows())),
                });
            }
            let Projection::Steps(p) = out else {
                unreachable!("made above")
            };
            let block = x.slice(s![rows.clone(), ..]);
            p.q.slice_mut(s![rows.clone(), ..])
                .assign(&weights.queries(block));
            let step_rows = rows.start.min(steps)..rows.end.min(steps);
            if !step_rows.is_empty() {
                let ends = x.slice(s![step_rows.start..step_rows.end + 1, ..]);
                let delta = input_diff::step_differences(ends);
                p.k.slice_mut(s![step_rows.clone(), ..])
                    .assign(&weights.keys(delta.view()));
                p.v.slice_mut(s![step_rows, ..])
                    .assign(&weights.values(delta.view()));
            }
            return Ok(());
        }
        let head_dim = match rope {
            Some(rope) => {
                if rope.positions.len() != tokens {
                    return Err(EngineError::Shape {
                        field: "rope.positions",
                        expected: format!("{tokens} positions (one per token)"),
                        found: format!("{} positions", rope.positions.len()),
                    });
                }
                Some(HeadShape::resolve(kind, weights, heads)?.head_dim)
            }
            None => None,
        };
        let logit_rows = weights.w_lambda.as_ref().map(|w| w.nrows());
        let gate_rows = weights.output_gate.as_ref().map(|g| g.w.nrows());
        // Cross-attention's keys and values come from a second sequence (§7.10).
        let kv_source = weights.layout.x_kv.as_ref();
        let keys = kv_source.map_or(tokens, |m| m.nrows());
        let fits = |p: &Projected, rotated: &Option<usize>| {
            p.q.dim() == (tokens, weights.w_q.nrows())
                && p.k.dim() == (keys, weights.w_k.nrows())
                && p.v.dim() == (keys, weights.w_v.nrows())
                && p.lambda_logits.as_ref().map(|l| l.ncols()) == logit_rows
                && p.gate_logits.as_ref().map(|l| l.ncols()) == gate_rows
                && *rotated == head_dim
        };
        if !matches!(out, Projection::Tokens { projected, rotated_for } if fits(projected, rotated_for))
        {
            *out = Projection::Tokens {
                projected: Projected {
                    q: Array2::zeros((tokens, weights.w_q.nrows())),
                    k: Array2::zeros((keys, weights.w_k.nrows())),
                    v: Array2::zeros((keys, weights.w_v.nrows())),
                    lambda_logits: logit_rows.map(|n| Array2::zeros((tokens, n))),
                    gate_logits: gate_rows.map(|n| Array2::zeros((tokens, n))),
                },
                rotated_for: head_dim,
            };
        }
        let Projection::Tokens { projected: p, .. } = out else {
            unreachable!("made above")
        };
        let block = x.slice(s![rows.clone(), ..]);
        // The keys' rows this block projects: its own tokens', or for cross-attention every
        // key of the second sequence, with the first block (they depend on no query).
        let (kv_rows, kv_block) = match kv_source {
            None => (rows.clone(), block),
            Some(m) if rows.start == 0 => (0..keys, m.view()),
            Some(m) => (0..0, m.slice(s![0..0, ..])),
        };
        let (mut q, mut k) = (weights.queries(block), weights.keys(kv_block));
        if let Some(norm) = &weights.layout.qk_norm {
            if let Some(w) = &norm.q {
                q = QkNorm::apply(w, norm.eps, q.view());
            }
            if let Some(w) = &norm.k {
                k = QkNorm::apply(w, norm.eps, k.view());
            }
        }
        if let (Some(rope), Some(head_dim)) = (rope, head_dim) {
            q = rope.rotate(q.view(), head_dim, rows.start)?;
            k = rope.rotate(k.view(), head_dim, rows.start)?;
        }
        p.q.slice_mut(s![rows.clone(), ..]).assign(&q);
        p.k.slice_mut(s![kv_rows.clone(), ..]).assign(&k);
        p.v.slice_mut(s![kv_rows, ..])
            .assign(&weights.values(kv_block));
        if let (Some(logits), Some(w)) = (p.lambda_logits.as_mut(), weights.w_lambda.as_ref()) {
            logits
                .slice_mut(s![rows.clone(), ..])
                .assign(&super::projection::linear(block, w.view()));
        }
        if let (Some(logits), Some(gate)) = (
            p.gate_logits.as_mut(),
            weights.output_gate_logits(block.view()),
        ) {
            logits.slice_mut(s![rows, ..]).assign(&gate);
        }
        Ok(())
    }

    /// Whether this projection serves `kind` with `heads` heads over `weights` (so a cache of
    /// it can be kept): the same kind of keys, and rotated for the same head width.
    pub fn serves(&self, kind: MechanismKind, weights: &Weights, heads: usize) -> bool {
        match self {
            Projection::Steps(_) => kind.projects_steps(),
            Projection::Tokens { rotated_for, .. } => {
                !kind.projects_steps()
                    && match rotated_for {
                        None => weights.layout.rope.is_none(),
                        Some(width) => HeadShape::resolve(kind, weights, heads)
                            .is_ok_and(|s| s.head_dim == *width),
                    }
            }
        }
    }

    /// The values `V`, `(keys, d)`.
    pub fn values(&self) -> ArrayView2<'_, f32> {
        match self {
            Projection::Tokens { projected, .. } => projected.v.view(),
            Projection::Steps(p) => p.v.view(),
        }
    }

    /// V2's λ logits `x·W_λᵀ`, `(tokens, heads)`, when the weights have `W_λ`.
    fn lambda_logits(&self) -> Option<&Array2<f32>> {
        match self {
            Projection::Tokens { projected, .. } => projected.lambda_logits.as_ref(),
            Projection::Steps(_) => None,
        }
    }

    /// Gated attention's output gate logits `x·W_ogᵀ + b_og`, `(tokens, heads · d_h)`, when
    /// the weights have `W_og`.
    pub fn gate_logits(&self) -> Option<&Array2<f32>> {
        match self {
            Projection::Tokens { projected, .. } => projected.gate_logits.as_ref(),
            Projection::Steps(_) => None,
        }
    }
}

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
