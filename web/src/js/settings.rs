//! Every setting's value (`SettingsJs`, the `settings` of a frame) and the patch
//! `Explorer.update` takes (`SettingsPatchJs`), both walked over the schema (`diffattn::schema`):
//! no setting is named here, so a new one needs nothing in this file. Unknown keys, wrong types
//! and unknown names are errors naming the key.

use serde::ser::{Serialize, SerializeMap, Serializer};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use diffattn::explorer::{Settings, SettingsPatch};
use diffattn::schema::value::{Raw, Value};
use diffattn::schema::{self, LearnedBy};

/// Every setting of the schema the engine holds, `{ mechanism, heads, causal, tau, window,
/// segment, head, shift, difference, fill, renormalize, alpha, beta, gamma, lambda, …,
/// gate_learned, lambda_learned }` (the generated `www/explorer/settings.generated.js` lists
/// them): choices by name, `head` from 1, as the page shows it. `gate_learned` says the gate
/// comes from the trained model or the loaded spec (one `alpha, beta, gamma` per head; the
/// three values here are their means), not the sliders; `lambda_learned` likewise for λ (V2:
/// `lambda` is the mean of its λ per token and head).
pub(crate) struct SettingsJs {
    settings: Settings,
    head: usize,
    gate_learned: bool,
    lambda_learned: bool,
}

impl SettingsJs {
    /// `settings` as shown: an unset value (λ) is the learned one where `settings` has it
    /// filled in, else the schema's `unset` value.
    pub(crate) fn new(
        settings: &Settings,
        head: usize,
        gate_learned: bool,
        lambda_learned: bool,
    ) -> SettingsJs {
        SettingsJs {
            settings: *settings,
            head,
            gate_learned,
            lambda_learned,
        }
    }
}

impl Serialize for SettingsJs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for key in schema::engine_keys() {
            match self.settings.value(key, self.head) {
                Some(Value::Int(n)) => map.serialize_entry(key.name, &n)?,
                Some(Value::Float(x)) => map.serialize_entry(key.name, &x)?,
                Some(Value::Bool(b)) => map.serialize_entry(key.name, &b)?,
                Some(Value::Name(s)) => map.serialize_entry(key.name, s)?,
                Some(Value::Unset) => map.serialize_entry(key.name, &key.unset)?,
                None => {}
            }
        }
        map.serialize_entry(LearnedBy::Gate.flag(), &self.gate_learned)?;
        map.serialize_entry(LearnedBy::Lambda.flag(), &self.lambda_learned)?;
        map.end()
    }
}

/// What `Explorer.update` takes: any of the settings of `SettingsJs` (but the `…_learned`
/// flags), with the same names; `lambda: null` is λ back to the learned one. Anything else is
/// an error naming it. `head` counts from 1.
pub(crate) struct SettingsPatchJs;

impl SettingsPatchJs {
    /// Reads a patch object into the explorer's patch (`head` from 1 to from 0). Unknown keys
    /// (with the closest known one), wrong types and unknown names are errors naming the key;
    /// unknown keys are found before any value is read.
    pub(crate) fn from_js(value: JsValue) -> Result<SettingsPatch, JsError> {
        let Some(object) = value
            .dyn_ref::<js_sys::Object>()
            .filter(|_| value.is_object())
        else {
            return Err(JsError::new(&format!(
                "settings: invalid type: {}, expected an object",
                raw_of(&value)
            )));
        };
        let entries: Vec<(String, JsValue)> = js_sys::Object::entries(object)
            .iter()
            .map(|entry| {
                let pair = js_sys::Array::from(&entry);
                (pair.get(0).as_string().unwrap_or_default(), pair.get(1))
            })
            .filter(|(_, v)| !v.is_undefined())
            .collect();
        let mut patch = SettingsPatch::default();
        for (key, _) in &entries {
            if schema::key(key).is_none_or(|k| !k.is_engine()) {
                return Err(JsError::new(&schema::not_a_setting(key)));
            }
        }
        for (key, v) in &entries {
            patch.set(key, &raw_of(v)).map_err(|e| JsError::new(&e))?;
        }
        Ok(patch)
    }
}

/// A JavaScript value as the schema reads it.
fn raw_of(value: &JsValue) -> Raw {
    if let Some(n) = value.as_f64() {
        Raw::Number(n)
    } else if let Some(b) = value.as_bool() {
        Raw::Bool(b)
    } else if let Some(s) = value.as_string() {
        Raw::Text(s)
    } else if value.is_null() || value.is_undefined() {
        Raw::Null
    } else if js_sys::Array::is_array(value) {
        Raw::Other("sequence".to_string())
    } else {
        Raw::Other("map".to_string())
    }
}
