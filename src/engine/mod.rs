//! The engine: every attention mechanism of DESIGN.md sections 1 to 4 and 7, one sentence at a
//! time.
//!
//! The engine works on `ndarray` values in `f32` and knows nothing of JSON, text, drawing or
//! the browser (it never imports `web_sys`). Each mechanism lives in its own module and exposes
//! its intermediate maps as typed values, so the page can cache one stage and recompute only
//! the stages after it (moving the shift slider does not recompute `A`).
//!
//! Shapes follow the crate conventions: sequences `(tokens, width)`, stacks of per-head maps
//! `(heads, queries, keys)`, weights `[out, in]` as in PyTorch's `nn.Linear`.

pub mod bilstm;
pub mod block;
pub mod cosine;
pub mod diff_transformer;
pub mod diff_transformer_v2;
pub mod error;
pub mod gated_attention;
pub mod head_shape;
pub mod head_stats;
pub mod hierarchical;
pub mod input_diff;
pub mod kernels;
pub mod layout;
pub mod local;
pub mod mask;
pub mod mechanism;
pub mod numeric;
pub mod params;
pub mod project;
pub mod projection;
pub mod run;
pub mod shift_diff;
pub mod softmax;
pub mod stage;
pub mod standard;
pub mod steps;

pub use error::EngineError;
pub use head_shape::{HeadShape, ScoreRule};
pub use head_stats::{head_stats, HeadStats};
pub use layout::{Frequencies, Layout, Pairing, QkNorm, Rope, RopeLayout};
pub use mask::Mask;
pub use mechanism::{Mechanism, MechanismKind, Parameter};
pub use projection::{Biases, OutputGateWeights, Projected, Weights};
pub use run::{run, Stages};
pub use stage::{Columns, ScaleGroup, ScaleKind, StageId};
pub use steps::{
    apply_lambda, base_maps_into, lambda_table, mix_into, output, output_gate_table,
    shift_stages_into, BaseMaps, Block, Projection,
};
