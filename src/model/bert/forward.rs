//! BERT's forward pass on the engine, as transformers' `BertModel` (post-LayerNorm layers):
//!
//! ```text
//! x₀ = LayerNorm(word[id] + token_type[0] + position[i])
//! per layer:  A_h = softmax(Q_h·K_hᵀ / √d_h)          the engine's standard mechanism
//!             h   = LayerNorm(x + concat_h(A_h·V_h)·W_oᵀ + b_o)
//!             x'  = LayerNorm(h + GELU(h·W_inᵀ + b_in)·W_outᵀ + b_out)
//! embedding = normalize(mean over tokens of the last x)
//! ```
//!
//! The products run on the engine's kernels with every weight packed once at load; the maps are
//! [`engine::base_maps_into`](crate::engine::base_maps_into) of [`Mechanism::Standard`] over the layer's
//! projections, so they are the bits `engine::run` gives on the vectors entering the layer
//! (tests/minilm.rs checks it), and the values are mixed as the engine's `output` mixes them.
//! One thread, nothing platform-dependent: the same code runs in wasm.

use ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, Axis};

use super::ops::{self, gelu};
use super::{Bert, PackedLayer};
use crate::engine::kernels::PackedB;
use crate::engine::numeric::saturate_all;
use crate::engine::{base_maps_into, mix_into, BaseMaps, Block, Mechanism, Projected, Projection};
use crate::model::ModelError;
use crate::text::wordpiece::Pieces;

/// What one layer saw and did, kept when asked ([`Bert::forward`]'s `trace`).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerTrace {
    /// The vectors entering the layer, `(tokens, d)`: with [`Bert::attention_weights`], the
    /// input of any mechanism of the engine on this layer.
    pub input: Array2<f32>,
    /// The layer's attention maps, `(heads, queries, keys)`, each row a softmax.
    pub attention: Array3<f32>,
}

/// The result of one forward pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Forward {
    /// The last layer's vectors, `(tokens, d)`.
    pub hidden: Array2<f32>,
    /// The sentence embedding: the mean of `hidden`'s rows, L2-normalised.
    pub embedding: Vec<f32>,
    /// Every layer's input and maps, first layer first (empty unless traced).
    pub layers: Vec<LayerTrace>,
}

/// A text cut into word pieces and run through the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The word pieces (`[CLS]` … `[SEP]`), their ids and offsets, and whether the text was cut.
    pub pieces: Pieces,
    /// The forward pass over them.
    pub forward: Forward,
}

impl Bert {
    /// `text` cut into at most `positions` word pieces (a longer text is cut, and
    /// `pieces.truncated` says so) and run through the model.
    pub fn encode(&self, text: &str, trace: bool) -> Result<Encoded, ModelError> {
        let pieces = self.tokenizer.encode(text, self.config().positions);
        let forward = self.forward(&pieces.ids, trace)?;
        Ok(Encoded { pieces, forward })
    }

    /// The forward pass over word-piece ids (all of token type 0, one sentence, no padding).
    /// With `trace`, every layer's input and attention maps are kept.
    pub fn forward(&self, ids: &[u32], trace: bool) -> Result<Forward, ModelError> {
        let c = self.config();
        let mut x = self.embeddings(ids)?;
        let mut layers = Vec::with_capacity(if trace { c.layers } else { 0 });
        for (n, (parts, packed)) in self.parts.layers.iter().zip(&self.packed).enumerate() {
            let input = trace.then(|| x.clone());
            let (next, attention) = self.layer(n, parts, packed, x)?;
            if let Some(input) = input {
                layers.push(LayerTrace { input, attention });
            }
            x = next;
        }
        let embedding = Bert::pool(&x);
        Ok(Forward {
            hidden: x,
            embedding,
            layers,
        })
    }

    /// The vectors entering the first layer for word-piece ids (all of token type 0): refused,
    /// as [`forward`](Self::forward) refuses them, when there are none, more than the model's
    /// positions, or one outside the vocabulary.
    pub fn embeddings(&self, ids: &[u32]) -> Result<Array2<f32>, ModelError> {
        let c = self.config();
        if ids.is_empty() || ids.len() > c.positions {
            return Err(ModelError::Invalid(format!(
                "{} word pieces; this model reads 1 to {} (its positions)",
                ids.len(),
                c.positions
            )));
        }
        if let Some(&id) = ids
            .iter()
            .find(|&&id| id as usize >= self.parts.vocab.len())
        {
            return Err(ModelError::Invalid(format!(
                "word-piece id {id} outside the vocabulary of {}",
                self.parts.vocab.len()
            )));
        }
        Ok(self.embed(ids))
    }

