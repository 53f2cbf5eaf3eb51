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

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::layout::HeadShape;
use super::mask::Mask;
use super::numeric::{saturate_all, sigmoid};
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

/// The maps of V2 from (rotated) queries and keys and the λ logits `x·W_λᵀ`.
pub fn maps(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    lambda_logits: Option<&Array2<f32>>,
    shape: &HeadShape,
    mask: Mask,
) -> Result<DiffTransformerV2Maps, EngineError> {
    let heads = shape.heads;
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
    let lambda = logits.mapv(sigmoid);
    let both = standard::grouped(q, k, shape, mask)?;
    let a1 = both.slice(s![0..;2, .., ..]).to_owned();
    let a2 = both.slice(s![1..;2, .., ..]).to_owned();
    let mut diff = a1.clone();
    for (h, mut diff_h) in diff.axis_iter_mut(Axis(0)).enumerate() {
        for (i, mut row) in diff_h.outer_iter_mut().enumerate() {
            let l = lambda[[i, h]];
            row.zip_mut_with(&a2.slice(s![h, i, ..]), |d, &b| *d -= l * b);
        }
    }
    saturate_all(&mut diff);
    Ok(DiffTransformerV2Maps {
        a1,
        a2,
        lambda,
        diff,
    })
}
