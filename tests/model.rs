//! The trained model's loader: files round-trip, truncated or corrupt files are errors that say
//! what is wrong (never a panic), the shipped weights load and classify, and per-head
//! parameters follow the heads slider as docs/MODEL.md says.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::MechanismKind;

use diffattn::engine::bilstm::{BiLstm, LstmWeights};
use diffattn::engine::diff_transformer::{lambda, DiffTransformerParams};
use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use diffattn::engine::{Mechanism, Weights};
use diffattn::model::{Model, ModelError, Pooling, Quantization, Sentiment, TokenTable, Trained};
use diffattn::text::{seeded_normal, seeded_normal_vec, tokenize};
use ndarray::{Array1, Array2};

const D: usize = 8;

fn tiny(mechanism: Mechanism, heads: usize, encoder: bool) -> Model {
    let vocab: Vec<String> = ["<unk>", "good", "bad", "not", "好"]
        .map(String::from)
        .to_vec();
    let w = |s: u64| seeded_normal(D, D, s, 0.3);
    let weights = Weights::new(w(1), w(2), w(3), w(4)).unwrap();
    let lstm = |s: u64| LstmWeights {
        w_ih: seeded_normal(4 * D / 2, D, s, 0.3),
        w_hh: seeded_normal(4 * D / 2, D / 2, s + 1, 0.3),
        b_ih: Array1::from(seeded_normal_vec(4 * D / 2, s + 2, 0.1)),
        b_hh: Array1::from(seeded_normal_vec(4 * D / 2, s + 3, 0.1)),
    };
    let trained = Trained {
        mechanism,
        heads,
        table: TokenTable::new(vocab, seeded_normal(5, D, 9, 1.0)).unwrap(),
        encoder: encoder.then(|| BiLstm::new(lstm(20), lstm(30)).unwrap()),
        pooling: Pooling::MeanMax,
        classifier: seeded_normal(2, 2 * D, 10, 0.5),
        classifier_bias: Array1::from(vec![0.1, -0.1]),
        quantization: Quantization::F32,
        info: serde_json::json!({"test": true}),
    };
    Model::from_trained(weights, trained).unwrap()
}

fn shift_diff() -> Mechanism {
    Mechanism::ShiftDiff(ShiftDiffParams {
        shift: 1,
        difference: Difference::Single,
        fill: ShiftFill::Circular,
        renormalize: Renormalize::None,
        gate: Gate {
            alpha: vec![0.5, -1.0],
            beta: vec![2.0, 1.0],
            gamma: vec![0.0, 0.3],
        },
    })
}

fn diff_transformer() -> Mechanism {
    Mechanism::DiffTransformer(DiffTransformerParams {
        depth: 0,
        lambda_q1: vec![0.1, 0.2],
        lambda_k1: vec![0.3, -0.1],
        lambda_q2: vec![0.05, 0.0],
        lambda_k2: vec![0.2, 0.4],
        subln: vec![1.0, 0.5, 2.0, 1.5],
        ..Default::default()
    })
}

fn all_models() -> Vec<Model> {
    vec![
        tiny(Mechanism::Standard, 2, false),
        tiny(shift_diff(), 2, false),
        tiny(diff_transformer(), 2, false),
        tiny(Mechanism::InputDiff, 2, true),
        tiny(Mechanism::Cosine { tau: 7.5 }, 4, false),
        tiny(Mechanism::Local { window: 1 }, 1, false),
    ]
}

#[test]
fn f32_files_round_trip_exactly() {
    let tokens = tokenize("not good 好 unseen");
    for model in all_models() {
        let bytes = model.to_bytes(Quantization::F32).unwrap();
        let back = Model::from_bytes(&bytes).unwrap();
        assert_eq!(back.trained_parts(), model.trained_parts());
        assert_eq!(back.weights, model.weights);
        assert_eq!(
            back.classify(&tokens).unwrap(),
            model.classify(&tokens).unwrap()
        );
        // Writing again gives the same bytes.
        assert_eq!(back.to_bytes(Quantization::F32).unwrap(), bytes);
    }
}

