//! The page's one handle, [`Explorer`]: it owns the sentence, the controls and every cached
//! map on the Rust side. JavaScript sends one settings patch per change (`update`), which
//! returns one frame (the settings as the engine has them and what to draw and say), renders
//! (`render`), and asks about cells (`labels`, `cell`, `window`); maps never cross the boundary
//! on a slider tick. Errors are `Error` objects whose message names the
//! control or field at fault.
//!
//! Here are the handle, its controls and its model; its other methods are split by concern:
//! drawing in `render`, what the page asks about the maps drawn in `hover`, specs and exports
//! in `files`, the work in pieces between frames in `work`.

use wasm_bindgen::prelude::*;

use super::grid::{Fitted, LegendScale};
use super::js::{
    choice, js_error, to_js, FrameJs, LabelsJs, ModelJs, PredictionJs, SettingsJs, SettingsPatchJs,
    TokensJs, ViewJs,
};
use diffattn::engine::StageId;
use diffattn::explorer;
use diffattn::model::Model;
use diffattn::names::name_of;
use diffattn::render::{FrameParts, HeatmapLayout, RowLayout, Theme, Viewport};
use diffattn_canvas::Painter;
use std::rc::Rc;

use super::render::{LabelsFrom, SharedLabels};

pub(super) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The page's one handle: owns the sentence, the controls and every cached map.
#[wasm_bindgen]
pub struct Explorer {
    pub(super) state: explorer::Explorer,
    /// The last typed sentence, restored when a loaded spec is closed.
    pub(super) text: String,
    pub(super) theme: Theme,
    /// The word the colorbar legend uses for masked cells, in the page's language.
    pub(super) masked_label: String,
    /// The word for a (nearly) constant map's colorbar, in the page's language.
    pub(super) constant_label: String,
    /// The word for a query row in the row view's title.
    pub(super) row_word: String,
    /// The word under the learned sink's strip (`"sink"`), in the page's language.
    pub(super) sink_label: String,
    /// Whether the maps drawn together share colour scales by kind (`set_shared_scale`).
    pub(super) shared_scale: bool,
    /// The part of the maps to draw (`set_viewport`), fitted to each map as it is drawn.
    pub(super) viewport: Viewport,
    /// The layouts of the last maps drawn by `render`, with the stage and the part of the map
    /// each shows, for hit-testing and highlights.
    pub(super) layouts: Vec<(StageId, HeatmapLayout, Viewport)>,
    /// The parts of its frame each of the last maps drew (its labels: `labels_drawn`).
    pub(super) drawn_parts: Vec<FrameParts>,
    /// The layout of the last row view drawn by `render_row`.
    pub(super) row_layout: Option<RowLayout>,
    /// The grid the page fitted the maps to (`fit_grid`), for the next render.
    pub(super) fitted: Option<Fitted>,
    /// The scales the last maps drawn share, for `render_legend`.
    pub(super) legend: Vec<LegendScale>,
    /// Whether any of the last maps drawn has cells the mask forbids.
    pub(super) legend_masked: bool,
    pub(super) painter: Painter,
    /// The last render's labels as measured, and what from (`shared_labels`).
    pub(super) labels_memo: Option<(LabelsFrom, Rc<SharedLabels>)>,
    /// The last `labels()` handed to JavaScript: the rows and keys, and the object.
    pub(super) labels_js: Option<(Vec<String>, Vec<String>, JsValue)>,
}

impl Default for Explorer {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl Explorer {
    /// A handle over the untrained seeded model, with an empty sentence and the default
    /// settings.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Explorer {
        Explorer {
            state: explorer::Explorer::new(Model::untrained()),
            text: String::new(),
            theme: Theme::light(),
            masked_label: "masked".to_string(),
            constant_label: "constant".to_string(),
            row_word: "row".to_string(),
            sink_label: "sink".to_string(),
            shared_scale: true,
            viewport: Viewport::default(),
            layouts: Vec::new(),
            drawn_parts: Vec::new(),
            row_layout: None,
            fitted: None,
            legend: Vec::new(),
            legend_masked: false,
            painter: Painter::default(),
            labels_memo: None,
            labels_js: None,
        }
    }

