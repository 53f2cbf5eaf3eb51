//! The one way to run a mechanism: three staged steps whose results a caller can cache
//! separately, because each depends on fewer settings than the next (the list is in
//! [`crate::engine::mechanism`]'s header): [`Projection::new`], [`base_maps`],
//! [`shift_stages_into`], then [`output`]; [`run`] is the three in a row, and [`Stages`] what it
//! returns. The same steps for some heads only are in [`crate::engine::heads`].

use std::ops::Range;

use ndarray::{Array2, Array3, ArrayView2, ArrayView3, Axis};

use super::cosine;
use super::diff_transformer::{self, DiffTransformerMaps};
use super::diff_transformer_v2::{self, DiffTransformerV2Maps};
use super::error::EngineError;
use super::heads::output_of;
use super::hierarchical::{self, HierarchicalMaps};
use super::input_diff::{self, InputDiffProjected};
use super::layout::HeadShape;
use super::mechanism::{Mechanism, MechanismKind};
use super::projection::{Projected, Weights};
use super::shift_diff::{self, ShiftDiffMaps};
use super::stage::StageId;
use super::standard;

/// Step 1: the queries, keys and values of one sentence.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// Queries, keys and values from the tokens.
    Tokens(Projected),
    /// Queries from the tokens, keys and values from the steps between them.
    Steps(InputDiffProjected),
}

impl Projection {
    /// Projects `x` (`(tokens, d)`) as `kind` needs it.
    pub fn new(kind: MechanismKind, x: ArrayView2<f32>, weights: &Weights) -> Projection {
        if kind.projects_steps() {
            Projection::Steps(InputDiffProjected::new(x, weights))
        } else {
            Projection::Tokens(Projected::new(x, weights))
        }
    }

    /// Whether this projection serves `kind` (so a cache of it can be kept).
    pub fn serves(&self, kind: MechanismKind) -> bool {
        matches!(self, Projection::Steps(_)) == kind.projects_steps()
    }

    /// The values `V`, `(keys, d)`.
    pub fn values(&self) -> ArrayView2<'_, f32> {
        match self {
            Projection::Tokens(p) => p.v.view(),
            Projection::Steps(p) => p.v.view(),
        }
    }
}

/// Step 2: the maps before any shift.
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

/// Step 2: the maps of `mechanism` over a projection of `weights`, with `heads` heads: the
/// head layout is resolved and checked, and queries and keys rotated when the layer has rotary
/// positions.
pub fn base_maps(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    causal: bool,
) -> Result<BaseMaps, EngineError> {
    base_maps_of(mechanism, projection, weights, heads, causal, 0..heads)
}

/// Step 2 for the heads `of` only (of `heads`): every stack of the result holds `of.len()`
/// maps, map `i` being head `of.start + i`, each with the bits it has in [`base_maps`] (every
/// head is computed alone). What a page showing one head computes; V2's λ table has the
/// columns of those heads.
pub fn base_maps_of(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    causal: bool,
    of: Range<usize>,
) -> Result<BaseMaps, EngineError> {
    let mask = mechanism.mask(causal);
    let shape = HeadShape::resolve(mechanism.kind(), weights, heads)?;
    if of.start > of.end || of.end > heads {
        return Err(EngineError::Shape {
            field: "head",
            expected: format!("heads within 0..{heads}"),
            found: format!("{of:?}"),
        });
    }
    // The query heads of the mechanisms with one query head per head (the Differential
    // Transformers pick their pairs from `of` themselves).
    let query_heads: Vec<usize> = of.clone().collect();
    let tokens = match projection {
        Projection::Tokens(p) => p,
        Projection::Steps(p) => {
            if weights.layout.rope.is_some() {
                return Err(EngineError::Shape {
                    field: "rope",
                    expected: "no rope (input_diff's keys are steps between tokens)".to_string(),
                    found: "rope".to_string(),
                });
            }
            return input_diff::attention_of(p, &shape, causal, &query_heads)
                .map(BaseMaps::Attention);
        }
    };
    // Rotated copies only when the layer has rotary positions (never on the page's layouts).
    let rotated = match &weights.layout.rope {
        Some(rope) => Some((
            rope.rotate(tokens.q.view(), shape.head_dim)?,
            rope.rotate(tokens.k.view(), shape.head_dim)?,
        )),
        None => None,
    };
    let (q, k) = match &rotated {
        Some((q, k)) => (q.view(), k.view()),
        None => (tokens.q.view(), tokens.k.view()),
    };
    Ok(match mechanism {
        Mechanism::Standard | Mechanism::ShiftDiff(_) | Mechanism::Local { .. } => {
            BaseMaps::Attention(standard::grouped_of(q, k, &shape, mask, &query_heads)?)
        }
        Mechanism::Cosine { tau } => {
            BaseMaps::Attention(cosine::grouped_of(q, k, &shape, mask, *tau, &query_heads)?)
        }
        Mechanism::DiffTransformer(params) => BaseMaps::DiffTransformer(diff_transformer::maps_of(
            q,
            k,
            &shape,
            weights.layout.pairing,
            mask,
            params,
            of,
        )?),
        Mechanism::DiffTransformerV2 { lambda } => {
            BaseMaps::DiffTransformerV2(diff_transformer_v2::maps_of(
                q,
                k,
                tokens.lambda_logits.as_ref(),
                &shape,
                mask,
                *lambda,
                of,
            )?)
        }
        Mechanism::Hierarchical { segment } => {
            BaseMaps::Hierarchical(hierarchical::maps_of(q, k, &shape, mask, *segment, of)?)
        }
        Mechanism::InputDiff => {
            return Err(mismatch(
                "a projection of the steps between tokens",
                "a projection of the tokens",
            ))
        }
    })
}

