//! What is drawn, beyond the typed sentence: another model (`set_model`, with the settings it
//! was trained with), a user's spec (`load_spec`, `load`, its metadata), and what is drawn
//! exported as a spec (`export_spec`) or as stages (`stages_json`).

use super::{Explorer, Settings, Source, SpecSource};
use crate::engine::{base_maps_into, BaseMaps, Block, EngineError, Mechanism, Projection};
use crate::model::Model;
use crate::spec::{
    parse_page_spec, parse_page_spec_bytes, spec_json, stages_json, Meta, Spec, SpecError,
    SpecJson, StagesJson,
};

impl Explorer {
    /// Draws the sentence with another model. A trained model brings the settings it was
    /// trained with (mechanism, heads, shift, gate, tau, window; no causal mask); the untrained
    /// one keeps the current settings. A loaded spec is left for the sentence.
    pub fn set_model(&mut self, model: Model) {
        self.model = model;
        self.source = Source::Sentence;
        if let Some(trained) = self.trained_settings() {
            self.settings = trained;
        }
        self.settings.maps.heads = self.nearest_heads(self.kind(), self.settings.maps.heads);
        self.head = self.head.min(self.settings.maps.heads - 1);
        self.gate_override = false;
        self.settings.shift.lambda = None;
        self.x = self.model.embed(&self.tokens);
        self.labels = self.tokens.iter().map(|t| t.text.clone()).collect();
        self.layer_weights = None;
        self.invalidate_sentence();
        self.refresh_layer_weights();
    }

    /// The settings the trained model was trained with (no causal mask), taking what training
    /// does not fix from the current settings; `None` for the untrained model.
    pub fn trained_settings(&self) -> Option<Settings> {
        let trained = self.model.trained_parts()?;
        Some(
            self.settings
                .with_mechanism(&trained.mechanism, trained.heads, false),
        )
    }

    /// The positions of the sentence's tokens the trained model's vocabulary does not know
    /// (they read as `<unk>`), in order; `None` for the untrained model or a loaded spec.
    pub fn unknown_tokens(&self) -> Option<Vec<usize>> {
        if !matches!(self.source, Source::Sentence) {
            return None;
        }
        let ids = self.model.token_ids(&self.tokens)?;
        Some(
            ids.iter()
                .enumerate()
                .filter(|&(_, &id)| id == 0)
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// What is drawn as a spec (the vectors, the weights, every setting and learned
    /// parameter, the token labels) with the stages computed from it: the page's "export
    /// JSON", a file that opens again as a spec and draws the same maps.
    pub fn export_spec(&self) -> Result<SpecJson, EngineError> {
        if self.is_empty() {
            return Err(EngineError::EmptySequence);
        }
        let spec = Spec {
            mechanism: self.mechanism()?,
            heads: self.settings.maps.heads,
            causal: self.settings.maps.causal,
            x: self.x.clone(),
            weights: self.weights().clone(),
            meta: Meta {
                tokens: Some(self.labels.clone()),
                ..self.meta().cloned().unwrap_or_default()
            },
        };
        let stages = crate::engine::run(
            spec.x.view(),
            &spec.weights,
            spec.heads,
            spec.causal,
            &spec.mechanism,
        )?;
        Ok(spec_json(&spec, Some(&stages)))
    }

    /// Every stage and the layer output, in the CLI's JSON format.
    pub fn stages_json(&self) -> Result<StagesJson, EngineError> {
        if self.is_empty() {
            return Err(EngineError::EmptySequence);
        }
        let stages = crate::engine::run(
            self.x.view(),
            self.weights(),
            self.settings.maps.heads,
            self.settings.maps.causal,
            &self.mechanism()?,
        )?;
        Ok(stages_json(&stages))
    }

    /// Draws a user's spec (the CLI's JSON): its vectors, weights and settings. At most
    /// [`PAGE_MAX_TOKENS`](crate::text::PAGE_MAX_TOKENS) tokens, refused while `x` is read ([`parse_page_spec`]).
    pub fn load_spec(&mut self, text: &str) -> Result<(), SpecError> {
        self.load(parse_page_spec(text)?)
    }

    /// Draws a spec file's bytes: JSON, or the binary form (safetensors, DESIGN.md §7.8).
    pub fn load_spec_bytes(&mut self, bytes: &[u8]) -> Result<(), SpecError> {
        self.load(parse_page_spec_bytes(bytes)?)
    }

    /// Draws a parsed spec. Every step runs first on its first token and first head, so that
    /// every problem a spec can have (its layout, its parameters) shows before anything
    /// changes (a refused spec leaves the page as it was); the projections and maps are then
    /// computed in pieces like the sentence's (`work.rs`), a large layer's over many tasks.
    pub fn load(&mut self, spec: Spec) -> Result<(), SpecError> {
        spec.check_limits()?;
        spec.page_support()?;
        let kind = spec.mechanism.kind();
        let first = 0..spec.x.nrows().min(1);
        let mut projection = Projection::empty();
        let (x, weights) = (spec.x.view(), &spec.weights);
        Projection::project_into(kind, x, weights, spec.heads, first.clone(), &mut projection)?;
        let block = Block {
            heads: 0..spec.heads.min(1),
            queries: first,
        };
        let mut maps = BaseMaps::default();
        let (mechanism, heads, causal) = (&spec.mechanism, spec.heads, spec.causal);
        base_maps_into(
            mechanism,
            &projection,
            weights,
            heads,
            causal,
            &block,
            &mut maps,
        )?;
        let settings = self
            .settings
            .with_mechanism(&spec.mechanism, spec.heads, spec.causal);
        let (gate, diff_transformer, lambda) = match &spec.mechanism {
            Mechanism::ShiftDiff(p) => (Some(p.gate.clone()), None, None),
            Mechanism::DiffTransformer(p) => (None, Some(p.clone()), None),
            Mechanism::DiffTransformerV2 { lambda } => (None, None, *lambda),
            _ => (None, None, None),
        };
        self.labels = match &spec.meta.tokens {
            Some(tokens) => tokens.clone(),
            None => (0..spec.x.nrows()).map(|i| format!("t{i}")).collect(),
        };
        self.x = spec.x;
        self.source = Source::Spec(Box::new(SpecSource {
            weights: spec.weights,
            heads: spec.heads,
            settings,
            gate,
            diff_transformer,
            lambda,
            meta: spec.meta,
        }));
        self.settings = settings;
        self.gate_override = false;
        self.layer_weights = None;
        self.head = 0;
        self.invalidate_sentence();
        self.heads.clear();
        Ok(())
    }

    /// The loaded spec's metadata (model name, layer, token labels), if a spec is drawn.
    pub fn meta(&self) -> Option<&Meta> {
        match &self.source {
            Source::Spec(spec) => Some(&spec.meta),
            Source::Sentence | Source::Pretrained(_) => None,
        }
    }

    /// The settings the loaded spec or the trained model brought, which the page compares the
    /// current settings against; `None` for the untrained model.
    pub fn reference_settings(&self) -> Option<Settings> {
        match &self.source {
            Source::Spec(spec) => Some(spec.settings),
            Source::Sentence => self.trained_settings(),
            Source::Pretrained(_) => None,
        }
    }
}