    /// Tokenises and embeds `text`. Returns `{ tokens, total, truncated }`.
    pub fn set_text(&mut self, text: &str) -> Result<JsValue, JsError> {
        self.text = text.to_string();
        let info = self.state.set_text(text);
        to_js(&TokensJs {
            tokens: &info.tokens,
            total: info.total,
            truncated: info.truncated,
        })
    }

    /// Changes any of the settings at once (a patch of `SettingsJs`'s keys, the schema's:
    /// `{ shift: 3 }`, `{ mechanism: "cosine", tau: 4 }`; `head` from 1; `lambda: null` is λ
    /// back to the learned one) and returns the frame the page paints from (see `frame`).
    /// Throws an `Error` naming the setting for an unknown key, a wrong type or a value the
    /// engine refuses; then nothing changes (`frame()` reads it). A new mechanism snaps the
    /// heads to the nearest count it allows: the frame says so.
    pub fn update(&mut self, patch: JsValue) -> Result<JsValue, JsError> {
        let patch = SettingsPatchJs::from_js(patch)?;
        self.state.update(&patch).map_err(js_error)?;
        self.current_frame()
    }

    /// What the page paints its controls, readouts and layout from after a change, read once:
    /// `{ settings: SettingsJs, view: ViewJs }`, the settings as the engine now has them (the λ
    /// shown, learned or chosen) and what to draw and say. Computes no map (V2's λ table at
    /// most, for its mean).
    #[wasm_bindgen(js_name = frame)]
    pub fn current_frame(&mut self) -> Result<JsValue, JsError> {
        // A V2 λ table that cannot be computed is the render's error to report.
        let _ = self.state.prepare_lambda();
        to_js(&FrameJs {
            settings: self.settings_js(),
            view: ViewJs::new(&self.state),
        })
    }

    /// Every setting's current value (see `SettingsJs`): the `settings` of `frame()`.
    pub fn settings(&mut self) -> Result<JsValue, JsError> {
        let _ = self.state.prepare_lambda();
        to_js(&self.settings_js())
    }

    /// What to draw and say now (see `ViewJs`): the `view` of `frame()`.
    pub fn view(&self) -> Result<JsValue, JsError> {
        to_js(&ViewJs::new(&self.state))
    }

    /// The row and key labels: `{ rows: string[], keys: string[] }`; the same object again
    /// while they are the same (the page asks on every render).
    pub fn labels(&mut self) -> Result<JsValue, JsError> {
        let keys = self.state.key_labels();
        if let Some((rows, memo_keys, labels)) = &self.labels_js {
            if rows == self.state.labels() && *memo_keys == keys {
                return Ok(labels.clone());
            }
        }
        let labels = to_js(&LabelsJs {
            rows: self.state.labels(),
            keys: &keys,
        })?;
        self.labels_js = Some((self.state.labels().to_vec(), keys, labels.clone()));
        Ok(labels)
    }

    /// `"light" | "dark"`: the colours of titles, labels and background.
    pub fn set_theme(&mut self, theme: &str) -> Result<(), JsError> {
        self.theme = match theme {
            "light" => Theme::light(),
            "dark" => Theme::dark(),
            other => {
                return Err(JsError::new(&format!(
                    "theme: unknown {other:?}; expected \"light\" or \"dark\""
                )))
            }
        };
        Ok(())
    }

    /// The words the drawings use for masked cells, a constant map, a row and the learned
    /// sink's strip (the page passes its translations).
    pub fn set_labels(&mut self, masked: &str, constant: &str, row: &str, sink: &str) {
        self.masked_label = masked.to_string();
        self.constant_label = constant.to_string();
        self.row_word = row.to_string();
        self.sink_label = sink.to_string();
    }

    /// Whether the maps drawn together share colour scales: attention maps one (sequential from
    /// 0, or diverging if one of them is negative), differences one symmetric scale, the gate
    /// its unit scale; so the same value has the same colour in each. Otherwise every map has
    /// its own. Changes nothing until the next render.
    pub fn set_shared_scale(&mut self, shared: bool) {
        self.shared_scale = shared;
    }

    /// Back to the learned λ of the Differential Transformers (the trained model's or the
    /// loaded layer's; V2's λ per token and head) after the λ slider moved, as the patch
    /// `{ lambda: null }`; recomputes only `A1 − λ·A2` at the next render. Returns `settings()`.
    pub fn reset_lambda(&mut self) -> Result<JsValue, JsError> {
        self.state.reset_lambda();
        self.settings()
    }
}

