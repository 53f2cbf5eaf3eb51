//! Differential Transformer V2 (microsoft/unilm `Diff-Transformer/Diff-Transformer-V2`,
//! `multihead_flashdiffv2.py`; DESIGN.md §7.5): query heads `2h` and `2h+1` share one key/value
//! head, and their maps are subtracted with a λ per token and head, `λ = σ(x·W_λᵀ)`:
//!
//! ```text
//! A1_h = softmax(Q_{2h}·K_gᵀ / sqrt(d_h) + M),   A2_h = softmax(Q_{2h+1}·K_gᵀ / sqrt(d_h) + M)
//! diff_h[i, :] = A1_h[i, :] - λ[i, h]·A2_h[i, :],   O = concat_h(diff_h·V_g)·W_oᵀ
//! ```
//!
//! The official module subtracts the two heads' outputs `A1·V - λ·A2·V`, which is `diff·V`.
//! There is no per-head norm and no `lambda_init`.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::mask::Mask;
use super::numeric::{fit, saturate_all, sigmoid};
use super::standard;

/// Every stage of one V2 layer.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffTransformerV2Maps {
    /// The first softmax map of each diff head (query head `2h`), `(heads, tokens, tokens)`.
    pub a1: Array3<f32>,
    /// The second (query head `2h+1`).
    pub a2: Array3<f32>,
    /// `λ[i, h] = σ(x_i·W_λ[h])`, `(tokens, heads)`.
    pub lambda: Array2<f32>,
    /// `A1 - λ·A2`, row `i` of head `h` scaled by `λ[i, h]`.
    pub diff: Array3<f32>,
}

/// λ per token and head, `(tokens, heads)`: `σ(x·W_λᵀ)` from the logits, or `fixed` in every
/// cell (the page's λ slider, the spec's `lambda`).
pub fn lambda_table(
    lambda_logits: Option<&Array2<f32>>,
    heads: usize,
    fixed: Option<f32>,
) -> Result<Array2<f32>, EngineError> {
    let logits = lambda_logits.ok_or_else(|| EngineError::Shape {
        field: "w_lambda",
        expected: format!("a {heads} x d_model matrix (diff_transformer_v2 needs it)"),
        found: "none".to_string(),
    })?;
    if logits.ncols() != heads {
        return Err(EngineError::Shape {
            field: "w_lambda",
            expected: format!("{heads} rows (one per head)"),
            found: format!("{} rows", logits.ncols()),
        });
    }
    Ok(match fixed {
        Some(l) => Array2::from_elem(logits.dim(), l),
        None => logits.mapv(sigmoid),
    })
}

/// Columns `heads` of the λ table of [`lambda_table`] (all `total` heads checked).
pub fn lambda_columns(
    lambda_logits: Option<&Array2<f32>>,
    total: usize,
    fixed: Option<f32>,
    heads: std::ops::Range<usize>,
) -> Result<Array2<f32>, EngineError> {
    let table = lambda_table(lambda_logits, total, fixed)?;
    if heads.start > heads.end || heads.end > total {
        return Err(EngineError::Shape {
            field: "head",
            expected: format!("heads within 0..{total}"),
            found: format!("{heads:?}"),
        });
    }
    if heads.start == 0 && heads.end == total {
        return Ok(table);
    }
    Ok(table.slice(s![.., heads]).to_owned())
}

impl DiffTransformerV2Maps {
    /// No maps yet: buffers for [`maps_into`] to fill.
    pub fn empty() -> DiffTransformerV2Maps {
        DiffTransformerV2Maps {
            a1: Array3::zeros((0, 0, 0)),
            a2: Array3::zeros((0, 0, 0)),
            lambda: Array2::zeros((0, 0)),
            diff: Array3::zeros((0, 0, 0)),
        }
    }
}

/// Rows `queries` of the maps of V2 for the diff heads `heads`, from (rotated) queries and keys
/// and the λ logits `x·W_λᵀ`, into `out`; `fixed` replaces every λ. Map `i` of each stack (and
/// column `i` of λ) is diff head `heads.start + i`, with the bits it has in the whole stack.
#[allow(clippy::too_many_arguments)]
pub fn maps_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    lambda_logits: Option<&Array2<f32>>,
    shape: &HeadShape,
    mask: Mask,
    fixed: Option<f32>,
    heads: Range<usize>,
    queries: Range<usize>,
    out: &mut DiffTransformerV2Maps,
) -> Result<(), EngineError> {
    out.lambda = lambda_columns(lambda_logits, shape.heads, fixed, heads.clone())?;
    let firsts: Vec<usize> = heads.clone().map(|h| 2 * h).collect();
    let seconds: Vec<usize> = heads.map(|h| 2 * h + 1).collect();
    standard::maps_into(
        q,
        k,
        shape,
        mask,
        &firsts,
        queries.clone(),
        1.0,
        &mut out.a1,
    )?;
    standard::maps_into(
        q,
        k,
        shape,
        mask,
        &seconds,
        queries.clone(),
        1.0,
        &mut out.a2,
    )?;
    fit(&mut out.diff, out.a1.dim());
    subtract(out, queries);
    Ok(())
}

/// Rows `queries` of `diff = A1 - λ·A2`, row `i` of head `h` with `λ[i, h]`.
fn subtract(maps: &mut DiffTransformerV2Maps, queries: Range<usize>) {
    let DiffTransformerV2Maps {
        a1,
        a2,
        lambda,
        diff,
    } = maps;
    for (h, mut diff_h) in diff.axis_iter_mut(Axis(0)).enumerate() {
        for i in queries.clone() {
            let l = lambda[[i, h]];
            let mut row = diff_h.row_mut(i);
            row.assign(&a1.slice(s![h, i, ..]));
            row.zip_mut_with(&a2.slice(s![h, i, ..]), |d, &b| *d -= l * b);
            saturate_all(&mut row);
        }
    }
}

/// Puts a new λ table into `maps` (a slider moved): `A1 - λ·A2` is recomputed from the kept
/// `A1` and `A2`. Returns whether λ changed.
pub fn set_lambda(maps: &mut DiffTransformerV2Maps, lambda: Array2<f32>) -> bool {
    let same = lambda.dim() == maps.lambda.dim()
        && lambda
            .iter()
            .zip(&maps.lambda)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if same {
        return false;
    }
    maps.lambda = lambda;
    let tokens = maps.a1.dim().1;
    subtract(maps, 0..tokens);
    true
}
