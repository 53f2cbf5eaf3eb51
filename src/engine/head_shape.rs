//! The heads of one layer (DESIGN.md §7.1): how many query, key/value and output heads its
//! projections split into and how wide each is, resolved from the layer's [`Layout`], the
//! mechanism and the head count, with every projection's size checked.
//!
//! [`Layout`]: super::layout::Layout

use std::sync::Arc;

use ndarray::Array2;

use super::error::EngineError;
use super::mechanism::MechanismKind;
use super::projection::{head_width, Weights};

/// The heads of one layer, resolved from its layout, the mechanism and the head count.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// How a query head's scores are made from `q·k` (§7.9).
    pub scores: ScoreRule,
}

/// How a head's scores are made from its products `q·k`: times `scale` (`1/sqrt(d_h)` unless a
/// captured layer gives its own), then, with a soft cap `c`, `c·tanh(s / c)`; and whether a
/// learned sink joins each row's softmax (DESIGN.md §7.9).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreRule {
    /// The factor of `q·k`.
    pub scale: f32,
    /// The soft cap `c`, if any.
    pub softcap: Option<f32>,
    /// A learned sink logit per softmax query head (gpt-oss): it joins each row's softmax as
    /// one more key and is dropped, so a row sums to less than 1.
    pub sinks: Option<Arc<[f32]>>,
    /// T5's relative position bias: row `j` is query head `j`'s bias by offset `k − i`, at
    /// column `k − i + L − 1` (§7.9).
    pub relative_bias: Option<Arc<Array2<f32>>>,
}

// Every value is finite (the spec reader checks them), so equality is an equivalence.
impl Eq for ScoreRule {}

impl ScoreRule {
    /// The plain rule of width `d_h`: `1/sqrt(d_h)`, no cap.
    pub fn plain(head_dim: usize) -> ScoreRule {
        ScoreRule {
            scale: 1.0 / (head_dim as f32).sqrt(),
            softcap: None,
            sinks: None,
            relative_bias: None,
        }
    }
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
            _ if diff => diff_head_width(d, heads)?,
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
        let scores = ScoreRule {
            scale: layout
                .scale
                .unwrap_or_else(|| ScoreRule::plain(head_dim).scale),
            softcap: layout.softcap,
            sinks: layout.sinks.clone(),
            relative_bias: layout.relative_bias.clone(),
        };
        let shape = HeadShape {
            heads,
            kv_heads,
            head_dim,
            query_heads,
            key_heads,
            out_heads,
            scores,
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
            scores: ScoreRule::plain(head_dim),
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

/// `d_h = d / H / 2`, or why `H` diff heads cannot split width `d`.
///
/// ```
/// use diffattn::engine::head_shape::diff_head_width;
/// assert_eq!(diff_head_width(64, 8).unwrap(), 4);
/// assert!(diff_head_width(64, 64).is_err()); // 64 / 64 = 1 channel cannot be halved
/// ```
pub fn diff_head_width(d_model: usize, heads: usize) -> Result<usize, EngineError> {
    if heads == 0 {
        return Err(EngineError::ZeroHeads);
    }
    if d_model % (2 * heads) != 0 {
        return Err(EngineError::HeadsDoNotDivide {
            width: d_model / 2,
            heads,
            what: "d_model / 2 (each diff head has two query heads)",
        });
    }
    Ok(d_model / heads / 2)
}
