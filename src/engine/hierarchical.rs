//! Hierarchical attention (DESIGN.md §7.6): local attention within segments of `s` tokens, then
//! attention over segment summaries, in one softmax.
//!
//! Token `i` is in segment `σ(i) = ⌊i / s⌋`. A segment's summary key and value are the means of
//! its tokens' keys and values. Query `i` scores the tokens of its own segment (`j ≤ i` when
//! causal) and the summaries of the other segments (only earlier, complete ones when causal);
//! one softmax over both gives `local` `(L, L)` and `segments` `(L, n)`, and the token map the
//! output mixes values with spreads each summary's weight over its tokens:
//!
//! ```text
//! a[i, j] = local[i, j] + segments[i, σ(j)] / |σ(j)|,   a·V = local·V + segments·V̄
//! ```
//!
//! Rows of `a` sum to 1; `s = 1` and `s ≥ L` are both standard attention.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView2};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::mask::Mask;
use super::numeric::{exp_nonpositive, fit};
use super::projection::head;
use super::standard::{check_rows, scaled_dot_scores};

/// Every stage of one hierarchical layer.
#[derive(Debug, Clone, PartialEq)]
pub struct HierarchicalMaps {
    /// The weight on each token of the query's own segment, `(heads, tokens, tokens)`.
    pub local: Array3<f32>,
    /// The weight on each other segment's summary, `(heads, tokens, segments)`.
    pub segments: Array3<f32>,
    /// The token map the output uses, `(heads, tokens, tokens)`.
    pub a: Array3<f32>,
}

impl HierarchicalMaps {
    /// No maps yet: buffers for [`maps_into`] to fill.
    pub fn empty() -> HierarchicalMaps {
        HierarchicalMaps {
            local: Array3::zeros((0, 0, 0)),
            segments: Array3::zeros((0, 0, 0)),
            a: Array3::zeros((0, 0, 0)),
        }
    }
}

/// Rows `queries` of the maps of hierarchical attention with segments of `segment` tokens,
/// for the heads `heads`, into `out` (map `i` of each stack is head `heads.start + i`; each
/// head and row is computed alone, so a block has the bits it has in the whole stack).
#[allow(clippy::too_many_arguments)]
pub fn maps_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    segment: usize,
    heads: Range<usize>,
    queries: Range<usize>,
    out: &mut HierarchicalMaps,
) -> Result<(), EngineError> {
    if segment == 0 {
        return Err(EngineError::Shape {
            field: "segment",
            expected: "at least 1 token".to_string(),
            found: "0".to_string(),
        });
    }
    let tokens = q.nrows();
    check_rows(&queries, tokens)?;
    let n = tokens.div_ceil(segment);
    let of = |i: usize| i / segment;
    let size = |m: usize| ((m + 1) * segment).min(tokens) - m * segment;
    let d_h = shape.head_dim;
    fit(&mut out.local, (heads.len(), tokens, tokens));
    fit(&mut out.segments, (heads.len(), tokens, n));
    fit(&mut out.a, (heads.len(), tokens, tokens));
    let rows = queries.clone();
    for (slot, h) in heads.enumerate() {
        let k_h = head(k, shape.key_head(h), d_h);
        let mut means = Array2::<f32>::zeros((n, d_h));
        for (j, row) in k_h.outer_iter().enumerate() {
            let mut mean = means.row_mut(of(j));
            mean.scaled_add(1.0 / size(of(j)) as f32, &row);
        }
        let q_h = head(q, h, d_h).slice_move(s![rows.clone(), ..]);
        let token_scores = scaled_dot_scores(q_h, k_h);
        let summary_scores = scaled_dot_scores(q_h, means.view());
        for i in rows.clone() {
            let r = i - rows.start;
            let own = of(i);
            let keys =
                (own * segment..(own + 1) * segment).filter(|&j| j < tokens && mask.allows(i, j));
            let summaries = (0..n).filter(|&m| m != own && (!mask.causal || m < own));
            let cells: Vec<(bool, usize, f32)> = keys
                .map(|j| (true, j, token_scores[[r, j]]))
                .chain(summaries.map(|m| (false, m, summary_scores[[r, m]])))
                .collect();
            let max = cells.iter().fold(f32::NEG_INFINITY, |m, c| m.max(c.2));
            let weights: Vec<f32> = cells.iter().map(|c| exp_nonpositive(c.2 - max)).collect();
            let total: f32 = weights.iter().sum();
            out.local.slice_mut(s![slot, i, ..]).fill(0.0);
            out.segments.slice_mut(s![slot, i, ..]).fill(0.0);
            for (&(is_token, at, _), w) in cells.iter().zip(weights) {
                let target = if is_token {
                    &mut out.local
                } else {
                    &mut out.segments
                };
                target[[slot, i, at]] = w / total;
            }
            for j in 0..tokens {
                out.a[[slot, i, j]] =
                    out.local[[slot, i, j]] + out.segments[[slot, i, of(j)]] / size(of(j)) as f32;
            }
        }
    }
    Ok(())
}
