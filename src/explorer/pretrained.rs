//! A pretrained model drawn at one of its layers: the typed sentence cut into the model's word
//! pieces, and any mechanism of the engine on the chosen layer's real projections (`W_q`, `W_k`,
//! `W_v`, `W_o` with their biases) and the real vectors entering it. The standard mechanism at
//! the model's head count draws the model's own maps; every other mechanism runs on the same
//! projections, with its own parameters from the sliders (none was learned: a standard
//! Transformer has no gate, no λ and no `W_λ`, so V2 cannot run). The Differential Transformer
//! pairs each of the layer's heads with a partner head of the same layer (`partner`;
//! [`paired`]).
//!
//! The explorer does not hold the model, only what one layer needs: the word pieces (its
//! labels), the vectors entering the layer drawn (its `x`), that layer's attention
//! [`Weights`], and the model's head and layer counts ([`PretrainedModel`]). The model runs
//! beside it and hands those over when the explorer asks ([`Explorer::pretrained_need`],
//! [`Explorer::set_pretrained_layer`]): natively `crate::pretrained::Feed`, in the page the
//! model's own wasm module (www/explorer/pretrained.js), so the page's module carries none of
//! the model's code. The similarity to a second sentence is computed there too, from the layer
//! output the explorer computed ([`Explorer::similarity_need`]), and handed back
//! ([`Explorer::set_similarity`]).
//!
//! The layer is a map setting (`layer`, from 1): a change asks for that layer's vectors and
//! weights, and recomputes from the projections on.

use ndarray::{concatenate, s, Array1, Array2, Axis};

use super::{Explorer, Source, TokensInfo};
use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::{Biases, EngineError, Layout, MechanismKind, Weights};
use crate::text::{tokenize_up_to, PAGE_MAX_TOKENS};

/// What the explorer knows of a pretrained model: its name and sizes, not the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PretrainedModel {
    /// The model's name (`all-MiniLM-L6-v2`).
    pub name: String,
    /// Its layers.
    pub layers: usize,
    /// The attention heads of every layer.
    pub heads: usize,
    /// The width of its vectors, `d`.
    pub d_model: usize,
}

/// What the pretrained source holds: the model's sizes and what the layer drawn needs.
#[derive(Debug, Clone)]
pub(super) struct PretrainedSource {
    model: PretrainedModel,
    /// The attention of layer `weights_layer` (from 0); zeros of its shape until one is handed
    /// over (the frame needs the shapes only: no map is computed before the layer's vectors
    /// and weights are in).
    weights: Weights,
    weights_layer: Option<usize>,
    /// The layer (from 0) whose input is the explorer's `x`, `None` before one is.
    drawn: Option<usize>,
    /// The similarities once handed back; cleared with what they depend on.
    similarity: Option<Similarity>,
    /// How many word pieces the whole text had, and whether it was cut (the labels are the
    /// pieces drawn).
    total: usize,
    truncated: bool,
}

/// What the explorer needs of the model for the layer drawn (from 0): the vectors entering it,
/// and its attention's weights when those held are another layer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerNeed {
    /// The layer, from 0.
    pub layer: usize,
    /// Whether its weights are needed too.
    pub weights: bool,
}

/// What the similarity to the second sentence is computed from: the layer drawn (from 0), the
/// mechanism's layer output there (`(tokens, d)`, in place of the layer's attention output),
/// and the second sentence.
#[derive(Debug, Clone, Copy)]
pub struct SimilarityNeed<'a> {
    /// The layer drawn, from 0.
    pub layer: usize,
    /// The mechanism's layer output at it.
    pub output: &'a Array2<f32>,
    /// The second sentence.
    pub other: &'a str,
}

/// How close the typed sentence is to a second one, by the pretrained model's sentence
/// embeddings (the cosine of the two): the model's own, and with the layer drawn computed by the
/// mechanism shown (its layer output in place of the layer's attention, the rest of the model
/// as it is).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Similarity {
    /// With the model's own attention everywhere.
    pub model: f32,
    /// With the mechanism's output at the layer drawn.
    pub mechanism: f32,
}

