//! The retrieval models' weights file (docs/LESSON.md, "The weights"): the container of
//! `model::format` (magic, version, JSON header, a blob of little-endian tensors with its
//! FNV-1a hash) with a header of its own, `"task": "retrieval"`.
//!
//! A token's vector is its identity, a seeded normal vector that training never changes, plus
//! the learned vectors of its two classes (a name, a noun, a number, one of the task's words, or
//! anything else; and each number's own). So the file stores the seed of the identities, not the
//! identities: `seeded_normal(vocab, d, seed, 1)` gives the same bits on every platform, and
//! an 8,000-token vocabulary costs its words and two bytes a token.
//!
//! ```text
//! header  task "retrieval", d_model, positions "none", answers 100, identity {seed, std},
//!         classes [names], layers [{mechanism, heads, window | shift... | depth}], vocab,
//!         tensors, blob_fnv1a64, info
//! blob    class_vectors (classes x d)  token_class i8 (vocab x 2)
//!         layers.N.w_q  w_k  w_v  w_o  [gate.alpha gate.beta gate.gamma]
//!         [lambda_q1 lambda_k1 lambda_q2 lambda_k2 subln]  [w_lambda]
//!         readout.weight (100 x d)  readout.bias (100)
//! ```

use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use super::format::{check_blob, container, open, task_of, BlobReader, BlobWriter, TensorEntry};
use super::{ModelError, TokenTable};
use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::{Gate, ShiftDiffParams};
use crate::engine::{Mechanism, MechanismKind, Weights};
use crate::names::{name_of, parse};
use crate::retrieval::task::ANSWERS;
use crate::retrieval::{Layer, RetrievalModel};
use crate::text::{fnv1a_64, seeded_normal};

/// The value of the header's `task`.
pub const RETRIEVAL_TASK: &str = "retrieval";

/// How the token vectors are made: identity plus two classes.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenParts {
    /// The vocabulary, `<unk>` first.
    pub vocab: Vec<String>,
    /// The seed of the identities, `seeded_normal(vocab, d, seed, identity_std)`.
    pub identity_seed: u64,
    /// Their standard deviation.
    pub identity_std: f32,
    /// The class names.
    pub classes: Vec<String>,
    /// The learned vector of each class, `(classes, d)`.
    pub class_vectors: Array2<f32>,
    /// The two classes of each token.
    pub token_class: Vec<[u8; 2]>,
}

impl TokenParts {
    /// The identities, `(vocab, d)`.
    pub fn identities(&self) -> Array2<f32> {
        seeded_normal(
            self.vocab.len(),
            self.class_vectors.ncols(),
            self.identity_seed,
            self.identity_std,
        )
    }

    /// The token table the engine reads: each row its identity plus its first class's vector
    /// plus its second's, added in that order (as the trainer adds them).
    pub fn table(&self) -> Result<TokenTable, ModelError> {
        let n = self.class_vectors.nrows();
        if self.token_class.len() != self.vocab.len() {
            return Err(ModelError::Invalid(format!(
                "token_class: {} rows for {} tokens",
                self.token_class.len(),
                self.vocab.len()
            )));
        }
        if let Some(c) = self
            .token_class
            .iter()
            .flatten()
            .find(|&&c| usize::from(c) >= n)
        {
            return Err(ModelError::Invalid(format!(
                "token_class: class {c} of {n} classes"
            )));
        }
        if self.classes.len() != n {
            return Err(ModelError::Invalid(format!(
                "classes: {} names for {n} class vectors",
                self.classes.len()
            )));
        }
        let mut t = self.identities();
        for (mut row, c) in t.rows_mut().into_iter().zip(&self.token_class) {
            row += &self.class_vectors.row(usize::from(c[0]));
            row += &self.class_vectors.row(usize::from(c[1]));
        }
        TokenTable::new(self.vocab.clone(), t)
    }
}

