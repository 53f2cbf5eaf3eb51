//! Where everything of one heatmap goes, in device pixels, computed without drawing.
//!
//! The page needs the same geometry three times: to draw the frame, to blit the cells into the
//! plot rectangle, and to hit-test the pointer for hover. So the layout is a pure function of
//! sizes, and the frame is drawn from it. All edges are whole pixels, so the blit and the hover
//! highlight line up exactly with the frame on HiDPI canvases.
//!
//! Cells are square, except in a map more than four times taller than wide, whose cells widen
//! so that its plot is a quarter as wide as tall. When each cell can be at least one pixel
//! wide, it is a whole number of pixels, so a nearest-neighbour blit of the one-pixel-per-cell image gives every cell the same
//! size. With more cells than pixels, cell edges follow the browser's nearest-neighbour
//! sampling (a pixel shows the cell under its centre) and some cells get no pixel at all.

/// A rectangle of whole device pixels: columns `x..x + width`, rows `y..y + height`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PixelRect {
    /// The leftmost column of pixels.
    pub x: i32,
    /// The top row of pixels.
    pub y: i32,
    /// The number of columns of pixels.
    pub width: u32,
    /// The number of rows of pixels.
    pub height: u32,
}

impl PixelRect {
    /// The first column past the rectangle.
    pub fn right(&self) -> i32 {
        self.x + self.width as i32
    }

    /// The first row past the rectangle.
    pub fn bottom(&self) -> i32 {
        self.y + self.height as i32
    }

    /// Whether the point `(x, y)`, in pixels (fractions inside a pixel count), is inside.
    ///
    /// ```
    /// use diffattn::render::PixelRect;
    /// let r = PixelRect { x: 10, y: 20, width: 5, height: 5 };
    /// assert!(r.contains(10.0, 20.0) && r.contains(14.9, 24.9));
    /// assert!(!r.contains(15.0, 22.0) && !r.contains(f64::NAN, 22.0));
    /// ```
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= f64::from(self.x)
            && x < f64::from(self.right())
            && y >= f64::from(self.y)
            && y < f64::from(self.bottom())
    }
}

/// What a layout is computed from. The label widths are the widest label's estimated width in
/// em ([`crate::render::text_width_em`] of the label as drawn); zero when there are none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutSpec {
    /// The canvas (or drawing area) width in device pixels.
    pub width_px: u32,
    /// The canvas (or drawing area) height in device pixels.
    pub height_px: u32,
    /// The label font size in device pixels; the page passes `12 * devicePixelRatio`.
    pub font_px: f32,
    /// Rows of the map (query tokens).
    pub rows: usize,
    /// Columns of the map (key tokens).
    pub cols: usize,
    /// The widest row label, in em.
    pub row_label_em: f32,
    /// The widest column label, in em (column labels are rotated, so this is a height).
    pub col_label_em: f32,
    /// The widest colorbar tick label, in em.
    pub tick_label_em: f32,
    /// The title's width in em, or zero for no title (then no space is kept for it).
    pub title_em: f32,
    /// Whether the map has a colorbar of its own beside it (maps that share a scale show it
    /// once, in a legend: then no room is kept for one).
    pub colorbar: bool,
    /// Whether a margin of half an em surrounds everything (a map on its own); a map in a
    /// grid has a hairline one, the grid's gaps separating the maps.
    pub padded: bool,
    /// The learned sink's strip right of the plot ([`crate::render::Strip`]): the width of its
    /// label in em, or `None` for no strip.
    pub strip: Option<f32>,
}

