//! Shift-difference gated attention, the mechanism the mission is about (DESIGN.md §2).
//!
//! From a map `A` it builds `shift_k(A)`, the difference `D`, the elementwise gate
//! `G = sigmoid(alpha·A + beta·D + gamma)` and the fused map `A' = A + G ⊙ D`. The source
//! article's code reshapes `L x L` maps into `d`-wide vectors, which only works when
//! `L == d_h`; DESIGN.md §2 gives the well-posed version implemented here, whose gate has three
//! scalars per head and so serves sentences of any length.

use std::ops::Range;

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::kernels;
use super::mask::Mask;
use super::numeric::fit;
#[cfg(test)]
use super::numeric::{saturate, sigmoid};
pub use super::params::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use super::softmax::softmax_rows;
use super::stage::StageId;
use super::standard::check_rows;

/// `shift_k(A)` along the keys (columns) of one map.
///
/// ```
/// use diffattn::engine::shift_diff::{shift, ShiftFill};
/// use ndarray::array;
/// let a = array![[0.5f32, 0.3, 0.2]];
/// // k = 1 moves mass one key later: circular wraps the last key round to the first.
/// assert_eq!(shift(a.view(), 1, ShiftFill::Circular), array![[0.2f32, 0.5, 0.3]]);
/// assert_eq!(shift(a.view(), 1, ShiftFill::Zero), array![[0.0f32, 0.5, 0.3]]);
/// // k = -1 moves it earlier, and k = 3 = L is the identity in circular mode.
/// assert_eq!(shift(a.view(), -1, ShiftFill::Circular), array![[0.3f32, 0.2, 0.5]]);
/// assert_eq!(shift(a.view(), 3, ShiftFill::Circular), a);
/// ```
pub fn shift(a: ArrayView2<f32>, k: i64, fill: ShiftFill) -> Array2<f32> {
    let mut out = Array2::<f32>::zeros(a.raw_dim());
    for (src, mut dst) in a.axis_iter(Axis(0)).zip(out.axis_iter_mut(Axis(0))) {
        let dst = dst.as_slice_mut().expect("a fresh array is contiguous");
        match src.as_slice() {
            Some(src) => shift_row(src, k, false, fill, dst),
            None => shift_row(&src.to_vec(), k, false, fill, dst),
        }
    }
    out
}

/// One row of `shift_k` (or of `shift_{-k}` when `backwards`), as at most two block copies
/// rather than an index computation per cell: `dst[j] = src[j - k]`, wrapped round (circular)
/// or 0 out of range (zero). `src` and `dst` have the same length. Computing `-k` is avoided,
/// so `k = i64::MIN` is as well defined as any other shift.
fn shift_row(src: &[f32], k: i64, backwards: bool, fill: ShiftFill, dst: &mut [f32]) {
    let n = src.len();
    if n == 0 {
        return;
    }
    match fill {
        ShiftFill::Circular => {
            // Rotating right by r = k mod L; `shift_{-k}` rotates right by (L - r) mod L.
            let r = k.rem_euclid(n as i64) as usize;
            let r = if backwards { (n - r) % n } else { r };
            dst[r..].copy_from_slice(&src[..n - r]);
            dst[..r].copy_from_slice(&src[n - r..]);
        }
        ShiftFill::Zero => {
            let m = usize::try_from(k.unsigned_abs()).map_or(n, |m| m.min(n));
            if (k >= 0) != backwards {
                dst[..m].fill(0.0);
                dst[m..].copy_from_slice(&src[..n - m]);
            } else {
                dst[..n - m].copy_from_slice(&src[m..]);
                dst[n - m..].fill(0.0);
            }
        }
    }
}

/// The maps after `A` for every head, each `(heads, queries, keys)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftDiffMaps {
    /// `shift_{+k}(A)`.
    pub shifted: Array3<f32>,
    /// `shift_{-k}(A)`, present in symmetric mode only.
    pub shifted_back: Option<Array3<f32>>,
    /// The difference `D`.
    pub d: Array3<f32>,
    /// The gate `G`.
    pub g: Array3<f32>,
    /// The fused map `A'`, after any renormalisation.
    pub fused: Array3<f32>,
}