/// Zeros of a standard layer's shapes (`d × d` projections with biases, the plain layout).
fn zero_layer(d: usize) -> Weights {
    let m = || Array2::zeros((d, d));
    let b = || Some(Array1::zeros(d));
    Weights::real(
        m(),
        m(),
        m(),
        m(),
        Biases {
            b_q: b(),
            b_k: b(),
            b_v: b(),
            b_o: b(),
        },
        None,
        Layout::default(),
    )
    .expect("square matrices with one bias per row")
}

impl Explorer {
    /// Draws the sentence with a pretrained model, at the layer of the `layer` setting (the
    /// last one when the model has fewer) and the model's own head count (the nearest the
    /// mechanism allows). Nothing of another model's training is kept: no learned gate, λ or
    /// trained settings. The word pieces come next ([`set_pretrained_text`]), then the layer's
    /// vectors and weights ([`set_pretrained_layer`]).
    ///
    /// [`set_pretrained_text`]: Self::set_pretrained_text
    /// [`set_pretrained_layer`]: Self::set_pretrained_layer
    pub fn set_pretrained(&mut self, model: PretrainedModel) {
        let (layers, heads, d) = (model.layers.max(1), model.heads.max(1), model.d_model);
        self.source = Source::Pretrained(Box::new(PretrainedSource {
            weights: zero_layer(d),
            weights_layer: None,
            model: PretrainedModel {
                layers,
                heads,
                ..model
            },
            drawn: None,
            similarity: None,
            total: 0,
            truncated: false,
        }));
        self.settings.maps.layer = self.settings.maps.layer.clamp(1, layers);
        if self.kind() == MechanismKind::DiffTransformerV2 {
            self.settings.maps.mechanism = MechanismKind::Standard;
        }
        self.settings.maps.heads = self
            .pretrained_heads(self.kind())
            .unwrap_or_else(|| self.nearest_heads(self.kind(), heads));
        self.head = self.head.min(self.settings.maps.heads - 1);
        self.gate_override = false;
        self.settings.shift.lambda = None;
        self.layer_weights = None;
        self.refresh_layer_weights();
        self.labels.clear();
        self.x = Array2::zeros((0, d));
        self.invalidate_sentence();
    }

    /// The head count `kind` runs a pretrained layer at: the model's heads (the nearest count
    /// the mechanism allows; the Differential Transformer pairs each of them with a partner);
    /// `None` for other sources.
    pub(super) fn pretrained_heads(&self, kind: MechanismKind) -> Option<usize> {
        let model = self.pretrained()?;
        if kind == MechanismKind::DiffTransformer {
            return Some(model.heads);
        }
        Some(self.nearest_heads(kind, model.heads))
    }

    /// The head counts `kind` allows on a pretrained layer, when it fixes them: the
    /// Differential Transformer pairs each of the model's heads with another ([`paired`]).
    pub(super) fn pretrained_head_choices(&self, kind: MechanismKind) -> Option<Vec<usize>> {
        let model = self.pretrained()?;
        (kind == MechanismKind::DiffTransformer).then(|| vec![model.heads])
    }

    /// The head whose map is `A2` for head `head` (from 0) of the Differential Transformer on
    /// a pretrained layer: the `partner` setting's (from 1), or the next head when it is 0.
    pub fn partner_of(&self, head: usize) -> Option<usize> {
        let heads = self.pretrained()?.heads;
        (self.kind() == MechanismKind::DiffTransformer).then(|| match self.settings.maps.partner {
            0 => (head + 1) % heads,
            p => p - 1,
        })
    }

    /// The layer's weights as the mechanism runs them when they differ from the layer's own:
    /// for the Differential Transformer, each head paired with its partner ([`paired`]).
    pub(super) fn pretrained_layer_weights(&self) -> Option<Weights> {
        let Source::Pretrained(source) = &self.source else {
            return None;
        };
        if self.kind() != MechanismKind::DiffTransformer {
            return None;
        }
        let heads = source.model.heads;
        let partners: Vec<usize> = (0..heads)
            .map(|h| self.partner_of(h).unwrap_or(h))
            .collect();
        Some(paired(&source.weights, heads, &partners))
    }