impl Explorer {
    /// The settings as shown: λ the chosen or the learned one.
    fn settings_js(&self) -> SettingsJs {
        let mut shown = *self.state.settings();
        shown.shift.lambda = self.state.lambda_shown();
        SettingsJs::new(
            &shown,
            self.state.head(),
            self.state.gate_is_learned(),
            self.state.lambda_is_learned(),
        )
    }
}

#[wasm_bindgen]
impl Explorer {
    /// How often each cache layer was recomputed:
    /// `{ projections, maps, shift_stages, lambda }`.
    pub fn recomputations(&self) -> Result<JsValue, JsError> {
        /// `{ projections, maps, shift_stages, lambda }`
        #[derive(serde::Serialize)]
        struct RecomputationsJs {
            projections: u64,
            maps: u64,
            shift_stages: u64,
            lambda: u64,
        }
        let r = self.state.recomputations();
        to_js(&RecomputationsJs {
            projections: r.projections,
            maps: r.maps,
            shift_stages: r.shift_stages,
            lambda: r.lambda,
        })
    }

    /// The model in use (see `ModelJs`).
    pub fn model_info(&self) -> Result<JsValue, JsError> {
        let model = self.state.model();
        let trained_with = self.state.trained_settings().map(|mut s| {
            s.shift.lambda = self.state.trained_lambda();
            SettingsJs::new(&s, 0, true, true)
        });
        if let Some(pretrained) = self.state.pretrained() {
            return to_js(&ModelJs {
                d_model: pretrained.d_model,
                trained: true,
                label: &pretrained.name,
                mechanism: None,
                trained_with: None,
                pretrained: true,
                layers: pretrained.layers,
            });
        }
        to_js(&ModelJs {
            d_model: model.d_model(),
            trained: model.trained,
            label: &model.label,
            mechanism: model.trained_parts().map(|t| name_of(t.mechanism.kind())),
            trained_with,
            pretrained: false,
            layers: 1,
        })
    }

    /// Draws the sentence with a trained model read from the bytes of a `weights/*.bin` file,
    /// at the settings it was trained with. Returns `model_info()`; throws an `Error` naming
    /// the problem for a truncated or corrupt file (the current model stays).
    pub fn load_model(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        let model = Model::from_bytes(bytes).map_err(|e| js_error(format!("weights: {e}")))?;
        self.state.set_model(model);
        self.model_info()
    }

    /// Back to the untrained seeded model; the settings stay (heads snap to a valid count).
    pub fn use_untrained(&mut self) -> Result<JsValue, JsError> {
        self.state.set_model(Model::untrained());
        self.model_info()
    }

    /// Whether the trained model's sentiment applies to what is drawn (then `prediction`
    /// needs every head).
    pub fn predicts(&self) -> bool {
        self.state.predicts()
    }

    /// The trained model's sentiment under the current settings:
    /// `{ label, probability, positive }`, or `undefined` (untrained model, spec, empty
    /// sentence, or a mechanism other than the model's).
    pub fn prediction(&mut self) -> Result<JsValue, JsError> {
        match self.state.prediction().map_err(js_error)? {
            Some(p) => to_js(&PredictionJs {
                label: p.label.as_str(),
                probability: p.probability,
                positive: p.positive,
                unknown_at: self.state.unknown_tokens().unwrap_or_default(),
                tokens: self.state.len(),
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

impl Explorer {
    /// The stage named `name`, if the current mechanism shows it.
    pub(super) fn stage_shown(&self, name: &str) -> Result<StageId, JsError> {
        let stage: StageId = choice("stage", name)?;
        if self.state.stages().contains(&stage) {
            Ok(stage)
        } else {
            Err(JsError::new(&format!(
                "stage: {} does not show {:?}",
                name_of(self.state.kind()),
                name
            )))
        }
    }
}

/// Test hooks, in the benchmark build only (cargo feature `bench`): the page's wasm never
/// carries them.
#[cfg(feature = "bench")]
#[wasm_bindgen]
impl Explorer {
    /// Panics, so tests/e2e/component.test.mjs can check what a real Rust panic does to the
    /// engine wrapper (a trap, a fresh handle, the old one freed).
    pub fn trap_for_tests(&mut self) {
        panic!("trap_for_tests: a deliberate panic");
    }
}
