//! The page's state without the browser: a sentence (or a loaded spec), the controls, and the
//! cached stages, recomputed only from the first stage a change touches.
//!
//! The caches hold what the engine's staged functions return ([`Projection`], [`BaseMaps`],
//! [`ShiftDiffMaps`]), layered like the settings: the projections depend on the sentence; the
//! maps on the [`MapSettings`]; the shift stages on the [`ShiftSettings`]. A setter clears only
//! the layers after the one it changes, and only if its value really changed, so dragging the
//! shift slider never recomputes `A`, and picking another head recomputes nothing. Nothing here
//! branches on which mechanism is shown: the engine's registry ([`MechanismKind`]) says what a
//! mechanism has.
//!
//! [`BaseMaps`]: crate::engine::BaseMaps
//! [`ShiftDiffMaps`]: crate::engine::shift_diff::ShiftDiffMaps

mod describe;
mod heads;
mod settings;
mod transfer;

use ndarray::{Array2, Array3};

pub use describe::{CellInfo, Extremes, LayerInfo, RowLine, TokensInfo};
pub use settings::{Learned, MapSettings, Settings, SettingsPatch, ShiftSettings};
pub use transfer::{BaseKind, HeadKey, HeadParts, ShiftKind};

use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::Gate;
use crate::engine::{
    base_maps_of, Columns, EngineError, HeadShape, Mask, Mechanism, MechanismKind, Parameter,
    Projection, StageId, Weights,
};
use crate::model::{Model, Prediction};
use crate::spec::{
    parse_page_spec, parse_page_spec_bytes, spec_json, stages_json, Meta, Spec, SpecError,
    SpecJson, StagesJson,
};
use crate::text::{tokenize_up_to, Token, PAGE_MAX_TOKENS};

/// How often each cache layer was recomputed: the page's benchmark and the tests read these to
/// show that work is not repeated when nothing it depends on changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recomputations {
    /// Projections of the sentence (`Q`, `K`, `V`).
    pub projections: u64,
    /// Maps before any shift (`A`, or `A1` and `A2`).
    pub maps: u64,
    /// Shift stages (`shift(A)`, `D`, `G`, `A'`).
    pub shift_stages: u64,
    /// `A1 − λ·A2` again from the kept `A1` and `A2` (a λ slider moved).
    pub lambda: u64,
    /// Heads computed elsewhere (the page's Web Worker) and adopted (`adopt_head`): counted
    /// here, not as maps or shift stages, since nothing was computed.
    pub adopted: u64,
}

/// Where the vectors and weights come from.
#[derive(Debug, Clone)]
enum Source {
    /// The typed sentence, embedded by the model.
    Sentence,
    /// A user's spec: its own vectors and weights, and the per-head parameters it brought.
    Spec(Box<SpecSource>),
}

/// What a loaded spec brings beyond its vectors.
#[derive(Debug, Clone)]
struct SpecSource {
    weights: Weights,
    heads: usize,
    /// The settings the spec was loaded with, so the page can say what moved.
    settings: Settings,
    gate: Option<Gate>,
    diff_transformer: Option<DiffTransformerParams>,
    /// V2's fixed λ, when the spec has one.
    lambda: Option<f32>,
    /// The model's name and the layer's index.
    meta: Meta,
}

/// The page's state and its caches.
#[derive(Debug, Clone)]
pub struct Explorer {
    model: Model,
    source: Source,
    labels: Vec<String>,
    /// The sentence's tokens, kept so another model can embed them again.
    tokens: Vec<Token>,
    x: Array2<f32>,
    settings: Settings,
    head: usize,
    /// A uniform gate from the sliders replaces a learned per-head gate once moved.
    gate_override: bool,
    /// The λ slider replaces the learned λ once moved.
    lambda_override: bool,
    /// The model's weights as the shown mechanism and head count run them, when they differ
    /// from `model.weights` (V2 on the sentence: `Model::layer_weights`).
    layer_weights: Option<Weights>,
    projection: Option<Projection>,
    /// Each head's maps and shift stages, computed when asked for (`heads.rs`).
    heads: Vec<heads::HeadCache>,
    /// V2's λ table, `(1, tokens, heads)`: one map for every head, computed whole.
    lambda_table: Option<Array3<f32>>,
    /// The prediction for the current maps, cleared with the shift stages (every change that
    /// can move it clears them), so a render that changed nothing does not classify again.
    prediction: Option<Option<Prediction>>,
    recomputations: Recomputations,
    /// The hash of `x` and the weights for [`HeadKey`], found when first asked for and
    /// cleared with the projections (`transfer.rs`).
    input_key: transfer::InputKey,
}

