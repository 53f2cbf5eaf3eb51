//! Local attention (DESIGN.md §4): standard attention where query `i` sees only keys with
//! `|i - j| <= w`. A radius of 0 keeps only the token itself; `w >= L - 1` is full attention.
//! The maps are standard attention's ([`super::standard::maps_into`]) under this mask.

use super::mask::Mask;

/// The mask of local attention with radius `window`, causal or not.
///
/// ```
/// use diffattn::engine::local;
/// // Radius 0: each token attends only to itself.
/// let m = local::mask(false, 0);
/// assert!(m.allows(2, 2) && !m.allows(2, 1) && !m.allows(2, 3));
/// ```
pub fn mask(causal: bool, window: usize) -> Mask {
    Mask {
        causal,
        window: Some(window),
    }
}
