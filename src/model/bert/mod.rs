//! A real pretrained BERT on the engine: all-MiniLM-L6-v2 (6 layers, 12 heads, d = 384, a
//! vocabulary of 30,522 word pieces; docs/MINILM.md), computed as Hugging Face transformers'
//! `BertModel` computes it, then mean-pooled and L2-normalised as sentence-transformers does.
//!
//! * `file`: the weights file (the project's container, `"task": "bert"`, matrices in half
//!   floats, the vocabulary and the tokenizer's settings in the header), written and read;
//! * `forward`: the forward pass, each layer's attention by the engine's standard mechanism
//!   ([`engine::base_maps_into`](crate::engine::base_maps_into)), so its maps are the engine's, and the
//!   vectors entering each layer kept on request ([`Forward`]);
//! * `ops`: LayerNorm, the exact (erf) GELU, mean pooling, L2 normalisation;
//! * `encoder`: one text through the model in pieces short enough for a page's frame, the
//!   vectors entering each layer kept, and the similarity to a second sentence ([`Encoder`]);
//! * `convert` (native only): the Hugging Face files (`model.safetensors`, `config.json`,
//!   `tokenizer.json`) to [`BertParts`].
//!
//! Every layer's attention is also there in the engine's form ([`Bert::attention_weights`]:
//! `W_q`, `W_k`, `W_v`, `W_o` with their biases, 12 heads of the plain layout, `d / 12` wide),
//! so every mechanism of the engine can run on a layer's real projections and the real vectors
//! entering it ([`Forward::layers`]).

#[cfg(not(target_arch = "wasm32"))]
pub mod convert;
mod encoder;
mod file;
mod forward;
mod ops;

use ndarray::Array2;

pub use encoder::{Encoder, Similarity, TextPieces, FEED_FORWARD_ROWS};
pub use file::{BERT_TASK, BERT_VERSION};
pub use forward::{Encoded, Forward, LayerTrace};
pub use ops::{cosine, gelu, layer_norm};

use super::ModelError;
use crate::engine::kernels::PackedB;
use crate::engine::{Biases, Layout, Weights};
use crate::text::wordpiece::{WordPiece, WordPieceSettings};

/// The sizes of a BERT, as `config.json` gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BertConfig {
    /// `hidden_size`, `d`.
    pub d_model: usize,
    /// `num_hidden_layers`.
    pub layers: usize,
    /// `num_attention_heads`: each `d / heads` wide.
    pub heads: usize,
    /// `intermediate_size`, the feed-forward width.
    pub intermediate: usize,
    /// `max_position_embeddings`: the most word pieces one text may have.
    pub positions: usize,
    /// `type_vocab_size`: segment types (a single sentence is all type 0).
    pub type_vocab: usize,
    /// `layer_norm_eps`.
    pub layer_norm_eps: f32,
}

/// A LayerNorm's scale and shift, `d` each.
#[derive(Debug, Clone, PartialEq)]
pub struct Norm {
    /// `γ` (`weight`).
    pub weight: Vec<f32>,
    /// `β` (`bias`).
    pub bias: Vec<f32>,
}

/// One encoder layer's parameters, PyTorch layout (`[out, in]`).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerParts {
    /// The self-attention's projections and biases, in the engine's form.
    pub attention: Weights,
    /// The LayerNorm after attention and its residual.
    pub attention_norm: Norm,
    /// The feed-forward's first projection, `(intermediate, d)`, and its bias.
    pub w_in: Array2<f32>,
    /// Its bias, `intermediate` values.
    pub b_in: Vec<f32>,
    /// The second projection, `(d, intermediate)`.
    pub w_out: Array2<f32>,
    /// Its bias, `d` values.
    pub b_out: Vec<f32>,
    /// The LayerNorm after the feed-forward and its residual.
    pub output_norm: Norm,
}

