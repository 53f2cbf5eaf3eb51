//! Which head of one model draws the map most like another model's: the compare view puts
//! separately trained models side by side, and their head numbers mean nothing across them, so
//! each is shown at its head whose map is closest to the explorer's shown one.

use super::Explorer;
use crate::engine::{EngineError, StageId};

/// The head of a model closest to a reference map, and how close every head is.
#[derive(Clone, Debug, PartialEq)]
pub struct Closest {
    /// The closest head, from 0.
    pub head: usize,
    /// Each head's cosine with the reference (the two maps as vectors), in head order.
    pub cosines: Vec<f32>,
}

/// The cosine of two maps as vectors: 0 when either is all zeros. Accumulated in `f64`.
///
/// ```
/// use diffattn::explorer::cosine;
/// assert_eq!(cosine(&[1.0, 0.0], &[2.0, 0.0]), 1.0);
/// assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
/// assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
/// ```
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut aa, mut bb) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 || !dot.is_finite() {
        return 0.0;
    }
    (dot / (aa.sqrt() * bb.sqrt())) as f32
}

impl Explorer {
    /// The head whose map of `stage` is closest to `reference` (a map of the same shape, row
    /// by row), computing every head first; `None` when the maps have another shape (another
    /// sentence or key count) or the sentence is empty.
    pub fn closest_head(
        &mut self,
        stage: StageId,
        reference: &[f32],
    ) -> Result<Option<Closest>, EngineError> {
        self.compute_all()?;
        let heads = self.settings().maps.heads;
        let mut cosines = Vec::with_capacity(heads);
        for head in 0..heads {
            let Some(map) = self.head_map(stage, head) else {
                return Ok(None);
            };
            if map.len() != reference.len() || map.is_empty() {
                return Ok(None);
            }
            let values: Vec<f32> = map.iter().copied().collect();
            cosines.push(cosine(&values, reference));
        }
        let head = cosines
            .iter()
            .enumerate()
            .fold((0, f32::NEG_INFINITY), |best, (h, &c)| {
                if c > best.1 {
                    (h, c)
                } else {
                    best
                }
            })
            .0;
        Ok((!cosines.is_empty()).then_some(Closest { head, cosines }))
    }
}
