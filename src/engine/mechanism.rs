//! The registry of mechanisms; the one way to run them is in [`crate::engine::steps`].
//!
//! [`MechanismKind`] is the list of mechanisms and everything the rest of the crate needs to
//! know about each one without running it: its name, its stages, the map each head finally
//! mixes values with, the parameters it takes, how its keys sit for the mask, and the formula
//! of each stage. [`Mechanism`] is a kind with its parameter values. A layer runs in three
//! staged steps whose results a caller can cache separately, because each depends on fewer
//! settings than the next:
//!
//! 1. [`Projection::new`](crate::engine::Projection::new): `Q`, `K`, `V` from the sentence (the tokens, or for input difference
//!    the steps between them), rotated when the layer has rotary positions;
//! 2. [`base_maps_into`](crate::engine::base_maps_into): the maps before any shift (`A`, or `A1`, `A2` and `A1 − λA2`);
//! 3. [`shift_stages_into`](crate::engine::shift_stages_into): `shift(A)`, `D`, `G`, `A′`, for the mechanisms that have them;
//!
//! and [`output`](crate::engine::output) mixes the values with the final map. Steps 2 and 3
//! run over a [`Block`](crate::engine::Block) of the stack (some heads, some query rows; the
//! whole stack is a block), so a caller can spread one layer over many short steps.
//! [`run`](crate::engine::run) is the steps in a row over the whole stack.
//!
//! Adding a mechanism means a module of its own, a variant here (with its entries in the
//! `impl MechanismKind` tables), its arm in `steps::base_maps_into`, and its name in `crate::names`.
//!
//! Every mechanism runs over a head layout ([`HeadShape`](crate::engine::HeadShape), DESIGN.md §7.1): the plain one of
//! §1–§6, where `heads` re-splits square projections, or a real layer's (head width, key/value
//! heads, biases, rotary positions), fixed by its weights.

use super::mask::Mask;
use super::params::{DiffTransformerParams, Difference, ShiftDiffParams};
use super::stage::StageId;

/// Which mechanism, without its parameter values: the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MechanismKind {
    /// Shift-difference gated attention (DESIGN.md §2), the mechanism the project is about.
    #[default]
    ShiftDiff,
    /// Scaled dot-product attention (§1).
    Standard,
    /// The published Differential Transformer (§3).
    DiffTransformer,
    /// Queries from tokens, keys and values from the steps between them (§4).
    InputDiff,
    /// Cosine-similarity scores times a temperature (§4).
    Cosine,
    /// Attention within a window around each token (§4).
    Local,
    /// Differential Transformer V2: λ per token and head (§7.5).
    DiffTransformerV2,
    /// Local attention within segments and attention over segment summaries (§7.6).
    Hierarchical,
    /// Standard attention whose heads' outputs are multiplied by the output gate
    /// `σ(x·W_ogᵀ + b_og)` before `W_o` (§4.1).
    GatedAttention,
}

/// A parameter a mechanism takes beyond the number of heads and the causal mask. Each is one
/// control on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parameter {
    /// The shift `k`.
    Shift,
    /// Single or symmetric difference.
    Difference,
    /// What fills the cells a shift uncovers.
    Fill,
    /// Whether `A′` is renormalised.
    Renormalize,
    /// The gate's `α`, `β`, `γ`.
    Gate,
    /// Cosine attention's temperature `τ`.
    Tau,
    /// Local attention's radius `w`.
    Window,
    /// Hierarchical attention's segment size `s`.
    Segment,
    /// The Differential Transformers' λ, fixed by a slider in place of the learned one.
    Lambda,
    /// The Differential Transformer's softmax temperature `T` (both maps' scores over `T`).
    Temperature,
}

