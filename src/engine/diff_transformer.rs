//! The published Differential Transformer (Ye et al., ICLR 2025, arXiv 2410.05258, §2.1;
//! DESIGN.md §3): two softmax maps per head, subtracted with a learned weight lambda.
//!
//! Per diff head `h` (query and key heads `2h` and `2h+1` of width `d_h = d / H / 2` form the
//! pair, value head `h` has width `2·d_h`):
//!
//! ```text
//! A1_h = softmax(Q1_h·K1_hᵀ / (T·sqrt(d_h)) + M),   A2_h = softmax(Q2_h·K2_hᵀ / (T·sqrt(d_h)) + M)
//! lambda = exp(λq1·λk1) - exp(λq2·λk2) + lambda_init,   lambda_init = 0.8 - 0.6·exp(-0.3·depth)
//! O_h = (1 - lambda_init) · RMSNorm((A1_h - lambda·A2_h)·V_h)
//! ```
//!
//! `T` is a softmax temperature (DESIGN.md §3), 1 in the paper: the scale is `1/sqrt(d_h)`
//! divided by `T`, and dividing by 1 is exact, so `T = 1` gives the paper's maps bit for bit.
//!
//! Unlike the official code (microsoft/unilm `Diff-Transformer/multihead_diffattn.py`), which
//! returns NaN for a fully masked row, a fully masked row here is all zeros; and no rotary
//! embedding is applied, as the layer's input already carries its positions.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView1, ArrayView2, Axis, Zip};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::kernels;
use super::layout::Pairing;
use super::mask::Mask;
use super::numeric::{fit, saturate};
pub use super::params::{
    effective_lambda, lambda, lambda_init, DiffTransformerParams, RMS_NORM_EPS,
};
use super::projection::head;
use super::standard;

/// `x / sqrt(mean(x²) + eps) · weight` over each row.
///
/// The mean square is taken of the row scaled by its largest magnitude and scaled back, so it
/// neither overflows for huge rows nor loses the `eps` for tiny ones.
pub fn rms_norm_rows(x: ArrayView2<f32>, weight: ArrayView1<f32>, eps: f32) -> Array2<f32> {
    let mut out = x.to_owned();
    let width = x.ncols().max(1) as f32;
    for mut row in out.axis_iter_mut(Axis(0)) {
        let max = row.iter().fold(0.0f32, |acc, v| acc.max(v.abs()));
        if max == 0.0 {
            continue;
        }
        let mean_sq_scaled = row.iter().map(|v| (v / max) * (v / max)).sum::<f32>() / width;
        // mean(x²) + eps = max² · (mean((x/max)²) + eps/max²); take the root of each factor.
        let rms = max * (mean_sq_scaled + eps / max / max).sqrt();
        Zip::from(&mut row)
            .and(weight)
            .for_each(|v, &w| *v = saturate(*v / rms * w));
    }
    out
}

/// Every stage of one Differential Transformer layer.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffTransformerMaps {
    /// The first softmax map of each diff head, `(heads, tokens, tokens)`.
    pub a1: Array3<f32>,
    /// The second softmax map of each diff head.
    pub a2: Array3<f32>,
    /// The layer's lambda.
    pub lambda: f32,
    /// `lambda_init` for the layer's depth.
    pub lambda_init: f32,
    /// `A1 - lambda·A2`.
    pub diff: Array3<f32>,
}

/// The two query heads that form diff head `h` (DESIGN.md §7.4).
fn pair(pairing: Pairing, h: usize, heads: usize) -> (usize, usize) {
    match pairing {
        Pairing::Adjacent => (2 * h, 2 * h + 1),
        Pairing::Halves => (h, h + heads),
    }
}

impl DiffTransformerMaps {
    /// No maps yet: buffers for [`maps_into`] to fill.
    pub fn empty() -> DiffTransformerMaps {
        DiffTransformerMaps {
            a1: Array3::zeros((0, 0, 0)),
            a2: Array3::zeros((0, 0, 0)),
            lambda: 0.0,
            lambda_init: 0.0,
            diff: Array3::zeros((0, 0, 0)),
        }
    }
}