/// Step 2b: puts the λ of `mechanism` (a fixed one, or back to the learned one) into maps
/// computed earlier, recomputing only `A1 − λ·A2` (never `A1` and `A2`), so a λ slider costs
/// one subtraction per cell. Returns whether anything changed; a mechanism without λ changes
/// nothing.
pub fn apply_lambda(
    mechanism: &Mechanism,
    projection: &Projection,
    base: &mut BaseMaps,
) -> Result<bool, EngineError> {
    match (mechanism, base) {
        (Mechanism::DiffTransformer(params), BaseMaps::DiffTransformer(maps)) => {
            Ok(diff_transformer::set_lambda(maps, params))
        }
        (Mechanism::DiffTransformerV2 { lambda }, BaseMaps::DiffTransformerV2(maps)) => {
            let logits = match projection {
                Projection::Tokens(p) => p.lambda_logits.as_ref(),
                Projection::Steps(_) => None,
            };
            let heads = maps.lambda.ncols();
            let table = diff_transformer_v2::lambda_table(logits, heads, *lambda)?;
            Ok(diff_transformer_v2::set_lambda(maps, table))
        }
        _ => Ok(false),
    }
}

/// Step 3: the shift stages of `mechanism` into `out` (reusing its buffers). Returns `false`,
/// leaving `out` as it was, for a mechanism without shift stages.
pub fn shift_stages_into(
    mechanism: &Mechanism,
    base: &BaseMaps,
    causal: bool,
    out: &mut ShiftDiffMaps,
) -> Result<bool, EngineError> {
    match (mechanism, base) {
        (Mechanism::ShiftDiff(params), BaseMaps::Attention(a)) => {
            shift_diff::shift_diff_maps_into(a, params, mechanism.mask(causal), out)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The layer output `(tokens, d)`: the values mixed with each head's final map and projected
/// back (the Differential Transformer normalises each head first, §3). `shift` are the shift
/// stages when the mechanism has them.
pub fn output(
    mechanism: &Mechanism,
    projection: &Projection,
    base: &BaseMaps,
    shift: Option<&ShiftDiffMaps>,
    weights: &Weights,
) -> Result<Array2<f32>, EngineError> {
    let stack = match (base, mechanism) {
        (BaseMaps::DiffTransformer(maps), Mechanism::DiffTransformer(_)) => &maps.diff,
        (BaseMaps::DiffTransformerV2(maps), Mechanism::DiffTransformerV2 { .. }) => &maps.diff,
        (BaseMaps::Hierarchical(maps), Mechanism::Hierarchical { .. }) => &maps.a,
        (BaseMaps::Attention(_), Mechanism::ShiftDiff(_)) => match shift {
            Some(s) => &s.fused,
            None => return Err(mismatch("the shift stages", "none")),
        },
        (
            BaseMaps::Attention(a),
            Mechanism::Standard
            | Mechanism::InputDiff
            | Mechanism::Cosine { .. }
            | Mechanism::Local { .. },
        ) => a,
        _ => return Err(mismatch(mechanism.name(), "the maps of another mechanism")),
    };
    output_of(mechanism, projection, weights, stack.dim().0, &|h| {
        stack.index_axis(Axis(0), h)
    })
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

/// Every intermediate of one layer, typed by mechanism.
///
/// The variants differ in size (the shift stages hold six maps), but a `Stages` is made once per
/// run and never stored in bulk, so boxing would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stages {
    /// Standard, input-difference, cosine and local attention: one map per head.
    Attention {
        /// The maps `A`, `(heads, queries, keys)`; `keys = tokens - 1` for input difference.
        a: Array3<f32>,
        /// The layer output, `(tokens, d)`.
        output: Array2<f32>,
    },
    /// Shift-difference gated attention.
    ShiftDiff {
        /// The maps `A`.
        a: Array3<f32>,
        /// `shift(A)`, `D`, `G` and `A'`.
        maps: ShiftDiffMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// The Differential Transformer.
    DiffTransformer {
        /// `A1`, `A2`, lambda and `A1 - lambda·A2`.
        maps: DiffTransformerMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// Differential Transformer V2.
    DiffTransformerV2 {
        /// `A1`, `A2`, λ per token and head, and `A1 - λ·A2`.
        maps: DiffTransformerV2Maps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// Hierarchical attention.
    Hierarchical {
        /// `local`, `segments` and the token map `A`.
        maps: HierarchicalMaps,
        /// The layer output.
        output: Array2<f32>,
    },
}

impl Stages {
    /// The layer output, `(tokens, d)`.
    pub fn output(&self) -> &Array2<f32> {
        match self {
            Stages::Attention { output, .. }
            | Stages::ShiftDiff { output, .. }
            | Stages::DiffTransformer { output, .. }
            | Stages::DiffTransformerV2 { output, .. }
            | Stages::Hierarchical { output, .. } => output,
        }
    }

    /// The map each head finally mixes values with: `A`, `A'` or `A1 - lambda·A2`.
    pub fn final_maps(&self) -> &Array3<f32> {
        match self {
            Stages::Attention { a, .. } => a,
            Stages::ShiftDiff { maps, .. } => &maps.fused,
            Stages::DiffTransformer { maps, .. } => &maps.diff,
            Stages::DiffTransformerV2 { maps, .. } => &maps.diff,
            Stages::Hierarchical { maps, .. } => &maps.a,
        }
    }
}

/// Runs one attention layer over the sequence `x` (`(tokens, d)`) and returns every stage: the
/// staged steps of this module in a row.
///
/// `heads` re-splits the same projections; it must divide `d` (`d / 2` for the Differential
/// Transformer). Errors name the spec field at fault; nothing panics on bad sizes.
///
/// ```
/// use diffattn::engine::{run, Mechanism, Stages, Weights};
/// use ndarray::{array, Array2};
/// let eye = Array2::<f32>::eye(2);
/// let w = Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap();
/// // Identical tokens give identical scores: each of the 3 rows is uniform over 3 keys.
/// let x = array![[1.0f32, 0.0], [1.0, 0.0], [1.0, 0.0]];
/// let stages = run(x.view(), &w, 2, false, &Mechanism::Standard).unwrap();
/// let Stages::Attention { a, .. } = stages else { unreachable!() };
/// assert!(a.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-6));
/// ```
pub fn run(
    x: ArrayView2<f32>,
    weights: &Weights,
    heads: usize,
    causal: bool,
    mechanism: &Mechanism,
) -> Result<Stages, EngineError> {
    weights.check_input(x)?;
    let projection = Projection::new(mechanism.kind(), x, weights);
    let base = base_maps(mechanism, &projection, weights, heads, causal)?;
    let mut shift = ShiftDiffMaps::empty();
    let has_shift = shift_stages_into(mechanism, &base, causal, &mut shift)?;
    let output = output(
        mechanism,
        &projection,
        &base,
        has_shift.then_some(&shift),
        weights,
    )?;
    Ok(match base {
        BaseMaps::DiffTransformer(maps) => Stages::DiffTransformer { maps, output },
        BaseMaps::DiffTransformerV2(maps) => Stages::DiffTransformerV2 { maps, output },
        BaseMaps::Hierarchical(maps) => Stages::Hierarchical { maps, output },
        BaseMaps::Attention(a) if has_shift => Stages::ShiftDiff {
            a,
            maps: shift,
            output,
        },
        BaseMaps::Attention(a) => Stages::Attention { a, output },
    })
}
