//! The pretrained model beside the explorer, natively: [`Feed`] drives a BERT
//! ([`Encoder`]: the text cut into word pieces, the forward pass in pieces, the similarity to a
//! second sentence) and hands the explorer what one layer needs, exactly as the page does with
//! the model's own wasm module (www/explorer/pretrained.js, `PretrainedFeed`, over
//! `web-pretrained/`): the word pieces, then the vectors entering the layer drawn and its
//! attention weights when the explorer asks ([`Explorer::pretrained_need`]), the explorer's
//! own pieces, and for a second sentence the similarity computed from the explorer's layer
//! output ([`Explorer::similarity_need`]). The explorer never holds the model, so the page's
//! module carries none of its code; the CLI and the tests (`tests/minilm.rs`) take this path.

pub mod noise;

use std::sync::Arc;

use crate::engine::EngineError;
use crate::explorer::{Explorer, Need, PretrainedModel, Similarity, TokensInfo};
use crate::model::bert::{Bert, Encoder};

/// A BERT feeding one explorer (see the module's header).
#[derive(Debug, Clone)]
pub struct Feed {
    encoder: Encoder,
}

impl Feed {
    /// A feed of `bert`, attached to no explorer yet.
    pub fn new(bert: Arc<Bert>) -> Feed {
        Feed {
            encoder: Encoder::new(bert),
        }
    }

    /// What the explorer knows of the model: its name and sizes.
    pub fn model(&self) -> PretrainedModel {
        let bert = self.encoder.bert();
        PretrainedModel {
            name: bert.name().to_string(),
            layers: bert.config().layers,
            heads: bert.heads(),
            d_model: bert.config().d_model,
        }
    }

    /// The encoder: the model and what it computed for the text.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Makes the model draw `ex`'s sentence (`Explorer::set_pretrained`), cut into its word
    /// pieces.
    pub fn attach(&mut self, ex: &mut Explorer) -> TokensInfo {
        ex.set_pretrained(self.model());
        let text = ex.text().to_string();
        self.set_text(ex, &text)
    }

    /// The explorer's sentence, cut into the model's word pieces (`Explorer::set_text` for an
    /// explorer the model does not draw).
    pub fn set_text(&mut self, ex: &mut Explorer, text: &str) -> TokensInfo {
        if !ex.is_pretrained() {
            return ex.set_text(text);
        }
        let pieces = self.encoder.set_text(text);
        ex.set_pretrained_text(
            text,
            TokensInfo {
                tokens: pieces.pieces,
                total: pieces.total,
                truncated: pieces.truncated,
            },
        )
    }

    /// One piece of work toward `need`, the model's first: a piece of the forward pass toward
    /// the layer the explorer waits for, or that layer handed over; else one of the explorer's
    /// pieces; then, for every head, a piece of the similarity or the similarity handed back.
    /// False when there is none left.
    pub fn work(&mut self, ex: &mut Explorer, need: Need) -> Result<bool, EngineError> {
        if self.feed_layer(ex)? {
            return Ok(true);
        }
        if ex.work(need)? {
            return Ok(true);
        }
        Ok(need == Need::Every && self.similarity_piece(ex))
    }

    /// One piece of the forward pass toward the layer the explorer waits for, or the layer
    /// handed over once it is in; false when the explorer waits for nothing.
    pub fn feed_layer(&mut self, ex: &mut Explorer) -> Result<bool, EngineError> {
        let Some(need) = ex.pretrained_need() else {
            return Ok(false);
        };
        if self.encoder.work(need.layer) {
            return Ok(true);
        }
        let input = self
            .encoder
            .input(need.layer)
            .expect("the encoder has the explorer's word pieces")
            .clone();
        let weights = need
            .weights
            .then(|| self.encoder.attention(need.layer).clone());
        ex.set_pretrained_layer(need.layer, input, weights)?;
        Ok(true)
    }

    /// One piece of the similarity the explorer asks for, or the similarity handed back once
    /// it is in; false when it asks for none.
    pub fn similarity_piece(&mut self, ex: &mut Explorer) -> bool {
        let Some(need) = ex.similarity_need() else {
            return false;
        };
        self.encoder
            .compare(need.layer, need.output.view(), need.other);
        if self.encoder.similarity_piece() {
            return true;
        }
        let Some(s) = self.encoder.similarity() else {
            return false;
        };
        ex.set_similarity(Similarity {
            model: s.model,
            mechanism: s.mechanism,
        });
        true
    }

    /// Brings the shown head up to date, the model's layers first (`Explorer::compute`).
    pub fn compute(&mut self, ex: &mut Explorer) -> Result<(), EngineError> {
        while self.work(ex, Need::Shown)? {}
        Ok(())
    }

    /// Brings every head, the layer output and the similarity up to date
    /// (`Explorer::compute_all`).
    pub fn compute_all(&mut self, ex: &mut Explorer) -> Result<(), EngineError> {
        while self.work(ex, Need::Every)? {}
        Ok(())
    }

    /// How many of the model's layers were run so far (nothing is computed twice).
    pub fn model_layers(&self) -> u64 {
        self.encoder.model_layers()
    }
}