/// The room around a plot, in device pixels, at one label font: what [`HeatmapLayout`]
/// keeps on each side, and what the grid of maps sizes each canvas by
/// ([`crate::render::fit_grid`]), so that a canvas of `plot + bands` holds a plot of exactly
/// that size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bands {
    /// Around everything, on every side.
    pub pad: i64,
    /// Between the plot and its labels.
    pub gap: i64,
    /// The border just outside the plot and the colorbar.
    pub border: i64,
    /// Above the plot: the title (0 for none).
    pub title: i64,
    /// Left of the plot: the row labels and their gap.
    pub left: i64,
    /// Below the plot: the column labels and their gap.
    pub below: i64,
    /// Right of the plot: the colorbar, its ticks and their labels (0 for none).
    pub right: i64,
    /// Between the plot and the colorbar.
    pub bar_gap: i64,
    /// The colorbar's width.
    pub bar_width: i64,
    /// A tick mark's length.
    pub tick_len: i64,
}

impl Bands {
    /// The bands of `spec` with labels at `font` device pixels (finite, 1 to 1000).
    pub fn at(spec: &LayoutSpec, font: f32) -> Bands {
        let f = f64::from(font);
        let px = |em: f64| (em * f).round().max(1.0) as i64;
        let em_px = |em: f32| {
            let em = if em.is_finite() {
                em.clamp(0.0, 1000.0)
            } else {
                0.0
            };
            (f64::from(em) * f).ceil() as i64
        };
        let gap = px(0.4);
        let bar_gap = px(0.8);
        let bar_width = px(1.0).max(4);
        let tick_len = px(0.3).max(2);
        Bands {
            pad: if spec.padded { px(0.5) } else { 2 },
            gap,
            border: px(1.0 / 12.0),
            title: if spec.title_em > 0.0 {
                px(1.6 * f64::from(TITLE_SCALE))
            } else {
                0
            },
            // In a grid (no margin), a map without labels on a side keeps no room there.
            left: if spec.padded || spec.row_label_em > 0.0 {
                em_px(spec.row_label_em) + gap
            } else {
                0
            },
            // The strip's label sits with the keys' labels, and is drawn whether they are or not.
            below: match spec.strip {
                Some(strip) => em_px(spec.col_label_em.max(strip)) + gap,
                None if spec.padded || spec.col_label_em > 0.0 => em_px(spec.col_label_em) + gap,
                None => 0,
            },
            right: if spec.colorbar {
                bar_gap + bar_width + tick_len + gap + em_px(spec.tick_label_em)
            } else {
                0
            },
            bar_gap,
            bar_width,
            tick_len,
        }
    }
}

/// The title is drawn this much larger than the labels.
pub const TITLE_SCALE: f32 = 1.15;

/// The room a label needs across, in em of its font: its line height. Cells closer than that
/// get every other label (or fewer).
pub const LABEL_PITCH_EM: f64 = 1.1;

/// How small the labels may get, as a fraction of the font asked for, so that every token is
/// labelled before any is skipped (the page asks for 12.5 to 15 CSS px: never under 10).
pub const LABEL_SHRINK: f32 = 0.8;

/// The geometry of one heatmap, in device pixels relative to its drawing area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatmapLayout {
    /// Rows of the map.
    pub rows: usize,
    /// Columns of the map.
    pub cols: usize,
    /// Where the cells go. For an empty map (no rows or no columns) a square box that is drawn
    /// empty; then no point hits a cell.
    pub plot: PixelRect,
    /// The learned sink's strip right of the plot ([`crate::render::Strip`]), as tall as the
    /// plot; empty (width 0) without one.
    pub strip: PixelRect,
    /// The colour gradient, high values at the top. Its tick labels go right of it.
    pub colorbar: PixelRect,
    /// How many ticks to ask the scale for, given the colorbar's height.
    pub colorbar_ticks: usize,
    /// The centre-top anchor of the title, or `None` when there is no title.
    pub title_at: Option<(i32, i32)>,
    /// Draw every `row_label_stride`-th row label (starting with row 0), so none overlap.
    pub row_label_stride: usize,
    /// Draw every `col_label_stride`-th column label (starting with column 0), so none overlap.
    pub col_label_stride: usize,
    /// The label font size in device pixels.
    pub font_px: f32,
    /// The space between the plot (or colorbar) and its labels.
    pub gap_px: i32,
    /// The length of a colorbar tick mark.
    pub tick_len_px: i32,
    /// The thickness of the border drawn just outside the plot and the colorbar.
    pub border_px: i32,
}

