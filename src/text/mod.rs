//! Sentences to vectors: the tokenizer, the seeded (untrained) embeddings and the seeded weights.
//!
//! Nothing here is trained. [`tokenize`] cuts a typed sentence into the tokens the heatmaps are
//! labelled with; [`SeededEmbedding`] turns them into the `(tokens, d_model)` matrix entering
//! attention, a pure function of the seed and the token texts; [`seeded_normal`] draws the
//! untrained weight matrices the same way. Every number is the same bit for bit natively and on
//! wasm32, so a seed names one model everywhere.
//!
//! [`wordpiece`] is the real model's tokenizer: the uncased BERT's, exactly as Hugging Face
//! runs it (docs/MINILM.md).
//!
//! This module knows nothing of attention, JSON or drawing.

mod clusters;
mod embed;
pub mod limits;
pub(crate) mod portable_math;
mod seeded;
mod tokenizer;
pub mod wordpiece;

pub use embed::{fnv1a_64, sinusoidal_positions, SeededEmbedding};
pub use limits::{MAX_TOKENS, PAGE_MAX_TOKENS};
pub use seeded::{seeded_normal, seeded_normal_vec};
pub use tokenizer::{is_invisible, normalize, tokenize, tokenize_limited, tokenize_up_to, Token};
