//! A map as RGBA pixels, in two sizes: one pixel per cell ([`cells_rgba`]), and the plot
//! rectangle's own pixels ([`plot_rgba`]), which the page puts straight onto its canvas.
//!
//! This is the slider's hot path (a 512 x 512 map is 262,144 cells), so both colour through a
//! [`ColorLut`] built once per call and write into a buffer the caller keeps between frames.
//! [`plot_rgba`] costs what the plot's pixels cost, not what the cells cost: a 512-token map on
//! a 250-pixel plot colours 62,500 pixels, and a row of pixels that shows the same cells as the
//! one above is copied, not coloured again.

use std::ops::Range;

use ndarray::ArrayView2;

use super::layout::{cell_index, HeatmapLayout};
use super::scale::{ColorLut, Scale};
use crate::engine::Mask;

/// The two greys of the hatching that marks a cell the mask forbids: in neither palette, and
/// striped so it reads as "no value" rather than as a value of the scale (DESIGN.md §2: the
/// views draw forbidden cells as masked in every map).
pub const MASKED_RGB: [[u8; 3]; 2] = [[0xb4, 0xb4, 0xb4], [0xdc, 0xdc, 0xdc]];

/// Which cells of a map a mask forbids: the mask, where its keys sit (key `j` is at position
/// `j + key_offset`; see [`Mask`]), and, for a map drawn from a window
/// ([`crate::render::Viewport`]), where the window starts: row `i` and column `j` drawn are
/// the map's row `i + origin.0` and column `j + origin.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellMask {
    /// The mask.
    pub mask: Mask,
    /// The position of key 0.
    pub key_offset: usize,
    /// The whole-map row and column of the first cell drawn; `(0, 0)` for a whole map.
    pub origin: (usize, usize),
}

impl CellMask {
    /// The mask of a whole map.
    pub fn new(mask: Mask, key_offset: usize) -> Self {
        CellMask {
            mask,
            key_offset,
            origin: (0, 0),
        }
    }

    /// The columns of drawn row `row` (of `cols` drawn) the mask allows: one contiguous range.
    ///
    /// ```
    /// use diffattn::engine::Mask;
    /// use diffattn::render::CellMask;
    /// // Causal, drawn from the window starting at row 10, column 8: drawn row 0 is query 10,
    /// // which sees keys 0..=10, i.e. drawn columns 0..3 of the window's columns 8, 9, ...
    /// let m = CellMask { origin: (10, 8), ..CellMask::new(Mask::causal(true), 0) };
    /// assert_eq!(m.allowed(0, 4), 0..3);
    /// // A window wholly above the diagonal has nothing allowed.
    /// let above = CellMask { origin: (0, 8), ..m };
    /// assert_eq!(above.allowed(2, 4), 0..0);
    /// ```
    pub fn allowed(&self, row: usize, cols: usize) -> Range<usize> {
        let (r0, c0) = self.origin;
        let keys = self.mask.allowed_keys(
            row.saturating_add(r0),
            self.key_offset,
            c0.saturating_add(cols),
        );
        let (start, end) = (keys.start.max(c0), keys.end.max(c0));
        start - c0..end - c0
    }

    /// Whether some cell of a `rows x cols` map is forbidden.
    pub fn forbids_any(&self, rows: usize, cols: usize) -> bool {
        (0..rows).any(|i| self.allowed(i, cols) != (0..cols))
    }
}

/// The hatching's colour at pixel `(x, y)`: diagonal stripes `stripe_px` wide.
pub fn masked_rgba(x: usize, y: usize, stripe_px: usize) -> [u8; 4] {
    let [r, g, b] = MASKED_RGB[((x + y) / stripe_px.max(1)) % 2];
    [r, g, b, 255]
}

