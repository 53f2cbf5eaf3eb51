//! The maps of one view in one grid, as large as the room allows: every cell square and the
//! same size in every map, so a token's row lines up from map to map and a teacher can follow
//! it across the screen. The maps share their axes: row labels left of the grid's first column
//! only, column labels under a map only where no map is below it, and the colour scales the
//! maps share drawn once, in a legend (a free slot of the grid, or a row under it).
//!
//! Pure geometry in device pixels, computed without drawing: the page sizes and places its
//! canvases from it, and each map is then drawn with [`FrameParts`] and the grid's label font,
//! on a canvas of exactly `plot + bands` ([`Bands`]), so its plot is the size the grid chose.

use super::frame::FrameParts;
use super::layout::{Bands, LayoutSpec, PixelRect, LABEL_PITCH_EM, LABEL_SHRINK};

/// One map of a grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridMap {
    /// Its rows: the query tokens (the same for every map of a view).
    pub rows: usize,
    /// Its columns: keys, segments, heads or channels.
    pub cols: usize,
    /// Its widest column label, in em.
    pub col_label_em: f32,
    /// The widest tick label of its own colorbar, in em; `None` when the legend shows its
    /// scale (a map whose scale no other map shares, such as the layer output, has its own).
    pub own_bar_em: Option<f32>,
    /// The learned sink's strip beside it ([`crate::render::Strip`]): its label's width in em,
    /// or `None` for no strip.
    pub strip: Option<f32>,
}

/// What the grid is fitted to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSpec<'a> {
    /// The room's width, in device pixels.
    pub width_px: u32,
    /// The room's height, or `None` to lay the maps out by width alone.
    pub height_px: Option<u32>,
    /// The maps, in reading order.
    pub maps: &'a [GridMap],
    /// The label font asked for, in device pixels; labels shrink down to
    /// [`LABEL_SHRINK`] of it before any is left out.
    pub font_px: f32,
    /// The widest row label, in em.
    pub row_label_em: f32,
    /// The height of the title line above each map (drawn by the page), in device pixels.
    pub title_px: u32,
    /// The space between maps, in device pixels.
    pub gap_px: u32,
    /// How many entries the legend has (colour scales, and the masked cells' swatch); 0 for
    /// no legend.
    pub legend_entries: usize,
    /// The largest plot worth drawing (its height, in device pixels; 0 for no limit).
    pub max_plot_px: u32,
    /// When nonzero, the grid with the most columns whose plots are at least this tall is
    /// taken (presenting: maps half as large again, as many side by side as that allows);
    /// otherwise the grid with the largest plots.
    pub min_plot_px: u32,
}

/// Where one map goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridPlace {
    /// Its canvas, relative to the grid's top-left corner; its title line is the
    /// `title_px` just above.
    pub canvas: PixelRect,
    /// Its plot, relative to the canvas (the page centres the title over it).
    pub plot: PixelRect,
    /// The parts of its frame it draws.
    pub parts: FrameParts,
}

/// The grid [`fit_grid`] chose.
#[derive(Clone, Debug, PartialEq)]
pub struct GridLayout {
    /// Maps across.
    pub cols: usize,
    /// Rows of maps.
    pub rows: usize,
    /// The plots' height in device pixels (the rows' extent; cells are square).
    pub plot_px: u32,
    /// The label font every map draws with, in device pixels.
    pub font_px: f32,
    /// One place per map, in order.
    pub places: Vec<GridPlace>,
    /// Where the legend goes, when there is one.
    pub legend: Option<PixelRect>,
    /// The whole grid's width and height, in device pixels.
    pub width_px: u32,
    /// See `width_px`.
    pub height_px: u32,
}

/// The height of one legend entry at `font` device pixels: its title line, the bar, the tick
/// marks and their labels.
pub fn legend_entry_px(font: f32) -> u32 {
    (4.6 * f64::from(font)).ceil() as u32
}

/// The narrowest a legend entry may be at `font` device pixels (room for three tick labels).
pub fn legend_min_width_px(font: f32) -> u32 {
    (9.0 * f64::from(font)).ceil() as u32
}

