//! Small numeric rules shared by every mechanism: saturation, a stable sigmoid, and the `exp`
//! of the softmax and the gate.
//!
//! DESIGN.md §5 asks that no NaN or infinity ever leaves the engine, whatever the input. Spec
//! values are finite, but products of values near the f32 limit overflow. Every stage therefore
//! saturates its result: `±inf` becomes `±f32::MAX`, and the undefined `inf - inf` (NaN) becomes
//! 0. For inputs of ordinary size this changes nothing.
//!
//! [`exp_nonpositive`] is the platform's `f32::exp`, bit for bit. On wasm32 that is a call into
//! the FreeBSD `expf` of Rust's bundled libm, and at 512 tokens and 8 heads a softmax or a gate
//! makes two million of them. The same algorithm written inline, for the arguments `<= 0` that
//! the engine passes, gives the same bits (all 1.1 billion such arguments checked once, a
//! sample of them in `tests/web.rs`), saves the call, and is what lets a wasm build with SIMD
//! vectorise the softmax and the gate (docs/PERFORMANCE.md). Natively it is `f32::exp` itself.

use ndarray::{ArrayBase, DataMut, Dimension};

/// Maps a possibly non-finite value to a finite one: infinities saturate, NaN becomes 0.
///
/// ```
/// use diffattn::engine::numeric::saturate;
/// assert_eq!(saturate(f32::INFINITY), f32::MAX);
/// assert_eq!(saturate(f32::NEG_INFINITY), -f32::MAX);
/// assert_eq!(saturate(f32::NAN), 0.0);
/// assert_eq!(saturate(1.5), 1.5);
/// ```
#[inline]
pub fn saturate(v: f32) -> f32 {
    if v.is_finite() {
        v
    } else if v.is_nan() {
        0.0
    } else {
        v.signum() * f32::MAX
    }
}

/// Saturates every element in place (see [`saturate`]).
pub fn saturate_all<S, D>(a: &mut ArrayBase<S, D>)
where
    S: DataMut<Elem = f32>,
    D: Dimension,
{
    a.mapv_inplace(saturate);
}

/// The logistic function `1 / (1 + e^-x)`, computed without overflow for any finite `x`.
///
/// In f32 it reaches exactly 0 or 1 for `|x|` beyond about 17 (1 - 2^-24 is the largest f32
/// below 1), so `0 < sigmoid(x) < 1` holds strictly only for moderate `x`.
///
/// ```
/// use diffattn::engine::numeric::sigmoid;
/// assert_eq!(sigmoid(0.0), 0.5);
/// assert!((sigmoid(2.0) - 0.880_797).abs() < 1e-6);
/// assert_eq!(sigmoid(-1000.0), 0.0);
/// ```
#[inline]
pub fn sigmoid(x: f32) -> f32 {
    // `1 / (1 + e^-x)` for x >= 0 and `e^x / (1 + e^x)` below, written with one `exp` of
    // `-|x|` (the same argument either way, so the same bits) and a select instead of a
    // branch: gate inputs change sign from cell to cell, and the mispredicted branch made the
    // whole gate about a third slower.
    let e = exp_nonpositive(-x.abs());
    let numerator = if x >= 0.0 { 1.0 } else { e };
    numerator / (1.0 + e)
}

/// `e^x` for `x <= 0`, exactly `x.exp()` on this platform; any other `x` (positive, NaN) is
/// passed to `x.exp()` as it is. See the module documentation.
///
/// ```
/// use diffattn::engine::numeric::exp_nonpositive;
/// for x in [0.0f32, -1e-9, -0.3, -1.0, -20.5, -87.0, -90.0, -200.0, 3.0] {
///     assert_eq!(exp_nonpositive(x).to_bits(), x.exp().to_bits());
/// }
/// ```
#[inline]
pub fn exp_nonpositive(x: f32) -> f32 {
    #[cfg(target_arch = "wasm32")]
    {
        libm_expf_nonpositive(x)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        x.exp()
    }
}

/// The FreeBSD `e_expf.c` algorithm of Rust's libm (what `f32::exp` calls on wasm32), for
/// `-87.33655 < x <= 0`, with the same constants and the same operations in the same order, so
/// the same bits; the branches for overflow, NaN and results below the normal range, which
/// these arguments never take, are left to `f32::exp` itself.
#[cfg(any(target_arch = "wasm32", test))]
#[inline]
pub(crate) fn libm_expf_nonpositive(x: f32) -> f32 {
    // libm's constants, by their bits: a shortened decimal can round to a neighbour.
    const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
    const LN2_LO: f32 = f32::from_bits(0x35bf_be8e);
    const INV_LN2: f32 = f32::from_bits(0x3fb8_aa3b);
    const P1: f32 = f32::from_bits(0x3e2a_aa8f);
    const P2: f32 = f32::from_bits(0xbb35_5215);
    let hx = x.to_bits() & 0x7fff_ffff;
    if x.is_nan() || x > 0.0 || hx >= 0x42ae_ac50 {
        return x.exp();
    }
    if hx <= 0x3900_0000 {
        // |x| <= 2^-14.
        return 1.0 + x;
    }
    // Argument reduction x = k·ln2 + r; x < 0, so libm's `HALF[sign]` is -0.5 and
    // `1 - sign - sign` is -1.
    let k: i32 = if hx > 0x3f85_1592 {
        (INV_LN2 * x - 0.5) as i32
    } else if hx > 0x3eb1_7218 {
        -1
    } else {
        0
    };
    let kf = k as f32;
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let rr = r * r;
    let c = r - rr * (P1 + rr * P2);
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    // -126 <= k <= 0 here, so libm's scalbnf is the one multiplication by 2^k (exact for k = 0).
    y * f32::from_bits(((0x7f + k) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inline_libm_exp_is_within_an_ulp_of_the_native_exp() {
        // Natively the engine uses `f32::exp` itself; the inline copy of wasm's libm algorithm
        // is checked bit for bit against wasm's `f32::exp` in tests/web.rs. Here: it is an
        // exp at all, within one unit in the last place of this platform's.
        let mut bits = 0x8000_0000_u32;
        while bits < 0xc2b0_0000 {
            let x = f32::from_bits(bits);
            let (ours, theirs) = (libm_expf_nonpositive(x), x.exp());
            assert!(
                ours.to_bits().abs_diff(theirs.to_bits()) <= 1,
                "exp({x:e}): {ours:e} against {theirs:e}"
            );
            bits += 997;
        }
        assert_eq!(libm_expf_nonpositive(1.0), 1.0f32.exp());
        assert!(libm_expf_nonpositive(f32::NAN).is_nan());
    }
}