/// Everything a BERT file holds, before the products are packed.
#[derive(Debug, Clone, PartialEq)]
pub struct BertParts {
    /// The model's name (`all-MiniLM-L6-v2`).
    pub name: String,
    /// Where the weights come from, and their licence.
    pub source: String,
    /// The sizes.
    pub config: BertConfig,
    /// The vocabulary, in id order.
    pub vocab: Vec<String>,
    /// The tokenizer's settings.
    pub tokenizer: WordPieceSettings,
    /// Word vectors, `(vocab, d)`, kept as half floats (the largest table: 23 MB so, 47 in
    /// `f32`); a text's rows are widened as it is embedded.
    pub word: HalfTable,
    /// Position vectors, `(positions, d)`.
    pub position: Array2<f32>,
    /// Token-type vectors, `(type_vocab, d)`.
    pub token_type: Array2<f32>,
    /// The LayerNorm of the embeddings.
    pub embedding_norm: Norm,
    /// The encoder layers.
    pub layers: Vec<LayerParts>,
}

/// A matrix of half floats, row-major, read a row at a time as `f32`.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfTable {
    codes: Vec<u16>,
    rows: usize,
    cols: usize,
}

impl HalfTable {
    /// Each value of `m` rounded to the nearest half float (ties to even).
    pub fn from_f32(m: &Array2<f32>) -> HalfTable {
        HalfTable {
            codes: m
                .iter()
                .map(|&v| half::f16::from_f32(v).to_bits())
                .collect(),
            rows: m.nrows(),
            cols: m.ncols(),
        }
    }

    /// The table of `codes`, `rows × cols` of them.
    pub(crate) fn from_codes(codes: Vec<u16>, rows: usize, cols: usize) -> Option<HalfTable> {
        (rows.checked_mul(cols) == Some(codes.len())).then_some(HalfTable { codes, rows, cols })
    }

    /// `(rows, cols)`.
    pub fn dim(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The half floats' bits, row-major.
    pub fn codes(&self) -> &[u16] {
        &self.codes
    }

    /// Row `r` as `f32`, added into `out` (`cols` values).
    pub fn add_row_to(&self, r: usize, out: &mut [f32]) {
        let row = &self.codes[r * self.cols..(r + 1) * self.cols];
        for (o, &c) in out.iter_mut().zip(row) {
            *o += half::f16::from_bits(c).to_f32();
        }
    }
}

/// One layer's products packed once, at load ([`PackedB`] of each `Wᵀ`).
#[derive(Debug, Clone)]
struct PackedLayer {
    q: PackedB,
    k: PackedB,
    v: PackedB,
    o: PackedB,
    w_in: PackedB,
    w_out: PackedB,
}

/// A BERT ready to run: its parts (matrices at half-float precision, as the file stores them),
/// the tokenizer, and the products packed for the engine's kernels.
#[derive(Debug, Clone)]
pub struct Bert {
    parts: BertParts,
    tokenizer: WordPiece,
    packed: Vec<PackedLayer>,
}

impl Bert {
    /// Checks the parts fit together, rounds every matrix to half-float precision (what the
    /// file stores, so a converted model computes what the file will) and packs the products.
    pub fn new(mut parts: BertParts) -> Result<Bert, ModelError> {
        round_to_f16(&mut parts);
        Bert::from_rounded(parts)
    }

    /// [`Bert::new`] of parts whose matrices already hold half floats (read from a file).
    fn from_rounded(parts: BertParts) -> Result<Bert, ModelError> {
        file::check_parts(&parts)?;
        let tokenizer = WordPiece::new(parts.vocab.clone(), parts.tokenizer.clone())
            .map_err(|e| ModelError::Invalid(format!("tokenizer: {e}")))?;
        let packed = parts
            .layers
            .iter()
            .map(|l| PackedLayer {
                q: PackedB::new(l.attention.w_q.t()),
                k: PackedB::new(l.attention.w_k.t()),
                v: PackedB::new(l.attention.w_v.t()),
                o: PackedB::new(l.attention.w_o.t()),
                w_in: PackedB::new(l.w_in.t()),
                w_out: PackedB::new(l.w_out.t()),
            })
            .collect();
        Ok(Bert {
            parts,
            tokenizer,
            packed,
        })
    }

    /// Reads a BERT weights file (see `file`): a clear error for a file cut short, corrupted,
    /// of another version or of another model, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bert, ModelError> {
        Bert::from_rounded(file::decode(bytes)?)
    }

