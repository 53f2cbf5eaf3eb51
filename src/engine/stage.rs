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
    /// Differential Transformer V2's λ per token (row) and head (column), `(tokens, heads)`:
    /// one table for every head.
    Lambda,
    /// Gated attention's output gate, its mean over each head's channels per token (row) and
    /// head (column), `(tokens, heads)`: one table for every head (DESIGN.md §4.1).
    OutputGate,
}

/// What the columns of a stage's map are. Most maps have one column per key; the page
/// translates a key into the column of the others, so one hovered cell lights up the same
/// key everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Columns {
    /// One column per key.
    Keys,
    /// One column per segment (hierarchical attention): key `j` is in column `⌊j / s⌋`.
    Segments,
    /// One column per head (V2's λ, gated attention's output gate): the shown head's column
    /// belongs to every key.
    Heads,
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
    /// V2's λ, a weight per token and head rather than an attention map.
    Lambda,
    /// Gated attention's output gate `Gₒ`, within 0 to 1, a weight on values rather than on keys.
    OutputGate,
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
    pub const ALL: [StageId; 13] = [
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
        StageId::Lambda,
        StageId::OutputGate,
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
            StageId::Lambda => "λ",
            StageId::OutputGate => "mean Gₒ",
        }
    }

    /// What the map's columns are: keys, segments or heads.
    pub fn columns(self) -> Columns {
        match self {
            StageId::Segments => Columns::Segments,
            StageId::Lambda | StageId::OutputGate => Columns::Heads,
            _ => Columns::Keys,
        }
    }

    /// Whether the stage is one map shared by every head (V2's λ table, gated attention's
    /// output gate table) rather than one per head.
    pub fn shared_by_heads(self) -> bool {
        matches!(self, StageId::Lambda | StageId::OutputGate)
    }

    /// Whether each row of the stage's map is one softmax over the keys, which a learned sink
    /// (DESIGN.md §7.9) joins and takes its share of: `A`, and the Differential Transformers'
    /// `A1` and `A2` (each with its own query head's sink). The maps made from them (`shift(A)`,
    /// `D`, `A′`, `A1 − λ·A2`) are not softmax rows, and the mechanisms with other maps take no
    /// sinks.
    pub fn takes_sink(self) -> bool {
        matches!(self, StageId::A | StageId::A1 | StageId::A2)
    }

    /// The stages this one shares a colour scale with, when scales are shared.
    pub fn scale_group(self) -> ScaleGroup {
        match self {
            StageId::G => ScaleGroup::Gate,
            StageId::D => ScaleGroup::Difference,
            StageId::Lambda => ScaleGroup::Lambda,
            StageId::OutputGate => ScaleGroup::OutputGate,
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
            | StageId::Segments
            | StageId::Lambda => ScaleKind::Sequential,
            StageId::G | StageId::OutputGate => ScaleKind::Unit,
            StageId::D | StageId::Fused | StageId::Diff => ScaleKind::Diverging,
        }
    }
}
