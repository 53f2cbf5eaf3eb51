//! The retrieval models' forward pass on the engine (docs/LESSON.md, "The models"): a token
//! table, a stack of causal attention layers with residual connections, and a linear read-out
//! over the numbers 0 to 99 at the last token.
//!
//! ```text
//! x₀ = table[tokens]                                        (L x d), no positional code
//! x_{l+1} = x_l + engine::run(x_l, W_l, H_l, causal, mechanism_l).output     l = 0, 1, ...
//! logits = R · x_last[L−1] + b                              (100: the numbers 0 to 99)
//! ```
//!
//! Nothing else: no positions (the causal mask and a local first layer carry the order the
//! task needs), no norm, no feed-forward block, so each layer is exactly the engine's layer the
//! page draws, and what a layer adds to a token is what its maps mix in. The candle trainer
//! (`train/src/retrieval/net.rs`) computes the same numbers in batches;
//! `train/tests/retrieval_matches_candle.rs` holds the two within 1e-5.

use ndarray::{Array1, Array2};

use super::task::ANSWERS;
use crate::engine::numeric::saturate_all;
use crate::engine::{run, EngineError, Mechanism, Stages, Weights};
use crate::model::TokenTable;

/// One attention layer: its four projections and its mechanism with every trained parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// `W_q, W_k, W_v, W_o`.
    pub weights: Weights,
    /// The mechanism (gate, lambda and depth, window, ...).
    pub mechanism: Mechanism,
    /// Its heads (diff heads for the Differential Transformer).
    pub heads: usize,
}

/// A trained retrieval model.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalModel {
    /// The token table.
    pub table: TokenTable,
    /// The layers, first first.
    pub layers: Vec<Layer>,
    /// The read-out, `(100, d)`: row `n` scores the answer `n`.
    pub readout: Array2<f32>,
    /// The read-out's bias, `(100)`.
    pub readout_bias: Array1<f32>,
}

/// What one forward pass gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    /// The vectors entering each layer's attention, `(tokens, d)`, first layer first: `x₀` (the
    /// table's rows), then each layer's input after the residual of the one before.
    pub inputs: Vec<Array2<f32>>,
    /// Every layer's stages, first layer first.
    pub stages: Vec<Stages>,
    /// The read-out's 100 logits at the last token.
    pub logits: Vec<f32>,
    /// Their softmax: the probability of each number.
    pub probabilities: Vec<f32>,
    /// The most probable number.
    pub answer: u8,
}

impl Retrieval {
    /// The probability of the answer.
    pub fn probability(&self) -> f32 {
        self.probabilities[usize::from(self.answer)]
    }
}

/// Why a set of parts is not a retrieval model.
#[derive(Debug, Clone, PartialEq)]
pub enum RetrievalError {
    /// Sizes that do not fit together.
    Shape(String),
    /// The engine refused a layer.
    Engine(EngineError),
}

