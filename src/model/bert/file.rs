//! The BERT weights file: the project's container (`model::format`: magic, version, JSON
//! header, a blob of little-endian tensors with its FNV-1a hash) with a header of its own,
//! `"task": "bert"` and a version of that header's layout (docs/MODEL.md, "The BERT file").
//!
//! ```text
//! header  task "bert", version 1, name, source, d_model, layers, heads, intermediate,
//!         positions, type_vocab, layer_norm_eps, activation "gelu", pooling "mean",
//!         normalize "l2", tokenizer {clean_text, chinese_chars, strip_accents, lowercase,
//!         prefix, max_word_chars, unk, cls, sep, specials}, vocab, tensors, blob_fnv1a64
//! blob    embeddings.word f16 (vocab x d)  embeddings.position f16  embeddings.token_type f16
//!         embeddings.norm.weight, .bias f32
//!         layers.N.w_q  w_k  w_v  w_o f16 (d x d)  b_q b_k b_v b_o f32
//!         layers.N.attention_norm.weight, .bias  layers.N.w_in f16 (intermediate x d)  b_in
//!         layers.N.w_out f16 (d x intermediate)  b_out  layers.N.output_norm.weight, .bias
//! ```
//!
//! Matrices are half floats (float16 keeps every attention cell of the model within 0.002 of
//! float32, issue 19); vectors are `f32`. The header is written in one fixed order, so the same
//! parts give the same bytes.

use ndarray::Array2;
use serde_json::json;

use super::{attention_weights, BertConfig, BertParts, HalfTable, LayerParts, Norm};
use crate::model::format::{
    check_blob, container, f16_finite, open, task_of, BlobReader, BlobWriter, TensorEntry,
};
use crate::model::ModelError;
use crate::text::fnv1a_64;
use crate::text::wordpiece::{Normalization, WordPieceSettings};

/// The value of the header's `task`.
pub const BERT_TASK: &str = "bert";

/// The version of the BERT header's layout this build writes and reads.
pub const BERT_VERSION: u32 = 1;

/// The widest model a file may declare, and the most layers, heads and positions: far above
/// MiniLM's (384, 6, 12, 512), and every tensor is checked against the blob besides.
const MAX_WIDTH: usize = 4096;
const MAX_LAYERS: usize = 64;
const MAX_POSITIONS: usize = 8192;

/// The file's bytes.
pub(super) fn encode(p: &BertParts) -> Vec<u8> {
    let mut w = BlobWriter::default();
    let (rows, cols) = p.word.dim();
    w.f16_codes(
        "embeddings.word",
        vec![rows, cols],
        p.word.codes().iter().copied(),
    );
    matrix(&mut w, "embeddings.position", &p.position);
    matrix(&mut w, "embeddings.token_type", &p.token_type);
    norm(&mut w, "embeddings.norm", &p.embedding_norm);
    for (n, l) in p.layers.iter().enumerate() {
        let name = |s: &str| format!("layers.{n}.{s}");
        let a = &l.attention;
        for (s, m) in [
            ("w_q", &a.w_q),
            ("w_k", &a.w_k),
            ("w_v", &a.w_v),
            ("w_o", &a.w_o),
        ] {
            matrix(&mut w, &name(s), m);
        }
        let b = &a.biases;
        for (s, v) in [
            ("b_q", &b.b_q),
            ("b_k", &b.b_k),
            ("b_v", &b.b_v),
            ("b_o", &b.b_o),
        ] {
            let v = v.as_ref().map(|v| v.to_vec()).unwrap_or_default();
            w.vector(&name(s), &v);
        }
        norm(&mut w, &name("attention_norm"), &l.attention_norm);
        matrix(&mut w, &name("w_in"), &l.w_in);
        w.vector(&name("b_in"), &l.b_in);
        matrix(&mut w, &name("w_out"), &l.w_out);
        w.vector(&name("b_out"), &l.b_out);
        norm(&mut w, &name("output_norm"), &l.output_norm);
    }
    let c = &p.config;
    let t = &p.tokenizer;
    let n = t.normalization;
    // serde_json's `json!` keeps the keys in this order (no `preserve_order`: sorted), which is
    // all byte-reproducibility needs: one order, the same every time.
    let header = json!({
        "task": BERT_TASK,
        "version": BERT_VERSION,
        "name": p.name,
        "source": p.source,
        "d_model": c.d_model,
        "layers": c.layers,
        "heads": c.heads,
        "intermediate": c.intermediate,
        "positions": c.positions,
        "type_vocab": c.type_vocab,
        "layer_norm_eps": c.layer_norm_eps,
        "activation": "gelu",
        "pooling": "mean",
        "normalize": "l2",
        "tokenizer": {
            "clean_text": n.clean_text,
            "chinese_chars": n.chinese_chars,
            "strip_accents": n.strip_accents,
            "lowercase": n.lowercase,
            "prefix": t.prefix,
            "max_word_chars": t.max_word_chars,
            "unk": t.unk,
            "cls": t.cls,
            "sep": t.sep,
            "specials": t.specials,
        },
        "vocab": p.vocab,
        "tensors": w.entries,
        "blob_fnv1a64": format!("{:016x}", fnv1a_64(&w.blob)),
    });
    let json = serde_json::to_vec(&header).expect("a header of strings and numbers serialises");
    container(&json, &w.blob)
}

