//! The page's state without the browser: a sentence (or a loaded spec), the controls, and the
//! cached stages, recomputed only from the first stage a change touches.
//!
//! Caches are layered like the maths: the projections depend on the sentence; the maps `A`
//! (or `A1`, `A2`) on the mechanism, heads, causal mask, `tau` and window; the shift stages on
//! the shift, the difference, the fill, the gate and the renormalisation. A setter clears only
//! the layers after the one it changes, and only if its value really changed, so dragging the
//! shift slider never recomputes `A`, and picking another head recomputes nothing.

mod settings;
mod stage;

use ndarray::{Array2, Array3, ArrayView2, Axis};

pub use settings::{MechanismKind, Settings};
pub use stage::{ScaleKind, StageId};

use crate::engine::diff_transformer::{self, DiffTransformerMaps, DiffTransformerParams};
use crate::engine::input_diff::{self, InputDiffProjected};
use crate::engine::projection::mix_values;
use crate::engine::shift_diff::{
    shift_diff_maps_into, Difference, Gate, ShiftDiffMaps, ShiftDiffParams,
};
use crate::engine::{cosine, local, standard, EngineError, Mask, Mechanism, Projected, Weights};
use crate::model::Model;
use crate::model::Prediction;
use crate::spec::{parse_spec, stages_json, SpecError, StagesJson};
use crate::text::{tokenize_limited, Token, MAX_TOKENS};

/// What the page learns after the text changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokensInfo {
    /// The tokens drawn (at most [`MAX_TOKENS`]).
    pub tokens: Vec<String>,
    /// How many tokens the text had before truncation.
    pub total: usize,
    /// Whether only the first [`MAX_TOKENS`] are drawn.
    pub truncated: bool,
}

/// The numbers behind one cell, for the tooltip: every stage's value at `(row, col)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CellInfo {
    /// The query token (the row).
    pub query: String,
    /// The key token (the column).
    pub key: String,
    /// `(stage, value)` for every stage the mechanism shows.
    pub values: Vec<(StageId, f32)>,
    /// The gate's scalars of the shown head (shift_diff only).
    pub gate: Option<(f32, f32, f32)>,
    /// Row sums of `A` and of the final map for this query row.
    pub row_sums: Vec<(StageId, f32)>,
    /// The Differential Transformer's lambda.
    pub lambda: Option<f32>,
}

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
    gate: Option<Gate>,
    diff_transformer: Option<DiffTransformerParams>,
}

/// The maps before any shift: plain attention maps, or the Differential Transformer's.
#[derive(Debug, Clone)]
enum BaseMaps {
    Attention(Array3<f32>),
    DiffTransformer(DiffTransformerMaps),
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
    /// A uniform gate from the sliders replaces a spec's per-head gate once moved.
    gate_override: bool,
    projected: Option<Projected>,
    input_diff: Option<InputDiffProjected>,
    base: Option<BaseMaps>,
    shift: Option<ShiftDiffMaps>,
    /// The buffers of the last shift stages once cleared, refilled by the next compute rather
    /// than allocated again (32 MB per slider tick at 512 tokens and 8 heads).
    spare_shift: Option<ShiftDiffMaps>,
    /// The prediction for the current maps, cleared with the shift stages (every change that
    /// can move it clears them), so a render that changed nothing does not classify again.
    prediction: Option<Option<Prediction>>,
    recomputations: Recomputations,
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
            projected: None,
            input_diff: None,
            base: None,
            shift: None,
            spare_shift: None,
            prediction: None,
            recomputations: Recomputations::default(),
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

