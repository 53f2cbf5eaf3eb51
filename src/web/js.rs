//! The JavaScript-shaped values of the boundary: what `Explorer`'s methods take and return,
//! with their JavaScript shapes written beside each struct. In sync with
//! `www/explorer/engine.js`, which documents the same shapes from its side.
//!
//! Names are the crate's own (`crate::names`): a mechanism is `"shift_diff"`, a stage `"fused"`,
//! a control `"shift"`, everywhere.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::engine::shift_diff::{Difference, Renormalize};
use crate::engine::{Columns, MechanismKind, StageId};
use crate::explorer::{self, CellInfo, Settings, SettingsPatch};
use crate::names::{self, name_of, Named};

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

/// Every control: `{ mechanism, heads, head, causal, shift, difference, fill, renormalize,
/// alpha, beta, gamma, tau, window, segment, lambda, gate_learned, lambda_learned }`. `head`
/// counts from 1, as the page shows it. `gate_learned` says the gate comes from the trained
/// model or the loaded spec (one `alpha, beta, gamma` per head; the three values here are
/// their means), not the sliders; `lambda_learned` likewise for λ (V2: `lambda` is the mean
/// of its λ per token and head).
#[derive(Serialize)]
pub(super) struct SettingsJs {
    mechanism: &'static str,
    heads: usize,
    head: usize,
    causal: bool,
    shift: i64,
    difference: &'static str,
    fill: &'static str,
    renormalize: &'static str,
    alpha: f32,
    beta: f32,
    gamma: f32,
    tau: f32,
    window: usize,
    segment: usize,
    lambda: f32,
    gate_learned: bool,
    lambda_learned: bool,
}

impl SettingsJs {
    pub(super) fn new(
        s: &Settings,
        head: usize,
        gate_learned: bool,
        lambda_learned: bool,
    ) -> SettingsJs {
        SettingsJs {
            mechanism: name_of(s.maps.mechanism),
            heads: s.maps.heads,
            head: head + 1,
            causal: s.maps.causal,
            shift: s.shift.shift,
            difference: name_of(s.shift.difference),
            fill: name_of(s.shift.fill),
            renormalize: name_of(s.shift.renormalize),
            alpha: s.shift.alpha,
            beta: s.shift.beta,
            gamma: s.shift.gamma,
            tau: s.maps.tau,
            window: s.maps.window,
            segment: s.maps.segment,
            lambda: s.shift.lambda,
            gate_learned,
            lambda_learned,
        }
    }
}

/// The fields of `SettingsPatchJs`, for the check of unknown keys (a test keeps the two in step).
pub(super) const SETTING_NAMES: [&str; 15] = [
    "mechanism",
    "heads",
    "head",
    "causal",
    "shift",
    "difference",
    "fill",
    "renormalize",
    "alpha",
    "beta",
    "gamma",
    "tau",
    "window",
    "segment",
    "lambda",
];

/// What `Explorer.update` takes: any of the controls of `SettingsJs` (but `gate_learned`),
/// with the same names; anything else is an error naming it. `head` counts from 1.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsPatchJs {
    pub mechanism: Option<String>,
    pub heads: Option<usize>,
    pub head: Option<usize>,
    pub causal: Option<bool>,
    pub shift: Option<i64>,
    pub difference: Option<String>,
    pub fill: Option<String>,
    pub renormalize: Option<String>,
    pub alpha: Option<f32>,
    pub beta: Option<f32>,
    pub gamma: Option<f32>,
    pub tau: Option<f32>,
    pub window: Option<usize>,
    pub segment: Option<usize>,
    pub lambda: Option<f32>,
}

