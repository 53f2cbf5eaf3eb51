//! What the page asks about the maps drawn: the cell or row label under the pointer, a cell's
//! rectangle, the numbers behind a cell, a window of a map (the screen-reader table), a map's
//! extremes and column labels.

use wasm_bindgen::prelude::*;

use super::handle::Explorer;
use super::js::{to_js, window_js, CellJs, ExtremeJs, ExtremesJs, RectJs};

#[wasm_bindgen]
impl Explorer {
    /// The cell under a device-pixel position of the `index`-th canvas of the last render:
    /// `[row, key]` of the whole map (also when a viewport is drawn), or `undefined` outside
    /// the map. A map whose columns are not keys answers with the key its column stands for
    /// (a segment's first token; for V2's λ per head, the first key), so every map highlights
    /// the same query and key. A cell of the learned sink's strip answers `[row, keys]`, the
    /// column past the last key (`cell` then describes the sink's share of that row).
    pub fn hit(&self, index: usize, x_px: f64, y_px: f64) -> Option<Vec<u32>> {
        let (stage, layout, drawn) = self.layouts.get(index)?;
        if let Some(row) = layout.strip_row_at(x_px, y_px) {
            return Some(vec![
                (row + drawn.row) as u32,
                self.state.key_count() as u32,
            ]);
        }
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

    /// The key under a device-pixel position of the last row view, or `undefined`.
    pub fn row_hit(&self, x_px: f64, y_px: f64) -> Option<usize> {
        self.row_layout?.key_at(x_px, y_px)
    }

    /// The device-pixel rectangle of the cell of query `row` and key `key` (of the whole map)
    /// in the `index`-th canvas of the last render (in a map whose columns are not keys, the
    /// column the key falls in; for the key past the last, the cell of the learned sink's
    /// strip): `{ x, y, width, height }`, or `undefined` when the viewport drawn does not show
    /// it.
    pub fn cell_rect(&self, index: usize, row: usize, key: usize) -> Result<JsValue, JsError> {
        let Some((stage, layout, drawn)) = self.layouts.get(index) else {
            return Ok(JsValue::UNDEFINED);
        };
        let col = self.state.column_of_key(*stage, key);
        let strip = key == self.state.key_count() && layout.strip.width > 0;
        match (layout, drawn) {
            (layout, drawn) if strip && drawn.row_range().contains(&row) => {
                let r = layout.strip_cell_rect(row - drawn.row);
                to_js(&RectJs {
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                })
            }
            (layout, drawn) if !strip && drawn.contains(row, col) => {
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

    /// The numbers behind one cell of the shown head (see `CellJs`), or `undefined` (also
    /// while its maps are still being computed: hovering computes nothing).
    pub fn cell(&mut self, row: usize, col: usize) -> Result<JsValue, JsError> {
        match self.state.cell(row, col) {
            Some(info) => to_js(&CellJs::from(info)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// A window of the shown head's map of `stage`: at most `rows × cols` cells from `(row,
    /// col)`, as `{ rows, cols, row, col, data: Float32Array }` (row-major), or `undefined`
    /// when the mechanism has no such stage or its maps are still being computed. What the
    /// screen-reader table shows, without copying the whole map.
    pub fn window(
        &mut self,
        stage: &str,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<JsValue, JsError> {
        let stage = self.stage_shown(stage)?;
        match self.state.map_window(stage, row, col, rows, cols) {
            Some(w) => window_js(&w, row, col),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// The learned sink's share of rows `row..row + rows` of the shown head's map of `stage`
    /// (its strip's cells, as a `Float32Array`), or `undefined` for a map without a sink strip
    /// or not yet computed: the screen-reader table's column beside `window`'s.
    pub fn sink_window(
        &self,
        stage: &str,
        row: usize,
        rows: usize,
    ) -> Result<Option<Vec<f32>>, JsError> {
        let stage = self.stage_shown(stage)?;
        let Some(shares) = self.state.sink_shares(stage, self.state.head()) else {
            return Ok(None);
        };
        let end = row.saturating_add(rows).min(shares.len());
        Ok(Some(
            shares.get(row.min(end)..end).unwrap_or_default().to_vec(),
        ))
    }

    /// The largest and smallest allowed cells of the shown head's map of `stage`:
    /// `{ max: { row, col, value, query, key }, min: { … } }`, or `undefined` (also while the
    /// maps are still being computed).
    pub fn extremes(&mut self, stage: &str) -> Result<JsValue, JsError> {
        let stage = self.stage_shown(stage)?;
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

    /// The shown head's whole map of `stage` (its name; the final stage when empty), row by row
    /// (a `Float32Array`), computing it if need be: what the compare view matches other
    /// models' heads against. Empty for an empty sentence.
    pub fn map_values(&mut self, stage: &str) -> Result<Vec<f32>, JsError> {
        let stage = if stage.is_empty() {
            self.state.final_stage()
        } else {
            self.stage_shown(stage)?
        };
        self.state.compute().map_err(super::js::js_error)?;
        Ok(self
            .state
            .map(stage)
            .map(|m| m.iter().copied().collect())
            .unwrap_or_default())
    }

    /// The head whose map of `stage` (its name; the final stage when empty) is closest to
    /// `reference` (a map of the same shape, row by row, from `map_values` of another handle),
    /// computing every head: `{ head, cosines }` (`head` from 1; every head's cosine with the
    /// reference, in order), or `undefined` when the shapes differ.
    pub fn closest_head(&mut self, reference: Vec<f32>, stage: &str) -> Result<JsValue, JsError> {
        let stage = if stage.is_empty() {
            self.state.final_stage()
        } else {
            self.stage_shown(stage)?
        };
        match self
            .state
            .closest_head(stage, &reference)
            .map_err(super::js::js_error)?
        {
            Some(c) => to_js(&ClosestJs {
                head: c.head + 1,
                cosines: c.cosines,
            }),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

/// `{ head, cosines }`: the closest head from 1, and every head's cosine with the reference.
#[derive(serde::Serialize)]
struct ClosestJs {
    head: usize,
    cosines: Vec<f32>,
}