fn matrix(w: &mut BlobWriter, name: &str, m: &Array2<f32>) {
    w.f16(name, vec![m.nrows(), m.ncols()], m.iter().copied());
}

fn norm(w: &mut BlobWriter, name: &str, n: &Norm) {
    w.vector(&format!("{name}.weight"), &n.weight);
    w.vector(&format!("{name}.bias"), &n.bias);
}

/// The header as written, read by serde's derive: strict (no unknown field, none missing);
/// its values are checked in [`read_header`].
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    #[allow(dead_code)]
    task: String,
    version: u32,
    name: String,
    source: String,
    d_model: usize,
    layers: usize,
    heads: usize,
    intermediate: usize,
    positions: usize,
    type_vocab: usize,
    layer_norm_eps: f64,
    activation: String,
    pooling: String,
    normalize: String,
    tokenizer: RawTokenizer,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    blob_fnv1a64: String,
}

/// The header's `tokenizer`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTokenizer {
    clean_text: bool,
    chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    prefix: String,
    max_word_chars: usize,
    unk: String,
    cls: String,
    sep: String,
    specials: Vec<String>,
}

/// The header's fields, checked.
struct Header {
    name: String,
    source: String,
    config: BertConfig,
    tokenizer: WordPieceSettings,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    blob_fnv1a64: String,
}