    /// Layer `n` (from 0) on the vectors entering it: the vectors entering the next layer (the
    /// last layer's: the model's output), the bits [`forward`](Self::forward) computes.
    pub fn run_layer(&self, n: usize, x: Array2<f32>) -> Result<Array2<f32>, ModelError> {
        let (parts, packed) = self.layer_parts(n, x.ncols())?;
        Ok(self.layer(n, parts, packed, x)?.0)
    }

    /// `LayerNorm(word[id] + token_type[0] + position[i])`, added in transformers' order.
    fn embed(&self, ids: &[u32]) -> Array2<f32> {
        let p = &self.parts;
        let d = p.config.d_model;
        let mut x = Array2::<f32>::zeros((ids.len(), d));
        for (i, (mut row, &id)) in x.axis_iter_mut(Axis(0)).zip(ids).enumerate() {
            let cells = row.as_slice_mut().expect("a fresh array is contiguous");
            p.word.add_row_to(id as usize, cells);
            for ((v, &t), &q) in cells
                .iter_mut()
                .zip(p.token_type.row(0))
                .zip(p.position.row(i))
            {
                *v = (*v + t) + q;
            }
        }
        saturate_all(&mut x);
        ops::apply(&mut x, &p.embedding_norm, p.config.layer_norm_eps);
        x
    }

    /// One encoder layer: the next vectors, and the layer's maps.
    fn layer(
        &self,
        n: usize,
        parts: &super::LayerParts,
        packed: &PackedLayer,
        x: Array2<f32>,
    ) -> Result<(Array2<f32>, Array3<f32>), ModelError> {
        let (attention_out, maps) = self.attention(n, parts, packed, &x)?;
        Ok((self.after_attention(parts, packed, x, attention_out), maps))
    }

    /// A layer's attention: what `W_o` makes of its heads (with `b_o`), and its maps.
    fn attention(
        &self,
        n: usize,
        parts: &super::LayerParts,
        packed: &PackedLayer,
        x: &Array2<f32>,
    ) -> Result<(Array2<f32>, Array3<f32>), ModelError> {
        let w = &parts.attention;
        let projected = Projected {
            q: affine(x.view(), &packed.q, bias(&w.biases.b_q)),
            k: affine(x.view(), &packed.k, bias(&w.biases.b_k)),
            v: affine(x.view(), &packed.v, bias(&w.biases.b_v)),
            lambda_logits: None,
            gate_logits: None,
        };
        let projection = Projection::Tokens {
            projected,
            rotated_for: None,
        };
        let (heads, tokens) = (self.heads(), x.nrows());
        let invalid =
            |e: crate::engine::EngineError| ModelError::Invalid(format!("layer {}: {e}", n + 1));
        let mut base = BaseMaps::default();
        let block = Block::all(heads, tokens);
        let standard = Mechanism::Standard;
        base_maps_into(&standard, &projection, w, heads, false, &block, &mut base)
            .map_err(invalid)?;
        let BaseMaps::Attention(maps) = base else {
            unreachable!("the standard mechanism has one map per head")
        };
        let mut mixed = Array2::zeros((0, 0));
        let map_of = |h: usize| maps.index_axis(Axis(0), h);
        mix_into(
            &standard,
            &projection,
            w,
            heads,
            0..heads,
            &map_of,
            &mut mixed,
        )
        .map_err(invalid)?;
        let attention_out = affine(mixed.view(), &packed.o, bias(&w.biases.b_o));
        Ok((attention_out, maps))
    }

    /// The rest of a layer after its attention: `h = LayerNorm(x + attention_out)`, then
    /// `LayerNorm(h + W_out·GELU(W_in·h + b_in) + b_out)`.
    fn after_attention(
        &self,
        parts: &super::LayerParts,
        packed: &PackedLayer,
        x: Array2<f32>,
        attention_out: Array2<f32>,
    ) -> Array2<f32> {
        let h = self.attention_norm(parts, x, attention_out);
        self.feed_forward(parts, packed, h.view())
    }

    /// `LayerNorm(x + attention_out)`, row by row.
    fn attention_norm(
        &self,
        parts: &super::LayerParts,
        x: Array2<f32>,
        attention_out: Array2<f32>,
    ) -> Array2<f32> {
        let mut h = attention_out;
        h += &x;
        saturate_all(&mut h);
        ops::apply(&mut h, &parts.attention_norm, self.config().layer_norm_eps);
        h
    }

    /// `LayerNorm(h + W_out·GELU(W_in·h + b_in) + b_out)` of some rows `h`: each row alone, so
    /// a block of rows gets the bits the whole gets.
    fn feed_forward(
        &self,
        parts: &super::LayerParts,
        packed: &PackedLayer,
        h: ArrayView2<f32>,
    ) -> Array2<f32> {
        let mut f = affine(h, &packed.w_in, Some(parts.b_in.as_slice().into()));
        f.mapv_inplace(gelu);
        let mut out = affine(f.view(), &packed.w_out, Some(parts.b_out.as_slice().into()));
        out += &h;
        saturate_all(&mut out);
        ops::apply(&mut out, &parts.output_norm, self.config().layer_norm_eps);
        out
    }