impl Default for ShiftDiffMaps {
    fn default() -> ShiftDiffMaps {
        ShiftDiffMaps::empty()
    }
}

impl ShiftDiffMaps {
    /// Every head's map of `stage`, if it is one of the shift stages.
    pub fn stage(&self, stage: StageId) -> Option<&Array3<f32>> {
        match stage {
            StageId::Shifted => Some(&self.shifted),
            StageId::ShiftedBack => self.shifted_back.as_ref(),
            StageId::D => Some(&self.d),
            StageId::G => Some(&self.g),
            StageId::Fused => Some(&self.fused),
            _ => None,
        }
    }

    /// No maps yet: buffers for [`shift_diff_maps_into`] to fill.
    pub fn empty() -> ShiftDiffMaps {
        ShiftDiffMaps {
            shifted: Array3::default((0, 0, 0)),
            shifted_back: None,
            d: Array3::default((0, 0, 0)),
            g: Array3::default((0, 0, 0)),
            fused: Array3::default((0, 0, 0)),
        }
    }
}

/// Builds every stage after `A` from the per-head maps `a` (DESIGN.md §2).
///
/// `mask` is the mask `A` was computed with, and it holds in every map (DESIGN.md §2): each
/// shifted map is masked again after the shift, so `shift(A)`, `D` and `A'` are 0 wherever the
/// mask forbids a cell (mass a shift would move into the future is dropped), and the softmax
/// renormalisation runs over the allowed cells only. `G` is defined everywhere.
///
/// ```
/// use diffattn::engine::shift_diff::*;
/// use diffattn::engine::Mask;
/// use ndarray::array;
/// // One head, one query over three keys, k = 1, circular:
/// // A = [0.5, 0.3, 0.2], shift(A) = [0.2, 0.5, 0.3], D = [0.3, -0.2, -0.1].
/// // With alpha = beta = gamma = 0 the gate is sigmoid(0) = 0.5 everywhere, so
/// // A' = A + 0.5·D = [0.65, 0.2, 0.15].
/// let a = array![[[0.5f32, 0.3, 0.2]]];
/// let params = ShiftDiffParams {
///     shift: 1,
///     difference: Difference::Single,
///     fill: ShiftFill::Circular,
///     renormalize: Renormalize::None,
///     gate: Gate::uniform(1, 0.0, 0.0, 0.0),
/// };
/// let maps = shift_diff_maps(&a, &params, Mask::FULL).unwrap();
/// assert_eq!(maps.g[[0, 0, 0]], 0.5);
/// let fused: Vec<f32> = maps.fused.iter().copied().collect();
/// for (got, want) in fused.iter().zip([0.65, 0.2, 0.15]) {
///     assert!((got - want).abs() < 1e-6);
/// }
/// ```
pub fn shift_diff_maps(
    a: &Array3<f32>,
    params: &ShiftDiffParams,
    mask: Mask,
) -> Result<ShiftDiffMaps, EngineError> {
    let mut out = ShiftDiffMaps::empty();
    shift_diff_maps_into(a, params, mask, 0..a.dim().1, &mut out)?;
    Ok(out)
}

