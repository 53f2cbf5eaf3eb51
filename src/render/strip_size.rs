//! The room the sink strip takes beside a map (DESIGN.md §7.9): the gap, the least width, the
//! width beside rows of a given height, and the whole extent a canvas keeps for it. A leaf: the
//! layout sizes the plot with it, the grid and the focus view size canvases with it, and the
//! strip's drawing (`strip`) reads the layout.

/// The gap between the plot and the strip at `font` device pixels: wide enough to read as "not
/// one more token", narrow enough to read as part of the map.
pub fn gap_px(font: f64) -> i64 {
    (0.5 * font).round().max(3.0) as i64
}

/// The strip's least width at `font` device pixels: one em, so that the strip of a long map,
/// whose cells are a pixel or less, is still seen.
pub fn min_width_px(font: f64) -> i64 {
    font.round().max(4.0) as i64
}

/// The strip's width beside rows `row_px` pixels apart: one cell, square where the cells are
/// whole pixels, and at least [`min_width_px`].
pub fn width_px(row_px: f64, font: f64) -> i64 {
    let cell = if row_px >= 1.0 {
        row_px.floor() as i64
    } else {
        0
    };
    cell.max(min_width_px(font))
}

/// The room the strip takes right of a plot whose rows are `row_px` pixels apart, gap included;
/// 0 without a strip. The grid sizes a canvas with it, and the layout of that canvas gives the
/// plot back exactly.
pub fn extent_px(strip: bool, row_px: f64, font: f32) -> i64 {
    if !strip {
        return 0;
    }
    let f = f64::from(font);
    gap_px(f) + width_px(row_px, f)
}
