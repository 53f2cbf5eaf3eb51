//! How a real layer's projections split into heads, and its rotary positions (DESIGN.md §7.1,
//! §7.2, §7.4): head width, grouped-query attention, the Differential Transformer's pairings
//! and rotary position embeddings (RoPE, Su et al. 2021, eq. 34).
//!
//! A layout with nothing set is the one of §1–§6: `H` heads of width `d / H` (`d / 2H` for the
//! Differential Transformer) re-split from square projections, as the heads slider does.

use std::sync::Arc;

use ndarray::{Array2, ArrayView2};

use super::error::EngineError;
use super::numeric::saturate;

/// Which query heads of the Differential Transformer form a diff head, and how `V` splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// The official code: query heads `2h`, `2h+1`; value heads of width `2·d_h`.
    #[default]
    Adjacent,
    /// transformers' DiffLlama: query heads `h`, `h + H`; value heads `g` and `g + G` joined.
    Halves,
}

/// How the rotated channels of a head pair up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeLayout {
    /// `(k, k + r/2)`: Llama, GPT-NeoX, transformers' `rotate_half`.
    Half,
    /// `(2k, 2k + 1)`: GPT-J, the official Differential Transformer code.
    Interleaved,
}

/// The rotation frequencies: from a base `θ`, or given (rope scaling changes them).
#[derive(Debug, Clone, PartialEq)]
pub enum Frequencies {
    /// `inv_freq_k = θ^(−2k / r)`.
    Theta(f64),
    /// `inv_freq`, `r / 2` values.
    Explicit(Vec<f64>),
}

/// Rotary position embeddings of one sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Rope {
    /// How channels pair.
    pub layout: RopeLayout,
    /// The frequencies.
    pub frequencies: Frequencies,
    /// How many leading channels of each head rotate (`None`: all of them).
    pub rotary_dim: Option<usize>,
    /// The position of each token.
    pub positions: Vec<u64>,
    /// Multiplies cos and sin (YaRN's attention factor; 1 otherwise).
    pub attention_scaling: f64,
}

impl Rope {
    /// Every head of `m` (`(rows, heads · head_dim)`, the rows of tokens `first..first + rows`)
    /// rotated by its token's position.
    pub fn rotate(
        &self,
        m: ArrayView2<f32>,
        head_dim: usize,
        first: usize,
    ) -> Result<Array2<f32>, EngineError> {
        let r = self.rotary_dim.unwrap_or(head_dim);
        if r < 2 || r % 2 != 0 || r > head_dim {
            return Err(EngineError::Shape {
                field: "rope.rotary_dim",
                expected: format!("an even number from 2 to head_dim {head_dim}"),
                found: r.to_string(),
            });
        }
        let inv_freq: Vec<f64> = match &self.frequencies {
            Frequencies::Theta(theta) => (0..r / 2)
                .map(|k| theta.powf(-2.0 * k as f64 / r as f64))
                .collect(),
            Frequencies::Explicit(f) if f.len() == r / 2 => f.clone(),
            Frequencies::Explicit(f) => {
                return Err(EngineError::Shape {
                    field: "rope.inv_freq",
                    expected: format!("{} values (rotary_dim / 2)", r / 2),
                    found: format!("{} values", f.len()),
                })
            }
        };
        if self.positions.len() < first + m.nrows() {
            return Err(EngineError::Shape {
                field: "rope.positions",
                expected: format!("{} positions (one per token)", first + m.nrows()),
                found: format!("{} positions", self.positions.len()),
            });
        }
        let mut out = m.to_owned();
        let heads = m.ncols() / head_dim.max(1);
        for (t, mut row) in out.outer_iter_mut().enumerate() {
            // Angles in f64: positions of a long sequence times small frequencies.
            let turns: Vec<(f64, f64)> = inv_freq
                .iter()
                .map(|f| {
                    let angle = self.positions[first + t] as f64 * f;
                    let c = self.attention_scaling;
                    (angle.cos() * c, angle.sin() * c)
                })
                .collect();
            for h in 0..heads {
                let base = h * head_dim;
                for (k, &(cos, sin)) in turns.iter().enumerate() {
                    let (i, j) = match self.layout {
                        RopeLayout::Half => (base + k, base + k + r / 2),
                        RopeLayout::Interleaved => (base + 2 * k, base + 2 * k + 1),
                    };
                    let (a, b) = (row[i] as f64, row[j] as f64);
                    row[i] = saturate((a * cos - b * sin) as f32);
                    row[j] = saturate((b * cos + a * sin) as f32);
                }
            }
        }
        Ok(out)
    }
}

