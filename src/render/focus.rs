//! One map large, the others small beside it: the guided walk's step ("now look at D"), with
//! the maps it came from as thumbnails on its left, in reading order. The large map has every
//! label; the thumbnails none (their cells are half as large, and their titles name them);
//! the shared scales sit in the legend under the thumbnails, or in a row below.

use super::frame::FrameParts;
use super::grid::{
    cell_px_of, label_font, largest_fitting, legend_entry_px, legend_min_width_px, plot_width,
    rect, GridLayout, GridPlace, GridSpec,
};
use super::layout::{Bands, LayoutSpec};

/// The grid of `spec.maps` with map `focus` as large as the room allows and the others at half
/// its cells' size on its left, as many thumbnails across as make the large map largest.
/// `spec.min_plot_px` is not used (nothing is presented this way).
///
/// ```
/// use diffattn::render::{fit_focus, GridMap, GridSpec};
/// let map = GridMap { rows: 11, cols: 11, col_label_em: 4.0, own_bar_em: None, strip: None };
/// let maps = [map; 3];
/// let spec = GridSpec {
///     width_px: 1000, height_px: Some(600), maps: &maps, font_px: 12.0, row_label_em: 4.0,
///     title_px: 20, gap_px: 10, legend_entries: 2, max_plot_px: 0, min_plot_px: 0,
/// };
/// let grid = fit_focus(&spec, 2);
/// let (big, small) = (grid.places[2], grid.places[0]);
/// assert!(big.plot.height >= 2 * small.plot.height);
/// assert!(big.parts.row_labels && big.parts.col_labels && !small.parts.row_labels);
/// assert!(big.canvas.x > small.canvas.x, "the thumbnails come first, on the left");
/// assert!(grid.width_px <= 1000 && grid.height_px <= 600);
/// ```
pub fn fit_focus(spec: &GridSpec, focus: usize) -> GridLayout {
    let count = spec.maps.len();
    if count < 2 || focus >= count {
        return super::grid::fit_grid(spec);
    }
    let thumbs = count - 1;
    let mut best: Option<GridLayout> = None;
    for across in 1..=thumbs {
        let layout = largest(spec, focus, across);
        if best.as_ref().is_none_or(|b| layout.plot_px > b.plot_px) {
            best = Some(layout);
        }
    }
    best.expect("at least one arrangement was tried")
}

/// The arrangement with `across` thumbnails a row and the largest focus that fits.
fn largest(spec: &GridSpec, focus: usize, across: usize) -> GridLayout {
    largest_fitting(spec, |plot| arrange(spec, focus, across, plot))
}

/// The focus `plot_px` tall, the thumbnails `across` a row on its left.
fn arrange(spec: &GridSpec, focus: usize, across: usize, plot_px: u32) -> GridLayout {
    let count = spec.maps.len();
    let rows = spec.maps.iter().map(|m| m.rows).max().unwrap_or(0).max(1);
    let cell = cell_px_of(plot_px, rows);
    let small = if cell >= 2.0 {
        (cell / 2.0).floor()
    } else {
        cell / 2.0
    };
    let font = label_font(spec.font_px, cell);
    let gap = i64::from(spec.gap_px);
    let title = i64::from(spec.title_px);
    let thumbs = count - 1;
    let down = thumbs.div_ceil(across);

    // The thumbnails: no labels, no colour bar, a hairline margin.
    let none = FrameParts {
        row_labels: false,
        col_labels: false,
        colorbar: false,
        shrink_labels: false,
        padded: false,
        strip: false,
    };
    let thumb_pad = Bands::at(&bare(font, false), font).pad;
    let mut places = vec![None; count];
    let small_h = plot_width(rows, small);
    let listed: Vec<usize> = (0..count).filter(|&i| i != focus).collect();
    let widths: Vec<i64> = listed
        .iter()
        .map(|&i| plot_width(spec.maps[i].cols, small))
        .collect();
    let mut col_w = vec![0_i64; across];
    for (t, w) in widths.iter().enumerate() {
        col_w[t % across] = col_w[t % across].max(2 * thumb_pad + w);
    }
    let x_of = |c: usize| col_w[..c].iter().sum::<i64>() + gap * c as i64;
    let slot_h = title + 2 * thumb_pad + small_h;
    for (t, (&i, &w)) in listed.iter().zip(&widths).enumerate() {
        let (r, c) = (t / across, t % across);
        places[i] = Some(GridPlace {
            canvas: rect(
                x_of(c),
                r as i64 * (slot_h + gap) + title,
                2 * thumb_pad + w,
                2 * thumb_pad + small_h,
            ),
            plot: rect(thumb_pad, thumb_pad, w, small_h),
            parts: none,
        });
    }
    let thumb_w = x_of(across) - gap;
    let thumb_h = down as i64 * (slot_h + gap) - gap;

    // The focus: every label, its own colour bar when it has one.
    let map = spec.maps[focus];
    let parts = FrameParts {
        row_labels: true,
        col_labels: true,
        colorbar: map.own_bar_em.is_some(),
        shrink_labels: false,
        padded: false,
        strip: map.strip.is_some(),
    };
    let bands = Bands::at(
        &LayoutSpec {
            row_label_em: spec.row_label_em,
            col_label_em: map.col_label_em,
            tick_label_em: map.own_bar_em.unwrap_or(0.0),
            colorbar: parts.colorbar,
            strip: map.strip,
            ..bare(font, false)
        },
        font,
    );
    let plot_w = plot_width(map.cols, cell);
    let plot_h = i64::from(plot_px);
    let bar = if parts.colorbar {
        (8.0 * f64::from(font)).round() as i64
    } else {
        0
    };
    let strip = super::strip_size::extent_px(map.strip.is_some(), cell, font);
    let focus_w = 2 * bands.pad + bands.left + plot_w + strip + bands.right;
    let focus_h = 2 * bands.pad + (plot_h + bands.below).max(bar);
    let fx = thumb_w + gap;
    places[focus] = Some(GridPlace {
        canvas: rect(fx, title, focus_w, focus_h),
        plot: rect(bands.pad + bands.left, bands.pad, plot_w, plot_h),
        parts,
    });

    // The legend under the thumbnails when it fits there, else in a row below everything.
    let entries = spec.legend_entries as i64;
    let entry_h = i64::from(legend_entry_px(font));
    let min_w = i64::from(legend_min_width_px(font));
    let tall = (title + focus_h).max(thumb_h);
    let mut legend = None;
    let mut below = 0;
    if entries > 0 {
        let room = tall - thumb_h - gap;
        if thumb_w >= min_w && room >= entries * entry_h {
            legend = Some(rect(0, thumb_h + gap, thumb_w, entries * entry_h));
        } else {
            below = gap + entry_h;
            let w = (fx + focus_w).max(min_w * entries);
            legend = Some(rect(0, tall + gap, w, entry_h));
        }
    }
    let width = (fx + focus_w).max(legend.map_or(0, |l| i64::from(l.width)));
    GridLayout {
        cols: across + 1,
        rows: down.max(1),
        plot_px,
        font_px: font,
        places: places
            .into_iter()
            .map(|p| p.expect("every map placed"))
            .collect(),
        legend,
        width_px: width.clamp(0, i64::from(u32::MAX)) as u32,
        height_px: (tall + below).clamp(0, i64::from(u32::MAX)) as u32,
    }
}

