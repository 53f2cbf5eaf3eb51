//! The masked row softmax that turns scores into attention weights (DESIGN.md §1, §5).

use ndarray::{ArrayViewMut2, Axis};

/// Replaces each row of `scores` by its softmax over the allowed cells, in place.
///
/// `allowed(i, j)` says whether query `i` may see key `j`; masked cells become exactly 0.
/// The row maximum is subtracted first, so large scores do not overflow, and a row with every
/// cell masked becomes all zeros rather than NaN (DESIGN.md §1). Scores must be finite.
///
/// ```
/// use diffattn::engine::softmax::masked_softmax_rows;
/// use ndarray::array;
/// // Row 0: softmax([0, ln 3]) = [1/4, 3/4]. Row 1: key 1 is masked, so [1, 0].
/// let mut s = array![[0.0f32, 3.0f32.ln()], [5.0, 7.0]];
/// masked_softmax_rows(s.view_mut(), |i, j| i == 0 || j == 0);
/// assert!((s[[0, 0]] - 0.25).abs() < 1e-6 && (s[[0, 1]] - 0.75).abs() < 1e-6);
/// assert_eq!((s[[1, 0]], s[[1, 1]]), (1.0, 0.0));
/// ```
pub fn masked_softmax_rows(mut scores: ArrayViewMut2<f32>, allowed: impl Fn(usize, usize) -> bool) {
    for (i, mut row) in scores.axis_iter_mut(Axis(0)).enumerate() {
        let mut max = f32::NEG_INFINITY;
        for (j, &s) in row.iter().enumerate() {
            if allowed(i, j) && s > max {
                max = s;
            }
        }
        if max == f32::NEG_INFINITY {
            // Every key is masked: this query sees nothing and gets no weight anywhere.
            row.fill(0.0);
            continue;
        }
        let mut sum = 0.0f32;
        for (j, s) in row.iter_mut().enumerate() {
            *s = if allowed(i, j) {
                // `s - max` is <= 0; it may round to -inf for huge spreads, and exp gives 0.
                (*s - max).exp()
            } else {
                0.0
            };
            sum += *s;
        }
        // The maximum contributes exp(0) = 1, so `sum >= 1` and the division is safe.
        row.mapv_inplace(|e| e / sum);
    }
}
