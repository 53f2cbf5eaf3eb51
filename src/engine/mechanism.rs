//! One entry point over every mechanism: which mechanism with which parameters, and the typed
//! stages it produces.

use ndarray::{Array2, Array3, ArrayView2};

use super::cosine;
use super::diff_transformer::{self, DiffTransformerMaps, DiffTransformerParams};
use super::error::EngineError;
use super::input_diff::{self, InputDiffProjected};
use super::local;
use super::mask::Mask;
use super::projection::{mix_values, Projected, Weights};
use super::shift_diff::{self, ShiftDiffMaps, ShiftDiffParams};
use super::standard;

/// An attention mechanism and the parameters only it has (DESIGN.md §1 to §4).
#[derive(Debug, Clone, PartialEq)]
pub enum Mechanism {
    /// Scaled dot-product attention (§1).
    Standard,
    /// Shift-difference gated attention (§2).
    ShiftDiff(ShiftDiffParams),
    /// The published Differential Transformer (§3); `heads` counts diff heads.
    DiffTransformer(DiffTransformerParams),
    /// Queries from tokens, keys and values from the steps between them (§4).
    InputDiff,
    /// Cosine-similarity scores times a temperature `tau` (§4).
    Cosine {
        /// The temperature.
        tau: f32,
    },
    /// Attention within a window of radius `window` around each token (§4).
    Local {
        /// The radius `w`.
        window: usize,
    },
}

impl Mechanism {
    /// The name used in the stages format (`"shift_diff"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Standard => "standard",
            Mechanism::ShiftDiff(_) => "shift_diff",
            Mechanism::DiffTransformer(_) => "diff_transformer",
            Mechanism::InputDiff => "input_diff",
            Mechanism::Cosine { .. } => "cosine",
            Mechanism::Local { .. } => "local",
        }
    }
}

/// Every intermediate of one layer, typed by mechanism.
///
/// The variants differ in size (the shift stages hold six maps), but a `Stages` is made once per
/// run and never stored in bulk, so boxing would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stages {
    /// Standard, input-difference, cosine and local attention: one map per head.
    Attention {
        /// The maps `A`, `(heads, queries, keys)`; `keys = tokens - 1` for input difference.
        a: Array3<f32>,
        /// The layer output, `(tokens, d)`.
        output: Array2<f32>,
    },
    /// Shift-difference gated attention.
    ShiftDiff {
        /// The maps `A`.
        a: Array3<f32>,
        /// `shift(A)`, `D`, `G` and `A'`.
        maps: ShiftDiffMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// The Differential Transformer.
    DiffTransformer {
        /// `A1`, `A2`, lambda and `A1 - lambda·A2`.
        maps: DiffTransformerMaps,
        /// The layer output.
        output: Array2<f32>,
    },
}

impl Stages {
    /// The layer output, `(tokens, d)`.
    pub fn output(&self) -> &Array2<f32> {
        match self {
            Stages::Attention { output, .. }
            | Stages::ShiftDiff { output, .. }
            | Stages::DiffTransformer { output, .. } => output,
        }
    }

    /// The map each head finally mixes values with: `A`, `A'` or `A1 - lambda·A2`.
    pub fn final_maps(&self) -> &Array3<f32> {
        match self {
            Stages::Attention { a, .. } => a,
            Stages::ShiftDiff { maps, .. } => &maps.fused,
            Stages::DiffTransformer { maps, .. } => &maps.diff,
        }
    }
}

/// Runs one attention layer over the sequence `x` (`(tokens, d)`) and returns every stage.
///
/// `heads` re-splits the same projections; it must divide `d` (`d / 2` for the Differential
/// Transformer). Errors name the spec field at fault; nothing panics on bad sizes.
///
/// ```
/// use diffattn::engine::{run, Mechanism, Stages, Weights};
/// use ndarray::{array, Array2};
/// let eye = Array2::<f32>::eye(2);
/// let w = Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap();
/// // Identical tokens give identical scores: each of the 3 rows is uniform over 3 keys.
/// let x = array![[1.0f32, 0.0], [1.0, 0.0], [1.0, 0.0]];
/// let stages = run(x.view(), &w, 2, false, &Mechanism::Standard).unwrap();
/// let Stages::Attention { a, .. } = stages else { unreachable!() };
/// assert!(a.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-6));
/// ```
pub fn run(
    x: ArrayView2<f32>,
    weights: &Weights,
    heads: usize,
    causal: bool,
    mechanism: &Mechanism,
) -> Result<Stages, EngineError> {
    weights.check_input(x)?;
    let mask = Mask::causal(causal);
    // Input-difference attention projects the steps between tokens; all others the tokens.
    let project = || Projected::new(x, weights);
    Ok(match mechanism {
        Mechanism::Standard => {
            let p = project();
            attention_stages(
                standard::attention(p.q.view(), p.k.view(), heads, mask)?,
                &p,
                weights,
            )
        }
        Mechanism::Cosine { tau } => {
            let p = project();
            let a = cosine::attention(p.q.view(), p.k.view(), heads, mask, *tau)?;
            attention_stages(a, &p, weights)
        }
        Mechanism::Local { window } => {
            let p = project();
            let a = local::attention(p.q.view(), p.k.view(), heads, causal, *window)?;
            attention_stages(a, &p, weights)
        }
        Mechanism::InputDiff => {
            let p = InputDiffProjected::new(x, weights);
            let a = input_diff::attention(&p, heads, causal)?;
            let output = mix_values(&a, p.v.view(), weights.w_o.view());
            Stages::Attention { a, output }
        }
        Mechanism::ShiftDiff(params) => {
            let p = project();
            let a = standard::attention(p.q.view(), p.k.view(), heads, mask)?;
            let maps = shift_diff::shift_diff_maps(&a, params, mask)?;
            let output = mix_values(&maps.fused, p.v.view(), weights.w_o.view());
            Stages::ShiftDiff { a, maps, output }
        }
        Mechanism::DiffTransformer(params) => {
            let p = project();
            let maps = diff_transformer::maps(&p, heads, mask, params)?;
            let output =
                diff_transformer::output(&maps, p.v.view(), &params.subln, weights.w_o.view());
            Stages::DiffTransformer { maps, output }
        }
    })
}

fn attention_stages(a: Array3<f32>, projected: &Projected, weights: &Weights) -> Stages {
    let output = mix_values(&a, projected.v.view(), weights.w_o.view());
    Stages::Attention { a, output }
}
