//! Hugging Face's files of a BERT (`model.safetensors`, `config.json`, `tokenizer.json`) to
//! [`BertParts`]: what `diffattn convert-bert` (run by scripts/fetch-model) writes as a weights
//! file. Native only; every name and shape it needs is checked, and what it does not support
//! (another activation, position type, normaliser or model) is an error naming the field.

use ndarray::Array2;
use serde_json::Value;

use super::{attention_weights, BertConfig, BertParts, HalfTable, LayerParts, Norm};
use crate::model::ModelError;
use crate::text::wordpiece::{Normalization, WordPieceSettings};

/// The tensors of a safetensors file, by name: dtype, shape and bytes.
struct SafeTensors<'a> {
    header: serde_json::Map<String, Value>,
    data: &'a [u8],
}

fn bad(what: impl Into<String>) -> ModelError {
    ModelError::Invalid(what.into())
}

impl<'a> SafeTensors<'a> {
    fn parse(bytes: &'a [u8]) -> Result<SafeTensors<'a>, ModelError> {
        let len = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| bad("safetensors: shorter than its 8-byte header length"))?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|n| n.checked_add(8))
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad(format!("safetensors: header of {len} bytes past the file")))?;
        let header: Value = serde_json::from_slice(&bytes[8..end])
            .map_err(|e| bad(format!("safetensors header: {e}")))?;
        let Value::Object(header) = header else {
            return Err(bad("safetensors header: not an object"));
        };
        Ok(SafeTensors {
            header,
            data: &bytes[end..],
        })
    }

    /// The `F32` tensor `name` as its shape and values.
    fn f32s(&self, name: &str) -> Result<(Vec<usize>, Vec<f32>), ModelError> {
        let info = self
            .header
            .get(name)
            .ok_or_else(|| bad(format!("safetensors: no tensor {name:?}")))?;
        if info["dtype"] != "F32" {
            return Err(bad(format!(
                "safetensors {name:?}: dtype {}, expected F32",
                info["dtype"]
            )));
        }
        let numbers = |key: &str| -> Option<Vec<usize>> {
            info[key]
                .as_array()?
                .iter()
                .map(|v| v.as_u64().and_then(|v| usize::try_from(v).ok()))
                .collect()
        };
        let shape = numbers("shape").ok_or_else(|| bad(format!("{name:?}: shape")))?;
        let offsets = numbers("data_offsets").ok_or_else(|| bad(format!("{name:?}: offsets")))?;
        let [begin, end] = offsets[..] else {
            return Err(bad(format!("{name:?}: data_offsets")));
        };
        let count: usize = shape.iter().product();
        let bytes = self
            .data
            .get(begin..end)
            .filter(|b| b.len() == count * 4)
            .ok_or_else(|| bad(format!("{name:?}: {begin}..{end} does not hold {shape:?}")))?;
        let values = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok((shape, values))
    }

    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, ModelError> {
        let (shape, values) = self.f32s(name)?;
        if shape != [rows, cols] {
            return Err(bad(format!(
                "{name}: shape {shape:?}, expected [{rows}, {cols}]"
            )));
        }
        Ok(Array2::from_shape_vec((rows, cols), values).expect("the shape was checked"))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>, ModelError> {
        let (shape, values) = self.f32s(name)?;
        if shape != [len] {
            return Err(bad(format!("{name}: shape {shape:?}, expected [{len}]")));
        }
        Ok(values)
    }

    fn norm(&self, prefix: &str, d: usize) -> Result<Norm, ModelError> {
        Ok(Norm {
            weight: self.vector(&format!("{prefix}.weight"), d)?,
            bias: self.vector(&format!("{prefix}.bias"), d)?,
        })
    }
}

/// The sizes from `config.json`, refusing a model this code does not compute.
fn config(c: &Value) -> Result<BertConfig, ModelError> {
    let size = |key: &str| -> Result<usize, ModelError> {
        c[key]
            .as_u64()
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| bad(format!("config.json: {key} is not a size")))
    };
    let expect = |key: &str, want: &str| -> Result<(), ModelError> {
        match c[key].as_str() {
            Some(v) if v == want => Ok(()),
            other => Err(bad(format!(
                "config.json: {key} {other:?}; expected {want:?}"
            ))),
        }
    };
    expect("model_type", "bert")?;
    expect("hidden_act", "gelu")?;
    if !c["position_embedding_type"].is_null() {
        expect("position_embedding_type", "absolute")?;
    }
    Ok(BertConfig {
        d_model: size("hidden_size")?,
        layers: size("num_hidden_layers")?,
        heads: size("num_attention_heads")?,
        intermediate: size("intermediate_size")?,
        positions: size("max_position_embeddings")?,
        type_vocab: size("type_vocab_size")?,
        layer_norm_eps: c["layer_norm_eps"]
            .as_f64()
            .ok_or_else(|| bad("config.json: layer_norm_eps"))? as f32,
    })
}

