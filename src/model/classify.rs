//! The classifier head: how the layer output becomes one vector (`Pooling`), and the sentiment
//! it gives (`Prediction`, `Sentiment`); the trained forward pass through the engine
//! (`Model::forward`, `classify`, `classify_output`).

use ndarray::{Array1, ArrayView2, Axis};

use super::{Model, ModelError};
use crate::engine::numeric::{saturate, saturate_all, sigmoid};
use crate::engine::run;
use crate::engine::Stages;
use crate::text::limits::{max_tokens_for_heads, MAX_TOKENS};
use crate::text::Token;

/// The two classes, in the order of the classifier's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sentiment {
    /// Class 0.
    Negative,
    /// Class 1.
    Positive,
}

impl Sentiment {
    /// `"negative"` or `"positive"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Sentiment::Negative => "negative",
            Sentiment::Positive => "positive",
        }
    }
}

/// What the classifier says about one sentence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The more probable class.
    pub label: Sentiment,
    /// The probability of `label`, in `[0.5, 1]`.
    pub probability: f32,
    /// The probability of the positive class, in `[0, 1]`.
    pub positive: f32,
    /// The two logits `(negative, positive)`.
    pub logits: [f32; 2],
}

/// How the classifier reduces the layer output `(tokens, d)` to one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over tokens, `d` features.
    Mean,
    /// The mean and the maximum over tokens, concatenated: `2·d` features.
    MeanMax,
}

impl Pooling {
    /// The name in the weights file.
    pub fn name(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::MeanMax => "mean_max",
        }
    }

    /// The pooling called `name`, if any.
    pub fn from_name(name: &str) -> Option<Pooling> {
        [Pooling::Mean, Pooling::MeanMax]
            .into_iter()
            .find(|p| p.name() == name)
    }

    /// How many features it makes from a width-`d` output.
    pub fn features(self, d: usize) -> usize {
        match self {
            Pooling::Mean => d,
            Pooling::MeanMax => 2 * d,
        }
    }

    /// Pools `output` (`(tokens, d)`) into one feature vector. No tokens pool to zeros.
    ///
    /// The mean is saturated (a sum of values near `f32::MAX` overflows), so finite outputs
    /// give finite features.
    pub fn pool(self, output: ArrayView2<f32>) -> Array1<f32> {
        let d = output.ncols();
        let mut mean = output
            .mean_axis(Axis(0))
            .unwrap_or_else(|| Array1::zeros(d));
        saturate_all(&mut mean);
        match self {
            Pooling::Mean => mean,
            Pooling::MeanMax => {
                let max = if output.nrows() == 0 {
                    Array1::zeros(d)
                } else {
                    output.fold_axis(Axis(0), f32::NEG_INFINITY, |&m, &v| m.max(v))
                };
                ndarray::concatenate(Axis(0), &[mean.view(), max.view()])
                    .expect("two vectors of width d concatenate")
            }
        }
    }
}

impl Model {
    /// The most tokens [`Model::forward`] takes: [`MAX_TOKENS`], or fewer when the model has so
    /// many heads that `heads × tokens²` would pass
    /// [`MAX_MAP_CELLS`](crate::text::limits::MAX_MAP_CELLS) (2,048 for the shipped models).
    pub fn max_tokens(&self) -> usize {
        self.trained_heads()
            .map_or(MAX_TOKENS, max_tokens_for_heads)
    }

    /// Runs the trained forward pass at the trained head count: every stage of the layer and
    /// the prediction. Errors for the untrained model, for an empty sentence and for one of
    /// more than [`Model::max_tokens`] tokens.
    ///
    /// Every step saturates as the engine does, so a model whose parameters are all finite
    /// (which loading checks) gives finite logits and probabilities, however large they are.
    pub fn forward(&self, tokens: &[Token]) -> Result<(Stages, Prediction), ModelError> {
        let t = self.trained_parts().ok_or(ModelError::Untrained)?;
        let max = self.max_tokens();
        if tokens.len() > max {
            return Err(ModelError::TooLong {
                tokens: tokens.len(),
                max,
            });
        }
        let x = self.embed(tokens);
        let stages = run(x.view(), &self.weights, t.heads, false, &t.mechanism)?;
        let prediction = self
            .classify_output(stages.output().view())
            .ok_or(ModelError::Untrained)?;
        Ok((stages, prediction))
    }

    /// The sentiment of a sentence, computed with the engine's forward pass at the trained
    /// settings.
    pub fn classify(&self, tokens: &[Token]) -> Result<Prediction, ModelError> {
        self.forward(tokens).map(|(_, p)| p)
    }

    /// The classifier head alone, over a layer output `(tokens, d)` computed by the engine with
    /// any settings (the page's sliders): pooling, linear, softmax. `None` for the untrained
    /// model.
    pub fn classify_output(&self, output: ArrayView2<f32>) -> Option<Prediction> {
        let t = self.trained_parts()?;
        let features = t.pooling.pool(output);
        // Products of large finite values overflow, and a sum of +inf and -inf is NaN: the
        // logits saturate as every engine stage does (NaN becomes 0).
        let mut logits = t.classifier.dot(&features);
        saturate_all(&mut logits);
        logits += &t.classifier_bias;
        saturate_all(&mut logits);
        let (neg, pos) = (logits[0], logits[1]);
        // softmax over two classes = sigmoid of the difference, computed stably.
        let positive = sigmoid(saturate(pos - neg));
        let label = if positive >= 0.5 {
            Sentiment::Positive
        } else {
            Sentiment::Negative
        };
        let probability = if label == Sentiment::Positive {
            positive
        } else {
            1.0 - positive
        };
        Some(Prediction {
            label,
            probability,
            positive,
            logits: [neg, pos],
        })
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;

    #[test]
    fn pooling_means_and_maxes() {
        let out = ndarray::array![[1.0f32, -2.0], [3.0, -4.0]];
        assert_eq!(Pooling::Mean.pool(out.view()).to_vec(), [2.0, -3.0]);
        assert_eq!(
            Pooling::MeanMax.pool(out.view()).to_vec(),
            [2.0, -3.0, 3.0, -2.0]
        );
        assert_eq!(
            Pooling::MeanMax.pool(Array2::zeros((0, 2)).view()).to_vec(),
            [0.0; 4]
        );
    }
}