impl SettingsPatchJs {
    /// Reads a patch object into the explorer's patch (`head` from 1 to from 0). Unknown
    /// fields, wrong types and unknown names are errors naming the field and, for a near miss,
    /// the closest known name.
    pub(super) fn from_js(value: JsValue) -> Result<SettingsPatch, JsError> {
        // serde-wasm-bindgen reads a struct by looking up its own fields only, so it would not
        // see an unknown one: the keys are checked first.
        if let Some(object) = value.dyn_ref::<js_sys::Object>() {
            for key in js_sys::Object::keys(object).iter() {
                let key = key.as_string().unwrap_or_default();
                if !SETTING_NAMES.contains(&key.as_str()) {
                    let hint = names::closest(&key, &SETTING_NAMES)
                        .map(|k| format!(" (did you mean {k:?}?)"))
                        .unwrap_or_default();
                    return Err(JsError::new(&format!("{key}: not a setting{hint}")));
                }
            }
        }
        let raw: SettingsPatchJs = match serde_wasm_bindgen::from_value(value.clone()) {
            Ok(raw) => raw,
            Err(e) => return Err(JsError::new(&type_error(&value, &e.to_string()))),
        };
        let head = match raw.head {
            Some(0) => return Err(JsError::new("head: heads count from 1, found 0")),
            h => h.map(|h| h - 1),
        };
        Ok(SettingsPatch {
            mechanism: raw
                .mechanism
                .as_deref()
                .map(|m| choice("mechanism", m))
                .transpose()?,
            heads: raw.heads,
            head,
            causal: raw.causal,
            shift: raw.shift,
            difference: raw
                .difference
                .as_deref()
                .map(|d| choice("difference", d))
                .transpose()?,
            fill: raw.fill.as_deref().map(|f| choice("fill", f)).transpose()?,
            renormalize: raw
                .renormalize
                .as_deref()
                .map(|r| choice("renormalize", r))
                .transpose()?,
            alpha: raw.alpha,
            beta: raw.beta,
            gamma: raw.gamma,
            tau: raw.tau,
            window: raw.window,
            segment: raw.segment,
            lambda: raw.lambda,
        })
    }
}

/// serde-wasm-bindgen does not say which field had the wrong type: try each key alone to find
/// it, and name it (`shift: invalid type: string "two", expected i64`).
fn type_error(value: &JsValue, message: &str) -> String {
    if let Some(object) = value.dyn_ref::<js_sys::Object>() {
        for entry in js_sys::Object::entries(object).iter() {
            let pair = js_sys::Array::from(&entry);
            let alone = js_sys::Object::new();
            if js_sys::Reflect::set(&alone, &pair.get(0), &pair.get(1)).is_err() {
                continue;
            }
            if let Err(e) = serde_wasm_bindgen::from_value::<SettingsPatchJs>(alone.into()) {
                return format!("{}: {e}", pair.get(0).as_string().unwrap_or_default());
            }
        }
    }
    format!("settings: {message}")
}

/// `{ id, label, formula, scale: "sequential" | "unit" | "diverging", columns: "keys" |
/// "segments" | "heads" }`: `id` is the stage's name (`"fused"`), `label` what a learner reads
/// (`"A′"`), `columns` what the map's columns are (V2's λ has one per head).
#[derive(Serialize)]
pub(super) struct StageJs {
    id: &'static str,
    label: &'static str,
    formula: &'static str,
    scale: &'static str,
    columns: &'static str,
}

impl StageJs {
    pub(super) fn new(kind: MechanismKind, stage: StageId, s: &Settings) -> StageJs {
        StageJs {
            id: name_of(stage),
            label: stage.label(),
            formula: kind.formula(
                stage,
                s.shift.difference == Difference::Symmetric,
                s.shift.renormalize == Renormalize::Softmax,
            ),
            scale: name_of(stage.scale_kind()),
            columns: match stage.columns() {
                Columns::Keys => "keys",
                Columns::Segments => "segments",
                Columns::Heads => "heads",
            },
        }
    }
}

