//! The cases of the bit-for-bit check (`tests/bits.rs` natively, `tests/web.rs` in wasm): every
//! map and the output of every mechanism on seeded inputs, and the engine's `exp` on a dense
//! sample of all f32, each as a hash of its bits. `tests/bits/golden.txt` holds the hashes of a
//! native run; both wasm builds and the native build with and without SIMD must give them.

use diffattn::engine::diff_transformer::DiffTransformerParams;
use diffattn::engine::kernels;
use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use diffattn::engine::{run, Mechanism, Stages, Weights};
use diffattn::text::{seeded_normal, seeded_normal_vec};
use ndarray::Array3;

/// FNV-1a over the bits of `values`, in order.
fn hash(values: impl IntoIterator<Item = f32>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    for v in values {
        for b in v.to_bits().to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn map_hash(m: &Array3<f32>) -> u64 {
    hash(m.iter().copied())
}

/// `name hash` lines, one per map of each case, in a fixed order.
pub fn lines() -> Vec<String> {
    let d = 64;
    let w = |seed| seeded_normal(d, d, seed, 1.0 / (d as f32).sqrt());
    let weights = Weights::new(w(1), w(2), w(3), w(4)).expect("square weights");
    let mut out = Vec::new();
    // Lengths around the vector width (tails of 1 to 7 lanes) and heads down to d_h = 4.
    for (tokens, heads) in [(1, 1), (7, 4), (33, 8), (70, 16), (130, 2)] {
        let x = seeded_normal(tokens, d, 9 + tokens as u64, 1.0);
        for causal in [false, true] {
            for mechanism in mechanisms(heads, d) {
                let case = format!(
                    "{} L{tokens} H{heads}{}",
                    label(&mechanism),
                    if causal { " causal" } else { "" }
                );
                let stages = match run(x.view(), &weights, heads, causal, &mechanism) {
                    Ok(s) => s,
                    // Heads that do not fit this mechanism (diff heads need d / 2H): skipped.
                    Err(_) => continue,
                };
                let mut maps: Vec<(&str, &Array3<f32>)> = Vec::new();
                match &stages {
                    Stages::Attention { a, .. } => maps.push(("a", a)),
                    Stages::ShiftDiff { a, maps: m, .. } => {
                        maps.push(("a", a));
                        maps.push(("shifted", &m.shifted));
                        if let Some(b) = &m.shifted_back {
                            maps.push(("shifted_back", b));
                        }
                        maps.extend([("d", &m.d), ("g", &m.g), ("fused", &m.fused)]);
                    }
                    Stages::DiffTransformer { maps: m, .. } => {
                        maps.extend([("a1", &m.a1), ("a2", &m.a2), ("diff", &m.diff)]);
                    }
                    other => maps.push(("final", other.final_maps())),
                }
                for (name, m) in maps {
                    out.push(format!("{case} {name} {:016x}", map_hash(m)));
                }
                let output = hash(stages.output().iter().copied());
                out.push(format!("{case} output {output:016x}"));
            }
        }
    }
    // The exponential on every 1021st f32 (4.2 million inputs), eight at a time and one by one.
    let mut xs: Vec<f32> = (0..=u32::MAX / 1021)
        .map(|i| f32::from_bits(i * 1021))
        .collect();
    let one_by_one = hash(xs.iter().map(|&x| kernels::exp(x)));
    kernels::exp_in_place(&mut xs);
    out.push(format!("exp every 1021st f32 {one_by_one:016x}"));
    out.push(format!("exp_in_place every 1021st f32 {:016x}", hash(xs)));
    out
}

fn label(m: &Mechanism) -> String {
    match m {
        Mechanism::ShiftDiff(p) => format!(
            "shift_diff k{} {:?} {:?} {:?}",
            p.shift, p.difference, p.fill, p.renormalize
        ),
        other => other.name().to_string(),
    }
}

fn mechanisms(heads: usize, d: usize) -> Vec<Mechanism> {
    let shift = |shift, difference, fill, renormalize| {
        Mechanism::ShiftDiff(ShiftDiffParams {
            shift,
            difference,
            fill,
            renormalize,
            gate: Gate {
                alpha: seeded_normal_vec(heads, 11, 2.0),
                beta: seeded_normal_vec(heads, 12, 4.0),
                gamma: seeded_normal_vec(heads, 13, 1.0),
            },
        })
    };
    let d_h = d / heads / 2;
    vec![
        Mechanism::Standard,
        shift(
            1,
            Difference::Single,
            ShiftFill::Circular,
            Renormalize::None,
        ),
        shift(
            -3,
            Difference::Symmetric,
            ShiftFill::Zero,
            Renormalize::Softmax,
        ),
        Mechanism::DiffTransformer(DiffTransformerParams {
            depth: 2,
            lambda_q1: seeded_normal_vec(d_h, 5, 0.1),
            lambda_k1: seeded_normal_vec(d_h, 6, 0.1),
            lambda_q2: seeded_normal_vec(d_h, 7, 0.1),
            lambda_k2: seeded_normal_vec(d_h, 8, 0.1),
            subln: seeded_normal_vec(2 * d_h, 14, 1.0),
            ..Default::default()
        }),
        Mechanism::InputDiff,
        Mechanism::Cosine { tau: 10.0 },
        Mechanism::Local { window: 2 },
    ]
}
