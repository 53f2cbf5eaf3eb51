//! The element-wise steps of BERT around the engine's products: LayerNorm (Ba et al. 2016,
//! eq. 4, with the biased variance as PyTorch's `nn.LayerNorm`), the exact GELU (Hendrycks and
//! Gimpel 2016: `x · Φ(x)`, with musl's `erff` from the `libm` crate, the same bits natively and
//! in wasm), mean pooling and L2 normalisation (sentence-transformers' `Pooling` and
//! `Normalize`).
//!
//! Sums are taken in `f64` in index order: no platform-dependent math, and the rounding of 384
//! terms stays far below the model's own half-float weights.

use ndarray::{Array2, ArrayViewMut1, Axis};

use super::Norm;
use crate::engine::numeric::saturate;

/// LayerNorm of every row of `x` in place: `(x − mean) / sqrt(var + eps) · γ + β`.
///
/// ```
/// use diffattn::model::bert::layer_norm;
/// use ndarray::array;
/// // Row [1, 3]: mean 2, variance 1, so (x − 2) / 1 = [−1, 1], then · γ [2, 2] + β [0, 1].
/// let mut x = array![[1.0f32, 3.0]];
/// layer_norm(&mut x, &[2.0, 2.0], &[0.0, 1.0], 0.0);
/// assert_eq!(x, array![[-2.0f32, 3.0]]);
/// ```
pub fn layer_norm(x: &mut Array2<f32>, weight: &[f32], bias: &[f32], eps: f32) {
    for row in x.axis_iter_mut(Axis(0)) {
        norm_row(row, weight, bias, eps);
    }
}

pub(super) fn apply(x: &mut Array2<f32>, norm: &Norm, eps: f32) {
    layer_norm(x, &norm.weight, &norm.bias, eps);
}

fn norm_row(mut row: ArrayViewMut1<f32>, weight: &[f32], bias: &[f32], eps: f32) {
    let n = row.len() as f64;
    let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = row
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    let inv = 1.0 / (var + f64::from(eps)).sqrt();
    for ((v, &g), &b) in row.iter_mut().zip(weight).zip(bias) {
        *v = saturate((((f64::from(*v) - mean) * inv) as f32) * g + b);
    }
}

/// The exact GELU, `x · Φ(x) = x/2 · (1 + erf(x / √2))` (transformers' `"gelu"`).
///
/// ```
/// use diffattn::model::bert::gelu;
/// // Φ(0) = 1/2 so gelu(0) = 0; far out Φ is 1 or 0.
/// assert_eq!(gelu(0.0), 0.0);
/// assert_eq!(gelu(10.0), 10.0);
/// assert_eq!(gelu(-10.0), -0.0);
/// assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-6);
/// ```
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The mean of the rows of `x` (every token counts: one sentence has no padding).
pub(super) fn mean_rows(x: &Array2<f32>) -> Vec<f32> {
    let n = x.nrows().max(1) as f64;
    x.axis_iter(Axis(1))
        .map(|col| (col.iter().map(|&v| f64::from(v)).sum::<f64>() / n) as f32)
        .collect()
}

/// `v / max(‖v‖, 1e-12)`, as PyTorch's `F.normalize`.
pub(super) fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    let scale = 1.0 / norm.max(1e-12);
    for x in v {
        *x = (f64::from(*x) * scale) as f32;
    }
}

/// The cosine of two vectors (their dot product when both are normalised).
///
/// ```
/// use diffattn::model::bert::cosine;
/// assert_eq!(cosine(&[1.0, 0.0], &[0.0, 2.0]), 0.0);
/// assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
/// ```
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    (dot / (norm(a) * norm(b)).max(1e-12)) as f32
}
