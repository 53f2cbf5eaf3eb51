//! λ of both Differential Transformers, chosen or learned: the setting `lambda` is unset until
//! a person chooses one (`ShiftSettings::lambda`), and then the mechanism's own is used: the
//! Differential Transformer's from its λ vectors, a loaded spec's fixed λ, V2's `σ(x·W_λ)` per
//! token and head. What the λ slider and the readout show is one number either way
//! ([`lambda_shown`](Explorer::lambda_shown)), and whether it is the learned one is whether the
//! setting is unset. Nothing here is written into the settings: the learned λ is found when
//! asked for, from the parameters (or V2's λ table), never from the maps drawn.

use super::work::Need;
use super::{Explorer, Source};
use crate::engine::diff_transformer::effective_lambda;
use crate::engine::{EngineError, Mechanism, MechanismKind};

impl Explorer {
    /// The λ the maps use, as one number: the chosen one, or the learned one
    /// ([`learned_lambda_now`](Self::learned_lambda_now)); `None` when neither is known (a
    /// mechanism without λ, V2 before its λ table, the Differential Transformer without its
    /// parameters).
    pub fn lambda_shown(&self) -> Option<f32> {
        self.settings
            .shift
            .lambda
            .or_else(|| self.learned_lambda_now())
    }

    /// The mechanism's own λ as one number, whatever a person chose: the Differential
    /// Transformer's (`exp(λq1·λk1) − exp(λq2·λk2) + λ_init`, or the spec's fixed λ), a spec's
    /// fixed V2 λ, or V2's mean over tokens and heads once its λ table is in
    /// ([`prepare_lambda`](Self::prepare_lambda)).
    pub fn learned_lambda_now(&self) -> Option<f32> {
        let fixed = match &self.source {
            Source::Spec(spec) => spec.lambda,
            Source::Sentence | Source::Pretrained(_) => None,
        };
        match self.kind() {
            MechanismKind::DiffTransformer => {
                let mut params = self.learned().diff_transformer?;
                params.lambda = fixed.or(params.lambda);
                Some(effective_lambda(&params))
            }
            MechanismKind::DiffTransformerV2 if self.lambda_is_learned() => {
                fixed.or_else(|| self.lambda_table.as_ref()?.mean())
            }
            _ => None,
        }
    }

    /// The trained model's λ (the Differential Transformer's, from its λ vectors), for what the
    /// page says the model was trained with; `None` for other models.
    pub fn trained_lambda(&self) -> Option<f32> {
        match &self.model.trained_parts()?.mechanism {
            Mechanism::DiffTransformer(params) => Some(effective_lambda(params)),
            _ => None,
        }
    }

    /// Computes V2's λ table (and the projection it comes from) when the learned λ is shown and
    /// the table is not in, so that [`lambda_shown`](Self::lambda_shown) knows V2's mean before
    /// any map is computed: the work's pieces up to the table (the projection's, then the
    /// table's). Nothing for other mechanisms, a chosen λ or an empty sentence; the projection
    /// is kept for the maps.
    pub fn prepare_lambda(&mut self) -> Result<(), EngineError> {
        let kind = self.kind();
        if kind != MechanismKind::DiffTransformerV2
            || !self.lambda_is_learned()
            || self.lambda_table.is_some()
            || self.is_empty()
        {
            return Ok(());
        }
        // The work's first pieces are the projection's, then the λ table (`work.rs`).
        while self.lambda_table.is_none() && self.work(Need::Shown)? {}
        Ok(())
    }
}
