//! The controls changed: one patch for any of them (`update`), the map settings
//! (`update_maps`), the shift settings (`update_shift`) and the head shown (`set_head`), each
//! clearing only the caches that depend on it; the choices they offer (mechanisms, head
//! counts), and what the mechanism learned that the sliders may replace (`learned`).

use super::{Explorer, Learned, MapSettings, Settings, SettingsPatch, ShiftSettings, Source};
use crate::engine::shift_diff::Gate;
use crate::engine::{EngineError, HeadShape, Mechanism, MechanismKind};
use crate::names::name_of;
use crate::schema::{self, Layer};

impl Explorer {
    /// Head counts `kind` allows over what is drawn: divisors of `d` (of `d / 2` for the
    /// Differential Transformer), or a loaded spec's own count (a captured layer's heads are
    /// fixed by its weights).
    pub fn head_choices_for(&self, kind: MechanismKind) -> Vec<usize> {
        if let Source::Spec(spec) = &self.source {
            return vec![spec.heads];
        }
        if let Some(choices) = self.pretrained_head_choices(kind) {
            return choices;
        }
        let width = kind.plain_split_width(self.d_model());
        (1..=width).filter(|h| width % h == 0).collect()
    }

    /// The mechanisms that can draw what is shown: every one for the sentence; for a loaded
    /// spec those its weights fit (a captured layer's head layout fixes the shapes) and whose
    /// own parameters it brings (the Differential Transformer's λ vectors, V2's `W_λ`).
    pub fn mechanism_choices(&self) -> Vec<MechanismKind> {
        MechanismKind::ALL
            .into_iter()
            .filter(|&k| self.check_source_runs(k).is_ok())
            .collect()
    }

    /// Head counts the current mechanism allows.
    pub fn head_choices(&self) -> Vec<usize> {
        self.head_choices_for(self.kind())
    }

    /// The width of one head's queries and keys at the current head count (`d_h`): the
    /// layout's, as the engine resolves it.
    pub fn head_width(&self) -> usize {
        let m = &self.settings.maps;
        HeadShape::resolve(m.mechanism, self.weights(), m.heads)
            .map(|s| s.head_dim)
            .unwrap_or_else(|_| m.mechanism.plain_split_width(self.d_model()) / m.heads.max(1))
    }

    /// The shape of the layer as the engine runs it now (heads, key/value heads, head width).
    pub fn head_shape(&self) -> Option<HeadShape> {
        let m = &self.settings.maps;
        HeadShape::resolve(m.mechanism, self.weights(), m.heads).ok()
    }

    pub(super) fn nearest_heads(&self, kind: MechanismKind, wanted: usize) -> usize {
        self.head_choices_for(kind)
            .into_iter()
            .min_by_key(|&h| (h.abs_diff(wanted), h))
            .unwrap_or(1)
    }

