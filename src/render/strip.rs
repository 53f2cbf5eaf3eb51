//! The learned sink's strip beside a map (DESIGN.md §7.9 and "The page" there): one narrow
//! column right of the plot, a small gap apart, whose cell in row `i` is the sink's share of
//! row `i` (`1 − Σ_j A_ij`), on the map's own colour scale, and labelled under it like one more
//! key ("sink"), so that a person sees where each row's missing mass went.
//!
//! Everything of it is here: the room it takes ([`extent_px`], which the grid and the layout
//! both use, so that a canvas of the grid's size holds a plot of the grid's size), where it
//! goes ([`HeatmapLayout::strip`], set by the layout), which row a point is on, its pixels
//! ([`strip_rgba`]), its border and label ([`draw_strip_frame`]) and its cells in an SVG.

use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind};
use plotters::element::Rectangle;
use plotters::prelude::DrawingBackend;
use plotters::style::{Color, RGBColor, TextStyle};

use super::label::{display_label, text_width_em, MAX_LABEL_GRAPHEMES};
use super::layout::{cell_index, HeatmapLayout, PixelRect};
use super::scale::Scale;

/// A strip to draw beside a map: one value per row drawn (the sink's share of that row) and
/// its label.
#[derive(Clone, Copy, Debug)]
pub struct Strip<'a> {
    /// One value per row drawn, in the rows' order.
    pub values: &'a [f32],
    /// Its label, drawn under it like a key's (the page's word for "sink").
    pub label: &'a str,
}

impl Strip<'_> {
    /// The label's width as drawn, in em (what the layout keeps room for under the strip).
    pub fn label_em(&self) -> f32 {
        text_width_em(&display_label(self.label, MAX_LABEL_GRAPHEMES))
    }
}

impl HeatmapLayout {
    /// The row of the strip under `(x_px, y_px)`, or `None` outside it (and without a strip).
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, LayoutSpec};
    /// let layout = HeatmapLayout::new(&LayoutSpec {
    ///     width_px: 300, height_px: 200, font_px: 10.0, rows: 2, cols: 2,
    ///     row_label_em: 2.0, col_label_em: 2.0, tick_label_em: 2.0, title_em: 0.0, colorbar: true, padded: true,
    ///     strip: Some(2.0),
    /// });
    /// let s = layout.strip;
    /// assert!(s.x > layout.plot.right() && s.height == layout.plot.height && s.width > 0);
    /// assert_eq!(layout.strip_row_at(f64::from(s.x), f64::from(s.bottom()) - 1.0), Some(1));
    /// assert_eq!(layout.strip_row_at(f64::from(s.x) - 1.0, f64::from(s.y)), None);
    /// ```
    pub fn strip_row_at(&self, x_px: f64, y_px: f64) -> Option<usize> {
        if self.rows == 0 || !self.strip.contains(x_px, y_px) {
            return None;
        }
        let pixel_y = (y_px.floor() as i64 - i64::from(self.strip.y)) as u64;
        Some(cell_index(pixel_y, self.rows, self.strip.height))
    }

    /// The pixels of row `row`'s cell of the strip (the row's pixels of the plot, the strip's
    /// width); an empty rectangle without a strip.
    pub fn strip_cell_rect(&self, row: usize) -> PixelRect {
        if self.strip.width == 0 {
            return PixelRect::default();
        }
        let cell = self.cell_rect(row, 0);
        PixelRect {
            x: self.strip.x,
            width: self.strip.width,
            ..cell
        }
    }
}

/// Fills `out` with the pixels of `layout.strip` for `strip`'s values on `scale`, row-major,
/// 4 bytes per pixel: each row of pixels the colour of the row under its centre, as the plot's
/// pixels are ([`crate::render::plot_rgba`]). Empty without a strip.
pub fn strip_rgba(strip: &Strip, scale: &Scale, layout: &HeatmapLayout, out: &mut Vec<u8>) {
    out.clear();
    let s = layout.strip;
    let rows = strip.values.len().min(layout.rows);
    if s.width == 0 || s.height == 0 || rows == 0 {
        return;
    }
    let lut = scale.lut();
    for y in 0..u64::from(s.height) {
        let rgba = lut.rgba(strip.values[cell_index(y, layout.rows, s.height).min(rows - 1)]);
        for _ in 0..s.width {
            out.extend_from_slice(&rgba);
        }
    }
}

/// The strip's border and its label under it, rotated like the keys' labels (`style`).
pub(super) fn draw_strip_frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    strip: &Strip,
    layout: &HeatmapLayout,
    border: &RGBColor,
    style: &TextStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let s = layout.strip;
    if s.width == 0 {
        return Ok(());
    }
    let b = layout.border_px.max(1);
    let sides = [
        [(s.x - b, s.y - b), (s.right() + b, s.y)],
        [(s.x - b, s.bottom()), (s.right() + b, s.bottom() + b)],
        [(s.x - b, s.y), (s.x, s.bottom())],
        [(s.right(), s.y), (s.right() + b, s.bottom())],
    ];
    for side in sides {
        area.draw(&Rectangle::new(side, border.filled()))?;
    }
    area.draw_text(
        &display_label(strip.label, MAX_LABEL_GRAPHEMES),
        style,
        (s.x + s.width as i32 / 2, s.bottom() + layout.gap_px),
    )
}

/// The strip's cells as one rectangle each, for the SVG export.
pub(super) fn draw_strip_cells<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    strip: &Strip,
    scale: &Scale,
    layout: &HeatmapLayout,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let lut = scale.lut();
    for (row, &v) in strip.values.iter().enumerate().take(layout.rows) {
        let cell = layout.strip_cell_rect(row);
        if cell.width == 0 || cell.height == 0 {
            continue;
        }
        let [r, g, b, _] = lut.rgba(v);
        let corners = [(cell.x, cell.y), (cell.right(), cell.bottom())];
        area.draw(&Rectangle::new(corners, RGBColor(r, g, b).filled()))?;
    }
    Ok(())
}
