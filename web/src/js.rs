//! The JavaScript-shaped values of the boundary: what `Explorer`'s methods take and return,
//! with their JavaScript shapes written beside each struct. In sync with
//! `www/explorer/engine.js`, which documents the same shapes from its side.
//!
//! Names are the crate's own (`diffattn::names`): a mechanism is `"shift_diff"`, a stage `"fused"`,
//! a control `"shift"`, everywhere.
//!
//! The settings and their patch are in `settings`, the view of what to draw and say in
//! `view`; the smaller shapes are here.

mod settings;
mod view;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use diffattn::engine::shift_diff::Difference;
use diffattn::engine::{MechanismKind, StageId};
use diffattn::explorer::CellInfo;
use diffattn::names::{self, name_of, Named};

pub(super) use settings::{SettingsJs, SettingsPatchJs};
pub(super) use view::{FrameJs, ViewJs};

/// A value as a plain JavaScript object (maps as objects, not `Map`s).
pub(super) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot pass a value to JavaScript: {e}")))
}

/// Any displayable error as a JavaScript `Error` with that message.
pub(super) fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The value a name stands for, or an error listing the allowed names and the closest.
pub(super) fn choice<T: Named>(field: &str, value: &str) -> Result<T, JsError> {
    names::parse::<T>(field, value).map_err(js_error)
}

/// `{ tokens: string[], total: number, truncated: boolean }`
#[derive(Serialize)]
pub(super) struct TokensJs<'a> {
    pub tokens: &'a [String],
    pub total: usize,
    pub truncated: bool,
}

/// `{ rows: string[], keys: string[] }`: the row labels (tokens) and the key labels (tokens,
/// or the steps `a→b` between them for input difference).
#[derive(Serialize)]
pub(super) struct LabelsJs<'a> {
    pub rows: &'a [String],
    pub keys: &'a [String],
}

/// `{ row, col, value, query, key }`: one cell, counted from 0, with its tokens.
#[derive(Serialize)]
pub(super) struct ExtremeJs {
    pub row: usize,
    pub col: usize,
    pub value: f32,
    pub query: String,
    pub key: String,
}

/// `{ max: ExtremeJs, min: ExtremeJs }`
#[derive(Serialize)]
pub(super) struct ExtremesJs {
    pub max: ExtremeJs,
    pub min: ExtremeJs,
}

/// `{ compute_ms, draw_ms }`
#[derive(Serialize)]
pub(super) struct TimingsJs {
    pub compute_ms: f64,
    pub draw_ms: f64,
}

/// `{ row, col, rows, cols, total_rows, total_cols }`: the part of the maps drawn, and their
/// whole size.
#[derive(Serialize)]
pub(super) struct ViewportJs {
    pub row: usize,
    pub col: usize,
    pub rows: usize,
    pub cols: usize,
    pub total_rows: usize,
    pub total_cols: usize,
}

/// `{ x, y, width, height }` in device pixels.
#[derive(Serialize)]
pub(super) struct RectJs {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// `{ query, key, values: { [stage]: number }, gate: { alpha, beta, gamma } | null,
///    row_sum: { [stage]: number }, sink: { [stage]: number } (the learned sink's share of the
///    row in each map with a sink strip; empty without sinks), sink_cell: boolean (the cell is
///    the sink strip's, past the keys), lambda: number | null,
///    output_gate: number[] | null (gated attention: the shown head's gate per channel at the
///    query), masked: boolean }`
#[derive(Serialize)]
pub(super) struct CellJs {
    query: String,
    key: String,
    values: StageValues,
    gate: Option<GateJs>,
    row_sum: StageValues,
    sink: StageValues,
    sink_cell: bool,
    lambda: Option<f32>,
    output_gate: Option<Vec<f32>>,
    masked: bool,
}

/// `{ alpha, beta, gamma }`
#[derive(Serialize)]
struct GateJs {
    alpha: f32,
    beta: f32,
    gamma: f32,
}

/// `{ [stage]: number | null }`: each stage's value under its name, the names in sorted order,
/// a value that is not finite as `null` (what a `serde_json::Map` of `Value`s gave, which this
/// replaces: one sorted list, without a map and a `Value` built per hover).
struct StageValues(Vec<(&'static str, f32)>);

impl Serialize for StageValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, v) in &self.0 {
            let v = f64::from(*v);
            map.serialize_entry(name, &v.is_finite().then_some(v))?;
        }
        map.end()
    }
}

