//! The parameter values of the mechanisms, beside the registry ([`crate::engine::mechanism`]):
//! what shapes the shift stages (DESIGN.md §2) and the Differential Transformer's learned
//! parameters (§3). A leaf of the engine: it imports only the numeric rules, so the registry
//! and every mechanism module can name these types without importing each other.

use super::error::EngineError;
use super::kernels;
use super::numeric::saturate;

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
    /// [`RMS_NORM_EPS`], the λ the vectors give, `T = 1`), at depth 0 and with the learned
    /// vectors still empty: callers give those, and take the rest with `..Default::default()`.
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

/// `lambda_init = 0.8 - 0.6·exp(-0.3·depth)` (paper §2.1).
///
/// ```
/// use diffattn::engine::params::lambda_init;
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
