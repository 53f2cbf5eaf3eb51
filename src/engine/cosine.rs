//! Cosine attention (DESIGN.md §4): `softmax(tau · normalize(Q_h)·normalize(K_h)ᵀ + M)`.
//!
//! Scores are cosine similarities in `[-1, 1]` times a temperature `tau` (1 in the source
//! article); there is no `1/sqrt(d_h)`. A zero vector normalises to zero, so its scores are 0.

use std::ops::Range;

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::kernels;
use super::mask::Mask;
use super::standard::maps_from_scores_into;

/// Each row divided by its Euclidean norm; all-zero rows stay zero.
///
/// The norm is computed on the row scaled by its largest magnitude, so rows near the f32
/// limit do not overflow when squared.
pub fn normalize_rows(m: ArrayView2<f32>) -> Array2<f32> {
    let mut out = m.to_owned();
    for mut row in out.axis_iter_mut(Axis(0)) {
        let max = row.iter().fold(0.0f32, |acc, v| acc.max(v.abs()));
        if max == 0.0 {
            continue;
        }
        row.mapv_inplace(|v| v / max);
        let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
        row.mapv_inplace(|v| v / norm);
    }
    out
}

/// The scores `tau · cos(q_i, k_j)` of one head.
///
/// ```
/// use diffattn::engine::cosine::cosine_scores;
/// use ndarray::array;
/// // q = [3, 4] and k = [4, 3] have cosine (12 + 12) / (5 · 5) = 0.96; tau = 10 gives 9.6.
/// let s = cosine_scores(array![[3.0f32, 4.0]].view(), array![[4.0f32, 3.0]].view(), 10.0);
/// assert!((s[[0, 0]] - 9.6).abs() < 1e-5);
/// ```
pub fn cosine_scores(q_h: ArrayView2<f32>, k_h: ArrayView2<f32>, tau: f32) -> Array2<f32> {
    kernels::matmul(normalize_rows(q_h).view(), normalize_rows(k_h).t(), tau)
}

/// Rows `queries` of cosine attention maps over any head layout for the query heads
/// `query_heads`, into `out` (`(query_heads.len(), tokens, keys)`; see
/// [`maps_from_scores_into`]).
#[allow(clippy::too_many_arguments)]
pub fn maps_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    tau: f32,
    query_heads: &[usize],
    queries: Range<usize>,
    out: &mut Array3<f32>,
) -> Result<(), EngineError> {
    let score = |q_h: ArrayView2<f32>, k_h: ArrayView2<f32>| cosine_scores(q_h, k_h, tau);
    maps_from_scores_into(q, k, shape, mask, 0, query_heads, queries, score, out)
}