impl Parameter {
    /// Whether the parameter shapes the stages after the maps (the shift stages) rather than
    /// the maps themselves: a change then clears only those stages.
    pub fn after_maps(self) -> bool {
        matches!(
            self,
            Parameter::Shift
                | Parameter::Difference
                | Parameter::Fill
                | Parameter::Renormalize
                | Parameter::Gate
                | Parameter::Lambda
        )
    }
}

const SHIFT_PARAMETERS: [Parameter; 5] = [
    Parameter::Shift,
    Parameter::Difference,
    Parameter::Fill,
    Parameter::Renormalize,
    Parameter::Gate,
];

impl MechanismKind {
    /// Every mechanism, in the order the page lists them: the stages format, the CLI and the
    /// page know the same ones, and each ships a trained model (`weights/`).
    pub const ALL: [MechanismKind; 9] = [
        MechanismKind::ShiftDiff,
        MechanismKind::Standard,
        MechanismKind::DiffTransformer,
        MechanismKind::InputDiff,
        MechanismKind::Cosine,
        MechanismKind::Local,
        MechanismKind::DiffTransformerV2,
        MechanismKind::Hierarchical,
        MechanismKind::GatedAttention,
    ];

    /// The name in the stages format, the weights format, the page and its address.
    pub fn key(self) -> &'static str {
        match self {
            MechanismKind::Standard => "standard",
            MechanismKind::ShiftDiff => "shift_diff",
            MechanismKind::DiffTransformer => "diff_transformer",
            MechanismKind::InputDiff => "input_diff",
            MechanismKind::Cosine => "cosine",
            MechanismKind::Local => "local",
            MechanismKind::DiffTransformerV2 => "diff_transformer_v2",
            MechanismKind::Hierarchical => "hierarchical",
            MechanismKind::GatedAttention => "gated_attention",
        }
    }

    /// The maps the mechanism shows for one head, in order (the symmetric difference adds
    /// `shift₋ₖ(A)`).
    pub fn stages(self, difference: Difference) -> Vec<StageId> {
        match self {
            MechanismKind::ShiftDiff => {
                let mut stages = vec![StageId::A, StageId::Shifted];
                if difference == Difference::Symmetric {
                    stages.push(StageId::ShiftedBack);
                }
                stages.extend([StageId::D, StageId::G, StageId::Fused]);
                stages
            }
            MechanismKind::DiffTransformer => vec![StageId::A1, StageId::A2, StageId::Diff],
            MechanismKind::DiffTransformerV2 => {
                vec![StageId::A1, StageId::A2, StageId::Lambda, StageId::Diff]
            }
            MechanismKind::Hierarchical => vec![StageId::Local, StageId::Segments, StageId::A],
            MechanismKind::GatedAttention => vec![StageId::A, StageId::OutputGate],
            MechanismKind::Standard
            | MechanismKind::InputDiff
            | MechanismKind::Cosine
            | MechanismKind::Local => vec![StageId::A],
        }
    }

    /// The map each head finally mixes values with.
    pub fn final_stage(self) -> StageId {
        match self {
            MechanismKind::ShiftDiff => StageId::Fused,
            MechanismKind::DiffTransformer | MechanismKind::DiffTransformerV2 => StageId::Diff,
            _ => StageId::A,
        }
    }

    /// The parameters the mechanism takes beyond heads and the causal mask.
    pub fn parameters(self) -> &'static [Parameter] {
        match self {
            MechanismKind::ShiftDiff => &SHIFT_PARAMETERS,
            MechanismKind::Cosine => &[Parameter::Tau],
            MechanismKind::Local => &[Parameter::Window],
            MechanismKind::Hierarchical => &[Parameter::Segment],
            MechanismKind::DiffTransformer => &[Parameter::Lambda, Parameter::Temperature],
            MechanismKind::DiffTransformerV2 => &[Parameter::Lambda],
            MechanismKind::Standard | MechanismKind::InputDiff | MechanismKind::GatedAttention => {
                &[]
            }
        }
    }

    /// Whether the mechanism takes `parameter`.
    pub fn takes(self, parameter: Parameter) -> bool {
        self.parameters().contains(&parameter)
    }

    /// How many query heads of the projection make one head of the mechanism: 2 for both
    /// Differential Transformers (two maps per diff head), else 1. In the plain layout the head
    /// count must divide `d / query_heads_per_head()`.
    pub fn query_heads_per_head(self) -> usize {
        match self {
            MechanismKind::DiffTransformer | MechanismKind::DiffTransformerV2 => 2,
            _ => 1,
        }
    }

    /// Whether the mechanism's scores are the scaled dot product `q·k`, which a captured layer's
    /// scale, soft cap, learned sinks and relative bias change (DESIGN.md §7.9): every mechanism
    /// but cosine attention (τ over normalised vectors), input difference (keys are steps) and
    /// hierarchical attention (scores over segment summaries too), which have scores of their
    /// own and take none of them.
    pub fn scores_by_dot_product(self) -> bool {
        !matches!(
            self,
            MechanismKind::Cosine | MechanismKind::InputDiff | MechanismKind::Hierarchical
        )
    }

    /// Whether λ is one per token and head (V2's `σ(x·W_λ)`) rather than one per layer.
    pub fn lambda_per_token(self) -> bool {
        self == MechanismKind::DiffTransformerV2
    }

    /// The width the heads slider splits into heads in the plain layout (§1–§6): `d / 2` for
    /// the Differential Transformer (each diff head has two query heads of `d / 2H`), `d` for
    /// the others (V2's query heads are `d / H` wide, its `w_q` has `2d` rows).
    pub fn plain_split_width(self, d_model: usize) -> usize {
        match self {
            MechanismKind::DiffTransformer => d_model / 2,
            _ => d_model,
        }
    }

    /// Where the keys sit for the mask: key `j` is at position `j + key_offset()` (input
    /// difference: key `j` is the step into token `j + 1`).
    pub fn key_offset(self) -> usize {
        match self {
            MechanismKind::InputDiff => 1,
            _ => 0,
        }
    }

    /// Whether keys and values come from the steps between tokens rather than the tokens.
    pub fn projects_steps(self) -> bool {
        self == MechanismKind::InputDiff
    }

    /// The mask of the mechanism's maps: causal or not, and local attention's window.
    pub fn mask(self, causal: bool, window: usize) -> Mask {
        match self {
            MechanismKind::Local => super::local::mask(causal, window),
            _ => Mask::causal(causal),
        }
    }

    /// How a stage of this mechanism is computed, in the notation of DESIGN.md.
    pub fn formula(self, stage: StageId, symmetric: bool, softmax: bool) -> &'static str {
        match (self, stage) {
            (MechanismKind::InputDiff, StageId::A) => "A = softmax(Q·K_Δᵀ/√dₕ + M), Δ = xⱼ₊₁ − xⱼ",
            (MechanismKind::Cosine, StageId::A) => "A = softmax(τ·Q̂K̂ᵀ + M)",
            (MechanismKind::Local, StageId::A) => "A = softmax(QKᵀ/√dₕ + M), |i − j| ≤ w",
            (MechanismKind::Hierarchical, StageId::A) => "Aᵢⱼ = localᵢⱼ + segmentsᵢ,σ(j) / |σ(j)|",
            (_, StageId::A) => "A = softmax(QKᵀ/√dₕ + M)",
            (_, StageId::Shifted) => "shift(A)[i, j] = A[i, j − k]",
            (_, StageId::ShiftedBack) => "shift₋ₖ(A)[i, j] = A[i, j + k]",
            (_, StageId::D) if symmetric => "D = shift₋ₖ(A) − shiftₖ(A)",
            (_, StageId::D) => "D = A − shift(A)",
            (_, StageId::G) => "G = σ(α·A + β·D + γ)",
            (_, StageId::Fused) if softmax => "A′ = softmax(A + G ⊙ D)",
            (_, StageId::Fused) => "A′ = A + G ⊙ D",
            (MechanismKind::DiffTransformer, StageId::A1) => "A1 = softmax(Q₁K₁ᵀ/(T·√dₕ) + M)",
            (MechanismKind::DiffTransformer, StageId::A2) => "A2 = softmax(Q₂K₂ᵀ/(T·√dₕ) + M)",
            (_, StageId::A1) => "A1 = softmax(Q₁K₁ᵀ/√dₕ + M)",
            (_, StageId::A2) => "A2 = softmax(Q₂K₂ᵀ/√dₕ + M)",
            (MechanismKind::DiffTransformerV2, StageId::Diff) => "A1 − λᵢ·A2, λᵢ = σ(xᵢ·W_λ)",
            (_, StageId::Diff) => "A1 − λ·A2",
            (_, StageId::Local) => "softmax over own-segment keys and other segments' means",
            (_, StageId::Segments) => "weight on segment m's mean key K̄ₘ",
            (_, StageId::Lambda) => "λᵢₕ = σ(xᵢ·W_λ,ₕ)",
            (_, StageId::OutputGate) => {
                "mean_c Gₒ[i, h, c], Gₒ = σ(x·W_ogᵀ + b_og), Oₕ = (AₕVₕ) ⊙ Gₒ"
            }
        }
    }
}

