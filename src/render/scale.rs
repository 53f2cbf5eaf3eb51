//! Value-to-colour scales: a range of values, a palette, and nice tick values for the colorbar.
//!
//! Every colour a scale gives, for a single value ([`Scale::color`]) or for a whole map
//! ([`ColorLut`], used by [`crate::render::cells_rgba`]), goes through the same quantisation:
//! the value's position in the range is rounded to one of [`LUT_STEPS`]` + 1` evenly spaced
//! levels. An 8-bit display cannot show finer steps anyway, and sharing the rounding makes the
//! fast path and the slow path agree byte for byte. The number of steps is even so that zero on
//! a diverging scale lands exactly on the palette's neutral centre.

use ndarray::ArrayView2;
use plotters::style::RGBColor;

use super::colormap::{Palette, Rgb};
use super::stats::MapStats;
use crate::engine::ScaleKind;

/// The colour of a NaN value: a mid grey that is in neither palette, so it stands out.
pub const NAN_COLOR: Rgb = [128, 128, 128];

/// The smallest half-width of a diverging scale, so that an all-zero map still has a valid,
/// NaN-free scale. Differences below it are f32 rounding noise for maps of probabilities.
pub const ABS_MAX_FLOOR: f32 = 1e-6;

/// The number of steps between the two ends of a scale; there are `LUT_STEPS + 1` colour levels.
pub const LUT_STEPS: usize = 256;

/// The index of the NaN colour in a [`ColorLut`], just past the `LUT_STEPS + 1` levels.
const NAN_INDEX: usize = LUT_STEPS + 1;

/// How values map to colours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Viridis from `min` (dark purple) to `max` (yellow): for `A`, `shift(A)` and `G`.
    Sequential {
        /// The value drawn with the palette's first colour; lower values are clamped to it.
        min: f32,
        /// The value drawn with the palette's last colour; higher values are clamped to it.
        max: f32,
    },
    /// PuOr, symmetric about zero, which is the neutral centre: for `D` and `A'`, which can be
    /// negative (DESIGN.md section 2).
    Diverging {
        /// The value drawn with the purple end; `-abs_max` is drawn with the orange end.
        abs_max: f32,
    },
}

impl Scale {
    /// A sequential scale over `min..=max`, repaired if it is degenerate (see
    /// [`Scale::range`]).
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// assert_eq!(Scale::sequential(0.0, 0.5).range(), (0.0, 0.5));
    /// // A constant map puts its value in the middle of the palette.
    /// assert_eq!(Scale::sequential(0.25, 0.25).range(), (0.0, 0.5));
    /// ```
    pub fn sequential(min: f32, max: f32) -> Self {
        let (min, max) = sequential_range(min, max);
        Scale::Sequential { min, max }
    }

    /// A sequential scale from the smallest to the largest finite value of `map`; the unit
    /// scale if it has none.
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// use ndarray::array;
    /// let attn = array![[0.75, 0.25], [0.5, 0.5]];
    /// assert_eq!(Scale::sequential_for(attn.view()), Scale::Sequential { min: 0.25, max: 0.75 });
    /// ```
    pub fn sequential_for(map: ArrayView2<f32>) -> Self {
        let (min, max) = map
            .iter()
            .filter(|v| v.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        if min > max {
            return Scale::unit();
        }
        Scale::sequential(min, max)
    }

    /// The fixed sequential scale over `0..=1`, for the gate `G`, which is a sigmoid.
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// assert_eq!(Scale::unit().range(), (0.0, 1.0));
    /// ```
    pub fn unit() -> Self {
        Scale::Sequential { min: 0.0, max: 1.0 }
    }

    /// A diverging scale over `-abs_max..=abs_max`; `abs_max` is made positive and at least
    /// [`ABS_MAX_FLOOR`].
    ///
    /// ```
    /// use diffattn::render::{Scale, ABS_MAX_FLOOR};
    /// assert_eq!(Scale::diverging(-0.5).range(), (-0.5, 0.5));
    /// assert_eq!(Scale::diverging(f32::NAN).range(), (-ABS_MAX_FLOOR, ABS_MAX_FLOOR));
    /// ```
    pub fn diverging(abs_max: f32) -> Self {
        Scale::Diverging {
            abs_max: diverging_half_width(abs_max),
        }
    }

    /// A diverging scale from the largest finite `|v|` of `map`, so that zero is neutral.
    ///
    /// ```
    /// use diffattn::render::{Scale, ABS_MAX_FLOOR};
    /// use ndarray::{array, Array2};
    /// let d = array![[0.25, -0.5], [0.0, 0.125]];
    /// assert_eq!(Scale::diverging_for(d.view()), Scale::Diverging { abs_max: 0.5 });
    /// // An all-zero map (shift by a multiple of L) still gets a valid scale.
    /// let zero = Array2::<f32>::zeros((3, 3));
    /// assert_eq!(Scale::diverging_for(zero.view()), Scale::Diverging { abs_max: ABS_MAX_FLOOR });
    /// ```
    pub fn diverging_for(map: ArrayView2<f32>) -> Self {
        let abs_max = map
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0_f32, |m, v| m.max(v.abs()));
        Scale::diverging(abs_max)
    }

