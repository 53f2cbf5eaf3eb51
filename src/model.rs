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

mod format;
pub mod retrieval;

use std::borrow::Cow;
use std::collections::HashMap;

use ndarray::{Array1, Array2, ArrayView2, Axis};

pub use format::{ModelError, Quantization, FORMAT_VERSION, MAGIC};
pub use retrieval::{RetrievalFile, TokenParts};

use crate::engine::bilstm::BiLstm;
use crate::engine::diff_transformer::{diff_head_width, DiffTransformerParams};
use crate::engine::numeric::{saturate, saturate_all, sigmoid};
use crate::engine::shift_diff::Gate;
use crate::engine::{run, EngineError, Mechanism, MechanismKind, Stages, Weights};
use crate::text::limits::{max_tokens_for_heads, MAX_TOKENS};
use crate::text::{seeded_normal, seeded_normal_vec, sinusoidal_positions, SeededEmbedding, Token};

/// The untrained model's width; 64 has many divisors (1, 2, 4, ..., 64) for the heads slider.
pub const UNTRAINED_D_MODEL: usize = 64;

/// The seed of the untrained model's embedding and weights.
pub const UNTRAINED_SEED: u64 = 20_251_129;

/// The token every word outside the vocabulary reads as; row 0 of every trained table.
pub const UNKNOWN_TOKEN: &str = "<unk>";

/// The two classes, in the order of the classifier's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sentiment {
    /// Class 0.
    Negative,
    /// Class 1.
    Positive,
}

impl Sentiment {
    /// `"negative"` or `"positive"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sentiment::Negative => "negative",
            Sentiment::Positive => "positive",
        }
    }
}

/// What the classifier says about one sentence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The more probable class.
    pub label: Sentiment,
    /// The probability of `label`, in `[0.5, 1]`.
    pub probability: f32,
    /// The probability of the positive class, in `[0, 1]`.
    pub positive: f32,
    /// The two logits `(negative, positive)`.
    pub logits: [f32; 2],
}

/// How the classifier reduces the layer output `(tokens, d)` to one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over tokens, `d` features.
    Mean,
    /// The mean and the maximum over tokens, concatenated: `2·d` features.
    MeanMax,
}

impl Pooling {
    /// The name in the weights file.
    pub fn name(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::MeanMax => "mean_max",
        }
    }

    /// The pooling called `name`, if any.
    pub fn from_name(name: &str) -> Option<Pooling> {
        [Pooling::Mean, Pooling::MeanMax]
            .into_iter()
            .find(|p| p.name() == name)
    }

    /// How many features it makes from a width-`d` output.
    pub fn features(self, d: usize) -> usize {
        match self {
            Pooling::Mean => d,
            Pooling::MeanMax => 2 * d,
        }
    }

    /// Pools `output` (`(tokens, d)`) into one feature vector. No tokens pool to zeros.
    ///
    /// The mean is saturated (a sum of values near `f32::MAX` overflows), so finite outputs
    /// give finite features.
    pub fn pool(self, output: ArrayView2<f32>) -> Array1<f32> {
        let d = output.ncols();
        let mut mean = output
            .mean_axis(Axis(0))
            .unwrap_or_else(|| Array1::zeros(d));
        saturate_all(&mut mean);
        match self {
            Pooling::Mean => mean,
            Pooling::MeanMax => {
                let max = if output.nrows() == 0 {
                    Array1::zeros(d)
                } else {
                    output.fold_axis(Axis(0), f32::NEG_INFINITY, |&m, &v| m.max(v))
                };
                ndarray::concatenate(Axis(0), &[mean.view(), max.view()])
                    .expect("two vectors of width d concatenate")
            }
        }
    }
}

/// A trained token table: one row per vocabulary entry, row 0 is [`UNKNOWN_TOKEN`].
#[derive(Debug, Clone, PartialEq)]
pub struct TokenTable {
    tokens: Vec<String>,
    index: HashMap<String, usize>,
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
        let mut index = HashMap::with_capacity(tokens.len());
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

    /// The trained mechanism with its parameters adapted to `heads` (see
    /// [`Model::gate`] and [`Model::diff_transformer_params`]); `None` for the untrained model.
    pub fn mechanism(&self, heads: usize) -> Option<Result<Mechanism, EngineError>> {
        let t = self.trained_parts()?;
        Some(match &t.mechanism {
            Mechanism::ShiftDiff(p) => {
                let mut p = p.clone();
                p.gate = adapt_gate(&p.gate, self.d_model(), heads);
                Ok(Mechanism::ShiftDiff(p))
            }
            Mechanism::DiffTransformer(_) => self
                .diff_transformer_params(heads)
                .map(Mechanism::DiffTransformer),
            other => Ok(other.clone()),
        })
    }