/// Fills `out` with the colours of `map`, row-major (row = query, column = key), 4 bytes per
/// cell (alpha 255): exactly `rows * cols * 4` bytes, the layout of the browser's `ImageData`.
/// `out` keeps its allocation, so a buffer reused across frames is allocated once.
///
/// ```
/// use diffattn::render::{cells_rgba, Scale};
/// use ndarray::array;
/// let d = array![[0.0_f32, 1.0, -1.0]];
/// let mut out = Vec::new();
/// cells_rgba(d.view(), &Scale::diverging(1.0), &mut out);
/// assert_eq!(out.len(), 3 * 4);
/// assert_eq!(out[0..4], [0xf7, 0xf7, 0xf7, 255]); // zero is neutral
/// assert_eq!(out[4..8], [0x2d, 0x00, 0x4b, 255]); // +1 is the purple end
/// assert_eq!(out[8..12], [0x7f, 0x3b, 0x08, 255]); // -1 is the orange end
/// ```
pub fn cells_rgba(map: ArrayView2<f32>, scale: &Scale, out: &mut Vec<u8>) {
    let lut = scale.lut();
    out.clear();
    out.resize(map.len() * 4, 0);
    match map.as_slice() {
        // The common case: a standard-layout map is one contiguous slice in row-major order.
        Some(values) => fill(&lut, values.iter().copied(), out),
        // A transposed or sliced view: `iter` still visits it in logical row-major order.
        None => fill(&lut, map.iter().copied(), out),
    }
}

/// Fills `out` with the pixels of `layout.plot` for `map`, row-major, 4 bytes per pixel:
/// exactly `plot.width * plot.height * 4` bytes. Each pixel has the colour of the cell under
/// its centre, the cell [`HeatmapLayout::cell_at`] finds there, so the picture, the hover
/// hit-testing and the highlight ([`HeatmapLayout::cell_rect`]) agree pixel for pixel. With
/// at least a pixel per cell every cell is a solid block of whole pixels; with fewer pixels
/// than cells some cells are not shown, as with nearest-neighbour scaling. An empty map or
/// plot gives an empty buffer.
///
/// ```
/// use diffattn::render::{plot_rgba, HeatmapLayout, LayoutSpec, Scale};
/// use ndarray::array;
/// let layout = HeatmapLayout::new(&LayoutSpec {
///     width_px: 200, height_px: 200, font_px: 10.0, rows: 2, cols: 2,
///     row_label_em: 2.0, col_label_em: 2.0, tick_label_em: 2.0, title_em: 0.0, colorbar: true, padded: true, strip: None,
/// });
/// let map = array![[0.0_f32, 1.0], [1.0, 0.0]];
/// let mut out = Vec::new();
/// plot_rgba(map.view(), &Scale::unit(), &layout, None, &mut out);
/// let (w, h) = (layout.plot.width as usize, layout.plot.height as usize);
/// assert_eq!(out.len(), w * h * 4);
/// let [r, g, b] = Scale::unit().color(1.0);
/// // The last pixel of the first row lies in cell (0, 1).
/// assert_eq!(out[(w - 1) * 4..w * 4], [r, g, b, 255]);
/// ```
///
/// With a `mask`, the pixels of forbidden cells are hatched ([`masked_rgba`]) instead of
/// coloured, whatever the map holds there.
pub fn plot_rgba(
    map: ArrayView2<f32>,
    scale: &Scale,
    layout: &HeatmapLayout,
    mask: Option<&CellMask>,
    out: &mut Vec<u8>,
) {
    let (rows, cols) = map.dim();
    let (width, height) = (layout.plot.width as usize, layout.plot.height as usize);
    if rows == 0 || cols == 0 || width == 0 || height == 0 {
        out.clear();
        return;
    }
    // Every pixel is written below: the buffer is not cleared first (only what it grows by is).
    out.resize(width * height * 4, 0);
    let lut = scale.lut();
    let col_of: Vec<usize> = (0..width as u64)
        .map(|x| cell_index(x, cols, layout.plot.width))
        .collect();
    // With two pixels or more per cell, every cell is a run of pixels, `runs[c]..runs[c + 1]`
    // (`col_of` rises by at most one a pixel), filled with its colour looked up once; with
    // fewer, each pixel looks its colour up.
    let runs: Vec<usize> = if 2 * cols <= width {
        (0..=cols)
            .map(|c| col_of.partition_point(|&k| k < c))
            .collect()
    } else {
        Vec::new()
    };
    let stripe_px = (layout.font_px / 3.0).round().max(2.0) as usize;
    let hatch = |pixels: &mut [u32], from: usize, y: usize| {
        for (x, pixel) in pixels.iter_mut().enumerate() {
            *pixel = u32::from_ne_bytes(masked_rgba(from + x, y, stripe_px));
        }
    };
    // One line of pixels as RGBA words, copied into `out` as bytes.
    let mut pixels = vec![0_u32; width];
    let mut previous = None;
    for y in 0..height {
        let row = cell_index(y as u64, rows, layout.plot.height);
        let allowed = mask.map_or(0..cols, |m| m.allowed(row, cols));
        // The pixels of the allowed cells: the others, before and after, are hatched.
        let (lo, hi) = if allowed == (0..cols) {
            (0, width)
        } else {
            (
                col_of.partition_point(|&k| k < allowed.start),
                col_of.partition_point(|&k| k < allowed.end),
            )
        };
        // The same cells as the line above: only the hatching, whose stripes move with y, is
        // drawn again.
        if previous != Some(row) {
            previous = Some(row);
            let values = map.row(row);
            if runs.is_empty() {
                for (pixel, &col) in pixels[lo..hi].iter_mut().zip(&col_of[lo..hi]) {
                    *pixel = u32::from_ne_bytes(lut.rgba(values[col]));
                }
            } else {
                for col in allowed.start..allowed.end {
                    pixels[runs[col]..runs[col + 1]]
                        .fill(u32::from_ne_bytes(lut.rgba(values[col])));
                }
            }
        }
        hatch(&mut pixels[..lo], 0, y);
        hatch(&mut pixels[hi..], hi, y);
        out[y * width * 4..(y + 1) * width * 4].copy_from_slice(bytemuck::cast_slice(&pixels));
    }
}

