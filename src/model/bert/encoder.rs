//! One text through a BERT in pieces short enough for a page's frame: the text cut into word
//! pieces ([`Encoder::set_text`]), the layers run up to the one a caller wants (a layer's
//! attention half, then its feed-forward in blocks of rows: [`Encoder::work`]), the vectors
//! entering each layer kept until the word pieces change (so going back to a lower layer
//! computes nothing of the model), and the similarity to a second sentence, with a layer's
//! attention output given by someone else (another mechanism's) in place of the model's own
//! ([`Encoder::compare`], [`Encoder::similarity_piece`]).
//!
//! It knows nothing of the explorer: what one layer needs (the vectors entering it and its
//! attention's weights) is handed over by whoever drives it, natively `crate::pretrained::Feed`,
//! in the page the model's own wasm module (`web-pretrained/`, driven by
//! `www/explorer/pretrained.js`). The pieces give the bits of [`Bert::run_layer`].

use std::sync::Arc;

use ndarray::{s, Array2, ArrayView2};

use super::{cosine, Bert};
use crate::engine::Weights;

/// Rows of a layer's feed-forward one piece computes: at 384 wide and 1,536 inside, 64 rows are
/// about 75 M multiply-adds, a few milliseconds in wasm.
pub const FEED_FORWARD_ROWS: usize = 64;

/// A text cut into the model's word pieces (at most its positions, `[CLS]` and `[SEP]`
/// included); a blank text has none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextPieces {
    /// The word pieces, `[CLS]` … `[SEP]`.
    pub pieces: Vec<String>,
    /// Their ids in the vocabulary.
    pub ids: Vec<u32>,
    /// How many pieces the whole text has (more than `pieces` when it was cut).
    pub total: usize,
    /// Whether the text was cut at the model's positions.
    pub truncated: bool,
}

/// How close the text is to a second one, by the model's sentence embeddings (the cosine of
/// the two): with the model's own attention everywhere, and with a layer's attention output
/// replaced by the one given ([`Encoder::compare`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Similarity {
    /// With the model's own attention everywhere.
    pub model: f32,
    /// With the given attention output at its layer.
    pub mechanism: f32,
}

/// A layer of the forward pass between pieces: its attention half done, its feed-forward done
/// for the first `rows` rows of `out`.
#[derive(Debug, Clone)]
struct Half {
    h: Array2<f32>,
    out: Array2<f32>,
    rows: usize,
}

/// What the similarity is of: the second sentence, and a layer's attention output to put in
/// place of the model's own there.
#[derive(Debug, Clone)]
struct Comparison {
    layer: usize,
    output: Array2<f32>,
    other: String,
}

/// One text through a BERT, in pieces (see the module's header).
#[derive(Debug, Clone)]
pub struct Encoder {
    bert: Arc<Bert>,
    /// The word pieces' ids of the text, so an edit that leaves them keeps what was computed.
    ids: Vec<u32>,
    /// The vectors entering the first layers for the text, as far as they were needed (first
    /// layer first; after the last layer, the model's output), empty for a blank text.
    inputs: Vec<Array2<f32>>,
    /// The layer being computed, half-way: the input of its feed-forward and the rows of its
    /// output done so far.
    half: Option<Half>,
    /// What the similarity is asked of, once asked.
    comparison: Option<Comparison>,
    /// The second sentence's embedding, once computed, with its text.
    other_embedding: Option<(String, Vec<f32>)>,
    /// The forward pass from the compared layer on, with that layer's attention output the one
    /// given: the vectors leaving each layer from there.
    moved: Vec<Array2<f32>>,
    /// The similarity once computed; cleared with what it depends on.
    similarity: Option<Similarity>,
    /// Layers of the model run so far (tests read it: nothing is computed twice).
    model_layers: u64,
}

impl Encoder {
    /// An encoder over `bert` with no text.
    pub fn new(bert: Arc<Bert>) -> Encoder {
        Encoder {
            bert,
            ids: Vec::new(),
            inputs: Vec::new(),
            half: None,
            comparison: None,
            other_embedding: None,
            moved: Vec::new(),
            similarity: None,
            model_layers: 0,
        }
    }

    /// The model.
    pub fn bert(&self) -> &Bert {
        &self.bert
    }

    /// How many of the model's layers were run so far.
    pub fn model_layers(&self) -> u64 {
        self.model_layers
    }

    /// Cuts `text` into the model's word pieces (at most its positions, `[CLS]` and `[SEP]`
    /// included; a longer text is cut, and the pieces say so) and embeds them; what was
    /// computed stays while the pieces do. A blank text has none.
    pub fn set_text(&mut self, text: &str) -> TextPieces {
        let bert = Arc::clone(&self.bert);
        let positions = bert.config().positions;
        if text.trim().is_empty() {
            self.forget(Vec::new());
            return TextPieces::default();
        }
        let all = bert.tokenizer().encode(text, usize::MAX);
        let total = all.ids.len();
        let pieces = if total > positions {
            bert.tokenizer().encode(text, positions)
        } else {
            all
        };
        if pieces.ids != self.ids || self.inputs.is_empty() {
            self.forget(pieces.ids.clone());
            // Only the embeddings now: the layers follow in pieces (`work`).
            self.inputs = vec![bert
                .embeddings(&self.ids)
                .expect("the tokenizer's pieces fit the model")];
        }
        TextPieces {
            truncated: pieces.truncated,
            pieces: pieces.pieces,
            ids: pieces.ids,
            total,
        }
    }