impl Explorer {
    /// An explorer over `model` with an empty sentence and default settings.
    pub fn new(model: Model) -> Explorer {
        let d = model.d_model();
        Explorer {
            x: Array2::zeros((0, d)),
            model,
            source: Source::Sentence,
            labels: Vec::new(),
            tokens: Vec::new(),
            settings: Settings::default(),
            head: 0,
            gate_override: false,
            lambda_override: false,
            layer_weights: None,
            projection: None,
            heads: Vec::new(),
            lambda_table: None,
            prediction: None,
            recomputations: Recomputations::default(),
            input_key: Default::default(),
        }
    }

    /// How often each cache layer was recomputed so far.
    pub fn recomputations(&self) -> Recomputations {
        self.recomputations
    }

    /// The model in use.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The current settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The mechanism shown.
    pub fn kind(&self) -> MechanismKind {
        self.settings.maps.mechanism
    }

    /// The token labels of the rows (and, but for input difference, the columns).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The key labels: the tokens, or for input difference the steps `a→b` between tokens.
    pub fn key_labels(&self) -> Vec<String> {
        if self.kind().projects_steps() {
            self.labels
                .windows(2)
                .map(|w| format!("{}→{}", w[0], w[1]))
                .collect()
        } else {
            self.labels.clone()
        }
    }

    /// The number of keys of every map: the tokens, or the steps between them.
    pub fn key_count(&self) -> usize {
        self.labels.len().saturating_sub(self.kind().key_offset())
    }

    /// The number of tokens drawn.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there is nothing to draw (an empty or whitespace-only sentence).
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The head shown.
    pub fn head(&self) -> usize {
        self.head
    }

    /// Whether a user's spec, not the typed sentence, is drawn.
    pub fn is_spec(&self) -> bool {
        matches!(self.source, Source::Spec(_))
    }

    /// The mask of the maps shown: which cells are forbidden, and where keys sit for it.
    pub fn mask(&self) -> (Mask, usize) {
        let m = &self.settings.maps;
        (
            m.mechanism.mask(m.causal, m.window),
            m.mechanism.key_offset(),
        )
    }

    fn invalidate_sentence(&mut self) {
        self.projection = None;
        self.input_key.set(None);
        self.invalidate_base();
    }

    fn invalidate_base(&mut self) {
        for cache in &mut self.heads {
            cache.clear_maps();
        }
        self.clear_shift();
    }

    fn clear_shift(&mut self) {
        self.prediction = None;
        self.lambda_table = None;
        for cache in &mut self.heads {
            cache.clear_shift();
        }
    }

    fn weights(&self) -> &Weights {
        match &self.source {
            Source::Sentence => self.layer_weights.as_ref().unwrap_or(&self.model.weights),
            Source::Spec(spec) => &spec.weights,
        }
    }