    /// Changes the map settings (mechanism, heads, mask, tau, window); clears the maps only if
    /// something they depend on changed. A new mechanism snaps the heads to the nearest count
    /// it allows; an explicitly requested count it does not allow is an error, as is a
    /// mechanism a loaded spec cannot run. On error nothing changes.
    pub fn update_maps(
        &mut self,
        change: impl FnOnce(&mut MapSettings),
    ) -> Result<(), EngineError> {
        let before = self.settings.maps;
        let mut next = before;
        change(&mut next);
        next.check()?;
        self.check_layer(next.layer, next.partner)?;
        if next.causal && self.is_cross() {
            return Err(EngineError::Shape {
                field: "causal",
                expected: "no causal mask (a cross-attention layer's keys are another \
                           sequence's, none of them after a query)"
                    .to_string(),
                found: "a causal mask".to_string(),
            });
        }
        if next.mechanism != before.mechanism {
            self.check_source_runs(next.mechanism)?;
        }
        // A pretrained layer's heads follow the mechanism (the model's heads, or their pairs)
        // unless the change names a count itself.
        if next.mechanism != before.mechanism && next.heads == before.heads {
            if let Some(heads) = self.pretrained_heads(next.mechanism) {
                next.heads = heads;
            }
        }
        let choices = self.head_choices_for(next.mechanism);
        if !choices.contains(&next.heads) {
            if next.heads != before.heads {
                if let Source::Spec(spec) = &self.source {
                    return Err(EngineError::Shape {
                        field: "heads",
                        expected: format!("{} (the loaded layer's weights fix it)", spec.heads),
                        found: next.heads.to_string(),
                    });
                }
                let width = next.mechanism.plain_split_width(self.d_model());
                return Err(match next.heads {
                    0 => EngineError::ZeroHeads,
                    heads => EngineError::HeadsDoNotDivide {
                        width,
                        heads,
                        what: "the model width",
                    },
                });
            }
            next.heads = self.nearest_heads(next.mechanism, next.heads);
        }
        // The maps change when a map setting the mechanism uses changed (the schema says
        // which settings are map settings and which mechanisms take them).
        let kind = next.mechanism;
        let (was, now) = (
            Settings {
                maps: before,
                ..self.settings
            },
            Settings {
                maps: next,
                ..self.settings
            },
        );
        let maps_change = kind != before.mechanism
            || schema::engine_keys()
                .filter(|k| k.layer == Layer::Maps && k.applies_to(kind))
                .any(|k| was.value(k, 0) != now.value(k, 0));
        self.settings.maps = next;
        self.head = self.head.min(next.heads - 1);
        if maps_change {
            self.invalidate_base();
        }
        self.refresh_layer_weights();
        self.refresh_pretrained_input();
        Ok(())
    }

    /// Errors when a loaded spec cannot run `kind`: its weights do not fit the mechanism's
    /// head layout, or it lacks the mechanism's own parameters.
    fn check_source_runs(&self, kind: MechanismKind) -> Result<(), EngineError> {
        if self.is_pretrained() && kind == MechanismKind::DiffTransformerV2 {
            return Err(EngineError::Shape {
                field: "mechanism",
                expected: "a layer with W_λ and a query projection of two heads per head"
                    .to_string(),
                found: "a pretrained standard layer".to_string(),
            });
        }
        if self.is_pretrained() && kind == MechanismKind::GatedAttention {
            return Err(EngineError::Shape {
                field: "mechanism",
                expected: "a layer with an output gate W_og (gated attention)".to_string(),
                found: "a pretrained standard layer".to_string(),
            });
        }
        let Source::Spec(spec) = &self.source else {
            return Ok(());
        };
        let lacks = |what: &str| EngineError::Shape {
            field: "mechanism",
            expected: format!("a spec with {what}"),
            found: "a spec without them".to_string(),
        };
        if spec.weights.layout.x_kv.is_some() && kind != MechanismKind::Standard {
            // Cross-attention (DESIGN.md §7.10): keys from a second sequence, standard only.
            return Err(EngineError::Shape {
                field: "mechanism",
                expected:
                    "standard attention (a cross-attention layer's keys are another sequence's)"
                        .to_string(),
                found: name_of(kind).to_string(),
            });
        }
        if kind == MechanismKind::DiffTransformer && spec.diff_transformer.is_none() {
            return Err(lacks(
                "lambda_q1, lambda_k1, lambda_q2, lambda_k2 and subln",
            ));
        }
        let w_lambda_rows = spec.weights.w_lambda.as_ref().map(|w| w.nrows());
        if kind == MechanismKind::DiffTransformerV2 && w_lambda_rows != Some(spec.heads) {
            return Err(lacks("w_lambda (one row per head)"));
        }
        if kind == MechanismKind::GatedAttention && spec.weights.output_gate.is_none() {
            return Err(lacks(
                "w_output_gate (the output gate, one row per query channel)",
            ));
        }
        if kind.projects_steps() && spec.weights.layout.rope.is_some() {
            return Err(lacks(
                "no rope (input_diff's keys are steps between tokens)",
            ));
        }
        HeadShape::resolve(kind, &spec.weights, spec.heads).map(|_| ())
    }

