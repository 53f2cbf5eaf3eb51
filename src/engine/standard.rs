//! Standard scaled dot-product attention, the baseline every view starts from (DESIGN.md §1;
//! Vaswani et al. 2017, eq. 1): `A_h = softmax_row(Q_h·K_hᵀ / sqrt(d_h) + M)`.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::kernels::{self, PackedB};
use super::mask::Mask;
use super::numeric::fit;
use super::projection::head;
use super::softmax::{softmax_range, softmax_range_with_sink, softmax_rows};

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

/// Rows `queries` of per-head attention maps from any per-head score function, masked and
/// softmaxed, into `out`.
///
/// `q` is `(tokens, query_heads · d_h)` and `k` is `(keys, key_heads · d_h)`; query head `j`
/// scores against key head `shape.key_head(j)` (grouped-query attention; the same `j` in the
/// plain layout). Key `j` sits at position `j + key_offset` for the mask (see [`Mask`]). `out`
/// becomes `(query_heads.len(), tokens, keys)` (kept when it already is), map `i` being query
/// head `query_heads[i]`; only the rows `queries` are written, each with the bits it has when
/// every row is computed at once (a row's cells depend on that row alone).
#[allow(clippy::too_many_arguments)]
pub fn maps_from_scores_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    key_offset: usize,
    query_heads: &[usize],
    queries: Range<usize>,
    score: impl Fn(ArrayView2<f32>, ArrayView2<f32>) -> Array2<f32>,
    out: &mut Array3<f32>,
) -> Result<(), EngineError> {
    let d_h = shape.head_dim;
    fit(out, (query_heads.len(), q.nrows(), k.nrows()));
    check_rows(&queries, q.nrows())?;
    let rows = q.slice(s![queries.clone(), ..]);
    for (&j, mut map) in query_heads.iter().zip(out.axis_iter_mut(Axis(0))) {
        let mut block = map.slice_mut(s![queries.clone(), ..]);
        block.assign(&score(head(rows, j, d_h), head(k, shape.key_head(j), d_h)));
        softmax_rows(block, mask, key_offset, queries.start);
    }
    Ok(())
}

/// Rows `queries` of standard attention maps `A_h = softmax_row(Q_h·K_hᵀ / (T·sqrt(d_h)) + M)`
/// (with a captured layer's own scale and soft cap, `shape.scores`, DESIGN.md §7.9)
/// over any head layout, for the query heads `query_heads`, into `out`, which becomes
/// `(query_heads.len(), tokens, keys)` (kept when it already is; map `i` is query head
/// `query_heads[i]`). Each head and row is computed alone, so a block has the bits it has in
/// the whole stack; the rest of `out` is left as it was.
///
/// The same cells as [`maps_from_scores_into`] with [`scaled_dot_scores`], without the score
/// matrix: a block of rows of `Q_h·K_hᵀ` goes straight into the map, only over the keys some
/// row of the block may see (half the products under the causal mask), and is softmaxed while
/// it is still in cache. `temperature` `T` is 1 but for the Differential Transformer's
/// (DESIGN.md §3); the scale is `fl(fl(1/√d_h)/T)`, so `T = 1` is exactly the plain scale.
///
/// ```
/// use diffattn::engine::{standard, HeadShape, Mask};
/// use ndarray::{array, Array3};
/// // Two tokens, one head of width 1: q = k = [0, 0], so every score is 0 and each row is
/// // uniform over the keys it may see: [1, 0] then [1/2, 1/2] under the causal mask.
/// let q = array![[0.0f32], [0.0]];
/// let shape = HeadShape::plain(1, 1).unwrap();
/// let mut a = Array3::zeros((0, 0, 0));
/// standard::maps_into(q.view(), q.view(), &shape, Mask::causal(true), &[0], 0..2, 1.0, &mut a).unwrap();
/// assert_eq!(a[[0, 0, 0]], 1.0);
/// assert_eq!(a[[0, 0, 1]], 0.0);
/// assert_eq!(a[[0, 1, 1]], 0.5);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn maps_into(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    shape: &HeadShape,
    mask: Mask,
    query_heads: &[usize],
    queries: Range<usize>,
    temperature: f32,
    out: &mut Array3<f32>,
) -> Result<(), EngineError> {
    let d_h = shape.head_dim;
    let (tokens, keys) = (q.nrows(), k.nrows());
    let scale = shape.scores.scale / temperature;
    let softcap = shape.scores.softcap;
    let sinks = shape.scores.sinks.as_deref();
    let relative_bias = shape.scores.relative_bias.as_ref();
    fit(out, (query_heads.len(), tokens, keys));
    check_rows(&queries, tokens)?;
    if out.is_empty() || queries.is_empty() {
        return Ok(());
    }
    // Q_h is read in place: its columns j·d_h .. (j+1)·d_h of Q's rows (row stride Q's width),
    // not copied out head by head.
    let q = q.as_standard_layout();
    let (q_all, q_width) = (q.as_slice().expect("standard layout"), q.ncols());
    for (&j, mut map) in query_heads.iter().zip(out.axis_iter_mut(Axis(0))) {
        let k_t = PackedB::new(head(k, shape.key_head(j), d_h).t());
        let q_cells = &q_all[j * d_h..];
        let cells = map.as_slice_mut().expect("fit gives standard layout");
        // Blocks of ROW_BLOCK rows counted from row 0, so a range's blocks are the whole map's.
        let first = queries.start - queries.start % ROW_BLOCK;
        for start in (first..queries.end).step_by(ROW_BLOCK) {
            let rows = start.max(queries.start)..(start + ROW_BLOCK).min(queries.end);
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
                if let Some(bias) = relative_bias {
                    // Column k − i + L − 1 of head j's row: the bias of key k for query i.
                    let bias = bias.row(j);
                    for (i, row) in rows.clone().zip(block.chunks_exact_mut(keys)) {
                        let first = lo + tokens - 1 - i;
                        let offsets = bias.slice(s![first..first + (hi - lo)]);
                        row[lo..hi]
                            .iter_mut()
                            .zip(offsets)
                            .for_each(|(s, b)| *s += b);
                    }
                }
                if let Some(c) = softcap {
                    for row in block.chunks_exact_mut(keys) {
                        row[lo..hi]
                            .iter_mut()
                            .for_each(|s| *s = c * (*s / c).tanh());
                    }
                }
            }
            if let Some(sink) = sinks.map(|s| s[j]) {
                for (row, range) in block.chunks_exact_mut(keys).zip(ranges) {
                    softmax_range_with_sink(row, range, sink);
                }
            } else if ranges.iter().all(|r| *r == (0..keys)) {
                // Every key allowed (no mask): the block's rows in one call.
                kernels::softmax_rows(block, keys);
            } else {
                for (row, range) in block.chunks_exact_mut(keys).zip(ranges) {
                    softmax_range(row, range);
                }
            }
        }
    }
    Ok(())
}

