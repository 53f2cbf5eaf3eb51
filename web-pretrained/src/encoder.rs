//! [`Encoder`], the model module's one handle: the model read once per instance (`load`, from
//! the weights file's bytes; a `thread_local` every encoder of the instance shares), and per
//! explorer one text through it in pieces (`diffattn::model::bert::Encoder`). What it hands
//! out is what the page's explorer asks for (`pretrained_need`, `similarity_need` of the page's
//! handle): the vectors entering a layer as a `Float32Array` (`input`), the layer's attention
//! weights (`attention`), and the similarity computed from the explorer's layer output
//! (`similarity_work`). www/explorer/pretrained.js drives it, in the page's one path for heavy
//! work (www/explorer/work.js): `work(layer, budget_ms)` does pieces (a layer's attention half,
//! or 64 rows of its feed-forward) until the budget is used.

use std::cell::RefCell;
use std::sync::Arc;

use js_sys::{Float32Array, Object, Reflect};
use ndarray::ArrayView2;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js_error, now_ms, to_js};
use diffattn::model::bert::{self, Bert};
use diffattn::pretrained::noise;

thread_local! {
    /// The model once read (`Encoder.load`), for every encoder of the instance.
    static MODEL: RefCell<Option<Arc<Bert>>> = const { RefCell::new(None) };
}

/// `{ name, layers, heads, d_model }`: what the page's explorer knows of the model
/// (`set_pretrained` of the page's handle).
#[derive(Serialize)]
struct ModelJs<'a> {
    name: &'a str,
    layers: usize,
    heads: usize,
    d_model: usize,
}

impl<'a> ModelJs<'a> {
    fn of(bert: &'a Bert) -> ModelJs<'a> {
        ModelJs {
            name: bert.name(),
            layers: bert.config().layers,
            heads: bert.heads(),
            d_model: bert.config().d_model,
        }
    }
}

/// `{ tokens, total, truncated }`: the word pieces (`set_pretrained_text` of the page's handle).
#[derive(Serialize)]
struct PiecesJs {
    tokens: Vec<String>,
    total: usize,
    truncated: bool,
}

/// `{ model, mechanism }`: the two cosines.
#[derive(Serialize)]
struct SimilarityJs {
    model: f32,
    mechanism: f32,
}

/// `{ query, target }`: the noise lesson's proposal.
#[derive(Serialize)]
struct ProposalJs {
    query: usize,
    target: usize,
}

/// One text through the pretrained model, in pieces (see the module's header).
#[wasm_bindgen]
pub struct Encoder {
    encoder: bert::Encoder,
    /// The word pieces of the text set last.
    pieces: Vec<String>,
}

#[wasm_bindgen]
impl Encoder {
    /// Reads the model from the bytes of its weights file (`weights/minilm/minilm.bin`,
    /// docs/MINILM.md), once for the instance (every encoder made after uses it). Returns
    /// `{ name, layers, heads, d_model }`; throws an `Error` naming the problem for a file cut
    /// short, corrupted or of another version.
    pub fn load(bytes: &[u8]) -> Result<JsValue, JsError> {
        let bert =
            Bert::from_bytes(bytes).map_err(|e| js_error(format!("pretrained model: {e}")))?;
        let info = to_js(&ModelJs::of(&bert))?;
        MODEL.with(|m| *m.borrow_mut() = Some(Arc::new(bert)));
        Ok(info)
    }

    /// An encoder over the model read (`load`), with no text; throws when none was read.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<Encoder, JsError> {
        let bert = MODEL
            .with(|m| m.borrow().clone())
            .ok_or_else(|| js_error("pretrained model: none read (Encoder.load)"))?;
        Ok(Encoder {
            encoder: bert::Encoder::new(bert),
            pieces: Vec::new(),
        })
    }

    /// `{ name, layers, heads, d_model }`.
    pub fn model(&self) -> Result<JsValue, JsError> {
        to_js(&ModelJs::of(self.encoder.bert()))
    }

    /// `text` cut into the model's word pieces (at most its positions, `[CLS]` and `[SEP]`
    /// included) and embedded; what was computed stays while the pieces do. Returns
    /// `{ tokens, total, truncated }`.
    pub fn set_text(&mut self, text: &str) -> Result<JsValue, JsError> {
        let pieces = self.encoder.set_text(text);
        self.pieces.clone_from(&pieces.pieces);
        to_js(&PiecesJs {
            tokens: pieces.pieces,
            total: pieces.total,
            truncated: pieces.truncated,
        })
    }

    /// Pieces of the forward pass toward the vectors entering layer `layer` (from 0) until
    /// `budget_ms` have passed (at least one, if any is left); whether they are in.
    pub fn work(&mut self, layer: usize, budget_ms: f64) -> bool {
        let t0 = now_ms();
        while self.encoder.work(layer) {
            if now_ms() - t0 >= budget_ms {
                return self.encoder.input(layer).is_some();
            }
        }
        self.encoder.input(layer).is_some()
    }