    /// Changes the shift stages' settings; clears only the shift stages, never `A`. Moving a
    /// gate scalar replaces a learned per-head gate with the sliders' gate. On error nothing
    /// changes.
    pub fn update_shift(
        &mut self,
        change: impl FnOnce(&mut ShiftSettings),
    ) -> Result<(), EngineError> {
        let before = self.settings.shift;
        let mut next = before;
        change(&mut next);
        next.check()?;
        if (before.alpha, before.beta, before.gamma) != (next.alpha, next.beta, next.gamma) {
            self.gate_override = true;
        }
        if next != before {
            self.settings.shift = next;
            self.clear_shift();
        }
        Ok(())
    }

    /// Applies a change to any of the controls: the map settings, then the shift settings,
    /// then the head shown, each clearing only what depends on it. Every value is checked
    /// before anything changes, so an error (naming the control) leaves every setting as it
    /// was; the head is checked against the head count the change leaves.
    pub fn update(&mut self, patch: &SettingsPatch) -> Result<(), EngineError> {
        let mut next = self.settings;
        patch.apply(&mut next);
        next.shift.check()?;
        let before = (self.settings, self.head, self.gate_override);
        self.update_maps(|m| *m = next.maps)?;
        self.update_shift(|s| *s = next.shift)?;
        if let Some(head) = patch.head {
            if let Err(e) = self.set_head(head) {
                let (settings, head, gate_override) = before;
                // Put the maps' settings back; the caches they cleared are recomputed.
                self.update_maps(|m| *m = settings.maps)?;
                self.settings.shift = settings.shift;
                self.head = head;
                self.gate_override = gate_override;
                self.clear_shift();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Picks the head shown; recomputes nothing.
    pub fn set_head(&mut self, head: usize) -> Result<(), EngineError> {
        if head >= self.settings.maps.heads {
            return Err(EngineError::Shape {
                field: "head",
                expected: format!("a head index below {}", self.settings.maps.heads),
                found: head.to_string(),
            });
        }
        self.head = head;
        Ok(())
    }

    /// What the mechanism learned (the spec's or the trained model's gate until a gate slider
    /// moves; the Differential Transformer's parameters; λ, until the λ slider moves),
    /// adapted to the heads shown.
    pub fn learned(&self) -> Learned {
        let heads = self.settings.maps.heads;
        let slider = self.settings.shift.lambda;
        match &self.source {
            Source::Spec(spec) => Learned {
                gate: spec.gate.clone().filter(|_| !self.gate_override),
                diff_transformer: spec.diff_transformer.clone(),
                lambda: slider.or(spec.lambda),
            },
            Source::Sentence => Learned {
                gate: self.model.gate(heads).filter(|_| !self.gate_override),
                diff_transformer: self.model.diff_transformer_params(heads).ok(),
                lambda: slider,
            },
            Source::Pretrained(_) => Learned {
                gate: None,
                diff_transformer: self.pretrained_diff_transformer(),
                lambda: slider,
            },
        }
    }

    /// Whether λ is the learned one (or the spec's), not one a person chose: the setting is
    /// unset.
    pub fn lambda_is_learned(&self) -> bool {
        self.settings.shift.lambda.is_none()
    }

    /// Back to the learned λ (the trained model's, the captured layer's, V2's λ per token):
    /// the slider no longer decides (the same as the patch `lambda: None`). Like a slider
    /// move, only `A1 − λ·A2` and what follows it are recomputed at the next
    /// [`compute`](Self::compute), never `A1` and `A2`.
    pub fn reset_lambda(&mut self) {
        if self.settings.shift.lambda.take().is_some() {
            self.clear_shift();
        }
    }

    /// Whether the gate comes from the loaded spec or the trained model rather than the
    /// sliders (until a slider moves).
    pub fn gate_is_learned(&self) -> bool {
        self.learned().gate.is_some()
    }

    /// The gate the shift stages use now.
    pub fn gate(&self) -> Gate {
        self.learned()
            .gate
            .unwrap_or_else(|| self.settings.shift.uniform_gate(self.settings.maps.heads))
    }

    /// The mechanism with every parameter, as the engine takes it.
    pub fn mechanism(&self) -> Result<Mechanism, EngineError> {
        self.settings.mechanism(&self.learned())
    }
}