    /// The file's bytes: the same parts give the same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        file::encode(&self.parts)
    }

    /// The parts.
    pub fn parts(&self) -> &BertParts {
        &self.parts
    }

    /// The sizes.
    pub fn config(&self) -> &BertConfig {
        &self.parts.config
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The attention heads of every layer.
    pub fn heads(&self) -> usize {
        self.parts.config.heads
    }

    /// Layer `layer`'s attention (0-based) in the engine's form: `W_q`, `W_k`, `W_v`, `W_o`
    /// with their biases, the plain layout (`heads()` heads of `d / heads` each), so that
    /// `engine::run(x, weights, bert.heads(), false, mechanism)` on the vectors entering the
    /// layer runs any mechanism on its real projections.
    pub fn attention_weights(&self, layer: usize) -> Option<&Weights> {
        self.parts.layers.get(layer).map(|l| &l.attention)
    }
}

impl BertParts {
    /// A BERT of any size with seeded normal weights (standard deviation `0.5`, norms of scale 1
    /// and shift 0): no model, but every path of the real one, for tests and the fuzzers'
    /// seeds. The same arguments give the same parts on every platform.
    pub fn seeded(vocab: Vec<String>, config: BertConfig, seed: u64) -> BertParts {
        use crate::text::{seeded_normal, seeded_normal_vec};
        let d = config.d_model;
        let m = |rows: usize, cols: usize, k: u64| seeded_normal(rows, cols, seed + k, 0.5);
        let v = |len: usize, k: u64| seeded_normal_vec(len, seed + k, 0.1);
        let norm = || Norm {
            weight: vec![1.0; d],
            bias: vec![0.0; d],
        };
        let layers = (0..config.layers as u64)
            .map(|n| {
                let k = 100 * (n + 1);
                LayerParts {
                    attention: attention_weights(
                        [m(d, d, k), m(d, d, k + 1), m(d, d, k + 2), m(d, d, k + 3)],
                        [v(d, k + 4), v(d, k + 5), v(d, k + 6), v(d, k + 7)],
                    )
                    .expect("square matrices with one bias per row"),
                    attention_norm: norm(),
                    w_in: m(config.intermediate, d, k + 8),
                    b_in: v(config.intermediate, k + 9),
                    w_out: m(d, config.intermediate, k + 10),
                    b_out: v(d, k + 11),
                    output_norm: norm(),
                }
            })
            .collect();
        BertParts {
            name: "seeded".to_string(),
            source: format!("seeded_normal, seed {seed}"),
            word: HalfTable::from_f32(&m(vocab.len(), d, 1)),
            vocab,
            tokenizer: WordPieceSettings::uncased_bert(),
            position: m(config.positions, d, 2),
            token_type: m(config.type_vocab, d, 3),
            embedding_norm: norm(),
            config,
            layers,
        }
    }
}

/// Every matrix rounded to the nearest half float (biases and norms stay `f32`, as stored).
fn round_to_f16(parts: &mut BertParts) {
    let round = |m: &mut Array2<f32>| m.mapv_inplace(|v| half::f16::from_f32(v).to_f32());
    round(&mut parts.position);
    round(&mut parts.token_type);
    for l in &mut parts.layers {
        round(&mut l.attention.w_q);
        round(&mut l.attention.w_k);
        round(&mut l.attention.w_v);
        round(&mut l.attention.w_o);
        round(&mut l.w_in);
        round(&mut l.w_out);
    }
}

/// The engine's form of one layer's attention from its four matrices and biases.
pub fn attention_weights(
    w: [Array2<f32>; 4],
    b: [Vec<f32>; 4],
) -> Result<Weights, crate::engine::EngineError> {
    let [w_q, w_k, w_v, w_o] = w;
    let [b_q, b_k, b_v, b_o] = b.map(|b| Some(ndarray::Array1::from(b)));
    Weights::real(
        w_q,
        w_k,
        w_v,
        w_o,
        Biases { b_q, b_k, b_v, b_o },
        None,
        Layout::default(),
    )
}
