//! Criterion benchmark of every mechanism at L = 16, 64, 256, 1024 tokens, H = 8, d = 64:
//! one full layer (projections, every map, output) per iteration, plus the shift stages alone,
//! which is what the page recomputes when the shift slider moves.
//!
//! Run: `cargo bench --bench engine` (figures in docs/PERFORMANCE.md).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use diffattn::engine::diff_transformer::DiffTransformerParams;
use diffattn::engine::shift_diff::{
    shift_diff_maps, Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill,
};
use diffattn::engine::{run, standard, Mask, Mechanism, Projected, Weights};
use diffattn::text::{seeded_normal, seeded_normal_vec};
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

fn mechanisms() -> Vec<Mechanism> {
    let d_h = D / HEADS / 2;
    vec![
        Mechanism::Standard,
        Mechanism::ShiftDiff(shift_params()),
        Mechanism::DiffTransformer(DiffTransformerParams {
            depth: 0,
            lambda_q1: seeded_normal_vec(d_h, 5, 0.1),
            lambda_k1: seeded_normal_vec(d_h, 6, 0.1),
            lambda_q2: seeded_normal_vec(d_h, 7, 0.1),
            lambda_k2: seeded_normal_vec(d_h, 8, 0.1),
            subln: vec![1.0; 2 * d_h],
        }),
        Mechanism::InputDiff,
        Mechanism::Cosine { tau: 10.0 },
        Mechanism::Local { window: 2 },
    ]
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

fn shift_stages(c: &mut Criterion) {
    let weights = weights();
    let params = shift_params();
    let mut group = c.benchmark_group("shift_stages_only");
    group.sample_size(10);
    for &len in &LENGTHS {
        let x = seeded_normal(len, D, 9, 1.0);
        let p = Projected::new(x.view(), &weights);
        let a = standard::attention(p.q.view(), p.k.view(), HEADS, Mask::FULL).expect("maps");
        group.throughput(Throughput::Elements((len * len) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(len), &a, |b, a| {
            b.iter(|| shift_diff_maps(black_box(a), &params, Mask::FULL).expect("stages"))
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

criterion_group!(benches, layer, shift_stages, tokenizer);
criterion_main!(benches);
