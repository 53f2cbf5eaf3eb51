//! The page's controls as one value: mechanism, heads, mask and every mechanism's parameters.

use crate::engine::shift_diff::{Difference, Renormalize, ShiftFill};
use crate::engine::{EngineError, Mechanism};
use crate::model::Model;

/// Which mechanism the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MechanismKind {
    /// Standard scaled dot-product attention.
    Standard,
    /// Shift-difference gated attention (the default).
    #[default]
    ShiftDiff,
    /// The published Differential Transformer.
    DiffTransformer,
    /// Input-difference attention.
    InputDiff,
    /// Cosine attention.
    Cosine,
    /// Local attention.
    Local,
}

impl MechanismKind {
    /// Every mechanism, in the order the page lists them.
    pub const ALL: [MechanismKind; 6] = [
        MechanismKind::ShiftDiff,
        MechanismKind::Standard,
        MechanismKind::DiffTransformer,
        MechanismKind::InputDiff,
        MechanismKind::Cosine,
        MechanismKind::Local,
    ];

    /// The name used in the stages format and the page address.
    pub fn key(self) -> &'static str {
        match self {
            MechanismKind::Standard => "standard",
            MechanismKind::ShiftDiff => "shift_diff",
            MechanismKind::DiffTransformer => "diff_transformer",
            MechanismKind::InputDiff => "input_diff",
            MechanismKind::Cosine => "cosine",
            MechanismKind::Local => "local",
        }
    }

    /// The mechanism named `key`, if any.
    pub fn from_key(key: &str) -> Option<MechanismKind> {
        MechanismKind::ALL.into_iter().find(|m| m.key() == key)
    }

    /// The kind of an engine mechanism.
    pub fn from_mechanism(m: &Mechanism) -> MechanismKind {
        match m {
            Mechanism::Standard => MechanismKind::Standard,
            Mechanism::ShiftDiff(_) => MechanismKind::ShiftDiff,
            Mechanism::DiffTransformer(_) => MechanismKind::DiffTransformer,
            Mechanism::InputDiff => MechanismKind::InputDiff,
            Mechanism::Cosine { .. } => MechanismKind::Cosine,
            Mechanism::Local { .. } => MechanismKind::Local,
        }
    }
}

/// Every control of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The mechanism.
    pub mechanism: MechanismKind,
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// The causal mask.
    pub causal: bool,
    /// The shift `k`.
    pub shift: i64,
    /// Single or symmetric difference.
    pub difference: Difference,
    /// Circular or zero fill.
    pub fill: ShiftFill,
    /// Renormalisation of `A'`.
    pub renormalize: Renormalize,
    /// The gate's weight of `A`, for every head.
    pub alpha: f32,
    /// The gate's weight of `D`, for every head.
    pub beta: f32,
    /// The gate's bias, for every head.
    pub gamma: f32,
    /// Cosine attention's temperature.
    pub tau: f32,
    /// Local attention's radius.
    pub window: usize,
}

impl Default for Settings {
    /// Shift-difference attention, 4 heads, no mask, `k = 1`, and a gate that opens where
    /// `D` is positive (`alpha = 0`, `beta = 4`, `gamma = 0`); `tau = 10` keeps cosine maps from
    /// being flat, and a radius of 2 shows a visible band.
    fn default() -> Settings {
        Settings {
            mechanism: MechanismKind::ShiftDiff,
            heads: 4,
            causal: false,
            shift: 1,
            difference: Difference::Single,
            fill: ShiftFill::Circular,
            renormalize: Renormalize::None,
            alpha: 0.0,
            beta: 4.0,
            gamma: 0.0,
            tau: 10.0,
            window: 2,
        }
    }
}

impl Settings {
    /// These settings with everything an engine mechanism fixes taken from it: which mechanism,
    /// the heads, the mask, and its own parameters (shift stages, tau, window). The gate sliders
    /// show the mean of the mechanism's per-head gate scalars.
    pub fn with_mechanism(&self, mechanism: &Mechanism, heads: usize, causal: bool) -> Settings {
        let mut s = self.clone();
        s.mechanism = MechanismKind::from_mechanism(mechanism);
        s.heads = heads;
        s.causal = causal;
        match mechanism {
            Mechanism::ShiftDiff(p) => {
                s.shift = p.shift;
                s.difference = p.difference;
                s.fill = p.fill;
                s.renormalize = p.renormalize;
                let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
                s.alpha = mean(&p.gate.alpha);
                s.beta = mean(&p.gate.beta);
                s.gamma = mean(&p.gate.gamma);
            }
            Mechanism::Cosine { tau } => s.tau = *tau,
            Mechanism::Local { window } => s.window = *window,
            Mechanism::Standard | Mechanism::DiffTransformer(_) | Mechanism::InputDiff => {}
        }
        s
    }

    /// The settings a trained model was trained with (no causal mask), taking what training
    /// does not fix from `base`; `None` for the untrained model.
    pub fn trained(model: &Model, base: &Settings) -> Option<Settings> {
        let trained = model.trained_parts()?;
        Some(base.with_mechanism(&trained.mechanism, trained.heads, false))
    }
}

/// Rejects a non-finite control value, naming it.
pub(crate) fn finite(field: &'static str, v: f32) -> Result<f32, EngineError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(EngineError::Shape {
            field,
            expected: "a finite number".to_string(),
            found: v.to_string(),
        })
    }
}
