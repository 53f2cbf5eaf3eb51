//! Step 1 of the staged steps ([`super::steps`]): the queries, keys and values of one
//! sentence, projected in blocks of rows (cross-attention's keys and values from their own
//! sequence, DESIGN.md §7.10), normed and rotated as the layer says (§7.9, §7.2).

use std::ops::Range;

use ndarray::{s, Array2, ArrayView2};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::input_diff::{self, InputDiffProjected};
use super::layout::QkNorm;
use super::mechanism::MechanismKind;
use super::projection::{Projected, Weights};
use super::standard;

/// Step 1: the queries, keys and values of one sentence.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// Queries from the tokens, keys and values from the steps between them.
    Steps(InputDiffProjected),
    /// Queries, keys and values from the tokens; `rotated_for` is the head width their queries
    /// and keys were rotated for, when the layer has rotary positions.
    Tokens {
        /// `Q`, `K` (rotated when the layer has rotary positions), `V`, V2's λ logits.
        projected: Projected,
        /// The head width of the rotation, if any.
        rotated_for: Option<usize>,
    },
}

impl Projection {
    /// Step 1, whole: every row of [`project_into`](Self::project_into).
    pub fn new(
        kind: MechanismKind,
        x: ArrayView2<f32>,
        weights: &Weights,
        heads: usize,
    ) -> Result<Projection, EngineError> {
        let mut out = Projection::empty();
        Projection::project_into(kind, x, weights, heads, 0..x.nrows(), &mut out)?;
        Ok(out)
    }

    /// No projection yet: a buffer for [`project_into`](Self::project_into) to fill.
    pub fn empty() -> Projection {
        Projection::Tokens {
            projected: Projected {
                q: Array2::zeros((0, 0)),
                k: Array2::zeros((0, 0)),
                v: Array2::zeros((0, 0)),
                lambda_logits: None,
                gate_logits: None,
            },
            rotated_for: None,
        }
    }

