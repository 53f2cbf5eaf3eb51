//! The fuzzers' committed inputs on stable Rust: every seed and every regression in `fuzz/`
//! goes through the same checks the fuzz targets run (`fuzz/src/checks.rs`), so an input that
//! once broke a promise is a test from then on, without nightly or libFuzzer.
//!
//! The model seeds are tiny weights files (d = 4) written by this file: when the format
//! changes, `DIFFATTN_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_inputs` writes them again.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/src/checks.rs"]
mod checks;

#[path = "../fuzz/src/bert_checks.rs"]
mod bert_checks;

use std::path::{Path, PathBuf};

use diffattn::engine::bilstm::{BiLstm, LstmWeights};
use diffattn::engine::diff_transformer::DiffTransformerParams;
use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use diffattn::engine::{Mechanism, Weights};
use diffattn::model::{Model, Pooling, Quantization, TokenTable, Trained};
use diffattn::text::{seeded_normal, seeded_normal_vec};
use ndarray::Array1;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted.
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

fn run_all(target: &str, check: fn(&[u8])) {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "fuzz/seeds/{target} is empty");
    for (path, bytes) in seeds.iter().chain(&inputs("regressions", target)) {
        let outcome = std::panic::catch_unwind(|| check(bytes));
        assert!(
            outcome.is_ok(),
            "{} breaks the {target} check",
            path.display()
        );
    }
}

#[test]
fn the_spec_inputs_pass_the_spec_check() {
    run_all("spec", checks::spec);
}

#[test]
fn the_binary_spec_inputs_pass_the_spec_check() {
    run_all("spec_binary", checks::spec);
}

#[test]
fn the_model_inputs_pass_the_model_check() {
    run_all("model", checks::model);
}

#[test]
fn the_tokenizer_inputs_pass_the_tokenizer_check() {
    run_all("tokenizer", checks::tokenizer);
}

#[test]
fn the_bert_inputs_pass_the_bert_check() {
    run_all("bert", bert_checks::bert);
}

#[test]
fn the_wordpiece_inputs_pass_the_wordpiece_check() {
    run_all("wordpiece", bert_checks::wordpiece);
}

/// The BERT seeds: small seeded BERTs (d = 8) of one and two layers, 16 positions and 2.
fn seed_berts() -> Vec<(String, Vec<u8>)> {
    use diffattn::model::bert::{Bert, BertConfig, BertParts};
    let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .map(String::from)
        .to_vec();
    vocab.extend(["the", "cat", "sat", "on", "mat", "##s", ".", "漢"].map(String::from));
    [("two_layers", 2, 16, 2), ("one_layer", 1, 2, 1)]
        .into_iter()
        .map(|(name, layers, positions, heads)| {
            let config = BertConfig {
                d_model: 8,
                layers,
                heads,
                intermediate: 16,
                positions,
                type_vocab: 1,
                layer_norm_eps: 1e-12,
            };
            let bert = Bert::new(BertParts::seeded(vocab.clone(), config, 3)).unwrap();
            (name.to_string(), bert.to_bytes())
        })
        .collect()
}

#[test]
fn the_bert_seeds_are_the_current_format() {
    let dir = fuzz_dir().join("seeds/bert");
    let write = std::env::var_os("DIFFATTN_WRITE_FUZZ_SEEDS").is_some();
    if write {
        std::fs::create_dir_all(&dir).unwrap();
    }
    for (name, bytes) in seed_berts() {
        let path = dir.join(format!("{name}.bin"));
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == bytes,
            "{} is not what this build writes; run \
             DIFFATTN_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_inputs",
            path.display()
        );
        assert!(bytes.len() < 8192, "{name}: {} bytes", bytes.len());
    }
}

#[test]
fn the_spec_seeds_are_good_specs_of_every_mechanism() {
    // A seed the parser rejects would start the fuzzer at an error; each seed runs, and
    // between them they use every mechanism of the format.
    let mut mechanisms = std::collections::BTreeSet::new();
    for (path, bytes) in inputs("seeds", "spec")
        .into_iter()
        .chain(inputs("seeds", "spec_binary"))
    {
        let spec = diffattn::spec::parse_spec_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        spec.run().unwrap();
        mechanisms.insert(spec.mechanism.name());
    }
    assert_eq!(mechanisms.len(), diffattn::engine::MechanismKind::ALL.len());
}

