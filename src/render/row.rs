//! The row view: one query token's row of every stage drawn as lines over the keys, on one
//! axis, so a learner sees `A`, `shift(A)`, `D`, `G ⊙ D` and `A′` for the same keys together.
//!
//! Drawn with plotters' drawing primitives (rectangles, paths, circles, text) on any backend,
//! like the heatmap frame: no chart machinery, so nothing here needs a browser, and the SVG
//! backend tests it natively. The geometry ([`RowLayout`]) is kept for hit-testing the pointer.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind};
use plotters::element::{Circle, PathElement, Rectangle};
use plotters::prelude::DrawingBackend;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontDesc, FontFamily, FontStyle, FontTransform, RGBColor, TextStyle};

use super::label::{display_label, text_width_em, MAX_LABEL_GRAPHEMES, MAX_TITLE_GRAPHEMES};
use super::layout::PixelRect;
use super::scale::Scale;
use super::theme::Theme;

/// One line of the chart: a stage's values for the row, one per key.
#[derive(Clone, Debug)]
pub struct RowSeries<'a> {
    /// What the line is (`"A"`, `"G ⊙ D"`), drawn in the legend.
    pub label: &'a str,
    /// One value per key.
    pub values: Vec<f32>,
    /// The line's colour.
    pub color: RGBColor,
    /// Drawn dashed (for a copy of another line, like `shift(A)`).
    pub dashed: bool,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct RowChart<'a> {
    /// Drawn above the plot.
    pub title: &'a str,
    /// One label per key, drawn below the plot.
    pub keys: &'a [String],
    /// The lines.
    pub series: &'a [RowSeries<'a>],
    /// The key to highlight (the one the pointer is on), if any.
    pub hovered: Option<usize>,
    /// The keys the mask allows for this row; the others are shaded.
    pub allowed: Range<usize>,
    /// The colours of everything but the lines.
    pub theme: &'a Theme,
    /// The label font size in device pixels.
    pub font_px: f32,
}

/// The geometry of a drawn row chart, in device pixels of its drawing area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowLayout {
    /// The plot rectangle; key `j` is the band `j` of `keys` equal bands across it.
    pub plot: PixelRect,
    /// The number of keys.
    pub keys: usize,
    /// The value range of the y axis, bottom to top.
    pub range: (f32, f32),
}

impl RowLayout {
    /// The key under the horizontal position `x_px`, or `None` outside the plot.
    pub fn key_at(&self, x_px: f64, y_px: f64) -> Option<usize> {
        if self.keys == 0 || !self.plot.contains(x_px, y_px) {
            return None;
        }
        let t = (x_px - f64::from(self.plot.x)) / f64::from(self.plot.width.max(1));
        Some(((t * self.keys as f64) as usize).min(self.keys - 1))
    }

    /// The centre of key `j`'s band.
    pub fn key_x(&self, j: usize) -> i32 {
        let band = f64::from(self.plot.width) / self.keys.max(1) as f64;
        self.plot.x + ((j as f64 + 0.5) * band).round() as i32
    }

    /// The vertical position of value `v`.
    pub fn value_y(&self, v: f32) -> i32 {
        let (lo, hi) = self.range;
        let t = f64::from(((v - lo) / (hi - lo)).clamp(0.0, 1.0));
        self.plot.bottom() - (t * f64::from(self.plot.height)).round() as i32
    }
}