/// Everything the page draws and says, so that it never branches on the mechanism:
/// `{ mechanism, mechanism_choices: string[], stages: StageJs[], final_stage,
///    parameters: string[], head_choices: number[], heads, head, head_width, d_model,
///    tokens: number, keys: number, readout: string | null, moved_away: string[],
///    gate_learned, lambda_learned, lambda_per_token, spec, layer: LayerJs | null,
///    masked: boolean }`.
/// `mechanism_choices` are the mechanisms that can draw what is shown (every one for the
/// sentence; for a loaded layer those its weights fit); `parameters` names the controls the
/// mechanism takes (`"shift"`, `"difference"`, `"fill"`, `"renormalize"`, `"gate"`, `"tau"`,
/// `"window"`, `"segment"`, `"lambda"`); `moved_away` the controls whose values left the
/// trained (or loaded) ones; `lambda_per_token` whether the learned λ is one per token and
/// head (V2) rather than one per layer; `layer` what the loaded spec says about its layer; `masked`
/// whether some cell of the maps is masked.
#[derive(Serialize)]
pub(super) struct ViewJs {
    pub mechanism: &'static str,
    pub mechanism_choices: Vec<&'static str>,
    pub stages: Vec<StageJs>,
    pub final_stage: &'static str,
    pub parameters: Vec<&'static str>,
    pub head_choices: Vec<usize>,
    pub heads: usize,
    pub head: usize,
    pub head_width: usize,
    pub d_model: usize,
    pub tokens: usize,
    pub keys: usize,
    pub readout: Option<String>,
    pub moved_away: Vec<&'static str>,
    pub gate_learned: bool,
    pub lambda_learned: bool,
    pub lambda_per_token: bool,
    pub spec: bool,
    pub layer: Option<LayerJs>,
    pub masked: bool,
}

/// `{ model: string | null, layer: number | null, labelled, heads, kv_heads, head_dim,
///    d_model, rope: { layout: "half" | "interleaved", theta: number | null } | null,
///    biases: boolean }`: a loaded layer's name, index and head layout.
#[derive(Serialize)]
pub(super) struct LayerJs {
    model: Option<String>,
    layer: Option<u64>,
    labelled: bool,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    d_model: usize,
    rope: Option<RopeJs>,
    biases: bool,
}

/// `{ layout, theta }`
#[derive(Serialize)]
struct RopeJs {
    layout: &'static str,
    theta: Option<f64>,
}

impl From<explorer::LayerInfo> for LayerJs {
    fn from(info: explorer::LayerInfo) -> LayerJs {
        LayerJs {
            model: info.model,
            layer: info.layer,
            labelled: info.labelled,
            heads: info.heads,
            kv_heads: info.kv_heads,
            head_dim: info.head_dim,
            d_model: info.d_model,
            rope: info.rope.map(|(layout, theta)| RopeJs {
                layout: name_of(layout),
                theta,
            }),
            biases: info.biases,
        }
    }
}

impl ViewJs {
    pub(super) fn new(state: &explorer::Explorer) -> ViewJs {
        let settings = state.settings();
        let kind = state.kind();
        let (mask, offset) = state.mask();
        let (rows, keys) = (state.len(), state.key_count());
        ViewJs {
            mechanism: name_of(kind),
            mechanism_choices: state.mechanism_choices().into_iter().map(name_of).collect(),
            stages: state
                .stages()
                .into_iter()
                .map(|s| StageJs::new(kind, s, settings))
                .collect(),
            final_stage: name_of(state.final_stage()),
            parameters: kind.parameters().iter().map(|&p| name_of(p)).collect(),
            head_choices: state.head_choices(),
            heads: settings.maps.heads,
            head: state.head() + 1,
            head_width: state.head_width(),
            d_model: state.d_model(),
            tokens: rows,
            keys,
            readout: state.parameter_readout(),
            moved_away: state.moved_away(),
            gate_learned: state.gate_is_learned(),
            lambda_learned: state.lambda_is_learned(),
            lambda_per_token: kind.lambda_per_token(),
            spec: state.is_spec(),
            layer: state.layer_info().map(LayerJs::from),
            masked: (0..rows).any(|i| mask.allowed_keys(i, offset, keys) != (0..keys)),
        }
    }
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
    pub keys: Vec<String>,
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
///    row_sum: { [stage]: number }, lambda: number | null, masked: boolean }`
#[derive(Serialize)]
pub(super) struct CellJs {
    query: String,
    key: String,
    values: serde_json::Map<String, serde_json::Value>,
    gate: Option<GateJs>,
    row_sum: serde_json::Map<String, serde_json::Value>,
    lambda: Option<f32>,
    masked: bool,
}

/// `{ alpha, beta, gamma }`
#[derive(Serialize)]
struct GateJs {
    alpha: f32,
    beta: f32,
    gamma: f32,
}

fn stage_values(values: &[(StageId, f32)]) -> serde_json::Map<String, serde_json::Value> {
    values
        .iter()
        .map(|(s, v)| {
            (
                name_of(*s).to_string(),
                serde_json::Value::from(f64::from(*v)),
            )
        })
        .collect()
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
            lambda: info.lambda,
            masked: info.masked,
        }
    }
}