    /// Brings the sentence's layer weights in line with the mechanism and head count shown;
    /// when they change, the projections (which V2's `W_λ` is part of) are recomputed.
    fn refresh_layer_weights(&mut self) {
        if self.is_spec() {
            return;
        }
        let m = &self.settings.maps;
        let next = match self.model.layer_weights(m.mechanism, m.heads) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(w) => Some(w),
        };
        if next != self.layer_weights {
            self.layer_weights = next;
            self.invalidate_sentence();
        }
    }

    /// The model width `d` of what is drawn.
    pub fn d_model(&self) -> usize {
        self.weights().d_model()
    }

    /// Tokenises and embeds a sentence and draws it (leaving any loaded spec).
    ///
    /// The vectors depend only on the tokens, so a change that leaves them as they were (a
    /// space typed after a word, a letter's case changed) keeps every cache.
    pub fn set_text(&mut self, text: &str) -> TokensInfo {
        let (tokens, total) = tokenize_up_to(text, PAGE_MAX_TOKENS);
        let same_tokens = !self.is_spec()
            && tokens.len() == self.labels.len()
            && tokens.iter().zip(&self.labels).all(|(t, l)| t.text == *l);
        if !same_tokens {
            self.x = self.model.embed(&tokens);
            self.labels = tokens.iter().map(|t| t.text.clone()).collect();
            self.tokens = tokens;
            if self.is_spec() {
                self.source = Source::Sentence;
                self.settings.maps.heads =
                    self.nearest_heads(self.kind(), self.settings.maps.heads);
                self.head = self.head.min(self.settings.maps.heads - 1);
                self.lambda_override = false;
            }
            self.invalidate_sentence();
            self.refresh_layer_weights();
        }
        TokensInfo {
            tokens: self.labels.clone(),
            total,
            truncated: total > PAGE_MAX_TOKENS,
        }
    }

    /// Head counts `kind` allows over what is drawn: divisors of `d` (of `d / 2` for the
    /// Differential Transformer), or a loaded spec's own count (a captured layer's heads are
    /// fixed by its weights).
    pub fn head_choices_for(&self, kind: MechanismKind) -> Vec<usize> {
        if let Source::Spec(spec) = &self.source {
            return vec![spec.heads];
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

    fn nearest_heads(&self, kind: MechanismKind, wanted: usize) -> usize {
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
        if next.mechanism != before.mechanism {
            self.check_source_runs(next.mechanism)?;
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
        let kind = next.mechanism;
        let maps_change = kind != before.mechanism
            || next.heads != before.heads
            || next.causal != before.causal
            || (kind.takes(Parameter::Tau) && next.tau != before.tau)
            || (kind.takes(Parameter::Window) && next.window != before.window)
            || (kind.takes(Parameter::Segment) && next.segment != before.segment);
        self.settings.maps = next;
        self.head = self.head.min(next.heads - 1);
        if maps_change {
            self.invalidate_base();
        }
        self.refresh_layer_weights();
        Ok(())
    }

    /// Errors when a loaded spec cannot run `kind`: its weights do not fit the mechanism's
    /// head layout, or it lacks the mechanism's own parameters.
    fn check_source_runs(&self, kind: MechanismKind) -> Result<(), EngineError> {
        let Source::Spec(spec) = &self.source else {
            return Ok(());
        };
        let lacks = |what: &str| EngineError::Shape {
            field: "mechanism",
            expected: format!("a spec with {what}"),
            found: "a spec without them".to_string(),
        };
        if kind == MechanismKind::DiffTransformer && spec.diff_transformer.is_none() {
            return Err(lacks(
                "lambda_q1, lambda_k1, lambda_q2, lambda_k2 and subln",
            ));
        }
        let w_lambda_rows = spec.weights.w_lambda.as_ref().map(|w| w.nrows());
        if kind == MechanismKind::DiffTransformerV2 && w_lambda_rows != Some(spec.heads) {
            return Err(lacks("w_lambda (one row per head)"));
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
        if before.lambda.to_bits() != next.lambda.to_bits() {
            self.lambda_override = true;
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
        let mut shift = self.settings.shift;
        patch.apply_shift(&mut shift);
        shift.check()?;
        let before = (
            self.settings,
            self.head,
            self.gate_override,
            self.lambda_override,
        );
        self.update_maps(|m| patch.apply_maps(m))?;
        self.update_shift(|s| patch.apply_shift(s))?;
        if let Some(head) = patch.head {
            if let Err(e) = self.set_head(head) {
                let (settings, head, gate_override, lambda_override) = before;
                // Put the maps' settings back; the caches they cleared are recomputed.
                self.update_maps(|m| *m = settings.maps)?;
                self.settings.shift = settings.shift;
                self.head = head;
                self.gate_override = gate_override;
                self.lambda_override = lambda_override;
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
        let slider = self.lambda_override.then_some(self.settings.shift.lambda);
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
        }
    }

    /// Whether λ is the learned one (or the spec's), not the slider's.
    pub fn lambda_is_learned(&self) -> bool {
        !self.lambda_override
    }

    /// Back to the learned λ (the trained model's, the captured layer's, V2's λ per token):
    /// the slider no longer decides. Like a slider move, only `A1 − λ·A2` and what follows it
    /// are recomputed at the next [`compute`](Self::compute), never `A1` and `A2`.
    pub fn reset_lambda(&mut self) {
        if self.lambda_override {
            self.lambda_override = false;
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

    /// The maps the current mechanism shows, in display order.
    pub fn stages(&self) -> Vec<StageId> {
        self.kind().stages(self.settings.shift.difference)
    }

    /// The stage whose map each head finally mixes values with.
    pub fn final_stage(&self) -> StageId {
        self.kind().final_stage()
    }

    /// The column of `stage`'s map that key `key` falls in: the key itself, its segment
    /// (hierarchical), or the shown head's column (V2's λ, one column per head).
    pub fn column_of_key(&self, stage: StageId, key: usize) -> usize {
        match stage.columns() {
            Columns::Keys => key,
            Columns::Segments => key / self.settings.maps.segment.max(1),
            Columns::Heads => self.head,
        }
    }

    /// The key a column of `stage`'s map stands for: the column itself, the segment's first
    /// token, or (a head's column) the first key.
    pub fn key_of_column(&self, stage: StageId, col: usize) -> usize {
        match stage.columns() {
            Columns::Keys => col,
            Columns::Segments => col * self.settings.maps.segment.max(1),
            Columns::Heads => 0,
        }
    }

    /// The column labels of `stage`'s map: the key labels, each segment's tokens (`1–4`), or
    /// the heads (`1`, `2`, …).
    pub fn column_labels(&self, stage: StageId) -> Vec<String> {
        match stage.columns() {
            Columns::Keys => self.key_labels(),
            Columns::Segments => {
                let s = self.settings.maps.segment.max(1);
                let n = self.len();
                (0..n.div_ceil(s))
                    .map(|m| {
                        let (first, last) = (m * s + 1, ((m + 1) * s).min(n));
                        if first == last {
                            first.to_string()
                        } else {
                            format!("{first}–{last}")
                        }
                    })
                    .collect()
            }
            Columns::Heads => (1..=self.settings.maps.heads)
                .map(|h| h.to_string())
                .collect(),
        }
    }

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
        self.lambda_override = false;
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

    /// How many of the sentence's tokens the trained model's vocabulary does not know (they
    /// read as `<unk>`); `None` for the untrained model or a loaded spec.
    pub fn unknown_tokens(&self) -> Option<usize> {
        if self.is_spec() {
            return None;
        }
        let ids = self.model.token_ids(&self.tokens)?;
        Some(ids.iter().filter(|&&id| id == 0).count())
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
    /// [`PAGE_MAX_TOKENS`] tokens, refused while `x` is read ([`parse_page_spec`]).
    pub fn load_spec(&mut self, text: &str) -> Result<(), SpecError> {
        self.load(parse_page_spec(text)?)
    }

    /// Draws a spec file's bytes: JSON, or the binary form (safetensors, DESIGN.md §7.8).
    pub fn load_spec_bytes(&mut self, bytes: &[u8]) -> Result<(), SpecError> {
        self.load(parse_page_spec_bytes(bytes)?)
    }

    /// Draws a parsed spec. Its projections and maps are computed now, once, so that every
    /// problem shows before anything changes (a refused spec leaves the page as it was), and
    /// they are kept for the first draw.
    pub fn load(&mut self, spec: Spec) -> Result<(), SpecError> {
        spec.check_limits()?;
        spec.page_support()?;
        let kind = spec.mechanism.kind();
        let projection = Projection::new(kind, spec.x.view(), &spec.weights);
        // The first head alone shows every problem a spec can have (its layout, its
        // parameters); the other heads are computed when asked for.
        let first = base_maps_of(
            &spec.mechanism,
            &projection,
            &spec.weights,
            spec.heads,
            spec.causal,
            0..spec.heads.min(1),
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
        self.lambda_override = false;
        self.layer_weights = None;
        self.head = 0;
        self.invalidate_sentence();
        self.projection = Some(projection);
        self.heads = vec![heads::HeadCache::default(); spec.heads];
        if let Some(cache) = self.heads.first_mut() {
            *cache = heads::HeadCache::with_maps(first);
        }
        self.recomputations.projections += 1;
        self.recomputations.maps += 1;
        Ok(())
    }

    /// The loaded spec's metadata (model name, layer, token labels), if a spec is drawn.
    pub fn meta(&self) -> Option<&Meta> {
        match &self.source {
            Source::Spec(spec) => Some(&spec.meta),
            Source::Sentence => None,
        }
    }

    /// The settings the loaded spec or the trained model brought, which the page compares the
    /// current settings against; `None` for the untrained model.
    pub fn reference_settings(&self) -> Option<Settings> {
        match &self.source {
            Source::Spec(spec) => Some(spec.settings),
            Source::Sentence => self.trained_settings(),
        }
    }
}
