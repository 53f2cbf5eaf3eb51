//! Which keys a query may attend to: the causal mask and the local window (DESIGN.md §1, §4).

use std::ops::Range;

/// The attention mask `M` of DESIGN.md §1: a cell is either allowed (`M = 0`) or masked
/// (`M = -inf`). Masked cells get weight exactly 0 after the softmax.
///
/// Positions are token indices. A mechanism whose keys are not tokens places them first: in
/// input-difference attention key `j` is the step into token `j + 1`, so it sits at
/// position `j + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mask {
    /// Forbid keys after the query (`key > query`).
    pub causal: bool,
    /// Forbid keys further than this many positions from the query (local attention's radius
    /// `w`: 0 keeps only the query itself).
    pub window: Option<usize>,
}

impl Mask {
    /// No masking at all.
    pub const FULL: Mask = Mask {
        causal: false,
        window: None,
    };

    /// A mask that is causal or not, with no window.
    pub fn causal(causal: bool) -> Mask {
        Mask {
            causal,
            window: None,
        }
    }

    /// Whether the query at position `query` may attend to the key at position `key`.
    ///
    /// ```
    /// use diffattn::engine::Mask;
    /// let m = Mask { causal: true, window: Some(1) };
    /// assert!(m.allows(3, 3) && m.allows(3, 2));
    /// assert!(!m.allows(3, 4)); // the future
    /// assert!(!m.allows(3, 1)); // too far
    /// ```
    #[inline]
    pub fn allows(&self, query: usize, key: usize) -> bool {
        (!self.causal || key <= query) && self.window.is_none_or(|w| query.abs_diff(key) <= w)
    }

    /// The keys `0..keys` that the query at position `query` may attend to, when key `j` sits
    /// at position `j + key_offset`: always one contiguous range (possibly empty), since the
    /// causal mask cuts off a suffix and the window keeps an interval. The softmax works on
    /// this range alone instead of asking [`Mask::allows`] for every cell.
    ///
    /// ```
    /// use diffattn::engine::Mask;
    /// let m = Mask { causal: true, window: Some(1) };
    /// assert_eq!(m.allowed_keys(3, 0, 6), 2..4);
    /// assert_eq!(Mask::causal(true).allowed_keys(0, 1, 4), 0..0); // input difference, query 0
    /// assert_eq!(Mask::FULL.allowed_keys(9, 0, 6), 0..6);
    /// ```
    pub fn allowed_keys(&self, query: usize, key_offset: usize, keys: usize) -> Range<usize> {
        // In positions: keys sit at key_offset..key_offset + keys.
        let mut lo = key_offset;
        let mut hi = key_offset.saturating_add(keys);
        if self.causal {
            hi = hi.min(query.saturating_add(1));
        }
        if let Some(w) = self.window {
            lo = lo.max(query.saturating_sub(w));
            hi = hi.min(query.saturating_add(w).saturating_add(1));
        }
        if lo >= hi {
            return 0..0;
        }
        lo - key_offset..hi - key_offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_keys_is_exactly_the_cells_allows_admits() {
        for causal in [false, true] {
            for window in [None, Some(0), Some(1), Some(3), Some(usize::MAX)] {
                let mask = Mask { causal, window };
                for key_offset in [0, 1, 2] {
                    for keys in 0..7 {
                        for query in 0..9 {
                            let range = mask.allowed_keys(query, key_offset, keys);
                            for j in 0..keys {
                                assert_eq!(
                                    range.contains(&j),
                                    mask.allows(query, j + key_offset),
                                    "{mask:?} offset {key_offset} keys {keys} query {query} key {j}"
                                );
                            }
                            assert!(range.end <= keys);
                        }
                    }
                }
            }
        }
    }
}
