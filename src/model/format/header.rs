//! The sentiment classifier's JSON header (`Header`: settings, vocabulary, tensor table, the
//! blob's hash), and the whole file written (`encode`) and read back into its parts (`decode`).

use ndarray::Array1;
use serde::{Deserialize, Serialize};

use super::blob::{check_blob, quantize_rows, BlobReader, BlobWriter, TensorEntry};
use super::{container, open, task_of, ModelError, Quantization};
use crate::engine::bilstm::{BiLstm, LstmWeights};
use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams};
use crate::engine::{Mechanism, MechanismKind, Weights};
use crate::model::{Pooling, TokenTable, Trained};
use crate::names::{name_of, parse, Named};
use crate::text::fnv1a_64;
use crate::text::limits::MAX_D_MODEL;

/// The JSON header, written and read by serde with serde_json. Reading is strict: every field
/// of its type, the optional ones absent or `null`, no field twice, no other field
/// (`deny_unknown_fields`; serde's derive refuses a duplicate field), the same on every target.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    /// Hierarchical attention's segment size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    segment: Option<usize>,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    /// FNV-1a 64 of the blob, 16 lower-case hex digits.
    blob_fnv1a64: String,
    /// Anything (`null` when absent): [`Trained::info`].
    #[serde(default)]
    info: serde_json::Value,
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
        // Gated attention's output gate W_og (and b_og when it has one).
        Mechanism::GatedAttention => {
            if let Some(g) = &weights.output_gate {
                w.matrix("w_output_gate", &g.w);
                if let Some(b) = &g.b {
                    w.vector("b_output_gate", &b.to_vec());
                }
            }
        }
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
    if task_of(header_bytes)?.as_deref() == Some("retrieval") {
        return Err(ModelError::Header(
            "a retrieval model (`diffattn retrieve` reads it), not a sentiment classifier"
                .to_string(),
        ));
    }
    let header: Header =
        serde_json::from_slice(header_bytes).map_err(|e| ModelError::Header(e.to_string()))?;
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
    } else if header.mechanism == MechanismKind::GatedAttention.key() {
        // Gated attention's output gate W_og, and its bias b_og when the file has one (§4.1).
        let b = if r.has("b_output_gate") {
            Some(ndarray::Array1::from(r.vector("b_output_gate")?))
        } else {
            None
        };
        Weights::new(w_q, w_k, w_v, w_o)?.with_output_gate(r.matrix("w_output_gate")?, b)?
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
        MechanismKind::GatedAttention => Mechanism::GatedAttention,
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

    /// What a header field accepts, by the type it has in [`Header`].
    #[derive(Clone, Copy, Debug)]
    enum Kind {
        Text,
        Count,
        Texts,
        Tensors,
        MaybeInt,
        MaybeText,
        MaybeU32,
        MaybeCount,
        Any,
    }

    fn kind(key: &str) -> Option<Kind> {
        use Kind::*;
        Some(match key {
            "mechanism" | "positions" | "pooling" | "quantization" | "blob_fnv1a64" => Text,
            "d_model" | "heads" => Count,
            "labels" | "vocab" => Texts,
            "tensors" => Tensors,
            "shift" => MaybeInt,
            "difference" | "fill" | "renormalize" => MaybeText,
            "depth" => MaybeU32,
            "window" | "segment" => MaybeCount,
            "info" => Any,
            _ => return None,
        })
    }

    /// Whether a field of `kind` takes `value` (the odd values of the test below), derived
    /// from its Rust type: `usize` is 64 bits natively (u64::MAX fits) and 32 bits in wasm.
    fn takes(kind: Kind, value: &Value) -> bool {
        use Kind::*;
        let optional = matches!(kind, MaybeInt | MaybeText | MaybeU32 | MaybeCount | Any);
        match value {
            Value::Null => optional,
            Value::String(_) => matches!(kind, Text | MaybeText | Any),
            Value::Array(items) => match kind {
                Texts => items.iter().all(Value::is_string),
                // An empty table parses; `["a"]` and `[1, 2]` are no tensor entries.
                Tensors => items.is_empty(),
                Any => true,
                _ => false,
            },
            Value::Number(n) => match kind {
                MaybeInt => n.is_i64(),
                Count | MaybeCount => n.as_u64().is_some_and(|v| usize::try_from(v).is_ok()),
                MaybeU32 => n.as_u64().is_some_and(|v| u32::try_from(v).is_ok()),
                Any => true,
                _ => false,
            },
            Value::Bool(_) | Value::Object(_) => matches!(kind, Any),
        }
    }

    /// The header reader's strictness, on every shipped header changed field by field: a
    /// required field missing, an unknown field, a field twice, a value of the wrong type,
    /// each refused; an optional field absent or `null`, and any `info`, accepted.
    #[test]
    fn the_header_reader_refuses_what_does_not_fit_its_fields() {
        let read = |text: &str| serde_json::from_str::<Header>(text);
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
            let shipped = read(text).unwrap();
            // What is read is what was written: the header goes back to the same JSON.
            let mut value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_value(&shipped).unwrap(), value, "{name}");
            value["info"] = json!({ "nested": [1, 2.5, { "a": null }], "s": "\u{e9}" });
            assert_eq!(read(&value.to_string()).unwrap().info, value["info"]);
            let keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            for key in keys.iter().chain(["unknown".to_string()].iter()) {
                let field = kind(key);
                let mut v = value.clone();
                v.as_object_mut().unwrap().remove(key);
                let optional = takes(field.unwrap_or(Kind::Text), &Value::Null);
                assert_eq!(
                    read(&v.to_string()).is_ok(),
                    optional || field.is_none(),
                    "{name}: without {key}"
                );
                for o in &odd {
                    let mut v = value.clone();
                    v[key.as_str()] = o.clone();
                    let ok = field.is_some_and(|k| takes(k, o));
                    assert_eq!(read(&v.to_string()).is_ok(), ok, "{name}: {key} = {o}");
                }
                // The key twice, and an unknown one: refused.
                let text = value.to_string();
                let twice = read(&format!("{{\"{key}\": 1, {}", &text[1..]));
                assert!(twice.is_err(), "{name}: {key} twice");
            }
            for key in ["name", "dtype", "shape", "offset", "other"] {
                let mut v = value.clone();
                v["tensors"][0].as_object_mut().unwrap().remove(key);
                let ok = key == "other";
                assert_eq!(
                    read(&v.to_string()).is_ok(),
                    ok,
                    "{name}: tensors[0] without {key}"
                );
                for o in &odd {
                    let mut v = value.clone();
                    v["tensors"][0][key] = o.clone();
                    let ok = match key {
                        "name" | "dtype" => o.is_string(),
                        "offset" => takes(Kind::Count, o),
                        // A shape of integers only: `[]` (a scalar) and `[1, 2]`.
                        "shape" => o.as_array().is_some_and(|a| a.iter().all(Value::is_u64)),
                        _ => false,
                    };
                    assert_eq!(
                        read(&v.to_string()).is_ok(),
                        ok,
                        "{name}: tensors[0].{key} = {o}"
                    );
                }
            }
            for o in &odd {
                assert!(
                    read(&o.to_string()).is_err(),
                    "{name}: a header that is {o}"
                );
            }
        }
    }

    /// A number too large for an `f64` is refused wherever it is, `info` included (serde_json
    /// on every target: natively and in wasm the same files open).
    #[test]
    fn a_number_out_of_range_is_refused_even_in_info() {
        let path = format!("{}/weights/local.bin", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(path).unwrap();
        let (header, _) = open(&bytes).unwrap();
        let text = std::str::from_utf8(header).unwrap();
        let mut value: Value = serde_json::from_str(text).unwrap();
        value.as_object_mut().unwrap().remove("info");
        let text = value.to_string();
        let text = text.as_str();
        let with = |info: &str| format!("{}, \"info\": {info}}}", &text[..text.len() - 1]);
        assert!(serde_json::from_str::<Header>(&with("[1e300]")).is_ok());
        assert!(serde_json::from_str::<Header>(&with("[1e400]")).is_err());
    }

    /// serde's derive reads a struct from a JSON array of its fields in order too; the file's
    /// header is an object, and [`task_of`] refuses anything else before the derive reads it.
    #[test]
    fn a_header_that_is_an_array_of_its_fields_is_refused() {
        let path = format!("{}/weights/local.bin", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(path).unwrap();
        let (header, blob) = open(&bytes).unwrap();
        let v: Value = serde_json::from_slice(header).unwrap();
        let order = [
            "mechanism",
            "d_model",
            "heads",
            "positions",
            "pooling",
            "labels",
            "quantization",
            "shift",
            "difference",
            "fill",
            "renormalize",
            "depth",
            "window",
            "segment",
            "vocab",
            "tensors",
            "blob_fnv1a64",
            "info",
        ];
        let fields: Vec<Value> = order
            .iter()
            .map(|k| v.get(*k).cloned().unwrap_or(Value::Null))
            .collect();
        let array = serde_json::to_vec(&fields).unwrap();
        assert!(
            serde_json::from_slice::<Header>(&array).is_ok(),
            "the derive alone reads it"
        );
        let err = decode(&container(&array, blob)).unwrap_err();
        assert!(
            err.to_string().contains("the header as a JSON object"),
            "{err}"
        );
    }
}
