//! The lesson's measure, defined once (docs/LESSON.md, "The measure"): how much of the
//! question's attention falls on the answer, and how much on the rest of the context.
//!
//! For the query at the question's last token (`?`) and each layer, with the layer's final map
//! `M` (`A` for standard attention, `A′ = A + G ⊙ D` for shift-difference attention,
//! `A1 − λ·A2` for the Differential Transformer, as Ye et al. measure it, ICLR 2025, Table 3):
//!
//! ```text
//! answer(layer) = mean over heads h of  Σ_{j ∈ answer}            M_h[last, j]
//! noise(layer)  = mean over heads h of  Σ_{j ∈ context \ answer}  M_h[last, j]
//! ```
//!
//! where `answer` is the number token of the fact the question asks about and `context` every
//! token before the question ([`Layout`]). The question's own tokens count as neither, so for a
//! softmax map `1 − answer − noise` is what the query keeps on the question. Both sums are
//! signed, as in the paper: `A1 − λ·A2` and `A′` have negative cells, and negative noise
//! cancels positive noise. [`Shares::noise_magnitude`] sums `|M|` instead, to show how much
//! cancelled, and [`Shares::answer_abs`] and [`Shares::noise_abs`] are the **shares of absolute
//! values**: each head's row made a distribution, `p_j = |M[?, j]| / Σ_k |M[?, k]|` over every
//! key (DESIGN.md §8), summed over the answer and over the noise, averaged over heads. They lie
//! between 0 and 1 whatever the signs, and equal the signed shares on a softmax map. The paper averages over heads and layers ([`Measure::mean`]); the lesson also
//! reports the layer that retrieves, the last one ([`Measure::retrieving`]): in these models the
//! first layer ties each number to its name and noun, and only the second can look the answer up.
//!
//! The sums are accumulated in `f64`, so the order of the keys does not change a digit that
//! matters.

use ndarray::{ArrayView2, ArrayView3, Axis};

use super::task::Layout;
use crate::engine::Stages;

/// One layer's attention from the question's last token, averaged over heads.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Shares {
    /// Attention on the answer's tokens.
    pub answer: f64,
    /// Attention on every other token of the context (signed).
    pub noise: f64,
    /// `Σ |M|` over the same noise tokens: equal to `noise` for a softmax map.
    pub noise_magnitude: f64,
    /// The answer's share of the row's absolute values, `Σ_{answer} |M| / Σ_{all keys} |M|`
    /// (0 for a row of zeros): equal to `answer` for a softmax map.
    pub answer_abs: f64,
    /// The noise's share of the row's absolute values, `Σ_{noise} |M| / Σ_{all keys} |M|`.
    pub noise_abs: f64,
}

impl Shares {
    /// The shares of one layer's maps `(heads, queries, keys)` for the query `query`, the
    /// answer's key positions `answer` and the context `context` (keys `0..context`). `None`
    /// when a position lies outside the maps.
    ///
    /// ```
    /// use diffattn::retrieval::measure::Shares;
    /// use ndarray::array;
    /// // One head, query 2 over keys 0, 1, 2; the answer is key 0 and the context keys 0 and 1:
    /// // answer 0.6, noise 0.3, and 0.1 stays on the query itself.
    /// let m = array![[[1.0f32, 0.0, 0.0], [0.5, 0.5, 0.0], [0.6, 0.3, 0.1]]];
    /// let s = Shares::of(m.view(), 2, &[0], 2).unwrap();
    /// assert!((s.answer - 0.6).abs() < 1e-7 && (s.noise - 0.3).abs() < 1e-7);
    /// ```
    pub fn of(
        maps: ArrayView3<f32>,
        query: usize,
        answer: &[usize],
        context: usize,
    ) -> Option<Shares> {
        if query >= maps.dim().1 {
            return None;
        }
        Shares::of_rows(maps.index_axis(Axis(1), query), answer, context)
    }