/// Rows `queries` of [`shift_diff_maps`] into `out`, reusing its buffers when they have `a`'s
/// shape: a dragged shift slider recomputes these stages every frame, and at 512 tokens and 8
/// heads they are 32 MB that would otherwise be allocated and zeroed each time. Every cell of
/// those rows is overwritten; the other rows are left as they were (a caller computes a map's
/// rows in blocks, between frames). `params.gate` has one scalar of each kind per map of `a`.
/// On error `out` is left as it was.
pub fn shift_diff_maps_into(
    a: &Array3<f32>,
    params: &ShiftDiffParams,
    mask: Mask,
    queries: Range<usize>,
    out: &mut ShiftDiffMaps,
) -> Result<(), EngineError> {
    let (heads, tokens, keys) = a.dim();
    params.gate.check(heads)?;
    check_rows(&queries, tokens)?;
    let dim = a.dim();
    for buffer in [&mut out.shifted, &mut out.d, &mut out.g, &mut out.fused] {
        fit(buffer, dim);
    }
    match params.difference {
        Difference::Single => out.shifted_back = None,
        Difference::Symmetric => fit(
            out.shifted_back.get_or_insert_with(|| Array3::zeros(dim)),
            dim,
        ),
    }
    if a.is_empty() || queries.is_empty() {
        return Ok(());
    }
    let a = a.as_standard_layout();
    let a_cells = a.as_slice().expect("standard layout");
    // `fit` left every buffer in standard layout, so each is one row-major slice.
    let contiguous = "fit gives standard layout";
    let shifted = out.shifted.as_slice_mut().expect(contiguous);
    let d = out.d.as_slice_mut().expect(contiguous);
    let g = out.g.as_slice_mut().expect(contiguous);
    let fused = out.fused.as_slice_mut().expect(contiguous);
    let mut back = out
        .shifted_back
        .as_mut()
        .map(|b| b.as_slice_mut().expect(contiguous));
    let map_len = tokens * keys;
    // Rows go to the difference and gate kernel in blocks of about GATE_BLOCK cells, not one
    // by one: the kernel is elementwise, so a block's bits are its rows' bits, and a call per
    // row cost more than its work at small sizes (the wasm build makes the kernel's eighteen
    // constants on every call).
    let block_rows = (GATE_BLOCK / keys.max(1)).max(1);
    for h in 0..heads {
        let (alpha, beta, gamma) = (
            params.gate.alpha[h],
            params.gate.beta[h],
            params.gate.gamma[h],
        );
        for first in (queries.start..queries.end).step_by(block_rows) {
            let rows = first..(first + block_rows).min(queries.end);
            for i in rows.clone() {
                let row = h * map_len + i * keys..h * map_len + (i + 1) * keys;
                let a_row = &a_cells[row.clone()];
                // The mask holds in every map (DESIGN.md §2): what a shift moves into a cell
                // the mask forbids is dropped, so D, G ⊙ D and A' are 0 there too.
                let allowed = mask.allowed_keys(i, 0, keys);
                let s_row = &mut shifted[row.clone()];
                shift_row(a_row, params.shift, false, params.fill, s_row);
                keep_only(s_row, allowed.clone());
                if let Some(back) = back.as_deref_mut() {
                    let b_row = &mut back[row];
                    shift_row(a_row, params.shift, true, params.fill, b_row);
                    keep_only(b_row, allowed);
                }
            }
            let cells = h * map_len + rows.start * keys..h * map_len + rows.end * keys;
            let minuend: &[f32] = match back.as_deref() {
                None => &a_cells[cells.clone()],
                Some(back) => &back[cells.clone()],
            };
            // D = minuend − shift(A), G = σ(α·A + β·D + γ), A′ = A + G ⊙ D in one pass.
            kernels::difference_gate(
                minuend,
                &shifted[cells.clone()],
                &a_cells[cells.clone()],
                (alpha, beta, gamma),
                &mut d[cells.clone()],
                &mut g[cells.clone()],
                &mut fused[cells],
            );
        }
    }
    if params.renormalize == Renormalize::Softmax {
        for fused_h in out.fused.axis_iter_mut(Axis(0)) {
            let rows = fused_h.slice_move(s![queries.clone(), ..]);
            softmax_rows(rows, mask, 0, queries.start);
        }
    }
    Ok(())
}

/// The cells of one call of the difference and gate kernel: 8,192 (32 KB a map, five maps
/// in a core's L2 cache), a whole head's map up to 90 tokens.
const GATE_BLOCK: usize = 8192;

