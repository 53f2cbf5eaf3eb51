//! How a real layer's projections split into heads, and its rotary positions (DESIGN.md §7.1,
//! §7.2, §7.4): head width, grouped-query attention, the Differential Transformer's pairings
//! and rotary position embeddings (RoPE, Su et al. 2021, eq. 34).
//!
//! A layout with nothing set is the one of §1–§6: `H` heads of width `d / H` (`d / 2H` for the
//! Differential Transformer) re-split from square projections, as the heads slider does.

use ndarray::{Array2, ArrayView2};

use super::error::EngineError;
use super::mechanism::MechanismKind;
use super::projection::{head_width, Weights};

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
    /// Every head of `m` (`(tokens, heads · head_dim)`) rotated by its token's position.
    pub fn rotate(&self, m: ArrayView2<f32>, head_dim: usize) -> Result<Array2<f32>, EngineError> {
        use super::numeric::saturate;
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
        if self.positions.len() != m.nrows() {
            return Err(EngineError::Shape {
                field: "rope.positions",
                expected: format!("{} positions (one per token)", m.nrows()),
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
                    let angle = self.positions[t] as f64 * f;
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
}

impl Layout {
    /// Whether this is the layout of §1–§6 (the page's heads slider can re-split it).
    pub fn is_plain(&self) -> bool {
        *self == Layout::default()
    }
}

/// The heads of one layer, resolved from its layout, the mechanism and the head count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadShape {
    /// The mechanism's heads (diff heads for both Differential Transformers).
    pub heads: usize,
    /// Key/value heads per DESIGN.md §7.1 (`G`).
    pub kv_heads: usize,
    /// `d_h`.
    pub head_dim: usize,
    /// Softmax query heads in `w_q`.
    pub query_heads: usize,
    /// Key heads in `w_k` (and value heads of width `d_h` in `w_v`).
    pub key_heads: usize,
    /// Heads entering `w_o`, each `d_h` wide.
    pub out_heads: usize,
}

impl HeadShape {
    /// The shape of `kind` with `heads` heads over `weights`, checking every projection's size.
    pub fn resolve(
        kind: MechanismKind,
        weights: &Weights,
        heads: usize,
    ) -> Result<HeadShape, EngineError> {
        let d = weights.d_model();
        let layout = &weights.layout;
        let diff = kind == MechanismKind::DiffTransformer;
        let pairs = kind.query_heads_per_head() == 2;
        let head_dim = match layout.head_dim {
            Some(w) if heads > 0 => w,
            _ if diff => super::diff_transformer::diff_head_width(d, heads)?,
            _ => head_width(d, heads, "d_model")?,
        };
        let kv_heads = layout.kv_heads.unwrap_or(heads);
        if kv_heads == 0 || heads % kv_heads != 0 {
            return Err(EngineError::Shape {
                field: "kv_heads",
                expected: format!("a divisor of heads {heads}"),
                found: kv_heads.to_string(),
            });
        }
        let query_heads = if pairs { 2 * heads } else { heads };
        let key_heads = if diff { 2 * kv_heads } else { kv_heads };
        let out_heads = if diff { 2 * heads } else { heads };
        let shape = HeadShape {
            heads,
            kv_heads,
            head_dim,
            query_heads,
            key_heads,
            out_heads,
        };
        shape.check(weights)?;
        Ok(shape)
    }

    /// `heads` heads of width `width / heads`, one key/value head each: the plain layout of
    /// one map per head.
    pub fn plain(width: usize, heads: usize) -> Result<HeadShape, EngineError> {
        let head_dim = head_width(width, heads, "d_model")?;
        Ok(HeadShape {
            heads,
            kv_heads: heads,
            head_dim,
            query_heads: heads,
            key_heads: heads,
            out_heads: heads,
        })
    }

    /// The key (and value) head that query head `j` attends with: `⌊j / (query / key heads)⌋`.
    pub fn key_head(&self, query_head: usize) -> usize {
        query_head / (self.query_heads / self.key_heads)
    }

    /// The value head (of width `d_h`) that head `h`'s map mixes, for one map per head and V2.
    pub fn value_head(&self, head: usize) -> usize {
        head / (self.heads / self.kv_heads)
    }

    fn check(&self, weights: &Weights) -> Result<(), EngineError> {
        let (d, dh) = (weights.d_model(), self.head_dim);
        let rows = |n: usize, what: &str| (n * dh, format!("{what} {n} x head_dim {dh}"));
        let checks = [
            (
                "w_q",
                &weights.w_q,
                rows(self.query_heads, "query heads"),
                d,
            ),
            ("w_k", &weights.w_k, rows(self.key_heads, "key heads"), d),
            ("w_v", &weights.w_v, rows(self.key_heads, "value heads"), d),
        ];
        for (field, w, (want, why), cols) in checks {
            if w.dim() != (want, cols) {
                return Err(EngineError::Shape {
                    field,
                    expected: format!("{want} x {cols} ({why}, d_model {d})"),
                    found: format!("{} x {}", w.nrows(), w.ncols()),
                });
            }
        }
        let out_cols = self.out_heads * dh;
        if weights.w_o.dim() != (d, out_cols) {
            return Err(EngineError::Shape {
                field: "w_o",
                expected: format!(
                    "{d} x {out_cols} (d_model, {} heads x head_dim {dh})",
                    self.out_heads
                ),
                found: format!("{} x {}", weights.w_o.nrows(), weights.w_o.ncols()),
            });
        }
        weights.biases.check(weights)
    }
}
