//! The noise lesson on the real model (`?lesson=noise`, docs/LESSON.md, "The noise lesson on
//! the real model"): for one query token and the token it should find (the target), where each
//! of the model's heads puts the query's row, before and after a difference.
//!
//! For every layer and head, on the query's row `a` of the head's softmax map:
//!
//! ```text
//! target = a[t]          sinks = Σ_{j ∈ sinks} a[j]          other = Σ_{j ∉ sinks, j ≠ t} a[j]
//! ```
//!
//! with the sinks the model view's ([`sink_pieces`]: `[CLS]` and `[SEP]`), each also as a
//! **share of the row's absolute values** (`|a[j]| / Σ_k |a[k]|`, DESIGN.md §8), which is the
//! same on a softmax row and stays between 0 and 1 after a difference. Then the same figures
//! after two differences:
//!
//! - **a head minus λ × a partner head of the same layer**, `a − λ·b` (the Differential
//!   Transformer's `A1 − λ·A2` on heads that were never trained as a pair, as the explorer
//!   draws it with `mechanism=diff_transformer&partner=P&lambda=λ`): the partner and λ are
//!   searched ([`search_partner`]) for the difference whose target is the largest share of the
//!   row's absolute values while it keeps at least [`KEEP`] of the head's own target;
//! - **shift-difference**, `A′ = A + G ⊙ (A − shift(A))` with the explorer's default settings
//!   (shift 1, circular, the gate `σ(α·A + β·D + γ)` at its sliders' defaults), by the engine's
//!   own `shift_diff_maps` on the row.
//!
//! A what-if on a standard Transformer's heads, not what a trained Differential Transformer
//! does (docs/MINILM.md, "The honest limit"). The sums run in `f64`.

use ndarray::{Array2, Array3, ArrayView1, ArrayView2, Axis};
use serde::Serialize;

use crate::engine::mask::Mask;
use crate::engine::mechanism::MechanismKind;
use crate::engine::numeric::saturate;
use crate::engine::shift_diff::shift_diff_maps;
use crate::engine::{head_stats, run, EngineError, Mechanism};
use crate::explorer::ShiftSettings;
use crate::model::bert::Encoder;
use crate::retrieval::task::Layout;

pub use crate::engine::head_stats::sink_pieces;

/// The λ the partner search tries: 0.05, 0.10, …, 1.00.
pub const LAMBDAS: [f32; 20] = {
    let mut l = [0.0f32; 20];
    let mut i = 0;
    while i < 20 {
        l[i] = (i as f32 + 1.0) * 0.05;
        i += 1;
    }
    l
};

/// The share of its own target a difference must keep to be chosen: half.
pub const KEEP: f64 = 0.5;

/// One row's figures (see the module's header): signed, and as shares of absolute values.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct RowShares {
    /// The value on the target.
    pub target: f64,
    /// The values on the sinks, summed.
    pub sinks: f64,
    /// The values on every other key, summed.
    pub other: f64,
    /// The target's share of the row's absolute values.
    pub target_abs: f64,
    /// The sinks' share of the row's absolute values (the model view's sink mass).
    pub sinks_abs: f64,
    /// The other keys' share of the row's absolute values.
    pub other_abs: f64,
}

impl RowShares {
    /// The figures of `row` for the target key `target` and the sink keys `sinks` (the target
    /// is not one of them). The sinks' figures are the model view's: [`head_stats`] on the row.
    pub fn of(row: ArrayView1<f32>, target: usize, sinks: &[usize]) -> RowShares {
        let whole: f64 = row.iter().map(|&v| f64::from(v).abs()).sum();
        let signed: f64 = row.iter().map(|&v| f64::from(v)).sum();
        let stats = head_stats(row.insert_axis(Axis(0)), Mask::FULL, 0, sinks, false);
        let (sinks_signed, sinks_abs) = stats
            .map(|s| (f64::from(s.signed_sink), f64::from(s.sink)))
            .unwrap_or_default();
        let t = row.get(target).map_or(0.0, |&v| f64::from(v));
        let target_abs = if whole > 0.0 { t.abs() / whole } else { 0.0 };
        RowShares {
            target: t,
            sinks: sinks_signed,
            other: signed - t - sinks_signed,
            target_abs,
            sinks_abs,
            other_abs: if whole > 0.0 {
                (1.0 - target_abs - sinks_abs).max(0.0)
            } else {
                0.0
            },
        }
    }

