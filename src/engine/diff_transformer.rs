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

use ndarray::{s, Array2, Array3, ArrayView1, ArrayView2, Axis, Zip};

use super::error::EngineError;
use super::kernels;
use super::layout::{HeadShape, Pairing};
use super::mask::Mask;
use super::numeric::saturate;
use super::projection::{head, Weights};
use super::standard;

/// RMSNorm's epsilon, as in the official code.
pub const RMS_NORM_EPS: f32 = 1e-5;

/// The learned parameters of one Differential Transformer layer beyond `W_q, W_k, W_v, W_o`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffTransformerParams {
    /// The layer's depth, counted from 0 (the paper's `l - 1`); sets `lambda_init`.
    pub depth: u32,
    /// `λq1`, length `d_h`.
    pub lambda_q1: Vec<f32>,
    /// `λk1`, length `d_h`.
    pub lambda_k1: Vec<f32>,
    /// `λq2`, length `d_h`.
    pub lambda_q2: Vec<f32>,
    /// `λk2`, length `d_h`.
    pub lambda_k2: Vec<f32>,
    /// RMSNorm's learned weight over one head's `2·d_h` value channels (all ones for a norm
    /// without a learned weight, like DiffLlama's).
    pub subln: Vec<f32>,
    /// `lambda_init` itself, instead of the one `depth` gives (DESIGN.md §7.4).
    pub lambda_init: Option<f32>,
    /// RMSNorm's epsilon ([`RMS_NORM_EPS`] in the official code).
    pub subln_eps: f32,
    /// λ itself, in place of the one the lambda vectors give (the page's λ slider, the spec's
    /// `lambda`); `lambda_init` still scales the output.
    pub lambda: Option<f32>,
    /// The softmax temperature `T` of both maps (positive; 1 is the paper's maps).
    pub temperature: f32,
}

impl Default for DiffTransformerParams {
    /// The paper's choices for every optional part (`lambda_init` from the depth, RMSNorm's
    /// [`RMS_NORM_EPS`], the λ the vectors give), at depth 0 and with the learned vectors still
    /// empty: callers give those, and take the rest with `..Default::default()`.
    fn default() -> DiffTransformerParams {
        DiffTransformerParams {
            depth: 0,
            lambda_q1: Vec::new(),
            lambda_k1: Vec::new(),
            lambda_q2: Vec::new(),
            lambda_k2: Vec::new(),
            subln: Vec::new(),
            lambda_init: None,
            subln_eps: RMS_NORM_EPS,
            lambda: None,
            temperature: 1.0,
        }
    }
}

impl DiffTransformerParams {
    /// `lambda_init`: the given one, or `0.8 - 0.6·exp(-0.3·depth)`.
    pub fn lambda_init(&self) -> f32 {
        self.lambda_init.unwrap_or_else(|| lambda_init(self.depth))
    }

    /// Checks every vector against the head width `d_h`, and that the temperature is positive
    /// and finite.
    pub fn check(&self, d_h: usize) -> Result<usize, EngineError> {
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(EngineError::Shape {
                field: "temperature",
                expected: "a positive finite number".to_string(),
                found: self.temperature.to_string(),
            });
        }
        for (field, v, want) in [
            ("lambda_q1", &self.lambda_q1, d_h),
            ("lambda_k1", &self.lambda_k1, d_h),
            ("lambda_q2", &self.lambda_q2, d_h),
            ("lambda_k2", &self.lambda_k2, d_h),
            ("subln", &self.subln, 2 * d_h),
        ] {
            if v.len() != want {
                return Err(EngineError::Shape {
                    field,
                    expected: format!("{want} values (head_dim d_h = {d_h})"),
                    found: format!("{} values", v.len()),
                });
            }
        }
        Ok(d_h)
    }
}

/// `d_h = d / H / 2`, or why `H` diff heads cannot split width `d`.
///
/// ```
/// use diffattn::engine::diff_transformer::diff_head_width;
/// assert_eq!(diff_head_width(64, 8).unwrap(), 4);
/// assert!(diff_head_width(64, 64).is_err()); // 64 / 64 = 1 channel cannot be halved
/// ```
pub fn diff_head_width(d_model: usize, heads: usize) -> Result<usize, EngineError> {
    if heads == 0 {
        return Err(EngineError::ZeroHeads);
    }
    if d_model % (2 * heads) != 0 {
        return Err(EngineError::HeadsDoNotDivide {
            width: d_model / 2,
            heads,
            what: "d_model / 2 (each diff head has two query heads)",
        });
    }
    Ok(d_model / heads / 2)
}

/// `lambda_init = 0.8 - 0.6·exp(-0.3·depth)` (paper §2.1).
///
/// ```
/// use diffattn::engine::diff_transformer::lambda_init;
/// assert!((lambda_init(0) - 0.2).abs() < 1e-7); // 0.8 - 0.6
/// ```
pub fn lambda_init(depth: u32) -> f32 {
    0.8 - 0.6 * kernels::exp(-0.3 * depth as f32)
}

