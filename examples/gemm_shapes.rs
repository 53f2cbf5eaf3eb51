//! Matrix products at the engine's shapes, three ways: the engine's kernels
//! (`engine::kernels::matmul`: no FMA, the same bits on every target), ndarray's `dot`
//! (matrixmultiply: FMA/AVX-512 natively, its simd128 kernel in wasm) and the `gemm` crate
//! (pulp's runtime dispatch natively, its simd128 kernels in the SIMD wasm build, scalar in
//! the baseline one). Prints the median time of each, in µs.
//!
//! Natively: `cargo run --release --example gemm_shapes`. In wasm (V8, through node's WASI):
//! `scripts/bench-gemm` builds this example for wasm32-wasip1 with and without simd128 and runs
//! both. docs/PERFORMANCE.md ("Which GEMM") has the figures and the choice.

// The browser build has no clock here and no gemm crate: the example runs natively or in WASI.
#[cfg(any(not(target_arch = "wasm32"), target_os = "wasi"))]
mod run {
    use std::hint::black_box;
    use std::time::Instant;

    use diffattn::engine::kernels;
    use diffattn::text::seeded_normal;
    use ndarray::{Array2, ArrayView2};

    /// The median time of `f` in µs over enough calls for about `budget_ms`.
    fn time_us(budget_ms: f64, mut f: impl FnMut()) -> f64 {
        f();
        let t0 = Instant::now();
        f();
        let once = t0.elapsed().as_secs_f64() * 1e6;
        let reps = ((budget_ms * 1e3 / once.max(0.1)) as usize).clamp(5, 2000);
        let mut samples: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    }

    /// `a·b` with the gemm crate, one thread.
    fn gemm_crate(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
        let (m, k) = a.dim();
        let n = b.ncols();
        let mut c = Array2::<f32>::zeros((m, n));
        let (sa, sb, sc) = (
            a.strides().to_vec(),
            b.strides().to_vec(),
            c.strides().to_vec(),
        );
        // SAFETY: the pointers and strides describe the three arrays, which outlive the call.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                sc[1],
                sc[0],
                false,
                a.as_ptr(),
                sa[1],
                sa[0],
                b.as_ptr(),
                sb[1],
                sb[0],
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
        c
    }

    pub fn main() {
        // gemm's `wasm-simd128-enable` puts SIMD code in every wasm build behind its own switch;
        // in the baseline build it must run its scalar code, as a browser without SIMD would need.
        #[cfg(all(target_arch = "wasm32", not(target_feature = "simd128")))]
        gemm::set_wasm_simd128(false);
        let d = 64;
        let d_h = 8;
        println!(
            "kernels path: {}; shapes m x k x n; median µs",
            kernels::active_path()
        );
        println!(
            "| product | m x k x n | engine kernels | ndarray dot (matrixmultiply) | gemm crate |"
        );
        println!("| --- | --- | ---: | ---: | ---: |");
        for l in [64usize, 256, 1024, 2048] {
            let budget = 150.0;
            let x = seeded_normal(l, d, 1, 1.0);
            let w = seeded_normal(d, d, 2, 0.125);
            let q = seeded_normal(l, d_h, 3, 1.0);
            let kt = seeded_normal(d_h, l, 4, 1.0);
            let map = seeded_normal(l, l, 5, 0.01);
            let v = seeded_normal(l, d_h, 6, 1.0);
            let cases: [(&str, ArrayView2<f32>, ArrayView2<f32>); 3] = [
                ("projection X·Wᵀ", x.view(), w.t()),
                ("scores Q_h·K_hᵀ", q.view(), kt.view()),
                ("values A·V_h", map.view(), v.view()),
            ];
            for (name, a, b) in cases {
                let ours = time_us(budget, || {
                    black_box(kernels::matmul(black_box(a), b, 1.0));
                });
                let mm = time_us(budget, || {
                    black_box(black_box(a).dot(&b));
                });
                let gc = time_us(budget, || {
                    black_box(gemm_crate(black_box(a), b));
                });
                println!(
                    "| {name} | {} x {} x {} | {ours:.1} | {mm:.1} | {gc:.1} |",
                    a.nrows(),
                    a.ncols(),
                    b.ncols()
                );
            }
        }
    }
}

fn main() {
    #[cfg(any(not(target_arch = "wasm32"), target_os = "wasi"))]
    run::main();
}