/// Reads the header's bytes: its task first (a file of another kind gets its own message), then
/// the fields, each value checked.
fn read_header(bytes: &[u8]) -> Result<Header, String> {
    match task_of(bytes).map_err(|e| e.to_string())?.as_deref() {
        Some(BERT_TASK) => {}
        Some(other) => {
            return Err(format!(
                "task {other:?}: not a BERT model file (its task is \"{BERT_TASK}\")"
            ))
        }
        None => return Err("no \"task\": not a BERT model file (a sentiment classifier?)".into()),
    }
    // The version before the rest: a file of another version may have other fields.
    #[derive(serde::Deserialize)]
    struct Version {
        version: Option<serde_json::Value>,
    }
    let version: Version = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    match version.version.as_ref().and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(BERT_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "BERT file version {v}; this build reads version {BERT_VERSION} \
                 (rebuild the file with scripts/fetch-model)"
            ))
        }
        None => return Err("version: expected the header's version, an integer".into()),
    }
    let h: RawHeader = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    debug_assert_eq!(h.version, BERT_VERSION);
    let fixed = |key: &str, v: &str, want: &str| -> Result<(), String> {
        if v == want {
            Ok(())
        } else {
            Err(format!("{key} {v:?}; this build computes {want:?}"))
        }
    };
    let size = |key: &str, v: usize, max: usize| -> Result<usize, String> {
        if v == 0 || v > max {
            return Err(format!("{key} {v}; expected 1 to {max}"));
        }
        Ok(v)
    };
    let eps = h.layer_norm_eps as f32;
    if !(eps > 0.0 && eps.is_finite()) {
        return Err(format!(
            "layer_norm_eps {}; expected a positive number",
            h.layer_norm_eps
        ));
    }
    let config = BertConfig {
        d_model: size("d_model", h.d_model, MAX_WIDTH)?,
        layers: size("layers", h.layers, MAX_LAYERS)?,
        heads: size("heads", h.heads, MAX_WIDTH)?,
        intermediate: size("intermediate", h.intermediate, 4 * MAX_WIDTH)?,
        positions: size("positions", h.positions, MAX_POSITIONS)?,
        type_vocab: size("type_vocab", h.type_vocab, MAX_POSITIONS)?,
        layer_norm_eps: eps,
    };
    fixed("activation", &h.activation, "gelu")?;
    fixed("pooling", &h.pooling, "mean")?;
    fixed("normalize", &h.normalize, "l2")?;
    let t = h.tokenizer;
    let tokenizer = WordPieceSettings {
        normalization: Normalization {
            clean_text: t.clean_text,
            chinese_chars: t.chinese_chars,
            strip_accents: t.strip_accents,
            lowercase: t.lowercase,
        },
        prefix: t.prefix,
        max_word_chars: t.max_word_chars,
        unk: t.unk,
        cls: t.cls,
        sep: t.sep,
        specials: t.specials,
    };
    Ok(Header {
        name: h.name,
        source: h.source,
        config,
        tokenizer,
        vocab: h.vocab,
        tensors: h.tensors,
        blob_fnv1a64: h.blob_fnv1a64,
    })
}

/// Reads a BERT file into its parts, every check on the way: the container, the header, the
/// blob's extent and hash, each tensor's dtype and shape, every value finite.
pub(super) fn decode(bytes: &[u8]) -> Result<BertParts, ModelError> {
    let (header_bytes, blob) = open(bytes)?;
    let h = read_header(header_bytes).map_err(ModelError::Header)?;
    check_blob(
        &h.tensors,
        blob,
        &h.blob_fnv1a64,
        16 + header_bytes.len(),
        bytes.len(),
    )?;
    let r = BlobReader {
        tensors: &h.tensors,
        blob,
    };
    let c = h.config;
    let (codes, shape) = r.f16_codes("embeddings.word")?;
    let word = match shape[..] {
        [rows, cols] => HalfTable::from_codes(codes, rows, cols),
        _ => None,
    }
    .ok_or_else(|| {
        ModelError::Invalid(format!(
            "embeddings.word: expected a matrix, found shape {shape:?}"
        ))
    })?;
    let norm = |name: &str| -> Result<Norm, ModelError> {
        Ok(Norm {
            weight: r.vector(&format!("{name}.weight"))?,
            bias: r.vector(&format!("{name}.bias"))?,
        })
    };
    let mut layers = Vec::with_capacity(c.layers);
    for n in 0..c.layers {
        let name = |s: &str| format!("layers.{n}.{s}");
        let m = |s: &str| r.f16_matrix(&name(s));
        let v = |s: &str| r.vector(&name(s));
        let attention = attention_weights(
            [m("w_q")?, m("w_k")?, m("w_v")?, m("w_o")?],
            [v("b_q")?, v("b_k")?, v("b_v")?, v("b_o")?],
        )
        .map_err(|e| ModelError::Invalid(format!("layers.{n}: {e}")))?;
        layers.push(LayerParts {
            attention,
            attention_norm: norm(&name("attention_norm"))?,
            w_in: m("w_in")?,
            b_in: v("b_in")?,
            w_out: m("w_out")?,
            b_out: v("b_out")?,
            output_norm: norm(&name("output_norm"))?,
        });
    }
    Ok(BertParts {
        name: h.name,
        source: h.source,
        config: c,
        vocab: h.vocab,
        tokenizer: h.tokenizer,
        word,
        position: r.f16_matrix("embeddings.position")?,
        token_type: r.f16_matrix("embeddings.token_type")?,
        embedding_norm: norm("embeddings.norm")?,
        layers,
    })
}

