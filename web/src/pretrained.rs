//! The pretrained model's side of the page's handle: the explorer draws with a model that runs
//! in another wasm module (`web-pretrained/`, fetched with the model's weights), so this module
//! carries none of the model's code. www/explorer/pretrained.js (`PretrainedFeed`) hands the
//! handle what the explorer asks for, as `diffattn::pretrained::Feed` does natively: the model's
//! sizes (`set_pretrained`), the word pieces (`set_pretrained_text`), the vectors entering the
//! layer drawn and its attention weights (`pretrained_need` → `set_pretrained_layer`), and the
//! similarity to a second sentence, computed there from this handle's layer output
//! (`similarity_need` → `set_similarity`).

use js_sys::{Float32Array, Object, Reflect};
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::handle::Explorer;
use super::js::{js_error, to_js, TokensJs};
use diffattn::engine::{Biases, Layout, Weights};
use diffattn::explorer::{PretrainedModel, Similarity, TokensInfo};

/// `{ name, layers, heads, d_model }`: the model module's `Encoder.model()`.
#[derive(Deserialize)]
struct ModelIn {
    name: String,
    layers: usize,
    heads: usize,
    d_model: usize,
}

/// `{ tokens, total, truncated }`: the model module's `Encoder.set_text()`.
#[derive(Deserialize)]
struct PiecesIn {
    tokens: Vec<String>,
    total: usize,
    truncated: bool,
}

/// `{ layer, weights }`: the layer drawn (from 0) and whether its weights are needed too.
#[derive(Serialize)]
struct LayerNeedJs {
    layer: usize,
    weights: bool,
}

#[wasm_bindgen]
impl Explorer {
    /// Draws the sentence with a pretrained model (`{ name, layers, heads, d_model }`, the
    /// model module's `Encoder.model()`), at the layer of the `layer` setting and the model's
    /// own heads. The word pieces come next (`set_pretrained_text`), then what the layer
    /// needs (`pretrained_need`). Returns `model_info()`.
    pub fn set_pretrained(&mut self, model: JsValue) -> Result<JsValue, JsError> {
        let m: ModelIn = serde_wasm_bindgen::from_value(model)
            .map_err(|e| js_error(format!("pretrained model: {e}")))?;
        self.state.set_pretrained(PretrainedModel {
            name: m.name,
            layers: m.layers,
            heads: m.heads,
            d_model: m.d_model,
        });
        self.model_info()
    }

    /// Whether a pretrained model draws the sentence.
    pub fn is_pretrained(&self) -> bool {
        self.state.is_pretrained()
    }

    /// The sentence as last typed.
    pub fn text(&self) -> String {
        self.state.text().to_string()
    }

    /// `text` and the word pieces the model cut it into (`{ tokens, total, truncated }`, the
    /// model module's `Encoder.set_text(text)`); for another source, `set_text(text)`. Returns
    /// `{ tokens, total, truncated }` as `set_text` does.
    pub fn set_pretrained_text(&mut self, text: &str, pieces: JsValue) -> Result<JsValue, JsError> {
        let p: PiecesIn = serde_wasm_bindgen::from_value(pieces)
            .map_err(|e| js_error(format!("word pieces: {e}")))?;
        self.text = text.to_string();
        let info = self.state.set_pretrained_text(
            text,
            TokensInfo {
                tokens: p.tokens,
                total: p.total,
                truncated: p.truncated,
            },
        );
        to_js(&TokensJs {
            tokens: &info.tokens,
            total: info.total,
            truncated: info.truncated,
        })
    }

