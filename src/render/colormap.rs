//! Colour-blind-safe palettes as anchor colours, linearly interpolated in sRGB.
//!
//! Both palettes are perceptually ordered and stay distinguishable under the common forms of
//! colour-vision deficiency:
//!
//! * [`Palette::Viridis`]: matplotlib's default sequential map by Stéphane van der Walt and
//!   Nathaniel Smith (CC0), <https://bids.github.io/colormap/>. The anchors are entries
//!   0, 16, 32, ..., 240 and 255 of matplotlib's 256-entry `_viridis_data`
//!   (`lib/matplotlib/_cm_listed.py`); interpolating between them stays within 6/255 of the
//!   full table on every channel. plotters' own `ViridisRGB` has only 8 anchors and a
//!   different last colour, so it is not used.
//! * [`Palette::PuOr`]: ColorBrewer's 11-class diverging "PuOr" by Cynthia A. Brewer
//!   (Apache-2.0), <https://colorbrewer2.org/#type=diverging&scheme=PuOr&n=11>, marked there as
//!   colour-blind safe. Its centre anchor `#f7f7f7` is the neutral colour for zero; low values
//!   are orange-brown and high values purple, as in matplotlib's `PuOr`.

/// An sRGB colour as three bytes, red, green and blue.
pub type Rgb = [u8; 3];

/// matplotlib's viridis at 17 evenly spaced positions (see the module documentation).
const VIRIDIS: [Rgb; 17] = [
    [68, 1, 84],
    [72, 24, 106],
    [71, 45, 123],
    [66, 64, 134],
    [59, 82, 139],
    [51, 99, 141],
    [44, 114, 142],
    [38, 130, 142],
    [33, 145, 140],
    [31, 159, 136],
    [39, 173, 129],
    [61, 188, 116],
    [92, 200, 99],
    [129, 211, 77],
    [170, 220, 50],
    [213, 226, 26],
    [253, 231, 37],
];

/// ColorBrewer PuOr, 11 classes, from the orange-brown end (#7f3b08) to the purple end (#2d004b).
const PUOR: [Rgb; 11] = [
    [0x7f, 0x3b, 0x08],
    [0xb3, 0x58, 0x06],
    [0xe0, 0x82, 0x14],
    [0xfd, 0xb8, 0x63],
    [0xfe, 0xe0, 0xb6],
    [0xf7, 0xf7, 0xf7],
    [0xd8, 0xda, 0xeb],
    [0xb2, 0xab, 0xd2],
    [0x80, 0x73, 0xac],
    [0x54, 0x27, 0x88],
    [0x2d, 0x00, 0x4b],
];

/// A palette: a colour for every position `t` in `0..=1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Palette {
    /// Sequential, dark purple at 0 to yellow at 1.
    Viridis,
    /// Diverging, orange-brown at 0, neutral near-white at 0.5, purple at 1.
    PuOr,
}

impl Palette {
    /// The anchor colours, evenly spaced over `0..=1`.
    pub fn anchors(self) -> &'static [Rgb] {
        match self {
            Palette::Viridis => &VIRIDIS,
            Palette::PuOr => &PUOR,
        }
    }

    /// The colour at position `t`, clamped to `0..=1`; NaN is treated as 0.5 (callers that
    /// want NaN to stand out handle it before, as [`crate::render::Scale::color`] does).
    ///
    /// ```
    /// use diffattn::render::Palette;
    /// assert_eq!(Palette::Viridis.at(0.0), [68, 1, 84]);
    /// assert_eq!(Palette::Viridis.at(1.0), [253, 231, 37]);
    /// assert_eq!(Palette::PuOr.at(0.5), [0xf7, 0xf7, 0xf7]);
    /// assert_eq!(Palette::PuOr.at(7.0), Palette::PuOr.at(1.0));
    /// ```
    pub fn at(self, t: f32) -> Rgb {
        let anchors = self.anchors();
        let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
        let last = anchors.len() - 1;
        let pos = t * last as f32;
        // `pos` is in 0..=last, so the float-to-int cast cannot saturate.
        let lower = (pos.floor() as usize).min(last - 1);
        let frac = pos - lower as f32;
        let (a, b) = (anchors[lower], anchors[lower + 1]);
        let mix =
            |x: u8, y: u8| (f32::from(x) + (f32::from(y) - f32::from(x)) * frac).round() as u8;
        [mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2])]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_hit_exactly() {
        for palette in [Palette::Viridis, Palette::PuOr] {
            let anchors = palette.anchors();
            let last = (anchors.len() - 1) as f32;
            for (i, anchor) in anchors.iter().enumerate() {
                assert_eq!(
                    palette.at(i as f32 / last),
                    *anchor,
                    "{palette:?} anchor {i}"
                );
            }
        }
    }

    #[test]
    fn midpoint_between_two_anchors_is_their_average() {
        // Halfway between the first two viridis anchors (68,1,84) and (72,24,106):
        // (70, 12.5, 95) rounds half away from zero to (70, 13, 95).
        assert_eq!(Palette::Viridis.at(0.5 / 16.0), [70, 13, 95]);
    }

    #[test]
    fn out_of_range_and_nan_positions_do_not_panic() {
        assert_eq!(Palette::PuOr.at(-3.0), [0x7f, 0x3b, 0x08]);
        assert_eq!(Palette::PuOr.at(f32::INFINITY), [0x2d, 0x00, 0x4b]);
        assert_eq!(Palette::PuOr.at(f32::NAN), [0xf7, 0xf7, 0xf7]);
    }
}
