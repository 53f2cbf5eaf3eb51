//! A pretrained model drawn at one of its layers: the typed sentence cut into the model's word
//! pieces and run through it ([`Bert::run_layer`], layer by layer), then any mechanism
//! of the engine on the chosen layer's real projections (`W_q`, `W_k`, `W_v`, `W_o` with their
//! biases) and the real vectors entering it. The standard mechanism at the model's head count
//! draws the model's own maps; every other mechanism runs on the same projections, with its
//! own parameters from the sliders (none was learned: a standard Transformer has no gate, no
//! λ and no `W_λ`, so V2 cannot run). The Differential Transformer pairs each of the layer's
//! heads with a partner head of the same layer (`partner`; [`paired`]).
//!
//! The layer is a map setting (`layer`, from 1): a change swaps the vectors and the weights
//! and recomputes from the projections on. The forward pass runs only as far as the layer
//! drawn, in pieces of the page's work (`work.rs`: a layer's attention half, then its
//! feed-forward in blocks of rows), and what it computed is kept until
//! the word pieces change, so going back to a lower layer computes nothing of the model.

use std::sync::Arc;

use ndarray::{concatenate, s, Array1, Array2, Axis};

use super::{Explorer, Source, TokensInfo};
use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::{Biases, EngineError, Layout, MechanismKind, Weights};
use crate::model::bert::Bert;
use crate::text::{tokenize_up_to, PAGE_MAX_TOKENS};

/// What the pretrained model brings: the model, and the sentence's vectors entering each layer.
#[derive(Debug, Clone)]
pub(super) struct PretrainedSource {
    pub(super) bert: Arc<Bert>,
    /// The vectors entering the first layers for the sentence drawn, as far as they were
    /// needed (first layer first; empty for an empty sentence).
    inputs: Vec<Array2<f32>>,
    /// The word pieces' ids of the sentence drawn, so an edit that leaves them keeps the caches.
    ids: Vec<u32>,
    /// The layer (from 0) whose input is the explorer's `x`, `None` before one is.
    drawn: Option<usize>,
    /// The second sentence's embedding, once computed (`similarity`).
    other_embedding: Option<Vec<f32>>,
    /// The forward pass from the layer drawn on, with that layer's attention output the
    /// mechanism's (the explorer's layer output): the vectors leaving each layer from there.
    moved: Vec<Array2<f32>>,
    /// The similarities once computed; cleared with what they depend on.
    similarity: Option<Similarity>,
    /// The layer being computed, half-way: the input of its feed-forward and the rows of its
    /// output done so far (`pretrained_piece`).
    half: Option<Half>,
}

/// A layer of the forward pass between pieces: its attention half done, its feed-forward done
/// for the first `rows` rows of `out`.
#[derive(Debug, Clone)]
struct Half {
    h: Array2<f32>,
    out: Array2<f32>,
    rows: usize,
}

/// Rows of a layer's feed-forward one piece computes: at 384 wide and 1,536 inside, 64 rows are
/// about 75 M multiply-adds, a few milliseconds in wasm.
const FEED_FORWARD_ROWS: usize = 64;

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

impl PretrainedSource {
    /// The layer's attention in the engine's form (`layer` from 0, within the model).
    pub(super) fn weights(&self, layer: usize) -> &Weights {
        let layers = &self.bert.parts().layers;
        &layers[layer.min(layers.len() - 1)].attention
    }
}

