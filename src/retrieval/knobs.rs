//! The parameters a person may move in the lesson (docs/LESSON.md, "The lesson on the page"):
//! the shift `k` of a shift-difference layer and the `λ` of a Differential Transformer layer.
//! Each knob knows its trained value and its range; [`Knobs::mechanisms`] gives every layer's
//! mechanism with the moved values, for [`super::ask::ask_with`]. The weights never change.
//!
//! The page draws one slider per knob from [`Knobs::list`], so it never asks which mechanism a
//! layer has.

use super::forward::RetrievalModel;
use crate::engine::diff_transformer::{lambda, DiffTransformerParams};
use crate::engine::Mechanism;

/// What a knob moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// The shift `k` of shift-difference attention (an integer).
    Shift,
    /// The Differential Transformer's `λ` in `A1 − λ·A2`.
    Lambda,
}

impl KnobKind {
    /// The knob's name on the page and in the address (`shift`, `lambda`).
    pub fn name(self) -> &'static str {
        match self {
            KnobKind::Shift => "shift",
            KnobKind::Lambda => "lambda",
        }
    }
}

/// One movable parameter of one layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knob {
    /// The layer, from 0.
    pub layer: usize,
    /// What it moves.
    pub kind: KnobKind,
    /// The trained value.
    pub trained: f64,
    /// The value now.
    pub value: f64,
    /// The slider's range and step.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// See `min`.
    pub step: f64,
}

/// `λ` is moved over this range (the trained ones lie in it; 0 is plain attention `A1`).
pub const LAMBDA_RANGE: (f64, f64) = (-1.0, 3.0);
/// The shift is moved over this range (`k = 0` turns the difference off: `D = 0`).
pub const SHIFT_RANGE: (f64, f64) = (-4.0, 4.0);

/// The knobs of one model with their current values.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    list: Vec<Knob>,
}

impl Knobs {
    /// Every knob of `model` at its trained value, first layer first.
    pub fn of(model: &RetrievalModel) -> Knobs {
        let mut list = Vec::new();
        for (layer, l) in model.layers.iter().enumerate() {
            match &l.mechanism {
                Mechanism::ShiftDiff(p) => list.push(Knob {
                    layer,
                    kind: KnobKind::Shift,
                    trained: p.shift as f64,
                    value: p.shift as f64,
                    min: SHIFT_RANGE.0,
                    max: SHIFT_RANGE.1,
                    step: 1.0,
                }),
                Mechanism::DiffTransformer(p) => {
                    let trained = f64::from(lambda(p));
                    list.push(Knob {
                        layer,
                        kind: KnobKind::Lambda,
                        trained,
                        value: trained,
                        min: LAMBDA_RANGE.0.min(trained),
                        max: LAMBDA_RANGE.1.max(trained),
                        step: 0.01,
                    });
                }
                _ => {}
            }
        }
        Knobs { list }
    }

    /// The knobs, first layer first.
    pub fn list(&self) -> &[Knob] {
        &self.list
    }

    /// Moves the knob `name` of `layer` to `value` (clamped to its range; a shift rounded).
    /// `false` when the model has no such knob.
    pub fn set(&mut self, layer: usize, name: &str, value: f64) -> bool {
        let Some(k) = self
            .list
            .iter_mut()
            .find(|k| k.layer == layer && k.kind.name() == name)
        else {
            return false;
        };
        if !value.is_finite() {
            return false;
        }
        let v = value.clamp(k.min, k.max);
        k.value = if k.kind == KnobKind::Shift {
            v.round()
        } else {
            v
        };
        true
    }

    /// Every knob back at its trained value.
    pub fn reset(&mut self) {
        for k in &mut self.list {
            k.value = k.trained;
        }
    }

    /// Whether any knob is away from its trained value.
    pub fn moved(&self) -> bool {
        self.list.iter().any(|k| k.value != k.trained)
    }

    /// Every layer's mechanism of `model` with the knobs' values.
    pub fn mechanisms(&self, model: &RetrievalModel) -> Vec<Mechanism> {
        model
            .layers
            .iter()
            .enumerate()
            .map(|(layer, l)| {
                let mut m = l.mechanism.clone();
                for k in self.list.iter().filter(|k| k.layer == layer) {
                    if k.value == k.trained {
                        continue;
                    }
                    match (&mut m, k.kind) {
                        (Mechanism::ShiftDiff(p), KnobKind::Shift) => p.shift = k.value as i64,
                        (Mechanism::DiffTransformer(p), KnobKind::Lambda) => {
                            with_lambda(p, k.value as f32)
                        }
                        _ => {}
                    }
                }
                m
            })
            .collect()
    }
}

/// Re-parameterises `params` so that [`lambda`] gives `target`, keeping `lambda_init` (and so
/// the norm's scale `1 − λ_init`): one of the two exponentials is made `exp(0) = 1` and the
/// other `exp(c)` with the `c` that makes `e1 − e2 + λ_init = target`.
pub fn with_lambda(params: &mut DiffTransformerParams, target: f32) {
    let init = params.lambda_init();
    let d_h = params.lambda_q1.len();
    let unit = |c: f32| {
        let mut q = vec![0.0f32; d_h];
        let mut k = vec![0.0f32; d_h];
        if d_h > 0 {
            q[0] = c;
            k[0] = 1.0;
        }
        (q, k)
    };
    // e1 − e2 = target − init.
    let want = target - init;
    let ((q1, k1), (q2, k2)) = if want > -1.0 + 1e-6 {
        // e2 = 1, e1 = want + 1 > 0.
        (unit((want + 1.0).ln()), unit(0.0))
    } else {
        // e1 = 1, e2 = 1 − want > 1.
        (unit(0.0), unit((1.0 - want).ln()))
    };
    params.lambda_q1 = q1;
    params.lambda_k1 = k1;
    params.lambda_q2 = q2;
    params.lambda_k2 = k2;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DiffTransformerParams {
        DiffTransformerParams {
            depth: 1,
            lambda_q1: vec![0.3, -0.2, 0.1, 0.5],
            lambda_k1: vec![0.1, 0.4, -0.3, 0.2],
            lambda_q2: vec![-0.1, 0.2, 0.2, 0.0],
            lambda_k2: vec![0.3, 0.1, 0.0, 0.7],
            subln: vec![1.0; 8],
            subln_eps: 1e-5,
            ..Default::default()
        }
    }

    #[test]
    fn with_lambda_hits_the_target_over_the_whole_range_and_keeps_lambda_init() {
        for target in [-1.0f32, -0.7, -0.2, 0.0, 0.356, 1.0, 2.064, 3.0] {
            let mut p = params();
            let init = p.lambda_init();
            with_lambda(&mut p, target);
            assert!(
                (lambda(&p) - target).abs() < 1e-5,
                "{target}: {}",
                lambda(&p)
            );
            assert_eq!(p.lambda_init(), init);
            assert_eq!(p.lambda_q1.len(), 4);
        }
    }
}