/// Zeroes every cell of `row` outside `allowed` (the keys the mask lets this query see).
fn keep_only(row: &mut [f32], allowed: std::ops::Range<usize>) {
    row[..allowed.start].fill(0.0);
    row[allowed.end..].fill(0.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stages cell by cell, straight from DESIGN.md §2: what the row-wise, buffer-reusing
    /// implementation must reproduce bit for bit.
    fn reference(a: &Array3<f32>, p: &ShiftDiffParams, mask: Mask) -> ShiftDiffMaps {
        let (heads, queries, keys) = a.dim();
        let at = |h: usize, i: usize, k: i64, j: usize| -> f32 {
            let from = j as i128 - i128::from(k);
            let l = keys as i128;
            match p.fill {
                ShiftFill::Circular => a[[h, i, from.rem_euclid(l) as usize]],
                ShiftFill::Zero if (0..l).contains(&from) => a[[h, i, from as usize]],
                ShiftFill::Zero => 0.0,
            }
        };
        let back_k = -i128::from(p.shift);
        let dim = (heads, queries, keys);
        let masked = |i: usize, j: usize, v: f32| if mask.allows(i, j) { v } else { 0.0 };
        let shifted = Array3::from_shape_fn(dim, |(h, i, j)| masked(i, j, at(h, i, p.shift, j)));
        let shifted_back = (p.difference == Difference::Symmetric).then(|| {
            Array3::from_shape_fn(dim, |(h, i, j)| {
                // -k may not fit in an i64; shifting by any multiple of L changes nothing
                // circularly, and by L or more leaves nothing in zero fill.
                let k = i64::try_from(back_k).unwrap_or(i64::MAX);
                let k = match p.fill {
                    ShiftFill::Circular => (back_k.rem_euclid(keys as i128)) as i64,
                    ShiftFill::Zero => k,
                };
                masked(i, j, at(h, i, k, j))
            })
        });
        let d = Array3::from_shape_fn(dim, |(h, i, j)| match &shifted_back {
            None => a[[h, i, j]] - shifted[[h, i, j]],
            Some(b) => b[[h, i, j]] - shifted[[h, i, j]],
        });
        let g = Array3::from_shape_fn(dim, |(h, i, j)| {
            let x =
                p.gate.alpha[h] * a[[h, i, j]] + p.gate.beta[h] * d[[h, i, j]] + p.gate.gamma[h];
            sigmoid(saturate(x))
        });
        let mut fused = Array3::from_shape_fn(dim, |(h, i, j)| {
            saturate(a[[h, i, j]] + g[[h, i, j]] * d[[h, i, j]])
        });
        if p.renormalize == Renormalize::Softmax {
            for h in 0..heads {
                crate::engine::softmax::masked_softmax_rows(
                    fused.index_axis_mut(Axis(0), h),
                    |i, j| mask.allows(i, j),
                );
            }
        }
        ShiftDiffMaps {
            shifted,
            shifted_back,
            d,
            g,
            fused,
        }
    }

    #[test]
    fn the_fast_stages_are_the_reference_stages_bit_for_bit() {
        let (heads, n) = (3, 7);
        let mut seed = 12_345_u32;
        let a = Array3::from_shape_fn((heads, n, n), |_| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32
        });
        let mut reused = ShiftDiffMaps::empty();
        let shifts = [
            0,
            1,
            -1,
            3,
            -6,
            7,
            -7,
            8,
            15,
            -15,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ];
        for shift in shifts {
            for fill in [ShiftFill::Circular, ShiftFill::Zero] {
                for difference in [Difference::Single, Difference::Symmetric] {
                    for renormalize in [Renormalize::None, Renormalize::Softmax] {
                        let p = ShiftDiffParams {
                            shift,
                            difference,
                            fill,
                            renormalize,
                            gate: Gate {
                                alpha: vec![0.0, 1.5, -2.0],
                                beta: vec![4.0, -3.0, 0.5],
                                gamma: vec![0.0, -0.5, 1.0],
                            },
                        };
                        let mask = Mask::causal(shift % 2 == 0);
                        let want = reference(&a, &p, mask);
                        shift_diff_maps_into(&a, &p, mask, 0..a.dim().1, &mut reused).unwrap();
                        for (name, got, want) in [
                            ("shifted", &reused.shifted, &want.shifted),
                            ("d", &reused.d, &want.d),
                            ("g", &reused.g, &want.g),
                            ("fused", &reused.fused, &want.fused),
                        ] {
                            let bits = |m: &Array3<f32>| m.mapv(f32::to_bits);
                            assert_eq!(bits(got), bits(want), "{name} for {p:?}");
                        }
                        assert_eq!(
                            reused.shifted_back.as_ref().map(|m| m.mapv(f32::to_bits)),
                            want.shifted_back.as_ref().map(|m| m.mapv(f32::to_bits)),
                            "shifted_back for {p:?}"
                        );
                    }
                }
            }
        }
    }
}
