//! The wasm boundary: the only module with `#[wasm_bindgen]`.
//!
//! One handle, [`Explorer`], owns the state (sentence, controls, cached stages) on the Rust
//! side. JavaScript calls small setters and [`Explorer::render`]; maps never cross the boundary
//! on a slider tick. When JavaScript needs numbers (the tooltip, the table fallback), it asks
//! for one cell or one map as a `Float32Array`. Errors become `Error` objects with readable
//! messages; a panic hook is installed once at start.
//!
//! In sync with `www/app.js`: the shapes of the objects returned here are documented on each
//! method and relied on there.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use crate::engine::{MechanismKind, StageId};
use crate::explorer;
use crate::model::Model;
use crate::names::{self, name_of, Named};
use crate::render::{
    draw_frame_at, heatmap_svg, panel_svg, plot_rgba, CellMask, Frame, HeatmapLayout, LabelWidths,
    Panel, Scale, Theme,
};

/// Installs the panic hook once, when the module is instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version, so the page can show what it runs.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot pass a value to JavaScript: {e}")))
}

fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// Times the engine alone in wasm (`crate::bench`, the same workload as `diffattn bench`
/// natively), for the side-by-side tables of docs/PERFORMANCE.md: `reps` samples of one full
/// shift-difference layer on `tokens` seeded vectors with the untrained model's weights and
/// `heads` heads. Returns `{ kernels: "simd128" | "portable", maps_ms, shift_ms, layer: {
/// layer_ms, projection_ms, maps_ms, shift_ms, output_ms, batch } }`, each a number[] with one
/// entry per sample (ms per layer); the top-level `maps_ms` is the projections and the maps
/// (what a new sentence costs), `shift_ms` the shift stages (what a shift tick costs).
#[wasm_bindgen]
pub fn bench_engine(tokens: usize, heads: usize, reps: usize) -> Result<JsValue, JsError> {
    use crate::bench::{time_layer, LayerBench};
    #[derive(Serialize)]
    struct Layer {
        batch: usize,
        layer_ms: Vec<f64>,
        projection_ms: Vec<f64>,
        maps_ms: Vec<f64>,
        shift_ms: Vec<f64>,
        output_ms: Vec<f64>,
    }
    #[derive(Serialize)]
    struct Timings {
        kernels: &'static str,
        maps_ms: Vec<f64>,
        shift_ms: Vec<f64>,
        layer: Layer,
    }
    let bench = LayerBench {
        tokens,
        heads,
        mechanism: crate::engine::MechanismKind::ShiftDiff,
        reps,
        // Without cross-origin isolation the browser's clock moves in 0.1 ms steps: short
        // layers are repeated within a sample (crate::bench).
        clock_resolution_ms: 0.1,
        // Long enough for V8 to tier the kernels up from Liftoff to TurboFan.
        warmup_ms: 300.0,
    };
    let t = time_layer(&bench, &now_ms).map_err(js_error)?;
    let maps_ms = t.projection_ms.iter().zip(&t.maps_ms).map(|(p, m)| p + m);
    to_js(&Timings {
        kernels: crate::engine::kernels::active_path(),
        maps_ms: maps_ms.collect(),
        shift_ms: t.shift_ms.clone(),
        layer: Layer {
            batch: t.batch,
            layer_ms: t.layer_ms,
            projection_ms: t.projection_ms,
            maps_ms: t.maps_ms,
            shift_ms: t.shift_ms,
            output_ms: t.output_ms,
        },
    })
}

/// `{ tokens: string[], total: number, truncated: boolean }`
#[derive(Serialize)]
struct TokensJs<'a> {
    tokens: &'a [String],
    total: usize,
    truncated: bool,
}

/// `{ id, name, scale: "sequential" | "unit" | "diverging", formula }`
#[derive(Serialize)]
struct StageJs {
    id: &'static str,
    name: &'static str,
    scale: &'static str,
    formula: &'static str,
}

/// `{ compute_ms, draw_ms }`
#[derive(Serialize)]
struct TimingsJs {
    compute_ms: f64,
    draw_ms: f64,
}

/// `{ x, y, width, height }` in device pixels.
#[derive(Serialize)]
struct RectJs {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
}

/// `{ alpha, beta, gamma }`
#[derive(Serialize)]
struct GateJs {
    alpha: f32,
    beta: f32,
    gamma: f32,
}