/// A layout spec with no labels, title or bar, at `font`.
fn bare(font: f32, padded: bool) -> LayoutSpec {
    LayoutSpec {
        width_px: 0,
        height_px: 0,
        font_px: font,
        rows: 0,
        cols: 0,
        row_label_em: 0.0,
        col_label_em: 0.0,
        tick_label_em: 0.0,
        title_em: 0.0,
        colorbar: false,
        padded,
        strip: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{GridMap, HeatmapLayout};

    #[test]
    fn the_focus_is_drawn_at_the_size_the_grid_chose_and_everything_fits() {
        let map = GridMap {
            rows: 11,
            cols: 11,
            col_label_em: 4.0,
            own_bar_em: None,
            strip: None,
        };
        let out = GridMap {
            cols: 32,
            own_bar_em: Some(3.0),
            ..map
        };
        for count in 2..=6 {
            for (w, h) in [(1000, 560), (800, 700), (1600, 600), (390, 900)] {
                let mut maps = vec![map; count];
                if count == 6 {
                    maps[5] = out;
                }
                let spec = GridSpec {
                    width_px: w,
                    height_px: Some(h),
                    maps: &maps,
                    font_px: 12.0,
                    row_label_em: 4.0,
                    title_px: 20,
                    gap_px: 10,
                    legend_entries: 3,
                    max_plot_px: 0,
                    min_plot_px: 0,
                };
                let focus = count - 1;
                let grid = fit_focus(&spec, focus);
                assert!(
                    grid.width_px <= w && grid.height_px <= h,
                    "{count} in {w}×{h}"
                );
                let place = grid.places[focus];
                let m = maps[focus];
                let layout = HeatmapLayout::at_font(
                    &LayoutSpec {
                        width_px: place.canvas.width,
                        height_px: place.canvas.height,
                        rows: m.rows,
                        cols: m.cols,
                        row_label_em: spec.row_label_em,
                        col_label_em: m.col_label_em,
                        tick_label_em: m.own_bar_em.unwrap_or(0.0),
                        colorbar: place.parts.colorbar,
                        ..bare(grid.font_px, false)
                    },
                    grid.font_px,
                );
                assert_eq!(layout.plot.height, grid.plot_px, "{count} in {w}×{h}");
                assert_eq!(layout.plot.x, place.plot.x);
                // The thumbnails: half the cells, inside the grid, none overlapping the focus.
                for (i, p) in grid.places.iter().enumerate() {
                    if i == focus {
                        continue;
                    }
                    assert!(p.plot.height * 2 <= grid.plot_px);
                    assert!(p.canvas.right() <= place.canvas.x);
                }
            }
        }
    }
}
