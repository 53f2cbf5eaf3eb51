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
        lambda_init: None,
        subln_eps: diffattn::engine::diff_transformer::RMS_NORM_EPS,
        lambda: None,
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
