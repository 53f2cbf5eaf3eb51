//! The retrieval lesson's handle, [`Lesson`] (docs/LESSON.md, "The lesson on the page"): the
//! shipped retrieval models, loaded from their files, put to the page's text with the same
//! `diffattn::retrieval::ask_with` and measure the command line uses; the maps of one model's
//! layer drawn with the answer and the facts marked on both axes. The page draws one bar pair
//! and one slider per knob from what `ask()` and `models()` say; it never asks which mechanism
//! a model has.

use ndarray::Axis;
use plotters::style::RGBColor;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::{js_error, to_js};
use diffattn::model::RetrievalFile;
use diffattn::render::{constant_value, CellMask, Frame, FrameParts, LabelWidths, Scale, Theme};
use diffattn::retrieval::{ask_with, layer_specs, Asked, Knobs, Shares};
use diffattn::spec::layers_json;
use diffattn_canvas::Painter;

/// The colours of the marks on the axes: the answer's tokens and the other facts' tokens.
const ANSWER_MARK: RGBColor = RGBColor(214, 39, 40);
const FACT_MARK: RGBColor = RGBColor(31, 119, 180);

struct Loaded {
    name: String,
    file: RetrievalFile,
    knobs: Knobs,
    asked: Option<Asked>,
}

/// The lesson's one handle: the models, the text, the last answers.
#[wasm_bindgen]
pub struct Lesson {
    models: Vec<Loaded>,
    text: String,
    theme: Theme,
    painter: Painter,
}

impl Default for Lesson {
    fn default() -> Self {
        Self::new()
    }
}

/// `{ layer, name, trained, value, min, max, step }` (layer from 1).
#[derive(Serialize)]
struct KnobJs {
    layer: usize,
    name: &'static str,
    trained: f64,
    value: f64,
    min: f64,
    max: f64,
    step: f64,
}

/// `{ name, layers: [{ mechanism, heads, stage, formula }], knobs: [KnobJs], moved }`.
#[derive(Serialize)]
struct ModelInfoJs {
    name: String,
    layers: Vec<LayerInfoJs>,
    knobs: Vec<KnobJs>,
    moved: bool,
}

#[derive(Serialize)]
struct LayerInfoJs {
    mechanism: &'static str,
    heads: usize,
    /// The final map's label (`A`, `A′`, `A1 − λ·A2`) and formula.
    stage: &'static str,
    formula: &'static str,
}

/// `{ answer, noise, noise_magnitude, answer_abs, noise_abs }` (the signed shares and the
/// shares of absolute values: `retrieval::measure`).
#[derive(Serialize, Clone, Copy)]
struct SharesJs {
    answer: f64,
    noise: f64,
    noise_magnitude: f64,
    answer_abs: f64,
    noise_abs: f64,
}

impl From<Shares> for SharesJs {
    fn from(s: Shares) -> Self {
        SharesJs {
            answer: s.answer,
            noise: s.noise,
            noise_magnitude: s.noise_magnitude,
            answer_abs: s.answer_abs,
            noise_abs: s.noise_abs,
        }
    }
}

/// One model's answer: `{ name, answer, probability, layers: [SharesJs] | null,
/// retrieving_layer (from 1) | null, mean | null, unknown_keys }`.
#[derive(Serialize)]
struct AnswerJs {
    name: String,
    answer: String,
    probability: f32,
    layers: Option<Vec<SharesJs>>,
    retrieving_layer: Option<usize>,
    mean: Option<SharesJs>,
    unknown_keys: Vec<String>,
}

/// What the text is: `{ tokens, roles: ["answer" | "fact" | "question" | "context"],
/// question: { noun, name } | null, expected: "N" | null, facts, unknown, models: [AnswerJs] }`.
#[derive(Serialize)]
struct AskedJs {
    tokens: Vec<String>,
    roles: Vec<&'static str>,
    question: Option<QuestionJs>,
    expected: Option<String>,
    facts: usize,
    unknown: Vec<String>,
    models: Vec<AnswerJs>,
}

