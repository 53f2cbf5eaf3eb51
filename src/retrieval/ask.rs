//! One question put to a retrieval model, as the command line and the page put it: the text
//! tokenized, the question read, the forward pass, the measure, and what the model cannot read
//! (tokens outside its vocabulary, above all a key of the question).

use super::forward::{Retrieval, RetrievalModel};
use super::measure::Measure;
use super::task::Layout;
use crate::engine::{EngineError, Mechanism};
use crate::text::limits::{grouped, MAX_TOKENS};
use crate::text::tokenize_up_to;

/// What a model says about one text.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The tokens of the text.
    pub tokens: Vec<String>,
    /// The tokens outside the vocabulary (read as `<unk>`), each once, in order.
    pub unknown: Vec<String>,
    /// The question's noun and name that are outside the vocabulary: the model reads such a
    /// key as `<unk>`, like every other unknown word, so it cannot tell it from them.
    pub unknown_keys: Vec<String>,
    /// The roles of the tokens: `None` when the text does not end with
    /// `What is the NOUN of NAME?`.
    pub layout: Option<Layout>,
    /// Every layer's mechanism as the forward pass ran it (the trained one, or with the
    /// lesson's moved shift or λ).
    pub mechanisms: Vec<Mechanism>,
    /// The forward pass.
    pub retrieval: Retrieval,
    /// The measure of every layer, when the text has a question.
    pub measure: Option<Measure>,
}

impl Asked {
    /// The number the context states for the question's key (its last fact), if any.
    pub fn expected(&self) -> Option<u8> {
        self.layout.as_ref().and_then(Layout::expected)
    }
}

/// Puts `text` to `model`: an error only when the text has no tokens.
pub fn ask(model: &RetrievalModel, text: &str) -> Result<Asked, EngineError> {
    let trained: Vec<Mechanism> = model.layers.iter().map(|l| l.mechanism.clone()).collect();
    ask_with(model, text, &trained)
}

/// [`ask`] with other mechanism parameters per layer (the lesson's moved shift or λ, from
/// [`super::knobs::Knobs::mechanisms`]); the weights stay the trained ones.
pub fn ask_with(
    model: &RetrievalModel,
    text: &str,
    mechanisms: &[Mechanism],
) -> Result<Asked, EngineError> {
    // Every layer's maps are L × L: the limit holds before anything is allocated.
    let (tokens, total) = tokenize_up_to(text, MAX_TOKENS);
    if total > MAX_TOKENS {
        return Err(EngineError::Shape {
            field: "text",
            expected: format!(
                "at most {} tokens (diffattn::text::limits::MAX_TOKENS)",
                grouped(MAX_TOKENS)
            ),
            found: format!("{} tokens", grouped(total)),
        });
    }
    let tokens: Vec<String> = tokens.into_iter().map(|t| t.text).collect();
    let refs: Vec<&Mechanism> = mechanisms.iter().collect();
    let retrieval = model.forward_with(&tokens, &refs)?;
    let mut unknown: Vec<String> = Vec::new();
    for t in &tokens {
        if !model.knows(t) && !unknown.contains(t) {
            unknown.push(t.clone());
        }
    }
    let layout = Layout::read(&tokens);
    let unknown_keys = layout
        .as_ref()
        .map(|l| {
            [&l.question.key.noun, &l.question.key.name]
                .into_iter()
                .filter(|k| !model.knows(k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let measure = layout
        .as_ref()
        .and_then(|l| Measure::of_stages(&retrieval.stages, l));
    Ok(Asked {
        tokens,
        unknown,
        unknown_keys,
        layout,
        mechanisms: mechanisms.to_vec(),
        retrieval,
        measure,
    })
}