    /// The vectors entering layer `layer` (from 0), `(pieces, d)` row by row; `undefined`
    /// until `work` brought them in.
    pub fn input(&self, layer: usize) -> Option<Vec<f32>> {
        self.encoder.input(layer).map(|x| flat(x.view()))
    }

    /// Layer `layer`'s attention (from 0): `{ w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o }`, each a
    /// `Float32Array` (the matrices `[out, in]`, row by row; the plain layout of the model's
    /// heads).
    pub fn attention(&self, layer: usize) -> Result<JsValue, JsError> {
        let w = self.encoder.attention(layer);
        let out = Object::new();
        let b = &w.biases;
        let parts = [
            ("w_q", Some(flat(w.w_q.view()))),
            ("w_k", Some(flat(w.w_k.view()))),
            ("w_v", Some(flat(w.w_v.view()))),
            ("w_o", Some(flat(w.w_o.view()))),
            ("b_q", b.b_q.as_ref().map(|v| v.to_vec())),
            ("b_k", b.b_k.as_ref().map(|v| v.to_vec())),
            ("b_v", b.b_v.as_ref().map(|v| v.to_vec())),
            ("b_o", b.b_o.as_ref().map(|v| v.to_vec())),
        ];
        for (key, values) in parts {
            let value: JsValue = match values {
                Some(v) => Float32Array::from(v.as_slice()).into(),
                None => JsValue::UNDEFINED,
            };
            Reflect::set(&out, &key.into(), &value)
                .map_err(|_| js_error(format!("attention: {key}")))?;
        }
        Ok(out.into())
    }

    /// Pieces of the similarity of the text to `other` until `budget_ms` have passed (at least
    /// one, if any is left), with `output` (the explorer's layer output at layer `layer`, from
    /// 0: `(pieces, d)` row by row) in place of that layer's attention output: the second
    /// sentence through the model, the rest of the text, the forward pass after the layer.
    /// Returns `{ model, mechanism }` once in, else `undefined`. What was computed for the same
    /// sentence, layer and output stays.
    pub fn similarity_work(
        &mut self,
        layer: usize,
        output: &[f32],
        other: &str,
        budget_ms: f64,
    ) -> Result<JsValue, JsError> {
        let d = self.encoder.bert().config().d_model;
        let rows = output.len() / d.max(1);
        let output = ArrayView2::from_shape((rows, d), output)
            .map_err(|e| js_error(format!("output: {e}")))?;
        self.encoder.compare(layer, output, other);
        let t0 = now_ms();
        while self.encoder.similarity_piece() {
            if now_ms() - t0 >= budget_ms {
                break;
            }
        }
        match self.encoder.similarity() {
            Some(s) => to_js(&SimilarityJs {
                model: s.model,
                mechanism: s.mechanism,
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// The noise lesson's proposal for the text's word pieces (`diffattn::pretrained::noise::
    /// propose`): `{ query, target }` (from 0), or `undefined`.
    pub fn propose(&self) -> Result<JsValue, JsError> {
        match noise::propose(&self.pieces) {
            Some((query, target)) => to_js(&ProposalJs { query, target }),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// The noise lesson's figures (`diffattn::pretrained::noise::noise_lesson`, the function
    /// behind `diffattn noise`) for the query piece `query` and its target `target` (from 0),
    /// once `work` brought every layer's input in (`work(layers − 1, …)`); `undefined` before.
    /// `{ query, target, sinks, heads: [{ layer, head, before, difference: { head, lambda,
    /// shares } | null, shift }], mean_before, mean_difference, mean_shift }`, each figure set
    /// `{ target, sinks, other, target_abs, sinks_abs, other_abs }`; throws for a target that
    /// is a sink or past the text.
    pub fn noise_lesson(&self, query: usize, target: usize) -> Result<JsValue, JsError> {
        let Some(rows) = noise::query_rows(&self.encoder, query) else {
            return Ok(JsValue::UNDEFINED);
        };
        let rows = rows.map_err(|e| js_error(e.to_string()))?;
        let lesson = noise::noise_lesson(&rows, query, target, &noise::sink_pieces(&self.pieces))
            .map_err(|e| js_error(e.to_string()))?;
        to_js(&lesson)
    }

    /// How many of the model's layers this encoder ran (nothing is computed twice).
    pub fn model_layers(&self) -> f64 {
        self.encoder.model_layers() as f64
    }
}

/// A matrix's values row by row.
fn flat(m: ArrayView2<f32>) -> Vec<f32> {
    m.as_standard_layout().iter().copied().collect()
}