/// A retrieval model with the parts of its token table, and what training recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalFile {
    /// How its token vectors are made.
    pub tokens: TokenParts,
    /// The model (its table is `tokens.table()`).
    pub model: RetrievalModel,
    /// Free-form training record (seed, steps, held-out scores, the command).
    pub info: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Identity {
    seed: u64,
    std: f32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LayerHeader {
    mechanism: String,
    heads: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shift: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    difference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fill: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    renormalize: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    depth: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    task: String,
    d_model: usize,
    /// Always `"none"`: no positional code is added.
    positions: String,
    answers: usize,
    identity: Identity,
    classes: Vec<String>,
    layers: Vec<LayerHeader>,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    blob_fnv1a64: String,
    #[serde(default)]
    info: serde_json::Value,
}

impl RetrievalFile {
    /// Checks the parts and builds the model: the table from `tokens`, then
    /// [`RetrievalModel::new`]'s checks.
    pub fn new(
        tokens: TokenParts,
        layers: Vec<Layer>,
        readout: Array2<f32>,
        readout_bias: Array1<f32>,
        info: serde_json::Value,
    ) -> Result<RetrievalFile, ModelError> {
        let table = tokens.table()?;
        let model = RetrievalModel::new(table, layers, readout, readout_bias)
            .map_err(|e| ModelError::Invalid(e.to_string()))?;
        let all_finite = model.layers.iter().all(|l| {
            [
                &l.weights.w_q,
                &l.weights.w_k,
                &l.weights.w_v,
                &l.weights.w_o,
            ]
            .iter()
            .all(|w| w.iter().all(|v| v.is_finite()))
        }) && model.readout.iter().all(|v| v.is_finite())
            && model.readout_bias.iter().all(|v| v.is_finite())
            && model.table.vectors.iter().all(|v| v.is_finite());
        if !all_finite {
            return Err(ModelError::Invalid(
                "not every value of the model is finite".to_string(),
            ));
        }
        Ok(RetrievalFile {
            tokens,
            model,
            info,
        })
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = BlobWriter::default();
        let t = &self.tokens;
        w.matrix("class_vectors", &t.class_vectors);
        w.i8(
            "token_class",
            vec![t.token_class.len(), 2],
            t.token_class.iter().flatten().map(|&c| c as i8),
        );
        let mut layers = Vec::new();
        for (n, l) in self.model.layers.iter().enumerate() {
            let p = |s: &str| format!("layers.{n}.{s}");
            w.matrix(&p("w_q"), &l.weights.w_q);
            w.matrix(&p("w_k"), &l.weights.w_k);
            w.matrix(&p("w_v"), &l.weights.w_v);
            w.matrix(&p("w_o"), &l.weights.w_o);
            let mut h = LayerHeader {
                mechanism: l.mechanism.name().to_string(),
                heads: l.heads,
                window: None,
                shift: None,
                difference: None,
                fill: None,
                renormalize: None,
                depth: None,
            };
            match &l.mechanism {
                Mechanism::Local { window } => h.window = Some(*window),
                Mechanism::ShiftDiff(s) => {
                    h.shift = Some(s.shift);
                    h.difference = Some(name_of(s.difference).to_string());
                    h.fill = Some(name_of(s.fill).to_string());
                    h.renormalize = Some(name_of(s.renormalize).to_string());
                    w.vector(&p("gate.alpha"), &s.gate.alpha);
                    w.vector(&p("gate.beta"), &s.gate.beta);
                    w.vector(&p("gate.gamma"), &s.gate.gamma);
                }
                Mechanism::DiffTransformer(d) => {
                    h.depth = Some(d.depth);
                    w.vector(&p("lambda_q1"), &d.lambda_q1);
                    w.vector(&p("lambda_k1"), &d.lambda_k1);
                    w.vector(&p("lambda_q2"), &d.lambda_q2);
                    w.vector(&p("lambda_k2"), &d.lambda_k2);
                    w.vector(&p("subln"), &d.subln);
                }
                _ => {}
            }
            if let Some(l) = &l.weights.w_lambda {
                w.matrix(&p("w_lambda"), l);
            }
            layers.push(h);
        }
        w.matrix("readout.weight", &self.model.readout);
        w.vector(
            "readout.bias",
            &self.model.readout_bias.iter().copied().collect::<Vec<_>>(),
        );
        let header = Header {
            task: RETRIEVAL_TASK.to_string(),
            d_model: self.model.d_model(),
            positions: "none".to_string(),
            answers: ANSWERS,
            identity: Identity {
                seed: t.identity_seed,
                std: t.identity_std,
            },
            classes: t.classes.clone(),
            layers,
            vocab: t.vocab.clone(),
            blob_fnv1a64: format!("{:016x}", fnv1a_64(&w.blob)),
            tensors: w.entries,
            info: self.info.clone(),
        };
        let json = serde_json::to_vec(&header).expect("a header of strings and numbers serialises");
        container(&json, &w.blob)
    }

    /// Reads and checks a retrieval weights file.
    pub fn from_bytes(bytes: &[u8]) -> Result<RetrievalFile, ModelError> {
        let (header_bytes, blob) = open(bytes)?;
        if task_of(header_bytes)?.as_deref() != Some(RETRIEVAL_TASK) {
            return Err(ModelError::Header(
                "not a retrieval model (no \"task\": \"retrieval\"; a sentiment classifier?)"
                    .to_string(),
            ));
        }
        // Read from the bytes, as every header is (one reader compiled for both, not a second
        // one over a parsed `serde_json::Value`).
        let header: Header =
            serde_json::from_slice(header_bytes).map_err(|e| ModelError::Header(e.to_string()))?;
        check_blob(
            &header.tensors,
            blob,
            &header.blob_fnv1a64,
            16 + header_bytes.len(),
            bytes.len(),
        )?;
        if header.positions != "none" {
            return Err(ModelError::Header(format!(
                "positions {:?}; retrieval models have \"none\"",
                header.positions
            )));
        }
        if header.answers != ANSWERS {
            return Err(ModelError::Header(format!(
                "answers {}; expected {ANSWERS}",
                header.answers
            )));
        }
        let r = BlobReader {
            tensors: &header.tensors,
            blob,
        };
        let class_vectors = r.matrix("class_vectors")?;
        if class_vectors.ncols() != header.d_model {
            return Err(ModelError::Invalid(format!(
                "class_vectors: width {} but d_model is {}",
                class_vectors.ncols(),
                header.d_model
            )));
        }
        let (codes, shape) = r.bytes("token_class", "i8")?;
        if shape != [header.vocab.len(), 2] {
            return Err(ModelError::Invalid(format!(
                "token_class: shape {shape:?} for {} tokens",
                header.vocab.len()
            )));
        }
        let token_class = codes.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
        let tokens = TokenParts {
            vocab: header.vocab.clone(),
            identity_seed: header.identity.seed,
            identity_std: header.identity.std,
            classes: header.classes.clone(),
            class_vectors,
            token_class,
        };
        let mut layers = Vec::new();
        for (n, h) in header.layers.iter().enumerate() {
            let p = |s: &str| format!("layers.{n}.{s}");
            let missing = |what: &str| ModelError::Header(format!("layers[{n}].{what} is missing"));
            let kind = parse::<MechanismKind>("mechanism", &h.mechanism)
                .map_err(|e| ModelError::Header(e.to_string()))?;
            let w_lambda = if r.has(&p("w_lambda")) {
                Some(r.matrix(&p("w_lambda"))?)
            } else {
                None
            };
            let weights = Weights::real(
                r.matrix(&p("w_q"))?,
                r.matrix(&p("w_k"))?,
                r.matrix(&p("w_v"))?,
                r.matrix(&p("w_o"))?,
                Default::default(),
                w_lambda,
                Default::default(),
            )?;
            let name = |field: &str, v: &Option<String>| -> Result<String, ModelError> {
                v.clone().ok_or_else(|| missing(field))
            };
            let mechanism = match kind {
                MechanismKind::Standard => Mechanism::Standard,
                MechanismKind::Local => Mechanism::Local {
                    window: h.window.ok_or_else(|| missing("window"))?,
                },
                MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 { lambda: None },
                MechanismKind::ShiftDiff => Mechanism::ShiftDiff(ShiftDiffParams {
                    shift: h.shift.ok_or_else(|| missing("shift"))?,
                    difference: parse("difference", &name("difference", &h.difference)?)
                        .map_err(|e| ModelError::Header(e.to_string()))?,
                    fill: parse("fill", &name("fill", &h.fill)?)
                        .map_err(|e| ModelError::Header(e.to_string()))?,
                    renormalize: parse("renormalize", &name("renormalize", &h.renormalize)?)
                        .map_err(|e| ModelError::Header(e.to_string()))?,
                    gate: Gate {
                        alpha: r.vector(&p("gate.alpha"))?,
                        beta: r.vector(&p("gate.beta"))?,
                        gamma: r.vector(&p("gate.gamma"))?,
                    },
                }),
                MechanismKind::DiffTransformer => {
                    Mechanism::DiffTransformer(DiffTransformerParams {
                        depth: h.depth.ok_or_else(|| missing("depth"))?,
                        lambda_q1: r.vector(&p("lambda_q1"))?,
                        lambda_k1: r.vector(&p("lambda_k1"))?,
                        lambda_q2: r.vector(&p("lambda_q2"))?,
                        lambda_k2: r.vector(&p("lambda_k2"))?,
                        subln: r.vector(&p("subln"))?,
                        ..Default::default()
                    })
                }
                other => {
                    return Err(ModelError::Header(format!(
                        "layers[{n}]: no retrieval model uses {}",
                        other.key()
                    )))
                }
            };
            layers.push(Layer {
                weights,
                mechanism,
                heads: h.heads,
            });
        }
        let readout = r.matrix("readout.weight")?;
        let readout_bias = Array1::from(r.vector("readout.bias")?);
        RetrievalFile::new(tokens, layers, readout, readout_bias, header.info.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UNKNOWN_TOKEN;
    use crate::text::seeded_normal_vec;

    /// A two-layer model of width 8 with seeded weights: a local binding layer and a
    /// shift-difference layer (the mechanism with the most parameters in the header).
    fn file() -> RetrievalFile {
        let d = 8;
        let vocab: Vec<String> = [UNKNOWN_TOKEN, "the", "?", "7"].map(String::from).to_vec();
        let tokens = TokenParts {
            vocab,
            identity_seed: 5,
            identity_std: 1.0,
            classes: ["other", "number", "seven"].map(String::from).to_vec(),
            class_vectors: seeded_normal(3, d, 6, 1.0),
            token_class: vec![[0, 0], [0, 0], [0, 0], [1, 2]],
        };
        let w = |s: u64| seeded_normal(d, d, s, 0.3);
        let layer = |s: u64, mechanism: Mechanism, heads: usize| Layer {
            weights: Weights::new(w(s), w(s + 1), w(s + 2), w(s + 3)).unwrap(),
            mechanism,
            heads,
        };
        let shift = Mechanism::ShiftDiff(ShiftDiffParams {
            shift: 1,
            difference: crate::engine::shift_diff::Difference::Single,
            fill: crate::engine::shift_diff::ShiftFill::Circular,
            renormalize: crate::engine::shift_diff::Renormalize::None,
            gate: Gate {
                alpha: seeded_normal_vec(2, 9, 1.0),
                beta: seeded_normal_vec(2, 10, 1.0),
                gamma: seeded_normal_vec(2, 11, 1.0),
            },
        });
        RetrievalFile::new(
            tokens,
            vec![
                layer(20, Mechanism::Local { window: 4 }, 1),
                layer(30, shift, 2),
            ],
            seeded_normal(ANSWERS, d, 40, 0.3),
            Array1::from(seeded_normal_vec(ANSWERS, 41, 0.1)),
            serde_json::json!({ "seed": 1 }),
        )
        .unwrap()
    }

    #[test]
    fn a_file_reads_back_to_the_same_model_and_the_same_answers() {
        let f = file();
        let bytes = f.to_bytes();
        let back = RetrievalFile::from_bytes(&bytes).unwrap();
        assert_eq!(back, f);
        let tokens = ["the", "7", "?"];
        let (a, b) = (
            f.model.forward(&tokens).unwrap(),
            back.model.forward(&tokens).unwrap(),
        );
        assert_eq!(a.logits, b.logits);
    }

    #[test]
    fn the_table_is_the_identity_plus_both_classes() {
        let f = file();
        let id = f.tokens.identities();
        let row = f.model.table.vectors.row(3);
        for c in 0..8 {
            let want = id[[3, c]] + f.tokens.class_vectors[[1, c]] + f.tokens.class_vectors[[2, c]];
            assert_eq!(row[c], want);
        }
        // "the" reads its identity plus "other" twice.
        let want = id[[1, 0]] + f.tokens.class_vectors[[0, 0]] + f.tokens.class_vectors[[0, 0]];
        assert_eq!(f.model.table.vectors[[1, 0]], want);
    }

    #[test]
    fn a_flipped_bit_a_sentiment_file_and_a_bad_class_are_errors() {
        let f = file();
        let mut bytes = f.to_bytes();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(matches!(
            RetrievalFile::from_bytes(&bytes),
            Err(ModelError::Corrupt { .. })
        ));
        let sentiment = crate::model::Model::untrained();
        assert!(sentiment.to_bytes(crate::model::Quantization::F32).is_err());
        let mut t = f.tokens.clone();
        t.token_class[1] = [0, 3];
        assert!(matches!(t.table(), Err(ModelError::Invalid(_))));
        // The sentiment reader names what a retrieval file is.
        let e = crate::model::Model::from_bytes(&f.to_bytes()).unwrap_err();
        assert!(e.to_string().contains("retrieval"), "{e}");
    }
}