/// Refuses a range of query rows that is not within `0..tokens`.
pub(crate) fn check_rows(queries: &Range<usize>, tokens: usize) -> Result<(), EngineError> {
    if queries.start > queries.end || queries.end > tokens {
        return Err(EngineError::Shape {
            field: "queries",
            expected: format!("rows within 0..{tokens}"),
            found: format!("{queries:?}"),
        });
    }
    Ok(())
}

/// The heads `of`'s share of `concat_h(A_h·V_{g(h)})` (DESIGN.md §1, before `·W_oᵀ + b_o`):
/// each head's final map (`map_of(h)`, `(queries, keys)`, wherever a caller keeps it) mixes
/// the values into its columns `h·d_h .. (h+1)·d_h` of `concat`, which becomes
/// `(queries, heads · d_h)` (kept when it already is; its other columns left as they were).
///
/// `v` is `(keys, kv_heads · d_h)`; head `h` uses value head `g(h) = ⌊h / (heads / kv_heads)⌋`
/// (grouped-query attention, §7.1), which is head `h` itself in the plain layout.
pub fn mix_into<'a>(
    heads: usize,
    of: Range<usize>,
    map_of: &dyn Fn(usize) -> ArrayView2<'a, f32>,
    v: ArrayView2<f32>,
    shape: &HeadShape,
    concat: &mut Array2<f32>,
) {
    let d_v = shape.head_dim;
    let width = heads * d_v;
    let queries = of
        .clone()
        .next()
        .map_or(concat.nrows(), |h| map_of(h).nrows());
    if concat.dim() != (queries, width) || !concat.is_standard_layout() {
        *concat = Array2::zeros((queries, width));
    }
    let cells = concat.as_slice_mut().expect("standard layout");
    for h in of {
        let map = map_of(h);
        // saturate(A_h·V_g(h)), straight into columns h·d_v .. (h+1)·d_v of the concatenation.
        let v_h = PackedB::new(head(v, shape.value_head(h), d_v));
        let map = map.as_standard_layout();
        let keys = map.ncols();
        let a = map.as_slice().expect("standard layout");
        v_h.mul_rows(
            a,
            keys,
            0..queries,
            0..d_v,
            1.0,
            &mut cells[h * d_v..],
            width,
        );
    }
}

/// Rows of scores computed and softmaxed together: 16 rows of 2,048 keys are 128 KB, which
/// stays in a core's L2 cache between the product and the softmax.
const ROW_BLOCK: usize = 16;
