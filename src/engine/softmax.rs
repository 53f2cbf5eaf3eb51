//! The masked row softmax that turns scores into attention weights (DESIGN.md §1, §5).
//!
//! Two entry points with the same arithmetic: [`softmax_rows`] for a [`Mask`], the engine's hot
//! path, which runs the SIMD kernel `kernels::softmax` on each row's one contiguous range of
//! allowed keys; and [`masked_softmax_rows`] for any predicate, cell by cell. They give the
//! same bits: both sum a row's allowed cells in eight partial sums, the `n`-th allowed cell in
//! sum `n % 8`, and multiply by `1 / Σ` (kernels::reference::softmax).

use ndarray::{ArrayView2, ArrayViewMut2, Axis};

use super::kernels::{self, reference::SUM_LANES};
use super::mask::Mask;

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
        let mut lanes = [0.0f32; SUM_LANES];
        let mut seen = 0;
        for (j, s) in row.iter_mut().enumerate() {
            *s = if allowed(i, j) {
                // `s - max` is <= 0; it may round to -inf for huge spreads, and exp gives 0.
                let e = kernels::exp(*s - max);
                lanes[seen % SUM_LANES] += e;
                seen += 1;
                e
            } else {
                0.0
            };
        }
        // The maximum contributes exp(0) = 1, so the sum is >= 1 and its inverse finite.
        let inv = 1.0 / kernels::reference::sum_lanes(lanes);
        row.mapv_inplace(|e| e * inv);
    }
}

/// [`masked_softmax_rows`] with `allowed(i, j) = mask.allows(first_query + i, j + key_offset)`
/// (row `i` of `scores` is query `first_query + i`), the same bits, but over each row's
/// contiguous range of allowed keys ([`Mask::allowed_keys`]) with no per-cell test, by the SIMD
/// kernel.
///
/// ```
/// use diffattn::engine::{softmax::softmax_rows, Mask};
/// use ndarray::array;
/// let mut s = array![[0.0f32, 3.0f32.ln()], [5.0, 7.0]];
/// softmax_rows(s.view_mut(), Mask::causal(true), 0, 0);
/// assert!((s[[1, 0]] - 1.0 / (1.0 + 2.0f32.exp())).abs() < 1e-6);
/// assert_eq!((s[[0, 0]], s[[0, 1]]), (1.0, 0.0));
/// ```
pub fn softmax_rows(
    mut scores: ArrayViewMut2<f32>,
    mask: Mask,
    key_offset: usize,
    first_query: usize,
) {
    let keys = scores.ncols();
    for (i, mut row) in scores.axis_iter_mut(Axis(0)).enumerate() {
        let range = mask.allowed_keys(first_query + i, key_offset, keys);
        match row.as_slice_mut() {
            Some(cells) => softmax_range(cells, range),
            None => {
                // A strided row (a transposed view): work on a copy, then write it back.
                let mut cells = row.to_vec();
                softmax_range(&mut cells, range);
                row.iter_mut().zip(cells).for_each(|(s, v)| *s = v);
            }
        }
    }
}

/// Softmax of `cells[range]` in place; every cell outside the range becomes 0, and so does a
/// row whose range is empty.
pub(crate) fn softmax_range(cells: &mut [f32], range: std::ops::Range<usize>) {
    let (lo, hi) = (range.start, range.end);
    cells[..lo].fill(0.0);
    cells[hi..].fill(0.0);
    // Scores are finite, so an allowed range that is not empty has a finite maximum.
    kernels::softmax(&mut cells[lo..hi]);
}

/// Softmax of `cells[range]` with one more logit, `sink`, in the sum (DESIGN.md §7.9, gpt-oss's
/// learned sink): `p_j = e^(s_j) / (Σ_k e^(s_k) + e^sink)` over the range, 0 elsewhere. The sink's
/// own share is dropped, so the row sums to `1 − e^sink / (Σ_k e^(s_k) + e^sink)`; a row with no
/// allowed key is all zeros (the sink takes everything).
///
/// ```
/// use diffattn::engine::softmax::softmax_range_with_sink;
/// // Scores 0 and 0 and a sink of ln 2: e^0 + e^0 + 2 = 4, so each key gets 1/4.
/// let mut row = [0.0f32, 0.0, 9.0];
/// softmax_range_with_sink(&mut row, 0..2, 2.0f32.ln());
/// assert!((row[0] - 0.25).abs() < 1e-7 && (row[1] - 0.25).abs() < 1e-7 && row[2] == 0.0);
/// ```
pub fn softmax_range_with_sink(cells: &mut [f32], range: std::ops::Range<usize>, sink: f32) {
    let (lo, hi) = (range.start, range.end);
    cells[..lo].fill(0.0);
    cells[hi..].fill(0.0);
    let row = &mut cells[lo..hi];
    let top = row.iter().fold(sink, |m, &s| m.max(s));
    row.iter_mut().for_each(|s| *s -= top);
    // The kernels' exp (the one every softmax here uses); the sum in f64, where many small
    // exponentials meet a large sink.
    kernels::exp_in_place(row);
    let total = row.iter().map(|&e| f64::from(e)).sum::<f64>()
        + f64::from(kernels::reference::exp(sink - top));
    row.iter_mut()
        .for_each(|s| *s = (f64::from(*s) / total) as f32);
}

/// The learned sink's share of each row of a softmax map whose rows lost mass to it (§7.9):
/// `1 − Σ_j a_ij`, summed in f64 and kept within `[0, 1]` (a row with no allowed key is all
/// zeros: the sink took everything). What the page's sink strip draws and its readout says.
///
/// ```
/// use diffattn::engine::softmax::sink_shares;
/// use ndarray::array;
/// // A row that kept a quarter and a half, and one that kept nothing.
/// let a = array![[0.25f32, 0.5], [0.0, 0.0]];
/// assert_eq!(sink_shares(a.view()), vec![0.25, 1.0]);
/// ```
pub fn sink_shares(map: ArrayView2<f32>) -> Vec<f32> {
    map.rows()
        .into_iter()
        .map(|row| {
            let kept: f64 = row.iter().map(|&a| f64::from(a)).sum();
            (1.0 - kept).clamp(0.0, 1.0) as f32
        })
        .collect()
}
