//! The grid the page lays its maps out in (`fit_grid`), and the legend of the scales they
//! share (`render_legend`). The grid is fitted to the room the page measures, kept, and the
//! next `render` (or `render_all_heads`, `render_output`) draws each map with the parts and
//! the label font the grid gave it, on the canvas the page sized from it.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use super::handle::Explorer;
use super::js::{js_error, to_js, RectJs};
use diffattn::engine::{ScaleGroup, StageId};
use diffattn::render::LabelWidths;
use diffattn::render::{fit_focus, fit_grid, Frame, FrameParts, GridLayout, GridMap, GridSpec};
use diffattn::render::{Legend, LegendEntry, PixelRect, Scale, Strip};

/// What the page asks a grid for: `{ width_px, height_px, font_px, title_px, gap_px, stages,
/// all_heads, output, min_plot_px, max_plot_px, focus }`, sizes in device pixels (`height_px`
/// 0 lays the maps out by width alone); `stages` the stages drawn (names; for `all_heads` the
/// one stage of every head); `output` adds the layer output after them (the walk's last step);
/// `focus`, the index of a map drawn large with the others small beside it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GridAskJs {
    width_px: u32,
    #[serde(default)]
    height_px: u32,
    font_px: f32,
    #[serde(default)]
    title_px: u32,
    #[serde(default)]
    gap_px: u32,
    stages: Vec<String>,
    #[serde(default)]
    all_heads: bool,
    #[serde(default)]
    output: bool,
    #[serde(default)]
    min_plot_px: u32,
    #[serde(default)]
    max_plot_px: u32,
    /// The map drawn large, the others as thumbnails beside it (the guided walk's step).
    #[serde(default)]
    focus: Option<usize>,
}

/// The grid `fit_grid` returns: `{ cols, rows, plot_px, font_px, width_px, height_px, places:
/// [{ x, y, width, height, plot: { x, y, width, height } }], legend: { x, y, width, height } |
/// null }`, in device pixels; each place is a canvas (its title line the `title_px` above it),
/// with its plot relative to it.
#[derive(Serialize)]
struct GridJs {
    cols: usize,
    rows: usize,
    plot_px: u32,
    font_px: f32,
    width_px: u32,
    height_px: u32,
    places: Vec<PlaceJs>,
    legend: Option<RectJs>,
}

/// `{ x, y, width, height, plot: { x, y, width, height } }`
#[derive(Serialize)]
struct PlaceJs {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
    plot: RectJs,
}

/// `{ frames, cells }`
#[derive(Serialize)]
struct DrawCountsJs {
    frames: u64,
    cells: u64,
}

/// `{ font_px, row_labels, col_labels, row_stride, col_stride }`
#[derive(Serialize)]
struct LabelsDrawnJs {
    font_px: f32,
    row_labels: bool,
    col_labels: bool,
    row_stride: usize,
    col_stride: usize,
}

/// The grid the next render draws in: the maps it was fitted for and what each draws.
pub(super) struct Fitted {
    drawn: Vec<(StageId, usize)>,
    output: bool,
    layout: GridLayout,
}

/// One colour scale of the legend: the maps' names, the scale and, for maps of one value,
/// that value.
pub(super) struct LegendScale {
    title: String,
    scale: Scale,
    constant: Option<f32>,
}

/// The head drawn with `stage` (the first, in the all-heads view).
fn drawn_head(drawn: &[(StageId, usize)], stage: StageId) -> usize {
    drawn.iter().find(|d| d.0 == stage).map_or(0, |d| d.1)
}

fn rect_js(r: PixelRect) -> RectJs {
    RectJs {
        x: r.x,
        y: r.y,
        width: r.width,
        height: r.height,
    }
}