    /// The scale for one map of a stage holding values of `kind`: sequential from 0 to the
    /// map's maximum (so near-uniform attention looks near-uniform, not stretched over its
    /// small spread), the fixed unit scale, or diverging around 0.
    ///
    /// ```
    /// use diffattn::engine::ScaleKind;
    /// use diffattn::render::Scale;
    /// use ndarray::array;
    /// let near_uniform = array![[0.13_f32, 0.2], [0.17, 0.15]];
    /// assert_eq!(Scale::for_values(ScaleKind::Sequential, near_uniform.view()).range(), (0.0, 0.2));
    /// ```
    pub fn for_values(kind: ScaleKind, map: ArrayView2<f32>) -> Self {
        Scale::for_maps(kind, &[map])
    }

    /// One scale for several maps of `kind` drawn side by side, so the same value has the same
    /// colour in each (the page's shared-scale option). Sequential maps go from 0 to the
    /// largest value of any of them, unless one holds a negative value (then, like diverging
    /// maps, they share a diverging scale over the largest `|v|`); the gate keeps its unit
    /// scale.
    ///
    /// ```
    /// use diffattn::engine::ScaleKind;
    /// use diffattn::render::Scale;
    /// use ndarray::array;
    /// let a = array![[0.5_f32, 0.5]];
    /// let fused = array![[0.75_f32, -0.25]];
    /// assert_eq!(Scale::for_maps(ScaleKind::Sequential, &[a.view()]).range(), (0.0, 0.5));
    /// // A′ can go negative: together they share one diverging scale.
    /// let both = Scale::for_maps(ScaleKind::Sequential, &[a.view(), fused.view()]);
    /// assert_eq!(both, Scale::Diverging { abs_max: 0.75 });
    /// ```
    pub fn for_maps(kind: ScaleKind, maps: &[ArrayView2<f32>]) -> Self {
        let stats = maps
            .iter()
            .fold(MapStats::NONE, |s, m| s.merge(MapStats::of(*m)));
        Scale::from_stats(kind, stats)
    }

    /// [`for_maps`](Self::for_maps) from the maps' [`MapStats`] (merged), without scanning
    /// them again.
    pub fn from_stats(kind: ScaleKind, stats: MapStats) -> Self {
        let (min, max, abs_max) = (stats.min, stats.max, stats.abs_max());
        match kind {
            ScaleKind::Unit => Scale::unit(),
            ScaleKind::Diverging => Scale::diverging(abs_max),
            ScaleKind::Sequential if min < 0.0 => Scale::diverging(abs_max),
            ScaleKind::Sequential if max > 0.0 => Scale::sequential(0.0, max),
            ScaleKind::Sequential => Scale::unit(),
        }
    }

    /// The scale widened to a round end (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power
    /// of ten): for maps that share one scale, whose colours then stay put while a slider moves
    /// one of them a little, and whose colour bar ends on a round value. A sequential scale
    /// keeps its low end.
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// assert_eq!(Scale::diverging(0.61).rounded_out().range(), (-0.8, 0.8));
    /// assert_eq!(Scale::sequential(0.0, 0.43).rounded_out().range(), (0.0, 0.5));
    /// assert_eq!(Scale::unit().rounded_out(), Scale::unit());
    /// ```
    pub fn rounded_out(self) -> Self {
        match self {
            Scale::Sequential { min, max } => {
                let (min, max) = sequential_range(min, max);
                Scale::sequential(min, min + round_up(max - min))
            }
            Scale::Diverging { abs_max } => {
                Scale::diverging(round_up(diverging_half_width(abs_max)))
            }
        }
    }

    /// The palette the scale draws with.
    pub fn palette(&self) -> Palette {
        match self {
            Scale::Sequential { .. } => Palette::Viridis,
            Scale::Diverging { .. } => Palette::PuOr,
        }
    }

