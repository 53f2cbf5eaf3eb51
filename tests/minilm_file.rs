//! The BERT weights file (src/model/bert/file.rs) on a small seeded BERT, no model needed: the
//! same parts give the same bytes and read back to the same model; a file cut short, corrupted,
//! of another version or of another model is a clear error, never a panic; a weight a half float
//! cannot hold is refused when converting; and `diffattn encode` keeps its contract.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

use diffattn::model::bert::{Bert, BertConfig, BertParts, BERT_VERSION};
use diffattn::model::{Model, ModelError, FORMAT_VERSION};

fn vocab() -> Vec<String> {
    let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .map(String::from)
        .to_vec();
    v.extend(
        [
            "the", "cat", "sat", "on", "mat", "##s", ".", "a", "##t", "c",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    v
}

fn small(positions: usize) -> BertParts {
    let config = BertConfig {
        d_model: 8,
        layers: 2,
        heads: 2,
        intermediate: 16,
        positions,
        type_vocab: 2,
        layer_norm_eps: 1e-12,
    };
    BertParts::seeded(vocab(), config, 7)
}

fn bytes() -> Vec<u8> {
    Bert::new(small(16)).unwrap().to_bytes()
}

#[test]
fn the_same_parts_give_the_same_bytes_and_read_back_to_the_same_model() {
    let a = Bert::new(small(16)).unwrap();
    let b = Bert::new(small(16)).unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
    let read = Bert::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(read.parts(), a.parts());
    assert_eq!(read.to_bytes(), a.to_bytes());
    // And it computes what the converted model computes, bit for bit.
    let text = "The cats sat on a mat.";
    assert_eq!(
        read.encode(text, true).unwrap(),
        a.encode(text, true).unwrap()
    );
}

#[test]
fn every_cut_of_the_file_is_a_clear_error() {
    let bytes = bytes();
    // Every length up to the header's end, then a sample through the blob.
    let header_end = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let cuts = (0..header_end + 8).chain((header_end..bytes.len()).step_by(97));
    for n in cuts {
        let e = Bert::from_bytes(&bytes[..n]).unwrap_err();
        let message = e.to_string();
        let fits = match &e {
            ModelError::Truncated { .. } => message.contains("truncated"),
            ModelError::Header(_) => n < header_end, // a header cut inside its JSON
            _ => false,
        };
        assert!(fits, "cut at {n} of {}: {message}", bytes.len());
    }
}

#[test]
fn a_flipped_bit_of_the_tensors_is_named_corrupt() {
    let mut bytes = bytes();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x10;
    let e = Bert::from_bytes(&bytes).unwrap_err();
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("corrupt"), "{e}");
}

#[test]
fn another_version_is_named_with_the_one_this_build_reads() {
    let mut bytes = bytes();
    bytes[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = Bert::from_bytes(&bytes).unwrap_err();
    assert_eq!(e, ModelError::UnsupportedVersion(FORMAT_VERSION + 1));

    // The BERT header's own version: same length, so the container still frames it.
    let bytes = self::bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let from = format!("\"version\":{BERT_VERSION}");
    assert!(text.contains(&from));
    let changed = text.replacen(&from, &format!("\"version\":{}", BERT_VERSION + 1), 1);
    let e = Bert::from_bytes(changed.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("version {}", BERT_VERSION + 1)) && e.contains("fetch-model"),
        "{e}"
    );
}

#[test]
fn another_models_file_is_named_as_such() {
    let root = env!("CARGO_MANIFEST_DIR");
    let sentiment = std::fs::read(format!("{root}/weights/standard.bin")).unwrap();
    let e = Bert::from_bytes(&sentiment).unwrap_err().to_string();
    assert!(e.contains("not a BERT model file"), "{e}");
    let retrieval = std::fs::read(format!("{root}/weights/retrieval/standard.bin")).unwrap();
    let e = Bert::from_bytes(&retrieval).unwrap_err().to_string();
    assert!(
        e.contains("\"retrieval\"") && e.contains("not a BERT"),
        "{e}"
    );
    let e = Bert::from_bytes(b"PK\x03\x04 a zip").unwrap_err();
    assert_eq!(e, ModelError::NotWeights);
    // And the other way round: the sentiment reader refuses a BERT file.
    assert!(Model::from_bytes(&bytes()).is_err());
}

#[test]
fn a_weight_no_half_float_holds_is_refused() {
    let mut parts = small(16);
    parts.layers[1].w_in[[3, 5]] = 1e6; // past 65,504, the largest half float
    let e = Bert::new(parts).unwrap_err().to_string();
    assert!(e.contains("layers.1.w_in") && e.contains("finite"), "{e}");
}

#[test]
fn the_forward_runs_at_every_position_and_a_longer_text_is_cut() {
    let bert = Bert::new(small(512)).unwrap();
    let text = "the cat sat on the mat . ".repeat(100);
    let e = bert.encode(&text, false).unwrap();
    assert_eq!(e.pieces.ids.len(), 512);
    assert!(e.pieces.truncated);
    let norm: f32 = e.forward.embedding.iter().map(|v| v * v).sum();
    assert!((norm - 1.0).abs() < 1e-5, "normalised: {norm}");
    let ids = vec![2u32; 513];
    let e = bert.forward(&ids, false).unwrap_err().to_string();
    assert!(e.contains("513 word pieces") && e.contains("512"), "{e}");
    assert!(
        bert.forward(&[2, 99, 3], false).is_err(),
        "an id past the vocabulary"
    );
}

#[test]
fn encode_prints_the_contracts_fields() {
    let dir = std::env::temp_dir().join(format!("diffattn-encode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("small.bin");
    std::fs::write(&file, bytes()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(["encode", "--attentions", "--model"])
        .arg(&file)
        .arg("The cats sat.")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tokens: Vec<&str> = v["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tokens, ["[CLS]", "the", "cat", "##s", "sat", ".", "[SEP]"]);
    assert_eq!(v["embedding"].as_array().unwrap().len(), 8);
    let a = v["attentions"].as_array().unwrap();
    assert_eq!(a.len(), 2, "layers");
    assert_eq!(a[1].as_array().unwrap().len(), 2, "heads");
    let row = a[1][0][3].as_array().unwrap();
    assert_eq!(row.len(), 7, "keys");
    let sum: f64 = row.iter().map(|x| x.as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-5, "a softmax row: {sum}");
    // Without --attentions: only the two fields.
    let out = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(["encode", "--model"])
        .arg(&file)
        .arg("a cat")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 2);
    // A broken file: status 2 and a message naming the file.
    std::fs::write(&file, &bytes()[..100]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(["encode", "--model"])
        .arg(&file)
        .arg("a cat")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("small.bin") && err.contains("truncated"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_layer_in_pieces_has_the_bits_of_the_whole_layer_and_the_layers_those_of_the_forward_pass() {
    use ndarray::{s, Array2};
    let bert = Bert::new(small(16)).unwrap();
    let ids: Vec<u32> = (0..11).map(|i| (i * 3 % 9) as u32).collect();
    let forward = bert.forward(&ids, true).unwrap();
    let mut x = bert.embeddings(&ids).unwrap();
    assert_eq!(x, forward.layers[0].input);
    for n in 0..2 {
        let whole = bert.run_layer(n, x.clone()).unwrap();
        // The attention half, then the feed-forward in blocks of 4, 4 and 3 rows.
        let h = bert.attention_half(n, x.clone()).unwrap();
        let mut out = Array2::<f32>::zeros(h.dim());
        for start in (0..h.nrows()).step_by(4) {
            let rows = start..(start + 4).min(h.nrows());
            let block = bert
                .feed_forward_rows(n, h.slice(s![rows.clone(), ..]))
                .unwrap();
            out.slice_mut(s![rows, ..]).assign(&block);
        }
        assert_eq!(out, whole, "layer {}: the same bits in pieces", n + 1);
        x = whole;
        if n + 1 < 2 {
            assert_eq!(x, forward.layers[n + 1].input);
        }
    }
    assert_eq!(x, forward.hidden);
    assert_eq!(Bert::pool(&x), forward.embedding);
    // The wrong width or a layer the model has not: errors that say so.
    let e = bert.run_layer(2, x.clone()).unwrap_err().to_string();
    assert!(e.contains("layer 3; this model has 2"), "{e}");
    let e = bert
        .attention_half(0, Array2::zeros((3, 5)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("width 5"), "{e}");
    let e = bert
        .finish_layer(0, x.clone(), Array2::zeros((2, 8)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("attention output"), "{e}");
}
