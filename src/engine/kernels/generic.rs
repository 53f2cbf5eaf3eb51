//! The kernels written once over [`Lanes`]: each is the lane-by-lane transcription of its
//! scalar reference in `reference.rs`, with the same operations in the same order, so every
//! lane has the reference's bits. Everything is `#[inline(always)]`: the kernels are
//! instantiated inside the functions that enable the instruction set (`mod.rs`).

use std::ops::Range;

use super::lanes::Lanes;
use super::reference::{self, EXP_HI, EXP_LO, LN2_HI, LN2_LO, LOG2E, P, ROUND_MAGIC, SUM_LANES};

/// Every constant of the kernels, made once before a loop (see [`Lanes::constant`]).
pub(super) struct Consts<V> {
    exp_hi: V,
    exp_lo: V,
    log2e: V,
    magic: V,
    ln2_hi: V,
    ln2_lo: V,
    p: [V; 6],
    one: V,
    lim: Limits<V>,
    sign: V,
    bias: V,
}

impl<V: Copy> Consts<V> {
    // No closure (see below): each constant written out.
    #[inline(always)]
    pub(super) fn new<L: Lanes<V = V>>(l: L) -> Consts<V> {
        Consts {
            exp_hi: l.constant(EXP_HI),
            exp_lo: l.constant(EXP_LO),
            log2e: l.constant(LOG2E),
            magic: l.constant(ROUND_MAGIC),
            ln2_hi: l.constant(LN2_HI),
            ln2_lo: l.constant(LN2_LO),
            p: [
                l.constant(P[0]),
                l.constant(P[1]),
                l.constant(P[2]),
                l.constant(P[3]),
                l.constant(P[4]),
                l.constant(P[5]),
            ],
            one: l.constant(1.0),
            lim: Limits::new(l),
            sign: l.constant(-0.0),
            bias: l.constant(f32::from_bits(127)),
        }
    }
}

/// The constants of [`saturate`] and the products' `+0`, all the matrix products need: made
/// per call like [`Consts`], but three instead of eighteen (the wasm build reads each one
/// from memory when it is made, see [`Lanes::constant`]).
pub(super) struct Limits<V> {
    zero: V,
    max: V,
    neg_max: V,
}

impl<V: Copy> Limits<V> {
    #[inline(always)]
    pub(super) fn new<L: Lanes<V = V>>(l: L) -> Limits<V> {
        Limits {
            zero: l.constant(0.0),
            max: l.constant(f32::MAX),
            neg_max: l.constant(-f32::MAX),
        }
    }
}

/// [`reference::exp`] in every lane.
#[inline(always)]
pub(super) fn exp<L: Lanes>(l: L, c: &Consts<L::V>, x: L::V) -> L::V {
    exp_not_above_hi(l, c, l.min_or_x(c.exp_hi, x))
}

/// [`exp`] of lanes that are each NaN or at most `EXP_HI`, where the upper clamp
/// `min_or_x(EXP_HI, x)` gives `x` itself and is left out: the softmax's `x − max ≤ 0` and
/// the sigmoid's `−|x|`. The same bits, one instruction fewer per vector.
#[inline(always)]
fn exp_not_above_hi<L: Lanes>(l: L, c: &Consts<L::V>, x: L::V) -> L::V {
    let x = l.max_or_x(c.exp_lo, x);
    let k = l.add(l.mul(x, c.log2e), c.magic);
    let n = l.sub(k, c.magic);
    let r = l.sub(x, l.mul(n, c.ln2_hi));
    let r = l.sub(r, l.mul(n, c.ln2_lo));
    let z = l.mul(r, r);
    // Horner's rule written out: the wasm build is optimised for size, where a loop over the
    // coefficients would stay a loop.
    let p = l.add(l.mul(c.p[0], r), c.p[1]);
    let p = l.add(l.mul(p, r), c.p[2]);
    let p = l.add(l.mul(p, r), c.p[3]);
    let p = l.add(l.mul(p, r), c.p[4]);
    let p = l.add(l.mul(p, r), c.p[5]);
    let y = l.add(l.add(l.mul(p, z), r), c.one);
    let (s1, s2) = l.pow2_split(k, c.magic, c.bias);
    l.mul(l.mul(y, s1), s2)
}

/// `reference::saturate` in every lane.
#[inline(always)]
fn saturate<L: Lanes>(l: L, c: &Limits<L::V>, v: L::V) -> L::V {
    let clamped = l.min_or_x(c.max, l.max_or_x(c.neg_max, v));
    l.keep(l.ordered(v), clamped)
}

