//! The staged steps for some heads only, beside [`base_maps_of`](super::base_maps_of) (in the registry, with every
//! mechanism's arm): λ put into one head's maps, one head's shift stages with its own gate, V2's
//! λ table of every head, and the layer output from each head's final map wherever a caller
//! keeps it. Each gives the bits the whole-stack step gives (tests/per_head.rs), so a page can
//! compute the head it shows and the others only when asked.

use ndarray::{Array2, ArrayView2};

use super::diff_transformer;
use super::diff_transformer_v2;
use super::error::EngineError;
use super::layout::HeadShape;
use super::mechanism::Mechanism;
use super::projection::{mix_values_of, Weights};
use super::shift_diff::{self, Gate, ShiftDiffMaps, ShiftDiffParams};
use super::steps::{apply_lambda, shift_stages_into, BaseMaps, Projection};

/// Step 2b for maps of some heads only ([`base_maps_of`](super::base_maps_of)): `first` is the head of the maps'
/// first map. The same as [`apply_lambda`] for `first = 0` and every head.
pub fn apply_lambda_of(
    mechanism: &Mechanism,
    projection: &Projection,
    base: &mut BaseMaps,
    first: usize,
) -> Result<bool, EngineError> {
    match (mechanism, base) {
        (Mechanism::DiffTransformerV2 { lambda }, BaseMaps::DiffTransformerV2(maps)) => {
            let logits = match projection {
                Projection::Tokens(p) => p.lambda_logits.as_ref(),
                Projection::Steps(_) => None,
            };
            let total = logits.map_or(0, |l| l.ncols());
            let of = first..first + maps.lambda.ncols();
            let table = diff_transformer_v2::lambda_columns(logits, total, *lambda, of)?;
            Ok(diff_transformer_v2::set_lambda(maps, table))
        }
        (mechanism, base) => apply_lambda(mechanism, projection, base),
    }
}

/// V2's λ table of every head, `(tokens, heads)`, for `mechanism` over `projection`; `None`
/// for any other mechanism. What the page draws as V2's λ map (one for every head) without
/// computing every head's maps.
pub fn lambda_table_of(
    mechanism: &Mechanism,
    projection: &Projection,
    heads: usize,
) -> Option<Result<Array2<f32>, EngineError>> {
    let Mechanism::DiffTransformerV2 { lambda } = mechanism else {
        return None;
    };
    let logits = match projection {
        Projection::Tokens(p) => p.lambda_logits.as_ref(),
        Projection::Steps(_) => None,
    };
    Some(diff_transformer_v2::lambda_table(logits, heads, *lambda))
}

/// Step 3 for maps of some heads only ([`base_maps_of`](super::base_maps_of)): `first` is the head of `base`'s
/// first map, so each head has its own gate. The same as [`shift_stages_into`] for
/// `first = 0` and every head.
pub fn shift_stages_of_into(
    mechanism: &Mechanism,
    base: &BaseMaps,
    causal: bool,
    first: usize,
    out: &mut ShiftDiffMaps,
) -> Result<bool, EngineError> {
    match (mechanism, base) {
        (Mechanism::ShiftDiff(params), BaseMaps::Attention(a)) => {
            let n = a.dim().0;
            let gate = &params.gate;
            if first == 0 && n == gate.alpha.len() {
                return shift_stages_into(mechanism, base, causal, out);
            }
            let of = first..first + n;
            let slice = |v: &[f32]| v.get(of.clone()).map(<[f32]>::to_vec);
            let gate = match (slice(&gate.alpha), slice(&gate.beta), slice(&gate.gamma)) {
                (Some(alpha), Some(beta), Some(gamma)) => Gate { alpha, beta, gamma },
                _ => {
                    return Err(EngineError::Shape {
                        field: "head",
                        expected: format!("heads within 0..{}", gate.alpha.len()),
                        found: format!("{of:?}"),
                    })
                }
            };
            let params = ShiftDiffParams {
                gate,
                ..params.clone()
            };
            shift_diff::shift_diff_maps_into(a, &params, mechanism.mask(causal), out)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The layer output from each head's final map (`final_of(h)`: `A′`, `A1 − λ·A2` or `A`,
/// `(queries, keys)`), wherever a caller keeps it: the same bits as [`output`](crate::engine::output) over one stack.
pub fn output_of<'a>(
    mechanism: &Mechanism,
    projection: &Projection,
    weights: &Weights,
    heads: usize,
    final_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
) -> Result<Array2<f32>, EngineError> {
    let v = projection.values();
    let shape = HeadShape::resolve(mechanism.kind(), weights, heads)?;
    match mechanism {
        Mechanism::DiffTransformer(params) => Ok(diff_transformer::output_of(
            heads,
            final_of,
            v,
            &shape,
            weights.layout.pairing,
            params,
            weights,
        )),
        _ => Ok(mix_values_of(heads, final_of, v, &shape, weights)),
    }
}
