//! The engine's inner loops as SIMD kernels, with one scalar reference they all agree with bit
//! for bit: the exponential, the masked softmax's row, the shift stages' difference, gate and
//! fused map, and the matrix products (projections, scores, values).
//!
//! Each kernel is written once over eight f32 lanes (`lanes.rs`, `generic.rs`) and runs as
//!
//! * AVX2 on x86-64, picked at run time (`is_x86_feature_detected!`, cached by std);
//! * wasm `simd128` when the module is built with `-C target-feature=+simd128` (the page's SIMD
//!   build; wasm cannot detect features at run time, so the page picks a build instead);
//! * the scalar reference itself (`reference.rs`) anywhere else: the baseline wasm build, or
//!   after [`force_portable`] (natively and in wasm).
//!
//! **The same bits everywhere.** Every lane does the reference's IEEE operations in the
//! reference's order, and nothing uses a fused multiply-add (wasm `simd128` has none; one
//! rounding instead of two would change results): the exponential is a Cephes polynomial, not
//! the platform's `expf`; a softmax row sums in eight partial sums (element `j` in sum
//! `j % 8`) added in a fixed tree; a matrix product sums `Σ_p A[i,p]·B[p,j]` from `p = 0` up
//! in one accumulator per element. So a map computed natively (with or without AVX2) and in
//! either wasm build is the same bits (`tests/bits.rs` and `tests/web.rs` check it against
//! hashes committed from a native run).
//!
//! No NaN is produced from finite input, and results saturate as `numeric::saturate` does.

// The vector paths exist only where there are vectors to run them on.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod generic;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod lanes;
pub mod reference;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{Array2, ArrayView2, ArrayViewMut2};

pub use reference::{exp, sigmoid};

/// When set, every kernel runs the scalar reference (see [`force_portable`]).
static PORTABLE: AtomicBool = AtomicBool::new(false);

/// Makes every kernel run the scalar reference (`true`) or the fastest path this machine has
/// (`false`, the default). The results are the same bits either way, so this only changes the
/// speed: for benchmarks (`diffattn bench --portable`) and for tests that compare the paths.
pub fn force_portable(portable: bool) {
    PORTABLE.store(portable, Ordering::Relaxed);
}

/// Which path the kernels take here: `"avx2"`, `"simd128"` or `"portable"`.
pub fn active_path() -> &'static str {
    match path() {
        Path::Portable => "portable",
        #[cfg(target_arch = "x86_64")]
        Path::Avx2(_) => "avx2",
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Path::Simd128 => "simd128",
    }
}