/// The label font for cells `cell_px` apart: the font asked for when a label fits its cell's
/// pitch, else as small as fits, down to [`LABEL_SHRINK`] of it (then the maps leave some
/// labels out). The same rule as a map on its own ([`crate::render::HeatmapLayout::new`]).
///
/// ```
/// use diffattn::render::label_font;
/// assert_eq!(label_font(12.0, 30.0), 12.0);
/// assert!(label_font(12.0, 12.0) < 12.0 && label_font(12.0, 12.0) > 10.0);
/// assert_eq!(label_font(12.0, 1.0), 12.0 * 0.8);
/// ```
pub fn label_font(font_px: f32, cell_px: f64) -> f32 {
    let font = if font_px.is_finite() {
        font_px.clamp(1.0, 1000.0)
    } else {
        12.0
    };
    // A hair under the pitch, so that rounding never asks for a second line.
    let fits = (cell_px / LABEL_PITCH_EM * (1.0 - 1e-4)) as f32;
    fits.min(font).max(font * LABEL_SHRINK)
}

/// The grid of `spec.maps` with the largest plots that fit the room (or, with
/// `min_plot_px`, the most columns whose plots are at least that tall). Any sizes give a
/// grid: when nothing fits, every plot is one pixel.
///
/// ```
/// use diffattn::render::{fit_grid, GridMap, GridSpec};
/// let map = GridMap { rows: 11, cols: 11, col_label_em: 4.0, own_bar_em: None, strip: None };
/// let maps = [map; 5];
/// let grid = fit_grid(&GridSpec {
///     width_px: 1000, height_px: Some(700), maps: &maps, font_px: 12.0, row_label_em: 4.0,
///     title_px: 20, gap_px: 10, legend_entries: 3, max_plot_px: 0, min_plot_px: 0,
/// });
/// // Two over three, the legend in the free slot at the top right; cells of whole pixels.
/// assert_eq!((grid.cols, grid.rows), (3, 2));
/// assert_eq!(grid.plot_px % 11, 0);
/// assert!(grid.legend.is_some() && grid.width_px <= 1000 && grid.height_px <= 700);
/// // Only the first column has row labels; only maps with none below them column labels.
/// assert!(grid.places[0].parts.row_labels && !grid.places[1].parts.row_labels);
/// assert!(!grid.places[0].parts.col_labels && grid.places[4].parts.col_labels);
/// ```
pub fn fit_grid(spec: &GridSpec) -> GridLayout {
    let count = spec.maps.len();
    if count == 0 {
        return GridLayout {
            cols: 1,
            rows: 0,
            plot_px: 0,
            font_px: spec.font_px,
            places: Vec::new(),
            legend: None,
            width_px: 0,
            height_px: 0,
        };
    }
    let mut best: Option<GridLayout> = None;
    for cols in 1..=count {
        let layout = largest(spec, cols);
        let better = match &best {
            None => true,
            Some(b) if spec.min_plot_px > 0 => {
                let (reach, b_reach) = (
                    layout.plot_px >= spec.min_plot_px,
                    b.plot_px >= spec.min_plot_px,
                );
                match (reach, b_reach) {
                    (true, true) => true, // more columns, each tall enough
                    (true, false) => true,
                    (false, true) => false,
                    (false, false) => layout.plot_px > b.plot_px,
                }
            }
            // Larger plots win; between equals, fewer rows of maps (the room's width used, the
            // legend in a row of its own rather than a square of maps with a hole).
            Some(b) => {
                layout.plot_px > b.plot_px || (layout.plot_px == b.plot_px && layout.rows < b.rows)
            }
        };
        if better {
            best = Some(layout);
        }
    }
    best.expect("at least one arrangement was tried")
}

/// The arrangement `cols` across with the largest plot that fits (one pixel when none does):
/// of the two ways to leave a row short, the one with the larger plots.
fn largest(spec: &GridSpec, cols: usize) -> GridLayout {
    let last_short = largest_with(spec, cols, Short::Last);
    if spec.maps.len() % cols == 0 {
        return last_short;
    }
    let first_short = largest_with(spec, cols, Short::First);
    // Larger plots; between equals, the shorter grid (a row of labels fewer).
    let key = |g: &GridLayout| (g.plot_px, std::cmp::Reverse(g.height_px));
    if key(&first_short) > key(&last_short) {
        first_short
    } else {
        last_short
    }
}

