//! Drawing on the page's canvases: the shown head's stages (`render`), one stage of every head
//! (`render_all_heads`), the overview of a zoomed map, the row view, the layer output; the
//! viewport they draw, the labels they share and their colour scales.

use std::rc::Rc;

use plotters::style::RGBColor;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use super::handle::{now_ms, Explorer};
use super::js::{js_error, to_js, RectJs, TimingsJs, ViewportJs};
use diffattn::engine::{Columns, ScaleGroup, ScaleKind, StageId};
use diffattn::explorer::Need;
use diffattn::render::{constant_of, constant_value, CellMask, Frame, HeatmapLayout, LabelWidths};
use diffattn::render::{FrameParts, Strip, Theme};
use diffattn::render::{MapStats, RowChart, RowSeries, Scale, Viewport};

/// The mark after a token the model does not know, on the axes (the page's note explains it).
pub(super) const UNKNOWN_MARK: char = '†';

/// What [`SharedLabels`] are made from (`shared_labels` keeps the last ones'): the rows shown,
/// the tokens, the unknown ones, and each kind of column's labels with the part shown.
pub(super) struct LabelsFrom {
    shown: Viewport,
    tokens: Vec<String>,
    unknown: Option<Vec<usize>>,
    columns: Vec<(StageId, Vec<String>, Viewport)>,
}

/// What the maps of one render share: the row labels of the viewport and, per kind of column
/// (keys, segments, heads), the column labels it shows and the widest labels, measured once.
pub(super) struct SharedLabels {
    pub(super) rows: Vec<String>,
    by_columns: Vec<(Columns, Vec<String>, LabelWidths)>,
}

impl SharedLabels {
    /// The column labels and label widths of `stage`'s map.
    pub(super) fn of(&self, stage: StageId) -> (&[String], &LabelWidths) {
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
        self.draw_maps(&canvases, &drawn, &labels, font_px, |stage, _| {
            stage.label().to_string()
        })?;
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }

    /// Draws one stage (its name, e.g. `"fused"`; the final stage when empty) of every head,
    /// one per canvas, computing every head still missing (the page computes them first with
    /// `work`, in pieces between frames, when they would take long). Returns
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
        self.draw_maps(&canvases, &drawn, &labels, font_px, |stage, head| {
            format!("{} · {}", stage.label(), head + 1)
        })?;
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
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
        if !self.state.progress(Need::Shown).finished {
            // Still being computed (work): the overview keeps what it showed.
            return Ok(());
        }
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

    /// Draws the row view of query `row` (from 0) on `canvas`: every stage but the gate as a
    /// line over the keys, with `G ⊙ D`, and key `hovered` (from 0) highlighted. Returns
    /// `{ x, y, width, height }`, the plot in device pixels (`undefined` while the maps are still
    /// being computed), or throws for a row past the map.
    pub fn render_row(
        &mut self,
        canvas: HtmlCanvasElement,
        row: usize,
        font_px: f32,
        hovered: Option<usize>,
    ) -> Result<JsValue, JsError> {
        if !self.state.progress(Need::Shown).finished {
            // Still being computed (work): the row view keeps what it showed.
            return Ok(JsValue::UNDEFINED);
        }
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
        let index = self.layouts.len();
        let drawn: Vec<(StageId, usize)> = self
            .layouts
            .iter()
            .map(|l| (l.0, self.state.head()))
            .collect();
        let (parts, font_px) = self.parts_of(&drawn, true, index, font_px);
        let frame = Frame {
            title: if parts == FrameParts::ALL {
                "O = A′·V·W_oᵀ"
            } else {
                ""
            },
            row_labels: self.state.labels(),
            col_labels: &cols,
            scale: &scale,
            theme: &self.theme,
            font_px,
            mask: None,
            masked_label: &self.masked_label,
            constant: constant_value(output.view()),
            constant_label: &self.constant_label,
            parts,
            strip: None,
        };
        self.painter
            .draw(&canvas, Some(index), output.view(), &frame, &widths)?;
        to_js(&TimingsJs {
            compute_ms: t1 - t0,
            draw_ms: now_ms() - t1,
        })
    }
}

impl Explorer {
    /// Draws `drawn` (a stage of a head each), one per canvas, in the grid's parts and font,
    /// with the scales they share and the legend kept; `title` names a map that draws its own
    /// title (a map of the grid has it above, from the page). Keeps each map's layout and parts
    /// for hit-testing.
    fn draw_maps(
        &mut self,
        canvases: &[HtmlCanvasElement],
        drawn: &[(StageId, usize)],
        labels: &SharedLabels,
        font_px: f32,
        title: impl Fn(StageId, usize) -> String,
    ) -> Result<(), JsError> {
        let scales = self.scales(drawn);
        self.keep_legend(drawn, &scales);
        self.layouts.clear();
        self.drawn_parts.clear();
        for (i, ((canvas, &(stage, head)), scale)) in
            canvases.iter().zip(drawn).zip(scales).enumerate()
        {
            let (parts, font) = self.parts_of(drawn, false, i, font_px);
            let title = if parts == FrameParts::ALL {
                title(stage, head)
            } else {
                String::new()
            };
            let layout = self.draw(canvas, i, stage, head, &title, font, parts, labels, scale)?;
            self.layouts.push(layout);
            self.drawn_parts.push(parts);
        }
        Ok(())
    }

    /// Keeps the legend of the maps drawn: the scales they share, and whether any has cells
    /// the mask forbids (`render_legend` draws it).
    fn keep_legend(&mut self, drawn: &[(StageId, usize)], scales: &[Scale]) {
        let kinds: Vec<StageId> = drawn.iter().map(|d| d.0).collect();
        if self.shared_scale {
            self.legend = self.legend_scales(drawn, scales);
            self.legend_masked = self.any_masked(&kinds);
        } else {
            self.legend.clear();
            self.legend_masked = false;
        }
    }