/// The vocabulary (in id order, every id from 0 once) and the settings of `tokenizer.json`,
/// refusing any other pipeline than BERT's.
fn tokenizer(t: &Value) -> Result<(Vec<String>, WordPieceSettings), ModelError> {
    let expect = |v: &Value, what: &str, want: &str| -> Result<(), ModelError> {
        match v["type"].as_str() {
            Some(x) if x == want => Ok(()),
            other => Err(bad(format!(
                "tokenizer.json: {what} {other:?}; expected {want:?}"
            ))),
        }
    };
    expect(&t["normalizer"], "normalizer", "BertNormalizer")?;
    expect(&t["pre_tokenizer"], "pre_tokenizer", "BertPreTokenizer")?;
    expect(&t["model"], "model", "WordPiece")?;
    expect(&t["post_processor"], "post_processor", "TemplateProcessing")?;
    let n = &t["normalizer"];
    let flag = |key: &str| {
        n[key]
            .as_bool()
            .ok_or_else(|| bad(format!("tokenizer.json: normalizer.{key}")))
    };
    let lowercase = flag("lowercase")?;
    let normalization = Normalization {
        clean_text: flag("clean_text")?,
        chinese_chars: flag("handle_chinese_chars")?,
        strip_accents: n["strip_accents"].as_bool().unwrap_or(lowercase),
        lowercase,
    };
    let m = &t["model"];
    let text = |v: &Value, key: &str| {
        v[key]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(format!("tokenizer.json: {key}")))
    };
    let vocab_map = m["vocab"]
        .as_object()
        .ok_or_else(|| bad("tokenizer.json: model.vocab"))?;
    let mut vocab = vec![None; vocab_map.len()];
    for (token, id) in vocab_map {
        let slot = id
            .as_u64()
            .and_then(|i| vocab.get_mut(usize::try_from(i).ok()?))
            .ok_or_else(|| bad(format!("tokenizer.json: id {id} of {token:?}")))?;
        if slot.replace(token.clone()).is_some() {
            return Err(bad(format!("tokenizer.json: id {id} twice")));
        }
    }
    let vocab: Vec<String> = vocab
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| bad("tokenizer.json: the ids are not 0 to n − 1"))?;
    // The sequence template `[CLS] $A [SEP]`.
    let single = t["post_processor"]["single"]
        .as_array()
        .ok_or_else(|| bad("tokenizer.json: post_processor.single"))?;
    let special = |i: usize| single.get(i).and_then(|s| s["SpecialToken"]["id"].as_str());
    let (Some(cls), Some(sep), 3) = (special(0), special(2), single.len()) else {
        return Err(bad("tokenizer.json: the template is not [CLS] $A [SEP]"));
    };
    let mut specials = Vec::new();
    for a in t["added_tokens"].as_array().into_iter().flatten() {
        let plain = a["special"] == true
            && a["normalized"] == false
            && a["single_word"] == false
            && a["lstrip"] == false
            && a["rstrip"] == false;
        if !plain {
            return Err(bad(format!(
                "tokenizer.json: added token {a} is not plain special"
            )));
        }
        specials.push(text(a, "content")?);
    }
    let settings = WordPieceSettings {
        normalization,
        prefix: text(m, "continuing_subword_prefix")?,
        max_word_chars: m["max_input_chars_per_word"]
            .as_u64()
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| bad("tokenizer.json: max_input_chars_per_word"))?,
        unk: text(m, "unk_token")?,
        cls: cls.to_string(),
        sep: sep.to_string(),
        specials,
    };
    Ok((vocab, settings))
}

/// The parts of a BERT from its three files' contents. `name` and `source` go into the header.
pub fn from_huggingface(
    safetensors: &[u8],
    config_json: &str,
    tokenizer_json: &str,
    name: &str,
    source: &str,
) -> Result<BertParts, ModelError> {
    let json = |what: &str, text: &str| -> Result<Value, ModelError> {
        serde_json::from_str(text).map_err(|e| bad(format!("{what}: {e}")))
    };
    let c = config(&json("config.json", config_json)?)?;
    let (vocab, tokenizer) = tokenizer(&json("tokenizer.json", tokenizer_json)?)?;
    let st = SafeTensors::parse(safetensors)?;
    let d = c.d_model;
    let e = "embeddings";
    let word = st.matrix(&format!("{e}.word_embeddings.weight"), vocab.len(), d)?;
    let mut layers = Vec::with_capacity(c.layers);
    for n in 0..c.layers {
        let p = |s: &str| format!("encoder.layer.{n}.{s}");
        let m = |s: &str, r, k| st.matrix(&p(&format!("{s}.weight")), r, k);
        let v = |s: &str, len| st.vector(&p(&format!("{s}.bias")), len);
        let attention = attention_weights(
            [
                m("attention.self.query", d, d)?,
                m("attention.self.key", d, d)?,
                m("attention.self.value", d, d)?,
                m("attention.output.dense", d, d)?,
            ],
            [
                v("attention.self.query", d)?,
                v("attention.self.key", d)?,
                v("attention.self.value", d)?,
                v("attention.output.dense", d)?,
            ],
        )
        .map_err(|e| bad(format!("layer {n}: {e}")))?;
        layers.push(LayerParts {
            attention,
            attention_norm: st.norm(&p("attention.output.LayerNorm"), d)?,
            w_in: m("intermediate.dense", c.intermediate, d)?,
            b_in: v("intermediate.dense", c.intermediate)?,
            w_out: m("output.dense", d, c.intermediate)?,
            b_out: v("output.dense", d)?,
            output_norm: st.norm(&p("output.LayerNorm"), d)?,
        });
    }
    Ok(BertParts {
        name: name.to_string(),
        source: source.to_string(),
        config: c,
        vocab,
        tokenizer,
        word: HalfTable::from_f32(&word),
        position: st.matrix(&format!("{e}.position_embeddings.weight"), c.positions, d)?,
        token_type: st.matrix(
            &format!("{e}.token_type_embeddings.weight"),
            c.type_vocab,
            d,
        )?,
        embedding_norm: st.norm(&format!("{e}.LayerNorm"), d)?,
        layers,
    })
}
