//! The sentiment classifier's JSON header (`Header`: settings, vocabulary, tensor table, the
//! blob's hash), and the whole file written (`encode`) and read back into its parts (`decode`).

use ndarray::Array1;
#[cfg(test)]
use serde::Deserialize;
use serde::Serialize;

use super::blob::{check_blob, quantize_rows, BlobReader, BlobWriter, TensorEntry};
use super::{container, open, ModelError, Quantization};
use crate::engine::bilstm::{BiLstm, LstmWeights};
use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams};
use crate::engine::{Mechanism, MechanismKind, Weights};
use crate::model::json::{self, Fields, Json};
use crate::model::{Pooling, TokenTable, Trained};
use crate::names::{name_of, parse, Named};
use crate::text::fnv1a_64;
use crate::text::limits::MAX_D_MODEL;

/// The JSON header, written with serde and read with [`json`] (so the first view's wasm has
/// no JSON deserializer: [`Header::read`]). The tests read it with serde's derive too, the
/// reader it had before, and check that the two agree.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(Deserialize), serde(deny_unknown_fields))]
struct Header {
    mechanism: String,
    d_model: usize,
    heads: usize,
    /// Always `"sinusoidal"` (Vaswani et al. 2017, §3.5), added to the token vectors.
    positions: String,
    pooling: String,
    labels: Vec<String>,
    /// `"f32"` or `"int8_rows"`: how `embedding` is stored.
    quantization: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    shift: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    difference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    fill: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    renormalize: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    window: Option<usize>,
    /// Hierarchical attention's segment size.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, serde(default))]
    segment: Option<usize>,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    /// FNV-1a 64 of the blob, 16 lower-case hex digits.
    blob_fnv1a64: String,
    /// Anything (`null` when absent); native only ([`Trained::info`]).
    #[cfg(not(target_arch = "wasm32"))]
    #[cfg_attr(test, serde(default))]
    info: serde_json::Value,
}

impl Header {
    /// Reads a parsed header with the rules serde's derive had: every field of the right type,
    /// the optional ones absent or `null`, no field twice, no other field. `info` is any JSON
    /// value; natively it is kept (serde_json), in wasm skipped, since nothing there reads it
    /// and serde_json's reader would be in the first view's wasm for it alone.
    fn read(value: &Json) -> Result<Header, String> {
        fn text(f: &mut Fields, key: &str) -> Result<String, String> {
            Ok(f.required(key)?.str(key)?.to_string())
        }
        fn maybe_text(f: &mut Fields, key: &str) -> Result<Option<String>, String> {
            f.optional(key)
                .map(|v| v.str(key).map(str::to_string))
                .transpose()
        }
        let mut f = Fields::of(value, "the header")?;
        let header = Header {
            mechanism: text(&mut f, "mechanism")?,
            d_model: f.required("d_model")?.int("d_model")?,
            heads: f.required("heads")?.int("heads")?,
            positions: text(&mut f, "positions")?,
            pooling: text(&mut f, "pooling")?,
            labels: f.required("labels")?.strings("labels")?,
            quantization: text(&mut f, "quantization")?,
            shift: f.optional("shift").map(|v| v.int("shift")).transpose()?,
            difference: maybe_text(&mut f, "difference")?,
            fill: maybe_text(&mut f, "fill")?,
            renormalize: maybe_text(&mut f, "renormalize")?,
            depth: f.optional("depth").map(|v| v.int("depth")).transpose()?,
            window: f.optional("window").map(|v| v.int("window")).transpose()?,
            segment: f
                .optional("segment")
                .map(|v| v.int("segment"))
                .transpose()?,
            vocab: f.required("vocab")?.strings("vocab")?,
            tensors: f
                .required("tensors")?
                .array("tensors")?
                .iter()
                .map(TensorEntry::read)
                .collect::<Result<_, _>>()?,
            blob_fnv1a64: text(&mut f, "blob_fnv1a64")?,
            #[cfg(not(target_arch = "wasm32"))]
            info: match f.take("info") {
                Some(m) => serde_json::from_str(m.text).map_err(|e| format!("info: {e}"))?,
                None => serde_json::Value::Null,
            },
        };
        #[cfg(target_arch = "wasm32")]
        f.take("info");
        f.finish()?;
        Ok(header)
    }
}

