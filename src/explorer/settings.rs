//! The page's controls as one value, split by the cache layer each field invalidates: the map
//! settings (a change recomputes the maps) and the shift settings (a change recomputes only the
//! stages after the maps: the shift stages, or `A1 − λ·A2`). The defaults are defined here once; the page reads them through the wasm
//! boundary.

use crate::engine::diff_transformer::{effective_lambda, DiffTransformerParams};
use crate::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use crate::engine::{EngineError, Mechanism, MechanismKind};

/// What the maps depend on: which mechanism, how many heads, the mask, and the parameters that
/// shape the maps themselves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapSettings {
    /// The mechanism.
    pub mechanism: MechanismKind,
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// The causal mask.
    pub causal: bool,
    /// Cosine attention's temperature.
    pub tau: f32,
    /// Local attention's radius.
    pub window: usize,
    /// Hierarchical attention's segment size.
    pub segment: usize,
}

/// What the stages after the maps depend on: the shift stages (shift-difference attention),
/// and the λ of both Differential Transformers (`A1 − λ·A2` is recomputed from the kept
/// `A1` and `A2`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftSettings {
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
    /// λ of the Differential Transformers: the learned one (V2: its mean) until the slider
    /// moves, then the slider's for every token and head.
    pub lambda: f32,
}

/// Every control of the page.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Settings {
    /// What the maps depend on.
    pub maps: MapSettings,
    /// What the shift stages depend on.
    pub shift: ShiftSettings,
}

impl Default for MapSettings {
    /// Shift-difference attention with 4 heads and no mask; `tau = 10` keeps cosine maps from
    /// being flat, a radius of 2 shows a visible band, and segments of 4 tokens give a short
    /// sentence a few of them.
    fn default() -> MapSettings {
        MapSettings {
            mechanism: MechanismKind::ShiftDiff,
            heads: 4,
            causal: false,
            tau: 10.0,
            window: 2,
            segment: 4,
        }
    }
}

impl Default for ShiftSettings {
    /// `k = 1`, the article's text (single difference, circular fill, no renormalisation), and
    /// a gate that opens where `D` is positive (`alpha = 0`, `beta = 4`, `gamma = 0`).
    fn default() -> ShiftSettings {
        ShiftSettings {
            shift: 1,
            difference: Difference::Single,
            fill: ShiftFill::Circular,
            renormalize: Renormalize::None,
            alpha: 0.0,
            beta: 4.0,
            gamma: 0.0,
            lambda: 0.5,
        }
    }
}

impl ShiftSettings {
    /// Checks that the gate's scalars are finite, naming the one that is not.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("gate.alpha", self.alpha)?;
        finite("gate.beta", self.beta)?;
        finite("gate.gamma", self.gamma)?;
        finite("lambda", self.lambda)?;
        Ok(())
    }

    /// The shift stages' parameters with `gate` (the sliders' gate, or a learned one).
    pub fn params(&self, gate: Gate) -> ShiftDiffParams {
        ShiftDiffParams {
            shift: self.shift,
            difference: self.difference,
            fill: self.fill,
            renormalize: self.renormalize,
            gate,
        }
    }

    /// The gate of the three sliders, the same for every one of `heads` heads.
    pub fn uniform_gate(&self, heads: usize) -> Gate {
        Gate::uniform(heads, self.alpha, self.beta, self.gamma)
    }
}

impl MapSettings {
    /// Checks that `tau` is finite and the segment at least one token.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("tau", self.tau)?;
        if self.segment == 0 {
            return Err(EngineError::Shape {
                field: "segment",
                expected: "at least 1 token".to_string(),
                found: "0".to_string(),
            });
        }
        Ok(())
    }
}

/// A change to any of the controls at once, each `None` left as it is; what the page sends
/// when a person moves one control or an author sets several attributes. `head` counts from 0.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SettingsPatch {
    /// The mechanism.
    pub mechanism: Option<MechanismKind>,
    /// The number of heads.
    pub heads: Option<usize>,
    /// The head shown, from 0.
    pub head: Option<usize>,
    /// The causal mask.
    pub causal: Option<bool>,
    /// The shift `k`.
    pub shift: Option<i64>,
    /// The difference.
    pub difference: Option<Difference>,
    /// The fill.
    pub fill: Option<ShiftFill>,
    /// The renormalisation.
    pub renormalize: Option<Renormalize>,
    /// The gate's weight of `A`.
    pub alpha: Option<f32>,
    /// The gate's weight of `D`.
    pub beta: Option<f32>,
    /// The gate's bias.
    pub gamma: Option<f32>,
    /// Cosine attention's temperature.
    pub tau: Option<f32>,
    /// Local attention's radius.
    pub window: Option<usize>,
    /// Hierarchical attention's segment size.
    pub segment: Option<usize>,
    /// λ of the Differential Transformers.
    pub lambda: Option<f32>,
}

