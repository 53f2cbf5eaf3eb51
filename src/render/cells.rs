//! A map as an RGBA image with one pixel per cell, for the page to blit into the plot rectangle.
//!
//! This is the slider's hot path (a 512 x 512 map is 262,144 cells), so it colours through a
//! [`ColorLut`] built once per call and writes into a buffer the caller keeps between frames.

use ndarray::ArrayView2;

use super::scale::{ColorLut, Scale};

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