/// `{ query, key, values: { [stage id]: number }, gate: GateJs | null,
///    row_sum: { [stage id]: number }, lambda: number | null }`
#[derive(Serialize)]
struct CellJs {
    query: String,
    key: String,
    values: serde_json::Map<String, serde_json::Value>,
    gate: Option<GateJs>,
    row_sum: serde_json::Map<String, serde_json::Value>,
    lambda: Option<f32>,
}

/// `{ d_model, trained, label,
#[derive(Serialize)]
///    mechanism: string | null, trained_with: SettingsJs | null }`
struct ModelJs<'a> {
    d_model: usize,
    trained: bool,
    label: &'a str,
    mechanism: Option<&'static str>,
    trained_with: Option<SettingsJs>,
}

/// Every control: `{ mechanism, heads, causal, shift, difference, fill, renormalize, alpha,
/// beta, gamma, tau, window, gate_learned }`. `gate_learned` says the gate comes from the
/// trained model or the loaded spec (per head), not from the three sliders.
#[derive(Serialize)]
struct SettingsJs {
    mechanism: &'static str,
    heads: usize,
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
    gate_learned: bool,
}

impl SettingsJs {
    fn new(s: &explorer::Settings, gate_learned: bool) -> SettingsJs {
        SettingsJs {
            mechanism: s.maps.mechanism.key(),
            heads: s.maps.heads,
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
            gate_learned,
        }
    }
}

/// The option named `value`, or an error naming the field and the options.
fn choice<T: Named>(field: &str, value: &str) -> Result<T, JsError> {
    names::parse::<T>(field, value).map_err(js_error)
}