impl SettingsPatch {
    /// `maps` with this patch's map settings applied.
    pub fn apply_maps(&self, maps: &mut MapSettings) {
        set(&mut maps.mechanism, self.mechanism);
        set(&mut maps.heads, self.heads);
        set(&mut maps.causal, self.causal);
        set(&mut maps.tau, self.tau);
        set(&mut maps.window, self.window);
        set(&mut maps.segment, self.segment);
    }

    /// `shift` with this patch's shift settings applied.
    pub fn apply_shift(&self, shift: &mut ShiftSettings) {
        set(&mut shift.shift, self.shift);
        set(&mut shift.difference, self.difference);
        set(&mut shift.fill, self.fill);
        set(&mut shift.renormalize, self.renormalize);
        set(&mut shift.alpha, self.alpha);
        set(&mut shift.beta, self.beta);
        set(&mut shift.gamma, self.gamma);
        set(&mut shift.lambda, self.lambda);
    }
}

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// The parameters a mechanism learned (from a trained model or a loaded spec), used in place of
/// the sliders' values.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// A per-head gate, used until a gate slider moves.
    pub gate: Option<Gate>,
    /// The Differential Transformer's lambda vectors and norm weight.
    pub diff_transformer: Option<DiffTransformerParams>,
    /// A λ that replaces the learned one in both Differential Transformers (the slider, once
    /// moved, or a spec's `lambda`).
    pub lambda: Option<f32>,
}

impl Settings {
    /// The engine's mechanism with every parameter: the settings' values, with the learned
    /// gate and Differential Transformer parameters in `learned`.
    pub fn mechanism(&self, learned: &Learned) -> Result<Mechanism, EngineError> {
        let m = &self.maps;
        Ok(match m.mechanism {
            MechanismKind::Standard => Mechanism::Standard,
            MechanismKind::ShiftDiff => {
                let gate = learned
                    .gate
                    .clone()
                    .unwrap_or_else(|| self.shift.uniform_gate(m.heads));
                Mechanism::ShiftDiff(self.shift.params(gate))
            }
            MechanismKind::DiffTransformer => {
                let mut params =
                    learned
                        .diff_transformer
                        .clone()
                        .ok_or_else(|| EngineError::Shape {
                            field: "mechanism",
                            expected: "lambda_q1, lambda_k1, lambda_q2, lambda_k2 and subln".into(),
                            found: "none (only a trained model or a spec brings them)".into(),
                        })?;
                params.lambda = learned.lambda.or(params.lambda);
                Mechanism::DiffTransformer(params)
            }
            MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 {
                lambda: learned.lambda,
            },
            MechanismKind::InputDiff => Mechanism::InputDiff,
            MechanismKind::Cosine => Mechanism::Cosine { tau: m.tau },
            MechanismKind::Local => Mechanism::Local { window: m.window },
            MechanismKind::Hierarchical => Mechanism::Hierarchical { segment: m.segment },
        })
    }

    /// These settings with everything an engine mechanism fixes taken from it: which mechanism,
    /// the heads, the mask, and its own parameters (shift stages, tau, window, segment, λ). The
    /// gate sliders show the mean of the mechanism's per-head gate scalars; V2's λ slider keeps
    /// its value unless the mechanism fixes λ (its learned λ, one per token, is read from the
    /// maps).
    pub fn with_mechanism(&self, mechanism: &Mechanism, heads: usize, causal: bool) -> Settings {
        let mut s = *self;
        s.maps.mechanism = mechanism.kind();
        s.maps.heads = heads;
        s.maps.causal = causal;
        match mechanism {
            Mechanism::ShiftDiff(p) => {
                s.shift.shift = p.shift;
                s.shift.difference = p.difference;
                s.shift.fill = p.fill;
                s.shift.renormalize = p.renormalize;
                let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
                s.shift.alpha = mean(&p.gate.alpha);
                s.shift.beta = mean(&p.gate.beta);
                s.shift.gamma = mean(&p.gate.gamma);
            }
            Mechanism::Cosine { tau } => s.maps.tau = *tau,
            Mechanism::Local { window } => s.maps.window = *window,
            Mechanism::Hierarchical { segment } => s.maps.segment = *segment,
            Mechanism::DiffTransformer(p) => s.shift.lambda = effective_lambda(p),
            Mechanism::DiffTransformerV2 { lambda } => {
                if let Some(l) = lambda {
                    s.shift.lambda = *l;
                }
            }
            Mechanism::Standard | Mechanism::InputDiff => {}
        }
        s
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
