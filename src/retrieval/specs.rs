//! A retrieval model over one text as the stages format's specs, one per layer (DESIGN.md
//! §7.11, a multi-layer file; docs/LESSON.md, "Every layer and head"): what the page's model
//! view, `diffattn stages --layer N` and any reader of the format draw as every layer × head.
//!
//! Layer `l`'s spec holds exactly what enters that layer's attention in
//! [`RetrievalModel::forward_with`]: its `x` is the forward's `x_l` (the table's rows for the
//! first layer; `x_{l−1}` plus the layer output before it, saturated, for the others), its
//! weights `W_q, W_k, W_v, W_o` and its mechanism with the parameters the forward ran (the
//! trained ones, or the lesson's moved shift or λ), the causal mask, the text's tokens as the
//! labels, the model's name and the layer's index (from 0). Run through the engine, each spec
//! gives that layer's maps of the forward. What the forward does around the attention (the
//! token table, the residual, the read-out) is no part of a layer's spec: a spec is one
//! attention layer, and its `x` already holds what the layers before it added.

use super::ask::Asked;
use super::forward::RetrievalModel;
use crate::spec::{Meta, Spec};

/// The model's name in the specs' `model` field: `retrieval/NAME` (its file is
/// `weights/retrieval/NAME.bin`).
pub fn model_label(name: &str) -> String {
    format!("retrieval/{name}")
}

/// One spec per layer of `model` (called `name`), first layer first, for the text `asked` put
/// to it ([`super::ask`] or [`super::ask_with`] on this model): each layer's input vectors,
/// weights, heads and mechanism as the forward pass ran them.
///
/// `asked` must come from `model`: its inputs and mechanisms are paired with the model's
/// layers in order.
pub fn layer_specs(model: &RetrievalModel, name: &str, asked: &Asked) -> Vec<Spec> {
    model
        .layers
        .iter()
        .zip(&asked.retrieval.inputs)
        .zip(&asked.mechanisms)
        .enumerate()
        .map(|(l, ((layer, x), mechanism))| Spec {
            mechanism: mechanism.clone(),
            heads: layer.heads,
            causal: true,
            x: x.clone(),
            weights: layer.weights.clone(),
            meta: Meta {
                tokens: Some(asked.tokens.clone()),
                key_tokens: None,
                model: Some(model_label(name)),
                layer: Some(l as u64),
            },
        })
        .collect()
}
