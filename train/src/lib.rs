//! diffattn-train: trains the sentiment classifiers whose attention maps the diffattn page
//! draws, one per mechanism, on English and Chinese reviews (docs/MODEL.md).
//!
//! * [`data`]: the reviews of `.data/` (from `scripts/fetch-data`), the fixed hash split, the
//!   vocabulary, length-bucketed batches.
//! * [`net`]: the classifier in candle, the same forward pass as `diffattn::engine`.
//! * [`train`]: AdamW, best validation epoch, accuracy and F1.
//! * [`baseline`]: logistic regression on bags of words.
//! * [`run`]: the `train` and `experiment` commands.
//! * [`retrieval`]: the retrieval lesson's models, training and experiment (docs/LESSON.md).
//! * [`maps`]: the figures of docs/MODEL.md, drawn by the page's renderer.

pub mod baseline;
pub mod data;
pub mod maps;
pub mod net;
pub mod retrieval;
pub mod run;
pub mod train;