    /// What the explorer waits for before it can compute anything: `{ layer, weights }`, the
    /// vectors entering layer `layer` (from 0) and, when `weights`, its attention weights;
    /// `undefined` when it waits for nothing.
    pub fn pretrained_need(&self) -> Result<JsValue, JsError> {
        match self.state.pretrained_need() {
            Some(n) => to_js(&LayerNeedJs {
                layer: n.layer,
                weights: n.weights,
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// What `pretrained_need` asked for: the vectors entering layer `layer` (from 0; the model
    /// module's `Encoder.input(layer)`, `(pieces, d)` row by row) and, when asked, its attention
    /// weights (`{ w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o }`, `Encoder.attention(layer)`; else
    /// `undefined`). Throws for another layer than the one drawn or another shape; then nothing
    /// changes.
    pub fn set_pretrained_layer(
        &mut self,
        layer: usize,
        input: &[f32],
        attention: JsValue,
    ) -> Result<(), JsError> {
        let d = self.state.pretrained().map_or(1, |m| m.d_model.max(1));
        let x = Array2::from_shape_vec((input.len() / d, d), input.to_vec())
            .map_err(|e| js_error(format!("x: {e}")))?;
        let weights = if attention.is_undefined() {
            None
        } else {
            Some(attention_of(&attention, d)?)
        };
        self.state
            .set_pretrained_layer(layer, x, weights)
            .map_err(js_error)
    }

    /// The second sentence the pretrained model compares the typed one with (blank: none).
    pub fn set_other_text(&mut self, text: &str) {
        self.state.set_other_text(text);
    }

    /// Whether a similarity is asked for (a pretrained model, a sentence and a second one):
    /// then `similarity` needs the work for every head, and the model's.
    pub fn compares(&self) -> bool {
        self.state.compares()
    }

    /// What the similarity is computed from, once every head's share of the layer output is in
    /// and while the similarity is not: `{ layer, output, other }`, the layer drawn (from 0),
    /// its layer output (a `Float32Array`, `(pieces, d)` row by row) and the second sentence;
    /// `undefined` otherwise.
    pub fn similarity_need(&self) -> Result<JsValue, JsError> {
        let Some(need) = self.state.similarity_need() else {
            return Ok(JsValue::UNDEFINED);
        };
        let out = Object::new();
        let output: Vec<f32> = need.output.iter().copied().collect();
        for (key, value) in [
            ("layer", JsValue::from(need.layer as f64)),
            ("output", Float32Array::from(output.as_slice()).into()),
            ("other", JsValue::from_str(need.other)),
        ] {
            Reflect::set(&out, &key.into(), &value)
                .map_err(|_| js_error(format!("similarity_need: {key}")))?;
        }
        Ok(out.into())
    }

    /// The similarity the model module computed from `similarity_need` (`{ model, mechanism }`
    /// of `Encoder.similarity_work`); ignored when none is asked for any more.
    pub fn set_similarity(&mut self, model: f32, mechanism: f32) {
        self.state.set_similarity(Similarity { model, mechanism });
    }

    /// `{ model, mechanism }`: the cosine of the two sentences' embeddings, the model's own and
    /// with the layer drawn computed by the mechanism shown; `undefined` when none is asked for
    /// or it is not in yet (it computes nothing).
    pub fn similarity(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct SimilarityJs {
            model: f32,
            mechanism: f32,
        }
        match self.state.similarity() {
            Some(s) => to_js(&SimilarityJs {
                model: s.model,
                mechanism: s.mechanism,
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

/// A standard layer's attention from `{ w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o }`: the
/// matrices `[out, in]` row by row (`W_q`, `W_k`, `W_v` read vectors of width `d`, `W_o` makes
/// them), the biases optional, the plain layout of the model's heads.
fn attention_of(value: &JsValue, d: usize) -> Result<Weights, JsError> {
    let values = |key: &str| -> Result<Option<Vec<f32>>, JsError> {
        let v = Reflect::get(value, &key.into()).map_err(|_| js_error(format!("{key}: none")))?;
        Ok((!v.is_undefined() && !v.is_null()).then(|| Float32Array::new(&v).to_vec()))
    };
    let matrix = |key: &str, rows_of_d: bool| -> Result<Array2<f32>, JsError> {
        let v = values(key)?.ok_or_else(|| js_error(format!("{key}: none")))?;
        let other = v.len() / d;
        let shape = if rows_of_d { (d, other) } else { (other, d) };
        Array2::from_shape_vec(shape, v).map_err(|e| js_error(format!("{key}: {e}")))
    };
    let bias =
        |key: &str| -> Result<Option<Array1<f32>>, JsError> { Ok(values(key)?.map(Array1::from)) };
    Weights::real(
        matrix("w_q", false)?,
        matrix("w_k", false)?,
        matrix("w_v", false)?,
        matrix("w_o", true)?,
        Biases {
            b_q: bias("b_q")?,
            b_k: bias("b_k")?,
            b_v: bias("b_v")?,
            b_o: bias("b_o")?,
        },
        None,
        Layout::default(),
    )
    .map_err(js_error)
}
