//! What one head does, in four numbers (DESIGN.md §8, "Head statistics"): how spread its rows
//! are (the mean row entropy, in nats), how much of each row goes to the sink tokens (the
//! first token, or a BERT's `[CLS]` and `[SEP]`), and how much to the token just before and
//! just after the query (the previous- and next-token scores). The model view sorts and
//! colours every layer's heads by them.
//!
//! A map's rows are queries and its columns keys; the cells the mask forbids are left out.
//! A softmax map is a distribution per row, and the figures are read on it as it is. A map
//! after a difference (`A1 − λ·A2`, `A′`, `D`) can be negative, and its rows need not sum
//! to 1, so each figure is given twice:
//!
//! - on the **absolute values**, each row made a distribution (`p_ij = |a_ij| / Σ_j |a_ij|`):
//!   the entropy, and the share of the row's magnitude at the sinks, the previous and the next
//!   token ([`HeadStats`]'s `entropy`, `sink`, `previous`, `next`);
//! - on the **signed values** as they are (`signed_sink`, `signed_previous`, `signed_next`):
//!   the mean over rows of `Σ_{j ∈ sinks} a_ij`, `a_{i,i−1}` and `a_{i,i+1}`, which is what the
//!   difference leaves there (it can be negative: the difference took more than the first map
//!   had). The entropy has no signed form.
//!
//! On a map with no negative value whose rows sum to 1 (every softmax map), the two agree. The
//! sums run in `f64`, the logarithm the crate's portable one, so the figures are the same bits
//! natively and in wasm.

use ndarray::ArrayView2;

use super::Mask;
use crate::text::portable_math::ln;

/// The statistics of one head's map (see the module's documentation for the definitions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadStats {
    /// The mean over rows of the entropy of `|row|` made a distribution, in nats: 0 when each
    /// row is one cell, `ln n` when it is spread evenly over `n` keys.
    pub entropy: f32,
    /// The mean share of a row's magnitude on the sink keys.
    pub sink: f32,
    /// The mean share of a row's magnitude on the key just before the query (rows that have
    /// one).
    pub previous: f32,
    /// The mean share of a row's magnitude on the key just after the query (rows that have
    /// one; 0 under a causal mask).
    pub next: f32,
    /// The mean over rows of the signed values on the sink keys.
    pub signed_sink: f32,
    /// The mean over rows of the signed value on the key just before the query.
    pub signed_previous: f32,
    /// The mean over rows of the signed value on the key just after the query.
    pub signed_next: f32,
    /// Whether an allowed cell of the map is negative (the signed figures then differ).
    pub negative: bool,
    /// The rows the figures are the mean of: those with an allowed key of nonzero value.
    pub rows: usize,
}

/// Running sums of one figure over the rows that have it.
#[derive(Default, Clone, Copy)]
struct Mean {
    sum: f64,
    count: usize,
}

impl Mean {
    fn add(&mut self, value: f64) {
        self.sum += value;
        self.count += 1;
    }

    fn get(self) -> f32 {
        if self.count == 0 {
            0.0
        } else {
            (self.sum / self.count as f64) as f32
        }
    }
}

/// The sink keys of a pretrained BERT's word pieces (`labels`): where its `[CLS]` and `[SEP]`
/// are (empty when it has none). The explorer's `sink_keys` and the noise lesson read them here.
pub fn sink_pieces<S: AsRef<str>>(labels: &[S]) -> Vec<usize> {
    labels
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.as_ref(), "[CLS]" | "[SEP]"))
        .map(|(j, _)| j)
        .collect()
}

