//! The model the page draws with: an embedding for tokens and the weights of one attention
//! layer, either the untrained seeded model or a trained sentiment classifier loaded from a
//! weights file (docs/MODEL.md).
//!
//! The untrained model is seeded vectors and weights, deterministic on every platform, honest
//! about being untrained. A trained model adds what training learned: a token table (English
//! words, Chinese characters and `<unk>`), optionally a BiLSTM encoder, the mechanism's own
//! parameters (gate, lambda, tau, ...) at the head count it was trained with, and a classifier
//! head. Its forward pass is the engine's: tokens → table + sinusoidal positions → (BiLSTM) →
//! [`engine::run`](crate::engine::run) → pooling over tokens → linear → softmax.
//!
//! * `classify`: the classifier head (`Pooling`, `Prediction`, `Sentiment`) and the trained
//!   forward pass (`forward`, `classify`, `classify_output`);
//! * `adapt`: the per-head parameters adapted when the page's head count differs from the
//!   trained one (`gate`, `diff_transformer_params`, `layer_weights`; docs/MODEL.md);
//! * `format`: the weights file; `retrieval`: the retrieval models' weights file;
//! * `bert`: a real pretrained BERT (all-MiniLM-L6-v2) on the engine, its file, tokenizer
//!   settings and forward pass (docs/MINILM.md).

mod adapt;
pub mod bert;
mod classify;
mod format;
pub mod retrieval;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use ndarray::{Array1, Array2};

pub use classify::{Pooling, Prediction, Sentiment};
pub use format::{ModelError, Quantization, FORMAT_VERSION, MAGIC};
pub use retrieval::{RetrievalFile, TokenParts};

use crate::engine::bilstm::BiLstm;
use crate::engine::numeric::saturate_all;
use crate::engine::{Mechanism, Weights};
use crate::text::{seeded_normal, sinusoidal_positions, SeededEmbedding, Token};

/// The untrained model's width; 64 has many divisors (1, 2, 4, ..., 64) for the heads slider.
pub const UNTRAINED_D_MODEL: usize = 64;

/// The seed of the untrained model's embedding and weights.
pub const UNTRAINED_SEED: u64 = 20_251_129;

/// The token every word outside the vocabulary reads as; row 0 of every trained table.
pub const UNKNOWN_TOKEN: &str = "<unk>";

/// The token table's hash of a token text: FNV-1a 64 over the bytes `Hash` writes (the hash the
/// weights files' blobs use), instead of std's SipHash with random keys: the vocabulary comes
/// from the shipped files, so there is no flooding to resist, and the table is the same on
/// every run.
#[derive(Clone, Copy)]
struct TokenHasher(u64);

impl Default for TokenHasher {
    fn default() -> Self {
        TokenHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A trained token table: one row per vocabulary entry, row 0 is [`UNKNOWN_TOKEN`].
#[derive(Debug, Clone, PartialEq)]
pub struct TokenTable {
    tokens: Vec<String>,
    index: HashMap<String, usize, BuildHasherDefault<TokenHasher>>,
    /// The vectors, `(vocabulary, d)`.
    pub vectors: Array2<f32>,
}

impl TokenTable {
    /// A table from its tokens (row order) and vectors. Token 0 must be [`UNKNOWN_TOKEN`],
    /// tokens must be distinct, and there must be one row per token.
    pub fn new(tokens: Vec<String>, vectors: Array2<f32>) -> Result<TokenTable, ModelError> {
        if tokens.first().map(String::as_str) != Some(UNKNOWN_TOKEN) {
            return Err(ModelError::Invalid(format!(
                "vocab: the first token must be {UNKNOWN_TOKEN}"
            )));
        }
        if vectors.nrows() != tokens.len() {
            return Err(ModelError::Invalid(format!(
                "embedding: {} rows for {} tokens",
                vectors.nrows(),
                tokens.len()
            )));
        }
        let mut index = HashMap::with_capacity_and_hasher(tokens.len(), Default::default());
        for (i, t) in tokens.iter().enumerate() {
            if index.insert(t.clone(), i).is_some() {
                return Err(ModelError::Invalid(format!("vocab: {t:?} appears twice")));
            }
        }
        Ok(TokenTable {
            tokens,
            index,
            vectors,
        })
    }

    /// The tokens, in row order.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The row of a token text, 0 (`<unk>`) when it is not in the vocabulary.
    pub fn id(&self, text: &str) -> usize {
        self.index.get(text).copied().unwrap_or(0)
    }
}

/// Everything a trained classifier has beyond the attention weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Trained {
    /// The mechanism with the parameters it was trained with (gate, lambda, tau, window, ...).
    pub mechanism: Mechanism,
    /// The head count it was trained with (diff heads for the Differential Transformer).
    pub heads: usize,
    /// The token table.
    pub table: TokenTable,
    /// The BiLSTM in front of the attention layer, for input-difference attention.
    pub encoder: Option<BiLstm>,
    /// How the layer output becomes one vector.
    pub pooling: Pooling,
    /// The classifier weight, `(2, features)`: row 0 negative, row 1 positive.
    pub classifier: Array2<f32>,
    /// The classifier bias, `(2)`.
    pub classifier_bias: Array1<f32>,
    /// How the token table was stored (int8 rows in the shipped files).
    pub quantization: Quantization,
    /// Free-form facts about training (seed, data, accuracy), JSON; shown, never interpreted.
    pub info: serde_json::Value,
}

/// Where a model's vectors come from.
#[derive(Debug, Clone)]
enum Source {
    Untrained(SeededEmbedding),
    Trained(Box<Trained>),
}

/// An embedding and one layer's weights, untrained or trained.
#[derive(Debug, Clone)]
pub struct Model {
    source: Source,
    /// The projections `W_q, W_k, W_v, W_o`.
    pub weights: Weights,
    /// Whether these weights were trained (false for the seeded model).
    pub trained: bool,
    /// What to call the model on the page.
    pub label: String,
    seed: u64,
}

impl Model {
    /// The untrained model: seeded token vectors plus sinusoidal positions, and weights drawn
    /// from `N(0, 1/d)` (the usual `1/sqrt(fan_in)` scale, so projections keep the size of
    /// their input).
    pub fn untrained() -> Model {
        let d = UNTRAINED_D_MODEL;
        let seed = UNTRAINED_SEED;
        let std_dev = 1.0 / (d as f32).sqrt();
        let draw = |i: u64| seeded_normal(d, d, seed.wrapping_add(i), std_dev);
        let weights = Weights::new(draw(1), draw(2), draw(3), draw(4))
            .expect("four d x d matrices are valid weights");
        Model {
            source: Source::Untrained(SeededEmbedding::new(d, seed)),
            weights,
            trained: false,
            label: "untrained (seeded)".to_string(),
            seed,
        }
    }