/// The seed models: every mechanism at d = 4 over a vocabulary of four tokens.
fn seed_models() -> Vec<(String, Model)> {
    const D: usize = 4;
    let vocab: Vec<String> = ["<unk>", "good", "bad", "好"].map(String::from).to_vec();
    let lstm = |s: u64| LstmWeights {
        w_ih: seeded_normal(4 * D / 2, D, s, 0.3),
        w_hh: seeded_normal(4 * D / 2, D / 2, s + 1, 0.3),
        b_ih: Array1::from(seeded_normal_vec(4 * D / 2, s + 2, 0.1)),
        b_hh: Array1::from(seeded_normal_vec(4 * D / 2, s + 3, 0.1)),
    };
    let shift_diff = Mechanism::ShiftDiff(ShiftDiffParams {
        shift: 1,
        difference: Difference::Symmetric,
        fill: ShiftFill::Zero,
        renormalize: Renormalize::None,
        gate: Gate {
            alpha: vec![0.5, -1.0],
            beta: vec![2.0, 1.0],
            gamma: vec![0.0, 0.3],
        },
    });
    let diff_transformer = Mechanism::DiffTransformer(DiffTransformerParams {
        depth: 1,
        lambda_q1: vec![0.1],
        lambda_k1: vec![0.3],
        lambda_q2: vec![0.05],
        lambda_k2: vec![0.2],
        subln: vec![1.0, 0.5],
        ..Default::default()
    });
    let cases = [
        ("standard", Mechanism::Standard, 2, false),
        ("shift_diff", shift_diff, 2, false),
        ("diff_transformer", diff_transformer, 2, false),
        ("input_diff", Mechanism::InputDiff, 2, true),
        ("cosine", Mechanism::Cosine { tau: 7.5 }, 1, false),
        ("local", Mechanism::Local { window: 1 }, 4, false),
        ("gated_attention", Mechanism::GatedAttention, 2, false),
    ];
    cases
        .into_iter()
        .map(|(name, mechanism, heads, encoder)| {
            let w = |s: u64| seeded_normal(D, D, s, 0.5);
            let trained = Trained {
                mechanism,
                heads,
                table: TokenTable::new(vocab.clone(), seeded_normal(4, D, 9, 1.0)).unwrap(),
                encoder: encoder.then(|| BiLstm::new(lstm(20), lstm(30)).unwrap()),
                pooling: Pooling::MeanMax,
                classifier: seeded_normal(2, 2 * D, 10, 0.5),
                classifier_bias: Array1::from(vec![0.1, -0.1]),
                quantization: Quantization::F32,
                info: serde_json::json!({"seed": 1}),
            };
            let mut weights = Weights::new(w(1), w(2), w(3), w(4)).unwrap();
            if name == "gated_attention" {
                weights = weights.with_output_gate(w(5), None).unwrap();
            }
            (
                name.to_string(),
                Model::from_trained(weights, trained).unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_model_seeds_are_the_current_format() {
    let dir = fuzz_dir().join("seeds/model");
    let write = std::env::var_os("DIFFATTN_WRITE_FUZZ_SEEDS").is_some();
    for (name, model) in seed_models() {
        for (suffix, q) in [("f32", Quantization::F32), ("int8", Quantization::Int8Rows)] {
            let bytes = model.to_bytes(q).unwrap();
            let path = dir.join(format!("{name}_{suffix}.bin"));
            if write {
                std::fs::write(&path, &bytes).unwrap();
            }
            let committed = std::fs::read(&path).unwrap_or_default();
            assert!(
                committed == bytes,
                "{} is not what this build writes; run \
                 DIFFATTN_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_inputs",
                path.display()
            );
            // Small seeds keep the fuzzer fast.
            assert!(bytes.len() < 4096, "{name}: {} bytes", bytes.len());
        }
    }
}
