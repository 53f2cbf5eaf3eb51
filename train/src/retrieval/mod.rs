//! The retrieval lesson's models (docs/LESSON.md): the task's data and generator, the candle
//! models, training, and the experiment that measures attention on the answer against noise.
//!
//! * [`data`]: names, nouns, fillers, their split, the vocabulary, the seeded generator.
//! * [`net`]: the models in candle, the forward pass of `diffattn::retrieval::forward`.
//! * [`fit`]: training and scoring.
//! * [`experiment`]: the `train-retrieval` and `experiment-retrieval` commands.

pub mod data;
pub mod experiment;
pub mod fit;
pub mod net;
pub mod report;