    /// The shift-difference gate for `heads` heads: the trained per-head `alpha, beta, gamma`
    /// when `heads` is the trained count. Another count re-splits the same channels, so each
    /// new head takes the mean of the trained heads whose channels it overlaps: a head split in
    /// two gives both halves its gate; heads merged into one average theirs. `None` for the
    /// untrained model and for other mechanisms.
    pub fn gate(&self, heads: usize) -> Option<Gate> {
        match &self.trained_parts()?.mechanism {
            Mechanism::ShiftDiff(p) => Some(adapt_gate(&p.gate, self.d_model(), heads)),
            _ => None,
        }
    }

    /// The Differential Transformer's lambda vectors and RMSNorm weight for `heads` diff heads.
    ///
    /// Their length is `d_h = d / heads / 2`, so they depend on the number of heads. The
    /// untrained model draws them per head count from the seed, as the official code
    /// initialises them (`N(0, 0.1)` for the lambdas; RMSNorm's weight is 1), at depth 0.
    ///
    /// A trained model returns its trained values at its trained head count. At another count
    /// lambda, one scalar per layer, stays exactly the trained value: the vectors are rebuilt
    /// at the new width as `(λq1·λk1, 0, …)` and `(1, 0, …)` (and likewise for the second
    /// pair), which have the same dot products. The RMSNorm weight, shared by all heads, is
    /// tiled when heads get wider (every channel keeps its weight) and averaged over the
    /// blocks that fold onto one channel when heads get narrower.
    pub fn diff_transformer_params(
        &self,
        heads: usize,
    ) -> Result<DiffTransformerParams, EngineError> {
        let d_h = diff_head_width(self.d_model(), heads)?;
        if let Some(Mechanism::DiffTransformer(p)) = self.trained_parts().map(|t| &t.mechanism) {
            if p.lambda_q1.len() == d_h {
                return Ok(p.clone());
            }
            let dot = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
            let unit = |v: f32| {
                let mut out = vec![0.0; d_h];
                out[0] = v;
                out
            };
            return Ok(DiffTransformerParams {
                depth: p.depth,
                lambda_q1: unit(dot(&p.lambda_q1, &p.lambda_k1)),
                lambda_k1: unit(1.0),
                lambda_q2: unit(dot(&p.lambda_q2, &p.lambda_k2)),
                lambda_k2: unit(1.0),
                subln: adapt_subln(&p.subln, 2 * d_h),
                lambda_init: p.lambda_init,
                subln_eps: p.subln_eps,
                lambda: p.lambda,
            });
        }
        let base = self.seed.wrapping_add(1000 + 10 * heads as u64);
        Ok(DiffTransformerParams {
            depth: 0,
            lambda_q1: seeded_normal_vec(d_h, base + 1, 0.1),
            lambda_k1: seeded_normal_vec(d_h, base + 2, 0.1),
            lambda_q2: seeded_normal_vec(d_h, base + 3, 0.1),
            lambda_k2: seeded_normal_vec(d_h, base + 4, 0.1),
            subln: vec![1.0; 2 * d_h],
            lambda_init: None,
            subln_eps: crate::engine::diff_transformer::RMS_NORM_EPS,
            lambda: None,
        })
    }