/// The λ the layer subtracts with: the fixed one when given, else [`lambda`].
pub fn effective_lambda(params: &DiffTransformerParams) -> f32 {
    params.lambda.unwrap_or_else(|| lambda(params))
}

/// The layer's one lambda: `exp(λq1·λk1) - exp(λq2·λk2) + lambda_init`.
pub fn lambda(params: &DiffTransformerParams) -> f32 {
    let dot = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
    // The engine's exp, not the platform's, so lambda has the same bits everywhere.
    let e1 = kernels::exp(saturate(dot(&params.lambda_q1, &params.lambda_k1)));
    let e2 = kernels::exp(saturate(dot(&params.lambda_q2, &params.lambda_k2)));
    saturate(saturate(e1 - e2) + params.lambda_init())
}

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

/// The maps `A1`, `A2` and `A1 - lambda·A2` from (rotated) queries and keys: query head `j` of
/// the `2H` scores against key head `shape.key_head(j)` of the `2G`.
pub fn maps(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    mask: Mask,
    params: &DiffTransformerParams,
) -> Result<DiffTransformerMaps, EngineError> {
    maps_of(q, k, shape, pairing, mask, params, 0..shape.heads)
}

/// [`maps`] of the diff heads `heads` only: map `i` of `A1`, `A2` and the difference is diff
/// head `heads.start + i`, with the same bits as in the whole stack (each of its two query
/// heads is computed alone).
pub fn maps_of(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    mask: Mask,
    params: &DiffTransformerParams,
    heads: std::ops::Range<usize>,
) -> Result<DiffTransformerMaps, EngineError> {
    params.check(shape.head_dim)?;
    let query_heads: Vec<usize> = heads
        .clone()
        .flat_map(|h| {
            let (first, second) = pair(pairing, h, shape.heads);
            [first, second]
        })
        .collect();
    let t = params.temperature;
    let both = standard::grouped_tempered_of(q, k, shape, mask, &query_heads, t)?;
    let (queries, keys) = (both.dim().1, both.dim().2);
    let mut a1 = Array3::<f32>::zeros((heads.len(), queries, keys));
    let mut a2 = a1.clone();
    for slot in 0..heads.len() {
        a1.index_axis_mut(Axis(0), slot)
            .assign(&both.index_axis(Axis(0), 2 * slot));
        a2.index_axis_mut(Axis(0), slot)
            .assign(&both.index_axis(Axis(0), 2 * slot + 1));
    }
    let mut maps = DiffTransformerMaps {
        diff: Array3::zeros((0, 0, 0)),
        a1,
        a2,
        lambda: effective_lambda(params),
        lambda_init: params.lambda_init(),
    };
    subtract(&mut maps);
    Ok(maps)
}

/// `diff = A1 - λ·A2` with the maps' `lambda`, into the maps' `diff` (its buffer reused).
fn subtract(maps: &mut DiffTransformerMaps) {
    let lambda = maps.lambda;
    if maps.diff.dim() != maps.a1.dim() {
        maps.diff = Array3::zeros(maps.a1.dim());
    }
    Zip::from(&mut maps.diff)
        .and(&maps.a1)
        .and(&maps.a2)
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
    subtract(maps);
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

/// The layer output `concat_h((1 - lambda_init)·RMSNorm(diff_h·V_h))·W_oᵀ + b_o`.
pub fn output(
    maps: &DiffTransformerMaps,
    v: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    params: &DiffTransformerParams,
    weights: &Weights,
) -> Array2<f32> {
    let heads = maps.diff.dim().0;
    output_of(
        heads,
        &|h| maps.diff.index_axis(Axis(0), h),
        v,
        shape,
        pairing,
        params,
        weights,
    )
}

/// [`output`] from each diff head's `A1 − λ·A2` (`diff_of(h)`, `(queries, keys)`), wherever it
/// is kept: the same bits as from one stack.
pub fn output_of<'a>(
    heads: usize,
    diff_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
    v: ArrayView2<f32>,
    shape: &HeadShape,
    pairing: Pairing,
    params: &DiffTransformerParams,
    weights: &Weights,
) -> Array2<f32> {
    let queries = if heads == 0 { 0 } else { diff_of(0).nrows() };
    let d_v = 2 * shape.head_dim;
    let weight = ndarray::ArrayView1::from(&params.subln);
    let lambda_init = params.lambda_init();
    let mut concat = Array2::<f32>::zeros((queries, heads * d_v));
    for h in 0..heads {
        let diff_h = diff_of(h);
        let mixed = kernels::matmul(diff_h, head_value(v, shape, pairing, h).view(), 1.0);
        let mut normed = rms_norm_rows(mixed.view(), weight, params.subln_eps);
        normed.mapv_inplace(|x| saturate(x * (1.0 - lambda_init)));
        concat
            .slice_mut(s![.., h * d_v..(h + 1) * d_v])
            .assign(&normed);
    }
    weights.out(concat.view())
}