    /// Step 1: rows `rows` of the queries, keys and values of `x` (`(tokens, d)`) as `kind`
    /// needs them with `heads` heads, into `out` (made anew when it does not fit: another kind
    /// of keys, other sizes; else its other rows are left as they were). Queries and keys are
    /// rotated here when the layer has rotary positions (their angles depend on the head width,
    /// so on `heads`). Input difference's keys and values are the steps into tokens
    /// `rows.start + 1 ..= rows.end`, row `j` being the step from token `j` to `j + 1`. Each
    /// row depends on its own token alone, so a block has the bits of the whole projection.
    pub fn project_into(
        kind: MechanismKind,
        x: ArrayView2<f32>,
        weights: &Weights,
        heads: usize,
        rows: Range<usize>,
        out: &mut Projection,
    ) -> Result<(), EngineError> {
        let tokens = x.nrows();
        standard::check_rows(&rows, tokens)?;
        let rope = weights.layout.rope.as_ref();
        if kind.projects_steps() {
            if rope.is_some() {
                return Err(EngineError::Shape {
                    field: "rope",
                    expected: "no rope (input_diff's keys are steps between tokens)".to_string(),
                    found: "rope".to_string(),
                });
            }
            let steps = tokens.saturating_sub(1);
            let fits = |p: &InputDiffProjected| {
                p.q.dim() == (tokens, weights.w_q.nrows())
                    && p.k.dim() == (steps, weights.w_k.nrows())
                    && p.v.dim() == (steps, weights.w_v.nrows())
            };
            if !matches!(out, Projection::Steps(p) if fits(p)) {
                *out = Projection::Steps(InputDiffProjected {
                    q: Array2::zeros((tokens, weights.w_q.nrows())),
                    k: Array2::zeros((steps, weights.w_k.nrows())),
                    v: Array2::zeros((steps, weights.w_v.nrows())),
                });
            }
            let Projection::Steps(p) = out else {
                unreachable!("made above")
            };
            let block = x.slice(s![rows.clone(), ..]);
            p.q.slice_mut(s![rows.clone(), ..])
                .assign(&weights.queries(block));
            let step_rows = rows.start.min(steps)..rows.end.min(steps);
            if !step_rows.is_empty() {
                let ends = x.slice(s![step_rows.start..step_rows.end + 1, ..]);
                let delta = input_diff::step_differences(ends);
                p.k.slice_mut(s![step_rows.clone(), ..])
                    .assign(&weights.keys(delta.view()));
                p.v.slice_mut(s![step_rows, ..])
                    .assign(&weights.values(delta.view()));
            }
            return Ok(());
        }
        let head_dim = match rope {
            Some(rope) => {
                if rope.positions.len() != tokens {
                    return Err(EngineError::Shape {
                        field: "rope.positions",
                        expected: format!("{tokens} positions (one per token)"),
                        found: format!("{} positions", rope.positions.len()),
                    });
                }
                Some(HeadShape::resolve(kind, weights, heads)?.head_dim)
            }
            None => None,
        };
        let logit_rows = weights.w_lambda.as_ref().map(|w| w.nrows());
        let gate_rows = weights.output_gate.as_ref().map(|g| g.w.nrows());
        // Cross-attention's keys and values come from a second sequence (§7.10).
        let kv_source = weights.layout.x_kv.as_ref();
        let keys = kv_source.map_or(tokens, |m| m.nrows());
        let fits = |p: &Projected, rotated: &Option<usize>| {
            p.q.dim() == (tokens, weights.w_q.nrows())
                && p.k.dim() == (keys, weights.w_k.nrows())
                && p.v.dim() == (keys, weights.w_v.nrows())
                && p.lambda_logits.as_ref().map(|l| l.ncols()) == logit_rows
                && p.gate_logits.as_ref().map(|l| l.ncols()) == gate_rows
                && *rotated == head_dim
        };
        if !matches!(out, Projection::Tokens { projected, rotated_for } if fits(projected, rotated_for))
        {
            *out = Projection::Tokens {
                projected: Projected {
                    q: Array2::zeros((tokens, weights.w_q.nrows())),
                    k: Array2::zeros((keys, weights.w_k.nrows())),
                    v: Array2::zeros((keys, weights.w_v.nrows())),
                    lambda_logits: logit_rows.map(|n| Array2::zeros((tokens, n))),
                    gate_logits: gate_rows.map(|n| Array2::zeros((tokens, n))),
                },
                rotated_for: head_dim,
            };
        }
        let Projection::Tokens { projected: p, .. } = out else {
            unreachable!("made above")
        };
        let block = x.slice(s![rows.clone(), ..]);
        // The keys' rows this block projects: its own tokens', or for cross-attention every
        // key of the second sequence, with the first block (they depend on no query).
        let (kv_rows, kv_block) = match kv_source {
            None => (rows.clone(), block),
            Some(m) if rows.start == 0 => (0..keys, m.view()),
            Some(m) => (0..0, m.slice(s![0..0, ..])),
        };
        let (mut q, mut k) = (weights.queries(block), weights.keys(kv_block));
        if let Some(norm) = &weights.layout.qk_norm {
            if let Some(w) = &norm.q {
                q = QkNorm::apply(w, norm.eps, q.view());
            }
            if let Some(w) = &norm.k {
                k = QkNorm::apply(w, norm.eps, k.view());
            }
        }
        if let (Some(rope), Some(head_dim)) = (rope, head_dim) {
            q = rope.rotate(q.view(), head_dim, rows.start)?;
            k = rope.rotate(k.view(), head_dim, rows.start)?;
        }
        p.q.slice_mut(s![rows.clone(), ..]).assign(&q);
        p.k.slice_mut(s![kv_rows.clone(), ..]).assign(&k);
        p.v.slice_mut(s![kv_rows, ..])
            .assign(&weights.values(kv_block));
        if let (Some(logits), Some(w)) = (p.lambda_logits.as_mut(), weights.w_lambda.as_ref()) {
            logits
                .slice_mut(s![rows.clone(), ..])
                .assign(&super::projection::linear(block, w.view()));
        }
        if let (Some(logits), Some(gate)) = (
            p.gate_logits.as_mut(),
            weights.output_gate_logits(block.view()),
        ) {
            logits.slice_mut(s![rows, ..]).assign(&gate);
        }
        Ok(())
    }

    /// Whether this projection serves `kind` with `heads` heads over `weights` (so a cache of
    /// it can be kept): the same kind of keys, and rotated for the same head width.
    pub fn serves(&self, kind: MechanismKind, weights: &Weights, heads: usize) -> bool {
        match self {
            Projection::Steps(_) => kind.projects_steps(),
            Projection::Tokens { rotated_for, .. } => {
                !kind.projects_steps()
                    && match rotated_for {
                        None => weights.layout.rope.is_none(),
                        Some(width) => HeadShape::resolve(kind, weights, heads)
                            .is_ok_and(|s| s.head_dim == *width),
                    }
            }
        }
    }

    /// The values `V`, `(keys, d)`.
    pub fn values(&self) -> ArrayView2<'_, f32> {
        match self {
            Projection::Tokens { projected, .. } => projected.v.view(),
            Projection::Steps(p) => p.v.view(),
        }
    }

    /// V2's λ logits `x·W_λᵀ`, `(tokens, heads)`, when the weights have `W_λ`.
    pub(super) fn lambda_logits(&self) -> Option<&Array2<f32>> {
        match self {
            Projection::Tokens { projected, .. } => projected.lambda_logits.as_ref(),
            Projection::Steps(_) => None,
        }
    }

    /// Gated attention's output gate logits `x·W_ogᵀ + b_og`, `(tokens, heads · d_h)`, when
    /// the weights have `W_og`.
    pub fn gate_logits(&self) -> Option<&Array2<f32>> {
        match self {
            Projection::Tokens { projected, .. } => projected.gate_logits.as_ref(),
            Projection::Steps(_) => None,
        }
    }
}
