//! The forward pass the browser runs (the engine, through `Model::from_bytes` and
//! `Model::forward`) matches the candle forward pass that trained the weights, within 1e-5, for
//! every shipped weights file, on English and Chinese sentences.
//!
//! `DIFFATTN_WEIGHTS=DIR` checks the files of another directory (a training run in progress).

use std::path::PathBuf;

use candle_core::Tensor;
use diffattn::engine::{MechanismKind, Stages};
use diffattn::model::Model;
use diffattn::text::tokenize;
use diffattn_train::net::{Config, Net};

const SENTENCES: [&str; 8] = [
    "not good",
    "This movie isn't good, it's great!",
    "a dull, lifeless and utterly forgettable film",
    "The plot is thin but the performances are wonderful.",
    "wow",
    "这本书很好看，推荐！",
    "质量太差了，不会再买",
    "虽然价格有点贵，但是内容非常不错。Good value.",
];

const TOLERANCE: f32 = 1e-5;

fn weights_dir() -> PathBuf {
    std::env::var_os("DIFFATTN_WEIGHTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../weights"))
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "sizes differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The engine's forward pass of `model` and candle's of `net` agree within [`TOLERANCE`] on
/// every sentence: logits, layer output, final maps and the positive probability.
fn assert_same_forward(model: &Model, net: &Net, name: &str) {
    for sentence in SENTENCES {
        let tokens = tokenize(sentence);
        let (stages, prediction) = model.forward(&tokens).expect("the engine runs");
        let ids: Vec<u32> = model
            .token_ids(&tokens)
            .expect("a trained model")
            .into_iter()
            .map(|i| i as u32)
            .collect();
        let ids = Tensor::from_vec(ids, (1, tokens.len()), net.device()).expect("ids");
        let forward = net.forward(&ids).expect("candle runs");
        let what = format!("{name} on {sentence:?}");

        let logits = forward
            .logits
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let diff = max_abs_diff(&logits, &prediction.logits);
        assert!(diff < TOLERANCE, "{what}: logits differ by {diff}");

        let output = forward
            .output
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let engine_output: Vec<f32> = stages.output().iter().copied().collect();
        let diff = max_abs_diff(&output, &engine_output);
        assert!(diff < TOLERANCE, "{what}: outputs differ by {diff}");

        let engine_maps: Vec<f32> = stages.final_maps().iter().copied().collect();
        match forward.maps {
            Some(maps) => {
                let maps = maps.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let diff = max_abs_diff(&maps, &engine_maps);
                assert!(diff < TOLERANCE, "{what}: final maps differ by {diff}");
            }
            None => assert!(engine_maps.is_empty(), "{what}: the engine has maps"),
        }
        if let Stages::ShiftDiff { a, .. } = &stages {
            assert!(a.iter().all(|v| v.is_finite()));
        }
        let p = candle_nn::ops::softmax(&forward.logits, 1)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()[1];
        assert!(
            (p - prediction.positive).abs() < TOLERANCE,
            "{what}: probabilities {p} and {}",
            prediction.positive
        );
    }
}

#[test]
fn every_shipped_model_runs_the_same_in_the_engine_and_in_candle() {
    let dir = weights_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    let mut want: Vec<PathBuf> = MechanismKind::ALL
        .iter()
        .map(|k| dir.join(format!("{}.bin", k.key())))
        .collect();
    want.sort();
    assert_eq!(
        files,
        want,
        "one weights file per mechanism in {}",
        dir.display()
    );
    for file in files {
        let bytes = std::fs::read(&file).expect("readable weights");
        let model = Model::from_bytes(&bytes).expect("valid weights");
        let net = Net::from_model(&model).expect("candle takes the engine's model");
        assert_same_forward(&model, &net, &file.display().to_string());
    }
}

/// Every mechanism's freshly initialised classifier (nothing trained, nothing read from
/// `weights/`), through the engine's model and back: the candle layer the trainer optimises is
/// the engine's layer from the first step, and `to_model` / `from_model` carry every parameter.
#[test]
fn every_mechanism_runs_the_same_in_the_engine_and_in_candle_before_training() {
    let mut vocab = vec![diffattn::model::UNKNOWN_TOKEN.to_string()];
    for sentence in SENTENCES {
        for t in tokenize(sentence) {
            if !vocab.contains(&t.text) {
                vocab.push(t.text);
            }
        }
    }
    for kind in MechanismKind::ALL {
        let net = Net::new(Config::new(kind, vocab.len()), 7, &[]).expect("a net");
        let model = net
            .to_model(serde_json::json!({}), &vocab)
            .expect("the engine takes candle's parameters");
        assert_same_forward(&model, &net, kind.key());
        let back = Net::from_model(&model).expect("candle takes the engine's model");
        assert_same_forward(&model, &back, &format!("{} (from_model)", kind.key()));
    }
}
