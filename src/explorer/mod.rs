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
//! Split by concern: the state and its caches' layers here; `controls` (the settings changed,
//! the choices they offer, what was learned), `source` (another model, a loaded spec, the
//! exports), `work` (the caches filled in short pieces: the projections, each head, the layer
//! output), `describe` (what the page shows), `sink` (a layer's learned sinks: the share of each
//! row they took, for the strip beside the map), `settings` (the settings and their patch).
//!
//! [`BaseMaps`]: crate::engine::BaseMaps
//! [`ShiftDiffMaps`]: crate::engine::shift_diff::ShiftDiffMaps

mod closest;
mod controls;
mod describe;
mod lambda;
mod pretrained;
mod settings;
mod sink;
mod source;
mod work;

use ndarray::{Array2, Array3};

pub use closest::{cosine, Closest};
pub use describe::{CellInfo, Extremes, LayerInfo, RowLine, TokensInfo};
pub use pretrained::{LayerNeed, PretrainedModel, Similarity, SimilarityNeed};
pub use settings::{Learned, MapSettings, Settings, SettingsPatch, ShiftSettings};
pub use work::{piece_rows, Need, Progress, PIECE_CELLS};

use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::Gate;
use crate::engine::{Columns, Mask, MechanismKind, Projection, StageId, Weights};
use crate::model::{Model, Prediction};
use crate::spec::Meta;
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
}

/// Where the vectors and weights come from.
#[derive(Debug, Clone)]
enum Source {
    /// The typed sentence, embedded by the model.
    Sentence,
    /// A user's spec: its own vectors and weights, and the per-head parameters it brought.
    Spec(Box<SpecSource>),
    /// The typed sentence through a pretrained model, drawn at one of its layers.
    Pretrained(Box<pretrained::PretrainedSource>),
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
    /// The sentence as typed, kept so a pretrained model can cut it into its own pieces.
    text: String,
    /// A second sentence the pretrained model compares the typed one with (`pretrained.rs`).
    other_text: String,
    x: Array2<f32>,
    settings: Settings,
    head: usize,
    /// A uniform gate from the sliders replaces a learned per-head gate once moved.
    gate_override: bool,
    /// The model's weights as the shown mechanism and head count run them, when they differ
    /// from `model.weights` (V2 on the sentence: `Model::layer_weights`).
    layer_weights: Option<Weights>,
    /// The projections of `x`, computed in pieces of rows (`work.rs`).
    projection: Projection,
    /// Rows of `projection` computed so far (`x`'s rows when it is complete; 0 when cleared).
    projected_rows: usize,
    /// Each head's maps and shift stages, computed when asked for (`work.rs`).
    heads: Vec<work::HeadCache>,
    /// The table every head shares, `(1, tokens, heads)`, computed whole: V2's λ, or gated
    /// attention's output gate (its mean over each head's channels).
    lambda_table: Option<Array3<f32>>,
    /// The prediction for the current maps, cleared with the shift stages (every change that
    /// can move it clears them), so a render that changed nothing does not classify again.
    prediction: Option<Option<Prediction>>,
    /// The layer output, head by head (`work.rs`), cleared with the shift stages.
    mixed: work::Mixed,
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
            text: String::new(),
            other_text: String::new(),
            settings: Settings::default(),
            head: 0,
            gate_override: false,
            layer_weights: None,
            projection: Projection::empty(),
            projected_rows: 0,
            heads: Vec::new(),
            lambda_table: None,
            prediction: None,
            mixed: work::Mixed::default(),
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

    /// The mechanism shown.
    pub fn kind(&self) -> MechanismKind {
        self.settings.maps.mechanism
    }

    /// The token labels of the rows (and, but for input difference, the columns).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The key labels: the tokens, for input difference the steps `a→b` between tokens, and
    /// for a cross-attention layer its second sequence's (`key_tokens`, else `1`, `2`, …).
    pub fn key_labels(&self) -> Vec<String> {
        if let Some(x_kv) = &self.weights().layout.x_kv {
            return match self.meta().and_then(|m| m.key_tokens.clone()) {
                Some(labels) => labels,
                None => (1..=x_kv.nrows()).map(|j| j.to_string()).collect(),
            };
        }
        if self.kind().projects_steps() {
            self.labels
                .windows(2)
                .map(|w| format!("{}→{}", w[0], w[1]))
                .collect()
        } else {
            self.labels.clone()
        }
    }

    /// Whether the keys are a second sequence's (a captured cross-attention layer, DESIGN.md
    /// §7.10): key j is not "after" query i, so no causal mask applies.
    pub fn is_cross(&self) -> bool {
        self.weights().layout.x_kv.is_some()
    }

    /// The number of keys of every map: the tokens, the steps between them, or a
    /// cross-attention layer's second sequence.
    pub fn key_count(&self) -> usize {
        match &self.weights().layout.x_kv {
            Some(x_kv) => x_kv.nrows(),
            None => self.labels.len().saturating_sub(self.kind().key_offset()),
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

    /// The mask of the maps shown: which cells are forbidden, and where keys sit for it.
    pub fn mask(&self) -> (Mask, usize) {
        let m = &self.settings.maps;
        (
            m.mechanism.mask(m.causal, m.window),
            m.mechanism.key_offset(),
        )
    }

    fn invalidate_sentence(&mut self) {
        self.projected_rows = 0;
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
        self.mixed.clear();
        self.clear_moved();
        self.lambda_table = None;
        for cache in &mut self.heads {
            cache.clear_shift();
        }
    }

    fn weights(&self) -> &Weights {
        match &self.source {
            Source::Sentence => self.layer_weights.as_ref().unwrap_or(&self.model.weights),
            Source::Spec(spec) => &spec.weights,
            Source::Pretrained(_) => self.layer_weights.as_ref().unwrap_or_else(|| {
                self.pretrained_weights()
                    .expect("a pretrained source holds a layer's weights")
            }),
        }
    }

    /// Brings the sentence's layer weights in line with the mechanism and head count shown;
    /// when they change, the projections (which V2's `W_λ` is part of) are recomputed.
    fn refresh_layer_weights(&mut self) {
        let m = &self.settings.maps;
        let next = match &self.source {
            Source::Spec(_) => return,
            Source::Pretrained(_) => self.pretrained_layer_weights(),
            Source::Sentence => match self.model.layer_weights(m.mechanism, m.heads) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(w) => Some(w),
            },
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
        text.clone_into(&mut self.text);
        if self.is_pretrained() {
            // The model cuts the text into its own pieces: `set_pretrained_text` gives them.
            return self.pretrained_pieces();
        }
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
                self.settings.shift.lambda = None;
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
}