/// RMSNorm of the projected queries and keys (DESIGN.md §7.9; Qwen3, OLMo 2, Gemma 3): each
/// row, or each head's `d_h` channels of it when the weight is `d_h` long, becomes
/// `u / sqrt(mean(u²) + ε) · weight`, after the bias and before the rotation.
#[derive(Debug, Clone, PartialEq)]
pub struct QkNorm {
    /// The queries' weight: `d_h` values (each head alone) or one per row of `w_q`.
    pub q: Option<Vec<f32>>,
    /// The keys' weight: `d_h` values or one per row of `w_k`.
    pub k: Option<Vec<f32>>,
    /// `ε`.
    pub eps: f64,
}

impl QkNorm {
    /// `m` (`(rows, width)`) with each group of `weight.len()` channels of every row normalised.
    pub fn apply(weight: &[f32], eps: f64, m: ArrayView2<f32>) -> Array2<f32> {
        let mut out = m.to_owned();
        let n = weight.len().max(1);
        for mut row in out.outer_iter_mut() {
            for group in row
                .as_slice_mut()
                .expect("owned rows are contiguous")
                .chunks_mut(n)
            {
                // In f64: the mean of squares of a wide row.
                let mean = group
                    .iter()
                    .map(|&u| f64::from(u) * f64::from(u))
                    .sum::<f64>()
                    / group.len() as f64;
                let inv = 1.0 / (mean + eps).sqrt();
                for (u, &w) in group.iter_mut().zip(weight) {
                    *u = saturate((f64::from(*u) * inv * f64::from(w)) as f32);
                }
            }
        }
        out
    }
}

/// The head layout of a layer: what a captured spec fixes (all `None`: re-split by `heads`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// The width of one softmax head's query and key.
    pub head_dim: Option<usize>,
    /// Key/value heads (grouped-query attention); must divide the heads.
    pub kv_heads: Option<usize>,
    /// The Differential Transformer's pairing.
    pub pairing: Pairing,
    /// Rotary position embeddings of queries and keys.
    pub rope: Option<Rope>,
    /// RMSNorm of the queries and keys (§7.9).
    pub qk_norm: Option<QkNorm>,
    /// The factor of the scores `q·k` (§7.9; default `1/sqrt(d_h)`).
    pub scale: Option<f32>,
    /// `c`: every score `s` becomes `c·tanh(s / c)` before the mask (§7.9; Gemma 2).
    pub softcap: Option<f32>,
    /// A sink logit per softmax query head (§7.9; gpt-oss); shared, not copied, by every
    /// [`HeadShape`](super::HeadShape) resolved from the layout.
    pub sinks: Option<Arc<[f32]>>,
    /// An additive bias on the scores by the keys' offset from the query, one row of `2L − 1`
    /// offsets (`j − i` from `−(L − 1)` to `L − 1`) per softmax query head (§7.9; T5); shared
    /// like the sinks.
    pub relative_bias: Option<Arc<Array2<f32>>>,
    /// Cross-attention (DESIGN.md §7.10): the vectors the keys and values are projected from,
    /// `(keys, d)` (an encoder-decoder's encoder output); the maps are `tokens × keys`.
    pub x_kv: Option<Array2<f32>>,
}

impl Layout {
    /// Whether this is the layout of §1–§6 (the page's heads slider can re-split it).
    pub fn is_plain(&self) -> bool {
        *self == Layout::default()
    }
}