    /// The shares from the query's row of each head, `(heads, keys)`: what [`Shares::of`]
    /// computes, for callers that hold only that row (the experiment's batched maps).
    pub fn of_rows(rows: ArrayView2<f32>, answer: &[usize], context: usize) -> Option<Shares> {
        let (heads, keys) = rows.dim();
        if heads == 0 || context > keys || answer.iter().any(|&j| j >= context) {
            return None;
        }
        let mut total = Shares::default();
        for row in rows.axis_iter(Axis(0)) {
            let (mut answer_abs, mut noise_abs) = (0.0, 0.0);
            for j in 0..context {
                let v = f64::from(row[j]);
                if answer.contains(&j) {
                    total.answer += v;
                    answer_abs += v.abs();
                } else {
                    total.noise += v;
                    total.noise_magnitude += v.abs();
                    noise_abs += v.abs();
                }
            }
            let whole: f64 = row.iter().map(|&v| f64::from(v).abs()).sum();
            if whole > 0.0 && whole.is_finite() {
                total.answer_abs += answer_abs / whole;
                total.noise_abs += noise_abs / whole;
            }
        }
        let h = heads as f64;
        Some(Shares {
            answer: total.answer / h,
            noise: total.noise / h,
            noise_magnitude: total.noise_magnitude / h,
            answer_abs: total.answer_abs / h,
            noise_abs: total.noise_abs / h,
        })
    }

    /// The mean of `all`, figure by figure (the paper's mean over layers).
    pub fn mean(all: &[Shares]) -> Shares {
        let n = all.len().max(1) as f64;
        let of = |f: fn(&Shares) -> f64| all.iter().map(f).sum::<f64>() / n;
        Shares {
            answer: of(|s| s.answer),
            noise: of(|s| s.noise),
            noise_magnitude: of(|s| s.noise_magnitude),
            answer_abs: of(|s| s.answer_abs),
            noise_abs: of(|s| s.noise_abs),
        }
    }
}

/// The measure of one text through every layer of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// One entry per layer, first layer first.
    pub layers: Vec<Shares>,
}

