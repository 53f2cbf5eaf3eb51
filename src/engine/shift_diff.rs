//! Shift-difference gated attention, the mechanism the mission is about (DESIGN.md §2).
//!
//! From a map `A` it builds `shift_k(A)`, the difference `D`, the elementwise gate
//! `G = sigmoid(alpha·A + beta·D + gamma)` and the fused map `A' = A + G ⊙ D`. The source
//! article's code reshapes `L x L` maps into `d`-wide vectors, which only works when
//! `L == d_h`; DESIGN.md §2 gives the well-posed version implemented here, whose gate has three
//! scalars per head and so serves sentences of any length.

use ndarray::{Array2, Array3, ArrayView2, Axis, Zip};

use super::error::EngineError;
use super::mask::Mask;
use super::numeric::{saturate, sigmoid};
use super::softmax::masked_softmax_rows;

/// What enters the cells that a shift uncovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShiftFill {
    /// Wrap around: `shift_k(A)[i, j] = A[i, (j - k) mod L]` (the article's `torch.cat`, i.e.
    /// `torch.roll(A, k, dim=-1)`). Each row of the shifted map is a permutation of `A`'s row.
    #[default]
    Circular,
    /// Uncovered cells are 0: `shift_k(A)[i, j] = A[i, j - k]`, or 0 out of range.
    Zero,
}

/// Which difference `D` is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Difference {
    /// `D = A - shift_k(A)` (the article's text; the default).
    #[default]
    Single,
    /// `D = shift_{-k}(A) - shift_{+k}(A)` (the article's code, there with `k = 1`).
    Symmetric,
}

/// Whether the fused map is renormalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Renormalize {
    /// `A' = A + G ⊙ D` as it is (the article's text; the default). Rows need not sum to 1.
    #[default]
    None,
    /// `softmax_row(A + G ⊙ D)` over the cells the mask allows (the article's code).
    Softmax,
}

/// The gate's three learned scalars per head: `G_h = sigmoid(alpha_h·A_h + beta_h·D_h + gamma_h)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// Weight of `A` in the gate, one per head.
    pub alpha: Vec<f32>,
    /// Weight of `D` in the gate, one per head.
    pub beta: Vec<f32>,
    /// Bias of the gate, one per head.
    pub gamma: Vec<f32>,
}

impl Gate {
    /// The same three scalars for every one of `heads` heads.
    pub fn uniform(heads: usize, alpha: f32, beta: f32, gamma: f32) -> Gate {
        Gate {
            alpha: vec![alpha; heads],
            beta: vec![beta; heads],
            gamma: vec![gamma; heads],
        }
    }

    /// Checks that the gate has exactly one scalar of each kind per head.
    pub fn check(&self, heads: usize) -> Result<(), EngineError> {
        for (field, v) in [
            ("gate.alpha", &self.alpha),
            ("gate.beta", &self.beta),
            ("gate.gamma", &self.gamma),
        ] {
            if v.len() != heads {
                return Err(EngineError::Shape {
                    field,
                    expected: format!("{heads} values (one per head)"),
                    found: format!("{} values", v.len()),
                });
            }
        }
        Ok(())
    }
}

/// Everything that shapes the stages after `A`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftDiffParams {
    /// The shift `k`, any integer; positive `k` moves attention mass to later keys.
    pub shift: i64,
    /// Which difference to take.
    pub difference: Difference,
    /// What fills uncovered cells.
    pub fill: ShiftFill,
    /// Whether to renormalise the fused map.
    pub renormalize: Renormalize,
    /// The per-head gate.
    pub gate: Gate,
}

/// `shift_k(A)` along the keys (columns) of one map.
///
/// ```
/// use diffattn::engine::shift_diff::{shift, ShiftFill};
/// use ndarray::array;
/// let a = array![[0.5f32, 0.3, 0.2]];
/// // k = 1 moves mass one key later: circular wraps the last key round to the first.
/// assert_eq!(shift(a.view(), 1, ShiftFill::Circular), array![[0.2f32, 0.5, 0.3]]);
/// assert_eq!(shift(a.view(), 1, ShiftFill::Zero), array![[0.0f32, 0.5, 0.3]]);
/// // k = -1 moves it earlier, and k = 3 = L is the identity in circular mode.
/// assert_eq!(shift(a.view(), -1, ShiftFill::Circular), array![[0.3f32, 0.2, 0.5]]);
/// assert_eq!(shift(a.view(), 3, ShiftFill::Circular), a);
/// ```
pub fn shift(a: ArrayView2<f32>, k: i64, fill: ShiftFill) -> Array2<f32> {
    let mut out = Array2::<f32>::zeros(a.raw_dim());
    shift_into(a, k, fill, &mut out);
    out
}

