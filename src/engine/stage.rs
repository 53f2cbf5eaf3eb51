//! The maps a mechanism produces, named once: which stage a map is, how a learner reads it, and
//! what kind of values it holds (which decides its colour scale).

/// One map of one head: which stage of which mechanism it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageId {
    /// The attention map `A`.
    A,
    /// `shift_{+k}(A)`.
    Shifted,
    /// `shift_{-k}(A)` (symmetric difference only).
    ShiftedBack,
    /// The difference `D`.
    D,
    /// The gate `G`.
    G,
    /// The fused map `A'`.
    Fused,
    /// The Differential Transformer's first map.
    A1,
    /// Its second map.
    A2,
    /// `A1 - lambda·A2`.
    Diff,
    /// Hierarchical attention's weight on the tokens of the own segment.
    Local,
    /// Hierarchical attention's weight on the other segments' summaries, `(queries, segments)`.
    Segments,
}

/// Which stages may share one colour scale when the page shows them side by side: attention
/// maps (`A`, `shift(A)`, `A′`, `A1`, `A2`, `A1 − λA2`) with each other, differences (`D`) with
/// each other, and the gate on its own fixed scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScaleGroup {
    /// Attention weights, before or after a shift, a gate or a difference of two maps.
    Attention,
    /// The difference `D`.
    Difference,
    /// The gate `G`, always within 0 to 1.
    Gate,
}

/// What kind of values a stage holds, which decides how it is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    /// Non-negative weights (attention maps).
    Sequential,
    /// The gate: always within 0 to 1, so maps of different settings compare.
    Unit,
    /// Signed values, read against zero.
    Diverging,
}

impl StageId {
    /// Every stage, in display order.
    pub const ALL: [StageId; 11] = [
        StageId::A,
        StageId::Shifted,
        StageId::ShiftedBack,
        StageId::D,
        StageId::G,
        StageId::Fused,
        StageId::A1,
        StageId::A2,
        StageId::Diff,
        StageId::Local,
        StageId::Segments,
    ];

    /// The name a learner reads: `A`, `shift(A)`, `D`, `G`, `A′`, ...
    pub fn label(self) -> &'static str {
        match self {
            StageId::A => "A",
            StageId::Shifted => "shift(A)",
            StageId::ShiftedBack => "shift₋ₖ(A)",
            StageId::D => "D",
            StageId::G => "G",
            StageId::Fused => "A′",
            StageId::A1 => "A1",
            StageId::A2 => "A2",
            StageId::Diff => "A1 − λ·A2",
            StageId::Local => "local",
            StageId::Segments => "segments",
        }
    }

    /// The stages this one shares a colour scale with, when scales are shared.
    pub fn scale_group(self) -> ScaleGroup {
        match self {
            StageId::G => ScaleGroup::Gate,
            StageId::D => ScaleGroup::Difference,
            _ => ScaleGroup::Attention,
        }
    }

    /// What kind of values the stage holds.
    pub fn scale_kind(self) -> ScaleKind {
        match self {
            StageId::A
            | StageId::Shifted
            | StageId::ShiftedBack
            | StageId::A1
            | StageId::A2
            | StageId::Local
            | StageId::Segments => ScaleKind::Sequential,
            StageId::G => ScaleKind::Unit,
            StageId::D | StageId::Fused | StageId::Diff => ScaleKind::Diverging,
        }
    }
}
