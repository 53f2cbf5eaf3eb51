//! The page's one handle, [`Explorer`]: it owns the sentence, the controls and every cached
//! map on the Rust side. JavaScript sends one settings patch per change (`update`), renders
//! (`render`), and asks what to draw and say (`view`, `labels`, `cell`, `window`); maps never
//! cross the boundary on a slider tick. Errors are `Error` objects whose message names the
//! control or field at fault.

use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use super::draw::Painter;
use super::js::{
    choice, js_error, to_js, window_js, CellJs, ExtremeJs, ExtremesJs, LabelsJs, ModelJs,
    PredictionJs, RectJs, SettingsJs, SettingsPatchJs, TimingsJs, TokensJs, ViewJs, ViewportJs,
};
use crate::engine::{Columns, ScaleGroup, ScaleKind, StageId};
use crate::explorer;
use crate::model::Model;
use crate::names::name_of;
use crate::render::{constant_of, constant_value, CellMask, Frame, HeatmapLayout, LabelWidths};
#[cfg(feature = "files")]
use crate::render::{heatmap_svg, panel_svg, Panel};
use crate::render::{MapStats, RowChart, RowLayout, RowSeries, Scale, Theme, Viewport};
use plotters::style::RGBColor;

pub(super) fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The error of a file call (a spec read, the JSON or an SVG export) on a build without the
/// cargo feature `files` (the page's first-view builds, docs/PERFORMANCE.md "Size of each
/// build"): the methods stay, so both builds have the same glue, but refuse, never silently.
/// The page's engine wrapper moves its handle to the full build before it makes such a call
/// (www/explorer/engine.js, `Engine#useFull`).
#[cfg(not(feature = "files"))]
fn without_files(method: &str) -> JsError {
    JsError::new(&format!(
        "{method}: this build of diffattn has no spec reader and no exports (built without the cargo feature `files`); the full build (pkg/full/) reads specs and exports JSON and SVG"
    ))
}

/// The page's one handle: owns the sentence, the controls and every cached map.
#[wasm_bindgen]
pub struct Explorer {
    pub(super) state: explorer::Explorer,
    /// The last typed sentence, restored when a loaded spec is closed.
    text: String,
    theme: Theme,
    /// The word the colorbar legend uses for masked cells, in the page's language.
    masked_label: String,
    /// The word for a (nearly) constant map's colorbar, in the page's language.
    constant_label: String,
    /// The word for a query row in the row view's title.
    row_word: String,
    /// Whether the maps drawn together share colour scales by kind (`set_shared_scale`).
    shared_scale: bool,
    /// The part of the maps to draw (`set_viewport`), fitted to each map as it is drawn.
    viewport: Viewport,
    /// The layouts of the last maps drawn by `render`, with the stage and the part of the map
    /// each shows, for hit-testing and highlights.
    layouts: Vec<(StageId, HeatmapLayout, Viewport)>,
    /// The layout of the last row view drawn by `render_row`.
    row_layout: Option<RowLayout>,
    painter: Painter,
    /// A head being adopted map by map (`adopt_start`, `adopt_map`): its metadata and the
    /// maps in so far.
    pub(super) adopting: Option<explorer::HeadParts>,
}

impl Default for Explorer {
    fn default() -> Self {
        Self::new()
    }
}

/// What the maps of one render share: the row labels of the viewport and, per kind of column
/// (keys, segments, heads), the column labels it shows and the widest labels, measured once.
struct SharedLabels {
    rows: Vec<String>,
    by_columns: Vec<(Columns, Vec<String>, LabelWidths)>,
}