fn stage_values(values: &[(StageId, f32)]) -> StageValues {
    // Sorted by name, a later value of a name replacing the earlier, as a map's inserts do
    // (a handful of stages: inserted in place, no sort compiled in for them).
    let mut named: Vec<(&'static str, f32)> = Vec::with_capacity(values.len());
    for &(stage, v) in values {
        let name = name_of(stage);
        match named.binary_search_by(|&(n, _)| n.cmp(name)) {
            Ok(i) => named[i].1 = v,
            Err(i) => named.insert(i, (name, v)),
        }
    }
    StageValues(named)
}

impl From<CellInfo> for CellJs {
    fn from(info: CellInfo) -> CellJs {
        CellJs {
            query: info.query,
            key: info.key,
            values: stage_values(&info.values),
            gate: info
                .gate
                .map(|(alpha, beta, gamma)| GateJs { alpha, beta, gamma }),
            row_sum: stage_values(&info.row_sums),
            sink: stage_values(&info.sink),
            sink_cell: info.sink_cell,
            lambda: info.lambda,
            output_gate: info.output_gate,
            masked: info.masked,
        }
    }
}

/// `{ d_model, trained, label, mechanism: string | null, trained_with: SettingsJs | null,
/// pretrained, layers }`: `pretrained` for a pretrained model (no mechanism of its own, no
/// trained settings), `layers` its layers (1 for the one-layer models).
#[derive(Serialize)]
pub(super) struct ModelJs<'a> {
    pub d_model: usize,
    pub trained: bool,
    pub label: &'a str,
    pub mechanism: Option<&'static str>,
    pub trained_with: Option<SettingsJs>,
    pub pretrained: bool,
    pub layers: usize,
}

/// `{ label: "positive" | "negative", probability, positive, unknown_at, tokens }`:
/// `unknown_at` lists the positions (from 0, in the view's `tokens`) of the tokens the model's
/// vocabulary does not know (they read as `<unk>`), of `tokens`.
#[derive(Serialize)]
pub(super) struct PredictionJs {
    pub label: &'static str,
    pub probability: f32,
    pub positive: f32,
    pub unknown_at: Vec<usize>,
    pub tokens: usize,
}

/// `{ name, stages: string[], parameters: string[], final_stage, compare }`: one mechanism of
/// the registry, for `mechanisms()`; `compare` says the compare view shows it by default.
#[derive(Serialize)]
pub(super) struct MechanismJs {
    name: &'static str,
    stages: Vec<&'static str>,
    parameters: Vec<&'static str>,
    final_stage: &'static str,
    compare: bool,
}

/// The mechanisms the page's compare view sets side by side by default: ordinary attention,
/// the seed article's mechanism and the published Differential Transformer.
const COMPARED: [MechanismKind; 3] = [
    MechanismKind::Standard,
    MechanismKind::ShiftDiff,
    MechanismKind::DiffTransformer,
];

impl MechanismJs {
    pub(super) fn new(kind: MechanismKind) -> MechanismJs {
        MechanismJs {
            compare: COMPARED.contains(&kind),
            name: name_of(kind),
            stages: kind
                .stages(Difference::Symmetric)
                .into_iter()
                .map(name_of)
                .collect(),
            parameters: kind.parameters().iter().map(|&p| name_of(p)).collect(),
            final_stage: name_of(kind.final_stage()),
        }
    }
}

/// `{ rows, cols, row, col, data: Float32Array }`: a window of one map, row-major.
pub(super) fn window_js(
    map: &ndarray::Array2<f32>,
    row: usize,
    col: usize,
) -> Result<JsValue, JsError> {
    let data: Vec<f32> = map.iter().copied().collect();
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &JsValue::from_str(k), v);
    set("rows", &JsValue::from(map.nrows() as u32))
        .and_then(|_| set("cols", &JsValue::from(map.ncols() as u32)))
        .and_then(|_| set("row", &JsValue::from(row as u32)))
        .and_then(|_| set("col", &JsValue::from(col as u32)))
        .and_then(|_| set("data", &js_sys::Float32Array::from(data.as_slice()).into()))
        .map_err(|_| JsError::new("cannot build the window object"))?;
    Ok(out.into())
}