    /// The values drawn with the palette's two ends, `(low, high)`, with `low < high`, both
    /// finite. A hand-built variant with a degenerate range is repaired the way the
    /// constructors repair it: an empty range `v..=v` becomes `0..=2v` (or `2v..=0`), or
    /// `0..=1` when `v` is zero; a reversed range is swapped; non-finite ends give `0..=1`.
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// assert_eq!(Scale::Sequential { min: 1.0, max: 0.0 }.range(), (0.0, 1.0));
    /// assert_eq!(Scale::Diverging { abs_max: 2.0 }.range(), (-2.0, 2.0));
    /// ```
    pub fn range(&self) -> (f32, f32) {
        match *self {
            Scale::Sequential { min, max } => sequential_range(min, max),
            Scale::Diverging { abs_max } => {
                let a = diverging_half_width(abs_max);
                (-a, a)
            }
        }
    }

    /// The colour of `v`: clamped to the range's end colours, NaN as [`NAN_COLOR`].
    ///
    /// ```
    /// use diffattn::render::{Palette, Scale, NAN_COLOR};
    /// let d = Scale::diverging(0.5);
    /// assert_eq!(d.color(0.0), Palette::PuOr.at(0.5)); // neutral
    /// assert_eq!(d.color(0.5), Palette::PuOr.at(1.0)); // purple end
    /// assert_eq!(d.color(-9.0), Palette::PuOr.at(0.0)); // clamped to the orange end
    /// assert_eq!(d.color(f32::NAN), NAN_COLOR);
    /// ```
    pub fn color(&self, v: f32) -> Rgb {
        let (k, b) = self.affine();
        level_color(self.palette(), lut_index(k, b, v))
    }

    /// [`Scale::color`] as a plotters colour.
    pub fn plotters_color(&self, v: f32) -> RGBColor {
        let [r, g, b] = self.color(v);
        RGBColor(r, g, b)
    }

    /// The lookup table that colours whole maps quickly; it agrees with [`Scale::color`].
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// let scale = Scale::sequential(-1.0, 3.0);
    /// let lut = scale.lut();
    /// let [r, g, b] = scale.color(0.7);
    /// assert_eq!(lut.rgba(0.7), [r, g, b, 255]);
    /// ```
    pub fn lut(&self) -> ColorLut {
        let (k, b) = self.affine();
        let palette = self.palette();
        let mut table = [[0, 0, 0, 255]; NAN_INDEX + 1];
        for (index, entry) in table.iter_mut().enumerate() {
            let [r, g, b] = level_color(palette, index);
            *entry = [r, g, b, 255];
        }
        ColorLut { k, b, table }
    }

    /// The affine map from a value to its fractional level: `level = v * k + b`.
    fn affine(&self) -> (f32, f32) {
        let steps = LUT_STEPS as f32;
        match *self {
            Scale::Sequential { .. } => {
                let (lo, hi) = self.range();
                let k = steps / (hi - lo);
                (k, -lo * k)
            }
            Scale::Diverging { abs_max } => {
                // Written around the centre so that zero maps exactly to the middle level.
                let half = steps / 2.0;
                (half / diverging_half_width(abs_max), half)
            }
        }
    }
}

/// A scale precomputed as a table of `LUT_STEPS + 1` RGBA colours plus the NaN colour.
#[derive(Clone, Debug)]
pub struct ColorLut {
    k: f32,
    b: f32,
    table: [[u8; 4]; NAN_INDEX + 1],
}

impl ColorLut {
    /// The RGBA bytes (alpha 255) of `v`, equal to [`Scale::color`] of `v`.
    #[inline]
    pub fn rgba(&self, v: f32) -> [u8; 4] {
        self.table[lut_index(self.k, self.b, v)]
    }
}

/// The level of `v` (0 to `LUT_STEPS`), or `NAN_INDEX` for NaN; infinities clamp to the ends.
#[inline]
fn lut_index(k: f32, b: f32, v: f32) -> usize {
    let level = v * k + b;
    if level.is_nan() {
        NAN_INDEX
    } else {
        // After the clamp the value is in 0.5..=256.5, so the truncating cast rounds to nearest.
        (level.clamp(0.0, LUT_STEPS as f32) + 0.5) as usize
    }
}

/// The colour of one level of a palette.
fn level_color(palette: Palette, index: usize) -> Rgb {
    if index > LUT_STEPS {
        NAN_COLOR
    } else {
        palette.at(index as f32 / LUT_STEPS as f32)
    }
}

/// See [`Scale::range`] for the rules.
fn sequential_range(min: f32, max: f32) -> (f32, f32) {
    if !(min.is_finite() && max.is_finite()) {
        return (0.0, 1.0);
    }
    let (lo, hi) = if min <= max { (min, max) } else { (max, min) };
    // The span must also be finite and positive, or the affine map would divide by zero.
    let span = hi - lo;
    if span > 0.0 && span.is_finite() {
        return (lo, hi);
    }
    if !span.is_finite() {
        return (f32::MIN / 2.0, f32::MAX / 2.0);
    }
    if lo.abs() < ABS_MAX_FLOOR {
        (0.0, 1.0)
    } else if lo > 0.0 {
        (0.0, 2.0 * lo)
    } else {
        (2.0 * lo, 0.0)
    }
}