impl Measure {
    /// The measure of `layout` on per-layer final maps `(heads, tokens, tokens)`. `None` when
    /// there are no layers or the maps do not cover the layout.
    pub fn of(maps: &[ArrayView3<f32>], layout: &Layout) -> Option<Measure> {
        if maps.is_empty() {
            return None;
        }
        let answer = layout.answer_tokens();
        let layers = maps
            .iter()
            .map(|m| {
                Shares::of(
                    m.view(),
                    layout.question.last,
                    &answer,
                    layout.context().end,
                )
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Measure { layers })
    }

    /// The measure from the engine's stages, one per layer: on each layer's
    /// [`Stages::final_maps`] (`A`, `A′` or `A1 − λ·A2`).
    pub fn of_stages(stages: &[Stages], layout: &Layout) -> Option<Measure> {
        let maps: Vec<ArrayView3<f32>> = stages.iter().map(|s| s.final_maps().view()).collect();
        Measure::of(&maps, layout)
    }

    /// The mean over layers, as the paper reports it (averaged over heads and layers).
    pub fn mean(&self) -> Shares {
        Shares::mean(&self.layers)
    }

    /// The layer that looks the answer up: the last one.
    pub fn retrieving_layer(&self) -> usize {
        self.layers.len() - 1
    }

    /// The shares of [`Measure::retrieving_layer`].
    pub fn retrieving(&self) -> Shares {
        self.layers[self.retrieving_layer()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array3};

    fn layout(words: &str) -> Layout {
        let t: Vec<&str> = words.split(' ').collect();
        Layout::read(&t).unwrap()
    }

    #[test]
    fn two_heads_are_averaged_and_the_question_counts_as_neither() {
        // Tokens: the(0) room(1) of(2) ann(3) is(4) 5(5) .(6) what(7) ... ?(13); the answer is
        // token 5, the context tokens 0..7. Head 0 puts 0.8 on the answer and 0.2 on "ann";
        // head 1 puts 0.5 on "?" itself and 0.5 on "the" (token 0). Mean over heads:
        // answer (0.8 + 0) / 2 = 0.4, noise (0.2 + 0.5) / 2 = 0.35; the remaining 0.25 is on
        // the question.
        let l = layout("the room of ann is 5 . what is the room of ann ?");
        let mut maps = Array3::<f32>::zeros((2, 14, 14));
        maps[[0, 13, 5]] = 0.8;
        maps[[0, 13, 3]] = 0.2;
        maps[[1, 13, 13]] = 0.5;
        maps[[1, 13, 0]] = 0.5;
        let m = Measure::of(&[maps.view()], &l).unwrap();
        let s = m.retrieving();
        assert!((s.answer - 0.4).abs() < 1e-7, "{s:?}");
        assert!((s.noise - 0.35).abs() < 1e-7, "{s:?}");
        assert_eq!(s.noise, s.noise_magnitude);
        // Softmax-like rows: the shares of absolute values are the signed shares.
        assert!((s.answer_abs - s.answer).abs() < 1e-7, "{s:?}");
        assert!((s.noise_abs - s.noise).abs() < 1e-7, "{s:?}");
    }

    #[test]
    fn negative_noise_cancels_in_the_signed_share_but_not_in_the_magnitude() {
        // One head of a difference map A1 − λA2 over keys 0..3, query 3, answer key 1,
        // context 0..3: row [0.1, 0.5, -0.1, 0.2]. answer 0.5; noise 0.1 + (-0.1) = 0;
        // magnitude 0.1 + 0.1 = 0.2.
        let m = array![[
            [0.0f32, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [0.1, 0.5, -0.1, 0.2]
        ]];
        let s = Shares::of(m.view(), 3, &[1], 3).unwrap();
        assert!((s.answer - 0.5).abs() < 1e-7);
        assert!(s.noise.abs() < 1e-7);
        assert!((s.noise_magnitude - 0.2).abs() < 1e-7);
        // The row's absolute values sum to 0.1 + 0.5 + 0.1 + 0.2 = 0.9: the answer holds
        // 0.5 / 0.9 of them, the noise 0.2 / 0.9 (the query's own 0.2 is neither).
        assert!((s.answer_abs - 0.5 / 0.9).abs() < 1e-7, "{s:?}");
        assert!((s.noise_abs - 0.2 / 0.9).abs() < 1e-7, "{s:?}");
    }

    #[test]
    fn a_negative_answer_is_signed_below_zero_and_a_positive_share_of_absolute_values() {
        // Query 2 over keys 0..3, answer key 0, context 0..2: row [-0.6, 0.2, 0.4] (the map it
        // subtracts outweighs the first at the answer). Signed: answer -0.6, noise 0.2. Absolute
        // values sum to 1.2: answer 0.5, noise 0.2 / 1.2.
        let m = array![[[0.0f32, 0.0, 0.0], [0.0, 0.0, 0.0], [-0.6, 0.2, 0.4]]];
        let s = Shares::of(m.view(), 2, &[0], 2).unwrap();
        assert!((s.answer + 0.6).abs() < 1e-7, "{s:?}");
        assert!((s.answer_abs - 0.5).abs() < 1e-7, "{s:?}");
        assert!((s.noise_abs - 0.2 / 1.2).abs() < 1e-7, "{s:?}");
    }

    #[test]
    fn the_mean_is_over_layers_and_the_last_layer_retrieves() {
        // Layer 0 keeps all its attention on the question (answer 0, noise 0); layer 1 puts
        // 0.9 on the answer and 0.1 on token 0: mean answer 0.45, noise 0.05.
        let l = layout("the room of ann is 5 . what is the room of ann ?");
        let mut first = Array3::<f32>::zeros((1, 14, 14));
        first[[0, 13, 12]] = 1.0;
        let mut second = Array3::<f32>::zeros((1, 14, 14));
        second[[0, 13, 5]] = 0.9;
        second[[0, 13, 0]] = 0.1;
        let m = Measure::of(&[first.view(), second.view()], &l).unwrap();
        assert_eq!(m.retrieving_layer(), 1);
        assert_eq!(m.layers[0], Shares::default());
        assert!((m.mean().answer - 0.45).abs() < 1e-7);
        assert!((m.mean().noise - 0.05).abs() < 1e-7);
    }

    #[test]
    fn maps_that_do_not_cover_the_layout_have_no_measure() {
        let l = layout("the room of ann is 5 . what is the room of ann ?");
        let small = Array3::<f32>::zeros((1, 10, 10));
        assert!(Measure::of(&[small.view()], &l).is_none());
        assert!(Measure::of(&[], &l).is_none());
    }
}
