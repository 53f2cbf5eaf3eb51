//! The page's controls as one value, split by the cache layer each field invalidates: the map
//! settings (a change recomputes the maps) and the shift settings (a change recomputes only the
//! shift stages). The defaults are defined here once; the page reads them through the wasm
//! boundary.

use crate::engine::diff_transformer::DiffTransformerParams;
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
}

/// What the shift stages depend on (shift-difference attention only).
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
    /// being flat, and a radius of 2 shows a visible band.
    fn default() -> MapSettings {
        MapSettings {
            mechanism: MechanismKind::ShiftDiff,
            heads: 4,
            causal: false,
            tau: 10.0,
            window: 2,
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
        }
    }
}

impl ShiftSettings {
    /// Checks that the gate's scalars are finite, naming the one that is not.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("gate.alpha", self.alpha)?;
        finite("gate.beta", self.beta)?;
        finite("gate.gamma", self.gamma)?;
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
    /// Checks that `tau` is finite.
    pub fn check(&self) -> Result<(), EngineError> {
        finite("tau", self.tau)?;
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
}

impl SettingsPatch {
    /// `maps` with this patch's map settings applied.
    pub fn apply_maps(&self, maps: &mut MapSettings) {
        set(&mut maps.mechanism, self.mechanism);
        set(&mut maps.heads, self.heads);
        set(&mut maps.causal, self.causal);
        set(&mut maps.tau, self.tau);
        set(&mut maps.window, self.window);
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
                Mechanism::DiffTransformer(learned.diff_transformer.clone().ok_or_else(|| {
                    EngineError::Shape {
                        field: "mechanism",
                        expected: "lambda_q1, lambda_k1, lambda_q2, lambda_k2 and subln".into(),
                        found: "none (only a trained model or a spec brings them)".into(),
                    }
                })?)
            }
            MechanismKind::InputDiff => Mechanism::InputDiff,
            MechanismKind::Cosine => Mechanism::Cosine { tau: m.tau },
            MechanismKind::Local => Mechanism::Local { window: m.window },
            MechanismKind::DiffTransformerV2 | MechanismKind::Hierarchical => {
                return Err(EngineError::Shape {
                    field: "mechanism",
                    expected: "a mechanism the page draws".into(),
                    found: format!("{} (the CLI's diffattn stages runs it)", m.mechanism.key()),
                })
            }
        })
    }

    /// These settings with everything an engine mechanism fixes taken from it: which mechanism,
    /// the heads, the mask, and its own parameters (shift stages, tau, window). The gate
    /// sliders show the mean of the mechanism's per-head gate scalars.
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
            Mechanism::Standard
            | Mechanism::DiffTransformer(_)
            | Mechanism::InputDiff
            | Mechanism::DiffTransformerV2
            | Mechanism::Hierarchical { .. } => {}
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
