//! Criterion benchmark of every mechanism at L = 16, 64, 256, 1024 tokens, H = 8, d = 64:
//! one full layer (projections, every map, output) per iteration, plus the shift stages alone,
//! which is what the page recomputes when the shift slider moves; and `page_engine/*`, the
//! page's engine work at the sizes of the in-browser benchmark (L = 16 … 512, H = 1, 4, 8), the
//! same workload `bench_engine` in src/web.rs times in wasm, so the two medians compare.
//!
//! Run: `cargo bench --bench engine` (figures in docs/PERFORMANCE.md); `scripts/bench-peer`
//! runs `page_engine` alone beside the wasm and PyTorch runs.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use diffattn::engine::shift_diff::{
    shift_diff_maps_into, Difference, Gate, Renormalize, ShiftDiffMaps, ShiftDiffParams, ShiftFill,
};
use diffattn::engine::{
    run, standard, HeadShape, Mask, Mechanism, MechanismKind, Projected, Weights,
};
use diffattn::model::Model;
use diffattn::text::seeded_normal;
use ndarray::Array3;
use std::hint::black_box;

const D: usize = 64;
const HEADS: usize = 8;
const LENGTHS: [usize; 4] = [16, 64, 256, 1024];

fn weights() -> Weights {
    let w = |seed| seeded_normal(D, D, seed, 1.0 / (D as f32).sqrt());
    Weights::new(w(1), w(2), w(3), w(4)).expect("square weights")
}

fn shift_params() -> ShiftDiffParams {
    ShiftDiffParams {
        shift: 1,
        difference: Difference::Single,
        fill: ShiftFill::Circular,
        renormalize: Renormalize::None,
        gate: Gate::uniform(HEADS, 0.0, 4.0, 0.0),
    }
}

/// The mechanisms timed, with `diffattn bench`'s parameters (`diffattn::bench::mechanism`).
fn mechanisms() -> Vec<Mechanism> {
    [
        MechanismKind::Standard,
        MechanismKind::ShiftDiff,
        MechanismKind::DiffTransformer,
        MechanismKind::InputDiff,
        MechanismKind::Cosine,
        MechanismKind::Local,
    ]
    .into_iter()
    .map(|kind| diffattn::bench::mechanism(kind, HEADS, D))
    .collect()
}

fn layer(c: &mut Criterion) {
    let weights = weights();
    for mechanism in mechanisms() {
        let mut group = c.benchmark_group(format!("layer/{}", mechanism.name()));
        group.sample_size(10);
        for &len in &LENGTHS {
            let x = seeded_normal(len, D, 9, 1.0);
            group.throughput(Throughput::Elements((len * len) as u64));
            group.bench_with_input(BenchmarkId::from_parameter(len), &x, |b, x| {
                b.iter(|| {
                    run(black_box(x.view()), &weights, HEADS, false, &mechanism).expect("runs")
                })
            });
        }
        group.finish();
    }
}

/// Standard attention maps `A` of every head of the plain layout, every row.
fn attention(p: &Projected, heads: usize) -> Array3<f32> {
    let shape = HeadShape::plain(p.q.ncols(), heads).expect("heads divide d");
    let (all, rows): (Vec<usize>, _) = ((0..heads).collect(), 0..p.q.nrows());
    let mut a = Array3::zeros((0, 0, 0));
    standard::maps_into(
        p.q.view(),
        p.k.view(),
        &shape,
        Mask::FULL,
        &all,
        rows,
        1.0,
        &mut a,
    )
    .expect("maps");
    a
}

fn shift_stages(c: &mut Criterion) {
    let weights = weights();
    let params = shift_params();
    let mut group = c.benchmark_group("shift_stages_only");
    group.sample_size(10);
    for &len in &LENGTHS {
        let x = seeded_normal(len, D, 9, 1.0);
        let p = Projected::new(x.view(), &weights);
        let a = attention(&p, HEADS);
        group.throughput(Throughput::Elements((len * len) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(len), &a, |b, a| {
            b.iter(|| {
                let mut out = ShiftDiffMaps::empty();
                let rows = 0..a.dim().1;
                shift_diff_maps_into(black_box(a), &params, Mask::FULL, rows, &mut out)
                    .expect("stages");
                out
            })
        });
    }
    group.finish();
}

fn tokenizer(c: &mut Criterion) {
    let mut group = c.benchmark_group("tokenize");
    for (name, unit) in [
        ("english", "This movie is not good, it's great! "),
        ("chinese", "这部电影不好看，但是演员很好。"),
    ] {
        let text = unit.repeat(10_000 / unit.chars().count() + 1);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::new(name, text.chars().count()),
            &text,
            |b, t| b.iter(|| diffattn::text::tokenize(black_box(t))),
        );
    }
    group.finish();
}

/// The page's engine work, as `bench_engine` in src/web.rs times it in wasm: the untrained
/// model's weights, `L` seeded vectors, the page's default shift settings with a shift that
/// changes every iteration (as a dragged slider gives).
fn page_engine(c: &mut Criterion) {
    let weights = Model::untrained().weights;
    let mut maps_group = c.benchmark_group("page_engine/maps");
    maps_group.sample_size(10);
    let mut inputs = Vec::new();
    for len in [16, 64, 128, 256, 512] {
        let x = seeded_normal(len, weights.d_model(), 9, 1.0);
        for heads in [1, 4, 8] {
            let id = format!("L{len}_H{heads}");
            maps_group.bench_with_input(BenchmarkId::from_parameter(&id), &x, |b, x| {
                b.iter(|| {
                    let p = Projected::new(black_box(x.view()), &weights);
                    attention(&p, heads)
                })
            });
            let p = Projected::new(x.view(), &weights);
            let a = attention(&p, heads);
            inputs.push((id, heads, a));
        }
    }
    maps_group.finish();
    let mut shift_group = c.benchmark_group("page_engine/shift");
    shift_group.sample_size(10);
    for (id, heads, a) in &inputs {
        let mut params = ShiftDiffParams {
            gate: Gate::uniform(*heads, 0.0, 4.0, 0.0),
            ..shift_params()
        };
        // Reused buffers, as the page's explorer reuses them from one tick to the next.
        let mut stages = ShiftDiffMaps::empty();
        let mut tick = 0_i64;
        shift_group.bench_with_input(BenchmarkId::from_parameter(id), a, |b, a| {
            b.iter(|| {
                tick += 1;
                params.shift = 1 + tick % 8;
                shift_diff_maps_into(black_box(a), &params, Mask::FULL, 0..a.dim().1, &mut stages)
                    .expect("stages");
            })
        });
    }
    shift_group.finish();
}

criterion_group!(benches, layer, shift_stages, tokenizer, page_engine);
criterion_main!(benches);