fn names(m: &Mechanism) -> (&'static str, &'static str, &'static str) {
    match m {
        Mechanism::ShiftDiff(p) => (
            name_of(p.difference),
            name_of(p.fill),
            name_of(p.renormalize),
        ),
        _ => ("", "", ""),
    }
}

/// Writes a weights file.
pub(in crate::model) fn encode(
    weights: &Weights,
    t: &Trained,
    quantization: Quantization,
) -> Vec<u8> {
    let mut w = BlobWriter {
        blob: Vec::new(),
        entries: Vec::new(),
    };
    let table = &t.table.vectors;
    match quantization {
        Quantization::F32 => w.matrix("embedding", table),
        Quantization::Int8Rows => {
            let (codes, scales) = quantize_rows(table);
            w.i8("embedding", vec![table.nrows(), table.ncols()], codes);
            w.vector("embedding.scale", &scales);
        }
    }
    w.matrix("w_q", &weights.w_q);
    w.matrix("w_k", &weights.w_k);
    w.matrix("w_v", &weights.w_v);
    w.matrix("w_o", &weights.w_o);
    w.matrix("classifier.weight", &t.classifier);
    w.vector(
        "classifier.bias",
        t.classifier_bias.as_slice().unwrap_or(&[]),
    );
    let (mut shift, mut depth, mut window, mut segment) = (None, None, None, None);
    let (difference, fill, renormalize) = names(&t.mechanism);
    match &t.mechanism {
        Mechanism::ShiftDiff(p) => {
            shift = Some(p.shift);
            w.vector("gate.alpha", &p.gate.alpha);
            w.vector("gate.beta", &p.gate.beta);
            w.vector("gate.gamma", &p.gate.gamma);
        }
        Mechanism::DiffTransformer(p) => {
            depth = Some(p.depth);
            w.vector("lambda_q1", &p.lambda_q1);
            w.vector("lambda_k1", &p.lambda_k1);
            w.vector("lambda_q2", &p.lambda_q2);
            w.vector("lambda_k2", &p.lambda_k2);
            w.vector("subln", &p.subln);
        }
        Mechanism::Cosine { tau } => w.vector("tau", &[*tau]),
        Mechanism::Local { window: r } => window = Some(*r),
        // V2's W_λ (its W_q has 2d rows, written above).
        Mechanism::DiffTransformerV2 { .. } => {
            if let Some(w_lambda) = &weights.w_lambda {
                w.matrix("w_lambda", w_lambda);
            }
        }
        Mechanism::Hierarchical { segment: s } => segment = Some(*s),
        Mechanism::Standard | Mechanism::InputDiff => {}
    }
    if let Some(e) = &t.encoder {
        for (dir, l) in [("forward", &e.forward), ("backward", &e.backward)] {
            w.matrix(&format!("bilstm.{dir}.w_ih"), &l.w_ih);
            w.matrix(&format!("bilstm.{dir}.w_hh"), &l.w_hh);
            w.vector(&format!("bilstm.{dir}.b_ih"), &l.b_ih.to_vec());
            w.vector(&format!("bilstm.{dir}.b_hh"), &l.b_hh.to_vec());
        }
    }
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let header = Header {
        mechanism: t.mechanism.name().to_string(),
        d_model: weights.d_model(),
        heads: t.heads,
        positions: "sinusoidal".to_string(),
        pooling: t.pooling.name().to_string(),
        labels: vec!["negative".to_string(), "positive".to_string()],
        quantization: match quantization {
            Quantization::F32 => "f32",
            Quantization::Int8Rows => "int8_rows",
        }
        .to_string(),
        shift,
        difference: some(difference),
        fill: some(fill),
        renormalize: some(renormalize),
        depth,
        window,
        segment,
        vocab: t.table.tokens().to_vec(),
        tensors: w.entries,
        blob_fnv1a64: format!("{:016x}", fnv1a_64(&w.blob)),
        #[cfg(not(target_arch = "wasm32"))]
        info: t.info.clone(),
    };
    let json = serde_json::to_vec(&header).expect("a header of strings and numbers serialises");
    container(&json, &w.blob)
}

/// The value a header field names (`crate::names`), or an error naming the field.
fn header_name<T: Named>(field: &str, value: Option<&str>) -> Result<T, ModelError> {
    let value = value.ok_or_else(|| ModelError::Header(format!("{field} is missing")))?;
    parse::<T>(field, value).map_err(|e| ModelError::Header(e.to_string()))
}

