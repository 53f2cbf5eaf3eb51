//! Eight f32 lanes, the one vector width every kernel is written for: `__m256` with AVX2 on
//! x86-64, two `v128` with wasm `simd128`. Every operation is one IEEE operation per lane (or
//! a bit operation), so a kernel written once over [`Lanes`] gives in every lane the bits of
//! the scalar reference (`reference.rs`). There is deliberately no fused multiply-add: wasm
//! `simd128` has none, and one rounding instead of two would change the bits.

/// Eight f32 lanes and the operations the kernels use.
///
/// # Safety
///
/// A value of an implementing type may exist only where its instructions run (the AVX2 one is
/// made after runtime detection); the loads and stores read and write eight floats at `p`.
pub(super) trait Lanes: Copy {
    /// Eight f32.
    type V: Copy;
    /// Eight lane masks (all ones or all zeros per lane).
    type M: Copy;
    /// Whether matrix tiles two vectors wide fit the registers (16 ymm registers: yes; two
    /// v128 per vector under a JIT with 16 xmm registers: no).
    const WIDE_TILES: bool;

    fn splat(self, x: f32) -> Self::V;
    /// `x` in every lane, for a constant that a kernel keeps for a whole loop: the same as
    /// [`Lanes::splat`] except that the wasm build hides the value from the optimiser, which
    /// would otherwise write a `v128.const` at every use, and V8 builds each of those from
    /// scratch (three instructions) on every pass of the loop.
    #[inline(always)]
    fn constant(self, x: f32) -> Self::V {
        self.splat(x)
    }
    /// # Safety
    /// `p` points to eight readable floats.
    unsafe fn load(self, p: *const f32) -> Self::V;
    /// # Safety
    /// `p` points to eight writable floats.
    unsafe fn store(self, p: *mut f32, v: Self::V);
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// `if lim < x { lim } else { x }`: the smaller, and `x` when either is NaN.
    fn min_or_x(self, lim: Self::V, x: Self::V) -> Self::V;
    /// `if lim > x { lim } else { x }`: the larger, and `x` when either is NaN.
    fn max_or_x(self, lim: Self::V, x: Self::V) -> Self::V;
    /// The bits of `a` or `b` (`-|x|` is `x` or `-0.0`).
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a >= b` (false when either is NaN).
    fn ge(self, a: Self::V, b: Self::V) -> Self::M;
    /// `x == x`: false for NaN.
    fn ordered(self, x: Self::V) -> Self::M;
    /// `if m { a } else { b }`, lane by lane.
    fn select(self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;
    /// `if m { a } else { +0.0 }`, lane by lane.
    fn keep(self, m: Self::M, a: Self::V) -> Self::V;
    /// From `k = n + 1.5·2^23` (an integer `n` in the low bits), the factors `2^⌊n/2⌋` and
    /// `2^(n - ⌊n/2⌋)` (see `reference::pow2_split`); `magic` holds `1.5·2^23` and `bias` the
    /// integer 127 in every lane (as bits).
    fn pow2_split(self, k: Self::V, magic: Self::V, bias: Self::V) -> (Self::V, Self::V);

    /// The eight lanes as an array.
    #[inline(always)]
    fn to_array(self, v: Self::V) -> [f32; 8] {
        let mut out = [0.0f32; 8];
        // SAFETY: `out` holds eight floats.
        unsafe { self.store(out.as_mut_ptr(), v) };
        out
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) use avx2::Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Lanes;
    use core::arch::x86_64::*;

    /// AVX2 (with AVX's float operations; FMA is never enabled). Made only by
    /// [`Avx2::detect`], so its instructions are there wherever a value exists.
    #[derive(Clone, Copy)]
    pub(in crate::engine::kernels) struct Avx2(());

    impl Avx2 {
        /// The AVX2 lanes, if this processor has them (std caches the answer).
        #[inline]
        pub(in crate::engine::kernels) fn detect() -> Option<Avx2> {
            is_x86_feature_detected!("avx2").then_some(Avx2(()))
        }
    }

    // SAFETY (every `unsafe` block below): an `Avx2` exists only after runtime detection of
    // AVX2, and every intrinsic used is AVX or AVX2.
    impl Lanes for Avx2 {
        type V = __m256;
        type M = __m256;
        const WIDE_TILES: bool = true;

        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn div(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_div_ps(a, b) }
        }
        #[inline(always)]
        fn min_or_x(self, lim: __m256, x: __m256) -> __m256 {
            // `minps a, b` is `a < b ? a : b`.
            unsafe { _mm256_min_ps(lim, x) }
        }
        #[inline(always)]
        fn max_or_x(self, lim: __m256, x: __m256) -> __m256 {
            // `maxps a, b` is `a > b ? a : b`.
            unsafe { _mm256_max_ps(lim, x) }
        }
        #[inline(always)]
        fn or(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_or_ps(a, b) }
        }
        #[inline(always)]
        fn ge(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_GE_OQ>(a, b) }
        }
        #[inline(always)]
        fn ordered(self, x: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_ORD_Q>(x, x) }
        }
        #[inline(always)]
        fn select(self, m: __m256, a: __m256, b: __m256) -> __m256 {
            // `blendv(x, y, m)` takes `y` where the mask is set.
            unsafe { _mm256_blendv_ps(b, a, m) }
        }
        #[inline(always)]
        fn keep(self, m: __m256, a: __m256) -> __m256 {
            unsafe { _mm256_and_ps(a, m) }
        }
        #[inline(always)]
        fn pow2_split(self, k: __m256, magic: __m256, bias: __m256) -> (__m256, __m256) {
            unsafe {
                let n = _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_castps_si256(magic));
                let n1 = _mm256_srai_epi32::<1>(n);
                let n2 = _mm256_sub_epi32(n, n1);
                let bias = _mm256_castps_si256(bias);
                let f1 = _mm256_slli_epi32::<23>(_mm256_add_epi32(n1, bias));
                let f2 = _mm256_slli_epi32::<23>(_mm256_add_epi32(n2, bias));
                (_mm256_castsi256_ps(f1), _mm256_castsi256_ps(f2))
            }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) use simd128::Simd128;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::Lanes;
    use core::arch::wasm32::*;

    /// wasm `simd128`, two `v128` per eight lanes. The module was compiled for it (there is no
    /// runtime detection in wasm: a module with SIMD instructions does not load without them).
    #[derive(Clone, Copy)]
    pub(in crate::engine::kernels) struct Simd128;

    /// Eight lanes as two halves.
    #[derive(Clone, Copy)]
    pub(in crate::engine::kernels) struct Pair(v128, v128);

    /// One two-operand instruction on both halves.
    macro_rules! both {
        ($a:expr, $b:expr, $f:ident) => {{
            let (a, b): (Pair, Pair) = ($a, $b);
            Pair($f(a.0, b.0), $f(a.1, b.1))
        }};
    }

    impl Lanes for Simd128 {
        type V = Pair;
        type M = Pair;
        const WIDE_TILES: bool = false;

        #[inline(always)]
        fn splat(self, x: f32) -> Pair {
            let v = f32x4_splat(x);
            Pair(v, v)
        }
        #[inline(always)]
        fn constant(self, x: f32) -> Pair {
            // A volatile read: the optimiser cannot know the value, so it keeps the splat in
            // a local instead of a `v128.const` at each use.
            // SAFETY: reading a local.
            let v = f32x4_splat(unsafe { core::ptr::read_volatile(&x) });
            Pair(v, v)
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> Pair {
            Pair(
                v128_load(p as *const v128),
                v128_load(p.add(4) as *const v128),
            )
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: Pair) {
            v128_store(p as *mut v128, v.0);
            v128_store(p.add(4) as *mut v128, v.1);
        }
        #[inline(always)]
        fn add(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, f32x4_add)
        }
        #[inline(always)]
        fn sub(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, f32x4_sub)
        }
        #[inline(always)]
        fn mul(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, f32x4_mul)
        }
        #[inline(always)]
        fn div(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, f32x4_div)
        }
        #[inline(always)]
        fn min_or_x(self, lim: Pair, x: Pair) -> Pair {
            // `pmin(a, b)` is `b < a ? b : a`.
            both!(x, lim, f32x4_pmin)
        }
        #[inline(always)]
        fn max_or_x(self, lim: Pair, x: Pair) -> Pair {
            // `pmax(a, b)` is `a < b ? b : a`.
            both!(x, lim, f32x4_pmax)
        }
        #[inline(always)]
        fn or(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, v128_or)
        }
        #[inline(always)]
        fn ge(self, a: Pair, b: Pair) -> Pair {
            both!(a, b, f32x4_ge)
        }
        #[inline(always)]
        fn ordered(self, x: Pair) -> Pair {
            both!(x, x, f32x4_eq)
        }
        #[inline(always)]
        fn select(self, m: Pair, a: Pair, b: Pair) -> Pair {
            Pair(v128_bitselect(a.0, b.0, m.0), v128_bitselect(a.1, b.1, m.1))
        }
        #[inline(always)]
        fn keep(self, m: Pair, a: Pair) -> Pair {
            both!(a, m, v128_and)
        }
        #[inline(always)]
        fn pow2_split(self, k: Pair, magic: Pair, bias: Pair) -> (Pair, Pair) {
            let n = both!(k, magic, i32x4_sub);
            let n1 = Pair(i32x4_shr(n.0, 1), i32x4_shr(n.1, 1));
            let n2 = both!(n, n1, i32x4_sub);
            let f1 = both!(n1, bias, i32x4_add);
            let f2 = both!(n2, bias, i32x4_add);
            (
                Pair(i32x4_shl(f1.0, 23), i32x4_shl(f1.1, 23)),
                Pair(i32x4_shl(f2.0, 23), i32x4_shl(f2.1, 23)),
            )
        }
    }
}
