//! Everything of a heatmap but its cells, drawn with plotters on any backend.
//!
//! The page draws the frame on a canvas and then blits the cells (see
//! [`crate::render::cells_rgba`]) into [`HeatmapLayout::plot`]; the SVG export draws the cells
//! as rectangles instead. Only whole-pixel filled rectangles and text are drawn (no strokes), so
//! lines stay crisp on a canvas, and text is never measured, so nothing here needs a browser.

use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind};
use plotters::element::Rectangle;
use plotters::prelude::DrawingBackend;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontDesc, FontFamily, FontStyle, FontTransform, RGBColor, TextStyle};

use super::cells::{masked_rgba, CellMask};
use super::label::LabelWidths;
use super::label::{display_label, text_width_em, MAX_LABEL_GRAPHEMES, MAX_TITLE_GRAPHEMES};
use super::layout::{HeatmapLayout, LayoutSpec, PixelRect, TITLE_SCALE};
use super::scale::Scale;
use super::strip::{draw_strip_frame, Strip};
use super::theme::Theme;

/// The most bands the colorbar's gradient is drawn with; more would not be visible.
const COLORBAR_BANDS: u32 = 128;

/// What to draw around one map.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Drawn centred above the plot; empty for none.
    pub title: &'a str,
    /// One per row (query token), drawn right-aligned left of the plot.
    pub row_labels: &'a [String],
    /// One per column (key token), drawn below the plot, rotated to read upwards.
    pub col_labels: &'a [String],
    /// The colours of the cells and of the colorbar.
    pub scale: &'a Scale,
    /// The colours of everything else.
    pub theme: &'a Theme,
    /// The label font size in device pixels (the page passes `12 * devicePixelRatio`).
    pub font_px: f32,
    /// The cells the mask forbids, drawn hatched; with some in the map, a hatched swatch
    /// below the colorbar says what they are, with `masked_label` beside it.
    pub mask: Option<CellMask>,
    /// The word for forbidden cells in the page's language (`"masked"`).
    pub masked_label: &'a str,
    /// The one value of a (nearly) constant map (see [`crate::render::constant_value`]): the
    /// colorbar then shows that value with `constant_label` instead of a gradient.
    pub constant: Option<f32>,
    /// The word for a constant map in the page's language (`"constant"`).
    pub constant_label: &'a str,
    /// Which parts are drawn: a map in a grid shares its labels with its neighbours and its
    /// colorbar with the maps of its scale ([`FrameParts::ALL`] for a map on its own).
    pub parts: FrameParts,
    /// The learned sink's strip right of the plot, for a softmax map that lost mass to it
    /// (DESIGN.md §7.9); `None` for every other map. Drawn where [`FrameParts::strip`] says.
    pub strip: Option<Strip<'a>>,
}

/// The parts of a frame a map draws itself. In a grid of maps ([`crate::render::fit_grid`])
/// only the first column draws row labels, only a map with none below it column labels, and
/// maps that share a scale show it once, in a legend; the grid also picks the label font for
/// every map, so none shrinks it on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameParts {
    /// Row labels left of the plot.
    pub row_labels: bool,
    /// Column labels below the plot.
    pub col_labels: bool,
    /// A colorbar beside the plot (with the masked legend and a constant map's swatch).
    pub colorbar: bool,
    /// Whether the labels may shrink (down to [`crate::render::LABEL_SHRINK`]) so that every
    /// token is labelled; false draws them at exactly `font_px`.
    pub shrink_labels: bool,
    /// A margin of half an em around everything (on its own); in a grid, the grid's gaps.
    pub padded: bool,
    /// The sink's strip, when the frame has one (the guided walk's thumbnails leave it out).
    pub strip: bool,
}

impl FrameParts {
    /// Every part, the labels shrinking to fit: a map on its own.
    pub const ALL: FrameParts = FrameParts {
        row_labels: true,
        col_labels: true,
        colorbar: true,
        shrink_labels: true,
        padded: true,
        strip: true,
    };
}