#[derive(Serialize)]
struct QuestionJs {
    noun: String,
    name: String,
}

/// A mark drawn on an axis, in device pixels of its canvas: `{ axis: "row" | "col", index,
/// role, x, y, width, height }`.
#[derive(Serialize)]
struct MarkJs {
    axis: &'static str,
    index: usize,
    role: &'static str,
    x: i32,
    y: i32,
    width: u32,
    height: u32,
}

/// The roles of `asked`'s tokens.
fn roles(asked: &Asked) -> Vec<&'static str> {
    let mut roles = vec!["context"; asked.tokens.len()];
    if let Some(layout) = &asked.layout {
        for f in &layout.facts {
            for r in roles.iter_mut().take(f.number_at + 1).skip(f.start) {
                *r = "fact";
            }
        }
        for r in roles.iter_mut().skip(layout.question.start) {
            *r = "question";
        }
        for j in layout.answer_tokens() {
            roles[j] = "answer";
        }
    }
    roles
}

#[wasm_bindgen]
impl Lesson {
    /// A lesson with no models and no text.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Lesson {
        Lesson {
            models: Vec::new(),
            text: String::new(),
            theme: Theme::light(),
            painter: Painter::default(),
        }
    }

    /// Reads a retrieval weights file (`weights/retrieval/*.bin`) as the model `name`
    /// (replacing one of the same name). Throws an `Error` saying what is wrong with the file.
    pub fn load(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        let file = RetrievalFile::from_bytes(bytes)
            .map_err(|e| js_error(format!("{name}: retrieval weights: {e}")))?;
        let knobs = Knobs::of(&file.model);
        let loaded = Loaded {
            name: name.to_string(),
            file,
            knobs,
            asked: None,
        };
        match self.models.iter_mut().find(|m| m.name == name) {
            Some(m) => *m = loaded,
            None => self.models.push(loaded),
        }
        Ok(())
    }

    /// The loaded models in order (see `ModelInfoJs`).
    pub fn models(&self) -> Result<JsValue, JsError> {
        let all: Vec<ModelInfoJs> = self
            .models
            .iter()
            .map(|m| ModelInfoJs {
                name: m.name.clone(),
                layers: m
                    .file
                    .model
                    .layers
                    .iter()
                    .map(|l| {
                        let kind = l.mechanism.kind();
                        LayerInfoJs {
                            mechanism: l.mechanism.name(),
                            heads: l.heads,
                            stage: kind.final_stage().label(),
                            formula: kind.formula(kind.final_stage(), false, false),
                        }
                    })
                    .collect(),
                knobs: m
                    .knobs
                    .list()
                    .iter()
                    .map(|k| KnobJs {
                        layer: k.layer + 1,
                        name: k.kind.name(),
                        trained: k.trained,
                        value: k.value,
                        min: k.min,
                        max: k.max,
                        step: k.step,
                    })
                    .collect(),
                moved: m.knobs.moved(),
            })
            .collect();
        to_js(&all)
    }

    /// Sets the text put to every model.
    pub fn set_text(&mut self, text: &str) {
        if self.text != text {
            self.text = text.to_string();
            for m in &mut self.models {
                m.asked = None;
            }
        }
    }

    /// Moves the knob `name` (`shift`, `lambda`) of `layer` (from 1) of model `model`. Throws
    /// when the model has no such knob.
    pub fn set_knob(
        &mut self,
        model: &str,
        layer: usize,
        name: &str,
        value: f64,
    ) -> Result<(), JsError> {
        let m = self.model_mut(model)?;
        if layer == 0 || !m.knobs.set(layer - 1, name, value) {
            return Err(js_error(format!(
                "{model} has no knob {name:?} at layer {layer}"
            )));
        }
        m.asked = None;
        Ok(())
    }

    /// Every knob of `model` back at its trained value.
    pub fn reset_knobs(&mut self, model: &str) -> Result<(), JsError> {
        let m = self.model_mut(model)?;
        m.knobs.reset();
        m.asked = None;
        Ok(())
    }

    /// Puts the text to every model (with its knobs) and says what each answers and how its
    /// attention splits (see `AskedJs`). Throws when the text has no tokens.
    pub fn ask(&mut self) -> Result<JsValue, JsError> {
        for m in &mut self.models {
            if m.asked.is_none() {
                let mechanisms = m.knobs.mechanisms(&m.file.model);
                m.asked = Some(ask_with(&m.file.model, &self.text, &mechanisms).map_err(js_error)?);
            }
        }
        let Some(first) = self.models.first().and_then(|m| m.asked.as_ref()) else {
            return Err(JsError::new("no retrieval model is loaded"));
        };
        let out = AskedJs {
            tokens: first.tokens.clone(),
            roles: roles(first),
            question: first.layout.as_ref().map(|l| QuestionJs {
                noun: l.question.key.noun.clone(),
                name: l.question.key.name.clone(),
            }),
            expected: first.expected().map(|n| n.to_string()),
            facts: first.layout.as_ref().map_or(0, |l| l.facts.len()),
            unknown: first.unknown.clone(),
            models: self
                .models
                .iter()
                .filter_map(|m| {
                    let a = m.asked.as_ref()?;
                    Some(AnswerJs {
                        name: m.name.clone(),
                        answer: a.retrieval.answer.to_string(),
                        probability: a.retrieval.probability(),
                        layers: a
                            .measure
                            .as_ref()
                            .map(|me| me.layers.iter().map(|&s| s.into()).collect()),
                        retrieving_layer: a.measure.as_ref().map(|me| me.retrieving_layer() + 1),
                        mean: a.measure.as_ref().map(|me| me.mean().into()),
                        unknown_keys: a.unknown_keys.clone(),
                    })
                })
                .collect(),
        };
        to_js(&out)
    }

    /// Every layer of `model` over the text, with its knobs' values, as one multi-layer stages
    /// spec (DESIGN.md §7.11; `diffattn::retrieval::specs`): the JSON text the explorer's model
    /// view draws as every layer × head (`<diffattn-explorer view="model">`'s `loadSpec`), the
    /// file `diffattn retrieve --spec` writes. Throws for an unknown model or a text without
    /// tokens.
    pub fn spec_json(&mut self, model: &str) -> Result<String, JsError> {
        let text = self.text.clone();
        let m = self.model_mut(model)?;
        let asked = match m.asked.take() {
            Some(asked) => asked,
            None => {
                let mechanisms = m.knobs.mechanisms(&m.file.model);
                ask_with(&m.file.model, &text, &mechanisms).map_err(js_error)?
            }
        };
        let specs = layer_specs(&m.file.model, &m.name, &asked);
        m.asked = Some(asked);
        layers_json(&specs).to_text(false).map_err(js_error)
    }

    /// Sets the colours: `"light"` or `"dark"`.
    pub fn set_theme(&mut self, theme: &str) -> Result<(), JsError> {
        self.theme = match theme {
            "light" => Theme::light(),
            "dark" => Theme::dark(),
            other => {
                return Err(js_error(format!(
                    "theme: unknown {other:?}; expected \"light\" or \"dark\""
                )))
            }
        };
        Ok(())
    }

    /// Draws the final map (`A`, `A′` or `A1 − λ·A2`) of every head of `layer` (from 1) of
    /// `model`, one per canvas, on one scale, after `ask()`; marks the answer's tokens and the
    /// other facts' tokens on both axes. Returns the marks drawn (see `MarkJs`) of the first
    /// canvas.
    pub fn render(
        &mut self,
        model: &str,
        layer: usize,
        canvases: Vec<HtmlCanvasElement>,
        font_px: f32,
        title: &str,
    ) -> Result<JsValue, JsError> {
        let theme = self.theme;
        let m = self
            .models
            .iter()
            .find(|m| m.name == model)
            .ok_or_else(|| js_error(format!("no retrieval model {model:?}")))?;
        let asked = m
            .asked
            .as_ref()
            .ok_or_else(|| JsError::new("ask() before render()"))?;
        let stages = asked
            .retrieval
            .stages
            .get(layer.wrapping_sub(1))
            .ok_or_else(|| js_error(format!("{model} has no layer {layer}")))?;
        let maps = stages.final_maps();
        let heads: Vec<_> = maps.axis_iter(Axis(0)).collect();
        let kind = m.file.model.layers[layer - 1].mechanism.kind();
        let scale = Scale::for_maps(kind.final_stage().scale_kind(), &heads);
        let mask = CellMask::new(
            m.file.model.layers[layer - 1].mechanism.mask(true),
            kind.key_offset(),
        );
        let roles = roles(asked);
        let labels: Vec<String> = asked.tokens.clone();
        let widths = LabelWidths::measure(&labels, &labels);
        let mut marks = Vec::new();
        for (h, (canvas, map)) in canvases.iter().zip(&heads).enumerate() {
            let head_title = format!("{title} · {}", h + 1);
            let frame = Frame {
                title: &head_title,
                row_labels: &labels,
                col_labels: &labels,
                scale: &scale,
                theme: &theme,
                font_px,
                mask: Some(mask),
                masked_label: "",
                constant: constant_value(map.view()),
                constant_label: "",
                parts: FrameParts::ALL,
                strip: None,
            };
            let layout = self
                .painter
                .draw(canvas, None, map.view(), &frame, &widths)?;
            let drawn = mark_axes(canvas, &layout, &roles)?;
            if h == 0 {
                marks = drawn;
            }
        }
        to_js(&marks)
    }
}

