//! A map's finite extremes, found in one pass and kept with the map (the explorer keeps them per
//! head), so that a colour scale ([`crate::render::Scale::from_stats`]) and the "constant" bar
//! ([`crate::render::constant_of`]) scan no map again on a redraw.

use ndarray::ArrayView2;

/// The smallest and largest finite values of a map (or of several, [`merged`](Self::merge)):
/// all a colour scale and the "constant" bar need of it, found in one pass over its cells and
/// kept by the explorer with the map, so a redraw at 2,048 tokens does not scan 4 million cells
/// per map again. With no finite value, `min > max` ([`MapStats::NONE`]).
///
/// ```
/// use diffattn::render::MapStats;
/// use ndarray::array;
/// let s = MapStats::of(array![[0.25_f32, f32::NAN], [-0.5, 0.125]].view());
/// assert_eq!((s.min, s.max, s.abs_max()), (-0.5, 0.25, 0.5));
/// assert_eq!(MapStats::NONE.abs_max(), 0.0);
/// // Infinities take no part either.
/// let row: Vec<f32> = (0..20).map(|i| if i == 3 { f32::INFINITY } else { i as f32 }).collect();
/// let s = MapStats::of(ndarray::ArrayView2::from_shape((2, 10), &row).unwrap());
/// assert_eq!((s.min, s.max), (0.0, 19.0));
/// let s = MapStats::of(ndarray::ArrayView2::from_shape((1, 3), &[f32::NEG_INFINITY; 3]).unwrap());
/// assert!(s.min > s.max);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapStats {
    /// The smallest finite value (`+∞` when there is none).
    pub min: f32,
    /// The largest finite value (`−∞` when there is none).
    pub max: f32,
}

impl MapStats {
    /// No value at all.
    pub const NONE: MapStats = MapStats {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
    };

    /// The finite extremes of `map`, in one pass: the engine's vectorised kernel
    /// (`kernels::extremes`) over a contiguous map (a NaN takes no part). Only a map holding an
    /// infinity, which no engine stage gives, is scanned again with the infinities left out.
    pub fn of(map: ArrayView2<f32>) -> MapStats {
        let Some(cells) = map.as_slice() else {
            return map.iter().fold(MapStats::NONE, |s, &v| s.with(v));
        };
        let mut out = [0.0f32; 2];
        crate::engine::kernels::extremes(cells, &mut out);
        let [min, max] = out;
        if min == f32::NEG_INFINITY || max == f32::INFINITY {
            return cells.iter().fold(MapStats::NONE, |s, &v| s.with(v));
        }
        MapStats { min, max }
    }

    /// These extremes with one more value.
    fn with(self, v: f32) -> MapStats {
        if !v.is_finite() {
            return self;
        }
        MapStats {
            min: self.min.min(v),
            max: self.max.max(v),
        }
    }

    /// The extremes of both.
    pub fn merge(self, other: MapStats) -> MapStats {
        MapStats {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The largest magnitude of a finite value, 0 when there is none.
    pub fn abs_max(&self) -> f32 {
        if self.min > self.max {
            0.0
        } else {
            self.min.abs().max(self.max.abs())
        }
    }
}

/// The value every finite cell of `map` holds, when they all hold (nearly) the same one: their
/// spread is at most a millionth of their size (or of 1 for small values), which is f32
/// rounding noise for maps of probabilities. Such a map is drawn in one colour and its
/// colorbar says "constant" instead of stretching the noise over the palette (`D` at a shift of
/// 0 is all zeros up to 1e-8). `None` for a map with no finite cell or a real spread.
///
/// ```
/// use diffattn::render::constant_value;
/// use ndarray::array;
/// assert_eq!(constant_value(array![[0.0_f32, 1e-9], [-2e-9, 0.0]].view()), Some(0.0));
/// assert_eq!(constant_value(array![[0.13_f32, 0.2]].view()), None);
/// ```
pub fn constant_value(map: ArrayView2<f32>) -> Option<f32> {
    constant_of(MapStats::of(map))
}

/// [`constant_value`] from a map's [`MapStats`].
pub fn constant_of(stats: MapStats) -> Option<f32> {
    let (min, max) = (stats.min, stats.max);
    if min > max {
        return None;
    }
    let size = min.abs().max(max.abs()).max(1.0);
    if max - min > 1e-6 * size {
        return None;
    }
    // Rounding noise around zero is zero.
    let mid = min / 2.0 + max / 2.0;
    Some(if mid.abs() <= 1e-6 { 0.0 } else { mid })
}
