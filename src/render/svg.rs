//! Standalone SVG documents of maps, for the page's "export SVG" and for native tests.
//!
//! Here the cells are drawn as one rectangle each (the page blits them instead), with the same
//! layout and colours as on screen. Text is escaped by plotters' SVG backend and cleaned of
//! control characters by [`crate::render::display_label`], so any label gives valid XML.

use ndarray::ArrayView2;
use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind, IntoDrawingArea};
use plotters::element::{PathElement, Rectangle};
use plotters::prelude::{DrawingBackend, SVGBackend};
use plotters::style::{Color, RGBColor};

use super::cells::MASKED_RGB;
use super::frame::{draw_frame_for_shape, Frame};
use super::layout::HeatmapLayout;
use super::strip::draw_strip_cells;

/// plotters' SVG backend writes a text size `s` as `font-size="s / 1.24"` (a canvas uses `s`
/// pixels); multiplying by this makes the SVG's text the same size as on the canvas.
const SVG_TEXT_SCALE: f64 = 1.24;

/// One map with its frame, for [`panel_svg`].
#[derive(Clone, Copy, Debug)]
pub struct Panel<'a> {
    /// The values, `(queries, keys)`.
    pub map: ArrayView2<'a, f32>,
    /// The title, labels, scale and theme to draw it with.
    pub frame: Frame<'a>,
}

/// A complete SVG document of `map` drawn in `frame`, `width_px` x `height_px` (the frame's
/// `font_px` is in the same pixels). The map's shape decides the grid: labels past it are
/// ignored and missing ones left blank.
///
/// ```
/// use diffattn::render::{heatmap_svg, Frame, FrameParts, Scale, Theme};
/// use ndarray::array;
/// let tokens: Vec<String> = ["a", "<b>"].map(String::from).to_vec();
/// let attn = array![[1.0_f32, 0.0], [0.5, 0.5]];
/// let frame = Frame {
///     title: "A", row_labels: &tokens, col_labels: &tokens,
///     scale: &Scale::unit(), theme: &Theme::light(), font_px: 12.0,
///     mask: None, masked_label: "", constant: None, constant_label: "",
///     parts: FrameParts::ALL, strip: None,
/// };
/// let svg = heatmap_svg(attn.view(), &frame, 300, 300);
/// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
/// assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
/// ```
pub fn heatmap_svg(map: ArrayView2<f32>, frame: &Frame, width_px: u32, height_px: u32) -> String {
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, (width_px, height_px)).into_drawing_area();
        // Writing into a String cannot fail, so there is no error to pass on.
        let _ = draw_heatmap(&area, map, frame).and_then(|_| area.present());
    }
    svg
}

/// Several maps side by side in one SVG document, each `panel_width_px` x `height_px` with its
/// own frame (title, labels, scale).
///
/// ```
/// use diffattn::render::{panel_svg, Frame, FrameParts, Panel, Scale, Theme};
/// use ndarray::array;
/// let tokens: Vec<String> = ["x", "y"].map(String::from).to_vec();
/// let (a, d) = (array![[0.5_f32, 0.5], [1.0, 0.0]], array![[0.0_f32, 0.25], [-0.5, 0.5]]);
/// let (seq, div, theme) = (Scale::unit(), Scale::diverging(0.5), Theme::light());
/// let frame = |title, scale| Frame {
///     title, row_labels: &tokens, col_labels: &tokens, scale, theme: &theme, font_px: 12.0,
///     mask: None, masked_label: "", constant: None, constant_label: "",
///     parts: FrameParts::ALL, strip: None,
/// };
/// let svg = panel_svg(
///     &[
///         Panel { map: a.view(), frame: frame("A", &seq) },
///         Panel { map: d.view(), frame: frame("D", &div) },
///     ],
///     300,
///     300,
/// );
/// assert!(svg.starts_with("<svg width=\"600\" height=\"300\""));
/// ```
pub fn panel_svg(panels: &[Panel], panel_width_px: u32, height_px: u32) -> String {
    let width_px = panel_width_px.saturating_mul(panels.len() as u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width_px, height_px)).into_drawing_area();
        for (i, panel) in panels.iter().enumerate() {
            let x0 = (panel_width_px as usize).saturating_mul(i) as i32;
            let area = root.clone().shrink((x0, 0), (panel_width_px, height_px));
            let _ = draw_heatmap(&area, panel.map, &panel.frame);
        }
        let _ = root.present();
    }
    svg
}

/// The frame, then every cell of `map` as a filled rectangle (cells with no pixels skipped).
fn draw_heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: ArrayView2<f32>,
    frame: &Frame,
) -> Result<HeatmapLayout, DrawingAreaErrorKind<DB::ErrorType>> {
    let layout = draw_frame_for_shape(area, frame, map.dim(), SVG_TEXT_SCALE)?;
    let lut = frame.scale.lut();
    let cols = map.ncols();
    let [light, dark] = [MASKED_RGB[1], MASKED_RGB[0]].map(|[r, g, b]| RGBColor(r, g, b));
    for ((row, col), &v) in map.indexed_iter() {
        let cell = layout.cell_rect(row, col);
        if cell.width == 0 || cell.height == 0 {
            continue;
        }
        let corners = [(cell.x, cell.y), (cell.right(), cell.bottom())];
        let allowed = frame
            .mask
            .is_none_or(|m| m.allowed(row, cols).contains(&col));
        if allowed {
            let [r, g, b, _] = lut.rgba(v);
            area.draw(&Rectangle::new(corners, RGBColor(r, g, b).filled()))?;
        } else {
            // Forbidden by the mask: the hatching's light grey crossed by one dark diagonal.
            area.draw(&Rectangle::new(corners, light.filled()))?;
            let diagonal = vec![(cell.x, cell.bottom()), (cell.right(), cell.y)];
            area.draw(&PathElement::new(diagonal, dark.stroke_width(1)))?;
        }
    }
    if let Some(strip) = frame.drawn_strip() {
        draw_strip_cells(area, &strip, frame.scale, &layout)?;
    }
    Ok(layout)
}