/// Reads a weights file into its parts (unchecked: [`check`](super::check) follows).
pub(in crate::model) fn decode(bytes: &[u8]) -> Result<(Weights, Trained), ModelError> {
    let (header_bytes, blob) = open(bytes)?;
    let text = std::str::from_utf8(header_bytes)
        .map_err(|e| ModelError::Header(format!("not UTF-8: {e}")))?;
    let parsed = json::parse(text).map_err(ModelError::Header)?;
    if let Json::Object(members) = &parsed {
        // The last `task`, as a JSON object of serde_json keeps it.
        let task = members.iter().rev().find(|m| m.key == "task");
        if task.is_some_and(|m| m.value == Json::String("retrieval".to_string())) {
            return Err(ModelError::Header(
                "a retrieval model (`diffattn retrieve` reads it), not a sentiment classifier"
                    .to_string(),
            ));
        }
    }
    let header = Header::read(&parsed).map_err(ModelError::Header)?;
    if header.d_model > MAX_D_MODEL {
        return Err(ModelError::Invalid(format!(
            "d_model {} is over the limit of {MAX_D_MODEL} (diffattn::text::limits::MAX_D_MODEL)",
            header.d_model
        )));
    }
    let header_end = 16 + header_bytes.len();
    check_blob(
        &header.tensors,
        blob,
        &header.blob_fnv1a64,
        header_end,
        bytes.len(),
    )?;
    if header.positions != "sinusoidal" {
        return Err(ModelError::Header(format!(
            "positions {:?}; only \"sinusoidal\" is known",
            header.positions
        )));
    }
    if header.labels != ["negative", "positive"] {
        return Err(ModelError::Header(format!(
            "labels {:?}; expected [\"negative\", \"positive\"]",
            header.labels
        )));
    }
    let r = BlobReader {
        tensors: &header.tensors,
        blob,
    };
    let (w_q, w_k, w_v, w_o) = (
        r.matrix("w_q")?,
        r.matrix("w_k")?,
        r.matrix("w_v")?,
        r.matrix("w_o")?,
    );
    // V2's W_q has two query heads per head (2d rows) and comes with W_λ (DESIGN.md §7.5);
    // every other model's projections are d x d.
    let weights = if header.mechanism == MechanismKind::DiffTransformerV2.key() {
        let w_lambda = r.matrix("w_lambda")?;
        Weights::real(
            w_q,
            w_k,
            w_v,
            w_o,
            Default::default(),
            Some(w_lambda),
            Default::default(),
        )?
    } else {
        Weights::new(w_q, w_k, w_v, w_o)?
    };
    if weights.d_model() != header.d_model {
        return Err(ModelError::Invalid(format!(
            "d_model {} but w_q is {} wide",
            header.d_model,
            weights.d_model()
        )));
    }
    let kind = parse::<MechanismKind>("mechanism", &header.mechanism)
        .map_err(|e| ModelError::Header(e.to_string()))?;
    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::ShiftDiff => Mechanism::ShiftDiff(ShiftDiffParams {
            shift: header
                .shift
                .ok_or_else(|| ModelError::Header("shift is missing".to_string()))?,
            difference: header_name("difference", header.difference.as_deref())?,
            fill: header_name("fill", header.fill.as_deref())?,
            renormalize: header_name("renormalize", header.renormalize.as_deref())?,
            gate: Gate {
                alpha: r.vector("gate.alpha")?,
                beta: r.vector("gate.beta")?,
                gamma: r.vector("gate.gamma")?,
            },
        }),
        MechanismKind::DiffTransformer => Mechanism::DiffTransformer(DiffTransformerParams {
            depth: header
                .depth
                .ok_or_else(|| ModelError::Header("depth is missing".to_string()))?,
            lambda_q1: r.vector("lambda_q1")?,
            lambda_k1: r.vector("lambda_k1")?,
            lambda_q2: r.vector("lambda_q2")?,
            lambda_k2: r.vector("lambda_k2")?,
            subln: r.vector("subln")?,
            subln_eps: crate::engine::diff_transformer::RMS_NORM_EPS,
            ..Default::default()
        }),
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: *r
                .vector("tau")?
                .first()
                .ok_or_else(|| ModelError::Invalid("tau is empty".to_string()))?,
        },
        MechanismKind::Local => Mechanism::Local {
            window: header
                .window
                .ok_or_else(|| ModelError::Header("window is missing".to_string()))?,
        },
        MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 { lambda: None },
        MechanismKind::Hierarchical => Mechanism::Hierarchical {
            segment: header
                .segment
                .ok_or_else(|| ModelError::Header("segment is missing".to_string()))?,
        },
    };
    let encoder = if r.has("bilstm.forward.w_ih") {
        let dir = |d: &str| -> Result<LstmWeights, ModelError> {
            Ok(LstmWeights {
                w_ih: r.matrix(&format!("bilstm.{d}.w_ih"))?,
                w_hh: r.matrix(&format!("bilstm.{d}.w_hh"))?,
                b_ih: Array1::from(r.vector(&format!("bilstm.{d}.b_ih"))?),
                b_hh: Array1::from(r.vector(&format!("bilstm.{d}.b_hh"))?),
            })
        };
        Some(BiLstm::new(dir("forward")?, dir("backward")?)?)
    } else {
        None
    };
    let pooling = Pooling::from_name(&header.pooling)
        .ok_or_else(|| ModelError::Header(format!("unknown pooling {:?}", header.pooling)))?;
    let (vectors, quantization) = r.table(&header.quantization)?;
    let trained = Trained {
        mechanism,
        heads: header.heads,
        table: TokenTable::new(header.vocab, vectors)?,
        encoder,
        pooling,
        classifier: r.matrix("classifier.weight")?,
        classifier_bias: Array1::from(r.vector("classifier.bias")?),
        quantization,
        #[cfg(not(target_arch = "wasm32"))]
        info: header.info,
    };
    Ok((weights, trained))
}