/// [`shift`] into an existing `(queries, keys)` buffer of the same shape.
fn shift_into(a: ArrayView2<f32>, k: i64, fill: ShiftFill, out: &mut Array2<f32>) {
    let keys = a.ncols();
    if keys == 0 {
        return;
    }
    let keys_i = keys as i64;
    for (src, mut dst) in a.axis_iter(Axis(0)).zip(out.axis_iter_mut(Axis(0))) {
        for (j, cell) in dst.iter_mut().enumerate() {
            let from = j as i64 - k;
            *cell = match fill {
                // `rem_euclid` keeps the index in 0..L for negative and huge shifts alike.
                ShiftFill::Circular => src[from.rem_euclid(keys_i) as usize],
                ShiftFill::Zero if (0..keys_i).contains(&from) => src[from as usize],
                ShiftFill::Zero => 0.0,
            };
        }
    }
}

/// The maps after `A` for every head, each `(heads, queries, keys)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftDiffMaps {
    /// `shift_{+k}(A)`.
    pub shifted: Array3<f32>,
    /// `shift_{-k}(A)`, present in symmetric mode only.
    pub shifted_back: Option<Array3<f32>>,
    /// The difference `D`.
    pub d: Array3<f32>,
    /// The gate `G`.
    pub g: Array3<f32>,
    /// The fused map `A'`, after any renormalisation.
    pub fused: Array3<f32>,
}

/// Builds every stage after `A` from the per-head maps `a` (DESIGN.md §2).
///
/// `mask` is the mask `A` was computed with; only the softmax renormalisation uses it. Shifting
/// can move mass into masked cells, and the maps keep it there rather than hide it.
///
/// ```
/// use diffattn::engine::shift_diff::*;
/// use diffattn::engine::Mask;
/// use ndarray::array;
/// // One head, one query over three keys, k = 1, circular:
/// // A = [0.5, 0.3, 0.2], shift(A) = [0.2, 0.5, 0.3], D = [0.3, -0.2, -0.1].
/// // With alpha = beta = gamma = 0 the gate is sigmoid(0) = 0.5 everywhere, so
/// // A' = A + 0.5·D = [0.65, 0.2, 0.15].
/// let a = array![[[0.5f32, 0.3, 0.2]]];
/// let params = ShiftDiffParams {
///     shift: 1,
///     difference: Difference::Single,
///     fill: ShiftFill::Circular,
///     renormalize: Renormalize::None,
///     gate: Gate::uniform(1, 0.0, 0.0, 0.0),
/// };
/// let maps = shift_diff_maps(&a, &params, Mask::FULL).unwrap();
/// assert_eq!(maps.g[[0, 0, 0]], 0.5);
/// let fused: Vec<f32> = maps.fused.iter().copied().collect();
/// for (got, want) in fused.iter().zip([0.65, 0.2, 0.15]) {
///     assert!((got - want).abs() < 1e-6);
/// }
/// ```
pub fn shift_diff_maps(
    a: &Array3<f32>,
    params: &ShiftDiffParams,
    mask: Mask,
) -> Result<ShiftDiffMaps, EngineError> {
    let heads = a.len_of(Axis(0));
    params.gate.check(heads)?;
    let mut shifted = Array3::<f32>::zeros(a.raw_dim());
    let mut shifted_back = match params.difference {
        Difference::Single => None,
        Difference::Symmetric => Some(Array3::<f32>::zeros(a.raw_dim())),
    };
    let mut d = Array3::<f32>::zeros(a.raw_dim());
    let mut g = Array3::<f32>::zeros(a.raw_dim());
    let mut fused = Array3::<f32>::zeros(a.raw_dim());
    let mut scratch = Array2::<f32>::zeros((a.len_of(Axis(1)), a.len_of(Axis(2))));

    for h in 0..heads {
        let a_h = a.index_axis(Axis(0), h);
        shift_into(a_h, params.shift, params.fill, &mut scratch);
        shifted.index_axis_mut(Axis(0), h).assign(&scratch);
        let mut d_h = d.index_axis_mut(Axis(0), h);
        match shifted_back.as_mut() {
            None => Zip::from(&mut d_h)
                .and(a_h)
                .and(&scratch)
                .for_each(|d, &a, &s| *d = a - s),
            Some(back) => {
                let mut back_h = back.index_axis_mut(Axis(0), h);
                let back_owned = shift(a_h, -params.shift, params.fill);
                back_h.assign(&back_owned);
                Zip::from(&mut d_h)
                    .and(&back_owned)
                    .and(&scratch)
                    .for_each(|d, &b, &s| *d = b - s);
            }
        }
        let (alpha, beta, gamma) = (
            params.gate.alpha[h],
            params.gate.beta[h],
            params.gate.gamma[h],
        );
        let mut g_h = g.index_axis_mut(Axis(0), h);
        let mut fused_h = fused.index_axis_mut(Axis(0), h);
        Zip::from(&mut g_h)
            .and(&mut fused_h)
            .and(a_h)
            .and(&d_h)
            .for_each(|g, f, &a, &d| {
                *g = sigmoid(saturate(alpha * a + beta * d + gamma));
                *f = saturate(a + *g * d);
            });
        if params.renormalize == Renormalize::Softmax {
            masked_softmax_rows(fused_h, |i, j| mask.allows(i, j));
        }
    }
    Ok(ShiftDiffMaps {
        shifted,
        shifted_back,
        d,
        g,
        fused,
    })
}