#[derive(Clone, Copy)]
enum Path {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2(lanes::Avx2),
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

#[inline]
fn path() -> Path {
    if PORTABLE.load(Ordering::Relaxed) {
        return Path::Portable;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = lanes::Avx2::detect() {
        return Path::Avx2(avx2);
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return Path::Simd128;
    #[allow(unreachable_code)]
    Path::Portable
}

/// Defines a safe kernel that dispatches to its AVX2 and `simd128` instances of `generic::$f`
/// or to `reference::$f`.
macro_rules! dispatch {
    ($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        $(#[$doc])*
        // Never inlined: one call per row costs nothing, and keeps each kernel one symbol
        // (for callgrind, scripts/bench-kernels) and one copy (for the wasm's size).
        #[allow(clippy::too_many_arguments)]
        #[inline(never)]
        pub fn $name($($arg: $ty),*) {
            match path() {
                Path::Portable => reference::$name($($arg),*),
                #[cfg(target_arch = "x86_64")]
                Path::Avx2(l) => {
                    #[target_feature(enable = "avx2")]
                    #[allow(clippy::too_many_arguments)]
                    fn avx2(l: lanes::Avx2, $($arg: $ty),*) {
                        generic::$name(l, $($arg),*)
                    }
                    // SAFETY: `l` exists only where AVX2 was detected.
                    unsafe { avx2(l, $($arg),*) }
                }
                #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
                Path::Simd128 => generic::$name(lanes::Simd128, $($arg),*),
            }
        }
    };
}

dispatch! {
    /// `e^x` of every element in place: [`exp`] eight at a time.
    ///
    /// ```
    /// let mut x = [0.0f32, -1.0, 2.0];
    /// diffattn::engine::kernels::exp_in_place(&mut x);
    /// assert_eq!(x, [1.0, diffattn::engine::kernels::exp(-1.0), diffattn::engine::kernels::exp(2.0)]);
    /// ```
    pub fn exp_in_place(x: &mut [f32])
}

dispatch! {
    /// The softmax of one row in place, every cell allowed: `exp(x_j − max) / Σ exp` with the
    /// sum in eight partial sums (see the module documentation), as a product with `1 / Σ`.
    /// The cells must not be NaN or `+inf`; a row of `-inf` becomes zeros.
    ///
    /// ```
    /// let mut row = [0.0f32, 3.0f32.ln()];
    /// diffattn::engine::kernels::softmax(&mut row);
    /// assert!((row[0] - 0.25).abs() < 1e-7 && (row[1] - 0.75).abs() < 1e-7);
    /// ```
    pub fn softmax(x: &mut [f32])
}

dispatch! {
    /// [`softmax`] of every row of `x`, rows of `keys` cells one after another (a last partial
    /// row is left as it is): the same bits as a call per row, with the kernel's set-up once.
    ///
    /// ```
    /// let mut rows = [0.0f32, 0.0, 1.0, 1.0];
    /// diffattn::engine::kernels::softmax_rows(&mut rows, 2);
    /// assert_eq!(rows, [0.5; 4]);
    /// ```
    pub fn softmax_rows(x: &mut [f32], keys: usize)
}

dispatch! {
    /// One row of the shift stages after the shift (DESIGN.md §2), in one pass:
    /// `D = minuend − subtrahend`, `G = sigmoid(saturate(α·A + β·D + γ))` and
    /// `A′ = saturate(A + G·D)`. All slices have `a`'s length (or more; the rest is untouched).
    pub fn difference_gate(
        minuend: &[f32],
        subtrahend: &[f32],
        a: &[f32],
        gate: (f32, f32, f32),
        d: &mut [f32],
        g: &mut [f32],
        fused: &mut [f32],
    )
}

dispatch! {
    /// The smallest and largest cell of `x` into `out` as `[min, max]` (`[+inf, -inf]` for an
    /// empty slice); a NaN takes no part (an infinity does). What a map's colour scale needs,
    /// in one vectorised pass (`render::MapStats`).
    ///
    /// ```
    /// let mut out = [0.0f32; 2];
    /// diffattn::engine::kernels::extremes(&[0.5, f32::NAN, -2.0, 7.0, 1.0], &mut out);
    /// assert_eq!(out, [-2.0, 7.0]);
    /// ```
    pub fn extremes(x: &[f32], out: &mut [f32; 2])
}

/// A right-hand matrix `B` (`k × n`) packed once for many products `A·B`: panels of eight
/// columns, each `k × 8` contiguous, zero past column `n`.
#[derive(Debug, Clone)]
pub struct PackedB {
    data: Vec<f32>,
    k: usize,
    n: usize,
}

impl PackedB {
    /// Packs `b`, any layout (read along its contiguous columns or rows when it has them).
    ///
    /// The cells are read through the view's pointer and strides, one pass, rather than
    /// through a view per column or row: the engine packs small matrices every layer (every
    /// weight, and each head's `K_hᵀ` and `V_h`), and in the size-optimised wasm build each
    /// view and slice was a call of its own (about 10 % of a layer at 64 tokens).
    pub fn new(b: ArrayView2<f32>) -> PackedB {
        let (k, n) = b.dim();
        let mut data = vec![0.0f32; n.div_ceil(8) * k * 8];
        if k == 0 || n == 0 {
            return PackedB { data, k, n };
        }
        let (s0, s1) = (b.strides()[0], b.strides()[1]);
        let base = b.as_ptr();
        // SAFETY (every read below): cell (p, j) with p < k and j < n is at offset
        // p·s0 + j·s1 from `as_ptr` (ndarray's strides, negative ones included), so a column
        // with s0 = 1 is k floats from its first cell, a row with s1 = 1 n floats.
        if s0 == 1 && k > 1 {
            // Columns contiguous (a transposed matrix: Wᵀ, K_hᵀ): column j is one lane.
            for j in 0..n {
                let col = unsafe { std::slice::from_raw_parts(base.offset(j as isize * s1), k) };
                let panel = &mut data[(j / 8) * k * 8..(j / 8 + 1) * k * 8];
                for (line, &v) in panel.chunks_exact_mut(8).zip(col) {
                    line[j % 8] = v;
                }
            }
        } else if s1 == 1 || n == 1 {
            // Rows contiguous (B itself, V_h): each row goes to one line of every panel.
            for p in 0..k {
                let row = unsafe { std::slice::from_raw_parts(base.offset(p as isize * s0), n) };
                for (q, chunk) in row.chunks(8).enumerate() {
                    let at = q * k * 8 + p * 8;
                    data[at..at + chunk.len()].copy_from_slice(chunk);
                }
            }
        } else {
            for p in 0..k {
                for j in 0..n {
                    data[(j / 8) * k * 8 + p * 8 + j % 8] =
                        unsafe { *base.offset(p as isize * s0 + j as isize * s1) };
                }
            }
        }
        PackedB { data, k, n }
    }

    /// `k`, the rows of `B`.
    pub fn rows(&self) -> usize {
        self.k
    }

    /// `n`, the columns of `B`.
    pub fn cols(&self) -> usize {
        self.n
    }

    /// Rows `rows` of `C = saturate(scale · A·B)`, only its columns `cols`, into `c`: row `i`
    /// goes to `c[(i − rows.start)·ldc ..]`, column `j` at offset `j` in it; other columns are
    /// left as they are. `a` is row-major (any row stride `lda`) with at least `k` columns.
    ///
    /// # Panics
    /// When a slice is too short for the shapes given (a bug of the caller).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub fn mul_rows(
        &self,
        a: &[f32],
        lda: usize,
        rows: Range<usize>,
        cols: Range<usize>,
        scale: f32,
        c: &mut [f32],
        ldc: usize,
    ) {
        let (k, n) = (self.k, self.n);
        if rows.is_empty() || cols.is_empty() {
            return;
        }
        assert!(cols.end <= n && ldc >= n && lda >= k, "shapes");
        if k == 0 {
            // An empty sum: +0, scaled and saturated as any other.
            for r in 0..rows.len() {
                c[r * ldc + cols.start..r * ldc + cols.end].fill(reference::saturate(0.0 * scale));
            }
            return;
        }
        assert!(a.len() >= (rows.end - 1) * lda + k, "A is too short");
        assert!(c.len() >= (rows.len() - 1) * ldc + n, "C is too short");
        match path() {
            Path::Portable => {
                reference::gemm_rows(a, lda, k, &self.data, rows, cols, scale, c, ldc)
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx2(l) => {
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx2(
                    l: lanes::Avx2,
                    a: &[f32],
                    lda: usize,
                    b: &generic::Panels<'_>,
                    rows: Range<usize>,
                    cols: Range<usize>,
                    scale: f32,
                    c: &mut [f32],
                    ldc: usize,
                ) {
                    generic::gemm_rows(
                        l,
                        a.as_ptr(),
                        lda,
                        b,
                        rows,
                        cols,
                        scale,
                        c.as_mut_ptr(),
                        ldc,
                    )
                }
                let panels = generic::Panels {
                    data: &self.data,
                    k,
                };
                // SAFETY: AVX2 was detected; the asserts above bound every access.
                unsafe { avx2(l, a, lda, &panels, rows, cols, scale, c, ldc) }
            }
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => {
                let panels = generic::Panels {
                    data: &self.data,
                    k,
                };
                // SAFETY: the asserts above bound every access.
                unsafe {
                    generic::gemm_rows(
                        lanes::Simd128,
                        a.as_ptr(),
                        lda,
                        &panels,
                        rows,
                        cols,
                        scale,
                        c.as_mut_ptr(),
                        ldc,
                    )
                }
            }
        }
    }
}

/// `saturate(scale · A·B)` into `c` (`A` is `m × k`, `B` packed `k × n`, `c` is `m × n`).
pub fn matmul_packed_into(a: ArrayView2<f32>, b: &PackedB, scale: f32, mut c: ArrayViewMut2<f32>) {
    let (m, k) = a.dim();
    assert_eq!(k, b.rows(), "inner dimensions");
    assert_eq!(c.dim(), (m, b.cols()), "output shape");
    if m == 0 || b.cols() == 0 {
        return;
    }
    let (a_cells, lda) = row_major(a);
    let n = b.cols();
    match c.as_slice_mut() {
        Some(c_cells) => b.mul_rows(&a_cells, lda, 0..m, 0..n, scale, c_cells, n),
        None => {
            let mut out = Array2::<f32>::zeros((m, n));
            let cells = out.as_slice_mut().expect("a fresh array is contiguous");
            b.mul_rows(&a_cells, lda, 0..m, 0..n, scale, cells, n);
            c.assign(&out);
        }
    }
}

/// `saturate(scale · A·B)`: the engine's matrix product (no fused multiply-add, the same bits
/// on every target; see the module documentation).
///
/// ```
/// use diffattn::engine::kernels::matmul;
/// use ndarray::array;
/// let c = matmul(array![[1.0f32, 2.0], [3.0, 4.0]].view(), array![[5.0f32], [6.0]].view(), 1.0);
/// assert_eq!(c, array![[17.0f32], [39.0]]);
/// ```
pub fn matmul(a: ArrayView2<f32>, b: ArrayView2<f32>, scale: f32) -> Array2<f32> {
    let packed = PackedB::new(b);
    let mut c = Array2::<f32>::zeros((a.nrows(), b.ncols()));
    matmul_packed_into(a, &packed, scale, c.view_mut());
    c
}

/// `a` as a row-major slice and its row stride: the view's own cells when it is in standard
/// layout, else a copy (a head's columns, a transposed view: `m·k` copies before `m·k·n`
/// products).
fn row_major<'a>(a: ArrayView2<'a, f32>) -> (std::borrow::Cow<'a, [f32]>, usize) {
    let k = a.ncols().max(1);
    match a.to_slice() {
        Some(cells) => (std::borrow::Cow::Borrowed(cells), k),
        None => (std::borrow::Cow::Owned(a.iter().copied().collect()), k),
    }
}

#[cfg(test)]
mod tests;