    /// The layer's weights as `kind` runs them with `heads` heads in the plain layout.
    ///
    /// Every mechanism but V2 uses `W_q, W_k, W_v, W_o` as they are. V2 has two query heads per
    /// head (`W_q` is `2d x d`) and `W_λ` (one row per head, §7.5): a V2 model adapts `W_λ` to
    /// another head count as the gate is adapted (each new head takes the mean of the trained
    /// rows whose channels it overlaps, [`Model::gate`]); any other model draws the second
    /// half of `W_q` and `W_λ` from its seed (`N(0, 1/d)`), so V2 runs on the untrained model
    /// too. A V2 model drawn with another mechanism keeps the first `d` rows of its `W_q`.
    pub fn layer_weights(&self, kind: MechanismKind, heads: usize) -> Cow<'_, Weights> {
        let w = &self.weights;
        let d = self.d_model();
        let has_v2 = w.w_lambda.is_some() && w.w_q.nrows() == 2 * d;
        if kind != MechanismKind::DiffTransformerV2 {
            if !has_v2 {
                return Cow::Borrowed(w);
            }
            let mut plain = w.clone();
            plain.w_q = w.w_q.slice(ndarray::s![..d, ..]).to_owned();
            plain.w_lambda = None;
            return Cow::Owned(plain);
        }
        match &w.w_lambda {
            Some(w_lambda) if has_v2 && w_lambda.nrows() == heads => Cow::Borrowed(w),
            Some(w_lambda) if has_v2 => Cow::Owned(Weights {
                w_lambda: Some(adapt_rows(w_lambda, heads)),
                ..w.clone()
            }),
            _ => {
                let std_dev = 1.0 / (d as f32).sqrt();
                let second = seeded_normal(d, d, self.seed.wrapping_add(5), std_dev);
                let w_q = ndarray::concatenate(Axis(0), &[w.w_q.view(), second.view()])
                    .expect("two d x d matrices stack");
                let seed = self.seed.wrapping_add(2000 + 10 * heads as u64);
                Cow::Owned(Weights {
                    w_q,
                    w_lambda: Some(seeded_normal(heads, d, seed, std_dev)),
                    ..w.clone()
                })
            }
        }
    }

    /// The most tokens [`Model::forward`] takes: [`MAX_TOKENS`], or fewer when the model has so
    /// many heads that `heads × tokens²` would pass
    /// [`MAX_MAP_CELLS`](crate::text::limits::MAX_MAP_CELLS) (2,048 for the shipped models).
    pub fn max_tokens(&self) -> usize {
        self.trained_heads()
            .map_or(MAX_TOKENS, max_tokens_for_heads)
    }

    /// Runs the trained forward pass at the trained head count: every stage of the layer and
    /// the prediction. Errors for the untrained model, for an empty sentence and for one of
    /// more than [`Model::max_tokens`] tokens.
    ///
    /// Every step saturates as the engine does, so a model whose parameters are all finite
    /// (which loading checks) gives finite logits and probabilities, however large they are.
    pub fn forward(&self, tokens: &[Token]) -> Result<(Stages, Prediction), ModelError> {
        let t = self.trained_parts().ok_or(ModelError::Untrained)?;
        let max = self.max_tokens();
        if tokens.len() > max {
            return Err(ModelError::TooLong {
                tokens: tokens.len(),
                max,
            });
        }
        let x = self.embed(tokens);
        let stages = run(x.view(), &self.weights, t.heads, false, &t.mechanism)?;
        let prediction = self
            .classify_output(stages.output().view())
            .ok_or(ModelError::Untrained)?;
        Ok((stages, prediction))
    }

    /// The sentiment of a sentence, computed with the engine's forward pass at the trained
    /// settings.
    pub fn classify(&self, tokens: &[Token]) -> Result<Prediction, ModelError> {
        self.forward(tokens).map(|(_, p)| p)
    }

    /// The classifier head alone, over a layer output `(tokens, d)` computed by the engine with
    /// any settings (the page's sliders): pooling, linear, softmax. `None` for the untrained
    /// model.
    pub fn classify_output(&self, output: ArrayView2<f32>) -> Option<Prediction> {
        let t = self.trained_parts()?;
        let features = t.pooling.pool(output);
        // Products of large finite values overflow, and a sum of +inf and -inf is NaN: the
        // logits saturate as every engine stage does (NaN becomes 0).
        let mut logits = t.classifier.dot(&features);
        saturate_all(&mut logits);
        logits += &t.classifier_bias;
        saturate_all(&mut logits);
        let (neg, pos) = (logits[0], logits[1]);
        // softmax over two classes = sigmoid of the difference, computed stably.
        let positive = sigmoid(saturate(pos - neg));
        let label = if positive >= 0.5 {
            Sentiment::Positive
        } else {
            Sentiment::Negative
        };
        let probability = if label == Sentiment::Positive {
            positive
        } else {
            1.0 - positive
        };
        Some(Prediction {
            label,
            probability,
            positive,
            logits: [neg, pos],
        })
    }
}

/// The channel range `[start, end)` of head `h` of `heads` over width `d`.
fn channels(d: usize, heads: usize, h: usize) -> (usize, usize) {
    (h * d / heads, (h + 1) * d / heads)
}