/// [`reference::sigmoid`] in every lane.
#[inline(always)]
fn sigmoid<L: Lanes>(l: L, c: &Consts<L::V>, x: L::V) -> L::V {
    // `−|x|` is NaN or at most 0.
    let e = exp_not_above_hi(l, c, l.or(x, c.sign));
    let numerator = l.select(l.ge(x, c.lim.zero), c.one, e);
    l.div(numerator, l.add(c.one, e))
}

/// `sigmoid(saturate(x))` in every lane, with the saturation cut to its NaN → +0 half: the
/// clamp of ±inf to ±`f32::MAX` does not change the sigmoid's bits, since `−|x|` goes to
/// `EXP_LO` either way and the sign of `x` is kept. Two instructions fewer per vector.
#[inline(always)]
fn sigmoid_saturated<L: Lanes>(l: L, c: &Consts<L::V>, x: L::V) -> L::V {
    sigmoid(l, c, l.keep(l.ordered(x), x))
}

// No closures below: a closure is a function of its own, without the caller's instruction
// set, and the intrinsics inside it would stay calls.

/// The last `len % 8` elements of `x` in a buffer padded with `pad`.
#[inline(always)]
fn tail<L: Lanes>(l: L, x: &[f32], pad: f32) -> L::V {
    let mut buf = [pad; 8];
    buf[..x.len()].copy_from_slice(x);
    // SAFETY: `buf` holds eight floats.
    unsafe { l.load(buf.as_ptr()) }
}

/// Writes the first `x.len()` lanes of `v` to `x`.
#[inline(always)]
fn put_tail<L: Lanes>(l: L, x: &mut [f32], v: L::V) {
    let lanes = l.to_array(v);
    x.copy_from_slice(&lanes[..x.len()]);
}

/// [`reference::exp_in_place`].
#[inline(always)]
pub(super) fn exp_in_place<L: Lanes>(l: L, x: &mut [f32]) {
    let k = Consts::new(l);
    let mut chunks = x.chunks_exact_mut(8);
    for c in &mut chunks {
        // SAFETY: a chunk holds eight floats.
        unsafe { l.store(c.as_mut_ptr(), exp(l, &k, l.load(c.as_ptr()))) };
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let v = exp(l, &k, tail(l, rest, 0.0));
        put_tail(l, rest, v);
    }
}

/// [`reference::softmax`]: the maximum, then `exp(x - max)` with the sum kept in eight lanes
/// (element `j` in lane `j % 8`, as the reference does), then the product with `1 / sum`.
#[inline(always)]
pub(super) fn softmax<L: Lanes>(l: L, x: &mut [f32]) {
    softmax_row(l, &Consts::new(l), x);
}

/// [`reference::softmax_rows`]: [`softmax`] of each row, the constants made once.
#[inline(always)]
pub(super) fn softmax_rows<L: Lanes>(l: L, x: &mut [f32], keys: usize) {
    if keys == 0 {
        return;
    }
    let k = Consts::new(l);
    for row in x.chunks_exact_mut(keys) {
        softmax_row(l, &k, row);
    }
}

/// One row of [`softmax`] with the constants `k`.
#[inline(always)]
fn softmax_row<L: Lanes>(l: L, k: &Consts<L::V>, x: &mut [f32]) {
    let mut chunks = x.chunks_exact(8);
    let mut m = l.splat(f32::NEG_INFINITY);
    for c in &mut chunks {
        // SAFETY: a chunk holds eight floats.
        m = l.max_or_x(m, unsafe { l.load(c.as_ptr()) });
    }
    // The maximum does not depend on the order (the scores are never NaN).
    let mut max = f32::NEG_INFINITY;
    for s in l
        .to_array(m)
        .into_iter()
        .chain(chunks.remainder().iter().copied())
    {
        if s > max {
            max = s;
        }
    }
    if max == f32::NEG_INFINITY {
        x.fill(0.0);
        return;
    }
    let max_v = l.splat(max);
    let mut sum = k.lim.zero;
    let mut chunks = x.chunks_exact_mut(8);
    for c in &mut chunks {
        // SAFETY: a chunk holds eight floats.
        unsafe {
            // x − max ≤ 0.
            let e = exp_not_above_hi(l, k, l.sub(l.load(c.as_ptr()), max_v));
            sum = l.add(sum, e);
            l.store(c.as_mut_ptr(), e);
        }
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        // The padding is -inf, whose exp is +0: adding it to a partial sum changes nothing.
        let e = exp_not_above_hi(l, k, l.sub(tail(l, rest, f32::NEG_INFINITY), max_v));
        sum = l.add(sum, e);
        put_tail(l, rest, e);
    }
    let lanes: [f32; SUM_LANES] = l.to_array(sum);
    let inv = 1.0 / reference::sum_lanes(lanes);
    let inv_v = l.splat(inv);
    let mut chunks = x.chunks_exact_mut(8);
    for c in &mut chunks {
        // SAFETY: a chunk holds eight floats.
        unsafe { l.store(c.as_mut_ptr(), l.mul(l.load(c.as_ptr()), inv_v)) };
    }
    for s in chunks.into_remainder() {
        *s *= inv;
    }
}