/// `{ d_model, trained, label, mechanism: string | null, trained_with: SettingsJs | null }`
#[derive(Serialize)]
pub(super) struct ModelJs<'a> {
    pub d_model: usize,
    pub trained: bool,
    pub label: &'a str,
    pub mechanism: Option<&'static str>,
    pub trained_with: Option<SettingsJs>,
}

/// `{ label: "positive" | "negative", probability, positive, unknown, tokens }`: `unknown`
/// counts the tokens the model's vocabulary does not know (they read as `<unk>`), of `tokens`.
#[derive(Serialize)]
pub(super) struct PredictionJs {
    pub label: &'static str,
    pub probability: f32,
    pub positive: f32,
    pub unknown: usize,
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

/// One head's caches as they cross between the page's handle and its Web Worker's (what
/// `export_head` returns beside the maps; `adopt_start` takes its fields): `{ key, head, mechanism,
/// base, shift, scalars, shapes, stats }`: `key` the head's key (16 hex digits, `head_key()`),
/// `head` from 0, `base` and `shift` which maps (`"attention" | "diff_transformer" |
/// "diff_transformer_v2" | "hierarchical"`, `"none" | "forward" | "symmetric"`), `scalars` the
/// Differential Transformer's λ and λ_init, `shapes` each map's `[rows, columns]`, `stats`
/// each map's `[min, max]`.
#[derive(Serialize)]
pub(super) struct HeadMetaJs {
    pub key: String,
    pub head: usize,
    pub mechanism: String,
    pub base: String,
    pub shift: String,
    pub scalars: Vec<f32>,
    pub shapes: Vec<[usize; 2]>,
    pub stats: Vec<[f32; 2]>,
}

impl HeadMetaJs {
    /// The metadata of `parts` (its maps cross on their own, as transferable buffers).
    pub(super) fn of(parts: &explorer::HeadParts) -> HeadMetaJs {
        HeadMetaJs {
            key: parts.key.to_hex(),
            head: parts.head,
            mechanism: name_of(parts.kind).to_string(),
            base: parts.base.name().to_string(),
            shift: match parts.shift {
                explorer::ShiftKind::None => "none",
                explorer::ShiftKind::Forward => "forward",
                explorer::ShiftKind::Symmetric => "symmetric",
            }
            .to_string(),
            scalars: parts.scalars.clone(),
            shapes: parts.maps.iter().map(|m| [m.nrows(), m.ncols()]).collect(),
            stats: parts.stats.iter().map(|s| [s.min, s.max]).collect(),
        }
    }

    /// The metadata read back from its fields (`stats` flat: `min, max` of each map), or an
    /// error naming the field at fault.
    pub(super) fn parts(
        key: &str,
        head: usize,
        mechanism: &str,
        base: &str,
        shift: &str,
        scalars: Vec<f32>,
        stats: &[f32],
    ) -> Result<explorer::HeadParts, JsError> {
        let bad = |field: &str| JsError::new(&format!("head: bad {field} in a head's metadata"));
        let shift = match shift {
            "none" => explorer::ShiftKind::None,
            "forward" => explorer::ShiftKind::Forward,
            "symmetric" => explorer::ShiftKind::Symmetric,
            _ => return Err(bad("shift")),
        };
        let base = explorer::BaseKind::from_name(base).ok_or_else(|| bad("base"))?;
        if stats.len() != 2 * explorer::HeadParts::map_count(base, shift) {
            return Err(bad("stats"));
        }
        Ok(explorer::HeadParts {
            key: explorer::HeadKey::from_hex(key).ok_or_else(|| bad("key"))?,
            head,
            kind: choice::<MechanismKind>("mechanism", mechanism)?,
            base,
            shift,
            scalars,
            maps: Vec::new(),
            stats: stats
                .chunks_exact(2)
                .map(|p| crate::render::MapStats {
                    min: p[0],
                    max: p[1],
                })
                .collect(),
        })
    }
}