#[wasm_bindgen]
impl Explorer {
    /// Fits the maps to draw into a room (see `GridAskJs`) and keeps the grid for the next
    /// render: every map as large as the room allows, cells square and the same size in every
    /// map, row labels on the first column only, column labels only under a map with none
    /// below, and the scales the maps share (the default) drawn once in a legend. Returns
    /// the grid (see `GridJs`); the page sizes each canvas to its place.
    pub fn fit_grid(&mut self, ask: JsValue) -> Result<JsValue, JsError> {
        let ask: GridAskJs = serde_wasm_bindgen::from_value(ask).map_err(js_error)?;
        let stages = ask
            .stages
            .iter()
            .map(|s| self.stage_shown(s))
            .collect::<Result<Vec<_>, _>>()?;
        let drawn: Vec<(StageId, usize)> = if ask.all_heads {
            let stage = stages
                .first()
                .copied()
                .unwrap_or_else(|| self.state.final_stage());
            (0..self.state.settings().maps.heads)
                .map(|h| (stage, h))
                .collect()
        } else {
            let head = self.state.head();
            stages.iter().map(|&s| (s, head)).collect()
        };
        let kinds: Vec<StageId> = drawn.iter().map(|d| d.0).collect();
        // The whole maps, whatever part of them is zoomed into: the canvases keep their size
        // while a person zooms (the cell under the pointer stays under it), and the labels of
        // any window fit the room kept for all of them.
        let labels = self.shared_labels(&kinds);
        let all_rows = self.marked(self.state.labels());
        let rows = all_rows.len();
        let row_label_em = LabelWidths::measure(&all_rows, &[]).rows_em;
        let scales = self.scales(&drawn);
        let mut maps = Vec::with_capacity(drawn.len() + 1);
        for (&(stage, _), scale) in drawn.iter().zip(&scales) {
            let all_cols = match stage.columns() {
                diffattn::engine::Columns::Keys => self.marked(&self.state.column_labels(stage)),
                _ => self.state.column_labels(stage),
            };
            let cols = all_cols.len();
            let own_bar_em = (!self.shared_scale).then(|| {
                let theme = self.theme;
                let shown = self.stage_viewport(stage, (rows, cols));
                let frame = Frame {
                    constant: self
                        .state
                        .head_stats(stage, drawn_head(&drawn, stage))
                        .and_then(diffattn::render::constant_of),
                    ..self.frame(stage, "", &labels, shown, scale, &theme, 12.0)
                };
                frame.tick_label_em((rows, cols))
            });
            // The learned sink's strip beside a softmax map that lost mass to it.
            let strip = Strip {
                values: &[],
                label: &self.sink_label,
            };
            maps.push(GridMap {
                rows,
                cols,
                col_label_em: LabelWidths::measure(&[], &all_cols).cols_em,
                own_bar_em,
                strip: self.state.has_sink(stage).then(|| strip.label_em()),
            });
        }
        if ask.output {
            let d = self.state.d_model();
            let cols: Vec<String> = (1..=d).map(|c| c.to_string()).collect();
            maps.push(GridMap {
                rows,
                cols: d,
                col_label_em: LabelWidths::measure(&[], &cols).cols_em,
                // The output's scale is its own: "-0.00" and the like beside its bar.
                own_bar_em: Some(3.2),
                strip: None,
            });
        }
        let legend = if self.shared_scale {
            self.legend_scales(&drawn, &scales).len() + usize::from(self.any_masked(&kinds))
        } else {
            0
        };
        let spec = GridSpec {
            width_px: ask.width_px,
            height_px: (ask.height_px > 0).then_some(ask.height_px),
            maps: &maps,
            font_px: ask.font_px,
            row_label_em,
            title_px: ask.title_px,
            gap_px: ask.gap_px,
            legend_entries: legend,
            max_plot_px: ask.max_plot_px,
            min_plot_px: ask.min_plot_px,
        };
        let layout = match ask.focus {
            Some(focus) if focus < maps.len() => fit_focus(&spec, focus),
            _ => fit_grid(&spec),
        };
        let js = GridJs {
            cols: layout.cols,
            rows: layout.rows,
            plot_px: layout.plot_px,
            font_px: layout.font_px,
            width_px: layout.width_px,
            height_px: layout.height_px,
            places: layout
                .places
                .iter()
                .map(|p| PlaceJs {
                    x: p.canvas.x,
                    y: p.canvas.y,
                    width: p.canvas.width,
                    height: p.canvas.height,
                    plot: rect_js(p.plot),
                })
                .collect(),
            legend: layout.legend.map(rect_js),
        };
        self.fitted = Some(Fitted {
            drawn,
            output: ask.output,
            layout,
        });
        to_js(&js)
    }

    /// Forgets what the maps' canvases show: the page made new ones (or cleared them), and the
    /// next render draws every map whole, not only its cells.
    pub fn forget_drawn(&mut self) {
        self.painter.forget();
    }

    /// How many maps this handle has drawn whole (`frames`: labels, borders, colour bar) and
    /// how many times it put their cells on (`cells`): `{ frames, cells }`. A slider's tick that
    /// moves no label and no scale puts cells on and draws no frame.
    pub fn draw_counts(&self) -> Result<JsValue, JsError> {
        to_js(&DrawCountsJs {
            frames: self.painter.frames_drawn,
            cells: self.painter.cells_drawn,
        })
    }