    /// The token labels of the rows (and, but for input difference, the columns).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The key labels: the tokens, or for input difference the steps `a→b` between tokens.
    pub fn key_labels(&self) -> Vec<String> {
        if self.settings.mechanism == MechanismKind::InputDiff {
            self.labels
                .windows(2)
                .map(|w| format!("{}→{}", w[0], w[1]))
                .collect()
        } else {
            self.labels.clone()
        }
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

    fn invalidate_sentence(&mut self) {
        self.projected = None;
        self.input_diff = None;
        self.invalidate_base();
    }

    fn invalidate_base(&mut self) {
        self.base = None;
        self.clear_shift();
    }

    fn clear_shift(&mut self) {
        self.prediction = None;
        if let Some(maps) = self.shift.take() {
            self.spare_shift = Some(maps);
        }
    }

    fn weights(&self) -> &Weights {
        match &self.source {
            Source::Sentence => &self.model.weights,
            Source::Spec(spec) => &spec.weights,
        }
    }

    /// Tokenises and embeds a sentence and draws it (leaving any loaded spec).
    ///
    /// The vectors depend only on the tokens, so a change that leaves them as they were (a
    /// space typed after a word, a letter's case changed) keeps every cache.
    pub fn set_text(&mut self, text: &str) -> TokensInfo {
        let (tokens, total) = tokenize_limited(text);
        let same_tokens = !self.is_spec()
            && tokens.len() == self.labels.len()
            && tokens.iter().zip(&self.labels).all(|(t, l)| t.text == *l);
        if !same_tokens {
            self.x = self.model.embed(&tokens);
            self.labels = tokens.iter().map(|t| t.text.clone()).collect();
            self.tokens = tokens;
            if self.is_spec() {
                self.source = Source::Sentence;
                self.settings.heads = self.nearest_heads(self.settings.heads);
            }
            self.invalidate_sentence();
        }
        TokensInfo {
            tokens: self.labels.clone(),
            total,
            truncated: total > MAX_TOKENS,
        }
    }

    /// Head counts the current mechanism and source allow.
    pub fn head_choices(&self) -> Vec<usize> {
        if let Source::Spec(spec) = &self.source {
            return vec![spec.heads];
        }
        let d = self.weights().d_model();
        let width = match self.settings.mechanism {
            MechanismKind::DiffTransformer => d / 2,
            _ => d,
        };
        (1..=width).filter(|h| width % h == 0).collect()
    }

    fn nearest_heads(&self, wanted: usize) -> usize {
        let choices = self.head_choices();
        choices
            .iter()
            .copied()
            .min_by_key(|&h| (h.abs_diff(wanted), h))
            .unwrap_or(1)
    }

    /// Picks the mechanism. Errors when a loaded spec lacks what it needs.
    pub fn set_mechanism(&mut self, mechanism: MechanismKind) -> Result<(), EngineError> {
        if mechanism == self.settings.mechanism {
            return Ok(());
        }
        if let Source::Spec(spec) = &self.source {
            if mechanism == MechanismKind::DiffTransformer && spec.diff_transformer.is_none() {
                return Err(EngineError::Shape {
                    field: "mechanism",
                    expected: "a spec with lambda_q1, lambda_k1, lambda_q2, lambda_k2 and subln"
                        .to_string(),
                    found: "a spec without them".to_string(),
                });
            }
        }
        let was_input_diff = self.settings.mechanism == MechanismKind::InputDiff;
        self.settings.mechanism = mechanism;
        self.settings.heads = self.nearest_heads(self.settings.heads);
        self.head = self.head.min(self.settings.heads - 1);
        if was_input_diff || mechanism == MechanismKind::InputDiff {
            self.invalidate_sentence();
        } else {
            self.invalidate_base();
        }
        Ok(())
    }

    /// Re-splits the same projections into `heads` heads.
    pub fn set_heads(&mut self, heads: usize) -> Result<(), EngineError> {
        if heads == self.settings.heads {
            return Ok(());
        }
        let choices = self.head_choices();
        if !choices.contains(&heads) {
            let d = self.weights().d_model();
            return Err(match heads {
                0 => EngineError::ZeroHeads,
                _ => EngineError::HeadsDoNotDivide {
                    width: if self.settings.mechanism == MechanismKind::DiffTransformer {
                        d / 2
                    } else {
                        d
                    },
                    heads,
                    what: "the model width",
                },
            });
        }
        self.settings.heads = heads;
        self.head = self.head.min(heads - 1);
        self.invalidate_base();
        Ok(())
    }

    /// Picks the head shown; recomputes nothing.
    pub fn set_head(&mut self, head: usize) -> Result<(), EngineError> {
        if head >= self.settings.heads {
            return Err(EngineError::Shape {
                field: "head",
                expected: format!("a head index below {}", self.settings.heads),
                found: head.to_string(),
            });
        }
        self.head = head;
        Ok(())
    }

    /// Turns the causal mask on or off.
    pub fn set_causal(&mut self, causal: bool) {
        if causal != self.settings.causal {
            self.settings.causal = causal;
            self.invalidate_base();
        }
    }

    /// Cosine attention's temperature.
    pub fn set_tau(&mut self, tau: f32) -> Result<(), EngineError> {
        let tau = settings::finite("tau", tau)?;
        if tau != self.settings.tau {
            self.settings.tau = tau;
            if self.settings.mechanism == MechanismKind::Cosine {
                self.invalidate_base();
            }
        }
        Ok(())
    }

    /// Local attention's radius.
    pub fn set_window(&mut self, window: usize) {
        if window != self.settings.window {
            self.settings.window = window;
            if self.settings.mechanism == MechanismKind::Local {
                self.invalidate_base();
            }
        }
    }

    /// Changes the shift stages' settings; clears only the shift stages, never `A`.
    pub fn update_shift(&mut self, change: impl FnOnce(&mut Settings)) -> Result<(), EngineError> {
        let before = self.settings.clone();
        change(&mut self.settings);
        for (field, v) in [
            ("gate.alpha", self.settings.alpha),
            ("gate.beta", self.settings.beta),
            ("gate.gamma", self.settings.gamma),
        ] {
            if let Err(e) = settings::finite(field, v) {
                self.settings = before;
                return Err(e);
            }
        }
        let gate_moved = (before.alpha, before.beta, before.gamma)
            != (self.settings.alpha, self.settings.beta, self.settings.gamma);
        if gate_moved {
            self.gate_override = true;
        }
        if before != self.settings {
            self.clear_shift();
        }
        Ok(())
    }

    /// The gate the shift stages use: the spec's per-head gate, or the sliders' for every head.
    fn gate(&self) -> Gate {
        if !self.gate_override {
            if let Source::Spec(spec) = &self.source {
                if let Some(gate) = &spec.gate {
                    return gate.clone();
                }
            } else if let Some(gate) = self.model.gate(self.settings.heads) {
                // A trained gate, adapted to the heads shown (see `Model::gate`).
                return gate;
            }
        }
        Gate::uniform(
            self.settings.heads,
            self.settings.alpha,
            self.settings.beta,
            self.settings.gamma,
        )
    }

    /// Whether the gate comes from the loaded spec or the trained model rather than the
    /// sliders (until a slider moves).
    pub fn gate_is_learned(&self) -> bool {
        !self.gate_override
            && match &self.source {
                Source::Spec(spec) => spec.gate.is_some(),
                Source::Sentence => self.model.gate(self.settings.heads).is_some(),
            }
    }

    fn diff_transformer_params(&self) -> Result<DiffTransformerParams, EngineError> {
        if let Source::Spec(spec) = &self.source {
            if let Some(params) = &spec.diff_transformer {
                return Ok(params.clone());
            }
        }
        self.model.diff_transformer_params(self.settings.heads)
    }

    /// The shift stages' parameters from the settings.
    pub fn shift_params(&self) -> ShiftDiffParams {
        ShiftDiffParams {
            shift: self.settings.shift,
            difference: self.settings.difference,
            fill: self.settings.fill,
            renormalize: self.settings.renormalize,
            gate: self.gate(),
        }
    }

    /// The mechanism with every parameter, as the engine takes it.
    pub fn mechanism(&self) -> Result<Mechanism, EngineError> {
        Ok(match self.settings.mechanism {
            MechanismKind::Standard => Mechanism::Standard,
            MechanismKind::ShiftDiff => Mechanism::ShiftDiff(self.shift_params()),
            MechanismKind::DiffTransformer => {
                Mechanism::DiffTransformer(self.diff_transformer_params()?)
            }
            MechanismKind::InputDiff => Mechanism::InputDiff,
            MechanismKind::Cosine => Mechanism::Cosine {
                tau: self.settings.tau,
            },
            MechanismKind::Local => Mechanism::Local {
                window: self.settings.window,
            },
        })
    }

    /// The maps the current mechanism shows, in display order.
    pub fn stages(&self) -> Vec<StageId> {
        match self.settings.mechanism {
            MechanismKind::ShiftDiff => {
                let mut stages = vec![StageId::A, StageId::Shifted];
                if self.settings.difference == Difference::Symmetric {
                    stages.push(StageId::ShiftedBack);
                }
                stages.extend([StageId::D, StageId::G, StageId::Fused]);
                stages
            }
            MechanismKind::DiffTransformer => vec![StageId::A1, StageId::A2, StageId::Diff],
            _ => vec![StageId::A],
        }
    }

    /// The stage whose map each head finally mixes values with.
    pub fn final_stage(&self) -> StageId {
        match self.settings.mechanism {
            MechanismKind::ShiftDiff => StageId::Fused,
            MechanismKind::DiffTransformer => StageId::Diff,
            _ => StageId::A,
        }
    }

    /// Brings every cache up to date. Cheap when nothing changed.
    pub fn compute(&mut self) -> Result<(), EngineError> {
        if self.is_empty() {
            return Ok(());
        }
        let heads = self.settings.heads;
        let causal = self.settings.causal;
        let mask = Mask::causal(causal);
        if self.base.is_none() {
            let base = if self.settings.mechanism == MechanismKind::InputDiff {
                let p = match self.input_diff.take() {
                    Some(p) => p,
                    None => {
                        self.recomputations.projections += 1;
                        InputDiffProjected::new(self.x.view(), self.weights())
                    }
                };
                let a = input_diff::attention(&p, heads, causal);
                self.input_diff = Some(p);
                BaseMaps::Attention(a?)
            } else {
                let p = match self.projected.take() {
                    Some(p) => p,
                    None => {
                        self.recomputations.projections += 1;
                        Projected::new(self.x.view(), self.weights())
                    }
                };
                let (q, k) = (p.q.view(), p.k.view());
                let base = match self.settings.mechanism {
                    MechanismKind::Cosine => {
                        cosine::attention(q, k, heads, mask, self.settings.tau)
                            .map(BaseMaps::Attention)
                    }
                    MechanismKind::Local => {
                        local::attention(q, k, heads, causal, self.settings.window)
                            .map(BaseMaps::Attention)
                    }
                    MechanismKind::DiffTransformer => self
                        .diff_transformer_params()
                        .and_then(|params| diff_transformer::maps(&p, heads, mask, &params))
                        .map(BaseMaps::DiffTransformer),
                    _ => standard::attention(q, k, heads, mask).map(BaseMaps::Attention),
                };
                self.projected = Some(p);
                base?
            };
            self.recomputations.maps += 1;
            self.base = Some(base);
            self.clear_shift();
        }
        if self.settings.mechanism == MechanismKind::ShiftDiff && self.shift.is_none() {
            if let Some(BaseMaps::Attention(a)) = &self.base {
                let mut maps = self.spare_shift.take().unwrap_or_else(ShiftDiffMaps::empty);
                shift_diff_maps_into(a, &self.shift_params(), mask, &mut maps)?;
                self.shift = Some(maps);
                self.recomputations.shift_stages += 1;
            }
        }
        Ok(())
    }

    /// Every head's map of one stage, `(heads, queries, keys)`, once [`compute`](Self::compute)
    /// has run; `None` when the stage is not part of the mechanism or nothing is drawn.
    pub fn maps(&self, stage: StageId) -> Option<&Array3<f32>> {
        match (&self.base, stage) {
            (Some(BaseMaps::Attention(a)), StageId::A) => Some(a),
            (Some(BaseMaps::DiffTransformer(m)), StageId::A1) => Some(&m.a1),
            (Some(BaseMaps::DiffTransformer(m)), StageId::A2) => Some(&m.a2),
            (Some(BaseMaps::DiffTransformer(m)), StageId::Diff) => Some(&m.diff),
            (Some(BaseMaps::Attention(_)), _) => {
                let s = self.shift.as_ref()?;
                match stage {
                    StageId::Shifted => Some(&s.shifted),
                    StageId::ShiftedBack => s.shifted_back.as_ref(),
                    StageId::D => Some(&s.d),
                    StageId::G => Some(&s.g),
                    StageId::Fused => Some(&s.fused),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The shown head's map of one stage (see [`maps`](Self::maps)).
    pub fn map(&self, stage: StageId) -> Option<ArrayView2<'_, f32>> {
        self.head_map(stage, self.head)
    }

    /// One head's map of one stage.
    pub fn head_map(&self, stage: StageId, head: usize) -> Option<ArrayView2<'_, f32>> {
        let maps = self.maps(stage)?;
        (head < maps.len_of(Axis(0))).then(|| maps.index_axis(Axis(0), head))
    }

    /// The Differential Transformer's lambda, once computed.
    pub fn lambda(&self) -> Option<f32> {
        match &self.base {
            Some(BaseMaps::DiffTransformer(m)) => Some(m.lambda),
            _ => None,
        }
    }

    /// The numbers behind one cell of the shown head; `None` outside the map.
    pub fn cell(&self, row: usize, col: usize) -> Option<CellInfo> {
        let keys = self.key_labels();
        let (query, key) = (self.labels.get(row)?.clone(), keys.get(col)?.clone());
        let values = self
            .stages()
            .into_iter()
            .filter_map(|s| Some((s, *self.map(s)?.get((row, col))?)))
            .collect();
        let row_sums = [StageId::A, StageId::A1, self.final_stage()]
            .into_iter()
            .fold(Vec::new(), |mut acc: Vec<StageId>, s| {
                if !acc.contains(&s) {
                    acc.push(s);
                }
                acc
            })
            .into_iter()
            .filter_map(|s| Some((s, self.map(s)?.row(row).sum())))
            .collect();
        let gate = (self.settings.mechanism == MechanismKind::ShiftDiff).then(|| {
            let g = self.gate();
            let h = self.head.min(g.alpha.len().saturating_sub(1));
            (g.alpha[h], g.beta[h], g.gamma[h])
        });
        Some(CellInfo {
            query,
            key,
            values,
            gate,
            row_sums,
            lambda: self.lambda(),
        })
    }

    /// Draws the sentence with another model. A trained model brings the settings it was
    /// trained with (mechanism, heads, shift, gate, tau, window; no causal mask); the untrained
    /// one keeps the current settings. A loaded spec is left for the sentence.
    pub fn set_model(&mut self, model: Model) {
        self.model = model;
        self.source = Source::Sentence;
        if let Some(trained) = Settings::trained(&self.model, &self.settings) {
            self.settings = trained;
        }
        self.settings.heads = self.nearest_heads(self.settings.heads);
        self.head = self.head.min(self.settings.heads - 1);
        self.gate_override = false;
        self.x = self.model.embed(&self.tokens);
        self.labels = self.tokens.iter().map(|t| t.text.clone()).collect();
        self.invalidate_sentence();
    }

    /// The trained model's sentiment for the sentence under the current settings (which may
    /// differ from the trained ones: the page says so). `None` for the untrained model, a
    /// loaded spec, an empty sentence, or a mechanism other than the model's.
    pub fn prediction(&mut self) -> Result<Option<Prediction>, EngineError> {
        let trained_mechanism = match self.model.trained_parts() {
            Some(t) => MechanismKind::from_mechanism(&t.mechanism),
            None => return Ok(None),
        };
        if self.is_spec() || self.is_empty() || trained_mechanism != self.settings.mechanism {
            return Ok(None);
        }
        self.compute()?;
        if let Some(cached) = self.prediction {
            return Ok(cached);
        }
        let output = match (&self.base, self.settings.mechanism) {
            (Some(BaseMaps::DiffTransformer(maps)), _) => {
                let p = self.projected.as_ref().ok_or(EngineError::EmptySequence)?;
                let params = self.diff_transformer_params()?;
                diff_transformer::output(maps, p.v.view(), &params.subln, self.weights().w_o.view())
            }
            (Some(BaseMaps::Attention(_)), MechanismKind::InputDiff) => {
                let p = self.input_diff.as_ref().ok_or(EngineError::EmptySequence)?;
                let a = self.maps(StageId::A).ok_or(EngineError::EmptySequence)?;
                mix_values(a, p.v.view(), self.weights().w_o.view())
            }
            _ => {
                let p = self.projected.as_ref().ok_or(EngineError::EmptySequence)?;
                let final_maps = self
                    .maps(self.final_stage())
                    .ok_or(EngineError::EmptySequence)?;
                mix_values(final_maps, p.v.view(), self.weights().w_o.view())
            }
        };
        let prediction = self.model.classify_output(output.view());
        self.prediction = Some(prediction);
        Ok(prediction)
    }

    /// Every stage and the layer output, in the CLI's JSON format, for "export JSON".
    pub fn stages_json(&self) -> Result<StagesJson, EngineError> {
        if self.is_empty() {
            return Err(EngineError::EmptySequence);
        }
        let stages = crate::engine::run(
            self.x.view(),
            self.weights(),
            self.settings.heads,
            self.settings.causal,
            &self.mechanism()?,
        )?;
        Ok(stages_json(&stages))
    }

    /// Draws a user's spec (the CLI's JSON): its vectors, weights and settings.
    pub fn load_spec(&mut self, text: &str) -> Result<(), SpecError> {
        let spec = parse_spec(text)?;
        // Run it once, so that every problem shows now rather than at the first draw.
        spec.run()?;
        let settings = self
            .settings
            .with_mechanism(&spec.mechanism, spec.heads, spec.causal);
        let (gate, diff_transformer) = match &spec.mechanism {
            Mechanism::ShiftDiff(p) => (Some(p.gate.clone()), None),
            Mechanism::DiffTransformer(p) => (None, Some(p.clone())),
            _ => (None, None),
        };
        self.labels = (0..spec.x.nrows()).map(|i| format!("t{i}")).collect();
        self.x = spec.x;
        self.source = Source::Spec(Box::new(SpecSource {
            weights: spec.weights,
            heads: spec.heads,
            gate,
            diff_transformer,
        }));
        self.settings = settings;
        self.gate_override = false;
        self.head = 0;
        self.invalidate_sentence();
        Ok(())
    }
}