/// The statistics of `map` (rows = queries at positions `0..rows`, columns = keys, key `j` at
/// position `j + key_offset`, as [`Mask`] places them), leaving out the cells `mask` forbids;
/// `sinks` are the sink keys' columns (those past the map are ignored). The previous token of
/// query `i` is the key at position `i − 1`, the next the key at `i + 1`; a forbidden one
/// holds nothing (0). With `learned_sink` (a softmax map whose layer has learned sinks,
/// DESIGN.md §7.9), what a row lacks of 1, `1 − Σ_j a_ij`, went to the learned sink: it counts
/// as one more cell of the row, on the sinks. `None` when no row has an allowed key of nonzero
/// value (nothing to read).
pub fn head_stats(
    map: ArrayView2<'_, f32>,
    mask: Mask,
    key_offset: usize,
    sinks: &[usize],
    learned_sink: bool,
) -> Option<HeadStats> {
    let keys = map.ncols();
    let mut entropy = Mean::default();
    let (mut sink, mut previous, mut next) = (Mean::default(), Mean::default(), Mean::default());
    let (mut s_sink, mut s_previous, mut s_next) =
        (Mean::default(), Mean::default(), Mean::default());
    let mut negative = false;
    // The key index at position `p`, if the map has one there.
    let key_at = |p: usize| p.checked_sub(key_offset).filter(|&k| k < keys);
    for (i, row) in map.outer_iter().enumerate() {
        let allowed = mask.allowed_keys(i, key_offset, keys);
        let kept: f64 = allowed.clone().map(|j| f64::from(row[j].abs())).sum();
        let learned = if learned_sink {
            (1.0 - kept).max(0.0)
        } else {
            0.0
        };
        let total = kept + learned;
        if allowed.is_empty() || total == 0.0 || !total.is_finite() {
            continue;
        }
        negative |= allowed.clone().any(|j| row[j] < 0.0);
        let value = |k: usize| -> f64 {
            if allowed.contains(&k) {
                f64::from(row[k])
            } else {
                0.0
            }
        };
        let h: f64 = allowed
            .clone()
            .map(|j| f64::from(row[j].abs()) / total)
            .chain(std::iter::once(learned / total))
            .filter(|&p| p > 0.0)
            .map(|p| -p * ln(p))
            .sum();
        entropy.add(h);
        let on_sinks: f64 = sinks
            .iter()
            .filter(|&&k| k < keys)
            .map(|&k| value(k))
            .sum::<f64>()
            + learned;
        let on_sinks_abs: f64 = sinks
            .iter()
            .filter(|&&k| k < keys)
            .map(|&k| value(k).abs())
            .sum::<f64>()
            + learned;
        sink.add(on_sinks_abs / total);
        s_sink.add(on_sinks);
        if let Some(k) = i.checked_sub(1).and_then(key_at) {
            previous.add(value(k).abs() / total);
            s_previous.add(value(k));
        }
        if let Some(k) = key_at(i + 1) {
            next.add(value(k).abs() / total);
            s_next.add(value(k));
        }
    }
    (entropy.count > 0).then(|| HeadStats {
        entropy: entropy.get(),
        sink: sink.get(),
        previous: previous.get(),
        next: next.get(),
        signed_sink: s_sink.get(),
        signed_previous: s_previous.get(),
        signed_next: s_next.get(),
        negative,
        rows: entropy.count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    const EPS: f32 = 1e-6;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < EPS
    }

    #[test]
    fn a_uniform_map_has_the_entropy_ln_n_and_even_shares() {
        let map = Array2::from_elem((4, 4), 0.25f32);
        let s = head_stats(map.view(), Mask::FULL, 0, &[0], false).unwrap();
        assert!(close(s.entropy, 4f32.ln()), "{}", s.entropy);
        // Every row gives a quarter to the sink, the previous and the next key.
        assert!(close(s.sink, 0.25) && close(s.previous, 0.25) && close(s.next, 0.25));
        assert!(close(s.signed_sink, 0.25) && !s.negative);
        assert_eq!(s.rows, 4);
    }

    #[test]
    fn a_map_shifted_by_one_is_a_previous_token_head() {
        // Row 0 looks at itself (nothing before it), every other row at the token before.
        let map = array![
            [1.0f32, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ];
        let s = head_stats(map.view(), Mask::causal(true), 0, &[0], false).unwrap();
        assert!(close(s.entropy, 0.0));
        assert!(close(s.previous, 1.0) && close(s.signed_previous, 1.0));
        // Rows 0 and 1 put everything on the first token: 2 of 4 rows.
        assert!(close(s.sink, 0.5));
        // Causal: no row sees its next token.
        assert!(close(s.next, 0.0));
    }

    #[test]
    fn a_map_shifted_the_other_way_is_a_next_token_head() {
        let map = array![[0.0f32, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0],];
        let s = head_stats(map.view(), Mask::FULL, 0, &[0], false).unwrap();
        // Rows 0 and 1 have a next token and put all on it; row 2 has none.
        assert!(close(s.next, 1.0));
        // Rows 1 and 2 have a previous token (keys 0 and 1), and both hold 0 there.
        assert!(close(s.previous, 0.0));
        assert!(close(s.sink, 0.0));
    }

    #[test]
    fn masked_cells_are_left_out_even_when_they_hold_a_value() {
        // Causal 3×3; the forbidden cells hold 9, which must count nowhere.
        let map = array![[1.0f32, 9.0, 9.0], [0.5, 0.5, 9.0], [0.5, 0.25, 0.25]];
        let s = head_stats(map.view(), Mask::causal(true), 0, &[0], false).unwrap();
        // Entropies: 0, ln 2, and −(½ln½ + 2·¼ln¼) = 1.5 ln 2.
        let want = (0.0 + 2f32.ln() + 1.5 * 2f32.ln()) / 3.0;
        assert!(close(s.entropy, want), "{} vs {want}", s.entropy);
        assert!(close(s.sink, (1.0 + 0.5 + 0.5) / 3.0));
        assert!(close(s.previous, (0.5 + 0.25) / 2.0));
        assert!(close(s.next, 0.0));
    }

    #[test]
    fn several_sinks_add_up_and_sinks_past_the_map_are_ignored() {
        // [CLS] a b [SEP]: a head that looks only at [CLS] and [SEP], half each.
        let map = array![
            [0.5f32, 0.0, 0.0, 0.5],
            [0.5, 0.0, 0.0, 0.5],
            [0.25, 0.25, 0.25, 0.25],
            [0.5, 0.0, 0.0, 0.5],
        ];
        let s = head_stats(map.view(), Mask::FULL, 0, &[0, 3, 17], false).unwrap();
        assert!(close(s.sink, (1.0 + 1.0 + 0.5 + 1.0) / 4.0));
        let want = (3.0 * 2f32.ln() + 4f32.ln()) / 4.0;
        assert!(close(s.entropy, want));
    }

    #[test]
    fn a_signed_map_has_its_absolute_and_signed_figures() {
        // A difference map: row 0 = [0.6, -0.2], row 1 = [-0.5, 0.5].
        let map = array![[0.6f32, -0.2], [-0.5, 0.5]];
        let s = head_stats(map.view(), Mask::FULL, 0, &[0], false).unwrap();
        assert!(s.negative);
        // |row 0| = 0.8: shares 0.75, 0.25; |row 1| = 1: shares 0.5, 0.5.
        assert!(close(s.sink, (0.75 + 0.5) / 2.0));
        assert!(close(s.signed_sink, (0.6 - 0.5) / 2.0));
        // Previous: row 1's key 0, −0.5 (share 0.5). Next: row 0's key 1, −0.2 (share 0.25).
        assert!(close(s.previous, 0.5) && close(s.signed_previous, -0.5));
        assert!(close(s.next, 0.25) && close(s.signed_next, -0.2));
        let h0 = -(0.75f32 * 0.75f32.ln() + 0.25 * 0.25f32.ln());
        assert!(close(s.entropy, (h0 + 2f32.ln()) / 2.0));
    }

    #[test]
    fn keys_placed_after_the_queries_shift_the_previous_and_next_token() {
        // Input difference: key j sits at position j + 1, so query i's previous token (at
        // position i − 1) is key i − 2, and its next (at i + 1) is key i.
        let map = array![[0.0f32, 0.0], [1.0, 0.0], [1.0, 0.0]];
        let s = head_stats(map.view(), Mask::FULL, 1, &[0], false).unwrap();
        // Row 1's previous token is at position 0, where no key is; row 2's is key 0,
        // holding 1: the one row that has one puts all there.
        assert!(close(s.previous, 1.0));
        // Row 0 is all zeros: left out. Next: row 1's next is position 2, key 1, holding 0;
        // row 2's is position 3, past the keys.
        assert!(close(s.next, 0.0));
        assert_eq!(s.rows, 2);
    }

    #[test]
    fn a_map_of_zeros_or_fully_masked_rows_has_no_statistics() {
        let zeros = Array2::<f32>::zeros((3, 3));
        assert_eq!(head_stats(zeros.view(), Mask::FULL, 0, &[0], false), None);
        // Input difference's query 0 has no allowed key under a causal mask.
        let one = array![[5.0f32]];
        assert_eq!(
            head_stats(one.view(), Mask::causal(true), 1, &[0], false),
            None
        );
    }

    #[test]
    fn a_single_token_has_no_previous_or_next_token() {
        let one = array![[1.0f32]];
        let s = head_stats(one.view(), Mask::FULL, 0, &[0], false).unwrap();
        assert!(close(s.entropy, 0.0) && close(s.sink, 1.0));
        assert!(close(s.previous, 0.0) && close(s.next, 0.0));
    }

    #[test]
    fn a_learned_sink_takes_what_a_row_lacks_of_one_onto_the_sinks() {
        // Each row keeps 0.5 on key 1 and gives 0.5 to the learned sink: the sink mass is 1/2
        // (key 0 holds nothing), the entropy that of two halves, ln 2.
        let map = array![[0.0f32, 0.5], [0.0, 0.5]];
        let s = head_stats(map.view(), Mask::FULL, 0, &[0], true).unwrap();
        assert!(close(s.sink, 0.5) && close(s.signed_sink, 0.5), "{s:?}");
        assert!(close(s.entropy, 2f32.ln()), "{}", s.entropy);
        // Without it, the same rows read as all on key 1.
        let plain = head_stats(map.view(), Mask::FULL, 0, &[0], false).unwrap();
        assert!(close(plain.sink, 0.0) && close(plain.entropy, 0.0));
    }
}
