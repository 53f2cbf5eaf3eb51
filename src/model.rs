//! The model the page draws with: an embedding for tokens and the weights of one attention
//! layer. Until trained weights ship, this is the untrained model: seeded vectors and weights,
//! deterministic on every platform, honest about being untrained.

use ndarray::Array2;

use crate::engine::diff_transformer::{diff_head_width, DiffTransformerParams};
use crate::engine::{EngineError, Weights};
use crate::text::{seeded_normal, seeded_normal_vec, SeededEmbedding, Token};

/// The untrained model's width; 64 has many divisors (1, 2, 4, ..., 64) for the heads slider.
pub const UNTRAINED_D_MODEL: usize = 64;

/// The seed of the untrained model's embedding and weights.
pub const UNTRAINED_SEED: u64 = 20_251_129;

/// An embedding and one layer's weights.
#[derive(Debug, Clone)]
pub struct Model {
    embedding: SeededEmbedding,
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
            embedding: SeededEmbedding::new(d, seed),
            weights,
            trained: false,
            label: "untrained (seeded)".to_string(),
            seed,
        }
    }

    /// The model width `d`.
    pub fn d_model(&self) -> usize {
        self.weights.d_model()
    }

    /// The vectors entering the attention layer for these tokens, `(tokens, d)`.
    pub fn embed(&self, tokens: &[Token]) -> Array2<f32> {
        self.embedding.embed(tokens)
    }

    /// The Differential Transformer's lambda vectors and RMSNorm weight for `heads` diff heads.
    ///
    /// Their length is `d_h = d / heads / 2`, so they depend on the number of heads: the
    /// untrained model draws them per head count from the seed, as the official code
    /// initialises them (`N(0, 0.1)` for the lambdas; RMSNorm's weight is 1), at depth 0.
    pub fn diff_transformer_params(
        &self,
        heads: usize,
    ) -> Result<DiffTransformerParams, EngineError> {
        let d_h = diff_head_width(self.d_model(), heads)?;
        let base = self.seed.wrapping_add(1000 + 10 * heads as u64);
        Ok(DiffTransformerParams {
            depth: 0,
            lambda_q1: seeded_normal_vec(d_h, base + 1, 0.1),
            lambda_k1: seeded_normal_vec(d_h, base + 2, 0.1),
            lambda_q2: seeded_normal_vec(d_h, base + 3, 0.1),
            lambda_k2: seeded_normal_vec(d_h, base + 4, 0.1),
            subln: vec![1.0; 2 * d_h],
        })
    }
}
