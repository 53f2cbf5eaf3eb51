//! Which keys a query may attend to: the causal mask and the local window (DESIGN.md §1, §4).

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
}