impl std::fmt::Display for RetrievalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetrievalError::Shape(s) => write!(f, "{s}"),
            RetrievalError::Engine(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RetrievalError {}

impl From<EngineError> for RetrievalError {
    fn from(e: EngineError) -> Self {
        RetrievalError::Engine(e)
    }
}

impl RetrievalModel {
    /// A model from its parts, checked: at least one layer, every layer and the read-out of the
    /// table's width, 100 read-out rows; and one short run of the engine, so that a head count
    /// or a parameter of the wrong length is an error here rather than at the first sentence.
    pub fn new(
        table: TokenTable,
        layers: Vec<Layer>,
        readout: Array2<f32>,
        readout_bias: Array1<f32>,
    ) -> Result<RetrievalModel, RetrievalError> {
        let d = table.vectors.ncols();
        if layers.is_empty() {
            return Err(RetrievalError::Shape(
                "a retrieval model needs a layer".into(),
            ));
        }
        for (l, layer) in layers.iter().enumerate() {
            if layer.weights.d_model() != d {
                return Err(RetrievalError::Shape(format!(
                    "layer {l}: width {} for a table of width {d}",
                    layer.weights.d_model()
                )));
            }
        }
        if readout.dim() != (ANSWERS, d) || readout_bias.len() != ANSWERS {
            return Err(RetrievalError::Shape(format!(
                "readout: expected {ANSWERS} x {d} and {ANSWERS} biases, found {} x {} and {}",
                readout.nrows(),
                readout.ncols(),
                readout_bias.len()
            )));
        }
        let model = RetrievalModel {
            table,
            layers,
            readout,
            readout_bias,
        };
        model.forward(&["?"])?;
        Ok(model)
    }

    /// The model width `d`.
    pub fn d_model(&self) -> usize {
        self.table.vectors.ncols()
    }

    /// The vocabulary rows of `tokens`, 0 (`<unk>`) for a token outside the vocabulary.
    pub fn token_ids<S: AsRef<str>>(&self, tokens: &[S]) -> Vec<usize> {
        tokens.iter().map(|t| self.table.id(t.as_ref())).collect()
    }

    /// Whether `token` has a row of its own (is not read as `<unk>`).
    pub fn knows(&self, token: &str) -> bool {
        self.table.id(token) != 0
    }

    /// `x₀`: the tokens' rows of the table, `(tokens, d)`.
    pub fn embed<S: AsRef<str>>(&self, tokens: &[S]) -> Array2<f32> {
        let mut x = Array2::<f32>::zeros((tokens.len(), self.d_model()));
        for (mut row, id) in x.rows_mut().into_iter().zip(self.token_ids(tokens)) {
            row.assign(&self.table.vectors.row(id));
        }
        x
    }

    /// The forward pass over `tokens` with the trained mechanism of every layer.
    pub fn forward<S: AsRef<str>>(&self, tokens: &[S]) -> Result<Retrieval, EngineError> {
        let mechanisms: Vec<&Mechanism> = self.layers.iter().map(|l| &l.mechanism).collect();
        self.forward_with(tokens, &mechanisms)
    }

    /// The forward pass with other mechanism parameters per layer (a moved shift or λ, as the
    /// page's sliders do), one per layer; the weights stay the trained ones.
    pub fn forward_with<S: AsRef<str>>(
        &self,
        tokens: &[S],
        mechanisms: &[&Mechanism],
    ) -> Result<Retrieval, EngineError> {
        if tokens.is_empty() {
            return Err(EngineError::EmptySequence);
        }
        let mut x = self.embed(tokens);
        let mut stages = Vec::with_capacity(self.layers.len());
        let mut inputs = Vec::with_capacity(self.layers.len());
        for (layer, mechanism) in self.layers.iter().zip(mechanisms) {
            let s = run(x.view(), &layer.weights, layer.heads, true, mechanism)?;
            inputs.push(x.clone());
            x += s.output();
            saturate_all(&mut x);
            stages.push(s);
        }
        let last = x.row(tokens.len() - 1);
        let logits: Vec<f32> = self
            .readout
            .rows()
            .into_iter()
            .zip(&self.readout_bias)
            .map(|(r, b)| r.dot(&last) + b)
            .collect();
        let probabilities = softmax(&logits);
        let answer = probabilities
            .iter()
            .enumerate()
            .fold(
                (0, f32::MIN),
                |best, (n, &p)| if p > best.1 { (n, p) } else { best },
            )
            .0 as u8;
        Ok(Retrieval {
            inputs,
            stages,
            logits,
            probabilities,
            answer,
        })
    }
}

/// A softmax over a few logits, the largest subtracted first.
fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::MIN, f32::max);
    let e: Vec<f32> = logits.iter().map(|&v| (v - max).exp()).collect();
    let sum: f32 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UNKNOWN_TOKEN;

    /// A model of width 2 with one standard layer whose projections are zero, so every layer
    /// output is zero and the read-out sees `x₀` of the last token exactly.
    fn zero_layer_model() -> RetrievalModel {
        let table = TokenTable::new(
            vec![UNKNOWN_TOKEN.into(), "?".into()],
            ndarray::array![[0.0f32, 0.0], [1.0, 2.0]],
        )
        .unwrap();
        let z = Array2::<f32>::zeros((2, 2));
        let weights = Weights::new(z.clone(), z.clone(), z.clone(), z).unwrap();
        // Row 7 reads the first channel, row 3 the second.
        let mut readout = Array2::<f32>::zeros((ANSWERS, 2));
        readout[[7, 0]] = 1.0;
        readout[[3, 1]] = 1.0;
        RetrievalModel::new(
            table,
            vec![Layer {
                weights,
                mechanism: Mechanism::Standard,
                heads: 1,
            }],
            readout,
            Array1::zeros(ANSWERS),
        )
        .unwrap()
    }

    #[test]
    fn the_read_out_sees_the_last_token_through_the_residual_stream() {
        // Tokens "<unk>" "?": the last is the row of "?", x = (1, 2) (no positions are added).
        // Logit 7 = 1, logit 3 = 2, the other 98 are 0: the answer is 3, with probability
        // e² / (e² + e + 98).
        let m = zero_layer_model();
        let r = m.forward(&["anna", "?"]).unwrap();
        assert_eq!((r.logits[7], r.logits[3]), (1.0, 2.0));
        let e = std::f32::consts::E;
        assert!((r.probability() - e * e / (e * e + e + 98.0)).abs() < 1e-6);
        assert_eq!(r.answer, 3);
        let sum: f32 = r.probabilities.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
        assert_eq!(r.stages.len(), 1);
    }

    #[test]
    fn unknown_tokens_read_as_unk_and_bad_parts_are_errors() {
        let m = zero_layer_model();
        assert_eq!(m.token_ids(&["?", "anna"]), vec![1, 0]);
        assert!(m.knows("?") && !m.knows("anna"));
        assert!(m.forward::<&str>(&[]).is_err());
        let wrong = RetrievalModel::new(
            m.table.clone(),
            m.layers.clone(),
            Array2::zeros((99, 2)),
            Array1::zeros(ANSWERS),
        );
        assert!(matches!(wrong, Err(RetrievalError::Shape(_))));
        let no_layers = RetrievalModel::new(
            m.table.clone(),
            vec![],
            m.readout.clone(),
            m.readout_bias.clone(),
        );
        assert!(no_layers.is_err());
        let mut layers = m.layers.clone();
        layers[0].heads = 3;
        let bad_heads = RetrievalModel::new(
            m.table.clone(),
            layers,
            m.readout.clone(),
            m.readout_bias.clone(),
        );
        assert!(matches!(bad_heads, Err(RetrievalError::Engine(_))));
    }
}