/// [`reference::difference_gate`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn difference_gate<L: Lanes>(
    l: L,
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
    let k = Consts::new(l);
    let (alpha_v, beta_v, gamma_v) = (l.splat(alpha), l.splat(beta), l.splat(gamma));
    let body = n - n % 8;
    let mut j = 0;
    while j < body {
        // SAFETY: j + 8 <= n, and every slice has n elements.
        unsafe {
            let a_v = l.load(a.as_ptr().add(j));
            let d_v = l.sub(
                l.load(minuend.as_ptr().add(j)),
                l.load(subtrahend.as_ptr().add(j)),
            );
            let x = l.add(l.add(l.mul(alpha_v, a_v), l.mul(beta_v, d_v)), gamma_v);
            let g_v = sigmoid_saturated(l, &k, x);
            l.store(d.as_mut_ptr().add(j), d_v);
            l.store(g.as_mut_ptr().add(j), g_v);
            l.store(
                fused.as_mut_ptr().add(j),
                saturate(l, &k.lim, l.add(a_v, l.mul(g_v, d_v))),
            );
        }
        j += 8;
    }
    // The tail is the reference itself: elementwise, so the same bits.
    reference::difference_gate(
        &minuend[body..],
        &subtrahend[body..],
        &a[body..],
        (alpha, beta, gamma),
        &mut d[body..],
        &mut g[body..],
        &mut fused[body..],
    );
}

/// B packed for [`gemm_rows`]: panels of eight columns, each `k × 8` contiguous, the columns
/// past `n` zero.
pub(super) struct Panels<'a> {
    pub data: &'a [f32],
    pub k: usize,
}

// The tiles of C. Each accumulator starts at +0 and adds one product at a time over all of
// `k` from 0 up, the reference's order. They are unrolled by hand: the wasm build is
// optimised for size, and LLVM does not unroll loops there, which would leave the
// accumulators in memory.

/// Stores one vector of a tile's row at columns `j0..j0 + 8`, or only those within `cols`.
#[inline(always)]
unsafe fn store_cols<L: Lanes>(l: L, row: *mut f32, j0: usize, cols: &Range<usize>, v: L::V) {
    if j0 >= cols.start && j0 + 8 <= cols.end {
        l.store(row.add(j0), v);
    } else {
        let lanes = l.to_array(v);
        for (lane, &x) in lanes.iter().enumerate() {
            if cols.contains(&(j0 + lane)) {
                *row.add(j0 + lane) = x;
            }
        }
    }
}

/// What a tile needs: A at its first row, B at its first panel, C at its first row.
struct Tile<'c, V> {
    consts: &'c Limits<V>,
    scale_v: V,
    a: *const f32,
    lda: usize,
    b: *const f32,
    k: usize,
    c: *mut f32,
    ldc: usize,
    j0: usize,
    cols: Range<usize>,
}

/// `saturate(scale · acc)`, stored.
#[inline(always)]
unsafe fn finish<L: Lanes>(l: L, t: &Tile<'_, L::V>, r: usize, v: usize, acc: L::V) {
    let out = saturate(l, t.consts, l.mul(acc, t.scale_v));
    store_cols(l, t.c.add(r * t.ldc), t.j0 + 8 * v, &t.cols, out);
}