    /// The attention weights of the pretrained layer held (the layer drawn's once handed over).
    pub(super) fn pretrained_weights(&self) -> Option<&Weights> {
        match &self.source {
            Source::Pretrained(p) => Some(&p.weights),
            _ => None,
        }
    }

    /// Whether a pretrained model draws the sentence.
    pub fn is_pretrained(&self) -> bool {
        matches!(self.source, Source::Pretrained(_))
    }

    /// The pretrained model drawing the sentence, if one does.
    pub fn pretrained(&self) -> Option<&PretrainedModel> {
        match &self.source {
            Source::Pretrained(p) => Some(&p.model),
            _ => None,
        }
    }

    /// How many layers the source has: the pretrained model's, else 1 (one attention layer).
    pub fn layers(&self) -> usize {
        self.pretrained().map_or(1, |m| m.layers)
    }

    /// The sentence as typed (a pretrained model cuts it into its own pieces).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text cut into the pretrained model's word pieces (`pieces`: at most its positions,
    /// `[CLS]` and `[SEP]` included; `total` and `truncated` say whether it was cut; none for an
    /// empty or blank text, which draws nothing). The word tokens are kept too, so another model
    /// can embed them again. While the pieces stay, so does everything computed; new pieces
    /// ask for the layer's vectors again ([`pretrained_need`](Self::pretrained_need)). For other
    /// sources, [`set_text`](Self::set_text).
    pub fn set_pretrained_text(&mut self, text: &str, pieces: TokensInfo) -> TokensInfo {
        if !self.is_pretrained() {
            return self.set_text(text);
        }
        text.clone_into(&mut self.text);
        let blank = pieces.tokens.is_empty();
        let changed = pieces.tokens != self.labels;
        if let Source::Pretrained(source) = &mut self.source {
            source.total = if blank { 0 } else { pieces.total };
            source.truncated = !blank && pieces.truncated;
            if changed {
                source.drawn = None;
                source.similarity = None;
            }
        }
        if changed {
            self.labels = pieces.tokens;
            self.tokens = tokenize_up_to(text, PAGE_MAX_TOKENS).0;
            self.x = Array2::zeros((0, self.d_model()));
            self.invalidate_sentence();
        }
        self.pretrained_pieces()
    }

    /// The word pieces drawn, with how many the whole text had and whether it was cut.
    pub(super) fn pretrained_pieces(&self) -> TokensInfo {
        let (total, truncated) = match &self.source {
            Source::Pretrained(p) => (p.total, p.truncated),
            _ => (self.labels.len(), false),
        };
        TokensInfo {
            tokens: self.labels.clone(),
            total,
            truncated,
        }
    }

    /// After a change of the `layer` setting: what was computed for another layer is stale
    /// (the vectors and weights change; [`pretrained_need`](Self::pretrained_need) asks for the
    /// layer's).
    pub(super) fn refresh_pretrained_input(&mut self) {
        let layer = self.settings.maps.layer.saturating_sub(1);
        if let Source::Pretrained(source) = &self.source {
            if source.drawn.is_some() && source.drawn != Some(layer) {
                self.invalidate_sentence();
            }
        }
    }

    /// What the explorer waits for from the pretrained model before it can compute anything:
    /// the vectors entering the layer drawn, and its weights when those held are another
    /// layer's. `None` when it has them (and for other sources, and an empty sentence).
    pub fn pretrained_need(&self) -> Option<LayerNeed> {
        let Source::Pretrained(source) = &self.source else {
            return None;
        };
        let layer = self.settings.maps.layer.saturating_sub(1);
        let weights = source.weights_layer != Some(layer);
        (!self.labels.is_empty() && (weights || source.drawn != Some(layer)))
            .then_some(LayerNeed { layer, weights })
    }