impl SharedLabels {
    /// The column labels and label widths of `stage`'s map.
    fn of(&self, stage: StageId) -> (&[String], &LabelWidths) {
        let (_, labels, widths) = self
            .by_columns
            .iter()
            .find(|(c, _, _)| *c == stage.columns())
            .unwrap_or(&self.by_columns[0]);
        (labels, widths)
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
            shared_scale: false,
            viewport: Viewport::default(),
            layouts: Vec::new(),
            row_layout: None,
            painter: Painter::default(),
            adopting: None,
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

    /// Changes any of the controls at once: `{ mechanism?, heads?, head?, causal?, shift?,
    /// difference?, fill?, renormalize?, alpha?, beta?, gamma?, tau?, window? }` (`head` from
    /// 1). Throws an `Error` naming the control for an unknown name, a wrong type or a value
    /// the engine refuses; then nothing changes. A new mechanism snaps the heads to the
    /// nearest count it allows: read `settings()` after.
    pub fn update(&mut self, patch: JsValue) -> Result<(), JsError> {
        let patch = SettingsPatchJs::from_js(patch)?;
        self.state.update(&patch).map_err(js_error)
    }

    /// Every control's current value (see `SettingsJs`).
    pub fn settings(&self) -> Result<JsValue, JsError> {
        to_js(&SettingsJs::new(
            self.state.settings(),
            self.state.head(),
            self.state.gate_is_learned(),
            self.state.lambda_is_learned(),
        ))
    }

    /// What to draw and say now (see `ViewJs`); cheap, so the page may ask after every change.
    pub fn view(&self) -> Result<JsValue, JsError> {
        to_js(&ViewJs::new(&self.state))
    }

    /// The row and key labels: `{ rows: string[], keys: string[] }`.
    pub fn labels(&self) -> Result<JsValue, JsError> {
        to_js(&LabelsJs {
            rows: self.state.labels(),
            keys: self.state.key_labels(),
        })
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

    /// The words the drawings use for masked cells, a constant map and a row (the page
    /// passes its translations).
    pub fn set_labels(&mut self, masked: &str, constant: &str, row: &str) {
        self.masked_label = masked.to_string();
        self.constant_label = constant.to_string();
        self.row_word = row.to_string();
    }

    /// Whether the maps drawn together share colour scales: attention maps one (sequential from
    /// 0, or diverging if one of them is negative), differences one symmetric scale, the gate
    /// its unit scale; so the same value has the same colour in each. Otherwise every map has
    /// its own. Changes nothing until the next render.
    pub fn set_shared_scale(&mut self, shared: bool) {
        self.shared_scale = shared;
    }

    /// Draws stages of the shown head, one per canvas: `stages` by name (`["a", "d"]`), or
    /// every stage of the mechanism in `view().stages` order when empty. Fills each canvas's
    /// width and height attributes (device pixels). Returns `{ compute_ms, draw_ms }`.
    pub fn render(
        &mut self,
        canvases: Vec<HtmlCanvasElement>,
        font_px: f32,
        stages: Vec<String>,
    ) -> Result<JsValue, JsError> {
        let shown = if stages.is_empty() {
            self.state.stages()
        } else {
            stages
                .iter()
                .map(|s| self.stage_shown(s))
                .collect::<Result<Vec<_>, _>>()?
        };
        let t0 = now_ms();
        self.state.compute().map_err(js_error)?;
        let t1 = now_ms();
        let head = self.state.head();
        let labels = self.shared_labels(&shown);
        let drawn: Vec<(StageId, usize)> = shown.iter().map(|&s| (s, head)).collect();
        let scales = self.scales(&drawn);
        self.layouts.clear();
        for ((canvas, &(stage, head)), scale) in canvases.iter().zip(&drawn).zip(scales) {
            let layout = self.draw(canvas, stage, head, stage.label(), font_px, &labels, scale)?;
            self.layouts.push(layout);
        }
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// Draws one stage (its name, e.g. `"fused"`; the final stage when empty) of every head,
    /// one per canvas, computing every head still missing (the page computes them first with
    /// `compute_step`, across frames, when they would take long). Returns
    /// `{ compute_ms, draw_ms }`.
    pub fn render_all_heads(
        &mut self,
        canvases: Vec<HtmlCanvasElement>,
        font_px: f32,
        stage: &str,
    ) -> Result<JsValue, JsError> {
        let t0 = now_ms();
        self.state.compute_all().map_err(js_error)?;
        let t1 = now_ms();
        let stage = if stage.is_empty() {
            self.state.final_stage()
        } else {
            self.stage_shown(stage)?
        };
        let heads = self.state.settings().maps.heads;
        let labels = self.shared_labels(&[stage]);
        let drawn: Vec<(StageId, usize)> =
            (0..heads.min(canvases.len())).map(|h| (stage, h)).collect();
        let scales = self.scales(&drawn);
        self.layouts.clear();
        for ((canvas, &(stage, head)), scale) in canvases.iter().zip(&drawn).zip(scales) {
            let title = format!("{} · {}", stage.label(), head + 1);
            let layout = self.draw(canvas, stage, head, &title, font_px, &labels, scale)?;
            self.layouts.push(layout);
        }
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// The cell under a device-pixel position of the `index`-th canvas of the last render:
    /// `[row, key]` of the whole map (also when a viewport is drawn), or `undefined` outside
    /// the map. A map whose columns are not keys answers with the key its column stands for
    /// (a segment's first token; for V2's λ per head, the first key), so every map highlights
    /// the same query and key.
    pub fn hit(&self, index: usize, x_px: f64, y_px: f64) -> Option<Vec<u32>> {
        let (stage, layout, drawn) = self.layouts.get(index)?;
        let (row, col) = layout.cell_at(x_px, y_px)?;
        let key = self.state.key_of_column(*stage, col + drawn.col);
        Some(vec![(row + drawn.row) as u32, key as u32])
    }

    /// The row (of the whole map) whose label is under a device-pixel position of the
    /// `index`-th canvas of the last render (left of the plot), or `undefined`.
    pub fn row_label_hit(&self, index: usize, x_px: f64, y_px: f64) -> Option<usize> {
        let (_, layout, drawn) = self.layouts.get(index)?;
        Some(layout.row_label_at(x_px, y_px)? + drawn.row)
    }

    /// Draws only rows `row..row + rows` and columns `col..col + cols` of every map from the
    /// next render on (zooming into a long map); `rows` or `cols` 0 draws that extent whole,
    /// so `set_viewport(0, 0, 0, 0)` draws whole maps. The window is fitted to each map as it
    /// is drawn (inside it, the same size where it fits); labels, mask and hit-testing follow
    /// it, and each map keeps the colour scale of its whole.
    pub fn set_viewport(&mut self, row: usize, col: usize, rows: usize, cols: usize) {
        self.viewport = Viewport {
            row,
            col,
            rows,
            cols,
        };
    }

    /// The part of the maps the next render draws, fitted to the maps of the current input:
    /// `{ row, col, rows, cols, total_rows, total_cols }`.
    pub fn viewport(&self) -> Result<JsValue, JsError> {
        let (total_rows, total_cols) = self.shape();
        let v = self.shown_viewport();
        to_js(&ViewportJs {
            row: v.row,
            col: v.col,
            rows: v.rows,
            cols: v.cols,
            total_rows,
            total_cols,
        })
    }

    /// Draws the whole of the shown head's map of `stage` (its name; the final stage when
    /// empty) on `canvas` as plain cells filling its width and height attributes: no frame,
    /// no labels, the same colours as the map's own (the overview of a zoomed map).
    pub fn render_overview(
        &mut self,
        canvas: HtmlCanvasElement,
        stage: &str,
    ) -> Result<(), JsError> {
        self.state.compute().map_err(js_error)?;
        let stage = if stage.is_empty() {
            self.state.final_stage()
        } else {
            self.stage_shown(stage)?
        };
        let head = self.state.head();
        let scale = self
            .scales(&[(stage, head)])
            .pop()
            .unwrap_or_else(Scale::unit);
        let map = self
            .state
            .head_map(stage, head)
            .ok_or_else(|| JsError::new("nothing to draw: the sentence is empty"))?;
        let mask = self.cell_mask(stage);
        self.painter.draw_cells(&canvas, map, &scale, mask.as_ref())
    }

    /// The largest and smallest allowed cells of the shown head's map of `stage`:
    /// `{ max: { row, col, value, query, key }, min: { … } }`, or `undefined`.
    pub fn extremes(&mut self, stage: &str) -> Result<JsValue, JsError> {
        let stage = self.stage_shown(stage)?;
        self.state.compute().map_err(js_error)?;
        let Some(e) = self.state.extremes(stage) else {
            return Ok(JsValue::UNDEFINED);
        };
        let keys = self.state.column_labels(stage);
        let cell = |(row, col, value): (usize, usize, f32)| ExtremeJs {
            row,
            col,
            value,
            query: self.state.labels().get(row).cloned().unwrap_or_default(),
            key: keys.get(col).cloned().unwrap_or_default(),
        };
        to_js(&ExtremesJs {
            max: cell(e.max),
            min: cell(e.min),
        })
    }

    /// The column labels of `stage`'s map: the key labels, or for a map whose columns are not
    /// keys its own (a segment's tokens `1–4`, the heads `1`, `2`, …).
    pub fn column_labels(&self, stage: &str) -> Result<Vec<String>, JsError> {
        let stage = self.stage_shown(stage)?;
        Ok(self.state.column_labels(stage))
    }

    /// The device-pixel rectangle of the cell of query `row` and key `key` (of the whole map)
    /// in the `index`-th canvas of the last render (in a map whose columns are not keys, the
    /// column the key falls in): `{ x, y, width, height }`, or `undefined` when the viewport
    /// drawn does not show it.
    pub fn cell_rect(&self, index: usize, row: usize, key: usize) -> Result<JsValue, JsError> {
        let Some((stage, layout, drawn)) = self.layouts.get(index) else {
            return Ok(JsValue::UNDEFINED);
        };
        let col = self.state.column_of_key(*stage, key);
        match (layout, drawn) {
            (layout, drawn) if drawn.contains(row, col) => {
                let r = layout.cell_rect(row - drawn.row, col - drawn.col);
                to_js(&RectJs {
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                })
            }
            _ => Ok(JsValue::UNDEFINED),
        }
    }

    /// The numbers behind one cell of the shown head (see `CellJs`), or `undefined`.
    pub fn cell(&mut self, row: usize, col: usize) -> Result<JsValue, JsError> {
        self.state.compute().map_err(js_error)?;
        match self.state.cell(row, col) {
            Some(info) => to_js(&CellJs::from(info)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// A window of the shown head's map of `stage`: at most `rows × cols` cells from `(row,
    /// col)`, as `{ rows, cols, row, col, data: Float32Array }` (row-major), or `undefined`
    /// when the mechanism has no such stage. What the screen-reader table shows, without
    /// copying the whole map.
    pub fn window(
        &mut self,
        stage: &str,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<JsValue, JsError> {
        let stage = self.stage_shown(stage)?;
        self.state.compute().map_err(js_error)?;
        match self.state.map_window(stage, row, col, rows, cols) {
            Some(w) => window_js(&w, row, col),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Draws a user's spec (the CLI's JSON). Returns `{ tokens, total, truncated }`; throws an
    /// `Error` whose message names the field at fault.
    pub fn load_spec(&mut self, json: &str) -> Result<JsValue, JsError> {
        #[cfg(not(feature = "files"))]
        {
            let _ = json;
            Err(without_files("load_spec"))
        }
        #[cfg(feature = "files")]
        {
            self.state.load_spec(json).map_err(js_error)?;
            self.spec_tokens()
        }
    }

    /// Draws a spec file's bytes: JSON, or the binary form (a `.safetensors` file, DESIGN.md
    /// §7.8), as `diffattn stages` reads them. Returns `{ tokens, total, truncated }`; throws
    /// an `Error` whose message names the field at fault, or says why the page cannot draw it
    /// (too many tokens or cells); then the page stays as it was.
    pub fn load_spec_bytes(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        #[cfg(not(feature = "files"))]
        {
            let _ = bytes;
            Err(without_files("load_spec_bytes"))
        }
        #[cfg(feature = "files")]
        {
            self.state.load_spec_bytes(bytes).map_err(js_error)?;
            self.spec_tokens()
        }
    }

    /// Back to the learned λ of the Differential Transformers (the trained model's or the
    /// loaded layer's; V2's λ per token and head) after the λ slider moved; recomputes only
    /// `A1 − λ·A2` at the next render. Returns `settings()`.
    pub fn reset_lambda(&mut self) -> Result<JsValue, JsError> {
        self.state.reset_lambda();
        self.state.compute().map_err(js_error)?;
        self.settings()
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
        #[cfg(not(feature = "files"))]
        {
            Err(without_files("export_json"))
        }
        #[cfg(feature = "files")]
        {
            let spec = self.state.export_spec().map_err(js_error)?;
            serde_json::to_string_pretty(&spec).map_err(js_error)
        }
    }

    /// Draws the row view of query `row` (from 0) on `canvas`: every stage but the gate as a
    /// line over the keys, with `G ⊙ D`, and key `hovered` (from 0) highlighted. Returns
    /// `{ x, y, width, height }`, the plot in device pixels, or throws for a row past the map.
    pub fn render_row(
        &mut self,
        canvas: HtmlCanvasElement,
        row: usize,
        font_px: f32,
        hovered: Option<usize>,
    ) -> Result<JsValue, JsError> {
        self.state.compute().map_err(js_error)?;
        let lines = self
            .state
            .row_lines(row)
            .ok_or_else(|| JsError::new(&format!("row: {row} is past the map")))?;
        // Okabe–Ito colours, told apart with any colour vision; copies of A are dashed.
        const COLORS: [RGBColor; 6] = [
            RGBColor(0x00, 0x72, 0xb2),
            RGBColor(0x56, 0xb4, 0xe9),
            RGBColor(0xe6, 0x9f, 0x00),
            RGBColor(0x00, 0x9e, 0x73),
            RGBColor(0xcc, 0x79, 0xa7),
            RGBColor(0xd5, 0x5e, 0x00),
        ];
        let series: Vec<RowSeries> = lines
            .iter()
            .enumerate()
            .map(|(i, line)| RowSeries {
                label: line.label,
                values: line.values.clone(),
                color: COLORS[i % COLORS.len()],
                dashed: matches!(line.stage, Some(StageId::Shifted | StageId::ShiftedBack)),
            })
            .collect();
        let keys = self.state.key_labels();
        let query = self.state.labels().get(row).cloned().unwrap_or_default();
        let title = format!("{} {} · {query}", self.row_word, row + 1);
        let (mask, offset) = self.state.mask();
        let chart = RowChart {
            title: &title,
            keys: &keys,
            series: &series,
            hovered,
            allowed: mask.allowed_keys(row, offset, keys.len()),
            theme: &self.theme,
            font_px,
        };
        let layout = self.painter.draw_row(&canvas, &chart)?;
        self.row_layout = Some(layout);
        to_js(&RectJs {
            x: layout.plot.x,
            y: layout.plot.y,
            width: layout.plot.width,
            height: layout.plot.height,
        })
    }

    /// The key under a device-pixel position of the last row view, or `undefined`.
    pub fn row_hit(&self, x_px: f64, y_px: f64) -> Option<usize> {
        self.row_layout?.key_at(x_px, y_px)
    }

    /// Draws the layer output (`tokens × d`, what the final map mixes the values into) on
    /// `canvas` as a diverging heatmap. Returns `{ compute_ms, draw_ms }`.
    pub fn render_output(
        &mut self,
        canvas: HtmlCanvasElement,
        font_px: f32,
    ) -> Result<JsValue, JsError> {
        let t0 = now_ms();
        let output = self
            .state
            .layer_output()
            .map_err(js_error)?
            .ok_or_else(|| JsError::new("nothing to draw: the sentence is empty"))?;
        let t1 = now_ms();
        let cols: Vec<String> = (1..=output.ncols()).map(|c| c.to_string()).collect();
        let widths = LabelWidths::measure(self.state.labels(), &cols);
        let scale = Scale::for_values(ScaleKind::Diverging, output.view());
        let frame = Frame {
            title: "O = A′·V·W_oᵀ",
            row_labels: self.state.labels(),
            col_labels: &cols,
            scale: &scale,
            theme: &self.theme,
            font_px,
            mask: None,
            masked_label: &self.masked_label,
            constant: constant_value(output.view()),
            constant_label: &self.constant_label,
        };
        self.painter.draw(&canvas, output.view(), &frame, &widths)?;
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// One stage of the shown head (its name, e.g. `"d"`) as a standalone SVG document: the
    /// part the viewport shows, as on the page.
    pub fn export_svg(&mut self, stage: &str) -> Result<String, JsError> {
        #[cfg(not(feature = "files"))]
        {
            let _ = stage;
            Err(without_files("export_svg"))
        }
        #[cfg(feature = "files")]
        self.stage_svg(stage)
    }

    /// Every stage of the shown head side by side as one SVG document (the viewport's part).
    pub fn export_panel_svg(&mut self) -> Result<String, JsError> {
        #[cfg(not(feature = "files"))]
        {
            Err(without_files("export_panel_svg"))
        }
        #[cfg(feature = "files")]
        self.panels_svg()
    }
}

/// The SVG exports, in the builds with the cargo feature `files`.
#[cfg(feature = "files")]
impl Explorer {
    fn stage_svg(&mut self, stage: &str) -> Result<String, JsError> {
        let stage = self.stage_shown(stage)?;
        self.state.compute().map_err(js_error)?;
        let map = self
            .state
            .map(stage)
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let scale = Scale::for_values(stage.scale_kind(), map);
        let shown = self.stage_viewport(stage, map.dim());
        let labels = self.shared_labels(&[stage]);
        let theme = Theme::light();
        let mut frame = self.frame(stage, stage.label(), &labels, shown, &scale, &theme, 14.0);
        frame.constant = constant_value(map);
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
                Some((s, map, Scale::for_values(s.scale_kind(), map), shown))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let panels: Vec<Panel> = maps
            .iter()
            .map(|(s, map, scale, shown)| Panel {
                map: shown.slice(*map),
                frame: Frame {
                    constant: constant_value(*map),
                    ..self.frame(*s, s.label(), &labels, *shown, scale, &theme, 14.0)
                },
            })
            .collect();
        Ok(panel_svg(&panels, 520, 520))
    }
}

#[wasm_bindgen]
impl Explorer {
    /// How often each cache layer was recomputed: `{ projections, maps, shift_stages, lambda,
    /// adopted }` (`adopted`: heads computed by the Web Worker and adopted, not computed here).
    pub fn recomputations(&self) -> Result<JsValue, JsError> {
        /// `{ projections, maps, shift_stages, lambda, adopted }`
        #[derive(serde::Serialize)]
        struct RecomputationsJs {
            projections: u64,
            maps: u64,
            shift_stages: u64,
            lambda: u64,
            adopted: u64,
        }
        let r = self.state.recomputations();
        to_js(&RecomputationsJs {
            projections: r.projections,
            maps: r.maps,
            shift_stages: r.shift_stages,
            lambda: r.lambda,
            adopted: r.adopted,
        })
    }

    /// The model in use (see `ModelJs`).
    pub fn model_info(&self) -> Result<JsValue, JsError> {
        let model = self.state.model();
        let trained_with = self
            .state
            .trained_settings()
            .map(|s| SettingsJs::new(&s, 0, true, true));
        to_js(&ModelJs {
            d_model: model.d_model(),
            trained: model.trained,
            label: &model.label,
            mechanism: model.trained_parts().map(|t| name_of(t.mechanism.kind())),
            trained_with,
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
                unknown: self.state.unknown_tokens().unwrap_or(0),
                tokens: self.state.len(),
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

impl Explorer {
    /// The stage named `name`, if the current mechanism shows it.
    fn stage_shown(&self, name: &str) -> Result<StageId, JsError> {
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

    /// The tokens of the loaded spec: `{ tokens, total, truncated }`.
    #[cfg(feature = "files")]
    fn spec_tokens(&self) -> Result<JsValue, JsError> {
        let tokens = self.state.labels();
        to_js(&TokensJs {
            tokens,
            total: tokens.len(),
            truncated: false,
        })
    }

    /// The cells the mask forbids in `stage`'s map, drawn hatched (none in a map whose
    /// columns are not keys).
    fn cell_mask(&self, stage: StageId) -> Option<CellMask> {
        let (mask, key_offset) = self.state.stage_mask(stage)?;
        Some(CellMask::new(mask, key_offset))
    }

    /// The rows and columns of the maps of the current input: one per token and one per key.
    fn shape(&self) -> (usize, usize) {
        (self.state.labels().len(), self.state.key_labels().len())
    }

    /// The viewport fitted to the maps of the current input.
    fn shown_viewport(&self) -> Viewport {
        self.viewport.within(self.shape())
    }

    /// The part of `stage`'s map (of `dim`) the viewport shows: its rows, and the viewport's
    /// keys, or for a map over segments the segments those keys fall in, or for V2's λ table
    /// every head.
    fn stage_viewport(&self, stage: StageId, dim: (usize, usize)) -> Viewport {
        let keys = self.shown_viewport();
        let rows = self.viewport.within(dim);
        match stage.columns() {
            Columns::Keys => rows,
            Columns::Segments if keys.cols > 0 => {
                let first = self.state.column_of_key(stage, keys.col).min(dim.1);
                let last = self
                    .state
                    .column_of_key(stage, keys.col + keys.cols - 1)
                    .min(dim.1.saturating_sub(1));
                Viewport {
                    col: first,
                    cols: (last + 1).saturating_sub(first),
                    ..rows
                }
            }
            Columns::Segments | Columns::Heads => Viewport {
                col: 0,
                cols: dim.1,
                ..rows
            },
        }
    }

    /// The labels the viewport shows, measured once for every map of a render: the rows', and
    /// the columns' of each kind of column among `stages` (keys, segments, heads).
    fn shared_labels(&self, stages: &[StageId]) -> SharedLabels {
        let shown = self.shown_viewport();
        let rows = Viewport::labels(shown.row_range(), self.state.labels()).to_vec();
        let mut by_columns = Vec::new();
        let mut kinds: Vec<StageId> = Vec::new();
        for &stage in stages {
            if !kinds.iter().any(|k| k.columns() == stage.columns()) {
                kinds.push(stage);
            }
        }
        if kinds.is_empty() {
            kinds.push(StageId::A);
        }
        for stage in kinds {
            let all = self.state.column_labels(stage);
            let cols = self.stage_viewport(stage, (self.state.len(), all.len()));
            let labels = Viewport::labels(cols.col_range(), &all).to_vec();
            let widths = LabelWidths::measure(&rows, &labels);
            by_columns.push((stage.columns(), labels, widths));
        }
        SharedLabels { rows, by_columns }
    }

    /// The frame of `stage`'s map drawn from `shown`: its title, the labels, its scale, the
    /// mask (for the SVG exports).
    #[cfg(feature = "files")]
    #[allow(clippy::too_many_arguments)]
    fn frame<'a>(
        &'a self,
        stage: StageId,
        title: &'a str,
        labels: &'a SharedLabels,
        shown: Viewport,
        scale: &'a Scale,
        theme: &'a Theme,
        font_px: f32,
    ) -> Frame<'a> {
        Frame {
            title,
            row_labels: &labels.rows,
            col_labels: labels.of(stage).0,
            scale,
            theme,
            font_px,
            mask: self.cell_mask(stage).map(|m| CellMask {
                origin: (shown.row, shown.col),
                ..m
            }),
            masked_label: &self.masked_label,
            constant: None,
            constant_label: &self.constant_label,
        }
    }

    /// The colour scale of each map to draw (`(stage, head)`): its own, or shared by the maps of
    /// one `ScaleGroup` when `shared_scale` is on.
    fn scales(&self, drawn: &[(StageId, usize)]) -> Vec<Scale> {
        // The maps' extremes, kept by the explorer with each map: no map is scanned twice.
        let stats = |&(stage, head): &(StageId, usize)| self.state.head_stats(stage, head);
        if !self.shared_scale {
            return drawn
                .iter()
                .map(|d| stats(d).map_or(Scale::unit(), |s| Scale::from_stats(d.0.scale_kind(), s)))
                .collect();
        }
        drawn
            .iter()
            .map(|&(stage, _)| {
                let group = drawn
                    .iter()
                    .filter(|(s, _)| s.scale_group() == stage.scale_group())
                    .filter_map(stats)
                    .fold(MapStats::NONE, MapStats::merge);
                let kind = match stage.scale_group() {
                    ScaleGroup::Attention | ScaleGroup::Lambda => ScaleKind::Sequential,
                    ScaleGroup::Difference => ScaleKind::Diverging,
                    ScaleGroup::Gate => ScaleKind::Unit,
                };
                Scale::from_stats(kind, group)
            })
            .collect()
    }

    /// Draws the viewport of one head's map of one stage on a canvas with `scale` (the whole
    /// map's); returns the stage, the layout and the part of the map drawn.
    #[allow(clippy::too_many_arguments)]
    fn draw(
        &mut self,
        canvas: &HtmlCanvasElement,
        stage: StageId,
        head: usize,
        title: &str,
        font_px: f32,
        labels: &SharedLabels,
        scale: Scale,
    ) -> Result<(StageId, HeatmapLayout, Viewport), JsError> {
        let map = self
            .state
            .head_map(stage, head)
            .ok_or_else(|| JsError::new("nothing to draw: the sentence is empty"))?;
        let constant = self.state.head_stats(stage, head).and_then(constant_of);
        let drawn = self.stage_viewport(stage, map.dim());
        let (col_labels, widths) = labels.of(stage);
        let frame = Frame {
            title,
            row_labels: &labels.rows,
            col_labels,
            scale: &scale,
            theme: &self.theme,
            font_px,
            mask: self.cell_mask(stage).map(|m| CellMask {
                origin: (drawn.row, drawn.col),
                ..m
            }),
            masked_label: &self.masked_label,
            constant,
            constant_label: &self.constant_label,
        };
        let layout = self
            .painter
            .draw(canvas, drawn.slice(map), &frame, widths)?;
        Ok((stage, layout, drawn))
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