/// Which row of the grid is short when the maps do not fill it: the last (the free slots at
/// its right end), or the first (the free slots at its right end, so every map of the first
/// row has one below it and none of them needs column labels: a row of labels saved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Short {
    Last,
    First,
}

/// [`largest`] with the short row given.
fn largest_with(spec: &GridSpec, cols: usize, short: Short) -> GridLayout {
    largest_fitting(spec, |plot| arrange(spec, cols, short, plot))
}

/// The layout `arrange` makes with the largest plot (in device pixels) that fits the room of
/// `spec`, capped at its `max_plot_px`: whole pixels per cell where at least one fits, the
/// largest by bisection (the room a plot needs grows with it, labels included); else the
/// largest plot under a pixel a cell. Shared by the grid and the walk's focus layout.
pub(super) fn largest_fitting(spec: &GridSpec, arrange: impl Fn(u32) -> GridLayout) -> GridLayout {
    let rows = spec.maps.iter().map(|m| m.rows).max().unwrap_or(0).max(1) as u64;
    let cap = match spec.max_plot_px {
        0 => u64::from(u32::MAX / 2),
        p => u64::from(p),
    };
    let fits = |plot: u64| {
        let layout = arrange(plot as u32);
        layout.width_px <= spec.width_px && spec.height_px.is_none_or(|h| layout.height_px <= h)
    };
    let (mut lo, mut hi) = (0_u64, (cap / rows).max(1) + 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid * rows) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo >= 1 {
        return arrange((lo * rows).min(cap) as u32);
    }
    let (mut lo, mut hi) = (1_u64, rows.min(cap + 1));
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    arrange(lo as u32)
}

/// A place in the grid: (row, column).
type Slot = (usize, usize);

/// The grid position (row, column) of each of `count` maps `cols` across, with `short` the
/// row left short, and where the free slots are (the last of them is the legend's).
fn positions(count: usize, cols: usize, short: Short) -> (Vec<Slot>, Option<Slot>) {
    let grid_rows = count.div_ceil(cols);
    let free = grid_rows * cols - count;
    let first_row = if short == Short::First {
        cols - free
    } else {
        cols
    };
    let at = (0..count)
        .map(|i| {
            if i < first_row {
                (0, i)
            } else {
                let j = i - first_row;
                (1 + j / cols, j % cols)
            }
        })
        .collect();
    let slot = (free > 0).then(|| match short {
        Short::Last => (grid_rows - 1, cols - 1),
        Short::First => (0, cols - 1),
    });
    (at, slot)
}