/// Four rows, two panels (16 columns): eight accumulators.
#[inline(always)]
unsafe fn tile_4x2<L: Lanes>(l: L, t: &Tile<'_, L::V>) {
    let z = t.consts.zero;
    let (mut c00, mut c01, mut c10, mut c11) = (z, z, z, z);
    let (mut c20, mut c21, mut c30, mut c31) = (z, z, z, z);
    let (a0, a1, a2, a3) = (t.a, t.a.add(t.lda), t.a.add(2 * t.lda), t.a.add(3 * t.lda));
    let (b0, b1) = (t.b, t.b.add(t.k * 8));
    for p in 0..t.k {
        let (v0, v1) = (l.load(b0.add(p * 8)), l.load(b1.add(p * 8)));
        let x = l.splat(*a0.add(p));
        c00 = l.add(c00, l.mul(x, v0));
        c01 = l.add(c01, l.mul(x, v1));
        let x = l.splat(*a1.add(p));
        c10 = l.add(c10, l.mul(x, v0));
        c11 = l.add(c11, l.mul(x, v1));
        let x = l.splat(*a2.add(p));
        c20 = l.add(c20, l.mul(x, v0));
        c21 = l.add(c21, l.mul(x, v1));
        let x = l.splat(*a3.add(p));
        c30 = l.add(c30, l.mul(x, v0));
        c31 = l.add(c31, l.mul(x, v1));
    }
    finish(l, t, 0, 0, c00);
    finish(l, t, 0, 1, c01);
    finish(l, t, 1, 0, c10);
    finish(l, t, 1, 1, c11);
    finish(l, t, 2, 0, c20);
    finish(l, t, 2, 1, c21);
    finish(l, t, 3, 0, c30);
    finish(l, t, 3, 1, c31);
}

/// Eight rows, one panel: eight accumulators (for `B` eight columns wide, `A·V_h` with
/// `d_h = 8`, where four would leave the adder waiting on its own latency).
#[inline(always)]
unsafe fn tile_8x1<L: Lanes>(l: L, t: &Tile<'_, L::V>) {
    let z = t.consts.zero;
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let (mut c4, mut c5, mut c6, mut c7) = (z, z, z, z);
    let (a0, a1, a2, a3) = (t.a, t.a.add(t.lda), t.a.add(2 * t.lda), t.a.add(3 * t.lda));
    let (a4, a5, a6, a7) = (
        a0.add(4 * t.lda),
        a1.add(4 * t.lda),
        a2.add(4 * t.lda),
        a3.add(4 * t.lda),
    );
    for p in 0..t.k {
        let v = l.load(t.b.add(p * 8));
        c0 = l.add(c0, l.mul(l.splat(*a0.add(p)), v));
        c1 = l.add(c1, l.mul(l.splat(*a1.add(p)), v));
        c2 = l.add(c2, l.mul(l.splat(*a2.add(p)), v));
        c3 = l.add(c3, l.mul(l.splat(*a3.add(p)), v));
        c4 = l.add(c4, l.mul(l.splat(*a4.add(p)), v));
        c5 = l.add(c5, l.mul(l.splat(*a5.add(p)), v));
        c6 = l.add(c6, l.mul(l.splat(*a6.add(p)), v));
        c7 = l.add(c7, l.mul(l.splat(*a7.add(p)), v));
    }
    finish(l, t, 0, 0, c0);
    finish(l, t, 1, 0, c1);
    finish(l, t, 2, 0, c2);
    finish(l, t, 3, 0, c3);
    finish(l, t, 4, 0, c4);
    finish(l, t, 5, 0, c5);
    finish(l, t, 6, 0, c6);
    finish(l, t, 7, 0, c7);
}

/// Four rows, one panel: four accumulators.
#[inline(always)]
unsafe fn tile_4x1<L: Lanes>(l: L, t: &Tile<'_, L::V>) {
    let z = t.consts.zero;
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let (a0, a1, a2, a3) = (t.a, t.a.add(t.lda), t.a.add(2 * t.lda), t.a.add(3 * t.lda));
    for p in 0..t.k {
        let v = l.load(t.b.add(p * 8));
        c0 = l.add(c0, l.mul(l.splat(*a0.add(p)), v));
        c1 = l.add(c1, l.mul(l.splat(*a1.add(p)), v));
        c2 = l.add(c2, l.mul(l.splat(*a2.add(p)), v));
        c3 = l.add(c3, l.mul(l.splat(*a3.add(p)), v));
    }
    finish(l, t, 0, 0, c0);
    finish(l, t, 1, 0, c1);
    finish(l, t, 2, 0, c2);
    finish(l, t, 3, 0, c3);
}