/// The y range that holds every finite value and 0, with a little room above and below.
fn value_range(series: &[RowSeries]) -> (f32, f32) {
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.values.iter())
        .filter(|v| v.is_finite())
        .fold((0.0_f32, 0.0_f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let span = (hi - lo).max(1e-6);
    let pad = span * 0.06;
    (if lo < 0.0 { lo - pad } else { 0.0 }, hi + pad)
}

/// Draws the chart filling `area` and returns its layout.
///
/// ```
/// use diffattn::render::{draw_row_chart, RowChart, RowSeries, Theme};
/// use plotters::prelude::*;
/// let keys: Vec<String> = ["the", "cat", "sat"].map(String::from).to_vec();
/// let series = [RowSeries { label: "A", values: vec![0.2, 0.5, 0.3], color: RED, dashed: false }];
/// let chart = RowChart {
///     title: "row 2", keys: &keys, series: &series, hovered: Some(1), allowed: 0..3,
///     theme: &Theme::light(), font_px: 12.0,
/// };
/// let mut svg = String::new();
/// let layout = {
///     let area = SVGBackend::with_string(&mut svg, (600, 300)).into_drawing_area();
///     draw_row_chart(&area, &chart).unwrap()
/// };
/// assert_eq!(layout.keys, 3);
/// assert!(layout.value_y(0.5) < layout.value_y(0.2), "larger values are higher");
/// assert!(svg.contains("cat"));
/// ```
pub fn draw_row_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &RowChart,
) -> Result<RowLayout, DrawingAreaErrorKind<DB::ErrorType>> {
    let (width, height) = area.dim_in_pixel();
    let f = f64::from(chart.font_px.clamp(1.0, 200.0));
    let px = |em: f64| (em * f).round() as i32;
    let theme = chart.theme;
    let text = |h: HPos, v: VPos| -> TextStyle<'static> {
        FontDesc::new(FontFamily::SansSerif, f, FontStyle::Normal)
            .color(&theme.foreground)
            .pos(Pos::new(h, v))
    };
    area.fill(&theme.background)?;

    let range = value_range(chart.series);
    let ticks = Scale::sequential(range.0, range.1).tick_labels(5);
    let tick_em = ticks
        .iter()
        .map(|(_, l)| text_width_em(l))
        .fold(0.0_f32, f32::max);
    let key_em = chart
        .keys
        .iter()
        .map(|k| text_width_em(&display_label(k, MAX_LABEL_GRAPHEMES)))
        .fold(0.0_f32, f32::max);
    let (pad, gap) = (px(0.5), px(0.4));
    let left = pad + px(f64::from(tick_em)) + gap + px(0.3);
    let top = pad + px(1.4) + px(1.3); // title, then the legend line
    let bottom = pad + px(f64::from(key_em)) + gap;
    let plot = PixelRect {
        x: left,
        y: top,
        width: (width as i32 - left - pad).max(1) as u32,
        height: (height as i32 - top - bottom).max(1) as u32,
    };
    let layout = RowLayout {
        plot,
        keys: chart.keys.len(),
        range,
    };

    area.draw_text(
        &display_label(chart.title, MAX_TITLE_GRAPHEMES),
        &text(HPos::Left, VPos::Top),
        (pad, pad),
    )?;
    // The legend: a swatch and a label per line, in one row.
    let mut x = left;
    let legend_y = pad + px(1.4) + px(0.55);
    for s in chart.series {
        area.draw(&Rectangle::new(
            [(x, legend_y - px(0.12)), (x + px(1.2), legend_y + px(0.12))],
            s.color.filled(),
        ))?;
        x += px(1.4);
        area.draw_text(s.label, &text(HPos::Left, VPos::Center), (x, legend_y))?;
        x += px(f64::from(text_width_em(s.label))) + px(1.0);
    }

    // Masked keys shaded, the hovered key's band highlighted.
    let band = |j: usize| {
        let x0 = layout.key_x(j) - (plot.width as usize / layout.keys.max(1)) as i32 / 2;
        let x1 = x0 + (plot.width as usize / layout.keys.max(1)).max(1) as i32;
        [(x0, plot.y), (x1, plot.bottom())]
    };
    for j in 0..layout.keys {
        if !chart.allowed.contains(&j) {
            area.draw(&Rectangle::new(band(j), theme.grid.mix(0.18).filled()))?;
        }
    }
    if let Some(j) = chart.hovered.filter(|&j| j < layout.keys) {
        area.draw(&Rectangle::new(
            band(j),
            theme.foreground.mix(0.10).filled(),
        ))?;
    }
    // Grid lines at the ticks, a stronger one at zero.
    for (v, label) in &ticks {
        let y = layout.value_y(*v);
        let strong = *v == 0.0;
        let color = if strong {
            theme.foreground.mix(0.6)
        } else {
            theme.grid.mix(0.35)
        };
        area.draw(&Rectangle::new(
            [(plot.x, y), (plot.right(), y + 1)],
            color.filled(),
        ))?;
        area.draw_text(label, &text(HPos::Right, VPos::Center), (plot.x - gap, y))?;
    }
    // The lines, each point a small circle so single keys stay visible.
    let radius = px(0.2).max(2);
    for s in chart.series {
        let points: Vec<(i32, i32)> = s
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(j, &v)| (layout.key_x(j), layout.value_y(v)))
            .collect();
        let style = s.color.stroke_width(px(0.12).max(2) as u32);
        if s.dashed {
            for pair in points.chunks(2).filter(|c| c.len() == 2) {
                area.draw(&PathElement::new(pair.to_vec(), style))?;
            }
        } else {
            area.draw(&PathElement::new(points.clone(), style))?;
        }
        for p in points {
            area.draw(&Circle::new(p, radius, s.color.filled()))?;
        }
    }
    // Key labels below, rotated to read upwards; every label when they fit, else a stride.
    let stride = ((1.15 * f * layout.keys as f64 / f64::from(plot.width.max(1))).ceil() as usize)
        .clamp(1, layout.keys.max(1));
    let key_style = text(HPos::Right, VPos::Center).transform(FontTransform::Rotate270);
    for (j, key) in chart.keys.iter().enumerate().step_by(stride) {
        area.draw_text(
            &display_label(key, MAX_LABEL_GRAPHEMES),
            &key_style,
            (layout.key_x(j), plot.bottom() + gap),
        )?;
    }
    Ok(layout)
}