/// See [`Scale::diverging`] for the rules.
fn diverging_half_width(abs_max: f32) -> f32 {
    if abs_max.is_finite() {
        abs_max.abs().max(ABS_MAX_FLOOR)
    } else {
        ABS_MAX_FLOOR
    }
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 or 10 times a power of ten that is at
/// least `x` (a positive, finite `x`; anything else is returned as it is).
fn round_up(x: f32) -> f32 {
    if !(x > 0.0 && x.is_finite()) {
        return x;
    }
    let x = f64::from(x);
    let base = 10f64.powf(x.log10().floor());
    let m = x / base;
    let nice = [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .find(|&n| m <= n * (1.0 + 1e-6))
        .unwrap_or(10.0);
    // Rounded to the step's digits, so 0.8 is 0.8 and not 0.8000000000000002.
    let v = nice * base;
    let digits = (-(base.log10().floor()) + 1.0).clamp(0.0, 15.0) as i32;
    let scale = 10f64.powi(digits);
    ((v * scale).round() / scale) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn sequential_ends_are_the_palette_ends() {
        let s = Scale::sequential(0.2, 0.6);
        assert_eq!(s.color(0.2), [68, 1, 84]);
        assert_eq!(s.color(0.6), [253, 231, 37]);
        assert_eq!(s.color(-5.0), [68, 1, 84]);
        assert_eq!(s.color(f32::INFINITY), [253, 231, 37]);
        assert_eq!(s.color(f32::NEG_INFINITY), [68, 1, 84]);
        assert_eq!(s.color(f32::NAN), NAN_COLOR);
    }

    #[test]
    fn diverging_zero_is_the_neutral_centre() {
        for a in [ABS_MAX_FLOOR, 1e-3, 0.37, 1.0, 123.0] {
            let d = Scale::diverging(a);
            assert_eq!(d.color(0.0), [0xf7, 0xf7, 0xf7], "abs_max {a}");
            assert_eq!(d.color(-0.0), [0xf7, 0xf7, 0xf7], "abs_max {a}");
            assert_eq!(d.color(a), [0x2d, 0x00, 0x4b], "abs_max {a}");
            assert_eq!(d.color(-a), [0x7f, 0x3b, 0x08], "abs_max {a}");
        }
    }

    #[test]
    fn non_finite_values_are_ignored_when_fitting() {
        let m = array![[f32::NAN, 0.5], [f32::INFINITY, -0.25]];
        assert_eq!(
            Scale::sequential_for(m.view()),
            Scale::Sequential {
                min: -0.25,
                max: 0.5
            }
        );
        assert_eq!(
            Scale::diverging_for(m.view()),
            Scale::Diverging { abs_max: 0.5 }
        );
        let empty = ndarray::Array2::<f32>::zeros((3, 0));
        assert_eq!(Scale::sequential_for(empty.view()), Scale::unit());
        assert_eq!(
            Scale::diverging_for(empty.view()),
            Scale::Diverging {
                abs_max: ABS_MAX_FLOOR
            }
        );
    }

    #[test]
    fn degenerate_ranges_are_repaired() {
        assert_eq!(sequential_range(0.0, 0.0), (0.0, 1.0));
        assert_eq!(sequential_range(-2.0, -2.0), (-4.0, 0.0));
        assert_eq!(sequential_range(f32::NAN, 1.0), (0.0, 1.0));
        let (lo, hi) = sequential_range(f32::MIN, f32::MAX);
        assert!(lo < hi && (hi - lo).is_finite());
        // A hand-built degenerate variant still colours without NaN.
        let s = Scale::Sequential { min: 3.0, max: 3.0 };
        assert_eq!(s.color(3.0), Palette::Viridis.at(0.5));
        let d = Scale::Diverging { abs_max: 0.0 };
        assert_eq!(d.color(0.0), [0xf7, 0xf7, 0xf7]);
    }

    #[test]
    fn lut_agrees_with_color_everywhere() {
        let scales = [
            Scale::unit(),
            Scale::sequential(-0.3, 0.9),
            Scale::diverging(0.0123),
            Scale::diverging(7.0),
        ];
        for scale in scales {
            let lut = scale.lut();
            let (lo, hi) = scale.range();
            for i in -100..=1100 {
                let v = lo + (hi - lo) * i as f32 / 1000.0;
                let [r, g, b] = scale.color(v);
                assert_eq!(lut.rgba(v), [r, g, b, 255], "{scale:?} at {v}");
            }
            let [r, g, b] = NAN_COLOR;
            assert_eq!(lut.rgba(f32::NAN), [r, g, b, 255]);
        }
    }
}
