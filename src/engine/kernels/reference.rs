//! The scalar reference of every kernel: one element at a time, in the order the SIMD kernels
//! keep, so that every lane of every vector path gives these bits. The portable path (any
//! target without AVX2 or wasm `simd128`, such as the baseline wasm build) runs these
//! functions themselves; the tests hold every vector path to them bit for bit.

use std::ops::Range;

/// `log2(e)`, rounded to f32.
pub(super) const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `ln 2` split in two (Cody and Waite): the high part has 9 significant bits, so `n·LN2_HI`
/// is exact for every `n` the exponential uses, and `LN2_HI + LN2_LO` is `ln 2` to about 2^-33.
pub(super) const LN2_HI: f32 = f32::from_bits(0x3f31_8000); // 0.693359375 exactly
#[allow(clippy::excessive_precision)]
pub(super) const LN2_LO: f32 = -2.121_944_40e-4;
/// `1.5·2^23`: adding it rounds a float of magnitude below 2^22 to the nearest integer (ties to
/// even), which then sits in the low bits of the sum.
pub(super) const ROUND_MAGIC: f32 = 12_582_912.0;
/// Cephes `expf` (S. L. Moshier, Cephes Math Library 2.2, `expf.c`): `e^r ≈ 1 + r + r²·P(r)`
/// on `|r| ≤ ln(2)/2`, its coefficients as published.
#[allow(clippy::excessive_precision)]
pub(super) const P: [f32; 6] = [
    1.987_569_150_0e-4,
    1.398_199_950_7e-3,
    8.333_451_907_3e-3,
    4.166_579_589_4e-2,
    1.666_666_545_9e-1,
    5.000_000_120_1e-1,
];
/// Below this `e^x` rounds to 0 (it is less than half the smallest subnormal, 2^-150).
pub(super) const EXP_LO: f32 = -104.0;
/// Above this `e^x` is infinite (overflow starts at `ln(f32::MAX) ≈ 88.72`).
pub(super) const EXP_HI: f32 = 89.0;

/// `e^x` for every f32 `x`, by a Cephes polynomial with no fused multiply-add, so the same bits
/// on every target: within 1 ulp of the exact value for every input (0.9903 ulp at worst,
/// subnormal results included; all 2^32 inputs checked by `scripts/test-exp`), `e^x`
/// overflows to `+inf` from about 88.72, `e^-inf = 0`, and NaN stays NaN.
///
/// `x = n·ln2 + r` with `n` the nearest integer to `x·log2(e)` and `|r| ≲ ln(2)/2`;
/// `e^x = 2^n·(1 + r + r²·P(r))`, and `2^n` is applied as two factors `2^⌊n/2⌋·2^(n - ⌊n/2⌋)`
/// so that results in the subnormal range are rounded once, correctly.
///
/// ```
/// use diffattn::engine::kernels::exp;
/// assert_eq!(exp(0.0), 1.0);
/// assert!((exp(1.0) - std::f32::consts::E).abs() <= f32::EPSILON * 3.0);
/// assert_eq!(exp(-200.0), 0.0);
/// assert_eq!(exp(f32::NEG_INFINITY), 0.0);
/// assert_eq!(exp(100.0), f32::INFINITY);
/// assert!(exp(f32::NAN).is_nan());
/// ```
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // The clamps in the order of x86's `minps`/`maxps` and wasm's `pmin`/`pmax`: the limit
    // when it is the smaller (larger), else `x`, so a NaN passes through.
    let x = if EXP_HI < x { EXP_HI } else { x };
    let x = if EXP_LO > x { EXP_LO } else { x };
    let k = x * LOG2E + ROUND_MAGIC;
    let n = k - ROUND_MAGIC;
    let r = x - n * LN2_HI;
    let r = r - n * LN2_LO;
    let z = r * r;
    let p = ((((P[0] * r + P[1]) * r + P[2]) * r + P[3]) * r + P[4]) * r + P[5];
    let y = p * z + r + 1.0;
    let (s1, s2) = pow2_split(k);
    y * s1 * s2
}

/// `2^n` as two factors `2^⌊n/2⌋` and `2^(n - ⌊n/2⌋)`, from `k = n + ROUND_MAGIC`.
#[inline(always)]
pub(super) fn pow2_split(k: f32) -> (f32, f32) {
    let n = (k.to_bits() as i32).wrapping_sub(ROUND_MAGIC.to_bits() as i32);
    let n1 = n >> 1;
    let n2 = n.wrapping_sub(n1);
    let factor = |m: i32| f32::from_bits((m.wrapping_add(127) << 23) as u32);
    (factor(n1), factor(n2))
}

/// Maps a possibly non-finite value to a finite one: infinities saturate, NaN becomes 0
/// (the same rule as `numeric::saturate`).
#[inline(always)]
pub(super) fn saturate(v: f32) -> f32 {
    if v.is_finite() {
        v
    } else if v.is_nan() {
        0.0
    } else {
        v.signum() * f32::MAX
    }
}

/// The logistic function `1 / (1 + e^-x)` with one [`exp`] of `-|x|`.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let numerator = if x >= 0.0 { 1.0 } else { e };
    numerator / (1.0 + e)
}

/// How many partial sums a row's softmax keeps: element `j` of a row goes to partial sum
/// `j % SUM_LANES`, which is what an 8-lane vector does, so the total is the same everywhere.
pub const SUM_LANES: usize = 8;

