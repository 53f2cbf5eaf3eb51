//! The cells' drawing (`render::plot_rgba`) at the page's shapes: 128 tokens at one and at
//! three pixels a cell, the same under a causal mask, and 2,048 tokens on a 202-pixel plot
//! (more cells than pixels). Prints the median time of each, in µs.
//!
//! Natively: `cargo run --release --example plot_speed`. In wasm as the page builds it (the
//! size-tuned `wasm` profile, simd128), through node's WASI (V8, as in Chromium):
//!
//! ```text
//! rustup target add wasm32-wasip1
//! CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS=-Ctarget-feature=+simd128 cargo build --profile wasm \
//!   --example plot_speed --target wasm32-wasip1 --target-dir target/wasi-simd128
//! node benches/wasi-run.mjs target/wasi-simd128/wasm32-wasip1/wasm/examples/plot_speed.wasm
//! ```
//!
//! docs/PERFORMANCE.md ("One path for heavy work: what a person feels") has the figures.

// The browser build has no clock here: the example runs natively or in WASI.
#[cfg(any(not(target_arch = "wasm32"), target_os = "wasi"))]
fn main() {
    use diffattn::engine::Mask;
    use diffattn::render::{plot_rgba, CellMask, HeatmapLayout, LayoutSpec, Scale};
    use ndarray::Array2;
    use std::time::Instant;

    let cases = [
        ("128 tokens, 1 px a cell", 128, 300, false),
        ("128 tokens, 3 px a cell", 128, 600, false),
        ("128 tokens, 1 px a cell, causal", 128, 300, true),
        ("2,048 tokens on 202 px", 2048, 300, false),
    ];
    let mut out = Vec::new();
    for (name, n, size, causal) in cases {
        let map = Array2::from_shape_fn((n, n), |(i, j)| ((i * 31 + j * 17) % 97) as f32 / 97.0);
        let layout = HeatmapLayout::new(&LayoutSpec {
            width_px: size,
            height_px: size,
            font_px: 12.0,
            rows: n,
            cols: n,
            row_label_em: 4.0,
            col_label_em: 4.0,
            tick_label_em: 2.0,
            title_em: 3.0,
            colorbar: true,
            padded: true,
            strip: None,
        });
        let mask = causal.then(|| CellMask::new(Mask::causal(true), 0));
        let scale = Scale::unit();
        // Warm up (V8 compiles hot functions again, optimised), then 25 samples of 40 calls.
        for _ in 0..400 {
            plot_rgba(map.view(), &scale, &layout, mask.as_ref(), &mut out);
        }
        let mut samples: Vec<f64> = (0..25)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..40 {
                    plot_rgba(map.view(), &scale, &layout, mask.as_ref(), &mut out);
                }
                t.elapsed().as_secs_f64() * 1e6 / 40.0
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        let p = layout.plot;
        println!(
            "{name} ({} x {} px): {:.0} µs",
            p.width,
            p.height,
            samples[samples.len() / 2]
        );
    }
}

#[cfg(not(any(not(target_arch = "wasm32"), target_os = "wasi")))]
fn main() {}