#[test]
fn int8_files_keep_the_table_within_half_a_step() {
    for model in all_models() {
        let bytes = model.to_bytes(Quantization::Int8Rows).unwrap();
        let back = Model::from_bytes(&bytes).unwrap();
        let (a, b) = (
            model.trained_parts().unwrap(),
            back.trained_parts().unwrap(),
        );
        assert_eq!(b.quantization, Quantization::Int8Rows);
        for (ra, rb) in a
            .table
            .vectors
            .rows()
            .into_iter()
            .zip(b.table.vectors.rows())
        {
            let step = ra.iter().fold(0.0f32, |m, v| m.max(v.abs())) / 127.0;
            for (x, y) in ra.iter().zip(rb) {
                assert!((x - y).abs() <= 0.5 * step + 1e-7, "{x} vs {y}");
            }
        }
        // Everything but the table is stored as f32.
        assert_eq!(back.weights, model.weights);
        assert_eq!(a.mechanism, b.mechanism);
        assert_eq!(a.classifier, b.classifier);
    }
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let bytes = tiny(shift_diff(), 2, false)
        .to_bytes(Quantization::Int8Rows)
        .unwrap();
    for len in 0..bytes.len() {
        let err = Model::from_bytes(&bytes[..len]).expect_err("a truncated file");
        assert!(
            matches!(
                err,
                ModelError::Truncated { .. } | ModelError::Corrupt { .. }
            ),
            "{len}: {err}"
        );
    }
}

#[test]
fn corrupt_files_say_what_is_wrong() {
    let bytes = tiny(Mechanism::InputDiff, 2, true)
        .to_bytes(Quantization::F32)
        .unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;

    assert_eq!(
        Model::from_bytes(b"PK\x03\x04 a zip file").unwrap_err(),
        ModelError::NotWeights
    );

    let mut v = bytes.clone();
    v[8] = 9;
    assert_eq!(
        Model::from_bytes(&v).unwrap_err(),
        ModelError::UnsupportedVersion(9)
    );

    // A flipped bit in the tensors: the blob's hash no longer matches.
    let mut v = bytes.clone();
    *v.last_mut().unwrap() ^= 0x10;
    let err = Model::from_bytes(&v).unwrap_err();
    assert!(matches!(err, ModelError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("corrupt"));

    // Garbage in the header.
    let mut v = bytes.clone();
    v[16] = b'!';
    assert!(matches!(Model::from_bytes(&v), Err(ModelError::Header(_))));

    // A header that announces more tensor bytes than there are.
    let mut v = bytes.clone();
    v[12..16].copy_from_slice(&(header_len as u32 + 1_000_000).to_le_bytes());
    assert!(matches!(
        Model::from_bytes(&v),
        Err(ModelError::Truncated { .. })
    ));
}

#[test]
fn inconsistent_parts_are_rejected() {
    let good = tiny(Mechanism::Standard, 2, false);
    let mut t = good.trained_parts().unwrap().clone();
    t.heads = 3;
    let err = Model::from_trained(good.weights.clone(), t).unwrap_err();
    assert!(err.to_string().contains("heads"), "{err}");

    let mut t = good.trained_parts().unwrap().clone();
    t.classifier = Array2::zeros((2, 3));
    assert!(Model::from_trained(good.weights.clone(), t).is_err());

    let vocab = vec!["good".to_string()];
    assert!(
        TokenTable::new(vocab, Array2::zeros((1, D))).is_err(),
        "no <unk> first"
    );
}

#[test]
fn the_untrained_model_has_no_file_and_no_classifier() {
    let m = Model::untrained();
    assert!(!m.trained);
    assert!(m.to_bytes(Quantization::F32).is_err());
    assert_eq!(m.classify(&tokenize("good")), Err(ModelError::Untrained));
    assert!(m.classify_output(Array2::zeros((1, 64)).view()).is_none());
    assert!(m.gate(4).is_none() && m.trained_heads().is_none());
}

#[test]
fn unknown_tokens_read_as_unk() {
    let m = tiny(Mechanism::Standard, 2, false);
    assert_eq!(m.token_ids(&tokenize("Good zzz 好")), Some(vec![1, 0, 4]));
}

#[test]
fn per_head_parameters_follow_the_heads_slider() {
    let m = tiny(shift_diff(), 2, false);
    assert_eq!(m.trained_heads(), Some(2));
    let g4 = m.gate(4).unwrap();
    assert_eq!(g4.alpha, [0.5, 0.5, -1.0, -1.0]);
    let g1 = m.gate(1).unwrap();
    assert!((g1.gamma[0] - 0.15).abs() < 1e-6);

    // Lambda, one scalar per layer, is the same at every head count.
    let m = tiny(diff_transformer(), 2, false);
    let trained = lambda(&m.diff_transformer_params(2).unwrap());
    for heads in [1, 4] {
        let p = m.diff_transformer_params(heads).unwrap();
        assert_eq!(p.lambda_q1.len(), D / heads / 2);
        assert!((lambda(&p) - trained).abs() < 1e-6);
        assert!(matches!(
            m.mechanism(heads),
            Some(Ok(Mechanism::DiffTransformer(_)))
        ));
    }
}

#[test]
fn classify_output_agrees_with_classify() {
    let m = tiny(Mechanism::Cosine { tau: 7.5 }, 4, false);
    let tokens = tokenize("not bad");
    let (stages, p) = m.forward(&tokens).unwrap();
    assert_eq!(m.classify_output(stages.output().view()), Some(p));
    assert!((p.probability - p.positive.max(1.0 - p.positive)).abs() < 1e-7);
    assert_eq!(p.label == Sentiment::Positive, p.positive >= 0.5);
    assert!(m.classify(&[]).is_err(), "no tokens");
}

#[test]
fn the_shipped_weights_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("weights");
    for name in MechanismKind::ALL.map(MechanismKind::key) {
        let bytes = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let m = Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(m.trained);
        assert_eq!(m.d_model(), 32);
        assert_eq!(m.trained_parts().unwrap().mechanism.name(), name);
        let p = m.classify(&tokenize("not good")).unwrap();
        assert!(p.probability >= 0.5 && p.probability <= 1.0);
    }
}

