//! Input-difference attention (DESIGN.md §4, from the BiLSTM article): queries come from the
//! tokens, keys and values from the steps between neighbouring tokens `Δ = X[1:] - X[:-1]`.
//!
//! The map is `L x (L-1)`: key `j` is the step from token `j` to token `j + 1`, so for the mask
//! it sits at position `j + 1` (a causal query `i` sees the steps into tokens `1..=i`). One
//! token gives no steps, an `L x 0` map, and a zero output.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView2};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::mask::Mask;
use super::numeric::saturate_all;
use super::projection::Weights;
use super::standard;

/// The steps `Δ = X[1:] - X[:-1]`, shape `(tokens - 1, d)`.
///
/// ```
/// use diffattn::engine::input_diff::step_differences;
/// use ndarray::array;
/// let x = array![[1.0f32, 0.0], [3.0, 1.0], [3.0, 5.0]];
/// assert_eq!(step_differences(x.view()), array![[2.0f32, 1.0], [0.0, 4.0]]);
/// ```
pub fn step_differences(x: ArrayView2<f32>) -> Array2<f32> {
    if x.nrows() < 2 {
        return Array2::zeros((0, x.ncols()));
    }
    let mut delta = &x.slice(s![1.., ..]) - &x.slice(s![..-1, ..]);
    saturate_all(&mut delta);
    delta
}

/// Queries from the tokens, keys and values from their steps.
#[derive(Debug, Clone, PartialEq)]
pub struct InputDiffProjected {
    /// `Q = X·W_qᵀ`, `(tokens, d)`.
    pub q: Array2<f32>,
    /// `K = Δ·W_kᵀ`, `(tokens - 1, d)`.
    pub k: Array2<f32>,
    /// `V = Δ·W_vᵀ`, `(tokens - 1, d)`.
    pub v: Array2<f32>,
}

impl InputDiffProjected {
    /// Projects the tokens and their steps.
    pub fn new(x: ArrayView2<f32>, weights: &Weights) -> InputDiffProjected {
        let delta = step_differences(x);
        InputDiffProjected {
            q: weights.queries(x),
            k: weights.keys(delta.view()),
            v: weights.values(delta.view()),
        }
    }
}

/// Rows `queries` of input-difference attention maps for the query heads `query_heads`, into
/// `out`, which becomes `(query_heads.len(), tokens, tokens - 1)` (see
/// [`standard::maps_from_scores_into`]).
pub fn maps_into(
    projected: &InputDiffProjected,
    shape: &HeadShape,
    causal: bool,
    query_heads: &[usize],
    queries: Range<usize>,
    out: &mut Array3<f32>,
) -> Result<(), EngineError> {
    standard::maps_from_scores_into(
        projected.q.view(),
        projected.k.view(),
        shape,
        Mask::causal(causal),
        1,
        query_heads,
        queries,
        standard::scaled_dot_scores,
        out,
    )
}
