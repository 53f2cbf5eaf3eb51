//! What the engine makes of the settings: their checks, the mechanism with every parameter
//! (`Settings::mechanism`) and the settings a mechanism fixes (`Settings::with_mechanism`). The
//! settings themselves, split by the cache layer each field invalidates (the map settings: a
//! change recomputes the maps; the shift settings: a change recomputes only the stages after
//! the maps, the shift stages or `A1 − λ·A2`), their defaults and their patch are declared once
//! in the schema (`crate::schema`).

use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::{Gate, ShiftDiffParams};
use crate::engine::{EngineError, Mechanism, MechanismKind};
pub use crate::schema::{MapSettings, Settings, SettingsPatch, ShiftSettings};

impl ShiftSettings {
    /// Checks that the gate's scalars are finite, naming the one that is not.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("gate.alpha", self.alpha)?;
        finite("gate.beta", self.beta)?;
        finite("gate.gamma", self.gamma)?;
        if let Some(lambda) = self.lambda {
            finite("lambda", lambda)?;
        }
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
    /// Checks that `tau` is finite, the temperature positive and the segment at least one token.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("tau", self.tau)?;
        if finite("temperature", self.temperature)? <= 0.0 {
            return Err(EngineError::Shape {
                field: "temperature",
                expected: "a positive number".to_string(),
                found: self.temperature.to_string(),
            });
        }
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
                params.temperature = m.temperature;
                Mechanism::DiffTransformer(params)
            }
            MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 {
                lambda: learned.lambda,
            },
            MechanismKind::InputDiff => Mechanism::InputDiff,
            MechanismKind::Cosine => Mechanism::Cosine { tau: m.tau },
            MechanismKind::Local => Mechanism::Local { window: m.window },
            MechanismKind::Hierarchical => Mechanism::Hierarchical { segment: m.segment },
            MechanismKind::GatedAttention => Mechanism::GatedAttention,
        })
    }

    /// These settings with everything an engine mechanism fixes taken from it: which mechanism,
    /// the heads, the mask, and its own parameters (shift stages, tau, window, segment). The
    /// gate sliders show the mean of the mechanism's per-head gate scalars. λ is unset: the
    /// mechanism's own (learned, or fixed by a spec) is the one used until a person chooses one
    /// (`Explorer::lambda_shown` says which it is).
    pub fn with_mechanism(&self, mechanism: &Mechanism, heads: usize, causal: bool) -> Settings {
        let mut s = *self;
        s.shift.lambda = None;
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
            Mechanism::DiffTransformer(p) => s.maps.temperature = p.temperature,
            Mechanism::Standard
            | Mechanism::InputDiff
            | Mechanism::DiffTransformerV2 { .. }
            | Mechanism::GatedAttention => {}
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