/// An attention mechanism and the parameters only it has (DESIGN.md §1 to §4).
#[derive(Debug, Clone, PartialEq)]
pub enum Mechanism {
    /// Scaled dot-product attention (§1).
    Standard,
    /// Shift-difference gated attention (§2).
    ShiftDiff(ShiftDiffParams),
    /// The published Differential Transformer (§3); `heads` counts diff heads.
    DiffTransformer(DiffTransformerParams),
    /// Queries from tokens, keys and values from the steps between them (§4).
    InputDiff,
    /// Cosine-similarity scores times a temperature `tau` (§4).
    Cosine {
        /// The temperature.
        tau: f32,
    },
    /// Attention within a window of radius `window` around each token (§4).
    Local {
        /// The radius `w`.
        window: usize,
    },
    /// Differential Transformer V2 (§7.5); its `W_λ` is in the weights.
    DiffTransformerV2 {
        /// λ itself for every token and head, in place of `σ(x·W_λᵀ)` (the page's slider).
        lambda: Option<f32>,
    },
    /// Hierarchical attention with segments of `segment` tokens (§7.6).
    Hierarchical {
        /// The segment size `s`.
        segment: usize,
    },
    /// Gated attention (§4.1); its output gate `W_og` is in the weights.
    GatedAttention,
}

impl Mechanism {
    /// The kind of this mechanism.
    pub fn kind(&self) -> MechanismKind {
        match self {
            Mechanism::Standard => MechanismKind::Standard,
            Mechanism::ShiftDiff(_) => MechanismKind::ShiftDiff,
            Mechanism::DiffTransformer(_) => MechanismKind::DiffTransformer,
            Mechanism::InputDiff => MechanismKind::InputDiff,
            Mechanism::Cosine { .. } => MechanismKind::Cosine,
            Mechanism::Local { .. } => MechanismKind::Local,
            Mechanism::DiffTransformerV2 { .. } => MechanismKind::DiffTransformerV2,
            Mechanism::Hierarchical { .. } => MechanismKind::Hierarchical,
            Mechanism::GatedAttention => MechanismKind::GatedAttention,
        }
    }

    /// The name used in the stages format (`"shift_diff"`, ...).
    pub fn name(&self) -> &'static str {
        self.kind().key()
    }

    /// The mask of this mechanism's maps.
    pub fn mask(&self, causal: bool) -> Mask {
        let window = match self {
            Mechanism::Local { window } => *window,
            _ => 0,
        };
        self.kind().mask(causal, window)
    }
}