    /// How map `index` of the last render labels its axes: `{ font_px, row_labels,
    /// col_labels, row_stride, col_stride }` (device pixels; a stride of 1 labels every token,
    /// 2 every other), or `undefined` for no such map. The screen reader's table and the tests
    /// read it; a stride over 1 is what zooming in reveals.
    pub fn labels_drawn(&self, index: usize) -> Result<JsValue, JsError> {
        let (Some((_, layout, _)), Some(parts)) =
            (self.layouts.get(index), self.drawn_parts.get(index))
        else {
            return Ok(JsValue::UNDEFINED);
        };
        to_js(&LabelsDrawnJs {
            font_px: layout.font_px,
            row_labels: parts.row_labels,
            col_labels: parts.col_labels,
            row_stride: layout.row_label_stride,
            col_stride: layout.col_label_stride,
        })
    }

    /// Draws the legend of the last maps drawn on `canvas` (its width and height attributes):
    /// one bar per scale they share, the masked cells' swatch. Clears it when the maps have
    /// their own colorbars.
    pub fn render_legend(&mut self, canvas: HtmlCanvasElement) -> Result<(), JsError> {
        let entries: Vec<LegendEntry> = self
            .legend
            .iter()
            .map(|l| LegendEntry {
                title: &l.title,
                scale: &l.scale,
                constant: l.constant,
            })
            .collect();
        let font = self.fitted.as_ref().map_or(12.0, |f| f.layout.font_px);
        let legend = Legend {
            entries: &entries,
            masked_label: self.legend_masked.then_some(self.masked_label.as_str()),
            constant_label: &self.constant_label,
            theme: &self.theme,
            font_px: font,
        };
        self.painter.draw_legend(&canvas, &legend)
    }
}

impl Explorer {
    /// The parts and label font map `index` of the fitted grid draws with, when the grid was
    /// fitted for exactly `drawn` (the stages' maps; `output`: the layer output's, after them);
    /// else every part, at `font_px`.
    pub(super) fn parts_of(
        &self,
        drawn: &[(StageId, usize)],
        output: bool,
        index: usize,
        font_px: f32,
    ) -> (FrameParts, f32) {
        match &self.fitted {
            Some(f) if f.drawn == drawn && (f.output || !output) => f
                .layout
                .places
                .get(index)
                .map_or((FrameParts::ALL, font_px), |p| (p.parts, f.layout.font_px)),
            _ => (FrameParts::ALL, font_px),
        }
    }

    /// The scales the legend shows for `drawn` with `scales` (each map's): one per scale
    /// group, in the maps' order, named by the maps that use it.
    pub(super) fn legend_scales(
        &self,
        drawn: &[(StageId, usize)],
        scales: &[Scale],
    ) -> Vec<LegendScale> {
        /// A scale group met so far: its maps' names, the scale, the first map's constant
        /// value and whether every map of it is that value.
        struct Group {
            kind: ScaleGroup,
            names: Vec<String>,
            scale: Scale,
            constant: Option<f32>,
            all_constant: bool,
        }
        let mut groups: Vec<Group> = Vec::new();
        for (&(stage, head), scale) in drawn.iter().zip(scales) {
            let constant = self
                .state
                .head_stats(stage, head)
                .and_then(diffattn::render::constant_of);
            let name = stage.label().to_string();
            match groups.iter_mut().find(|g| g.kind == stage.scale_group()) {
                Some(g) => {
                    if !g.names.contains(&name) {
                        g.names.push(name);
                    }
                    // A constant swatch only when every map of the group is that one value.
                    g.all_constant &= constant.is_some() && constant == g.constant;
                }
                None => groups.push(Group {
                    kind: stage.scale_group(),
                    names: vec![name],
                    scale: *scale,
                    constant,
                    all_constant: constant.is_some(),
                }),
            }
        }
        groups
            .into_iter()
            .map(|g| LegendScale {
                title: g.names.join(", "),
                scale: g.scale,
                constant: g.constant.filter(|_| g.all_constant),
            })
            .collect()
    }

    /// Whether any of these stages' maps has cells the mask forbids.
    pub(super) fn any_masked(&self, stages: &[StageId]) -> bool {
        let (rows, cols) = (self.state.len(), self.state.key_labels().len());
        stages
            .iter()
            .any(|&s| self.cell_mask(s).is_some_and(|m| m.forbids_any(rows, cols)))
    }
}