    /// A trained model from its parts, checked for consistent shapes.
    pub fn from_trained(weights: Weights, trained: Trained) -> Result<Model, ModelError> {
        format::check(&weights, &trained)?;
        let label = format!("trained: {}", trained.mechanism.name());
        Ok(Model {
            source: Source::Trained(Box::new(trained)),
            weights,
            trained: true,
            label,
            seed: 0,
        })
    }

    /// Reads a weights file (docs/MODEL.md, "Format"). Truncated, corrupt or inconsistent
    /// files are errors that say what is wrong; nothing panics.
    ///
    /// ```
    /// use diffattn::model::{Model, ModelError};
    ///
    /// assert!(matches!(Model::from_bytes(b"diffattn"), Err(ModelError::Truncated { .. })));
    /// assert!(matches!(Model::from_bytes(b"not a weights file"), Err(ModelError::NotWeights)));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, ModelError> {
        let (weights, trained) = format::decode(bytes)?;
        Model::from_trained(weights, trained)
    }

    /// Writes a trained model as a weights file, the token table stored as `quantization`
    /// says. The untrained model has no file: it is made from its seed.
    pub fn to_bytes(&self, quantization: Quantization) -> Result<Vec<u8>, ModelError> {
        match &self.source {
            Source::Untrained(_) => Err(ModelError::Invalid(
                "the untrained model is made from its seed and has no weights file".to_string(),
            )),
            Source::Trained(t) => Ok(format::encode(&self.weights, t, quantization)),
        }
    }

    /// What training added, for a trained model.
    pub fn trained_parts(&self) -> Option<&Trained> {
        match &self.source {
            Source::Untrained(_) => None,
            Source::Trained(t) => Some(t),
        }
    }

    /// The model width `d`.
    pub fn d_model(&self) -> usize {
        self.weights.d_model()
    }

    /// The token vectors plus sinusoidal positions, `(tokens, d)`: the input of the encoder
    /// (or of the attention layer when there is none). Trained tables read unknown tokens as
    /// `<unk>`.
    pub fn token_vectors(&self, tokens: &[Token]) -> Array2<f32> {
        match &self.source {
            Source::Untrained(embedding) => embedding.embed(tokens),
            Source::Trained(t) => {
                let mut x = sinusoidal_positions(tokens.len(), self.d_model());
                for (mut row, token) in x.rows_mut().into_iter().zip(tokens) {
                    row += &t.table.vectors.row(t.table.id(&token.text));
                }
                // A table value within 1 of f32::MAX plus a position of 1 rounds to infinity.
                saturate_all(&mut x);
                x
            }
        }
    }

    /// The vectors entering the attention layer for these tokens, `(tokens, d)`: the token
    /// vectors plus positions, through the BiLSTM encoder when the model has one.
    pub fn embed(&self, tokens: &[Token]) -> Array2<f32> {
        let x = self.token_vectors(tokens);
        match self.trained_parts().and_then(|t| t.encoder.as_ref()) {
            // The encoder's widths were checked against d when the model was built.
            Some(encoder) => encoder
                .encode(x.view())
                .expect("the encoder's input width is d"),
            None => x,
        }
    }

    /// The vocabulary rows of these tokens (0 for `<unk>`); `None` for the untrained model.
    pub fn token_ids(&self, tokens: &[Token]) -> Option<Vec<usize>> {
        self.trained_parts()
            .map(|t| tokens.iter().map(|tok| t.table.id(&tok.text)).collect())
    }

    /// The head count the model was trained with (diff heads for the Differential
    /// Transformer); `None` for the untrained model.
    pub fn trained_heads(&self) -> Option<usize> {
        self.trained_parts().map(|t| t.heads)
    }
}