impl Frame<'_> {
    /// A number that changes whenever anything drawn around the map changes (title, labels,
    /// scale, colours, font, mask, parts), for a canvas of `width_px × height_px`: a page that
    /// drew this frame there before can keep it and put on the cells alone. Not stable across
    /// builds (the standard library's hasher).
    pub fn signature(&self, width_px: u32, height_px: u32) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (width_px, height_px, self.title, self.font_px.to_bits()).hash(&mut h);
        self.row_labels.hash(&mut h);
        self.col_labels.hash(&mut h);
        (self.parts, self.strip.map(|s| s.label)).hash(&mut h);
        // The small rest as written out (f32 ranges, colours, the mask).
        format!(
            "{:?}|{:?}|{:?}|{}|{:?}|{}",
            self.scale,
            self.theme,
            self.mask,
            self.masked_label,
            self.constant.map(f32::to_bits),
            self.constant_label,
        )
        .hash(&mut h);
        h.finish()
    }

    /// The layout [`draw_frame`] draws on a `width_px` x `height_px` area, for a map with one
    /// row per row label and one column per column label. The page can keep it for hover.
    ///
    /// ```
    /// use diffattn::render::{Frame, FrameParts, Scale, Theme};
    /// let tokens: Vec<String> = ["the", "cat", "sat"].map(String::from).to_vec();
    /// let frame = Frame {
    ///     title: "A", row_labels: &tokens, col_labels: &tokens,
    ///     scale: &Scale::unit(), theme: &Theme::light(), font_px: 12.0,
    ///     mask: None, masked_label: "", constant: None, constant_label: "",
    ///     parts: FrameParts::ALL, strip: None,
    /// };
    /// let layout = frame.layout(420, 420);
    /// assert_eq!((layout.rows, layout.cols), (3, 3));
    /// ```
    pub fn layout(&self, width_px: u32, height_px: u32) -> HeatmapLayout {
        self.layout_for_shape(
            width_px,
            height_px,
            (self.row_labels.len(), self.col_labels.len()),
        )
    }

    /// The layout for a map of `shape`, whatever the number of labels.
    pub(crate) fn layout_for_shape(
        &self,
        width_px: u32,
        height_px: u32,
        (rows, cols): (usize, usize),
    ) -> HeatmapLayout {
        let widths = LabelWidths::measure(
            &self.row_labels[..rows.min(self.row_labels.len())],
            &self.col_labels[..cols.min(self.col_labels.len())],
        );
        self.layout_with(width_px, height_px, (rows, cols), &widths)
    }

    /// [`Frame::layout`] for a map of `shape` with the label widths measured beforehand, so
    /// that the maps of one render measure their shared labels once.
    pub fn layout_with(
        &self,
        width_px: u32,
        height_px: u32,
        (rows, cols): (usize, usize),
        widths: &LabelWidths,
    ) -> HeatmapLayout {
        let tick_label_em = self.tick_label_em((rows, cols));
        let parts = self.parts;
        let spec = LayoutSpec {
            width_px,
            height_px,
            font_px: self.font_px,
            rows,
            cols,
            row_label_em: if parts.row_labels {
                widths.rows_em
            } else {
                0.0
            },
            col_label_em: if parts.col_labels {
                widths.cols_em
            } else {
                0.0
            },
            tick_label_em: if parts.colorbar { tick_label_em } else { 0.0 },
            title_em: text_width_em(&display_label(self.title, MAX_TITLE_GRAPHEMES)),
            colorbar: parts.colorbar,
            padded: parts.padded,
            strip: self.drawn_strip().map(|s| s.label_em()),
        };
        if parts.shrink_labels {
            HeatmapLayout::new(&spec)
        } else {
            HeatmapLayout::at_font(&spec, self.font_px)
        }
    }

    /// The strip this frame draws: its own, where its parts have one.
    pub fn drawn_strip(&self) -> Option<Strip<'_>> {
        self.strip.filter(|_| self.parts.strip)
    }

    /// The widest text beside the colorbar of a map of `(rows, cols)`, in em: the tick labels
    /// any tick count may give, the masked legend's word, a constant map's value.
    pub fn tick_label_em(&self, (rows, cols): (usize, usize)) -> f32 {
        // Reserve room for the widest tick labels any tick count the layout may pick can give.
        let tick_label_em = (2..=6)
            .flat_map(|n| self.scale.tick_labels(n))
            .map(|(_, label)| text_width_em(&label))
            .fold(0.0_f32, f32::max);
        // The masked legend's word sits where the tick labels do (a little further right).
        let legend_em = match self.mask {
            Some(m) if m.forbids_any(rows, cols) => {
                text_width_em(&display_label(self.masked_label, MAX_LABEL_GRAPHEMES)) + 0.2
            }
            _ => 0.0,
        };
        // A constant map's colorbar shows "= value" and the word for constant instead.
        let constant_em = match self.constant {
            Some(v) => {
                text_width_em(&format!("= {}", crate::render::ticks::format_one(v))).max(
                    text_width_em(&display_label(self.constant_label, MAX_LABEL_GRAPHEMES)),
                ) + 0.2
            }
            None => 0.0,
        };
        tick_label_em.max(legend_em).max(constant_em)
    }
}