impl HeatmapLayout {
    /// Computes the layout; any sizes give one (tiny canvases give an empty plot, not a panic).
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, LayoutSpec, PixelRect};
    /// // Four tokens on a 420 x 300 canvas with 12 px text and 3-em labels.
    /// let layout = HeatmapLayout::new(&LayoutSpec {
    ///     width_px: 420, height_px: 300, font_px: 12.0, rows: 4, cols: 4,
    ///     row_label_em: 3.0, col_label_em: 3.0, tick_label_em: 1.86, title_em: 5.0, colorbar: true, padded: true, strip: None,
    /// });
    /// // The cells are square, whole pixels, and the plot is whole cells.
    /// let cell = layout.cell_rect(0, 0);
    /// assert_eq!(cell.width, cell.height);
    /// assert_eq!(layout.plot.width, 4 * cell.width);
    /// assert_eq!(layout.cell_at(f64::from(cell.x) + 0.5, f64::from(cell.y) + 0.5), Some((0, 0)));
    /// assert_eq!((layout.row_label_stride, layout.col_label_stride), (1, 1));
    /// ```
    pub fn new(spec: &LayoutSpec) -> Self {
        let font = if spec.font_px.is_finite() {
            spec.font_px.clamp(1.0, 1000.0)
        } else {
            12.0
        };
        let first = Self::at_font(spec, font);
        if first.row_label_stride == 1 && first.col_label_stride == 1 {
            return first;
        }
        // Some labels would be skipped: every label, smaller (down to LABEL_SHRINK of the
        // font), is better than the words that matter left out. Smaller labels take less room,
        // so the plot grows and its cells' pitch with it; two steps settle it.
        let floor = font * LABEL_SHRINK;
        let mut best = first;
        let mut size = font;
        for _ in 0..2 {
            let pitch = best.label_pitch_px();
            let wanted = (pitch / LABEL_PITCH_EM as f32).min(size);
            size = wanted.max(floor);
            let next = Self::at_font(spec, size);
            let fewer = |l: &HeatmapLayout| l.row_label_stride + l.col_label_stride;
            if fewer(&next) < fewer(&best)
                || (fewer(&next) == fewer(&best) && next.plot.width > best.plot.width)
            {
                best = next;
            }
            if best.row_label_stride == 1 && best.col_label_stride == 1 {
                break;
            }
        }
        best
    }

    /// The smaller of the plot's row and column pitch, in device pixels (a label's room).
    fn label_pitch_px(&self) -> f32 {
        let (rows, cols) = (self.rows.max(1) as f32, self.cols.max(1) as f32);
        (self.plot.height as f32 / rows).min(self.plot.width as f32 / cols)
    }

    /// The layout with labels at exactly `font` device pixels (finite, 1 to 1000), however
    /// many that leaves out; [`HeatmapLayout::new`] shrinks them first.
    pub fn at_font(spec: &LayoutSpec, font: f32) -> Self {
        let font = if font.is_finite() {
            font.clamp(1.0, 1000.0)
        } else {
            12.0
        };
        let f = f64::from(font);
        let px = |em: f64| (em * f).round().max(1.0) as i64;
        let (width, height) = (i64::from(spec.width_px), i64::from(spec.height_px));
        let (rows, cols) = (spec.rows, spec.cols);
        let bands = Bands::at(spec, font);
        let (pad, gap, border) = (bands.pad, bands.gap, bands.border);
        let (title_h, row_band, col_band, right_band) =
            (bands.title, bands.left, bands.below, bands.right);
        let (bar_gap, bar_w, tick_len) = (bands.bar_gap, bands.bar_width, bands.tick_len);

        let inner_w = (width - 2 * pad).max(0);
        let inner_h = (height - 2 * pad).max(0);
        let avail_w = (inner_w - row_band - right_band).max(0);
        let avail_h = (inner_h - title_h - col_band).max(0);
        // The sink's strip (strip.rs) takes a gap and a cell's width (at least an em) right of
        // the plot; the cells share what is left.
        let strip = spec.strip.is_some();
        let (strip_gap, strip_min) = if strip {
            (
                super::strip_size::gap_px(f),
                super::strip_size::min_width_px(f),
            )
        } else {
            (0, 0)
        };
        let room_w = (avail_w - strip_gap).max(0);

        // An empty map keeps a square box, so the frame still looks like a heatmap.
        let (grid_rows, grid_cols) = if rows == 0 || cols == 0 {
            (1, 1)
        } else {
            (rows, cols)
        };
        let (grid_rows, grid_cols) = (grid_rows as i64, grid_cols as i64);
        // Whole pixels per cell where one fits, the strip a cell wide (or its least width).
        let whole = (room_w / (grid_cols + i64::from(strip)))
            .min(avail_h / grid_rows)
            .min((room_w - strip_min).max(0) / grid_cols);
        let cells_w = (room_w - strip_min).max(0);
        let (plot_w, plot_h) = if avail_w == 0 || avail_h == 0 || cells_w == 0 {
            (0, 0)
        } else if whole >= 1 {
            (whole * grid_cols, whole * grid_rows)
        } else {
            // Under a pixel per cell; keep at least one pixel each way so the plot is visible.
            let cell = (cells_w as f64 / grid_cols as f64).min(avail_h as f64 / grid_rows as f64);
            let fit =
                |count: i64, avail: i64| ((cell * count as f64).floor() as i64).clamp(1, avail);
            (fit(grid_cols, cells_w), fit(grid_rows, avail_h))
        };
        let strip_w = if strip && plot_h > 0 {
            super::strip_size::width_px(plot_h as f64 / grid_rows as f64, f)
        } else {
            0
        };
        let strip_extent = if strip { strip_gap + strip_w } else { 0 };

        // A map much taller than wide (V2's λ, tokens × heads) gets cells wider than tall, so
        // its plot is at least a quarter as wide as it is tall (whole pixels per cell where
        // cells are whole pixels).
        let plot_w = if grid_rows > 4 * grid_cols && plot_h > 0 {
            let want = (plot_h / 4).min(avail_w - strip_extent);
            if plot_w >= grid_cols {
                (want / grid_cols).max(plot_w / grid_cols) * grid_cols
            } else {
                want.max(plot_w)
            }
        } else {
            plot_w
        };
        // Without a colorbar of its own the map keeps no room for one (an empty bar).
        let bar_h = if spec.colorbar {
            plot_h.max(px(8.0).min(avail_h + col_band))
        } else {
            0
        };
        let group_w = row_band + plot_w + strip_extent + right_band;
        let group_h = title_h + (plot_h + col_band).max(bar_h);
        let left = pad + ((inner_w - group_w) / 2).max(0);
        let top = pad + ((inner_h - group_h) / 2).max(0);

        let plot = PixelRect {
            x: clamp_i32(left + row_band),
            y: clamp_i32(top + title_h),
            width: plot_w as u32,
            height: plot_h as u32,
        };
        let strip = PixelRect {
            x: clamp_i32(left + row_band + plot_w + strip_gap),
            y: plot.y,
            width: strip_w as u32,
            height: if strip { plot_h as u32 } else { 0 },
        };
        let colorbar = PixelRect {
            x: clamp_i32(left + row_band + plot_w + strip_extent + bar_gap),
            y: plot.y,
            width: if spec.colorbar { bar_w as u32 } else { 0 },
            height: bar_h.max(0) as u32,
        };
        let title_at = (title_h > 0).then(|| {
            let half = (f64::from(spec.title_em.min(1000.0)) * f * f64::from(TITLE_SCALE) / 2.0)
                .ceil() as i64;
            let centre = left + row_band + plot_w / 2;
            // Keep the title on the canvas when it is wider than the plot.
            let centre = if 2 * half >= width {
                width / 2
            } else {
                centre.clamp(half, width - half)
            };
            (clamp_i32(centre), clamp_i32(top))
        });

        // A label needs LABEL_PITCH_EM across (its line height); skip labels to make room.
        let stride = |count: usize, extent_px: i64| -> usize {
            if count == 0 {
                return 1;
            }
            if extent_px <= 0 {
                return count;
            }
            let needed = (LABEL_PITCH_EM * f * count as f64 / extent_px as f64 - 1e-9).ceil();
            (needed as usize).clamp(1, count)
        };
        let colorbar_ticks = ((bar_h as f64 / (2.0 * f)).floor() as usize + 1).clamp(2, 6);

        HeatmapLayout {
            rows,
            cols,
            plot,
            strip,
            colorbar,
            colorbar_ticks,
            title_at,
            row_label_stride: stride(rows, plot_h),
            col_label_stride: stride(cols, plot_w),
            font_px: font,
            gap_px: gap as i32,
            tick_len_px: tick_len as i32,
            border_px: border as i32,
        }
    }

    /// A layout of cells alone: the plot is the whole `width_px × height_px` area (cells as
    /// even as whole pixels allow, not necessarily square), with no labels, title or colorbar.
    /// The overview of a zoomed map is drawn with it.
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, PixelRect};
    /// let layout = HeatmapLayout::cells_only(100, 100, (2048, 2048));
    /// assert_eq!(layout.plot, PixelRect { x: 0, y: 0, width: 100, height: 100 });
    /// assert_eq!(layout.cell_at(99.5, 0.5), Some((10, 2037)));
    /// ```
    pub fn cells_only(width_px: u32, height_px: u32, (rows, cols): (usize, usize)) -> Self {
        HeatmapLayout {
            rows,
            cols,
            plot: PixelRect {
                x: 0,
                y: 0,
                width: width_px,
                height: height_px,
            },
            strip: PixelRect::default(),
            colorbar: PixelRect::default(),
            colorbar_ticks: 2,
            title_at: None,
            row_label_stride: rows.max(1),
            col_label_stride: cols.max(1),
            font_px: 12.0,
            gap_px: 0,
            tick_len_px: 0,
            border_px: 0,
        }
    }

    /// The cell `(row, col)` under the point `(x_px, y_px)` in device pixels relative to the
    /// drawing area, or `None` outside the plot. The page converts CSS pixels first
    /// (multiplies by `devicePixelRatio`, after subtracting the canvas's offset).
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, LayoutSpec};
    /// let layout = HeatmapLayout::new(&LayoutSpec {
    ///     width_px: 200, height_px: 200, font_px: 10.0, rows: 3, cols: 2,
    ///     row_label_em: 2.0, col_label_em: 2.0, tick_label_em: 2.0, title_em: 0.0, colorbar: true, padded: true, strip: None,
    /// });
    /// let p = layout.plot;
    /// assert_eq!(layout.cell_at(f64::from(p.x), f64::from(p.y)), Some((0, 0)));
    /// let (right, bottom) = (f64::from(p.right()), f64::from(p.bottom()));
    /// assert_eq!(layout.cell_at(right - 0.5, bottom - 0.5), Some((2, 1)));
    /// assert_eq!(layout.cell_at(f64::from(p.x) - 1.0, f64::from(p.y)), None);
    /// ```
    pub fn cell_at(&self, x_px: f64, y_px: f64) -> Option<(usize, usize)> {
        if self.rows == 0 || self.cols == 0 || !self.plot.contains(x_px, y_px) {
            return None;
        }
        let pixel_x = (x_px.floor() as i64 - i64::from(self.plot.x)) as u64;
        let pixel_y = (y_px.floor() as i64 - i64::from(self.plot.y)) as u64;
        Some((
            cell_index(pixel_y, self.rows, self.plot.height),
            cell_index(pixel_x, self.cols, self.plot.width),
        ))
    }

    /// The row whose label is under `(x_px, y_px)`: left of the plot, within its height.
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, LayoutSpec};
    /// let layout = HeatmapLayout::new(&LayoutSpec {
    ///     width_px: 200, height_px: 200, font_px: 10.0, rows: 3, cols: 2,
    ///     row_label_em: 2.0, col_label_em: 2.0, tick_label_em: 2.0, title_em: 0.0, colorbar: true, padded: true, strip: None,
    /// });
    /// let cell = layout.cell_rect(2, 0);
    /// let y = f64::from(cell.y) + 1.0;
    /// assert_eq!(layout.row_label_at(f64::from(layout.plot.x) - 5.0, y), Some(2));
    /// assert_eq!(layout.row_label_at(f64::from(layout.plot.x) + 1.0, y), None, "a cell");
    /// ```
    pub fn row_label_at(&self, x_px: f64, y_px: f64) -> Option<usize> {
        let p = self.plot;
        if self.rows == 0 || x_px < 0.0 || x_px >= f64::from(p.x) || y_px < f64::from(p.y) {
            return None;
        }
        if y_px >= f64::from(p.bottom()) {
            return None;
        }
        let pixel_y = (y_px.floor() as i64 - i64::from(p.y)) as u64;
        Some(cell_index(pixel_y, self.rows, p.height))
    }

    /// The pixels of cell `(row, col)`, for the hover highlight. Cells tile the plot without
    /// gaps or overlaps. An index past the end gives an empty rectangle at the plot's far edge.
    ///
    /// ```
    /// use diffattn::render::{HeatmapLayout, LayoutSpec};
    /// let layout = HeatmapLayout::new(&LayoutSpec {
    ///     width_px: 200, height_px: 200, font_px: 10.0, rows: 3, cols: 2,
    ///     row_label_em: 2.0, col_label_em: 2.0, tick_label_em: 2.0, title_em: 0.0, colorbar: true, padded: true, strip: None,
    /// });
    /// let (a, b) = (layout.cell_rect(1, 0), layout.cell_rect(1, 1));
    /// assert_eq!(a.right(), b.x);
    /// assert_eq!(b.right(), layout.plot.right());
    /// ```
    pub fn cell_rect(&self, row: usize, col: usize) -> PixelRect {
        let (x0, x1) = (
            cell_edge(col, self.cols, self.plot.width),
            cell_edge(col.saturating_add(1), self.cols, self.plot.width),
        );
        let (y0, y1) = (
            cell_edge(row, self.rows, self.plot.height),
            cell_edge(row.saturating_add(1), self.rows, self.plot.height),
        );
        PixelRect {
            x: self.plot.x + x0 as i32,
            y: self.plot.y + y0 as i32,
            width: (x1 - x0) as u32,
            height: (y1 - y0) as u32,
        }
    }
}

/// The first pixel of cell `index` among `count` cells over `extent` pixels: the first pixel
/// whose centre falls in the cell, `ceil((index * extent - count / 2) / count)`, clamped to the
/// extent. With `extent` a multiple of `count` this is `index * extent / count`.
fn cell_edge(index: usize, count: usize, extent: u32) -> i64 {
    if count == 0 {
        return 0;
    }
    let index = index.min(count) as i128;
    let (count, extent) = (count as i128, i128::from(extent));
    let numerator = 2 * index * extent - count;
    let denominator = 2 * count;
    // Ceiling division that is also right for a negative numerator (index 0).
    let edge = -((-numerator).div_euclid(denominator));
    edge.clamp(0, extent) as i64
}

/// The cell whose pixels include `pixel` (inverse of `cell_edge`): the cell under the pixel's
/// centre, `floor((pixel + 1/2) * count / extent)`.
pub(crate) fn cell_index(pixel: u64, count: usize, extent: u32) -> usize {
    let (pixel, count128, extent) = (u128::from(pixel), count as u128, u128::from(extent).max(1));
    (((2 * pixel + 1) * count128 / (2 * extent)) as usize).min(count - 1)
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