/// Rows `queries` of the maps `A1`, `A2` and `A1 - lambda·A2` of the diff heads `heads`, from
/// (rotated) queries and keys, into `out`: query head `j` of the `2H` scores against key head
/// `shape.key_head(j)` of the `2G`. Map `i` of each stack is diff head `heads.start + i`, each
/// of its two query heads computed alone, so a block has the bits it has in the whole stack.
#[allow(clippy::too_many_arguments)]
pub fn maps_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    mask: Mask,
    params: &DiffTransformerParams,
    heads: Range<usize>,
    queries: Range<usize>,
    out: &mut DiffTransformerMaps,
) -> Result<(), EngineError> {
    params.check(shape.head_dim)?;
    let (firsts, seconds): (Vec<usize>, Vec<usize>) =
        heads.map(|h| pair(pairing, h, shape.heads)).unzip();
    let t = params.temperature;
    standard::maps_into(q, k, shape, mask, &firsts, queries.clone(), t, &mut out.a1)?;
    standard::maps_into(q, k, shape, mask, &seconds, queries.clone(), t, &mut out.a2)?;
    out.lambda = effective_lambda(params);
    out.lambda_init = params.lambda_init();
    fit(&mut out.diff, out.a1.dim());
    subtract(out, queries);
    Ok(())
}

/// Rows `queries` of `diff = A1 - λ·A2` with the maps' `lambda`, into the maps' `diff`.
fn subtract(maps: &mut DiffTransformerMaps, queries: Range<usize>) {
    let lambda = maps.lambda;
    let rows = s![.., queries, ..];
    Zip::from(maps.diff.slice_mut(rows))
        .and(maps.a1.slice(rows))
        .and(maps.a2.slice(rows))
        .for_each(|d, &a, &b| *d = saturate(a - lambda * b));
}

/// Puts `params`' λ into `maps` (a slider moved, or a fixed λ came or went): `A1 - λ·A2` is
/// recomputed from the kept `A1` and `A2`, nothing before it. Returns whether λ changed.
pub fn set_lambda(maps: &mut DiffTransformerMaps, params: &DiffTransformerParams) -> bool {
    let lambda = effective_lambda(params);
    if lambda.to_bits() == maps.lambda.to_bits() {
        return false;
    }
    maps.lambda = lambda;
    let tokens = maps.a1.dim().1;
    subtract(maps, 0..tokens);
    true
}

/// The value of diff head `h`, `(keys, 2·d_h)`: adjacent takes value head `g` of width `2·d_h`,
/// halves joins value heads `g` and `g + G` of width `d_h` (`g = ⌊h / (H/G)⌋`).
fn head_value(v: ArrayView2<f32>, shape: &HeadShape, pairing: Pairing, h: usize) -> Array2<f32> {
    let (g, d_h) = (shape.value_head(h), shape.head_dim);
    match pairing {
        Pairing::Adjacent => head(v, g, 2 * d_h).to_owned(),
        Pairing::Halves => {
            let mut joined = Array2::<f32>::zeros((v.nrows(), 2 * d_h));
            joined.slice_mut(s![.., ..d_h]).assign(&head(v, g, d_h));
            joined
                .slice_mut(s![.., d_h..])
                .assign(&head(v, g + shape.kv_heads, d_h));
            joined
        }
    }
}

/// The diff heads `of`'s share of `concat_h((1 - lambda_init)·RMSNorm(diff_h·V_h))` (before
/// `·W_oᵀ + b_o`), from each diff head's `A1 − λ·A2` (`diff_of(h)`, `(queries, keys)`, wherever
/// a caller keeps it), into its columns `h·2d_h .. (h+1)·2d_h` of `concat`, which becomes
/// `(queries, heads · 2d_h)` (kept when it already is; its other columns left as they were).
#[allow(clippy::too_many_arguments)]
pub fn mix_into<'a>(
    heads: usize,
    of: Range<usize>,
    diff_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
    v: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    params: &DiffTransformerParams,
    concat: &mut Array2<f32>,
) {
    let d_v = 2 * shape.head_dim;
    let queries = of
        .clone()
        .next()
        .map_or(concat.nrows(), |h| diff_of(h).nrows());
    if concat.dim() != (queries, heads * d_v) {
        *concat = Array2::zeros((queries, heads * d_v));
    }
    let weight = ndarray::ArrayView1::from(&params.subln);
    let lambda_init = params.lambda_init();
    for h in of {
        let diff_h = diff_of(h);
        let mixed = kernels::matmul(diff_h, head_value(v, shape, pairing, h).view(), 1.0);
        let mut normed = rms_norm_rows(mixed.view(), weight, params.subln_eps);
        normed.mapv_inplace(|x| saturate(x * (1.0 - lambda_init)));
        concat
            .slice_mut(s![.., h * d_v..(h + 1) * d_v])
            .assign(&normed);
    }
}