/// Draws the frame of one map on `area`: background, title, row and column labels, a border
/// around the plot and the colorbar with its ticks, and returns where everything went. The
/// plot rectangle itself is left as background, for the cells. A map with no rows or no
/// columns gets an empty box marked "∅ (rows × cols)".
///
/// ```
/// use diffattn::render::{draw_frame, Frame, FrameParts, Scale, Theme};
/// use plotters::prelude::*;
/// let tokens: Vec<String> = ["the", "cat"].map(String::from).to_vec();
/// let frame = Frame {
///     title: "D = A - shift(A)", row_labels: &tokens, col_labels: &tokens,
///     scale: &Scale::diverging(0.5), theme: &Theme::dark(), font_px: 24.0,
///     mask: None, masked_label: "", constant: None, constant_label: "",
///     parts: FrameParts::ALL, strip: None,
/// };
/// let mut svg = String::new();
/// let layout = {
///     let area = SVGBackend::with_string(&mut svg, (840, 840)).into_drawing_area();
///     draw_frame(&area, &frame).unwrap()
/// };
/// assert_eq!(layout, frame.layout(840, 840));
/// assert!(svg.contains("shift(A)"));
/// ```
pub fn draw_frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
) -> Result<HeatmapLayout, DrawingAreaErrorKind<DB::ErrorType>> {
    let shape = (frame.row_labels.len(), frame.col_labels.len());
    draw_frame_for_shape(area, frame, shape, 1.0)
}

/// [`draw_frame`] for a map of `shape` (labels past it are ignored, missing ones left blank),
/// with font sizes multiplied by `text_scale` (the SVG backend writes `size / 1.24` as the
/// font size, and the SVG export undoes that).
pub(crate) fn draw_frame_for_shape<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    shape: (usize, usize),
    text_scale: f64,
) -> Result<HeatmapLayout, DrawingAreaErrorKind<DB::ErrorType>> {
    let (width_px, height_px) = area.dim_in_pixel();
    let layout = frame.layout_for_shape(width_px, height_px, shape);
    draw_frame_at(area, frame, &layout, text_scale)?;
    Ok(layout)
}

/// [`draw_frame`] at a layout computed beforehand (with [`Frame::layout_with`] for the area's
/// size), with font sizes multiplied by `text_scale` (1 on a canvas).
pub fn draw_frame_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    layout: &HeatmapLayout,
    text_scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    draw_frame_parts(area, frame, layout, text_scale, true)
}

/// [`draw_frame_at`] without the colorbar's gradient (its border, ticks and labels are drawn):
/// for a backend that puts the gradient on as one image ([`colorbar_rgba`]), as the page's
/// canvases do with the plot's cells, instead of one rectangle per band.
pub fn draw_frame_around_images_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    layout: &HeatmapLayout,
    text_scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    draw_frame_parts(area, frame, layout, text_scale, false)
}

/// The colorbar's gradient as RGBA pixels, `layout.colorbar`'s width × height, high values at
/// the top: each row of pixels the colour of the value at its middle. Empty for a constant map
/// (its swatch is drawn with the frame) or a bar of no pixels.
pub fn colorbar_rgba(frame: &Frame, layout: &HeatmapLayout, out: &mut Vec<u8>) {
    out.clear();
    let bar = layout.colorbar;
    if !frame.parts.colorbar || frame.constant.is_some() || bar.width == 0 || bar.height == 0 {
        return;
    }
    let (lo, hi) = frame.scale.range();
    for y in 0..bar.height {
        let t = 1.0 - (y as f32 + 0.5) / bar.height as f32;
        let [r, g, b] = frame.scale.color(lo + t * (hi - lo));
        for _ in 0..bar.width {
            out.extend_from_slice(&[r, g, b, 255]);
        }
    }
}