    /// The first half of layer `n` (from 0) on the vectors entering it:
    /// `LayerNorm(x + Attention(x))`, what its feed-forward takes. With
    /// [`feed_forward_rows`](Self::feed_forward_rows) over every row, the bits of
    /// [`run_layer`](Self::run_layer), in pieces a caller can spread over time.
    pub fn attention_half(&self, n: usize, x: Array2<f32>) -> Result<Array2<f32>, ModelError> {
        let (parts, packed) = self.layer_parts(n, x.ncols())?;
        let (attention_out, _) = self.attention(n, parts, packed, &x)?;
        Ok(self.attention_norm(parts, x, attention_out))
    }

    /// The second half of layer `n` on some rows `h` of [`attention_half`](Self::attention_half)'s
    /// result: those rows of the vectors entering the next layer.
    pub fn feed_forward_rows(
        &self,
        n: usize,
        h: ArrayView2<f32>,
    ) -> Result<Array2<f32>, ModelError> {
        let (parts, packed) = self.layer_parts(n, h.ncols())?;
        Ok(self.feed_forward(parts, packed, h))
    }

    /// Layer `n`'s parts, checked against vectors of `width` (the model's).
    fn layer_parts(
        &self,
        n: usize,
        width: usize,
    ) -> Result<(&super::LayerParts, &PackedLayer), ModelError> {
        let (Some(parts), Some(packed)) = (self.parts.layers.get(n), self.packed.get(n)) else {
            return Err(ModelError::Invalid(format!(
                "layer {}; this model has {}",
                n + 1,
                self.parts.layers.len()
            )));
        };
        if width != self.config().d_model {
            return Err(ModelError::Invalid(format!(
                "vectors of width {width}; this model's are {}",
                self.config().d_model
            )));
        }
        Ok((parts, packed))
    }

    /// Layer `n` (from 0) with its attention's output (`attention_out`, `(tokens, d)`: what
    /// `W_o` made of the heads) given, not computed: the vectors entering the next layer. What
    /// another mechanism's layer output does to the rest of the model.
    pub fn finish_layer(
        &self,
        n: usize,
        x: Array2<f32>,
        attention_out: Array2<f32>,
    ) -> Result<Array2<f32>, ModelError> {
        let (parts, packed) = self.layer_parts(n, x.ncols())?;
        if attention_out.dim() != x.dim() {
            return Err(ModelError::Invalid(format!(
                "an attention output of {:?} for vectors of {:?}",
                attention_out.dim(),
                x.dim()
            )));
        }
        Ok(self.after_attention(parts, packed, x, attention_out))
    }

    /// The sentence embedding of the last layer's vectors: their mean, L2-normalised.
    pub fn pool(hidden: &Array2<f32>) -> Vec<f32> {
        let mut embedding = ops::mean_rows(hidden);
        ops::l2_normalize(&mut embedding);
        embedding
    }
}

fn bias(b: &Option<Array1<f32>>) -> Option<ArrayView1<'_, f32>> {
    b.as_ref().map(|b| b.view())
}

/// `saturate(x·Wᵀ + b)` with `Wᵀ` packed: the engine's `affine` without packing `W` again.
fn affine(x: ArrayView2<f32>, w_t: &PackedB, b: Option<ArrayView1<f32>>) -> Array2<f32> {
    let (m, n) = (x.nrows(), w_t.cols());
    let mut y = Array2::<f32>::zeros((m, n));
    let x = x.as_standard_layout();
    let (a, k) = (x.as_slice().expect("standard layout"), x.ncols());
    let c = y.as_slice_mut().expect("a fresh array is contiguous");
    // Columns in blocks whose panels of `Wᵀ` stay in a core's L2 cache while every row passes
    // over them: one pass over a 2.4 MB feed-forward matrix per four rows would come from
    // memory each time. Each cell is summed the same way whatever the block (the kernels'
    // order), so the bits are those of one call.
    let block = (COLUMN_BLOCK_BYTES / (4 * k.max(1))).max(16) / 16 * 16;
    for start in (0..n).step_by(block) {
        w_t.mul_rows(a, k, 0..m, start..(start + block).min(n), 1.0, c, n);
    }
    if let Some(b) = b {
        y += &b;
        saturate_all(&mut y);
    }
    y
}

/// The bytes of `Wᵀ`'s panels one block of columns holds (see [`affine`]).
const COLUMN_BLOCK_BYTES: usize = 192 * 1024;
