//! The trained per-head parameters adapted to another head count (docs/MODEL.md): the
//! shift-difference gate and V2's `W_λ` re-split by channels, the Differential Transformer's
//! λ vectors rebuilt with the same dot products and its RMSNorm weight tiled or folded; the
//! untrained model draws them from its seed.

use std::borrow::Cow;

use ndarray::{Array2, Axis};

use super::Model;
use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::head_shape::diff_head_width;
use crate::engine::shift_diff::Gate;
use crate::engine::{EngineError, Mechanism, MechanismKind, Weights};
use crate::text::{seeded_normal, seeded_normal_vec};

impl Model {
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
                ..p.clone()
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
            subln_eps: crate::engine::diff_transformer::RMS_NORM_EPS,
            ..Default::default()
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
    ///
    /// Gated attention's output gate `W_og` (`d x d` in the plain layout, §4.1) is the trained
    /// one in a gated attention model, whatever the head count (the heads re-split its rows as
    /// they re-split the queries); any other model draws it from its seed (`N(0, 1/d)`), so
    /// gated attention runs on the untrained model too. Other mechanisms run without it.
    pub fn layer_weights(&self, kind: MechanismKind, heads: usize) -> Cow<'_, Weights> {
        let weights = self.v2_layer_weights(kind, heads);
        let d = self.d_model();
        let has_gate = weights.output_gate.as_ref().map(|g| g.w.dim()) == Some((d, d));
        match (kind == MechanismKind::GatedAttention, has_gate) {
            (true, true) => weights,
            (true, false) => {
                let std_dev = 1.0 / (d as f32).sqrt();
                let w = seeded_normal(d, d, self.seed.wrapping_add(3000), std_dev);
                let plain = Weights {
                    output_gate: None,
                    ..weights.into_owned()
                };
                Cow::Owned(
                    plain
                        .with_output_gate(w, None)
                        .expect("a d x d gate reads rows of width d"),
                )
            }
            (false, _) if weights.output_gate.is_none() => weights,
            (false, _) => Cow::Owned(Weights {
                output_gate: None,
                ..weights.into_owned()
            }),
        }
    }

    /// [`layer_weights`](Self::layer_weights) before the output gate: V2's `W_q` and `W_λ`.
    fn v2_layer_weights(&self, kind: MechanismKind, heads: usize) -> Cow<'_, Weights> {
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
}
