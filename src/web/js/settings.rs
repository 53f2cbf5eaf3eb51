//! Every control's value (`SettingsJs`, what `settings()` returns) and the patch
//! `Explorer.update` takes (`SettingsPatchJs`), unknown keys and wrong types named.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::choice;
use crate::explorer::{Settings, SettingsPatch};
use crate::names::{self, name_of};

/// Every control: `{ mechanism, heads, head, causal, shift, difference, fill, renormalize,
/// alpha, beta, gamma, tau, window, segment, lambda, gate_learned, lambda_learned }`. `head`
/// counts from 1, as the page shows it. `gate_learned` says the gate comes from the trained
/// model or the loaded spec (one `alpha, beta, gamma` per head; the three values here are
/// their means), not the sliders; `lambda_learned` likewise for λ (V2: `lambda` is the mean
/// of its λ per token and head).
#[derive(Serialize)]
pub(in crate::web) struct SettingsJs {
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
    pub(in crate::web) fn new(
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
pub(in crate::web) const SETTING_NAMES: [&str; 15] = [
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
pub(in crate::web) struct SettingsPatchJs {
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
    pub(in crate::web) fn from_js(value: JsValue) -> Result<SettingsPatch, JsError> {
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
