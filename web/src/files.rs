//! Specs and exports: a user's spec drawn (`load_spec`, `load_spec_bytes`) and left
//! (`clear_spec`), what is drawn exported as a spec file (`export_json`) or as SVG
//! (`export_svg`, `export_panel_svg`).

use wasm_bindgen::prelude::*;

use super::handle::Explorer;
use super::js::{js_error, to_js, TokensJs};
use diffattn::engine::StageId;
use diffattn::render::Viewport;
use diffattn::render::{constant_value, heatmap_svg, panel_svg, Frame, Panel, Scale, Strip, Theme};

#[wasm_bindgen]
impl Explorer {
    /// Draws a user's spec (the CLI's JSON). Returns `{ tokens, total, truncated }`; throws an
    /// `Error` whose message names the field at fault.
    pub fn load_spec(&mut self, json: &str) -> Result<JsValue, JsError> {
        self.state.load_spec(json).map_err(js_error)?;
        self.spec_tokens()
    }

    /// Draws a spec file's bytes: JSON, or the binary form (a `.safetensors` file, DESIGN.md
    /// §7.8), as `diffattn stages` reads them. Returns `{ tokens, total, truncated }`; throws
    /// an `Error` whose message names the field at fault, or says why the page cannot draw it
    /// (too many tokens or cells); then the page stays as it was.
    pub fn load_spec_bytes(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        self.state.load_spec_bytes(bytes).map_err(js_error)?;
        self.spec_tokens()
    }

    /// Leaves a loaded spec and draws the last typed sentence again.
    pub fn clear_spec(&mut self) -> Result<JsValue, JsError> {
        let text = std::mem::take(&mut self.text);
        self.set_text(&text)
    }

    /// What is drawn as a spec file (DESIGN.md §6: the vectors, the weights, the settings and
    /// learned parameters, the token labels) with the stages computed from it, as pretty JSON.
    /// `load_spec` opens it again and draws the same maps.
    pub fn export_json(&self) -> Result<String, JsError> {
        let spec = self.state.export_spec().map_err(js_error)?;
        serde_json::to_string_pretty(&spec).map_err(js_error)
    }

    /// One stage of the shown head (its name, e.g. `"d"`) as a standalone SVG document: the
    /// part the viewport shows, as on the page.
    pub fn export_svg(&mut self, stage: &str) -> Result<String, JsError> {
        self.stage_svg(stage)
    }

    /// Every stage of the shown head side by side as one SVG document (the viewport's part).
    pub fn export_panel_svg(&mut self) -> Result<String, JsError> {
        self.panels_svg()
    }
}

/// The SVG exports.
impl Explorer {
    fn stage_svg(&mut self, stage: &str) -> Result<String, JsError> {
        let stage = self.stage_shown(stage)?;
        self.state.compute().map_err(js_error)?;
        let labels = self.shared_labels(&[stage]);
        let map = self
            .state
            .map(stage)
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let scale = self.export_scale(stage, map);
        let shown = self.stage_viewport(stage, map.dim());
        let theme = Theme::light();
        let shares = self.state.sink_shares(stage, self.state.head());
        let mut frame = self.frame(stage, stage.label(), &labels, shown, &scale, &theme, 14.0);
        frame.constant = constant_value(map);
        frame.strip = self.strip_of(shares.as_deref(), shown);
        Ok(heatmap_svg(shown.slice(map), &frame, 640, 600))
    }

    fn panels_svg(&mut self) -> Result<String, JsError> {
        self.state.compute().map_err(js_error)?;
        let stages = self.state.stages();
        let labels = self.shared_labels(&stages);
        let theme = Theme::light();
        let maps = stages
            .into_iter()
            .map(|s| {
                let map = self.state.map(s)?;
                let shown = self.stage_viewport(s, map.dim());
                let shares = self.state.sink_shares(s, self.state.head());
                Some((s, map, self.export_scale(s, map), shown, shares))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let panels: Vec<Panel> = maps
            .iter()
            .map(|(s, map, scale, shown, shares)| Panel {
                map: shown.slice(*map),
                frame: Frame {
                    constant: constant_value(*map),
                    strip: self.strip_of(shares.as_deref(), *shown),
                    ..self.frame(*s, s.label(), &labels, *shown, scale, &theme, 14.0)
                },
            })
            .collect();
        Ok(panel_svg(&panels, 520, 520))
    }
}

impl Explorer {
    /// The colour scale of the shown head's map of `stage` in an export: its own, reaching the
    /// largest share of its sink strip when it has one.
    fn export_scale(&self, stage: StageId, map: ndarray::ArrayView2<f32>) -> Scale {
        match self.drawn_stats(stage, self.state.head()) {
            Some(stats) => Scale::from_stats(stage.scale_kind(), stats),
            None => Scale::for_values(stage.scale_kind(), map),
        }
    }

    /// The sink strip of a map drawn from `shown`, from its shares (`None`: no strip).
    fn strip_of<'a>(&'a self, shares: Option<&'a [f32]>, shown: Viewport) -> Option<Strip<'a>> {
        shares.map(|s| Strip {
            values: s.get(shown.row_range()).unwrap_or_default(),
            label: &self.sink_label,
        })
    }

    /// The tokens of the loaded spec: `{ tokens, total, truncated }`.
    fn spec_tokens(&self) -> Result<JsValue, JsError> {
        let tokens = self.state.labels();
        to_js(&TokensJs {
            tokens,
            total: tokens.len(),
            truncated: false,
        })
    }
}
