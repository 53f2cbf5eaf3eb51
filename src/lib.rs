//! diffattn: differential attention, every stage, computed in Rust and drawn live in the browser.
//!
//! The crate is layered so that each layer only looks down:
//!
//! * [`engine`]: the maths of `docs/DESIGN.md` sections 1 to 5 on `ndarray`, `f32`,
//!   one sentence at a time. It knows nothing of JSON, text, drawing or the browser.
//! * [`names`]: one name per thing: the strings of every enum, shared by the spec, the weights
//!   format, the wasm boundary and the page, with suggestions for near misses.
//! * [`spec`]: the stages format (DESIGN.md section 6): a JSON spec parsed and validated into
//!   engine values, and the engine's stages written back as JSON. Shared by the CLI and the page.
//! * [`text`]: sentences to vectors: the tokenizer and the seeded (untrained) embeddings.
//! * [`model`]: an embedding plus one layer's weights: the untrained seeded model, or a trained
//!   sentiment classifier loaded from a weights file (docs/MODEL.md).
//! * [`retrieval`]: the retrieval lesson: the task read from tokens, attention on the answer
//!   against noise, and the multi-layer retrieval models on the engine (docs/LESSON.md).
//! * [`schema`]: every setting and page key declared once (kind, range, default, symbol, cache
//!   layer, control); the engine's typed settings and the generated JavaScript, TypeScript and
//!   Python tables come from it.
//! * [`explorer`]: the page's state without the browser: sentence, controls, cached stages.
//! * [`pretrained`]: a pretrained BERT beside the explorer, natively ([`pretrained::Feed`]): the
//!   model runs apart from the explorer and hands it what one layer needs, as the page's model
//!   module does.
//! * [`render`]: heatmaps on any plotters backend (canvas in the browser, SVG for export and
//!   tests) plus the per-cell RGBA buffers the page blits.
//! * [`bench`](mod@bench): the engine's own timing of one full layer, stage by stage (`diffattn bench`
//!   natively, `bench_engine` in wasm), with the caller's clock.
//!
//! The library has no `#[wasm_bindgen]`: the page's wasm module is the crate `diffattn-web`
//! (`web/`), a thin boundary over it, and the pretrained model's code ships in a module of its
//! own (`web-pretrained/`), fetched with the model's weights.
//!
//! Conventions, once for the whole crate:
//!
//! * A map's row is a query token and its column a key token: `a[[i, j]]` is how much query
//!   `i` attends to key `j`.
//! * Stacks of per-head maps have shape `(heads, queries, keys)`; sequences of vectors have
//!   shape `(tokens, width)`.
//! * Weights follow PyTorch's `nn.Linear`: shape `[out, in]` and `y = x · Wᵀ`.
//! * Everything is `f32`; no NaN or infinity ever leaves the engine.

pub mod bench;
pub mod engine;
pub mod explorer;
pub mod model;
pub mod names;
pub mod pretrained;
pub mod render;
pub mod retrieval;
pub mod schema;
pub mod spec;
pub mod text;