fn draw_frame_parts<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    layout: &HeatmapLayout,
    text_scale: f64,
    gradient: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let layout = *layout;
    let theme = frame.theme;
    let label_size = f64::from(layout.font_px) * text_scale;
    let text = |size: f64, h_pos: HPos, v_pos: VPos| -> TextStyle<'static> {
        FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)
            .color(&theme.foreground)
            .pos(Pos::new(h_pos, v_pos))
    };

    area.fill(&theme.background)?;

    if let Some((x, y)) = layout.title_at {
        let style = text(label_size * f64::from(TITLE_SCALE), HPos::Center, VPos::Top);
        area.draw_text(
            &display_label(frame.title, MAX_TITLE_GRAPHEMES),
            &style,
            (x, y),
        )?;
    }

    let plot = layout.plot;
    outline(area, plot, layout.border_px, &theme.grid)?;
    let (rows, cols) = (layout.rows, layout.cols);
    if rows == 0 || cols == 0 {
        // Input-difference attention on a one-token sentence has no keys (L x 0): say so, in
        // symbols rather than words, since the page is translated and this text is not.
        let note = format!("\u{2205} ({rows} \u{d7} {cols})");
        let style = text(label_size, HPos::Center, VPos::Center);
        let centre = (
            plot.x + plot.width as i32 / 2,
            plot.y + plot.height as i32 / 2,
        );
        area.draw_text(&note, &style, centre)?;
    }

    let parts = frame.parts;
    let row_style = text(label_size, HPos::Right, VPos::Center);
    let row_labels: &[String] = if parts.row_labels {
        frame.row_labels
    } else {
        &[]
    };
    let col_labels: &[String] = if parts.col_labels {
        frame.col_labels
    } else {
        &[]
    };
    for row in (0..rows).step_by(layout.row_label_stride) {
        let Some(label) = row_labels.get(row) else {
            break;
        };
        let cell = layout.cell_rect(row, 0);
        let y = cell.y + cell.height as i32 / 2;
        area.draw_text(
            &display_label(label, MAX_LABEL_GRAPHEMES),
            &row_style,
            (plot.x - layout.gap_px, y),
        )?;
    }

    // Rotated a quarter turn anticlockwise, right-aligned: each key reads upwards and ends
    // just below its column.
    let col_style = text(label_size, HPos::Right, VPos::Center).transform(FontTransform::Rotate270);
    for col in (0..cols).step_by(layout.col_label_stride) {
        let Some(label) = col_labels.get(col) else {
            break;
        };
        let cell = layout.cell_rect(0, col);
        let x = cell.x + cell.width as i32 / 2;
        area.draw_text(
            &display_label(label, MAX_LABEL_GRAPHEMES),
            &col_style,
            (x, plot.bottom() + layout.gap_px),
        )?;
    }
    if let Some(strip) = frame.drawn_strip() {
        draw_strip_frame(area, &strip, &layout, &theme.grid, &col_style)?;
    }

    if !parts.colorbar {
        return Ok(());
    }
    match frame.constant {
        Some(value) => draw_constant_bar(
            area,
            frame,
            value,
            &layout,
            text(label_size, HPos::Left, VPos::Center),
        )?,
        None => draw_colorbar(
            area,
            frame.scale,
            &layout,
            theme,
            text(label_size, HPos::Left, VPos::Center),
            gradient,
        )?,
    }
    if frame.mask.is_some_and(|m| m.forbids_any(rows, cols)) {
        draw_masked_legend(
            area,
            &layout,
            frame.masked_label,
            text(label_size, HPos::Left, VPos::Center),
        )?;
    }
    Ok(())
}