/// Checks that the parts fit the sizes (each tensor's shape, the heads dividing `d`, one row of
/// words per token) and that every value is finite.
pub(super) fn check_parts(p: &BertParts) -> Result<(), ModelError> {
    let c = &p.config;
    let d = c.d_model;
    let bad = |s: String| Err(ModelError::Invalid(s));
    if c.heads == 0 || d % c.heads != 0 {
        return bad(format!("{} heads do not divide d_model {d}", c.heads));
    }
    if c.layers != p.layers.len() {
        return bad(format!("{} layers for layers {}", p.layers.len(), c.layers));
    }
    if p.word.dim() != (p.vocab.len(), d) {
        return bad(format!(
            "embeddings.word: {:?} for {} tokens x d_model {d}",
            p.word.dim(),
            p.vocab.len()
        ));
    }
    if let Some(i) = p.word.codes().iter().position(|&c| !f16_finite(c)) {
        return bad(format!(
            "embeddings.word[{i}]: not finite (every parameter must be finite)"
        ));
    }
    let shape = |name: &str, m: &Array2<f32>, want: (usize, usize)| match m.dim() == want {
        true => finite(name, m.iter()),
        false => bad(format!("{name}: shape {:?}, expected {want:?}", m.dim())),
    };
    let length = |name: &str, v: &[f32], want: usize| match v.len() == want {
        true => finite(name, v.iter()),
        false => bad(format!("{name}: {} values, expected {want}", v.len())),
    };
    shape("embeddings.position", &p.position, (c.positions, d))?;
    shape("embeddings.token_type", &p.token_type, (c.type_vocab, d))?;
    length("embeddings.norm.weight", &p.embedding_norm.weight, d)?;
    length("embeddings.norm.bias", &p.embedding_norm.bias, d)?;
    for (n, l) in p.layers.iter().enumerate() {
        let name = |s: &str| format!("layers.{n}.{s}");
        let a = &l.attention;
        for (s, m) in [
            ("w_q", &a.w_q),
            ("w_k", &a.w_k),
            ("w_v", &a.w_v),
            ("w_o", &a.w_o),
        ] {
            shape(&name(s), m, (d, d))?;
        }
        let b = &a.biases;
        for (s, v) in [
            ("b_q", &b.b_q),
            ("b_k", &b.b_k),
            ("b_v", &b.b_v),
            ("b_o", &b.b_o),
        ] {
            match v {
                Some(v) => length(&name(s), v.as_slice().unwrap_or(&[]), d)?,
                None => return bad(format!("{} is missing", name(s))),
            }
        }
        for (s, norm) in [
            ("attention_norm", &l.attention_norm),
            ("output_norm", &l.output_norm),
        ] {
            length(&name(&format!("{s}.weight")), &norm.weight, d)?;
            length(&name(&format!("{s}.bias")), &norm.bias, d)?;
        }
        shape(&name("w_in"), &l.w_in, (c.intermediate, d))?;
        length(&name("b_in"), &l.b_in, c.intermediate)?;
        shape(&name("w_out"), &l.w_out, (d, c.intermediate))?;
        length(&name("b_out"), &l.b_out, d)?;
    }
    Ok(())
}

fn finite<'a>(name: &str, mut values: impl Iterator<Item = &'a f32>) -> Result<(), ModelError> {
    match values.position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(ModelError::Invalid(format!(
            "{name}[{i}]: not finite (every parameter must be finite)"
        ))),
    }
}
