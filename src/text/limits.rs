//! The limits of one request, and the memory budget they are derived from.
//!
//! A request is one spec run by `diffattn stages` (or opened on the page), or one sentence
//! through a model's forward pass. Its cost has a quadratic part, the maps (`heads × queries ×
//! keys` cells each), and a linear part, the weights and the `tokens × d` matrices around them.
//! Both are bounded before anything of that size is allocated: the spec parser counts rows and
//! values as it reads them, the model loader checks every declared shape against the file, and
//! the cell count is checked before the engine runs.
//!
//! The derivation, for a budget of [`MEMORY_BUDGET_BYTES`] = 1 GiB of `f32` arrays per request:
//!
//! - **Maps.** The engine holds at most [`MAX_RESIDENT_MAPS`] = 6 maps of the same size at once:
//!   shift-difference attention with the symmetric difference keeps `A`, `shift₊ₖ(A)`,
//!   `shift₋ₖ(A)`, `D`, `G` and `A′`; the Differential Transformer keeps the softmax of its
//!   `2H` query heads (two maps' worth), `A1`, `A2`, the temporary `λ·A2` and `A1 − λ·A2`.
//!   Three quarters of the budget, 768 MiB, go to maps, so one map may have
//!   768 MiB / (6 × 4 bytes) = 2²⁵ = [`MAX_MAP_CELLS`] = 33,554,432 cells (128 MiB).
//! - **Tokens.** [`MAX_TOKENS`] = 2,048, the longest sentence of the speed issue; at that
//!   length 2²⁵ cells are 2,048 × 2,048 × 8 heads, so eight heads fit at the longest sentence
//!   (sixteen heads fit up to 1,448 tokens).
//! - **Width.** The remaining quarter, 256 MiB, holds the linear part: four `d × d` weights and
//!   about six `tokens × d` matrices (`x`, `Q`, `K`, `V`, the concatenated heads, the output).
//!   [`MAX_D_MODEL`] = 2,048 needs 4 × 2,048² × 4 bytes = 64 MiB of weights and
//!   6 × 2,048 × 2,048 × 4 bytes = 96 MiB of matrices at the longest sentence: 160 MiB. Twice
//!   that width would need 448 MiB, over the quarter.
//! - **Input.** A spec or a weights file is read up to [`MAX_INPUT_BYTES`] = 1 GiB; the largest
//!   spec within the limits above (about 21 million numbers) is about half of that in JSON. A
//!   text to classify is read up to [`MAX_TEXT_BYTES`] = 16 MiB, since the tokenizer holds the
//!   word it is reading at 24 bytes per character. Whatever is read beyond a limit is refused,
//!   not buffered.
//!
//! Measured peak resident memory at the limits is in docs/RELIABILITY.md.
//!
//! The page draws at most [`PAGE_MAX_TOKENS`] tokens, the library's own [`MAX_TOKENS`]: of a
//! typed sentence (the rest is counted and the page says so), and of a spec it opens (a longer
//! `x` is refused while it is read, naming this limit). It was 512 while the page computed every
//! head of every stage for each change: a spec of 2,048 tokens and eight heads then held the
//! page's thread for 13 s to open and 3.5 s per slider move, and took 790 MB of wasm memory.
//! Now the page computes the shown head, and the other heads between frames when something
//! needs them (docs/PERFORMANCE.md, "Control to paint").

/// The budget one request's `f32` arrays are sized against (see the module documentation).
pub const MEMORY_BUDGET_BYTES: usize = 1 << 30;

/// The most maps of one size the engine holds at once (shift-difference attention with the
/// symmetric difference; the Differential Transformer).
pub const MAX_RESIDENT_MAPS: usize = 6;

/// The most cells one map may have, `heads × queries × keys`: three quarters of the budget over
/// [`MAX_RESIDENT_MAPS`] maps of 4-byte cells, 2²⁵.
pub const MAX_MAP_CELLS: usize = MEMORY_BUDGET_BYTES / 4 * 3 / (MAX_RESIDENT_MAPS * 4);

