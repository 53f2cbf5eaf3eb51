//! `ln`, `exp`, `sin` and `cos` built from `+ − × ÷` and `sqrt` alone, so every platform computes the same bits.
//!
//! Rust's `f64::ln`, `exp`, `sin` and `cos` call the platform's maths library (glibc natively,
//! a port of musl's libm on wasm32), and those are allowed to differ in the last bit. The
//! seeded embeddings and weights promise the same numbers in the browser and in a native
//! test, so they compute these functions here instead. IEEE 754 rounds `+ − × ÷` and `sqrt`
//! correctly, and Rust never fuses a multiply and an add on its own, so the series below give
//! identical results on every target. They are accurate to a few units in the last place of
//! `f64`, far more than the `f32` values built from them need.

use core::f64::consts::{FRAC_PI_2, LN_2, LOG2_E, SQRT_2};

/// The natural logarithm of a positive, finite `x` (NaN for anything else).
///
/// Write `x = m · 2^e` with `m` in `[√½, √2)`; then `ln x = e · ln 2 + ln m` and
/// `ln m = 2 atanh(s) = 2 (s + s³/3 + s⁵/5 + …)` with `s = (m − 1)/(m + 1)`, `|s| ≤ 0.172`,
/// so twelve terms reach below `f64`'s precision.
pub(crate) fn ln(x: f64) -> f64 {
    if !(x > 0.0 && x.is_finite()) {
        return f64::NAN;
    }
    // Scale subnormals into the normal range, where the exponent field holds the exponent.
    let (x, extra_exponent) = if x < f64::MIN_POSITIVE {
        (x * power_of_two(54), -54)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i64 - 1023 + extra_exponent;
    // The same sign and fraction bits with a zero exponent make the mantissa in [1, 2).
    let mut mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if mantissa > SQRT_2 {
        mantissa /= 2.0;
        exponent += 1;
    }
    let s = (mantissa - 1.0) / (mantissa + 1.0);
    let s2 = s * s;
    // Horner's rule over 1 + s²/3 + s⁴/5 + … + s²²/23, innermost term first.
    let mut series = 0.0;
    for k in (0..12).rev() {
        series = series * s2 + 1.0 / f64::from(2 * k + 1);
    }
    exponent as f64 * LN_2 + 2.0 * s * series
}

/// `e^x` (0 far below zero, infinity far above).
///
/// Write `x = k ln 2 + r` with an integer `k` and `|r| ≤ ½ ln 2`; then `e^x = 2^k e^r`, and the
/// Taylor series of `e^r` reaches below `f64`'s precision by its fifteenth term. `ln 2` is split
/// into a high part with trailing zero bits and a low part (fdlibm's `ln2_hi`, `ln2_lo`) so that
/// `k · ln2_hi` is exact and `r` keeps its precision.
pub(crate) fn exp(x: f64) -> f64 {
    // fdlibm's constants, by their bits: ln2_hi keeps 32 significant bits, so that `k · ln2_hi`
    // is exact for every `k` reached here, and ln2_lo = ln 2 − ln2_hi.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    if x.is_nan() {
        return x;
    }
    if x > 709.8 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x * LOG2_E + 0.5).floor();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut series = 0.0;
    for n in (1..=15).rev() {
        series = 1.0 + series * r / f64::from(n);
    }
    // Split 2^k into two halves so that neither factor leaves the normal range even when the
    // result is subnormal or close to overflowing.
    let k = k as i64;
    let half = k / 2;
    series * power_of_two(half) * power_of_two(k - half)
}

/// `2^k` for `k` in the normal exponent range `[-1022, 1023]`, built from its bits.
fn power_of_two(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `(sin 2πt, cos 2πt)`: the sine and cosine of `t` turns.
///
/// Measuring the angle in turns makes the range reduction exact: `4t` is exact, and removing
/// the nearest integer quarter turn `k` leaves `f` in `[-½, ½]` exactly, so `φ = f · π/2` lies in
/// `[-π/4, π/4]`, where nine Taylor terms of each function reach below `f64`'s precision. The
/// quarter turns then rotate `(sin φ, cos φ)` by `k · 90°`.
pub(crate) fn sin_cos_turns(t: f64) -> (f64, f64) {
    if !t.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    let turns = t - t.floor();
    let quarters = turns * 4.0;
    let k = (quarters + 0.5).floor();
    let phi = (quarters - k) * FRAC_PI_2;
    let phi2 = phi * phi;
    // sin φ = φ (1 − φ²/(2·3) (1 − φ²/(4·5) (1 − …))) and cos φ = 1 − φ²/(1·2) (1 − φ²/(3·4) (…)).
    let mut sin = 1.0;
    let mut cos = 1.0;
    for n in (1..=9).rev() {
        let n = f64::from(n);
        sin = 1.0 - sin * phi2 / ((2.0 * n) * (2.0 * n + 1.0));
        cos = 1.0 - cos * phi2 / ((2.0 * n - 1.0) * (2.0 * n));
    }
    let sin = phi * sin;
    match (k as i64).rem_euclid(4) {
        0 => (sin, cos),
        1 => (cos, -sin),
        2 => (-sin, -cos),
        _ => (-cos, sin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative error against the platform's own (non-portable but accurate) functions.
    fn close(ours: f64, reference: f64) -> bool {
        (ours - reference).abs() <= 4.0 * f64::EPSILON * reference.abs().max(1e-300)
    }

    #[test]
    fn ln_matches_the_platform_to_a_few_ulps() {
        let mut x = 1e-300;
        while x < 1e300 {
            for scale in [1.0, 1.37, 2.9, 7.77] {
                let y = x * scale;
                assert!(close(ln(y), y.ln()), "ln({y}) = {} vs {}", ln(y), y.ln());
            }
            x *= 10.0;
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(close(ln(5e-324), 5e-324f64.ln()));
        assert!(ln(0.0).is_nan() && ln(-1.0).is_nan() && ln(f64::INFINITY).is_nan());
    }

    #[test]
    fn exp_matches_the_platform_to_a_few_ulps() {
        let mut x = -740.0;
        while x < 709.0 {
            assert!(
                close(exp(x), x.exp()),
                "exp({x}) = {} vs {}",
                exp(x),
                x.exp()
            );
            x += 0.731;
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-1000.0), 0.0);
        assert_eq!(exp(1000.0), f64::INFINITY);
    }

    #[test]
    fn sin_cos_match_the_platform_to_a_few_ulps() {
        for i in 0..10_000 {
            let t = f64::from(i) / 10_000.0 * 3.0 - 1.0;
            let (s, c) = sin_cos_turns(t);
            // Reducing before multiplying by 2π keeps the reference's own rounding small.
            let angle = (t - t.floor()) * core::f64::consts::TAU;
            assert!((s - angle.sin()).abs() < 2e-15, "sin at {t}");
            assert!((c - angle.cos()).abs() < 2e-15, "cos at {t}");
        }
        // Quarter turns land exactly on the axes because the reduction is exact.
        assert_eq!(sin_cos_turns(0.0), (0.0, 1.0));
        assert_eq!(sin_cos_turns(0.25).0, 1.0);
        assert_eq!(sin_cos_turns(0.5).1, -1.0);
        assert_eq!(sin_cos_turns(0.75).0, -1.0);
    }
}