/// For a constant map: the colorbar's place holds one swatch of the map's colour, its value and
/// the word for "constant", so rounding noise is not stretched over the palette.
fn draw_constant_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frame: &Frame,
    value: f32,
    layout: &HeatmapLayout,
    style: TextStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let bar = layout.colorbar;
    if bar.height == 0 || bar.width == 0 {
        return Ok(());
    }
    let side = bar.width as i32;
    let (x0, y0) = (bar.x, bar.y);
    let swatch = [(x0, y0), (x0 + side, y0 + side)];
    area.draw(&Rectangle::new(
        swatch,
        frame.scale.plotters_color(value).filled(),
    ))?;
    outline(
        area,
        PixelRect {
            x: x0,
            y: y0,
            width: side as u32,
            height: side as u32,
        },
        layout.border_px,
        &frame.theme.grid,
    )?;
    let x = x0 + side + layout.gap_px;
    let line = (layout.font_px * 1.3).round() as i32;
    let shown = crate::render::ticks::format_one(value);
    area.draw_text(&format!("= {shown}"), &style, (x, y0 + side / 2))?;
    if !frame.constant_label.is_empty() {
        area.draw_text(
            &display_label(frame.constant_label, MAX_LABEL_GRAPHEMES),
            &style,
            (x, y0 + side / 2 + line),
        )?;
    }
    Ok(())
}

/// A hatched swatch just below the colorbar, with the word for forbidden cells beside it.
fn draw_masked_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    layout: &HeatmapLayout,
    label: &str,
    style: TextStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let bar = layout.colorbar;
    let side = bar.width.max(4) as i32;
    let (x0, y0) = (bar.x, bar.bottom() + layout.gap_px + layout.border_px);
    let stripe_px = (layout.font_px / 3.0).round().max(2.0) as usize;
    for dy in 0..side {
        for dx in 0..side {
            let [r, g, b, _] = masked_rgba(dx as usize, dy as usize, stripe_px);
            let at = (x0 + dx, y0 + dy);
            area.draw(&Rectangle::new(
                [at, (at.0 + 1, at.1 + 1)],
                RGBColor(r, g, b).filled(),
            ))?;
        }
    }
    if !label.is_empty() {
        area.draw_text(
            &display_label(label, MAX_LABEL_GRAPHEMES),
            &style,
            (x0 + side + layout.gap_px, y0 + side / 2),
        )?;
    }
    Ok(())
}

/// The gradient as horizontal bands (high values at the top), its border, tick marks and tick
/// labels.
fn draw_colorbar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scale: &Scale,
    layout: &HeatmapLayout,
    theme: &Theme,
    tick_style: TextStyle,
    gradient: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let bar = layout.colorbar;
    if bar.height == 0 || bar.width == 0 {
        return Ok(());
    }
    let (lo, hi) = scale.range();
    let bands = if gradient {
        bar.height.min(COLORBAR_BANDS)
    } else {
        0
    };
    let band_top =
        |band: u32| bar.y + (u64::from(band) * u64::from(bar.height) / u64::from(bands)) as i32;
    for band in 0..bands {
        // The colour of the value at the band's middle, counting down from the top.
        let t = 1.0 - (band as f32 + 0.5) / bands as f32;
        let color = scale.plotters_color(lo + t * (hi - lo));
        let rect = [(bar.x, band_top(band)), (bar.right(), band_top(band + 1))];
        area.draw(&Rectangle::new(rect, color.filled()))?;
    }
    outline(area, bar, layout.border_px, &theme.grid)?;

    let thickness = layout.border_px.max(1);
    let tick_x = bar.right() + layout.border_px;
    for (value, label) in scale.tick_labels(layout.colorbar_ticks) {
        let t = f64::from((value - lo) / (hi - lo)).clamp(0.0, 1.0);
        let y = bar.bottom() - (t * f64::from(bar.height)).round() as i32;
        let mark = [
            (tick_x, y - thickness / 2),
            (tick_x + layout.tick_len_px, y - thickness / 2 + thickness),
        ];
        area.draw(&Rectangle::new(mark, theme.grid.filled()))?;
        area.draw_text(
            &label,
            &tick_style,
            (tick_x + layout.tick_len_px + layout.gap_px / 2, y),
        )?;
    }
    Ok(())
}

/// A border `thickness` pixels wide just outside `rect`, as four filled rectangles.
fn outline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rect: PixelRect,
    thickness: i32,
    color: &RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let b = thickness.max(1);
    let (x0, y0, x1, y1) = (rect.x - b, rect.y - b, rect.right() + b, rect.bottom() + b);
    let sides = [
        [(x0, y0), (x1, rect.y)],
        [(x0, rect.bottom()), (x1, y1)],
        [(x0, rect.y), (rect.x, rect.bottom())],
        [(rect.right(), rect.y), (x1, rect.bottom())],
    ];
    for side in sides {
        area.draw(&Rectangle::new(side, color.filled()))?;
    }
    Ok(())
}