/// The total of the partial sums, in a fixed tree.
#[inline(always)]
pub fn sum_lanes(l: [f32; SUM_LANES]) -> f32 {
    ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

/// [`softmax`] of every row of `x`, rows of `keys` cells one after another (a last partial
/// row is left as it is).
pub fn softmax_rows(x: &mut [f32], keys: usize) {
    if keys == 0 {
        return;
    }
    for row in x.chunks_exact_mut(keys) {
        softmax(row);
    }
}

/// The softmax of a row in place: `e_j = exp(x_j − max)`, then `e_j · (1 / Σ e)` with the sum
/// in [`SUM_LANES`] partial sums. `x` must not hold NaN or `+inf`; a row of `-inf` becomes
/// zeros, and an empty row stays empty.
pub fn softmax(x: &mut [f32]) {
    let max = x
        .iter()
        .fold(f32::NEG_INFINITY, |m, &s| if s > m { s } else { m });
    if max == f32::NEG_INFINITY {
        // Nothing to attend to (every score -inf): no weight anywhere, never NaN.
        x.fill(0.0);
        return;
    }
    // Element j goes to partial sum j % 8: eight at a time into eight locals (registers, also
    // in the size-optimised wasm build), then the tail into the first few.
    let (mut l0, mut l1, mut l2, mut l3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    let (mut l4, mut l5, mut l6, mut l7) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    let mut chunks = x.chunks_exact_mut(SUM_LANES);
    for c in &mut chunks {
        let [s0, s1, s2, s3, s4, s5, s6, s7] = c else {
            unreachable!("chunks of eight")
        };
        *s0 = exp(*s0 - max);
        l0 += *s0;
        *s1 = exp(*s1 - max);
        l1 += *s1;
        *s2 = exp(*s2 - max);
        l2 += *s2;
        *s3 = exp(*s3 - max);
        l3 += *s3;
        *s4 = exp(*s4 - max);
        l4 += *s4;
        *s5 = exp(*s5 - max);
        l5 += *s5;
        *s6 = exp(*s6 - max);
        l6 += *s6;
        *s7 = exp(*s7 - max);
        l7 += *s7;
    }
    let mut lanes = [l0, l1, l2, l3, l4, l5, l6, l7];
    for (lane, s) in lanes.iter_mut().zip(chunks.into_remainder()) {
        *s = exp(*s - max);
        *lane += *s;
    }
    let inv = 1.0 / sum_lanes(lanes);
    for s in x.iter_mut() {
        *s *= inv;
    }
}

/// `e^x` of every element in place.
pub fn exp_in_place(x: &mut [f32]) {
    for v in x {
        *v = exp(*v);
    }
}

/// One row of the shift stages after the shift (DESIGN.md §2): `D = minuend − subtrahend`,
/// `G = sigmoid(saturate(α·A + β·D + γ))`, `A′ = saturate(A + G·D)`.
#[allow(clippy::too_many_arguments)]
pub fn difference_gate(
    minuend: &[f32],
    subtrahend: &[f32],
    a: &[f32],
    (alpha, beta, gamma): (f32, f32, f32),
    d: &mut [f32],
    g: &mut [f32],
    fused: &mut [f32],
) {
    let n = a.len();
    let (minuend, subtrahend) = (&minuend[..n], &subtrahend[..n]);
    let (d, g, fused) = (&mut d[..n], &mut g[..n], &mut fused[..n]);
    for j in 0..n {
        let dj = minuend[j] - subtrahend[j];
        let gate = sigmoid(saturate(alpha * a[j] + beta * dj + gamma));
        d[j] = dj;
        g[j] = gate;
        fused[j] = saturate(a[j] + gate * dj);
    }
}

/// `C[i, j] = saturate(scale · Σ_p A[i, p]·B[p, j])` for the rows `rows` of `A` and the
/// columns `cols` of `B`, the sum taken from `p = 0` up, one product and one addition at a
/// time (no fused multiply-add), starting from `+0`: the textbook triple loop's order. `a` is
/// row-major with row stride `lda`; `b` is `B` (`k × n`) in panels of eight columns, each
/// `k × 8` contiguous (`PackedB`); row `i` of the result goes to `c[(i - rows.start)·ldc + j]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_rows(
    a: &[f32],
    lda: usize,
    k: usize,
    b: &[f32],
    rows: Range<usize>,
    cols: Range<usize>,
    scale: f32,
    c: &mut [f32],
    ldc: usize,
) {
    let (first, last) = (cols.start / 8, cols.end.div_ceil(8));
    for (r, i) in rows.enumerate() {
        let a_row = &a[i * lda..i * lda + k];
        for q in first..last {
            let panel = &b[q * k * 8..(q + 1) * k * 8];
            // One panel's eight sums in eight locals (registers, also in the size-optimised
            // wasm build), each added to in order of p.
            let (mut s0, mut s1, mut s2, mut s3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            let (mut s4, mut s5, mut s6, mut s7) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
            for (&x, line) in a_row.iter().zip(panel.chunks_exact(8)) {
                let &[b0, b1, b2, b3, b4, b5, b6, b7] = line else {
                    unreachable!("chunks of eight")
                };
                s0 += x * b0;
                s1 += x * b1;
                s2 += x * b2;
                s3 += x * b3;
                s4 += x * b4;
                s5 += x * b5;
                s6 += x * b6;
                s7 += x * b7;
            }
            for (lane, sum) in [s0, s1, s2, s3, s4, s5, s6, s7].into_iter().enumerate() {
                let j = q * 8 + lane;
                if cols.contains(&j) {
                    c[r * ldc + j] = saturate(sum * scale);
                }
            }
        }
    }
}

/// The smallest and largest of `x`, `[min, max]` into `out` (`[+inf, -inf]` for none); a NaN
/// takes no part. The order of comparisons does not change the result, so every path gives it.
pub fn extremes(x: &[f32], out: &mut [f32; 2]) {
    let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in x {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    *out = [min, max];
}