    /// The cells the mask forbids in `stage`'s map, drawn hatched (none in a map whose
    /// columns are not keys).
    pub(super) fn cell_mask(&self, stage: StageId) -> Option<CellMask> {
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
    pub(super) fn stage_viewport(&self, stage: StageId, dim: (usize, usize)) -> Viewport {
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
    /// the columns' of each kind of column among `stages` (keys, segments, heads). A render
    /// whose labels are those of the one before (a slider's tick) measures nothing again: at
    /// 2,048 tokens cutting and measuring every label took milliseconds of each tick.
    pub(super) fn shared_labels(&mut self, stages: &[StageId]) -> Rc<SharedLabels> {
        let shown = self.shown_viewport();
        let mut kinds: Vec<StageId> = Vec::new();
        for &stage in stages {
            if !kinds.iter().any(|k| k.columns() == stage.columns()) {
                kinds.push(stage);
            }
        }
        if kinds.is_empty() {
            kinds.push(StageId::A);
        }
        // Each kind's labels whole and the part of them shown: with the rows shown, the
        // tokens and the unknown ones, all that the labels are made from.
        let mut columns = Vec::new();
        for stage in kinds {
            let all = self.state.column_labels(stage);
            let cols = self.stage_viewport(stage, (self.state.len(), all.len()));
            columns.push((stage, all, cols));
        }
        let unknown = self.state.unknown_tokens();
        if let Some((from, labels)) = &self.labels_memo {
            // The tokens compared where they are: a tick copies none of them.
            if from.shown == shown
                && from.tokens == self.state.labels()
                && from.unknown == unknown
                && from.columns == columns
            {
                return labels.clone();
            }
        }
        let from = LabelsFrom {
            shown,
            tokens: self.state.labels().to_vec(),
            unknown,
            columns,
        };
        let rows = self.marked(Viewport::labels(shown.row_range(), self.state.labels()));
        let mut by_columns = Vec::new();
        for (stage, all, cols) in &from.columns {
            let shown = Viewport::labels(cols.col_range(), all);
            let labels = if stage.columns() == Columns::Keys {
                self.marked(shown)
            } else {
                shown.to_vec()
            };
            let widths = LabelWidths::measure(&rows, &labels);
            by_columns.push((stage.columns(), labels, widths));
        }
        let labels = Rc::new(SharedLabels { rows, by_columns });
        self.labels_memo = Some((from, labels.clone()));
        labels
    }

    /// `labels` as the axes draw them: a token the trained model does not know (it reads it as
    /// `<unk>`) marked with [`UNKNOWN_MARK`] after it, wherever it appears (the vocabulary
    /// knows words, not positions).
    pub(super) fn marked(&self, labels: &[String]) -> Vec<String> {
        let unknown: Vec<&str> = match self.state.unknown_tokens() {
            Some(at) if !at.is_empty() => {
                let all = self.state.labels();
                at.iter()
                    .filter_map(|&i| all.get(i).map(String::as_str))
                    .collect()
            }
            _ => return labels.to_vec(),
        };
        labels
            .iter()
            .map(|l| {
                if unknown.contains(&l.as_str()) {
                    format!("{l}{UNKNOWN_MARK}")
                } else {
                    l.clone()
                }
            })
            .collect()
    }

    /// The frame of `stage`'s map drawn from `shown`: its title, the labels, its scale, the
    /// mask (for the SVG exports).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn frame<'a>(
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
            parts: FrameParts::ALL,
            strip: None,
        }
    }

    /// The colour scale of each map to draw (`(stage, head)`): its own, or shared by the maps of
    /// one `ScaleGroup` when `shared_scale` is on.
    pub(super) fn scales(&self, drawn: &[(StageId, usize)]) -> Vec<Scale> {
        // The maps' extremes, kept by the explorer with each map: no map is scanned twice.
        let stats = |&(stage, head): &(StageId, usize)| self.drawn_stats(stage, head);
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
                    ScaleGroup::Gate | ScaleGroup::OutputGate => ScaleKind::Unit,
                };
                // Round ends: the colours of maps that share a scale stay put while a slider
                // moves one of them a little.
                Scale::from_stats(kind, group).rounded_out()
            })
            .collect()
    }

    /// The extremes of what one head's map of `stage` draws: its cells, and the learned sink's
    /// strip beside it when it has one (the strip is on the map's scale, so the scale reaches
    /// its largest share).
    pub(super) fn drawn_stats(&self, stage: StageId, head: usize) -> Option<MapStats> {
        let stats = self.state.head_stats(stage, head)?;
        Some(match self.state.sink_shares(stage, head) {
            Some(shares) => stats.merge(MapStats::of(
                ndarray::ArrayView2::from_shape((1, shares.len()), &shares).ok()?,
            )),
            None => stats,
        })
    }

    /// Draws the viewport of one head's map of one stage on a canvas with `scale` (the whole
    /// map's); returns the stage, the layout and the part of the map drawn.
    #[allow(clippy::too_many_arguments)]
    fn draw(
        &mut self,
        canvas: &HtmlCanvasElement,
        slot: usize,
        stage: StageId,
        head: usize,
        title: &str,
        font_px: f32,
        parts: FrameParts,
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
        let shares = self.state.sink_shares(stage, head);
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
            parts,
            strip: shares.as_deref().map(|s| Strip {
                values: s.get(drawn.row_range()).unwrap_or_default(),
                label: &self.sink_label,
            }),
        };
        let layout = self
            .painter
            .draw(canvas, Some(slot), drawn.slice(map), &frame, widths)?;
        Ok((stage, layout, drawn))
    }
}