/// `{ label: "positive" | "negative", probability, positive }`
#[derive(Serialize)]
struct PredictionJs {
    label: &'static str,
    probability: f32,
    positive: f32,
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

/// The page's one handle: owns the sentence, the controls and every cached map.
#[wasm_bindgen]
pub struct Explorer {
    state: explorer::Explorer,
    /// The last typed sentence, restored when a loaded spec is closed.
    text: String,
    theme: Theme,
    /// The layouts of the last drawn maps, for hit-testing and highlights.
    layouts: Vec<HeatmapLayout>,
    /// Reused RGBA buffer of one map's plot pixels.
    rgba: Vec<u8>,
}

impl Default for Explorer {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl Explorer {
    /// A handle over the untrained seeded model, with an empty sentence.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Explorer {
        Explorer {
            state: explorer::Explorer::new(Model::untrained()),
            text: String::new(),
            theme: Theme::light(),
            layouts: Vec::new(),
            rgba: Vec::new(),
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

    /// `"shift_diff" | "standard" | "diff_transformer" | "input_diff" | "cosine" | "local"`.
    pub fn set_mechanism(&mut self, mechanism: &str) -> Result<(), JsError> {
        let kind: MechanismKind = choice("mechanism", mechanism)?;
        self.state
            .update_maps(|m| m.mechanism = kind)
            .map_err(js_error)
    }

    /// The head counts allowed now (divisors of d; of d/2 for the Differential Transformer).
    pub fn head_choices(&self) -> Vec<u32> {
        self.state
            .head_choices()
            .into_iter()
            .map(|h| h as u32)
            .collect()
    }

    /// Re-splits the projections into `heads` heads.
    pub fn set_heads(&mut self, heads: u32) -> Result<(), JsError> {
        self.state
            .update_maps(|m| m.heads = heads as usize)
            .map_err(js_error)
    }

    /// Shows head `head` (from 0); recomputes nothing.
    pub fn set_head(&mut self, head: u32) -> Result<(), JsError> {
        self.state.set_head(head as usize).map_err(js_error)
    }

    /// The causal mask on or off.
    pub fn set_causal(&mut self, causal: bool) {
        // A boolean is always a valid mask setting.
        let _ = self.state.update_maps(|m| m.causal = causal);
    }

    /// The shift `k`, any integer.
    pub fn set_shift(&mut self, shift: i32) -> Result<(), JsError> {
        self.state
            .update_shift(|s| s.shift = i64::from(shift))
            .map_err(js_error)
    }

    /// `"single" | "symmetric"`.
    pub fn set_difference(&mut self, difference: &str) -> Result<(), JsError> {
        let d = choice("difference", difference)?;
        self.state
            .update_shift(|s| s.difference = d)
            .map_err(js_error)
    }

    /// `"circular" | "zero"`.
    pub fn set_shift_fill(&mut self, fill: &str) -> Result<(), JsError> {
        let f = choice("shift_fill", fill)?;
        self.state.update_shift(|s| s.fill = f).map_err(js_error)
    }

    /// `"none" | "softmax"`.
    pub fn set_renormalize(&mut self, renormalize: &str) -> Result<(), JsError> {
        let r = choice("renormalize", renormalize)?;
        self.state
            .update_shift(|s| s.renormalize = r)
            .map_err(js_error)
    }

    /// The gate's three scalars, the same for every head.
    pub fn set_gate(&mut self, alpha: f32, beta: f32, gamma: f32) -> Result<(), JsError> {
        self.state
            .update_shift(|s| {
                s.alpha = alpha;
                s.beta = beta;
                s.gamma = gamma;
            })
            .map_err(js_error)
    }

    /// Cosine attention's temperature.
    pub fn set_tau(&mut self, tau: f32) -> Result<(), JsError> {
        self.state.update_maps(|m| m.tau = tau).map_err(js_error)
    }

    /// Local attention's radius.
    pub fn set_window(&mut self, window: u32) {
        // Any radius is valid.
        let _ = self.state.update_maps(|m| m.window = window as usize);
    }

    /// `"light" | "dark"`: the colours of titles, labels and background.
    pub fn set_theme(&mut self, theme: &str) -> Result<(), JsError> {
        self.theme = match theme {
            "light" => Theme::light(),
            "dark" => Theme::dark(),
            other => {
                return Err(JsError::new(&format!(
                    "theme: unknown {other:?}; expected light or dark"
                )))
            }
        };
        Ok(())
    }

    /// The maps the current mechanism shows, in order: `[{ id, name, scale, formula }]`.
    pub fn stages(&self) -> Result<JsValue, JsError> {
        let settings = self.state.settings();
        let symmetric =
            settings.shift.difference == crate::engine::shift_diff::Difference::Symmetric;
        let softmax = settings.shift.renormalize == crate::engine::shift_diff::Renormalize::Softmax;
        let kind = self.state.kind();
        let stages: Vec<StageJs> = self
            .state
            .stages()
            .into_iter()
            .map(|s| StageJs {
                id: name_of(s),
                name: s.label(),
                scale: name_of(s.scale_kind()),
                formula: kind.formula(s, symmetric, softmax),
            })
            .collect();
        to_js(&stages)
    }

    /// Draws every stage of the shown head, one per canvas (in `stages()` order), filling each
    /// canvas's width and height attributes (device pixels). Returns `{ compute_ms, draw_ms }`.
    pub fn render(
        &mut self,
        canvases: Vec<HtmlCanvasElement>,
        font_px: f32,
    ) -> Result<JsValue, JsError> {
        let t0 = now_ms();
        self.state.compute().map_err(js_error)?;
        let t1 = now_ms();
        let stages = self.state.stages();
        let head = self.state.head();
        let labels = self.shared_labels();
        self.layouts.clear();
        for (canvas, stage) in canvases.iter().zip(stages) {
            let layout = self.draw(canvas, stage, head, stage.label(), font_px, &labels)?;
            self.layouts.push(layout);
        }
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// Draws the final map (`A′`, or the mechanism's last map) of every head, one per canvas.
    pub fn render_all_heads(
        &mut self,
        canvases: Vec<HtmlCanvasElement>,
        font_px: f32,
    ) -> Result<JsValue, JsError> {
        let t0 = now_ms();
        self.state.compute().map_err(js_error)?;
        let t1 = now_ms();
        let stage = self.state.final_stage();
        let heads = self.state.settings().maps.heads;
        let labels = self.shared_labels();
        for (head, canvas) in canvases.iter().enumerate().take(heads) {
            let title = format!("{} · {}", stage.label(), head + 1);
            self.draw(canvas, stage, head, &title, font_px, &labels)?;
        }
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// The cell under a device-pixel position of the `stage_index`-th canvas last drawn by
    /// `render`: `[row, col]`, or `undefined` outside the map.
    pub fn hit(&self, stage_index: usize, x_px: f64, y_px: f64) -> Option<Vec<u32>> {
        let (row, col) = self.layouts.get(stage_index)?.cell_at(x_px, y_px)?;
        Some(vec![row as u32, col as u32])
    }

    /// The device-pixel rectangle of one cell in the `stage_index`-th canvas:
    /// `{ x, y, width, height }`, or `undefined`.
    pub fn cell_rect(
        &self,
        stage_index: usize,
        row: usize,
        col: usize,
    ) -> Result<JsValue, JsError> {
        match self.layouts.get(stage_index) {
            Some(layout) if row < layout.rows && col < layout.cols => {
                let r = layout.cell_rect(row, col);
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
        let Some(info) = self.state.cell(row, col) else {
            return Ok(JsValue::UNDEFINED);
        };
        to_js(&CellJs {
            query: info.query,
            key: info.key,
            values: stage_values(&info.values),
            gate: info
                .gate
                .map(|(alpha, beta, gamma)| GateJs { alpha, beta, gamma }),
            row_sum: stage_values(&info.row_sums),
            lambda: info.lambda,
        })
    }

    /// One map of the shown head: `{ rows, cols, data: Float32Array }` (row-major), or
    /// `undefined` when the mechanism has no such stage.
    pub fn map(&mut self, stage_id: &str) -> Result<JsValue, JsError> {
        let stage: StageId = choice("stage", stage_id)?;
        self.state.compute().map_err(js_error)?;
        let Some(map) = self.state.map(stage) else {
            return Ok(JsValue::UNDEFINED);
        };
        let data: Vec<f32> = map.iter().copied().collect();
        let out = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &JsValue::from_str(k), v);
        set("rows", &JsValue::from(map.nrows() as u32))
            .and_then(|_| set("cols", &JsValue::from(map.ncols() as u32)))
            .and_then(|_| set("data", &js_sys::Float32Array::from(data.as_slice()).into()))
            .map_err(|_| JsError::new("cannot build the map object"))?;
        Ok(out.into())
    }

    /// The Differential Transformer's lambda, or `undefined`.
    pub fn lambda(&mut self) -> Option<f32> {
        self.state.compute().ok()?;
        self.state.lambda()
    }

    /// Draws a user's spec (the CLI's JSON). Returns `{ tokens }`; throws an `Error` whose
    /// message names the field at fault.
    pub fn load_spec(&mut self, json: &str) -> Result<JsValue, JsError> {
        self.state.load_spec(json).map_err(js_error)?;
        let tokens = self.state.labels();
        to_js(&TokensJs {
            tokens,
            total: tokens.len(),
            truncated: false,
        })
    }

    /// Leaves a loaded spec and draws the last typed sentence again.
    pub fn clear_spec(&mut self) -> Result<JsValue, JsError> {
        let text = std::mem::take(&mut self.text);
        self.set_text(&text)
    }

    /// Whether a loaded spec is drawn.
    pub fn is_spec(&self) -> bool {
        self.state.is_spec()
    }

    /// Every stage and the layer output in the CLI's JSON format.
    pub fn export_json(&self) -> Result<String, JsError> {
        let stages = self.state.stages_json().map_err(js_error)?;
        serde_json::to_string_pretty(&stages).map_err(js_error)
    }

    /// One map of the shown head as a standalone SVG document.
    pub fn export_svg(&mut self, stage_index: usize) -> Result<String, JsError> {
        self.state.compute().map_err(js_error)?;
        let stage = *self
            .state
            .stages()
            .get(stage_index)
            .ok_or_else(|| JsError::new(&format!("stage index {stage_index} out of range")))?;
        let map = self
            .state
            .map(stage)
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let scale = Scale::for_values(stage.scale_kind(), map);
        let keys = self.state.key_labels();
        let frame = Frame {
            title: stage.label(),
            row_labels: self.state.labels(),
            col_labels: &keys,
            scale: &scale,
            theme: &Theme::light(),
            font_px: 14.0,
            mask: Some(self.cell_mask()),
            masked_label: "masked",
        };
        Ok(heatmap_svg(map, &frame, 640, 600))
    }

    /// Every map of the shown head side by side as one SVG document.
    pub fn export_panel_svg(&mut self) -> Result<String, JsError> {
        self.state.compute().map_err(js_error)?;
        let keys = self.state.key_labels();
        let theme = Theme::light();
        let stages = self.state.stages();
        let scales: Vec<_> = stages
            .iter()
            .map(|&s| {
                self.state
                    .map(s)
                    .map(|m| (s, m, Scale::for_values(s.scale_kind(), m)))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| JsError::new("nothing to export: the sentence is empty"))?;
        let panels: Vec<Panel> = scales
            .iter()
            .map(|(s, m, scale)| Panel {
                map: *m,
                frame: Frame {
                    title: s.label(),
                    row_labels: self.state.labels(),
                    col_labels: &keys,
                    scale,
                    theme: &theme,
                    font_px: 14.0,
                    mask: Some(self.cell_mask()),
                    masked_label: "masked",
                },
            })
            .collect();
        Ok(panel_svg(&panels, 520, 520))
    }

    /// How often each cache layer was recomputed: `{ projections, maps, shift_stages }`.
    pub fn recomputations(&self) -> Result<JsValue, JsError> {
        let r = self.state.recomputations();
        to_js(&serde_json::json!({
            "projections": r.projections,
            "maps": r.maps,
            "shift_stages": r.shift_stages,
        }))
    }

    /// `{ d_model, trained, label }` of the model in use.
    pub fn model_info(&self) -> Result<JsValue, JsError> {
        let model = self.state.model();
        let trained = model.trained_parts();
        let trained_with = self
            .state
            .trained_settings()
            .map(|s| SettingsJs::new(&s, true));
        to_js(&ModelJs {
            d_model: model.d_model(),
            trained: model.trained,
            label: &model.label,
            mechanism: trained.map(|t| t.mechanism.name()),
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

    /// Every control's current value (see `SettingsJs`), e.g. after `load_model`.
    pub fn settings(&self) -> Result<JsValue, JsError> {
        to_js(&SettingsJs::new(
            self.state.settings(),
            self.state.gate_is_learned(),
        ))
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
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

/// What every map of one render shares: the key labels and the widest labels, measured once.
struct SharedLabels {
    keys: Vec<String>,
    widths: LabelWidths,
}

impl Explorer {
    /// The cells the current mask forbids, drawn hatched.
    fn cell_mask(&self) -> CellMask {
        let (mask, key_offset) = self.state.mask();
        CellMask { mask, key_offset }
    }

    fn shared_labels(&self) -> SharedLabels {
        let keys = self.state.key_labels();
        let widths = LabelWidths::measure(self.state.labels(), &keys);
        SharedLabels { keys, widths }
    }

    /// Draws one map: plotters draws the frame, then the plot's pixels are put on as one image.
    fn draw(
        &mut self,
        canvas: &HtmlCanvasElement,
        stage: StageId,
        head: usize,
        title: &str,
        font_px: f32,
        labels: &SharedLabels,
    ) -> Result<HeatmapLayout, JsError> {
        let map = self
            .state
            .head_map(stage, head)
            .ok_or_else(|| JsError::new("nothing to draw: the sentence is empty"))?;
        let scale = Scale::for_values(stage.scale_kind(), map);
        let frame = Frame {
            title,
            row_labels: self.state.labels(),
            col_labels: &labels.keys,
            scale: &scale,
            theme: &self.theme,
            font_px,
            mask: Some(self.cell_mask()),
            masked_label: "masked",
        };
        let layout = frame.layout_with(canvas.width(), canvas.height(), map.dim(), &labels.widths);
        let backend = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
        let area = backend.into_drawing_area();
        draw_frame_at(&area, &frame, &layout, 1.0)
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        area.present()
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        // The plot's own pixels (see render::plot_rgba): no scaling by the browser, and a map
        // with more cells than pixels costs what its pixels cost.
        plot_rgba(map, &scale, &layout, frame.mask.as_ref(), &mut self.rgba);
        if self.rgba.is_empty() {
            return Ok(layout);
        }
        let plot = layout.plot;
        let image = ImageData::new_with_u8_clamped_array_and_sh(
            Clamped(&self.rgba),
            plot.width,
            plot.height,
        )
        .map_err(|_| JsError::new("cannot make the map's image"))?;
        context(canvas)?
            .put_image_data(&image, f64::from(plot.x), f64::from(plot.y))
            .map_err(|_| JsError::new("cannot draw the map's cells"))?;
        Ok(layout)
    }
}

fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, JsError> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or_else(|| JsError::new("the canvas has no 2D context"))
}
