//! Writing a spec back (DESIGN.md §6–§7): what the page's "export JSON" writes, so the file
//! opens again as a spec, with the stages computed from it for reading.

use serde::Serialize;

use super::input::{Spec, SpecError};
use super::output::{matrix, stages_json, StagesJson};
use crate::engine::{Frequencies, Mechanism, Pairing, Rope, Stages};
use crate::names::name_of;

/// The gate of a shift-difference spec: `{ alpha, beta, gamma }`, one value per head.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateJson {
    /// Weights of `A`.
    pub alpha: Vec<f32>,
    /// Weights of `D`.
    pub beta: Vec<f32>,
    /// Biases.
    pub gamma: Vec<f32>,
}

/// A spec as JSON (DESIGN.md §6), with the token labels and, optionally, the stages computed
/// from it: what the page's "export JSON" writes, so the file opens again as a spec (the
/// loader recomputes the stages and never reads them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecJson {
    /// The mechanism's name.
    pub mechanism: &'static str,
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// The causal mask.
    pub causal: bool,
    /// The vectors entering the layer.
    pub x: Vec<Vec<f32>>,
    /// `W_q`, `[out][in]`.
    pub w_q: Vec<Vec<f32>>,
    /// `W_k`.
    pub w_k: Vec<Vec<f32>>,
    /// `W_v`.
    pub w_v: Vec<Vec<f32>>,
    /// `W_o`.
    pub w_o: Vec<Vec<f32>>,
    /// `b_q` (a real layer's bias, DESIGN.md §7.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_q: Option<Vec<f32>>,
    /// `b_k`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_k: Option<Vec<f32>>,
    /// `b_v`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_v: Option<Vec<f32>>,
    /// `b_o`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_o: Option<Vec<f32>>,
    /// The head width, when the layer fixes it (§7.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_dim: Option<usize>,
    /// Key/value heads (grouped-query attention, §7.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<usize>,
    /// Rotary positions (§7.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rope: Option<RopeJson>,
    /// RMSNorm of the queries (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q_norm: Option<Vec<f32>>,
    /// RMSNorm of the keys (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k_norm: Option<Vec<f32>>,
    /// The norms' ε (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qk_norm_eps: Option<f64>,
    /// The scores' factor, when the layer gives its own (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f32>,
    /// The scores' soft cap (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub softcap: Option<f32>,
    /// A sink logit per softmax query head (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sinks: Option<Vec<f32>>,
    /// The scores' bias by offset, per softmax query head (§7.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_bias: Option<Vec<Vec<f32>>>,
    /// Cross-attention: the vectors of the keys and values (§7.10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_kv: Option<Vec<Vec<f32>>>,
    /// Cross-attention: the keys' labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_tokens: Option<Vec<String>>,
    /// The Differential Transformer's pairing, when not the official code's (§7.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing: Option<&'static str>,
    /// V2's `W_λ` (§7.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_lambda: Option<Vec<Vec<f32>>>,
    /// Gated attention's output gate `W_og` (§4.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_output_gate: Option<Vec<Vec<f32>>>,
    /// Gated attention's output gate bias `b_og`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_output_gate: Option<Vec<f32>>,
    /// Both Differential Transformers: λ itself, in place of the learned one (the page's λ
    /// slider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f32>,
    /// The model's name (§7.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The layer's index in the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<u64>,
    /// Shift-difference: the shift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift: Option<i64>,
    /// Shift-difference: the difference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<&'static str>,
    /// Shift-difference: the renormalisation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renormalize: Option<&'static str>,
    /// Shift-difference: the fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift_fill: Option<&'static str>,
    /// Shift-difference: the gate per head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateJson>,
    /// Differential Transformer: the depth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Differential Transformer: `lambda_init` itself, when given instead of the depth's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_init: Option<f32>,
    /// Differential Transformer: RMSNorm's epsilon, when not the official code's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subln_eps: Option<f32>,
    /// Differential Transformer: the softmax temperature, when not 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Hierarchical: the segment size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<usize>,
    /// Differential Transformer: `λq1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_q1: Option<Vec<f32>>,
    /// Differential Transformer: `λk1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_k1: Option<Vec<f32>>,
    /// Differential Transformer: `λq2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_q2: Option<Vec<f32>>,
    /// Differential Transformer: `λk2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda_k2: Option<Vec<f32>>,
    /// Differential Transformer: the RMSNorm weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subln: Option<Vec<f32>>,
    /// Cosine: the temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau: Option<f32>,
    /// Local: the radius.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// The row labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Vec<String>>,
    /// The stages computed from this spec, for reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<StagesJson>,
}

/// A multi-layer file as JSON (DESIGN.md §7.11): `{"layers": [spec, ...]}`, one whole
/// single-layer spec per layer, first layer first, each with its own `x`, `tokens` and `layer`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayersJson {
    /// One spec per layer.
    pub layers: Vec<SpecJson>,
}

impl LayersJson {
    /// The file's text, compact or `pretty`.
    pub fn to_text(&self, pretty: bool) -> Result<String, SpecError> {
        let text = if pretty {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        };
        text.map_err(|e| SpecError::new("layers", e.to_string()))
    }
}

/// `specs`, one per layer, as one multi-layer file (without stages: a reader computes them).
pub fn layers_json(specs: &[Spec]) -> LayersJson {
    LayersJson {
        layers: specs.iter().map(|s| spec_json(s, None)).collect(),
    }
}