    /// The pretrained model's vectors entering layer `layer` (from 0; `(pieces, d)`) and, when
    /// the explorer asked for them, the layer's attention weights: what
    /// [`pretrained_need`](Self::pretrained_need) asked for. The projections and maps follow in
    /// the work's pieces. Refused (nothing changes) for another layer than the one drawn, or
    /// vectors or weights of another shape.
    pub fn set_pretrained_layer(
        &mut self,
        layer: usize,
        input: Array2<f32>,
        weights: Option<Weights>,
    ) -> Result<(), EngineError> {
        let drawn = self.settings.maps.layer.saturating_sub(1);
        let Source::Pretrained(source) = &mut self.source else {
            return Err(EngineError::Shape {
                field: "layer",
                expected: "a pretrained model drawing the sentence".to_string(),
                found: "another source".to_string(),
            });
        };
        let d = source.model.d_model;
        if layer != drawn {
            return Err(EngineError::Shape {
                field: "layer",
                expected: format!("the layer drawn, {}", drawn + 1),
                found: (layer + 1).to_string(),
            });
        }
        if input.dim() != (self.labels.len(), d) {
            return Err(EngineError::Shape {
                field: "x",
                expected: format!("{} word pieces of width {d}", self.labels.len()),
                found: format!("{:?}", input.dim()),
            });
        }
        if let Some(w) = &weights {
            if (w.w_q.dim(), w.w_o.dim()) != (source.weights.w_q.dim(), source.weights.w_o.dim()) {
                return Err(EngineError::Shape {
                    field: "w_q",
                    expected: format!("the model's layer, {:?}", source.weights.w_q.dim()),
                    found: format!("{:?}", w.w_q.dim()),
                });
            }
        }
        if let Some(w) = weights {
            source.weights = w;
            source.weights_layer = Some(layer);
        }
        source.drawn = Some(layer);
        self.x = input;
        self.invalidate_sentence();
        self.refresh_layer_weights();
        Ok(())
    }

    /// The second sentence the pretrained model compares the typed one with (`similarity`);
    /// kept for any source, used by a pretrained one. Blank: none.
    pub fn set_other_text(&mut self, text: &str) {
        if text == self.other_text {
            return;
        }
        text.clone_into(&mut self.other_text);
        if let Source::Pretrained(source) = &mut self.source {
            source.similarity = None;
        }
    }

    /// Whether a similarity is asked for: a pretrained model draws a sentence, and a second
    /// sentence is given. Then the work for every head includes it.
    pub fn compares(&self) -> bool {
        self.is_pretrained() && !self.is_empty() && !self.other_text.trim().is_empty()
    }

