//! Every vector path against the scalar reference, bit for bit, and the reference `exp`
//! against `f64::exp` on a dense sample of all f32 (all of them: `scripts/test-exp`).

use super::generic;
use super::reference;

/// The largest error of [`reference::exp`] over every f32 input, in units in the last place
/// of the exact result: `scripts/test-exp` measured 0.9903 ulp (at 70.4031, bits 0x428cce63)
/// over all 2^32 inputs, with 0.42 % of the results not correctly rounded.
pub const EXP_ULP_BOUND: f64 = 1.0;

/// `|got − exact|` in units in the last place of `exact` (the spacing of f32 around `exact`;
/// for subnormal results the smallest subnormal, 2^-149).
pub fn ulp_error(got: f32, exact: f64) -> f64 {
    if got.is_nan() || exact.is_nan() {
        return if got.is_nan() && exact.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let max = f32::MAX as f64;
    if got.is_infinite() {
        // Overflow: measured against f32::MAX + one ulp, where rounding goes to infinity.
        let ulp = 2f64.powi(104);
        return if exact >= max + ulp / 2.0 {
            0.0
        } else {
            (max + ulp - exact) / ulp
        };
    }
    // The binary exponent of `exact`, from its bits (no log2: this runs 2^32 times).
    let e = exact.abs().min(max);
    let exponent = ((e.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let ulp = f64::from_bits(((exponent.max(-126) - 23 + 1023) as u64) << 52);
    (got as f64 - exact).abs() / ulp
}

/// A dense sample of all f32: every `step`-th bit pattern, and the neighbourhoods of the
/// points where the exponential changes regime.
fn sample(step: u32) -> impl Iterator<Item = f32> {
    let edges = [
        0.0f32,
        -0.0,
        88.722_83,
        88.7,
        -87.336_55,
        -103.972_08,
        -104.0,
        89.0,
        0.346_573_6,
        -0.346_573_6,
    ];
    (0..=u32::MAX / step)
        .map(move |i| f32::from_bits(i * step))
        .chain(edges.into_iter().flat_map(|e| {
            let b = e.to_bits();
            (b.saturating_sub(2000)..b.saturating_add(2000)).map(f32::from_bits)
        }))
}

#[test]
fn the_reference_exp_is_within_its_bound_on_a_dense_sample() {
    let mut worst = (0.0f64, 0.0f32);
    for x in sample(4099) {
        let err = ulp_error(reference::exp(x), (x as f64).exp());
        if err > worst.0 {
            worst = (err, x);
        }
    }
    assert!(
        worst.0 <= EXP_ULP_BOUND,
        "exp({:e}) is {} ulp off",
        worst.1,
        worst.0
    );
    assert_eq!(reference::exp(f32::NEG_INFINITY), 0.0);
    assert_eq!(reference::exp(f32::INFINITY), f32::INFINITY);
    assert!(reference::exp(f32::NAN).is_nan());
    assert_eq!(reference::exp(0.0), 1.0);
    assert_eq!(reference::exp(-0.0), 1.0);
}

/// Every f32 input: the AVX2 path is the reference bit for bit, and the reference is within
/// [`EXP_ULP_BOUND`] of `f64::exp` (whose own error, below 1 ulp of f64, is 2^-29 ulp of f32).
/// A minute or two in release on two quiet cores: `scripts/test-exp` runs it
/// (`cargo test --release --lib -- --ignored exp_over_every_f32`).
#[test]
#[ignore = "2^32 inputs: run by scripts/test-exp in release"]
fn exp_over_every_f32() {
    const CHUNK: u64 = 1 << 16;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let chunks = (1u64 << 32) / CHUNK;
    let results: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut worst = (0.0f64, 0u32);
                    let mut over_half = 0u64;
                    let mut over_one = 0u64;
                    let mut xs = vec![0.0f32; CHUNK as usize];
                    for c in (t..chunks).step_by(threads as usize) {
                        let first = (c * CHUNK) as u32;
                        for (i, x) in xs.iter_mut().enumerate() {
                            *x = f32::from_bits(first + i as u32);
                        }
                        let mut fast = xs.clone();
                        super::exp_in_place(&mut fast);
                        for (&x, &f) in xs.iter().zip(&fast) {
                            let r = reference::exp(x);
                            assert_eq!(
                                f.to_bits(),
                                r.to_bits(),
                                "{} at {x:e}",
                                super::active_path()
                            );
                            // Beyond the clamps the answer is exact: 0 (e^x < 2^-150) or +inf.
                            if !x.is_nan() && !(reference::EXP_LO..=reference::EXP_HI).contains(&x)
                            {
                                assert_eq!(r, if x < 0.0 { 0.0 } else { f32::INFINITY });
                                continue;
                            }
                            let err = ulp_error(r, (x as f64).exp());
                            over_half += u64::from(err > 0.5);
                            over_one += u64::from(err > 1.0);
                            if err > worst.0 {
                                worst = (err, x.to_bits());
                            }
                        }
                    }
                    (worst, over_half, over_one)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect()
    });
    let worst = results
        .iter()
        .map(|r| r.0)
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    let over_half: u64 = results.iter().map(|r| r.1).sum();
    let over_one: u64 = results.iter().map(|r| r.2).sum();
    println!(
        "exp over all 2^32 f32 ({} path = reference): max error {:.4} ulp at {:e} ({:#010x}); \
         {over_half} results beyond 0.5 ulp (not correctly rounded), {over_one} beyond 1 ulp",
        super::active_path(),
        worst.0,
        f32::from_bits(worst.1),
        worst.1,
    );
    assert!(worst.0 <= EXP_ULP_BOUND);
}

/// A reproducible sequence of floats in `[lo, hi)`.
fn floats(n: usize, seed: u32, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            lo + (hi - lo) * ((s >> 8) as f32 / (1 << 24) as f32)
        })
        .collect()
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::lanes::Avx2;
    use super::*;

    macro_rules! with_avx2 {
        ($l:ident, $body:block) => {{
            let Some($l) = Avx2::detect() else {
                eprintln!("no AVX2 here: only the scalar path is tested");
                return;
            };
            #[target_feature(enable = "avx2")]
            fn run($l: Avx2) $body
            // SAFETY: AVX2 was detected.
            unsafe { run($l) }
        }};
    }

    #[test]
    fn exp_in_place_is_the_reference_bit_for_bit() {
        with_avx2!(l, {
            let xs: Vec<f32> = super::sample(65_537).collect();
            for len in [0, 1, 7, 8, 9, 15, 16, 17, xs.len()] {
                let mut got = xs[..len].to_vec();
                generic::exp_in_place(l, &mut got);
                let want: Vec<f32> = xs[..len].iter().map(|&x| reference::exp(x)).collect();
                assert_eq!(bits(&got), bits(&want), "len {len}");
            }
        });
    }

    #[test]
    fn extremes_are_the_references_with_nan_and_infinities() {
        with_avx2!(l, {
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 1000] {
                let mut xs = floats(len, 5, -3.0, 3.0);
                for (i, special) in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY]
                    .iter()
                    .enumerate()
                {
                    let mut with = xs.clone();
                    if len > i {
                        with[len - 1 - i] = *special;
                    }
                    let (mut got, mut want) = ([0.0; 2], [0.0; 2]);
                    generic::extremes(l, &with, &mut got);
                    reference::extremes(&with, &mut want);
                    assert_eq!(bits(&got), bits(&want), "len {len}, {special}");
                }
                xs.iter_mut().for_each(|x| *x = f32::NAN);
                let mut got = [0.0; 2];
                generic::extremes(l, &xs, &mut got);
                assert_eq!(
                    got,
                    [f32::INFINITY, f32::NEG_INFINITY],
                    "all NaN, len {len}"
                );
            }
        });
    }

    #[test]
    fn softmax_is_the_reference_bit_for_bit() {
        with_avx2!(l, {
            for len in (0..40).chain([255, 256, 257, 1000, 2049]) {
                for (seed, spread) in [(1, 1.0f32), (2, 30.0), (3, 1e3), (4, 1.5e38)] {
                    let row = floats(len, seed, -spread, spread);
                    let mut got = row.clone();
                    generic::softmax(l, &mut got);
                    let mut want = row.clone();
                    reference::softmax(&mut want);
                    assert_eq!(bits(&got), bits(&want), "len {len} spread {spread}");
                    if len > 0 {
                        let sum: f32 = got.iter().sum();
                        assert!((sum - 1.0).abs() < 1e-5, "sum {sum}");
                        assert!(got.iter().all(|p| p.is_finite() && *p >= 0.0));
                    }
                }
            }
        });
    }

    #[test]
    fn softmax_rows_is_the_reference_row_by_row() {
        with_avx2!(l, {
            for keys in [0, 1, 7, 8, 9, 16, 17, 64, 100] {
                for rows in [0, 1, 3, 16] {
                    // Half a row more at the end: a partial row, left as it is.
                    let mut cells = floats(keys * rows + keys / 2, 8, -30.0, 30.0);
                    if keys > 0 && rows > 1 {
                        // A fully masked row becomes zeros, alone.
                        cells[keys..2 * keys].fill(f32::NEG_INFINITY);
                    }
                    let mut got = cells.clone();
                    generic::softmax_rows(l, &mut got, keys);
                    let mut want = cells.clone();
                    for row in want[..keys * rows].chunks_exact_mut(keys.max(1)) {
                        reference::softmax(row);
                    }
                    assert_eq!(bits(&got), bits(&want), "keys {keys} rows {rows}");
                    let mut portable = cells.clone();
                    reference::softmax_rows(&mut portable, keys);
                    assert_eq!(bits(&portable), bits(&want), "keys {keys} rows {rows}");
                }
            }
        });
    }

    #[test]
    fn difference_gate_is_the_reference_bit_for_bit() {
        with_avx2!(l, {
            for len in (0..40).chain([512, 1001]) {
                let mut a = floats(len, 5, 0.0, 1.0);
                let m = floats(len, 6, 0.0, 1.0);
                let mut s = floats(len, 7, 0.0, 1.0);
                // Overflowing and extreme cells: the gate saturates, no NaN.
                if len > 3 {
                    a[1] = f32::MAX;
                    s[2] = -f32::MAX;
                    a[3] = -0.0;
                }
                // The last three make the gate's input +inf, -inf and NaN (inf − inf) in some
                // cells, which the kernel's shortened saturation must treat as the reference.
                for gate in [
                    (0.0, 4.0, 0.0),
                    (1.5, -3.0, 0.5),
                    (f32::MAX, f32::MAX, -1.0),
                    (f32::MAX, -f32::MAX, 0.0),
                    (-f32::MAX, f32::MAX, 0.0),
                ] {
                    let mut got = (vec![9.0; len], vec![9.0; len], vec![9.0; len]);
                    let mut want = got.clone();
                    generic::difference_gate(
                        l, &m, &s, &a, gate, &mut got.0, &mut got.1, &mut got.2,
                    );
                    reference::difference_gate(
                        &m,
                        &s,
                        &a,
                        gate,
                        &mut want.0,
                        &mut want.1,
                        &mut want.2,
                    );
                    assert_eq!(bits(&got.0), bits(&want.0), "d, len {len}");
                    assert_eq!(bits(&got.1), bits(&want.1), "g, len {len}");
                    assert_eq!(bits(&got.2), bits(&want.2), "fused, len {len}");
                    assert!(got.2.iter().chain(&got.1).all(|v| v.is_finite()));
                }
            }
        });
    }

    #[test]
    fn matrix_products_are_the_reference_bit_for_bit() {
        use super::super::PackedB;
        use ndarray::Array2;
        with_avx2!(l, {
            for m in [1, 3, 4, 5, 9] {
                for k in [1, 7, 8, 64] {
                    for n in [1, 7, 8, 9, 16, 17, 33] {
                        let a = floats(m * k, 8, -2.0, 2.0);
                        let b =
                            Array2::from_shape_vec((k, n), floats(k * n, 9, -2.0, 2.0)).unwrap();
                        let packed = PackedB::new(b.view());
                        for cols in [0..n, n / 3..n, 1.min(n)..n.saturating_sub(1).max(1)] {
                            for rows in [0..m, m / 2..m] {
                                let ldc = n + 3;
                                let mut got = vec![7.0f32; rows.len() * ldc];
                                let mut want = got.clone();
                                let panels = generic::Panels {
                                    data: &packed.data,
                                    k,
                                };
                                // SAFETY: the shapes fit the slices.
                                unsafe {
                                    generic::gemm_rows(
                                        l,
                                        a.as_ptr(),
                                        k,
                                        &panels,
                                        rows.clone(),
                                        cols.clone(),
                                        0.5,
                                        got.as_mut_ptr(),
                                        ldc,
                                    )
                                };
                                reference::gemm_rows(
                                    &a,
                                    k,
                                    k,
                                    &packed.data,
                                    rows.clone(),
                                    cols.clone(),
                                    0.5,
                                    &mut want,
                                    ldc,
                                );
                                assert_eq!(
                                    bits(&got),
                                    bits(&want),
                                    "{m}x{k}x{n} {rows:?} {cols:?}"
                                );
                                // The reference is the textbook sum.
                                for (r, i) in rows.clone().enumerate() {
                                    for j in cols.clone() {
                                        let mut s = 0.0f32;
                                        for p in 0..k {
                                            s += a[i * k + p] * b[[p, j]];
                                        }
                                        assert_eq!(
                                            want[r * ldc + j].to_bits(),
                                            (s * 0.5).to_bits()
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        });
    }
}