/// Rotary positions as the spec writes them (DESIGN.md §7.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RopeJson {
    /// `"half"` or `"interleaved"`.
    pub layout: &'static str,
    /// The base θ, or
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
    /// the frequencies themselves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inv_freq: Option<Vec<f64>>,
    /// How many channels of each head rotate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotary_dim: Option<usize>,
    /// The position of each token.
    pub positions: Vec<u64>,
    /// cos and sin are multiplied by it.
    pub attention_scaling: f64,
}

impl RopeJson {
    fn new(rope: &Rope) -> RopeJson {
        let (theta, inv_freq) = match &rope.frequencies {
            Frequencies::Theta(t) => (Some(*t), None),
            Frequencies::Explicit(f) => (None, Some(f.clone())),
        };
        RopeJson {
            layout: name_of(rope.layout),
            theta,
            inv_freq,
            rotary_dim: rope.rotary_dim,
            positions: rope.positions.clone(),
            attention_scaling: rope.attention_scaling,
        }
    }
}

/// A spec as JSON, with `stages` when given.
pub fn spec_json(spec: &Spec, stages: Option<&Stages>) -> SpecJson {
    let w = &spec.weights;
    let vector = |b: &Option<ndarray::Array1<f32>>| b.as_ref().map(|b| b.to_vec());
    let mut out = SpecJson {
        mechanism: name_of(spec.mechanism.kind()),
        heads: spec.heads,
        causal: spec.causal,
        x: matrix(&spec.x),
        w_q: matrix(&spec.weights.w_q),
        w_k: matrix(&spec.weights.w_k),
        w_v: matrix(&spec.weights.w_v),
        w_o: matrix(&spec.weights.w_o),
        b_q: vector(&w.biases.b_q),
        b_k: vector(&w.biases.b_k),
        b_v: vector(&w.biases.b_v),
        b_o: vector(&w.biases.b_o),
        head_dim: w.layout.head_dim,
        kv_heads: w.layout.kv_heads,
        rope: w.layout.rope.as_ref().map(RopeJson::new),
        q_norm: w.layout.qk_norm.as_ref().and_then(|n| n.q.clone()),
        k_norm: w.layout.qk_norm.as_ref().and_then(|n| n.k.clone()),
        qk_norm_eps: w.layout.qk_norm.as_ref().map(|n| n.eps),
        scale: w.layout.scale,
        softcap: w.layout.softcap,
        sinks: w.layout.sinks.as_deref().map(<[f32]>::to_vec),
        relative_bias: w.layout.relative_bias.as_deref().map(matrix),
        x_kv: w.layout.x_kv.as_ref().map(matrix),
        key_tokens: spec.meta.key_tokens.clone(),
        pairing: (w.layout.pairing != Pairing::Adjacent).then(|| name_of(w.layout.pairing)),
        w_lambda: w.w_lambda.as_ref().map(matrix),
        w_output_gate: w.output_gate.as_ref().map(|g| matrix(&g.w)),
        b_output_gate: w.output_gate.as_ref().and_then(|g| vector(&g.b)),
        lambda: None,
        model: spec.meta.model.clone(),
        layer: spec.meta.layer,
        shift: None,
        difference: None,
        renormalize: None,
        shift_fill: None,
        gate: None,
        depth: None,
        lambda_init: None,
        subln_eps: None,
        temperature: None,
        segment: None,
        lambda_q1: None,
        lambda_k1: None,
        lambda_q2: None,
        lambda_k2: None,
        subln: None,
        tau: None,
        window: None,
        tokens: spec.meta.tokens.clone(),
        stages: stages.map(stages_json),
    };
    match &spec.mechanism {
        Mechanism::ShiftDiff(p) => {
            out.shift = Some(p.shift);
            out.difference = Some(name_of(p.difference));
            out.renormalize = Some(name_of(p.renormalize));
            out.shift_fill = Some(name_of(p.fill));
            out.gate = Some(GateJson {
                alpha: p.gate.alpha.clone(),
                beta: p.gate.beta.clone(),
                gamma: p.gate.gamma.clone(),
            });
        }
        Mechanism::DiffTransformer(p) => {
            out.depth = Some(p.depth);
            out.lambda_q1 = Some(p.lambda_q1.clone());
            out.lambda_k1 = Some(p.lambda_k1.clone());
            out.lambda_q2 = Some(p.lambda_q2.clone());
            out.lambda_k2 = Some(p.lambda_k2.clone());
            out.subln = Some(p.subln.clone());
            out.lambda_init = p.lambda_init;
            out.subln_eps = (p.subln_eps != crate::engine::diff_transformer::RMS_NORM_EPS)
                .then_some(p.subln_eps);
            out.temperature = (p.temperature != 1.0).then_some(p.temperature);
            out.lambda = p.lambda;
        }
        Mechanism::DiffTransformerV2 { lambda } => out.lambda = *lambda,
        Mechanism::Hierarchical { segment } => out.segment = Some(*segment),
        Mechanism::Cosine { tau } => out.tau = Some(*tau),
        Mechanism::Local { window } => out.window = Some(*window),
        Mechanism::Standard | Mechanism::InputDiff | Mechanism::GatedAttention => {}
    }
    out
}