    /// Forgets everything computed for the text's pieces, which are now `ids`.
    fn forget(&mut self, ids: Vec<u32>) {
        self.ids = ids;
        self.inputs.clear();
        self.half = None;
        self.comparison = None;
        self.moved.clear();
        self.similarity = None;
    }

    /// The vectors entering layer `layer` (from 0; the model's own), once computed.
    pub fn input(&self, layer: usize) -> Option<&Array2<f32>> {
        self.inputs.get(layer)
    }

    /// Layer `layer`'s attention (from 0, within the model) in the engine's form.
    pub fn attention(&self, layer: usize) -> &Weights {
        let layers = &self.bert.parts().layers;
        &layers[layer.min(layers.len() - 1)].attention
    }

    /// One piece of the forward pass toward the vectors entering layer `layer` (from 0): the
    /// next layer's attention half, or a block of its feed-forward's rows
    /// ([`FEED_FORWARD_ROWS`]). False when they are in (and for a blank text). The pieces give
    /// the bits of [`Bert::run_layer`].
    pub fn work(&mut self, layer: usize) -> bool {
        if self.ids.is_empty() || self.inputs.len() > layer {
            return false;
        }
        self.layer_piece();
        true
    }

    /// One piece of the next layer the text has not been through.
    fn layer_piece(&mut self) {
        let n = self.inputs.len() - 1;
        let bert = &self.bert;
        let Some(half) = &mut self.half else {
            let h = bert
                .attention_half(n, self.inputs[n].clone())
                .expect("the model's own layer on vectors of its width");
            let out = Array2::zeros(h.dim());
            self.half = Some(Half { h, out, rows: 0 });
            return;
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
            self.half = None;
            self.inputs.push(out);
            self.model_layers += 1;
        }
    }

    /// What the similarity is of: the second sentence `other`, and `output` in place of layer
    /// `layer`'s attention output (from 0; `(tokens, d)`, what `W_o` makes of the heads, with
    /// `b_o`). What was computed for the same sentence, layer and output stays.
    pub fn compare(&mut self, layer: usize, output: ArrayView2<f32>, other: &str) {
        if self
            .other_embedding
            .as_ref()
            .is_some_and(|(text, _)| text != other)
        {
            self.other_embedding = None;
            self.similarity = None;
        }
        let same = self
            .comparison
            .as_ref()
            .is_some_and(|c| c.layer == layer && c.output == output && c.other == other);
        if !same {
            self.moved.clear();
            self.similarity = None;
            self.comparison = Some(Comparison {
                layer,
                output: output.to_owned(),
                other: other.to_string(),
            });
        }
    }

    /// One piece of the similarity asked for ([`compare`](Self::compare)): the second sentence
    /// through the model, one more layer of the text, or one layer of the forward pass after
    /// the given attention output; then the two cosines. False when there is nothing to do
    /// (none asked for, a blank text, or it is in).
    pub fn similarity_piece(&mut self) -> bool {
        let Some(comparison) = &self.comparison else {
            return false;
        };
        if self.similarity.is_some() || self.ids.is_empty() {
            return false;
        }
        let bert = Arc::clone(&self.bert);
        let layers = bert.config().layers;
        let layer = comparison.layer.min(layers - 1);
        let other = match &self.other_embedding {
            Some((_, other)) => other,
            None => {
                let pieces = bert
                    .tokenizer()
                    .encode(&comparison.other, bert.config().positions);
                let forward = bert
                    .forward(&pieces.ids, false)
                    .expect("the tokenizer's pieces fit the model");
                self.other_embedding = Some((comparison.other.clone(), forward.embedding));
                return true;
            }
        };
        if self.inputs.len() <= layers {
            if self.half.is_some() {
                self.layer_piece();
            } else {
                let n = self.inputs.len() - 1;
                let next = bert
                    .run_layer(n, self.inputs[n].clone())
                    .expect("the model's own layer on vectors of its width");
                self.inputs.push(next);
                self.model_layers += 1;
            }
            return true;
        }
        if self.moved.len() < layers - layer {
            let next = match self.moved.last() {
                None => {
                    bert.finish_layer(layer, self.inputs[layer].clone(), comparison.output.clone())
                }
                Some(x) => bert.run_layer(layer + self.moved.len(), x.clone()),
            }
            .expect("the layer output has the layer's shape");
            self.moved.push(next);
            self.model_layers += 1;
            return true;
        }
        let cosine = |x: &Array2<f32>| cosine(&Bert::pool(x), other);
        self.similarity = Some(Similarity {
            model: cosine(&self.inputs[layers]),
            mechanism: cosine(self.moved.last().expect("the moved forward pass is in")),
        });
        true
    }

    /// The similarity asked for, once its pieces are in.
    pub fn similarity(&self) -> Option<Similarity> {
        self.similarity
    }
}