impl Explorer {
    /// Draws the sentence with a pretrained model, at the layer of the `layer` setting (the
    /// last one when the model has fewer) and the model's own head count (the nearest the
    /// mechanism allows). Nothing of another model's training is kept: no learned gate, λ or
    /// trained settings.
    pub fn set_pretrained(&mut self, bert: Arc<Bert>) {
        let layers = bert.config().layers;
        let heads = bert.heads();
        let d = bert.config().d_model;
        self.source = Source::Pretrained(Box::new(PretrainedSource {
            bert,
            inputs: Vec::new(),
            ids: Vec::new(),
            drawn: None,
            other_embedding: None,
            moved: Vec::new(),
            similarity: None,
            half: None,
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
        self.set_pretrained_text();
    }

    /// The head count `kind` runs a pretrained layer at: the model's heads (the nearest count
    /// the mechanism allows; the Differential Transformer pairs each of them with a partner);
    /// `None` for other sources.
    pub(super) fn pretrained_heads(&self, kind: MechanismKind) -> Option<usize> {
        let bert = self.pretrained()?;
        if kind == MechanismKind::DiffTransformer {
            return Some(bert.heads());
        }
        Some(self.nearest_heads(kind, bert.heads()))
    }

    /// The head counts `kind` allows on a pretrained layer, when it fixes them: the
    /// Differential Transformer pairs each of the model's heads with another ([`paired`]).
    pub(super) fn pretrained_head_choices(&self, kind: MechanismKind) -> Option<Vec<usize>> {
        let bert = self.pretrained()?;
        (kind == MechanismKind::DiffTransformer).then(|| vec![bert.heads()])
    }

    /// The head whose map is `A2` for head `head` (from 0) of the Differential Transformer on
    /// a pretrained layer: the `partner` setting's (from 1), or the next head when it is 0.
    pub fn partner_of(&self, head: usize) -> Option<usize> {
        let heads = self.pretrained()?.heads();
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
        let heads = source.bert.heads();
        let own = source.weights(self.settings.maps.layer.saturating_sub(1));
        let partners: Vec<usize> = (0..heads)
            .map(|h| self.partner_of(h).unwrap_or(h))
            .collect();
        Some(paired(own, heads, &partners))
    }

    /// Whether a pretrained model draws the sentence.
    pub fn is_pretrained(&self) -> bool {
        matches!(self.source, Source::Pretrained(_))
    }

    /// The pretrained model drawing the sentence, if one does.
    pub fn pretrained(&self) -> Option<&Bert> {
        match &self.source {
            Source::Pretrained(p) => Some(&p.bert),
            _ => None,
        }
    }

    /// How many layers the source has: the pretrained model's, else 1 (one attention layer).
    pub fn layers(&self) -> usize {
        self.pretrained().map_or(1, |b| b.config().layers)
    }

    /// The text cut into the pretrained model's word pieces (at most its positions, `[CLS]`
    /// and `[SEP]` included) and run through it; an empty or blank text draws nothing. The
    /// word tokens are kept too, so another model can embed them again.
    pub(super) fn set_pretrained_text(&mut self) -> TokensInfo {
        let text = self.text.as_str();
        let Source::Pretrained(source) = &mut self.source else {
            unreachable!("set_pretrained_text is called with a pretrained source");
        };
        let bert = Arc::clone(&source.bert);
        let positions = bert.config().positions;
        let blank = text.trim().is_empty();
        let all = bert.tokenizer().encode(text, usize::MAX);
        let pieces = if all.ids.len() > positions {
            bert.tokenizer().encode(text, positions)
        } else {
            all.clone()
        };
        let total = all.ids.len();
        let ids = if blank {
            Vec::new()
        } else {
            pieces.ids.clone()
        };
        if ids != source.ids || (source.inputs.is_empty() && !ids.is_empty()) {
            // Only the embeddings now: the layers up to the one drawn follow in the work's
            // pieces (`pretrained_piece`).
            source.inputs = if ids.is_empty() {
                Vec::new()
            } else {
                vec![bert
                    .embeddings(&ids)
                    .expect("the tokenizer's pieces fit the model")]
            };
            source.ids = ids;
            source.drawn = None;
            source.moved.clear();
            source.similarity = None;
            source.half = None;
            self.labels = if blank { Vec::new() } else { pieces.pieces };
            self.tokens = tokenize_up_to(text, PAGE_MAX_TOKENS).0;
            self.x = Array2::zeros((0, bert.config().d_model));
            self.invalidate_sentence();
        }
        TokensInfo {
            tokens: self.labels.clone(),
            total: if blank { 0 } else { total },
            truncated: !blank && pieces.truncated,
        }
    }

    /// After a change of the `layer` setting: what was computed for another layer is stale
    /// (the vectors and weights change; the work's next piece brings the layer in).
    pub(super) fn refresh_pretrained_input(&mut self) {
        let layer = self.settings.maps.layer.saturating_sub(1);
        if let Source::Pretrained(source) = &self.source {
            if source.drawn.is_some() && source.drawn != Some(layer) {
                self.invalidate_sentence();
            }
        }
    }

    /// One piece of the forward pass toward the layer drawn: the next layer's attention half,
    /// or a block of its feed-forward's rows ([`FEED_FORWARD_ROWS`]), or, once the layer's input
    /// is in, that input put in `x` (the projections and maps follow). False when the layer
    /// drawn is in (and for other sources). The pieces give the bits of `Bert::run_layer`.
    pub(super) fn pretrained_piece(&mut self) -> bool {
        let layer = self.settings.maps.layer.saturating_sub(1);
        let Source::Pretrained(source) = &mut self.source else {
            return false;
        };
        if source.ids.is_empty() || source.drawn == Some(layer) {
            return false;
        }
        if let Some(input) = source.inputs.get(layer) {
            self.x = input.clone();
            source.drawn = Some(layer);
            self.invalidate_sentence();
            return true;
        }
        let n = source.inputs.len() - 1;
        let bert = &source.bert;
        let Some(half) = &mut source.half else {
            let h = bert
                .attention_half(n, source.inputs[n].clone())
                .expect("the model's own layer on vectors of its width");
            let out = Array2::zeros(h.dim());
            source.half = Some(Half { h, out, rows: 0 });
            return true;
        };
        let tokens = half.h.nrows();
        let rows = half.rows..(half.rows + FEED_FORWARD_ROWS).min(tokens);
        let block = bert
            .feed_forward_rows(n, half.h.slice(s![rows.clone(), ..]))
            .expect("the model's own layer on vectors of its width");
        half.out.slice_mut(s![rows.clone(), ..]).assign(&block);
        half.rows = rows.end;
        if half.rows == tokens {
            let out = std::mem::take(&mut half.out);
            source.half = None;
            source.inputs.push(out);
            self.recomputations.model_layers += 1;
        }
        true
    }

    /// The second sentence the pretrained model compares the typed one with (`similarity`);
    /// kept for any source, used by a pretrained one. Blank: none.
    pub fn set_other_text(&mut self, text: &str) {
        if text == self.other_text {
            return;
        }
        text.clone_into(&mut self.other_text);
        if let Source::Pretrained(source) = &mut self.source {
            source.other_embedding = None;
            source.similarity = None;
        }
    }

    /// Whether a similarity is asked for: a pretrained model draws a sentence, and a second
    /// sentence is given. Then the work for every head includes it (`similarity_piece`).
    pub fn compares(&self) -> bool {
        self.is_pretrained() && !self.is_empty() && !self.other_text.trim().is_empty()
    }

    /// The similarity of the typed sentence to the second one, once every head and the
    /// forward passes it needs are in (`work(Need::Every)` brings them, a piece at a time);
    /// `None` when none is asked for ([`compares`](Self::compares)) or it is not in yet.
    pub fn similarity(&self) -> Option<Similarity> {
        match &self.source {
            Source::Pretrained(source) if self.compares() => source.similarity,
            _ => None,
        }
    }

    /// Forgets what the mechanism's layer output moved (it changed).
    pub(super) fn clear_moved(&mut self) {
        if let Source::Pretrained(source) = &mut self.source {
            source.moved.clear();
            source.similarity = None;
        }
    }

    /// One piece of the similarity, once every head's share of the layer output is in: the
    /// second sentence through the model, one more layer of the typed one, or one layer of the
    /// forward pass after the mechanism; then the two cosines. False when there is nothing to
    /// do (no similarity asked for, or it is in).
    pub(super) fn similarity_piece(&mut self) -> bool {
        if !self.compares() {
            return false;
        }
        let layer = self.settings.maps.layer.saturating_sub(1);
        let Some(output) = self.mixed.output.as_ref() else {
            return false;
        };
        let other_text = self.other_text.as_str();
        let Source::Pretrained(source) = &mut self.source else {
            return false;
        };
        if source.similarity.is_some() {
            return false;
        }
        let bert = Arc::clone(&source.bert);
        let layers = bert.config().layers;
        let other = match &source.other_embedding {
            Some(other) => other,
            None => {
                let pieces = bert.tokenizer().encode(other_text, bert.config().positions);
                let forward = bert
                    .forward(&pieces.ids, false)
                    .expect("the tokenizer's pieces fit the model");
                source.other_embedding = Some(forward.embedding);
                return true;
            }
        };
        if source.inputs.len() <= layers {
            let n = source.inputs.len() - 1;
            let next = bert
                .run_layer(n, source.inputs[n].clone())
                .expect("the model's own layer on vectors of its width");
            source.inputs.push(next);
            self.recomputations.model_layers += 1;
            return true;
        }
        if source.moved.len() < layers - layer {
            let next = match source.moved.last() {
                None => bert.finish_layer(layer, source.inputs[layer].clone(), output.clone()),
                Some(x) => bert.run_layer(layer + source.moved.len(), x.clone()),
            }
            .expect("the layer output has the layer's shape");
            source.moved.push(next);
            self.recomputations.model_layers += 1;
            return true;
        }
        let cosine = |x: &Array2<f32>| crate::model::bert::cosine(&Bert::pool(x), other);
        source.similarity = Some(Similarity {
            model: cosine(&source.inputs[layers]),
            mechanism: cosine(source.moved.last().expect("the moved forward pass is in")),
        });
        true
    }

    /// Checks the `layer` and `partner` settings against the source: a pretrained model's
    /// layers and heads, from 1 (a partner of 0 is the next head).
    pub(super) fn check_layer(&self, layer: usize, partner: usize) -> Result<(), EngineError> {
        let Some(bert) = self.pretrained() else {
            return Ok(());
        };
        let (layers, heads) = (bert.config().layers, bert.heads());
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
        let bert = self.pretrained()?;
        // Each diff head is two of the model's heads ([`paired`]), each of the model's width.
        let d_h = bert.config().d_model / bert.heads();
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
