//! The retrieval lesson (docs/LESSON.md): does differential attention cancel attention noise?
//!
//! * [`task`]: the task's text read back from tokens: the facts `The NOUN of NAME is N.`, the
//!   question `What is the NOUN of NAME?` at the end, which tokens are the answer.
//! * [`measure`]: the one definition of attention on the answer and on the noise, per layer,
//!   from the engine's final maps (`A`, `A′`, `A1 − λ·A2`).
//! * [`ask`](mod@ask): one text put to a model: tokens, the question, the answer, the measure, and the
//!   words (the question's keys above all) outside the vocabulary.
//! * [`forward`]: the multi-layer retrieval models on the engine: a frozen token table,
//!   positions, causal layers with residual connections, a read-out over the numbers 0 to 99.
//! * [`knobs`]: what the lesson lets a person move (a layer's shift or λ), and the mechanisms
//!   with the moved values.
//! * [`specs`]: a model over one text as one stages spec per layer (what enters each layer's
//!   attention), the layers of a multi-layer file for the model view.
//!
//! Pure Rust over the engine's stages: no JSON, no drawing, no browser, so the command line,
//! the page and the experiment share every number (the specs are the spec module's values;
//! `crate::spec::layers_json` writes them).

pub mod ask;
pub mod forward;
pub mod knobs;
pub mod measure;
pub mod specs;
pub mod task;

pub use ask::{ask, ask_with, Asked};
pub use forward::{Layer, Retrieval, RetrievalError, RetrievalModel};
pub use knobs::{Knob, KnobKind, Knobs};
pub use measure::{Measure, Shares};
pub use specs::layer_specs;
pub use task::{Fact, Key, Layout, Question};
