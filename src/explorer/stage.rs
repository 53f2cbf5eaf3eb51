//! The maps the page can show, with their names, formulas and colour scales.

use ndarray::ArrayView2;

use crate::render::Scale;

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
}

/// How a stage's values are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    /// Non-negative weights: 0 to the map's maximum.
    Sequential,
    /// The gate: fixed 0 to 1, so maps of different settings compare.
    Unit,
    /// Signed values, zero-centred.
    Diverging,
}

impl StageId {
    /// Every stage, in display order.
    pub const ALL: [StageId; 9] = [
        StageId::A,
        StageId::Shifted,
        StageId::ShiftedBack,
        StageId::D,
        StageId::G,
        StageId::Fused,
        StageId::A1,
        StageId::A2,
        StageId::Diff,
    ];

    /// The key used in the stages JSON and by the page (`"a"`, `"shifted"`, ...).
    pub fn key(self) -> &'static str {
        match self {
            StageId::A => "a",
            StageId::Shifted => "shifted",
            StageId::ShiftedBack => "shifted_back",
            StageId::D => "d",
            StageId::G => "g",
            StageId::Fused => "fused",
            StageId::A1 => "a1",
            StageId::A2 => "a2",
            StageId::Diff => "diff",
        }
    }

    /// The stage for a key, if there is one.
    pub fn from_key(key: &str) -> Option<StageId> {
        StageId::ALL.into_iter().find(|s| s.key() == key)
    }

    /// The name a learner reads: `A`, `shift(A)`, `D`, `G`, `A′`, ...
    pub fn name(self) -> &'static str {
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
        }
    }

    /// How the stage is computed, in the notation of DESIGN.md.
    pub fn formula(self, symmetric: bool, softmax: bool) -> &'static str {
        match (self, symmetric, softmax) {
            (StageId::A, ..) => "A = softmax(QKᵀ/√dₕ + M)",
            (StageId::Shifted, ..) => "shift(A)[i, j] = A[i, j − k]",
            (StageId::ShiftedBack, ..) => "shift₋ₖ(A)[i, j] = A[i, j + k]",
            (StageId::D, false, _) => "D = A − shift(A)",
            (StageId::D, true, _) => "D = shift₋ₖ(A) − shiftₖ(A)",
            (StageId::G, ..) => "G = σ(α·A + β·D + γ)",
            (StageId::Fused, _, false) => "A′ = A + G ⊙ D",
            (StageId::Fused, _, true) => "A′ = softmax(A + G ⊙ D)",
            (StageId::A1, ..) => "A1 = softmax(Q₁K₁ᵀ/√dₕ + M)",
            (StageId::A2, ..) => "A2 = softmax(Q₂K₂ᵀ/√dₕ + M)",
            (StageId::Diff, ..) => "A1 − λ·A2",
        }
    }

    /// How the stage is coloured.
    pub fn scale_kind(self) -> ScaleKind {
        match self {
            StageId::A | StageId::Shifted | StageId::ShiftedBack | StageId::A1 | StageId::A2 => {
                ScaleKind::Sequential
            }
            StageId::G => ScaleKind::Unit,
            StageId::D | StageId::Fused | StageId::Diff => ScaleKind::Diverging,
        }
    }

    /// The colour scale for one map of this stage.
    pub fn scale(self, map: ArrayView2<f32>) -> Scale {
        match self.scale_kind() {
            ScaleKind::Sequential => Scale::sequential_for(map),
            ScaleKind::Unit => Scale::unit(),
            ScaleKind::Diverging => Scale::diverging_for(map),
        }
    }
}
