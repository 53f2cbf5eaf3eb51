//! The retrieval models' forward pass on the engine (`diffattn::retrieval::RetrievalModel`,
//! read from the shipped weights file) matches the candle forward pass that trained them: the
//! 100 logits and every layer's final map (`A`, `A′`, `A1 − λ·A2`), within 1e-5 (relative to
//! the largest logit when that exceeds 1), for every shipped retrieval model, on held-out
//! contexts, a hand-written one and one with words outside the vocabulary. And the same for a
//! freshly initialised model of every mechanism written to a file and read back, which needs no
//! shipped weights.
//!
//! `DIFFATTN_RETRIEVAL_WEIGHTS=DIR` checks the files of another directory.

use std::path::PathBuf;

use diffattn::model::RetrievalFile;
use diffattn::text::tokenize;
use diffattn_train::retrieval::fit::Encoder;
use diffattn_train::retrieval::net::{ids_tensor, Config, Kind, Net};

const TOLERANCE: f32 = 1e-5;

fn dir() -> PathBuf {
    std::env::var_os("DIFFATTN_RETRIEVAL_WEIGHTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../weights/retrieval"))
}

fn texts() -> Vec<String> {
    let heldout = std::fs::read_to_string(dir().join("heldout.tsv")).expect("heldout.tsv");
    let mut t: Vec<String> = heldout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .step_by(11)
        .map(|l| l.splitn(3, '\t').nth(2).unwrap().to_string())
        .collect();
    t.push(
        "The room of Anna is 42. It rained. The seat of Anna is 9. What is the room of Anna?"
            .into(),
    );
    t.push(
        "Qwxz flurbs the grommet. The door of Zebulonius is 3. What is the door of Zebulonius?"
            .into(),
    );
    t
}

/// The largest difference between the engine and candle on `text`, logits relative to the
/// largest logit when that exceeds 1.
fn compare(file: &RetrievalFile, net: &Net, text: &str) -> (f32, f32) {
    let tokens: Vec<String> = tokenize(text).into_iter().map(|t| t.text).collect();
    let engine = file.model.forward(&tokens).expect("the engine runs");
    let encoder = Encoder::new(file.model.table.tokens());
    let ids = ids_tensor(&[encoder.ids(&tokens)], net.device()).unwrap();
    let f = net.forward(&ids).expect("candle runs");
    let logits: Vec<f32> = f.logits.flatten_all().unwrap().to_vec1().unwrap();
    let scale = logits.iter().fold(1f32, |m, v| m.max(v.abs()));
    let d_logits = logits
        .iter()
        .zip(&engine.logits)
        .map(|(a, b)| (a - b).abs() / scale)
        .fold(0f32, f32::max);
    let mut d_maps = 0f32;
    for (stages, maps) in engine.stages.iter().zip(&f.maps) {
        // candle: (heads, batch 1, L, L); the engine: (heads, L, L).
        let candle: Vec<f32> = maps.flatten_all().unwrap().to_vec1().unwrap();
        let ours = stages.final_maps();
        assert_eq!(ours.len(), candle.len(), "map sizes");
        for (a, b) in ours.iter().zip(&candle) {
            d_maps = d_maps.max((a - b).abs());
        }
    }
    (d_logits, d_maps)
}

#[test]
fn every_shipped_retrieval_model_runs_the_same_in_the_engine_and_in_candle() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("weights/retrieval")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "one retrieval model per mechanism");
    for path in files {
        let file = RetrievalFile::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let net = Net::from_file(&file).expect("candle takes the file");
        for text in texts() {
            let (dl, dm) = compare(&file, &net, &text);
            assert!(
                dl <= TOLERANCE && dm <= TOLERANCE,
                "{}: logits differ by {dl:e}, maps by {dm:e} on {text:?}",
                path.display()
            );
        }
    }
}

#[test]
fn a_fresh_model_of_every_mechanism_written_and_read_back_runs_the_same() {
    let vocab: Vec<String> = [
        "<unk>", "the", "room", "of", "anna", "is", "42", ".", "what", "?",
    ]
    .map(String::from)
    .to_vec();
    let classes: Vec<String> = ["other", "number", "own"].map(String::from).to_vec();
    let token_class: Vec<[u32; 2]> = (0..vocab.len())
        .map(|i| if i == 6 { [1, 2] } else { [0, 0] })
        .collect();
    let text = "the room of anna is 42 . what is the room of anna ?";
    for kind in Kind::ALL {
        let mut config = Config::new(kind, vocab.len());
        config.d_model = 16;
        config.classes = classes.len();
        let net = Net::new(config, token_class.clone(), 4).unwrap();
        let file = net
            .to_file(&vocab, &classes, serde_json::json!({}))
            .expect("a file");
        let back = RetrievalFile::from_bytes(&file.to_bytes()).expect("reads back");
        assert_eq!(back, file);
        let again = Net::from_file(&back).unwrap();
        for n in [&net, &again] {
            let (dl, dm) = compare(&back, n, text);
            assert!(
                dl <= TOLERANCE && dm <= TOLERANCE,
                "{}: logits {dl:e}, maps {dm:e}",
                kind.key()
            );
        }
        // Not vacuous: the logits are not all equal.
        let ids = ids_tensor(
            &[Encoder::new(&vocab).ids(&text.split(' ').map(String::from).collect::<Vec<_>>())],
            net.device(),
        )
        .unwrap();
        let l: Vec<f32> = net
            .forward(&ids)
            .unwrap()
            .logits
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        assert!(l.iter().any(|&v| (v - l[0]).abs() > 1e-3), "{}", kind.key());
    }
}