/// The grid `cols` maps across, `short` the row left short, with plots `plot_px` tall.
fn arrange(spec: &GridSpec, cols: usize, short: Short, plot_px: u32) -> GridLayout {
    let count = spec.maps.len();
    let grid_rows = count.div_ceil(cols);
    let (at, slot) = positions(count, cols, short);
    let occupied = |r: usize, c: usize| at.contains(&(r, c));
    let rows = spec.maps.iter().map(|m| m.rows).max().unwrap_or(0).max(1);
    let cell = f64::from(plot_px) / rows as f64;
    let font = label_font(spec.font_px, cell);
    let gap = i64::from(spec.gap_px);
    let title = i64::from(spec.title_px);

    // Each map's canvas size and parts.
    let mut sized = Vec::with_capacity(count);
    for (map, &(gr, gc)) in spec.maps.iter().zip(&at) {
        let below = occupied(gr + 1, gc);
        let parts = FrameParts {
            row_labels: gc == 0,
            col_labels: !below,
            colorbar: map.own_bar_em.is_some(),
            shrink_labels: false,
            padded: false,
            strip: map.strip.is_some(),
        };
        let bands = Bands::at(
            &LayoutSpec {
                width_px: 0,
                height_px: 0,
                font_px: font,
                rows: map.rows,
                cols: map.cols,
                row_label_em: if parts.row_labels {
                    spec.row_label_em
                } else {
                    0.0
                },
                col_label_em: if parts.col_labels {
                    map.col_label_em
                } else {
                    0.0
                },
                tick_label_em: map.own_bar_em.unwrap_or(0.0),
                title_em: 0.0,
                colorbar: parts.colorbar,
                padded: false,
                strip: map.strip,
            },
            font,
        );
        let plot_w = plot_width(map.cols, cell);
        let plot_h = i64::from(plot_px);
        let strip = super::strip_size::extent_px(map.strip.is_some(), cell, font);
        let width = 2 * bands.pad + bands.left + plot_w + strip + bands.right;
        // A colorbar is at least eight labels tall, whatever the plot.
        let bar = if parts.colorbar {
            (8.0 * f64::from(font)).round() as i64
        } else {
            0
        };
        let height = 2 * bands.pad + (plot_h + bands.below).max(bar);
        let plot = rect(bands.pad + bands.left, bands.pad, plot_w, plot_h);
        sized.push((width, height, parts, plot));
    }
    let mut col_w = vec![0_i64; cols];
    let mut row_h = vec![0_i64; grid_rows];
    for (&(w, h, _, _), &(gr, gc)) in sized.iter().zip(&at) {
        col_w[gc] = col_w[gc].max(w);
        row_h[gr] = row_h[gr].max(title + h);
    }

    // The legend: in the grid's free slot when it fits there, else in a row of its own below
    // the grid, its entries side by side.
    let entries = spec.legend_entries as i64;
    let entry_h = i64::from(legend_entry_px(font));
    let min_w = i64::from(legend_min_width_px(font));
    let x_of = |c: usize| col_w[..c].iter().sum::<i64>() + gap * c as i64;
    let y_of = |r: usize| row_h[..r].iter().sum::<i64>() + gap * r as i64;
    let mut legend = None;
    let mut legend_row = 0;
    if entries > 0 {
        match slot.map(|(r, c)| (x_of(c), y_of(r), col_w[c], row_h[r])) {
            Some((x, y, w, h)) if w >= min_w && h >= title + entries * entry_h => {
                legend = Some(rect(x, y + title, w, entries * entry_h));
            }
            _ => {
                legend_row = entry_h + gap;
                legend = Some(rect(0, y_of(grid_rows), 0, entry_h)); // width set below
            }
        }
    }
    let width = x_of(cols) - gap;
    let height = y_of(grid_rows) - gap + legend_row;
    if let (Some(l), true) = (legend.as_mut(), legend_row > 0) {
        l.width = (width.max(min_w * entries)) as u32;
    }
    let places = sized
        .iter()
        .zip(&at)
        .map(|(&(w, h, parts, plot), &(gr, gc))| GridPlace {
            canvas: rect(x_of(gc), y_of(gr) + title, w, h),
            plot,
            parts,
        })
        .collect();
    GridLayout {
        cols,
        rows: grid_rows,
        plot_px,
        font_px: font,
        places,
        legend,
        width_px: clamp_u32(width.max(legend.map_or(0, |l| i64::from(l.width)))),
        height_px: clamp_u32(height),
    }
}

/// The side of one cell of a plot `plot_px` tall over `rows` rows.
pub(super) fn cell_px_of(plot_px: u32, rows: usize) -> f64 {
    f64::from(plot_px) / rows.max(1) as f64
}

/// The width of a plot of `cols` columns of cells `cell` pixels wide: whole cells where a
/// cell is at least a pixel, else at least one pixel.
pub(super) fn plot_width(cols: usize, cell: f64) -> i64 {
    let cols = cols.max(1) as f64;
    if cell >= 1.0 {
        (cell.floor() * cols) as i64
    } else {
        ((cell * cols).floor() as i64).max(1)
    }
}

pub(super) fn rect(x: i64, y: i64, width: i64, height: i64) -> PixelRect {
    PixelRect {
        x: x.clamp(0, i64::from(i32::MAX)) as i32,
        y: y.clamp(0, i64::from(i32::MAX)) as i32,
        width: clamp_u32(width),
        height: clamp_u32(height),
    }
}

fn clamp_u32(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

#[cfg(test)]
#[path = "grid_tests.rs"]
mod tests;
