//! Small numeric rules shared by every mechanism: saturation and a stable sigmoid.
//!
//! DESIGN.md §5 asks that no NaN or infinity ever leaves the engine, whatever the input. Spec
//! values are finite, but products of values near the f32 limit overflow. Every stage therefore
//! saturates its result: `±inf` becomes `±f32::MAX`, and the undefined `inf - inf` (NaN) becomes
//! 0. For inputs of ordinary size this changes nothing.
//!
//! The exponential of the softmax and the gate is the engine's own (`kernels::exp`, a
//! polynomial without fused multiply-add), not the platform's `expf`, so that a map has the
//! same bits natively and in wasm.

use ndarray::{Array3, ArrayBase, DataMut, Dimension};

/// Maps a possibly non-finite value to a finite one: infinities saturate, NaN becomes 0.
///
/// ```
/// use diffattn::engine::numeric::saturate;
/// assert_eq!(saturate(f32::INFINITY), f32::MAX);
/// assert_eq!(saturate(f32::NEG_INFINITY), -f32::MAX);
/// assert_eq!(saturate(f32::NAN), 0.0);
/// assert_eq!(saturate(1.5), 1.5);
/// ```
#[inline]
pub fn saturate(v: f32) -> f32 {
    if v.is_finite() {
        v
    } else if v.is_nan() {
        0.0
    } else {
        v.signum() * f32::MAX
    }
}

/// Saturates every element in place (see [`saturate`]).
pub fn saturate_all<S, D>(a: &mut ArrayBase<S, D>)
where
    S: DataMut<Elem = f32>,
    D: Dimension,
{
    a.mapv_inplace(saturate);
}

/// The logistic function `1 / (1 + e^-x)`, computed without overflow for any finite `x`.
///
/// In f32 it reaches exactly 0 or 1 for `|x|` beyond about 17 (1 - 2^-24 is the largest f32
/// below 1), so `0 < sigmoid(x) < 1` holds strictly only for moderate `x`.
///
/// ```
/// use diffattn::engine::numeric::sigmoid;
/// assert_eq!(sigmoid(0.0), 0.5);
/// assert!((sigmoid(2.0) - 0.880_797).abs() < 1e-6);
/// assert_eq!(sigmoid(-1000.0), 0.0);
/// ```
#[inline]
pub fn sigmoid(x: f32) -> f32 {
    // `1 / (1 + e^-x)` for x >= 0 and `e^x / (1 + e^x)` below, written with one `exp` of
    // `-|x|` (the same argument either way, so the same bits) and a select instead of a
    // branch (kernels::reference::sigmoid, which the gate kernel computes lane by lane).
    super::kernels::sigmoid(x)
}

/// `e^x` for the `x <= 0` of a softmax: the engine's own exponential (`kernels::exp`), the same
/// bits on every platform. (The name is from when this was the platform's `expf` for
/// non-positive arguments.)
///
/// ```
/// use diffattn::engine::numeric::exp_nonpositive;
/// assert_eq!(exp_nonpositive(0.0), 1.0);
/// assert_eq!(exp_nonpositive(-200.0), 0.0);
/// ```
#[inline]
pub fn exp_nonpositive(x: f32) -> f32 {
    super::kernels::exp(x)
}

/// Makes `buffer` a standard-layout array of shape `dim`, keeping it (and its cells) when it
/// already is one: the engine's steps write their maps into buffers a caller keeps, block by
/// block, and a dragged slider refills the same buffers every frame.
pub(crate) fn fit(buffer: &mut Array3<f32>, dim: (usize, usize, usize)) {
    if buffer.dim() != dim || !buffer.is_standard_layout() {
        *buffer = Array3::zeros(dim);
    }
}
