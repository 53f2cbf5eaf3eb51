//! The colorbar's ticks: round values inside a scale's range ([`Scale::ticks`]) and their
//! labels, all written with the decimals their spacing needs ([`Scale::tick_labels`]), and one
//! value as a colorbar writes it ([`format_one`]).

use super::scale::Scale;

impl Scale {
    /// Nice round tick values inside the range, for a colorbar: about `n` of them (at most
    /// `n` and, for a sensible `n`, at least two), spaced 1, 2 or 5 times a power of ten. A
    /// diverging scale always has a tick at zero.
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// assert_eq!(Scale::unit().ticks(6), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    /// assert_eq!(Scale::diverging(0.3).ticks(5), vec![-0.2, 0.0, 0.2]);
    /// // Round ticks on both sides of zero, however few are asked for.
    /// assert_eq!(Scale::diverging(0.4).ticks(3), vec![-0.2, 0.0, 0.2]);
    /// assert_eq!(Scale::sequential(0.013, 0.087).ticks(5), vec![0.02, 0.04, 0.06, 0.08]);
    /// ```
    pub fn ticks(&self, n: usize) -> Vec<f32> {
        let (lo, hi) = self.range();
        let (lo, hi) = (f64::from(lo), f64::from(hi));
        let step = nice_step((hi - lo) / (n.max(2) - 1) as f64);
        // A diverging scale gets a round tick on each side of zero whenever three are asked
        // for: a bar that says only "0" does not tell which colour is how large.
        if matches!(self, Scale::Diverging { .. }) && n >= 3 && step > hi * (1.0 + 1e-6) {
            let step = nice_step_down(hi);
            let v = round_to_step(step, step) as f32;
            return vec![-v, 0.0, v];
        }
        // A small tolerance keeps ends such as 0.3 / 0.1 = 2.9999999999999996 inside.
        let first = (lo / step - 1e-6).ceil() as i64;
        let last = (hi / step + 1e-6).floor() as i64;
        (first..=last)
            .map(|k| {
                // Rounding to the step's decimals removes the binary noise of k * step.
                let v = round_to_step(k as f64 * step, step) as f32;
                if v == 0.0 {
                    0.0
                } else {
                    v
                }
            })
            .collect()
    }

    /// [`Scale::ticks`] with their labels, written with the same number of decimals (or in
    /// scientific notation for very small or very large steps).
    ///
    /// ```
    /// use diffattn::render::Scale;
    /// let ticks = Scale::diverging(1.0).tick_labels(5);
    /// let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
    /// assert_eq!(labels, ["-1.0", "-0.5", "0.0", "0.5", "1.0"]);
    /// ```
    pub fn tick_labels(&self, n: usize) -> Vec<(f32, String)> {
        let ticks = self.ticks(n);
        let labels = format_ticks(&ticks);
        ticks.into_iter().zip(labels).collect()
    }
}

/// One value as a colorbar writes it: four decimals, or scientific notation when that would
/// show nothing.
pub(crate) fn format_one(v: f32) -> String {
    if v == 0.0 || (v.abs() >= 1e-3 && v.abs() < 1e5) {
        format!("{v:.4}")
    } else {
        format!("{v:.2e}")
    }
}

/// The smallest of 1, 2, 5 or 10 times a power of ten that is at least `raw`.
fn nice_step(raw: f64) -> f64 {
    // The tolerance absorbs f32 inputs such as 0.3 (0.30000001192...), so 0.3 / 3 steps by 0.1.
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let base = 10f64.powf(raw.log10().floor());
    let mantissa = raw / base;
    let nice = if mantissa <= 1.0 + 1e-6 {
        1.0
    } else if mantissa <= 2.0 + 1e-6 {
        2.0
    } else if mantissa <= 5.0 + 1e-6 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// The largest of 1, 2 or 5 times a power of ten that is at most `raw`.
fn nice_step_down(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let base = 10f64.powf(raw.log10().floor());
    let mantissa = raw / base;
    let nice = if mantissa >= 5.0 - 1e-6 {
        5.0
    } else if mantissa >= 2.0 - 1e-6 {
        2.0
    } else {
        1.0
    };
    nice * base
}

/// The number of decimals a multiple of `step` needs (steps are 1, 2 or 5 times 10^e).
fn step_decimals(step: f64) -> i32 {
    // The tolerance stops a step such as 0.099999994 (0.1 as f32) from counting as 0.0999.
    -((step.abs().log10() + 1e-3).floor() as i32)
}

fn round_to_step(v: f64, step: f64) -> f64 {
    let decimals = step_decimals(step).clamp(0, 15);
    let scale = 10f64.powi(decimals);
    (v * scale).round() / scale
}

/// Labels for evenly spaced ticks, all with the decimals their spacing needs.
fn format_ticks(ticks: &[f32]) -> Vec<String> {
    let step = match ticks {
        [a, b, ..] => f64::from(*b) - f64::from(*a),
        [a] if *a != 0.0 => f64::from(a.abs()),
        _ => 1.0,
    };
    let largest = ticks.iter().fold(0.0_f32, |m, t| m.max(t.abs()));
    let scientific = step < 1e-3 || largest >= 1e5;
    let decimals = step_decimals(step).max(0) as usize;
    ticks
        .iter()
        .map(|&t| {
            if scientific {
                if t == 0.0 {
                    "0".to_owned()
                } else {
                    format!("{t:e}")
                }
            } else {
                format!("{t:.decimals$}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::ABS_MAX_FLOOR;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(Scale::unit().ticks(5), vec![0.0, 0.5, 1.0]);
        assert_eq!(Scale::unit().ticks(11).len(), 11);
        assert_eq!(
            Scale::sequential(0.0, 0.3).ticks(4),
            vec![0.0, 0.1, 0.2, 0.3]
        );
        assert_eq!(Scale::diverging(3.7).ticks(5), vec![-2.0, 0.0, 2.0]);
        assert_eq!(
            Scale::diverging(4.0).ticks(5),
            vec![-4.0, -2.0, 0.0, 2.0, 4.0]
        );
        for n in 0..12 {
            for scale in [
                Scale::unit(),
                Scale::diverging(ABS_MAX_FLOOR),
                Scale::sequential(1e5, 3e5),
            ] {
                let ticks = scale.ticks(n);
                let (lo, hi) = scale.range();
                assert!(
                    !ticks.is_empty() && ticks.len() <= n.max(2),
                    "{scale:?} n={n}: {ticks:?}"
                );
                let slack = (hi - lo) * 1e-4;
                assert!(ticks.iter().all(|t| *t >= lo - slack && *t <= hi + slack));
            }
        }
    }

    #[test]
    fn tick_labels_share_their_decimals() {
        let labels = |s: Scale, n| {
            s.tick_labels(n)
                .into_iter()
                .map(|t| t.1)
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(Scale::unit(), 3), ["0.0", "0.5", "1.0"]);
        assert_eq!(
            labels(Scale::sequential(0.0, 0.02), 3),
            ["0.00", "0.01", "0.02"]
        );
        assert_eq!(labels(Scale::sequential(0.0, 20.0), 3), ["0", "10", "20"]);
        assert_eq!(
            labels(Scale::diverging(ABS_MAX_FLOOR), 3),
            ["-1e-6", "0", "1e-6"]
        );
        assert!(!labels(Scale::diverging(1.0), 5)
            .iter()
            .any(|l| l.starts_with("-0") && l.trim_start_matches(['-', '0', '.']).is_empty()));
    }
}