/// One row, two panels.
#[inline(always)]
unsafe fn tile_1x2<L: Lanes>(l: L, t: &Tile<'_, L::V>) {
    let z = t.consts.zero;
    let (mut c0, mut c1) = (z, z);
    let b1 = t.b.add(t.k * 8);
    for p in 0..t.k {
        let x = l.splat(*t.a.add(p));
        c0 = l.add(c0, l.mul(x, l.load(t.b.add(p * 8))));
        c1 = l.add(c1, l.mul(x, l.load(b1.add(p * 8))));
    }
    finish(l, t, 0, 0, c0);
    finish(l, t, 0, 1, c1);
}

/// One row, one panel.
#[inline(always)]
unsafe fn tile_1x1<L: Lanes>(l: L, t: &Tile<'_, L::V>) {
    let mut c0 = t.consts.zero;
    for p in 0..t.k {
        c0 = l.add(c0, l.mul(l.splat(*t.a.add(p)), l.load(t.b.add(p * 8))));
    }
    finish(l, t, 0, 0, c0);
}

/// [`reference::gemm_rows`] with B packed: rows `rows` of `A` (row-major, stride `lda`, at
/// least `k` columns), the columns `cols` of C (others untouched), into `c` (row stride
/// `ldc`, first row = `rows.start`).
///
/// # Safety
/// `a` holds rows `rows` of `k` columns at stride `lda`; `c` holds `rows.len()` rows of
/// `ldc >= b.n` floats; `cols.end <= b.n`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) unsafe fn gemm_rows<L: Lanes>(
    l: L,
    a: *const f32,
    lda: usize,
    b: &Panels<'_>,
    rows: Range<usize>,
    cols: Range<usize>,
    scale: f32,
    c: *mut f32,
    ldc: usize,
) {
    if cols.is_empty() {
        return;
    }
    let k = b.k;
    let (first, last) = (cols.start / 8, cols.end.div_ceil(8));
    let consts = Limits::new(l);
    let scale_v = l.splat(scale);
    let mut i = rows.start;
    while i < rows.end {
        if L::WIDE_TILES && last - first == 1 && i + 8 <= rows.end {
            let t = Tile {
                consts: &consts,
                scale_v,
                a: a.add(i * lda),
                lda,
                b: b.data.as_ptr().add(first * k * 8),
                k,
                c: c.add((i - rows.start) * ldc),
                ldc,
                j0: first * 8,
                cols: cols.clone(),
            };
            tile_8x1(l, &t);
            i += 8;
            continue;
        }
        let four = i + 4 <= rows.end;
        let mut t = Tile {
            consts: &consts,
            scale_v,
            a: a.add(i * lda),
            lda,
            b: b.data.as_ptr(),
            k,
            c: c.add((i - rows.start) * ldc),
            ldc,
            j0: 0,
            cols: cols.clone(),
        };
        let mut q = first;
        while q < last {
            t.b = b.data.as_ptr().add(q * k * 8);
            t.j0 = q * 8;
            let wide = L::WIDE_TILES && q + 2 <= last;
            match (four, wide) {
                (true, true) => tile_4x2(l, &t),
                (true, false) => tile_4x1(l, &t),
                (false, true) => tile_1x2(l, &t),
                (false, false) => tile_1x1(l, &t),
            }
            q += if wide { 2 } else { 1 };
        }
        i += if four { 4 } else { 1 };
    }
}

/// [`reference::extremes`]: eight running minima and maxima, a cell taking part only when it
/// is smaller (larger) than the lane's (so a NaN never does), then the lanes and the rest.
#[inline(always)]
pub(super) fn extremes<L: Lanes>(l: L, x: &[f32], out: &mut [f32; 2]) {
    let mut lo = l.splat(f32::INFINITY);
    let mut hi = l.splat(f32::NEG_INFINITY);
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        // SAFETY: a chunk holds eight floats.
        let v = unsafe { l.load(c.as_ptr()) };
        // `v < lo ? v : lo` and `v > hi ? v : hi`: a NaN compares false and leaves the lane.
        lo = l.min_or_x(v, lo);
        hi = l.max_or_x(v, hi);
    }
    let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
    for v in l.to_array(lo).into_iter().chain(rest.iter().copied()) {
        if v < min {
            min = v;
        }
    }
    for v in l.to_array(hi).into_iter().chain(rest.iter().copied()) {
        if v > max {
            max = v;
        }
    }
    *out = [min, max];
}