    /// The mean of `all`, figure by figure.
    pub fn mean(all: &[RowShares]) -> RowShares {
        let n = all.len().max(1) as f64;
        let of = |f: fn(&RowShares) -> f64| all.iter().map(f).sum::<f64>() / n;
        RowShares {
            target: of(|s| s.target),
            sinks: of(|s| s.sinks),
            other: of(|s| s.other),
            target_abs: of(|s| s.target_abs),
            sinks_abs: of(|s| s.sinks_abs),
            other_abs: of(|s| s.other_abs),
        }
    }
}

/// The difference chosen for a head: `a − λ·b` with `b` the row of the partner head.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Partner {
    /// The partner head (from 0, in the same layer).
    pub head: usize,
    /// λ.
    pub lambda: f32,
    /// The difference's figures.
    pub shares: RowShares,
}

/// One head's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadNoise {
    /// The layer (from 0).
    pub layer: usize,
    /// The head (from 0).
    pub head: usize,
    /// The head's own row.
    pub before: RowShares,
    /// The best difference with a partner head, if one keeps the target and raises its share
    /// of the row's absolute values.
    pub difference: Option<Partner>,
    /// After shift-difference.
    pub shift: RowShares,
    /// Where the explorer draws each figure's maps.
    pub links: Links,
}

/// The explorer's settings that draw one bar's maps (the page links each bar to them, with the
/// model and the text): the layer and head from 1, as the address counts them; for the
/// difference the partner (from 1) and λ (to two places).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MapsLink {
    /// The explorer's mechanism.
    pub mechanism: &'static str,
    /// The model's heads per layer (the heads the explorer splits the layer into).
    pub heads: usize,
    /// The layer, from 1.
    pub layer: usize,
    /// The head, from 1.
    pub head: usize,
    /// The partner head, from 1 (the difference only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partner: Option<usize>,
    /// λ (the difference only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
}

/// The three bars' maps in the explorer: the head as it is (standard attention), the head minus
/// λ × its partner (the Differential Transformer's `A1 − λ·A2`; the head as it is when no
/// partner was chosen), shift-difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Links {
    /// The head's own map.
    pub before: MapsLink,
    /// `A1 − λ·A2`.
    pub difference: MapsLink,
    /// `A′ = A + G ⊙ D`.
    pub shift: MapsLink,
}

impl Links {
    fn of(layer: usize, head: usize, heads: usize, partner: Option<&Partner>) -> Links {
        let link = |kind: MechanismKind| MapsLink {
            mechanism: kind.key(),
            heads,
            layer: layer + 1,
            head: head + 1,
            partner: None,
            lambda: None,
        };
        Links {
            before: link(MechanismKind::Standard),
            difference: match partner {
                Some(p) => MapsLink {
                    partner: Some(p.head + 1),
                    lambda: Some((f64::from(p.lambda) * 100.0).round() / 100.0),
                    ..link(MechanismKind::DiffTransformer)
                },
                None => link(MechanismKind::Standard),
            },
            shift: link(MechanismKind::ShiftDiff),
        }
    }
}

/// The lesson's figures for one query and target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseLesson {
    /// The query's and the target's key (from 0).
    pub query: usize,
    /// The target key.
    pub target: usize,
    /// The sink keys.
    pub sinks: Vec<usize>,
    /// Every layer's heads, layer by layer.
    pub heads: Vec<HeadNoise>,
    /// The means over every head and layer (the paper's average): before, after the
    /// difference (a head with no partner chosen counts as it is), after shift-difference.
    pub mean_before: RowShares,
    /// See `mean_before`.
    pub mean_difference: RowShares,
    /// See `mean_before`.
    pub mean_shift: RowShares,
}