/// Re-splits a per-head gate trained at `gate.alpha.len()` heads into `heads` heads: each new
/// head takes the mean of the trained heads whose channels it overlaps.
fn adapt_gate(gate: &Gate, d: usize, heads: usize) -> Gate {
    let trained = gate.alpha.len();
    if trained == heads || trained == 0 || heads == 0 || d == 0 {
        return if trained == heads {
            gate.clone()
        } else {
            Gate::uniform(heads, 0.0, 0.0, 0.0)
        };
    }
    let mut out = Gate {
        alpha: Vec::with_capacity(heads),
        beta: Vec::with_capacity(heads),
        gamma: Vec::with_capacity(heads),
    };
    for h in 0..heads {
        let (start, end) = channels(d, heads, h);
        let overlapping: Vec<usize> = (0..trained)
            .filter(|&t| {
                let (ts, te) = channels(d, trained, t);
                ts < end && start < te
            })
            .collect();
        let n = overlapping.len().max(1) as f32;
        let mean = |v: &[f32]| overlapping.iter().map(|&t| v[t]).sum::<f32>() / n;
        out.alpha.push(mean(&gate.alpha));
        out.beta.push(mean(&gate.beta));
        out.gamma.push(mean(&gate.gamma));
    }
    out
}

/// Re-splits a per-head matrix (one row per head, V2's `W_λ`) into `heads` rows, as
/// [`adapt_gate`] does with the gate: each new head takes the mean of the trained rows whose
/// channels it overlaps.
fn adapt_rows(m: &Array2<f32>, heads: usize) -> Array2<f32> {
    let trained = m.nrows();
    let mut out = Array2::<f32>::zeros((heads, m.ncols()));
    if trained == 0 || heads == 0 {
        return out;
    }
    // Any width with both counts as divisors gives the same overlaps: use their product.
    let width = trained * heads;
    for (h, mut row) in out.rows_mut().into_iter().enumerate() {
        let (start, end) = channels(width, heads, h);
        let overlapping: Vec<usize> = (0..trained)
            .filter(|&t| {
                let (ts, te) = channels(width, trained, t);
                ts < end && start < te
            })
            .collect();
        for &t in &overlapping {
            row += &m.row(t);
        }
        row /= overlapping.len().max(1) as f32;
    }
    out
}

/// The Differential Transformer's RMSNorm weight (shared by all heads) at another head width:
/// tiled when wider, block-averaged when narrower (see [`Model::diff_transformer_params`]).
fn adapt_subln(subln: &[f32], width: usize) -> Vec<f32> {
    let trained = subln.len();
    if trained == 0 {
        return vec![1.0; width];
    }
    if width >= trained {
        (0..width).map(|c| subln[c % trained]).collect()
    } else {
        let blocks = trained.div_ceil(width);
        (0..width)
            .map(|c| {
                let folded: Vec<f32> = (0..blocks)
                    .filter_map(|b| subln.get(b * width + c).copied())
                    .collect();
                folded.iter().sum::<f32>() / folded.len().max(1) as f32
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_split_and_merge_by_channels() {
        let gate = Gate {
            alpha: vec![1.0, 3.0],
            beta: vec![0.0, 2.0],
            gamma: vec![-1.0, 1.0],
        };
        // Four heads over d = 8: heads 0 and 1 lie in trained head 0, heads 2 and 3 in head 1.
        let split = adapt_gate(&gate, 8, 4);
        assert_eq!(split.alpha, [1.0, 1.0, 3.0, 3.0]);
        assert_eq!(split.gamma, [-1.0, -1.0, 1.0, 1.0]);
        // One head covers both: the mean.
        let merged = adapt_gate(&gate, 8, 1);
        assert_eq!(
            (merged.alpha[0], merged.beta[0], merged.gamma[0]),
            (2.0, 1.0, 0.0)
        );
        assert_eq!(adapt_gate(&gate, 8, 2), gate);
    }

    #[test]
    fn subln_tiles_and_folds() {
        assert_eq!(adapt_subln(&[1.0, 2.0], 4), [1.0, 2.0, 1.0, 2.0]);
        assert_eq!(adapt_subln(&[1.0, 2.0, 3.0, 4.0], 2), [2.0, 3.0]);
        assert_eq!(adapt_subln(&[1.0, 2.0], 2), [1.0, 2.0]);
    }

    #[test]
    fn pooling_means_and_maxes() {
        let out = ndarray::array![[1.0f32, -2.0], [3.0, -4.0]];
        assert_eq!(Pooling::Mean.pool(out.view()).to_vec(), [2.0, -3.0]);
        assert_eq!(
            Pooling::MeanMax.pool(out.view()).to_vec(),
            [2.0, -3.0, 3.0, -2.0]
        );
        assert_eq!(
            Pooling::MeanMax.pool(Array2::zeros((0, 2)).view()).to_vec(),
            [0.0; 4]
        );
    }
}
