//! Standard scaled dot-product attention, the baseline every view starts from (DESIGN.md §1;
//! Vaswani et al. 2017, eq. 1): `A_h = softmax_row(Q_h·K_hᵀ / sqrt(d_h) + M)`.

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::kernels::{self, PackedB};
use super::layout::HeadShape;
use super::mask::Mask;
use super::projection::head;
use super::softmax::{softmax_range, softmax_rows};

/// The scores `Q_h·K_hᵀ / sqrt(d_h)` of one head, `(queries, keys)`.
///
/// ```
/// use diffattn::engine::standard::scaled_dot_scores;
/// use ndarray::array;
/// // d_h = 4, so the scale is 1/2: q·k = 1·2 + 1·2 + 0 + 0 = 4, halved is 2.
/// let s = scaled_dot_scores(array![[1.0f32, 1.0, 0.0, 0.0]].view(), array![[2.0f32, 2.0, 5.0, 5.0]].view());
/// assert_eq!(s[[0, 0]], 2.0);
/// ```
pub fn scaled_dot_scores(q_h: ArrayView2<f32>, k_h: ArrayView2<f32>) -> Array2<f32> {
    let scale = 1.0 / (q_h.ncols() as f32).sqrt();
    kernels::matmul(q_h, k_h.t(), scale)
}

/// Per-head attention maps from any per-head score function, masked and softmaxed.
///
/// `q` is `(queries, query_heads · d_h)` and `k` is `(keys, key_heads · d_h)`; query head `j`
/// scores against key head `shape.key_head(j)` (grouped-query attention; the same `j` in the
/// plain layout). Key `j` sits at position `j + key_offset` for the mask (see [`Mask`]). The
/// result has shape `(query_heads, queries, keys)`.
pub fn maps_from_scores(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    key_offset: usize,
    score: impl Fn(ArrayView2<f32>, ArrayView2<f32>) -> Array2<f32>,
) -> Result<Array3<f32>, EngineError> {
    let all: Vec<usize> = (0..shape.query_heads).collect();
    maps_from_scores_of(q, k, shape, mask, key_offset, &all, score)
}

/// [`maps_from_scores`] of the query heads `query_heads` only, in that order: map `i` of the
/// result is query head `query_heads[i]`, with the same bits as in the whole stack.
pub fn maps_from_scores_of(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    key_offset: usize,
    query_heads: &[usize],
    score: impl Fn(ArrayView2<f32>, ArrayView2<f32>) -> Array2<f32>,
) -> Result<Array3<f32>, EngineError> {
    let d_h = shape.head_dim;
    let mut maps = Array3::<f32>::zeros((query_heads.len(), q.nrows(), k.nrows()));
    for (&j, mut map) in query_heads.iter().zip(maps.axis_iter_mut(Axis(0))) {
        map.assign(&score(head(q, j, d_h), head(k, shape.key_head(j), d_h)));
        softmax_rows(map.view_mut(), mask, key_offset);
    }
    Ok(maps)
}

/// Standard attention maps `A`, shape `(heads, tokens, tokens)`.
///
/// The number of heads re-splits the same projections, so any `heads` dividing `d` works.
///
/// ```
/// use diffattn::engine::{standard, Mask};
/// use ndarray::array;
/// // Two tokens, one head of width 1: q = k = [0, 0], so every score is 0 and each row is
/// // uniform over the keys it may see: [1/2, 1/2] without a mask, [1, 0] then [1/2, 1/2] causal.
/// let q = array![[0.0f32], [0.0]];
/// let a = standard::attention(q.view(), q.view(), 1, Mask::causal(true)).unwrap();
/// assert_eq!(a[[0, 0, 0]], 1.0);
/// assert_eq!(a[[0, 0, 1]], 0.0);
/// assert_eq!(a[[0, 1, 1]], 0.5);
/// ```
pub fn attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    heads: usize,
    mask: Mask,
) -> Result<Array3<f32>, EngineError> {
    grouped(q, k, &HeadShape::plain(q.ncols(), heads)?, mask)
}

/// Standard attention maps over any head layout, `(query_heads, tokens, tokens)`.
///
/// The same cells as `maps_from_scores` with [`scaled_dot_scores`], without the score matrix:
/// a block of rows of `Q_h·K_hᵀ` goes straight into the map, only over the keys some row of the
/// block may see (half the products under the causal mask), and is softmaxed while it is still
/// in cache.
pub fn grouped(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
) -> Result<Array3<f32>, EngineError> {
    let all: Vec<usize> = (0..shape.query_heads).collect();
    grouped_of(q, k, shape, mask, &all)
}

/// [`grouped`] for the query heads `query_heads` only, in that order (map `i` is query head
/// `query_heads[i]`): each head is computed alone, so its bits are those of the whole stack.
pub fn grouped_of(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    query_heads: &[usize],
) -> Result<Array3<f32>, EngineError> {
    grouped_tempered_of(q, k, shape, mask, query_heads, 1.0)
}

/// [`grouped_of`] with the scores over a temperature: `softmax(Q_h·K_hᵀ / (T·sqrt(d_h)) + M)`
/// (the Differential Transformer's temperature, DESIGN.md §3). The scale is
/// `(1 / sqrt(d_h)) / T`; over `T = 1` it is `1 / sqrt(d_h)` exactly, so the maps are
/// [`grouped_of`]'s bit for bit.
pub fn grouped_tempered_of(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    query_heads: &[usize],
    temperature: f32,
) -> Result<Array3<f32>, EngineError> {
    let d_h = shape.head_dim;
    let (queries, keys) = (q.nrows(), k.nrows());
    let scale = 1.0 / (d_h as f32).sqrt() / temperature;
    let mut maps = Array3::<f32>::zeros((query_heads.len(), queries, keys));
    if maps.is_empty() {
        return Ok(maps);
    }
    // Q_h is read in place: its columns j·d_h .. (j+1)·d_h of Q's rows (row stride Q's width),
    // not copied out head by head.
    let q = q.as_standard_layout();
    let (q_all, q_width) = (q.as_slice().expect("standard layout"), q.ncols());
    for (&j, mut map) in query_heads.iter().zip(maps.axis_iter_mut(Axis(0))) {
        let k_t = PackedB::new(head(k, shape.key_head(j), d_h).t());
        let q_cells = &q_all[j * d_h..];
        let cells = map.as_slice_mut().expect("a fresh array is contiguous");
        for start in (0..queries).step_by(ROW_BLOCK) {
            let rows = start..(start + ROW_BLOCK).min(queries);
            let ranges: Vec<_> = rows
                .clone()
                .map(|i| mask.allowed_keys(i, 0, keys))
                .collect();
            let lo = ranges
                .iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.start)
                .min();
            let hi = ranges.iter().map(|r| r.end).max();
            let block = &mut cells[rows.start * keys..rows.end * keys];
            if let (Some(lo), Some(hi)) = (lo, hi) {
                k_t.mul_rows(q_cells, q_width, rows.clone(), lo..hi, scale, block, keys);
            }
            if ranges.iter().all(|r| *r == (0..keys)) {
                // Every key allowed (no mask): the block's rows in one call.
                kernels::softmax_rows(block, keys);
            } else {
                for (row, range) in block.chunks_exact_mut(keys).zip(ranges) {
                    softmax_range(row, range);
                }
            }
        }
    }
    Ok(maps)
}

/// Rows of scores computed and softmaxed together: 16 rows of 2,048 keys are 128 KB, which
/// stays in a core's L2 cache between the product and the softmax.
const ROW_BLOCK: usize = 16;