// --- Hostile files (issue 14) ----------------------------------------------------------------

/// A weights file's JSON header and blob.
fn split_file(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let header = serde_json::from_slice(&bytes[16..16 + n]).unwrap();
    (header, bytes[16 + n..].to_vec())
}

/// A weights file from a header and a blob; `rehash` makes the header's hash the blob's, so
/// that the file passes the hash check and reaches the checks after it.
fn join_file(header: &serde_json::Value, blob: &[u8], rehash: bool) -> Vec<u8> {
    let mut header = header.clone();
    if rehash {
        header["blob_fnv1a64"] = format!("{:016x}", diffattn::text::fnv1a_64(blob)).into();
    }
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = b"diffattn".to_vec();
    out.extend(1u32.to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(json);
    out.extend(blob);
    out
}

/// The names of a file's `f32` tensors.
fn f32_tensors(bytes: &[u8]) -> Vec<String> {
    let (header, _) = split_file(bytes);
    header["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["dtype"] == "f32")
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The file with every value of `tensor` replaced by `value(index)`, hash updated.
fn with_values(bytes: &[u8], tensor: &str, value: impl Fn(usize) -> f32) -> Vec<u8> {
    let (header, mut blob) = split_file(bytes);
    let entry = header["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tensor)
        .unwrap();
    let offset = entry["offset"].as_u64().unwrap() as usize;
    let count: u64 = entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .product();
    for i in 0..count as usize {
        blob[offset + 4 * i..offset + 4 * i + 4].copy_from_slice(&value(i).to_le_bytes());
    }
    join_file(&header, &blob, true)
}

/// Every model of `all_models`, written both ways.
fn all_files() -> Vec<Vec<u8>> {
    all_models()
        .iter()
        .flat_map(|m| [Quantization::F32, Quantization::Int8Rows].map(|q| m.to_bytes(q).unwrap()))
        .collect()
}

#[test]
fn a_table_shape_of_0_by_2_pow_63_is_a_clean_error_for_every_mechanism() {
    // The crafted file: a valid hash (the blob is untouched) and an embedding of shape
    // [0, 2^63]. Zero values need zero bytes, so the bounds check passed and ndarray panicked
    // ("overflows isize") making the array.
    for bytes in all_files() {
        let (mut header, blob) = split_file(&bytes);
        let tensors = header["tensors"].as_array_mut().unwrap();
        let table = tensors
            .iter_mut()
            .find(|t| t["name"] == "embedding")
            .unwrap();
        table["shape"] = serde_json::json!([0u64, 1u64 << 63]);
        let err = Model::from_bytes(&join_file(&header, &blob, false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inconsistent weights: tensor \"embedding\": shape [0, 9223372036854775808]; a \
             tensor is a vector or a matrix of at least one value"
        );
    }
}

#[test]
fn shapes_whose_size_overflows_are_clean_errors() {
    let bytes = tiny(Mechanism::Standard, 2, false)
        .to_bytes(Quantization::F32)
        .unwrap();
    for shape in [
        serde_json::json!([1u64 << 62, 1u64 << 62]),
        // 2^62 values of 4 bytes: 2^64 bytes.
        serde_json::json!([1u64 << 62]),
        // Within usize but beyond isize::MAX bytes.
        serde_json::json!([1u64 << 61]),
        serde_json::json!([]),
        serde_json::json!([2, 2, 2]),
    ] {
        let (mut header, blob) = split_file(&bytes);
        let w_q = header["tensors"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|t| t["name"] == "w_q")
            .unwrap();
        w_q["shape"] = shape.clone();
        let err = Model::from_bytes(&join_file(&header, &blob, false)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("inconsistent weights: tensor \"w_q\": shape"),
            "{shape}: {err}"
        );
    }
    // An offset that overflows when the length is added.
    let (mut header, blob) = split_file(&bytes);
    header["tensors"][0]["offset"] = serde_json::json!(u64::MAX);
    assert!(Model::from_bytes(&join_file(&header, &blob, false)).is_err());
}

#[test]
fn a_non_finite_value_in_any_parameter_is_an_error_naming_it() {
    // NaN or infinity in the gate, the lambda vectors, tau, the norm weight or the BiLSTM used
    // to load and give NaN logits ("positive, p = 0.5").
    let mut seen = std::collections::BTreeSet::new();
    for bytes in all_files() {
        for tensor in f32_tensors(&bytes) {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                // The last value, so the index in the message is not always 0.
                let (header, _) = split_file(&bytes);
                let count: u64 = header["tensors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["name"] == tensor.as_str())
                    .unwrap()["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_u64().unwrap())
                    .product();
                let last = count as usize - 1;
                let original = Model::from_bytes(&bytes).unwrap();
                let poisoned = with_values(&bytes, &tensor, |i| {
                    if i == last {
                        bad
                    } else {
                        f32_value(&original, &tensor, i)
                    }
                });
                let err = Model::from_bytes(&poisoned).unwrap_err().to_string();
                assert_eq!(
                    err,
                    format!(
                        "inconsistent weights: {tensor}[{last}]: {bad} (every parameter must \
                         be finite)"
                    ),
                );
                seen.insert(tensor.clone());
            }
        }
    }
    // Every kind of parameter the issue names was reached.
    for name in [
        "gate.alpha",
        "lambda_q1",
        "tau",
        "subln",
        "bilstm.forward.w_hh",
        "embedding.scale",
        "classifier.bias",
    ] {
        assert!(seen.contains(name), "{name} was not tested");
    }
}

/// Value `i` (row-major) of a model's tensor, read back through the public parts.
fn f32_value(m: &Model, tensor: &str, i: usize) -> f32 {
    let t = m.trained_parts().unwrap();
    let flat = |a: &Array2<f32>| a.iter().copied().nth(i).unwrap();
    let gate = |f: fn(&Gate) -> &Vec<f32>| match &t.mechanism {
        Mechanism::ShiftDiff(p) => f(&p.gate)[i],
        _ => unreachable!(),
    };
    let dt = |f: fn(&DiffTransformerParams) -> &Vec<f32>| match &t.mechanism {
        Mechanism::DiffTransformer(p) => f(p)[i],
        _ => unreachable!(),
    };
    let lstm = |dir: &str| {
        let e = t.encoder.as_ref().unwrap();
        if dir == "forward" {
            &e.forward
        } else {
            &e.backward
        }
    };
    match tensor {
        "embedding" => flat(&t.table.vectors),
        // The int8 table's scales: max |row| / 127, as the writer computed them.
        "embedding.scale" => {
            let row = t.table.vectors.row(i);
            let max = row.iter().fold(0.0f32, |a, v| a.max(v.abs()));
            if max > 0.0 {
                max / 127.0
            } else {
                1.0
            }
        }
        "w_q" => flat(&m.weights.w_q),
        "w_k" => flat(&m.weights.w_k),
        "w_v" => flat(&m.weights.w_v),
        "w_o" => flat(&m.weights.w_o),
        "classifier.weight" => flat(&t.classifier),
        "classifier.bias" => t.classifier_bias[i],
        "gate.alpha" => gate(|g| &g.alpha),
        "gate.beta" => gate(|g| &g.beta),
        "gate.gamma" => gate(|g| &g.gamma),
        "lambda_q1" => dt(|p| &p.lambda_q1),
        "lambda_k1" => dt(|p| &p.lambda_k1),
        "lambda_q2" => dt(|p| &p.lambda_q2),
        "lambda_k2" => dt(|p| &p.lambda_k2),
        "subln" => dt(|p| &p.subln),
        "tau" => match t.mechanism {
            Mechanism::Cosine { tau } => tau,
            _ => unreachable!(),
        },
        name => {
            let (dir, part) = name
                .strip_prefix("bilstm.")
                .and_then(|n| n.split_once('.'))
                .unwrap();
            let l = lstm(dir);
            match part {
                "w_ih" => flat(&l.w_ih),
                "w_hh" => flat(&l.w_hh),
                "b_ih" => l.b_ih[i],
                "b_hh" => l.b_hh[i],
                other => panic!("unknown tensor {other}"),
            }
        }
    }
}

/// Asserts that a prediction is made of finite numbers in their ranges.
fn assert_sane(p: &diffattn::model::Prediction, what: &str) {
    assert!(
        p.logits.iter().all(|l| l.is_finite()),
        "{what}: logits {:?}",
        p.logits
    );
    assert!((0.0..=1.0).contains(&p.positive), "{what}: {}", p.positive);
    assert!(
        (0.5..=1.0).contains(&p.probability),
        "{what}: {}",
        p.probability
    );
    assert_eq!(p.label == Sentiment::Positive, p.positive >= 0.5, "{what}");
}

#[test]
fn huge_but_finite_weights_give_finite_predictions() {
    // Weights of ±3.4e38 loaded and gave NaN logits. Every step of the forward pass now
    // saturates, so any finite parameters give finite logits.
    let sentences = ["not good 好", "bad bad bad bad", "good"];
    for bytes in all_files() {
        for tensor in f32_tensors(&bytes) {
            for sign in [1.0f32, -1.0] {
                let huge = with_values(&bytes, &tensor, |i| {
                    // Alternating signs make sums of opposite overflows: +inf + -inf = NaN.
                    if i % 2 == 0 {
                        sign * 3.4e38
                    } else {
                        -sign * 3.4e38
                    }
                });
                let model = match Model::from_bytes(&huge) {
                    Ok(model) => model,
                    // A scale of 3.4e38 times a code of 127 would be infinite: refused.
                    Err(e) if tensor == "embedding.scale" => {
                        assert!(e.to_string().contains("overflows f32"), "{e}");
                        continue;
                    }
                    Err(e) => panic!("{tensor}: {e}"),
                };
                for s in sentences {
                    let p = model.classify(&tokenize(s)).unwrap();
                    assert_sane(&p, &format!("{tensor} = ±3.4e38 on {s:?}"));
                }
            }
        }
    }
}

#[test]
fn a_model_refuses_more_tokens_than_its_maps_may_hold() {
    let m = tiny(Mechanism::Standard, 2, false);
    assert_eq!(m.max_tokens(), 2048);
    let long = tokenize(&"good ".repeat(2049));
    assert_eq!(
        m.classify(&long).unwrap_err(),
        ModelError::TooLong {
            tokens: 2049,
            max: 2048
        }
    );
    assert_sane(&m.classify(&long[..2048]).unwrap(), "2,048 tokens");
    // d = 8 allows at most 8 heads here, which fit at 2,048 tokens; the bound bites at 16.
    assert_eq!(diffattn::text::limits::max_tokens_for_heads(16), 1448);
}

#[test]
fn the_model_loader_reports_a_file_over_d_model_limit() {
    let bytes = tiny(Mechanism::Standard, 2, false)
        .to_bytes(Quantization::F32)
        .unwrap();
    let (mut header, blob) = split_file(&bytes);
    header["d_model"] = serde_json::json!(4096);
    let err = Model::from_bytes(&join_file(&header, &blob, false)).unwrap_err();
    assert!(
        err.to_string()
            .contains("d_model 4096 is over the limit of 2048"),
        "{err}"
    );
}

#[test]
fn parts_with_non_finite_parameters_are_rejected_by_name() {
    // Models built in code are checked the same way as files.
    let good = tiny(shift_diff(), 2, false);
    let mut t = good.trained_parts().unwrap().clone();
    if let Mechanism::ShiftDiff(p) = &mut t.mechanism {
        p.gate.beta[1] = f32::NAN;
    }
    let err = Model::from_trained(good.weights.clone(), t).unwrap_err();
    assert_eq!(
        err.to_string(),
        "inconsistent weights: gate.beta[1]: NaN (every parameter must be finite)"
    );
    let good = tiny(Mechanism::InputDiff, 2, true);
    let mut t = good.trained_parts().unwrap().clone();
    t.encoder.as_mut().unwrap().backward.b_hh[3] = f32::NEG_INFINITY;
    let err = Model::from_trained(good.weights.clone(), t).unwrap_err();
    assert!(
        err.to_string().contains("bilstm.backward.b_hh[3]: -inf"),
        "{err}"
    );
}

mod extreme_parameters {
    use super::*;
    use proptest::prelude::*;

    /// Values a hostile or badly trained file may hold: the extremes of f32, values whose
    /// products overflow, tiny ones, ordinary ones.
    fn extreme() -> impl Strategy<Value = f32> {
        prop_oneof![
            Just(f32::MAX),
            Just(-f32::MAX),
            Just(3.4e38f32),
            Just(1e30f32),
            Just(-1e30f32),
            Just(1e19f32),
            Just(f32::MIN_POSITIVE),
            Just(0.0f32),
            -10.0f32..10.0,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Any finite values in any tensor, mixed per value, give a finite prediction (or,
        /// for the int8 scales, a clean refusal).
        #[test]
        fn any_finite_parameters_give_a_finite_prediction(
            model in 0usize..12,
            tensor in 0usize..64,
            values in proptest::collection::vec(extreme(), 1..64),
            text in "[a-z 好不]{1,24}",
        ) {
            let bytes = &all_files()[model];
            let names = f32_tensors(bytes);
            let name = &names[tensor % names.len()];
            let file = with_values(bytes, name, |i| values[i % values.len()]);
            match Model::from_bytes(&file) {
                Ok(m) => {
                    let tokens = tokenize(&text);
                    if !tokens.is_empty() {
                        assert_sane(&m.classify(&tokens).unwrap(), name);
                    }
                }
                Err(e) => prop_assert!(
                    name == "embedding.scale" && e.to_string().contains("overflows f32"),
                    "{name}: {e}"
                ),
            }
        }
    }
}