fn fill(lut: &ColorLut, values: impl Iterator<Item = f32>, out: &mut [u8]) {
    for (pixel, v) in out.chunks_exact_mut(4).zip(values) {
        pixel.copy_from_slice(&lut.rgba(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::colormap::Palette;
    use ndarray::{array, s, Array2};

    /// Every pixel of `layout`'s plot in `out`, row-major: the cell under its centre (what
    /// hit-testing finds) and its bytes.
    fn plot_pixels<'a>(
        layout: &'a HeatmapLayout,
        out: &'a [u8],
    ) -> impl Iterator<Item = ((usize, usize), [u8; 4])> + 'a {
        let p = layout.plot;
        let (w, h) = (p.width as usize, p.height as usize);
        assert_eq!(out.len(), w * h * 4);
        (0..w * h).map(move |i| {
            let (x, y) = (i % w, i / w);
            let cell = layout
                .cell_at(
                    f64::from(p.x) + x as f64 + 0.5,
                    f64::from(p.y) + y as f64 + 0.5,
                )
                .expect("inside the plot");
            (cell, out[i * 4..i * 4 + 4].try_into().unwrap())
        })
    }

    proptest::proptest! {
        /// A mask drawn from a window forbids exactly the cells the whole map's mask forbids
        /// at the window's place.
        #[test]
        fn a_window_of_the_mask_is_the_mask_at_that_place(
            causal: bool, window in proptest::option::of(0usize..6), key_offset in 0usize..3,
            r0 in 0usize..12, c0 in 0usize..12, rows in 0usize..8, cols in 0usize..8,
        ) {
            let whole = CellMask::new(Mask { causal, window }, key_offset);
            let drawn = CellMask { origin: (r0, c0), ..whole };
            for i in 0..rows {
                let allowed = drawn.allowed(i, cols);
                let full = whole.allowed(i + r0, c0 + cols);
                for j in 0..cols {
                    proptest::prop_assert_eq!(allowed.contains(&j), full.contains(&(j + c0)));
                }
            }
        }
    }

    #[test]
    fn two_by_two_bytes() {
        // Sequential over 0..=1: 0 and 1 are the viridis ends, 0.5 is level 128 of 256, i.e.
        // the middle anchor of 17 (index 8, matplotlib's entry 128): (33, 145, 140). NaN is grey.
        let attn = array![[0.0_f32, 1.0], [0.5, f32::NAN]];
        let mut out = vec![9; 3];
        cells_rgba(attn.view(), &Scale::unit(), &mut out);
        assert_eq!(
            out,
            [
                68, 1, 84, 255, /**/ 253, 231, 37, 255, //
                33, 145, 140, 255, /**/ 128, 128, 128, 255,
            ]
        );
    }

    #[test]
    fn transposed_views_are_coloured_in_logical_order() {
        let m = Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32 / 14.0);
        let scale = Scale::unit();
        let (mut plain, mut transposed) = (Vec::new(), Vec::new());
        cells_rgba(m.t().to_owned().view(), &scale, &mut plain);
        cells_rgba(m.t(), &scale, &mut transposed);
        assert_eq!(plain, transposed);
        let mut sliced = Vec::new();
        cells_rgba(m.slice(s![.., 1..;2]), &scale, &mut sliced);
        assert_eq!(sliced.len(), 3 * 2 * 4);
        assert_eq!(sliced[0..3], scale.color(1.0 / 14.0));
    }

    #[test]
    fn plot_pixels_show_the_cell_hit_testing_finds() {
        use crate::render::LayoutSpec;
        let scale = Scale::sequential(0.0, 1.0);
        // More cells than pixels, one pixel a cell, about as many, and far fewer: every pixel is
        // the cell under it. One buffer for every case, first full of other bytes: nothing of
        // what it held stays.
        let mut out = vec![0xab_u8; 400 * 400 * 4];
        for (cells, size) in [(512, 300), (127, 300), (40, 200), (3, 200), (7, 97)] {
            let map = Array2::from_shape_fn((cells, cells + 1), |(i, j)| {
                ((i * 31 + j * 17) % 101) as f32 / 100.0
            });
            let layout = HeatmapLayout::new(&LayoutSpec {
                width_px: size,
                height_px: size,
                font_px: 10.0,
                rows: cells,
                cols: cells + 1,
                row_label_em: 2.0,
                col_label_em: 2.0,
                tick_label_em: 2.0,
                title_em: 1.0,
                colorbar: true,
                padded: true,
                strip: None,
            });
            plot_rgba(map.view(), &scale, &layout, None, &mut out);
            for ((row, col), pixel) in plot_pixels(&layout, &out) {
                let [r, g, b] = scale.color(map[[row, col]]);
                assert_eq!(pixel, [r, g, b, 255], "{cells} cells, cell ({row}, {col})");
            }
        }
        let layout = HeatmapLayout::new(&LayoutSpec {
            width_px: 100,
            height_px: 100,
            font_px: 10.0,
            rows: 2,
            cols: 0,
            row_label_em: 0.0,
            col_label_em: 0.0,
            tick_label_em: 0.0,
            title_em: 0.0,
            colorbar: true,
            padded: true,
            strip: None,
        });
        let mut out = vec![1, 2, 3];
        plot_rgba(
            Array2::zeros((2, 0)).view(),
            &scale,
            &layout,
            None,
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn masked_cells_are_hatched_and_the_rest_coloured() {
        use crate::render::LayoutSpec;
        // A causal map of ones on a 1-colour unit scale: every pixel of an allowed cell (j <= i)
        // is the colour of 1, every pixel of a forbidden one a hatching grey; with many pixels
        // a cell, one a cell, and more cells than pixels.
        let mask = CellMask::new(Mask::causal(true), 0);
        let [r, g, b] = Scale::unit().color(1.0);
        let greys: Vec<[u8; 4]> = MASKED_RGB.iter().map(|&[r, g, b]| [r, g, b, 255]).collect();
        let mut out = Vec::new();
        for (cells, size) in [(3, 120), (127, 300), (400, 200)] {
            let map = Array2::<f32>::ones((cells, cells));
            let layout = HeatmapLayout::new(&LayoutSpec {
                width_px: size,
                height_px: size,
                font_px: 10.0,
                rows: cells,
                cols: cells,
                row_label_em: 1.0,
                col_label_em: 1.0,
                tick_label_em: 1.0,
                title_em: 0.0,
                colorbar: true,
                padded: true,
                strip: None,
            });
            assert!(mask.forbids_any(cells, cells));
            plot_rgba(map.view(), &Scale::unit(), &layout, Some(&mask), &mut out);
            for ((row, col), pixel) in plot_pixels(&layout, &out) {
                if col <= row {
                    assert_eq!(pixel, [r, g, b, 255], "{cells} cells: cell ({row}, {col})");
                } else {
                    assert!(
                        greys.contains(&pixel),
                        "{cells} cells: cell ({row}, {col}) is hatched"
                    );
                }
            }
        }
    }

    #[test]
    fn buffer_is_reused_and_resized() {
        let mut out = Vec::with_capacity(64 * 4);
        let ptr = out.as_ptr();
        cells_rgba(Array2::zeros((8, 8)).view(), &Scale::unit(), &mut out);
        assert_eq!(out.len(), 256);
        assert_eq!(out.as_ptr(), ptr, "no reallocation when capacity suffices");
        cells_rgba(Array2::zeros((2, 0)).view(), &Scale::unit(), &mut out);
        assert!(out.is_empty());
        cells_rgba(
            Array2::zeros((1, 1)).view(),
            &Scale::diverging(1.0),
            &mut out,
        );
        let [r, g, b] = Palette::PuOr.at(0.5);
        assert_eq!(out, [r, g, b, 255]);
    }
}
