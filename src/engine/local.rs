//! Local attention (DESIGN.md §4): standard attention where query `i` sees only keys with
//! `|i - j| <= w`. A radius of 0 keeps only the token itself; `w >= L - 1` is full attention.

use ndarray::{Array3, ArrayView2};

use super::error::EngineError;
use super::mask::Mask;
use super::standard;

/// Local attention maps with window radius `window`, shape `(heads, tokens, tokens)`.
///
/// ```
/// use diffattn::engine::local;
/// use ndarray::Array2;
/// // Radius 0: each token attends only to itself, whatever the scores.
/// let q = Array2::<f32>::ones((3, 2));
/// let a = local::attention(q.view(), q.view(), 1, false, 0).unwrap();
/// assert_eq!(a.index_axis(ndarray::Axis(0), 0), Array2::<f32>::eye(3));
/// ```
pub fn attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    heads: usize,
    causal: bool,
    window: usize,
) -> Result<Array3<f32>, EngineError> {
    let mask = Mask {
        causal,
        window: Some(window),
    };
    standard::attention(q, k, heads, mask)
}