/// The most tokens in one request: the rows of a spec's `x`, the tokens a model classifies.
pub const MAX_TOKENS: usize = 2048;

/// The widest model, `d_model`: the rows and columns of every weight, the columns of `x`.
pub const MAX_D_MODEL: usize = 2048;

/// The most bytes read from one input: a spec, a text on standard input, a weights file.
pub const MAX_INPUT_BYTES: usize = 1 << 30;

/// The most bytes of text tokenized in one request. The tokenizer holds the word it is reading
/// as 24 bytes per character, so the longest possible word, the whole text, costs at most
/// 384 MiB; tokens past the ones kept are counted, not stored.
pub const MAX_TEXT_BYTES: usize = 16 << 20;

/// The most tokens the page draws, of a typed sentence or of a spec it opens: the library's
/// limit. The page's end-to-end tests and benchmarks assume it.
pub const PAGE_MAX_TOKENS: usize = MAX_TOKENS;

/// The cells of one map of `heads` heads over `queries × keys`, or `None` if the product
/// overflows `usize` (which is over every limit).
///
/// ```
/// use diffattn::text::limits::{map_cells, MAX_MAP_CELLS, MAX_TOKENS};
/// assert_eq!(map_cells(8, MAX_TOKENS, MAX_TOKENS), Some(MAX_MAP_CELLS));
/// assert_eq!(map_cells(usize::MAX, 2, 2), None);
/// ```
pub fn map_cells(heads: usize, queries: usize, keys: usize) -> Option<usize> {
    heads.checked_mul(queries)?.checked_mul(keys)
}

/// The most tokens a sentence may have for `heads` heads (keys = tokens): the largest `L` with
/// `heads × L × L ≤ MAX_MAP_CELLS`, and at most [`MAX_TOKENS`].
///
/// ```
/// use diffattn::text::limits::max_tokens_for_heads;
/// assert_eq!(max_tokens_for_heads(8), 2048);
/// // 16 × 1448² = 33,547,264 cells fit; 16 × 1449² = 33,593,616 do not.
/// assert_eq!(max_tokens_for_heads(16), 1448);
/// assert_eq!(max_tokens_for_heads(0), 2048);
/// ```
pub fn max_tokens_for_heads(heads: usize) -> usize {
    let heads = heads.max(1);
    // The integer square root of MAX_MAP_CELLS / heads, found by bisection (no float rounding).
    let (mut low, mut high) = (0usize, MAX_TOKENS);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if map_cells(heads, mid, mid).is_some_and(|c| c <= MAX_MAP_CELLS) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    low
}

// The derivation of the module documentation, checked when the crate compiles: 768 MiB over
// six maps of 4-byte cells is 2^25 cells, which is 2,048² × 8 heads; the linear part at the
// widest model and the longest sentence is 160 MiB and fits beside the maps; the page's cap is
// within the library's.
const _: () = {
    assert!(MAX_MAP_CELLS == 1 << 25);
    assert!(MAX_MAP_CELLS == MAX_TOKENS * MAX_TOKENS * 8);
    let linear_bytes = (4 * MAX_D_MODEL * MAX_D_MODEL + 6 * MAX_TOKENS * MAX_D_MODEL) * 4;
    assert!(linear_bytes == 160 << 20);
    assert!(linear_bytes + MAX_RESIDENT_MAPS * MAX_MAP_CELLS * 4 <= MEMORY_BUDGET_BYTES);
    assert!(PAGE_MAX_TOKENS <= MAX_TOKENS);
};

/// `1234567` as `"1,234,567"`, for messages about limits.
///
/// ```
/// assert_eq!(diffattn::text::limits::grouped(33_554_432), "33,554,432");
/// ```
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(33_554_432), "33,554,432");
    }
}