// RMSNorm's epsilon is part of the format: a file trained with another would not match.
const _: () = assert!(RMS_NORM_EPS == 1e-5);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// `Header::read` accepts what serde's derive accepted, refuses what it refused, and reads
    /// the same header: the shipped files' headers, and each changed field by field.
    #[test]
    fn the_header_reader_agrees_with_serde() {
        let agree = |text: &str| {
            let ours = json::parse(text).and_then(|v| Header::read(&v));
            let serde = serde_json::from_str::<Header>(text);
            match (&ours, &serde) {
                (Ok(a), Ok(b)) => assert_eq!(
                    serde_json::to_value(a).unwrap(),
                    serde_json::to_value(b).unwrap(),
                    "{text}"
                ),
                (Err(_), Err(_)) => {}
                _ => panic!("{text}: ours {ours:?}, serde's {serde:?}"),
            }
        };
        let odd = [
            Value::Null,
            json!(1),
            json!(-1),
            json!(1.5),
            json!(u64::MAX),
            json!(i64::MIN),
            json!("x"),
            json!("sinusoidal"),
            json!([]),
            json!([1, 2]),
            json!(["a"]),
            json!({}),
            json!(true),
        ];
        for name in [
            "shift_diff",
            "diff_transformer",
            "local",
            "hierarchical",
            "input_diff",
        ] {
            let path = format!("{}/weights/{name}.bin", env!("CARGO_MANIFEST_DIR"));
            let bytes = std::fs::read(path).unwrap();
            let (header, _) = open(&bytes).unwrap();
            let text = std::str::from_utf8(header).unwrap();
            agree(text);
            let mut value: Value = serde_json::from_str(text).unwrap();
            value["info"] = json!({ "nested": [1, 2.5, { "a": null }], "s": "\u{e9}" });
            agree(&value.to_string());
            let keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            for key in keys.iter().chain(["unknown".to_string()].iter()) {
                let mut v = value.clone();
                v.as_object_mut().unwrap().remove(key);
                agree(&v.to_string());
                for o in &odd {
                    let mut v = value.clone();
                    v[key.as_str()] = o.clone();
                    agree(&v.to_string());
                }
                // The key twice.
                let text = value.to_string();
                agree(&format!("{{\"{key}\": 1, {}", &text[1..]));
            }
            for key in ["name", "dtype", "shape", "offset", "other"] {
                let mut v = value.clone();
                v["tensors"][0].as_object_mut().unwrap().remove(key);
                agree(&v.to_string());
                for o in &odd {
                    let mut v = value.clone();
                    v["tensors"][0][key] = o.clone();
                    agree(&v.to_string());
                }
            }
            for o in &odd {
                agree(&o.to_string());
            }
        }
    }
}