    /// What the similarity is computed from, once every head's share of the layer output is in
    /// and while the similarity is not: the layer drawn, the layer output, the second sentence.
    /// `None` when none is asked for ([`compares`](Self::compares)), or it is in.
    pub fn similarity_need(&self) -> Option<SimilarityNeed<'_>> {
        let Source::Pretrained(source) = &self.source else {
            return None;
        };
        if !self.compares() || source.similarity.is_some() {
            return None;
        }
        Some(SimilarityNeed {
            layer: self.settings.maps.layer.saturating_sub(1),
            output: self.mixed.output.as_ref()?,
            other: &self.other_text,
        })
    }

    /// The similarity computed from what [`similarity_need`](Self::similarity_need) gave;
    /// ignored when none is asked for any more.
    pub fn set_similarity(&mut self, similarity: Similarity) {
        if self.similarity_need().is_none() {
            return;
        }
        if let Source::Pretrained(source) = &mut self.source {
            source.similarity = Some(similarity);
        }
    }

    /// The similarity of the typed sentence to the second one, once every head and the
    /// forward passes it needs are in (the work for every head, then the model's); `None` when
    /// none is asked for ([`compares`](Self::compares)) or it is not in yet.
    pub fn similarity(&self) -> Option<Similarity> {
        match &self.source {
            Source::Pretrained(source) if self.compares() => source.similarity,
            _ => None,
        }
    }

    /// Forgets the similarity (the mechanism's layer output changed).
    pub(super) fn clear_moved(&mut self) {
        if let Source::Pretrained(source) = &mut self.source {
            source.similarity = None;
        }
    }

    /// Checks the `layer` and `partner` settings against the source: a pretrained model's
    /// layers and heads, from 1 (a partner of 0 is the next head).
    pub(super) fn check_layer(&self, layer: usize, partner: usize) -> Result<(), EngineError> {
        let Some(model) = self.pretrained() else {
            return Ok(());
        };
        let (layers, heads) = (model.layers, model.heads);
        if !(1..=layers).contains(&layer) {
            return Err(EngineError::Shape {
                field: "layer",
                expected: format!("a layer from 1 to {layers} (the model's layers)"),
                found: layer.to_string(),
            });
        }
        if partner > heads {
            return Err(EngineError::Shape {
                field: "partner",
                expected: format!("a head from 1 to {heads}, or 0 for the next head"),
                found: partner.to_string(),
            });
        }
        Ok(())
    }

    /// The Differential Transformer's parameters on a pretrained layer, where nothing was
    /// learned: λ vectors of zeros (so λ is the paper's `λ_init` at the layer's depth until
    /// the λ slider moves) and an RMSNorm without a learned weight.
    pub(super) fn pretrained_diff_transformer(&self) -> Option<DiffTransformerParams> {
        let model = self.pretrained()?;
        // Each diff head is two of the model's heads ([`paired`]), each of the model's width.
        let d_h = model.d_model / model.heads;
        Some(DiffTransformerParams {
            depth: self.settings.maps.layer.saturating_sub(1) as u32,
            lambda_q1: vec![0.0; d_h],
            lambda_k1: vec![0.0; d_h],
            lambda_q2: vec![0.0; d_h],
            lambda_k2: vec![0.0; d_h],
            subln: vec![1.0; 2 * d_h],
            ..DiffTransformerParams::default()
        })
    }
}

/// A standard layer of `heads` heads as the Differential Transformer runs it with diff head `h`
/// made of the layer's head `h` (`A1`) and head `partners[h]` (`A2`): the query and key rows of
/// the two heads one after the other (query heads `2h` and `2h + 1`, the engine's adjacent
/// pairing), their values side by side (`2·d_h` wide), and `W_o`'s columns for them, at the
/// layer's own head width.
pub(super) fn paired(own: &Weights, heads: usize, partners: &[usize]) -> Weights {
    let d_h = own.w_q.nrows() / heads;
    let rows = |h: usize| h * d_h..(h + 1) * d_h;
    let pair = |m: &Array2<f32>| -> Array2<f32> {
        let blocks: Vec<_> = (0..heads)
            .flat_map(|h| [rows(h), rows(partners[h])])
            .map(|r| m.slice(s![r, ..]))
            .collect();
        concatenate(Axis(0), &blocks).expect("blocks of one width")
    };
    let pair_bias = |b: &Option<Array1<f32>>| {
        b.as_ref().map(|b| {
            let blocks: Vec<_> = (0..heads)
                .flat_map(|h| [rows(h), rows(partners[h])])
                .map(|r| b.slice(s![r]))
                .collect();
            concatenate(Axis(0), &blocks).expect("blocks of one vector")
        })
    };
    let w_o_t = own.w_o.t().to_owned();
    let w_o = pair(&w_o_t).t().to_owned();
    Weights::real(
        pair(&own.w_q),
        pair(&own.w_k),
        pair(&own.w_v),
        w_o,
        Biases {
            b_q: pair_bias(&own.biases.b_q),
            b_k: pair_bias(&own.biases.b_k),
            b_v: pair_bias(&own.biases.b_v),
            b_o: own.biases.b_o.clone(),
        },
        None,
        Layout {
            head_dim: Some(d_h),
            ..Layout::default()
        },
    )
    .expect("the layer's own matrices, paired, fit the layout")
}