/// `a − λ·b`, cell by cell, as the engine computes `A1 − λ·A2` (the explorer draws the same
/// bits).
fn difference(a: ArrayView1<f32>, b: ArrayView1<f32>, lambda: f32) -> Vec<f32> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| saturate(x - lambda * y))
        .collect()
}

/// The target's signed value over the row's absolute values: what the search raises.
fn score(s: &RowShares) -> f64 {
    if s.target_abs == 0.0 {
        0.0
    } else {
        s.target_abs * s.target.signum()
    }
}

/// The partner (another head of the layer, `rows` being each head's row) and λ ([`LAMBDAS`])
/// whose difference `rows[head] − λ·rows[partner]` has the highest [`score`] while it keeps at
/// least [`KEEP`] of the head's target; `None` when none beats the head alone. Ties go to the
/// lower head, then the smaller λ.
pub fn search_partner(
    rows: ArrayView2<f32>,
    head: usize,
    target: usize,
    sinks: &[usize],
) -> Option<Partner> {
    let a = rows.row(head);
    let before = RowShares::of(a, target, sinks);
    let mut best: Option<(f64, Partner)> = None;
    for (p, b) in rows.outer_iter().enumerate() {
        if p == head {
            continue;
        }
        for lambda in LAMBDAS {
            let d = difference(a, b, lambda);
            let shares = RowShares::of(ArrayView1::from(&d), target, sinks);
            if shares.target < KEEP * before.target {
                continue;
            }
            let s = score(&shares);
            if s > score(&before) && best.as_ref().is_none_or(|(b, _)| s > *b) {
                best = Some((
                    s,
                    Partner {
                        head: p,
                        lambda,
                        shares,
                    },
                ));
            }
        }
    }
    best.map(|(_, p)| p)
}

/// The lesson's figures from `rows[layer]`, each `(heads, keys)`: the query's row of every
/// head of that layer (softmax rows of the model). `query` is kept for the page; `target` must
/// be a key that is not a sink.
pub fn noise_lesson(
    rows: &[Array2<f32>],
    query: usize,
    target: usize,
    sinks: &[usize],
) -> Result<NoiseLesson, EngineError> {
    let keys = rows.first().map_or(0, |r| r.ncols());
    if target >= keys || sinks.contains(&target) {
        return Err(EngineError::Shape {
            field: "target",
            expected: format!("a key below {keys} that is not [CLS] or [SEP]"),
            found: target.to_string(),
        });
    }
    let shift = ShiftSettings::default();
    let mut heads = Vec::new();
    for (layer, r) in rows.iter().enumerate() {
        let n = r.nrows();
        let stacked: Array3<f32> = r.clone().insert_axis(Axis(1));
        let params = shift.params(shift.uniform_gate(n));
        let fused = shift_diff_maps(&stacked, &params, Mask::FULL)?.fused;
        for head in 0..n {
            let difference = search_partner(r.view(), head, target, sinks);
            heads.push(HeadNoise {
                layer,
                head,
                before: RowShares::of(r.row(head), target, sinks),
                difference,
                shift: RowShares::of(fused.index_axis(Axis(0), head).row(0), target, sinks),
                links: Links::of(layer, head, n, difference.as_ref()),
            });
        }
    }
    let mean = |f: &dyn Fn(&HeadNoise) -> RowShares| {
        RowShares::mean(&heads.iter().map(f).collect::<Vec<_>>())
    };
    Ok(NoiseLesson {
        query,
        target,
        sinks: sinks.to_vec(),
        mean_before: mean(&|h| h.before),
        mean_difference: mean(&|h| h.difference.map_or(h.before, |p| p.shares)),
        mean_shift: mean(&|h| h.shift),
        heads,
    })
}

