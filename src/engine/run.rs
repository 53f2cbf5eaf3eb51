//! One attention layer in one call: the staged steps of [`crate::engine::steps`] in a row over
//! the whole stack, and every intermediate they give, typed by mechanism ([`Stages`]). What the
//! command line, the spec files and the tests run; the page runs the steps themselves, in
//! pieces.

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::diff_transformer::DiffTransformerMaps;
use super::diff_transformer_v2::DiffTransformerV2Maps;
use super::error::EngineError;
use super::gated_attention;
use super::head_shape::HeadShape;
use super::hierarchical::HierarchicalMaps;
use super::mechanism::Mechanism;
use super::projection::Weights;
use super::shift_diff::ShiftDiffMaps;
use super::steps::{
    base_maps_into, mix_into, output, shift_stages_into, BaseMaps, Block, Projection,
};

/// Every intermediate of one layer, typed by mechanism.
///
/// The variants differ in size (the shift stages hold six maps), but a `Stages` is made once per
/// run and never stored in bulk, so boxing would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stages {
    /// Standard, input-difference, cosine and local attention: one map per head.
    Attention {
        /// The maps `A`, `(heads, queries, keys)`; `keys = tokens - 1` for input difference.
        a: Array3<f32>,
        /// The layer output, `(tokens, d)`.
        output: Array2<f32>,
    },
    /// Shift-difference gated attention.
    ShiftDiff {
        /// The maps `A`.
        a: Array3<f32>,
        /// `shift(A)`, `D`, `G` and `A'`.
        maps: ShiftDiffMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// The Differential Transformer.
    DiffTransformer {
        /// `A1`, `A2`, lambda and `A1 - lambda·A2`.
        maps: DiffTransformerMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// Differential Transformer V2.
    DiffTransformerV2 {
        /// `A1`, `A2`, λ per token and head, and `A1 - λ·A2`.
        maps: DiffTransformerV2Maps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// Hierarchical attention.
    Hierarchical {
        /// `local`, `segments` and the token map `A`.
        maps: HierarchicalMaps,
        /// The layer output.
        output: Array2<f32>,
    },
    /// Gated attention (DESIGN.md §4.1).
    GatedAttention {
        /// The maps `A`.
        a: Array3<f32>,
        /// The output gate `Gₒ = σ(x·W_ogᵀ + b_og)`, `(tokens, heads · d_h)`: column
        /// `h·d_h + c` is head `h`'s channel `c`.
        gate: Array2<f32>,
        /// Each head's gated output `O_h = (A_h·V_h) ⊙ Gₒ[:, h, :]` in its columns,
        /// `(tokens, heads · d_h)`: the concatenation `W_o` projects.
        gated: Array2<f32>,
        /// The head width `d_h`.
        head_dim: usize,
        /// The layer output.
        output: Array2<f32>,
    },
}

impl Stages {
    /// The layer output, `(tokens, d)`.
    pub fn output(&self) -> &Array2<f32> {
        match self {
            Stages::Attention { output, .. }
            | Stages::ShiftDiff { output, .. }
            | Stages::DiffTransformer { output, .. }
            | Stages::DiffTransformerV2 { output, .. }
            | Stages::Hierarchical { output, .. }
            | Stages::GatedAttention { output, .. } => output,
        }
    }

    /// The map each head finally mixes values with: `A`, `A'` or `A1 - lambda·A2`.
    pub fn final_maps(&self) -> &Array3<f32> {
        match self {
            Stages::Attention { a, .. } | Stages::GatedAttention { a, .. } => a,
            Stages::ShiftDiff { maps, .. } => &maps.fused,
            Stages::DiffTransformer { maps, .. } => &maps.diff,
            Stages::DiffTransformerV2 { maps, .. } => &maps.diff,
            Stages::Hierarchical { maps, .. } => &maps.a,
        }
    }
}

/// Runs one attention layer over the sequence `x` (`(tokens, d)`) and returns every stage: the
/// staged steps of this module in a row.
///
/// `heads` re-splits the same projections; it must divide `d` (`d / 2` for the Differential
/// Transformer). Errors name the spec field at fault; nothing panics on bad sizes.
///
/// ```
/// use diffattn::engine::{run, Mechanism, Stages, Weights};
/// use ndarray::{array, Array2};
/// let eye = Array2::<f32>::eye(2);
/// let w = Weights::new(eye.clone(), eye.clone(), eye.clone(), eye).unwrap();
/// // Identical tokens give identical scores: each of the 3 rows is uniform over 3 keys.
/// let x = array![[1.0f32, 0.0], [1.0, 0.0], [1.0, 0.0]];
/// let stages = run(x.view(), &w, 2, false, &Mechanism::Standard).unwrap();
/// let Stages::Attention { a, .. } = stages else { unreachable!() };
/// assert!(a.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-6));
/// ```
pub fn run(
    x: ArrayView2<f32>,
    weights: &Weights,
    heads: usize,
    causal: bool,
    mechanism: &Mechanism,
) -> Result<Stages, EngineError> {
    weights.check_input(x)?;
    let projection = Projection::new(mechanism.kind(), x, weights, heads)?;
    let block = Block::all(heads, x.nrows());
    let mut base = BaseMaps::default();
    base_maps_into(
        mechanism,
        &projection,
        weights,
        heads,
        causal,
        &block,
        &mut base,
    )?;
    let mut shift = ShiftDiffMaps::empty();
    let has_shift = shift_stages_into(mechanism, &base, causal, &block, &mut shift)?;
    let finals = match (&base, has_shift) {
        (_, true) => &shift.fused,
        (BaseMaps::Attention(a), false) => a,
        (BaseMaps::DiffTransformer(m), false) => &m.diff,
        (BaseMaps::DiffTransformerV2(m), false) => &m.diff,
        (BaseMaps::Hierarchical(m), false) => &m.a,
    };
    if *mechanism == Mechanism::GatedAttention {
        let BaseMaps::Attention(a) = base else {
            unreachable!("gated attention's maps are one map per head")
        };
        let head_dim = HeadShape::resolve(mechanism.kind(), weights, heads)?.head_dim;
        let mut gated = Array2::zeros((0, 0));
        mix_into(
            mechanism,
            &projection,
            weights,
            heads,
            0..heads,
            &|h| a.index_axis(Axis(0), h),
            &mut gated,
        )?;
        let gate = gated_attention::gate(projection.gate_logits(), heads * head_dim)?;
        let output = weights.out(gated.view());
        return Ok(Stages::GatedAttention {
            a,
            gate,
            gated,
            head_dim,
            output,
        });
    }
    let output = output(mechanism, &projection, weights, heads, &|h| {
        finals.index_axis(Axis(0), h)
    })?;
    Ok(match base {
        BaseMaps::DiffTransformer(maps) => Stages::DiffTransformer { maps, output },
        BaseMaps::DiffTransformerV2(maps) => Stages::DiffTransformerV2 { maps, output },
        BaseMaps::Hierarchical(maps) => Stages::Hierarchical { maps, output },
        BaseMaps::Attention(a) if has_shift => Stages::ShiftDiff {
            a,
            maps: shift,
            output,
        },
        BaseMaps::Attention(a) => Stages::Attention { a, output },
    })
}