impl Lesson {
    fn model_mut(&mut self, model: &str) -> Result<&mut Loaded, JsError> {
        self.models
            .iter_mut()
            .find(|m| m.name == model)
            .ok_or_else(|| js_error(format!("no retrieval model {model:?}")))
    }
}

/// Strips just outside the plot, above each marked column and left of each marked row.
fn mark_axes(
    canvas: &HtmlCanvasElement,
    layout: &diffattn::render::HeatmapLayout,
    roles: &[&'static str],
) -> Result<Vec<MarkJs>, JsError> {
    let ctx = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
    let plot = layout.plot;
    let (rows, cols) = (layout.rows.max(1), layout.cols.max(1));
    let thick = ((layout.font_px / 3.0).round() as i32).max(3);
    let gap = layout.border_px.max(1) + 1;
    let mut marks = Vec::new();
    for (j, &role) in roles.iter().enumerate() {
        let colour = match role {
            "answer" => ANSWER_MARK,
            "fact" => FACT_MARK,
            _ => continue,
        };
        let x0 = plot.x + (j as u64 * u64::from(plot.width) / cols as u64) as i32;
        let x1 = plot.x + ((j as u64 + 1) * u64::from(plot.width) / cols as u64) as i32;
        let y0 = plot.y + (j as u64 * u64::from(plot.height) / rows as u64) as i32;
        let y1 = plot.y + ((j as u64 + 1) * u64::from(plot.height) / rows as u64) as i32;
        ctx.set_fill_style_str(&format!("rgb({},{},{})", colour.0, colour.1, colour.2));
        let col = MarkJs {
            axis: "col",
            index: j,
            role,
            x: x0,
            y: plot.y - gap - thick,
            width: (x1 - x0).max(1) as u32,
            height: thick as u32,
        };
        let row = MarkJs {
            axis: "row",
            index: j,
            role,
            x: plot.x - gap - thick,
            y: y0,
            width: thick as u32,
            height: (y1 - y0).max(1) as u32,
        };
        for m in [&col, &row] {
            ctx.fill_rect(
                f64::from(m.x),
                f64::from(m.y),
                f64::from(m.width),
                f64::from(m.height),
            );
        }
        marks.push(col);
        marks.push(row);
    }
    Ok(marks)
}