/// The query's row (`query`, from 0) of every head of every layer, `(heads, keys)` per layer,
/// from the vectors entering each layer that `encoder` computed (`Encoder::work` up to the last
/// layer): the model's own maps, by the engine's standard attention (bit for bit the maps the
/// explorer draws, docs/MINILM.md). `None` until every layer's input is in, or for a query
/// past the text.
pub fn query_rows(
    encoder: &Encoder,
    query: usize,
) -> Option<Result<Vec<Array2<f32>>, EngineError>> {
    let bert = encoder.bert();
    let layers = bert.config().layers;
    let inputs: Vec<_> = (0..layers)
        .map(|l| encoder.input(l))
        .collect::<Option<_>>()?;
    if query >= inputs.first()?.nrows() {
        return None;
    }
    Some(
        inputs
            .iter()
            .enumerate()
            .map(|(l, x)| {
                let stages = run(
                    x.view(),
                    encoder.attention(l),
                    bert.heads(),
                    false,
                    &Mechanism::Standard,
                )?;
                Ok(stages.final_maps().index_axis(Axis(1), query).to_owned())
            })
            .collect(),
    )
}

/// What the page proposes for `pieces` (the model's word pieces, `[CLS]` … `[SEP]`): in a
/// retrieval text (the facts `the NOUN of NAME is N .` and the question `what is the NOUN of
/// NAME ?` at the end, `retrieval::task`), the question mark and the answer's number; else the
/// first pronoun whose sentence has a noun before it, and that noun: the first word after `the`,
/// `a` or `an` in the pronoun's sentence (its subject, the usual antecedent). `(query, target)`,
/// or `None`.
pub fn propose<S: AsRef<str>>(pieces: &[S]) -> Option<(usize, usize)> {
    let n = pieces.len();
    let inner = pieces.get(1..n.saturating_sub(1))?;
    if let Some(layout) = Layout::read(inner) {
        if let Some(&answer) = layout.answer_tokens().last() {
            return Some((layout.question.last + 1, answer + 1));
        }
    }
    const DETERMINERS: [&str; 3] = ["the", "a", "an"];
    const PRONOUNS: [&str; 9] = [
        "it", "he", "she", "they", "him", "her", "them", "its", "their",
    ];
    const ENDS: [&str; 3] = [".", "!", "?"];
    let word = |i: usize| pieces[i].as_ref();
    (1..n)
        .filter(|&p| PRONOUNS.contains(&word(p)))
        .find_map(|p| {
            let start = (1..p)
                .rev()
                .find(|&i| ENDS.contains(&word(i)))
                .map_or(1, |i| i + 1);
            (start..p.saturating_sub(1))
                .find(|&i| DETERMINERS.contains(&word(i)) && !word(i + 1).starts_with("##"))
                .map(|i| (p, i + 1))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn a_softmax_row_s_shares_are_its_values_and_their_shares_of_absolute_values_agree() {
        // Keys: [CLS] the animal it [SEP]; target "animal" (2), sinks 0 and 4.
        // Row 0.1, 0.2, 0.5, 0.1, 0.1: target 0.5, sinks 0.2, other 0.3, the same as shares.
        let row = array![0.1f32, 0.2, 0.5, 0.1, 0.1];
        let s = RowShares::of(row.view(), 2, &[0, 4]);
        for (got, want) in [
            (s.target, 0.5),
            (s.sinks, 0.2),
            (s.other, 0.3),
            (s.target_abs, 0.5),
            (s.sinks_abs, 0.2),
            (s.other_abs, 0.3),
        ] {
            assert!((got - want).abs() < 1e-6, "{s:?}");
        }
    }

    #[test]
    fn a_difference_s_negative_cells_count_signed_and_as_magnitudes() {
        // Row -0.2, 0.1, 0.4, -0.1, 0.2 (|.| sums to 1.0): target 0.4; sinks -0.2 + 0.2 = 0
        // signed and 0.4 of the magnitudes; other 0.1 - 0.1 = 0 signed, 0.2 of them.
        let row = array![-0.2f32, 0.1, 0.4, -0.1, 0.2];
        let s = RowShares::of(row.view(), 2, &[0, 4]);
        assert!(
            (s.target - 0.4).abs() < 1e-6 && (s.target_abs - 0.4).abs() < 1e-6,
            "{s:?}"
        );
        assert!(
            s.sinks.abs() < 1e-6 && (s.sinks_abs - 0.4).abs() < 1e-6,
            "{s:?}"
        );
        assert!(
            s.other.abs() < 1e-6 && (s.other_abs - 0.2).abs() < 1e-6,
            "{s:?}"
        );
    }

    #[test]
    fn the_search_picks_the_partner_that_shares_the_noise_and_the_lambda_that_cancels_it() {
        // Three heads over keys [CLS] x target [SEP]:
        //   head 0: 0.4, 0.0, 0.5, 0.1   (0.5 on the sinks, 0.5 on the target)
        //   head 1: 0.8, 0.0, 0.0, 0.2   (all on the sinks: the noise head 0 shares)
        //   head 2: 0.0, 0.5, 0.5, 0.0   (on the target and x)
        // Head 0 − λ·head 1 = 0.4 − 0.8λ, 0, 0.5, 0.1 − 0.2λ: the sinks vanish at λ = 0.5, where
        // the target is the whole row (score 1). Head 2 takes target mass away: never better.
        let rows = array![
            [0.4f32, 0.0, 0.5, 0.1],
            [0.8, 0.0, 0.0, 0.2],
            [0.0, 0.5, 0.5, 0.0]
        ];
        let p = search_partner(rows.view(), 0, 2, &[0, 3]).unwrap();
        assert_eq!((p.head, p.lambda), (1, 0.5));
        assert!((p.shares.target - 0.5).abs() < 1e-6 && (p.shares.target_abs - 1.0).abs() < 1e-6);
        assert!(
            p.shares.sinks.abs() < 1e-6 && p.shares.sinks_abs < 1e-6,
            "{p:?}"
        );
        // Head 1 has nothing on the target: every difference makes it negative, none is chosen.
        let none = search_partner(rows.view(), 1, 2, &[0, 3]);
        assert!(
            none.is_none(),
            "head 1 has nothing on the target to keep: {none:?}"
        );
    }

    #[test]
    fn shift_difference_is_the_engine_s_on_the_query_row() {
        // One layer of one head, row 0.1, 0.2, 0.6, 0.1 (circular shift 1: 0.1, 0.1, 0.2, 0.6;
        // D = 0.0, 0.1, 0.4, -0.5), the default gate σ(4·D): target 0.6 + σ(1.6)·0.4.
        let rows = vec![array![[0.1f32, 0.2, 0.6, 0.1]]];
        let lesson = noise_lesson(&rows, 1, 2, &[0, 3]).unwrap();
        let gate = 1.0 / (1.0 + (-1.6f64).exp());
        let want = 0.6 + gate * 0.4;
        assert!(
            (lesson.heads[0].shift.target - want).abs() < 1e-5,
            "{:?}",
            lesson.heads[0]
        );
        // The bars' maps in the explorer: layer and head from 1.
        let links = lesson.heads[0].links;
        assert_eq!(
            (links.shift.layer, links.shift.head, links.shift.heads),
            (1, 1, 1)
        );
        assert_eq!(links.shift.mechanism, "shift_diff");
        // A sink cannot be the target.
        assert!(noise_lesson(&rows, 1, 0, &[0, 3]).is_err());
    }

    #[test]
    fn the_page_proposes_a_pronoun_s_antecedent_and_a_retrieval_answer() {
        let pieces: Vec<&str> =
            "[CLS] the animal didn ' t cross the street because it was too tired . [SEP]"
                .split(' ')
                .collect();
        assert_eq!(propose(&pieces), Some((10, 2)));
        let pieces: Vec<&str> =
            "[CLS] the room of anna is 42 . it rained . what is the room of anna ? [SEP]"
                .split(' ')
                .collect();
        assert_eq!(propose(&pieces), Some((17, 6)));
        // The noun is the pronoun's sentence's.
        let pieces: Vec<&str> =
            "[CLS] the film was long . the dog chased a cat until it slept . [SEP]"
                .split(' ')
                .collect();
        assert_eq!(propose(&pieces), Some((12, 7)));
        assert_eq!(propose(&["[CLS]", "hello", "[SEP]"]), None);
    }
}
