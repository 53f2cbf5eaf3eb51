//! The spec as JSON has it (`RawSpec`), and its validation into engine values, each error
//! naming its field.

use std::sync::Arc;

use ndarray::{Array1, Array2};
use serde::Deserialize;

use super::super::read::{Matrix, Object, RowLimit, TokenList, TokenRows, Vector, WidthRows};
use super::{scores, Meta, Spec, SpecError, Tensors};
use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams, ShiftFill};
use crate::engine::{
    Biases, Frequencies, HeadShape, Layout, Mechanism, MechanismKind, Pairing, QkNorm, Rope,
    Weights,
};
use crate::names::{parse, Named};

/// The spec as JSON has it, before validation. Numbers are read as f64 so that values beyond
/// f32's range are caught and reported instead of silently becoming infinite; the arrays are
/// read straight into f32 ([`Finite`]) and counted against the limits as they are read. The
/// array fields may instead come as tensors of the binary form (DESIGN.md §7.8). It is read
/// through [`Object`], so its field names here are exactly the known keys. `L` bounds the
/// tokens: [`TokenRows`] (the library's limit) or [`PageTokenRows`](super::super::read::PageTokenRows) (the page's).
#[derive(Deserialize)]
#[serde(bound(deserialize = "L: RowLimit"))]
pub(super) struct RawSpec<L = TokenRows> {
    mechanism: String,
    heads: i64,
    causal: bool,
    x: Option<Matrix<L>>,
    w_q: Option<Matrix<WidthRows>>,
    w_k: Option<Matrix<WidthRows>>,
    w_v: Option<Matrix<WidthRows>>,
    w_o: Option<Matrix<WidthRows>>,
    b_q: Option<Vector>,
    b_k: Option<Vector>,
    b_v: Option<Vector>,
    b_o: Option<Vector>,
    head_dim: Option<i64>,
    kv_heads: Option<i64>,
    rope: Option<Object<RawRope<L>>>,
    tokens: Option<TokenList<String, L>>,
    model: Option<String>,
    layer: Option<i64>,
    shift: Option<i64>,
    difference: Option<String>,
    renormalize: Option<String>,
    shift_fill: Option<String>,
    gate: Option<Object<RawGate>>,
    depth: Option<i64>,
    lambda_init: Option<f64>,
    pairing: Option<String>,
    lambda_q1: Option<Vector>,
    lambda_k1: Option<Vector>,
    lambda_q2: Option<Vector>,
    lambda_k2: Option<Vector>,
    subln: Option<Vector>,
    subln_eps: Option<f64>,
    w_lambda: Option<Matrix<WidthRows>>,
    w_output_gate: Option<Matrix<WidthRows>>,
    b_output_gate: Option<Vector>,
    lambda: Option<f64>,
    temperature: Option<f64>,
    tau: Option<f64>,
    window: Option<i64>,
    segment: Option<i64>,
    q_norm: Option<Vector>,
    k_norm: Option<Vector>,
    qk_norm_eps: Option<f64>,
    scale: Option<f64>,
    softcap: Option<f64>,
    sinks: Option<Vector>,
    relative_bias: Option<Matrix<WidthRows>>,
    x_kv: Option<Matrix<L>>,
    key_tokens: Option<TokenList<String, L>>,
    /// The stages computed from this spec (an exported file carries them, for reading); they
    /// are recomputed, never read.
    #[allow(dead_code)]
    stages: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct RawGate {
    alpha: Vector,
    beta: Vector,
    gamma: Vector,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "L: RowLimit"))]
struct RawRope<L> {
    layout: String,
    theta: Option<f64>,
    inv_freq: Option<Vector>,
    rotary_dim: Option<i64>,
    positions: Option<TokenList<i64, L>>,
    attention_scaling: Option<f64>,
}

/// A matrix field from the JSON or a tensor (never both).
fn matrix_field<L: RowLimit>(
    field: &str,
    raw: Option<Matrix<L>>,
    tensors: &mut Tensors,
) -> Result<Option<Array2<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(m), None) => matrix(field, m).map(Some),
        (None, Some(m)) => Ok(Some(m)),
        (None, None) => Ok(None),
    }
}

/// A vector field from the JSON or a tensor (a tensor of one row).
fn vector_field(
    field: &str,
    raw: Option<Vector>,
    tensors: &mut Tensors,
) -> Result<Option<Vec<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(values), None) => Ok(Some(values.0)),
        (None, Some(m)) if m.nrows() == 1 => Ok(Some(m.into_raw_vec_and_offset().0)),
        (None, Some(_)) => Err(SpecError::new(field, "expected a tensor of rank 1")),
        (None, None) => Ok(None),
    }
}

fn both(field: &str) -> SpecError {
    SpecError::new(field, "given both as a tensor and in __metadata__.spec")
}

pub(super) fn validate<L: RowLimit>(
    raw: RawSpec<L>,
    mut tensors: Tensors,
) -> Result<Spec, SpecError> {
    let t = &mut tensors;
    let heads = positive("heads", raw.heads)?;
    let kind: MechanismKind = name("mechanism", &raw.mechanism)?;
    let w_q = required("w_q", matrix_field("w_q", raw.w_q, t)?)?;
    let w_k = required("w_k", matrix_field("w_k", raw.w_k, t)?)?;
    let w_v = required("w_v", matrix_field("w_v", raw.w_v, t)?)?;
    let w_o = required("w_o", matrix_field("w_o", raw.w_o, t)?)?;
    let w_lambda = matrix_field("w_lambda", raw.w_lambda, t)?;
    let w_output_gate = matrix_field("w_output_gate", raw.w_output_gate, t)?;
    let b_output_gate = vector_field("b_output_gate", raw.b_output_gate, t)?;
    let x = required("x", matrix_field("x", raw.x, t)?)?;
    let biases = Biases {
        b_q: vector_field("b_q", raw.b_q, t)?.map(Array1::from),
        b_k: vector_field("b_k", raw.b_k, t)?.map(Array1::from),
        b_v: vector_field("b_v", raw.b_v, t)?.map(Array1::from),
        b_o: vector_field("b_o", raw.b_o, t)?.map(Array1::from),
    };
    let lambdas = [
        ("lambda_q1", vector_field("lambda_q1", raw.lambda_q1, t)?),
        ("lambda_k1", vector_field("lambda_k1", raw.lambda_k1, t)?),
        ("lambda_q2", vector_field("lambda_q2", raw.lambda_q2, t)?),
        ("lambda_k2", vector_field("lambda_k2", raw.lambda_k2, t)?),
    ];
    let subln = vector_field("subln", raw.subln, t)?;
    let q_norm = vector_field("q_norm", raw.q_norm, t)?;
    let k_norm = vector_field("k_norm", raw.k_norm, t)?;
    let sinks = vector_field("sinks", raw.sinks, t)?;
    let relative_bias = matrix_field("relative_bias", raw.relative_bias, t)?;
    let x_kv = matrix_field("x_kv", raw.x_kv, t)?;
    if let Some(name) = tensors.keys().next() {
        return Err(SpecError::new(
            name.clone(),
            "a tensor that is not an array field of the format",
        ));
    }

    let layout = Layout {
        head_dim: raw.head_dim.map(|v| positive("head_dim", v)).transpose()?,
        kv_heads: raw.kv_heads.map(|v| positive("kv_heads", v)).transpose()?,
        pairing: match raw.pairing {
            None => Pairing::Adjacent,
            Some(p) => name("pairing", &p)?,
        },
        rope: raw.rope.map(|r| rope(r.0, x.nrows())).transpose()?,
        qk_norm: match (q_norm, k_norm) {
            (None, None) if raw.qk_norm_eps.is_some() => {
                return Err(SpecError::new(
                    "qk_norm_eps",
                    "given without q_norm or k_norm",
                ))
            }
            (None, None) => None,
            (q, k) => Some(QkNorm {
                q,
                k,
                eps: match raw.qk_norm_eps {
                    None => scores::QK_NORM_EPS,
                    Some(eps) => f64::from(positive_finite("qk_norm_eps", eps)?),
                },
            }),
        },
        scale: raw.scale.map(|v| positive_finite("scale", v)).transpose()?,
        softcap: raw
            .softcap
            .map(|v| positive_finite("softcap", v))
            .transpose()?,
        sinks: sinks.map(Arc::from),
        relative_bias: relative_bias.map(Arc::new),
        x_kv,
    };
    scores::check_cross_attention(kind, raw.causal, &layout, x.ncols())?;
    if kind == MechanismKind::InputDiff && layout.rope.is_some() {
        return Err(SpecError::new(
            "rope",
            "input_diff has no positions for its keys (steps between tokens)",
        ));
    }
    scores::check_mechanism(kind, &layout)?;
    let real = layout.head_dim.is_some()
        || layout.kv_heads.is_some()
        || layout.qk_norm.is_some()
        || layout.sinks.is_some()
        || layout.relative_bias.is_some()
        || layout.x_kv.is_some()
        || w_lambda.is_some()
        || kind == MechanismKind::DiffTransformerV2;
    let weights = if real {
        Weights::real(w_q, w_k, w_v, w_o, biases, w_lambda, layout)?
    } else {
        let mut w = Weights::new(w_q, w_k, w_v, w_o)?;
        w.biases = biases;
        w.layout = layout;
        w.biases.check(&w)?;
        w
    };
    let weights = match (kind, w_output_gate, b_output_gate) {
        (MechanismKind::GatedAttention, Some(w), b) => {
            weights.with_output_gate(w, b.map(Array1::from))?
        }
        (MechanismKind::GatedAttention, None, _) => {
            return Err(SpecError::new(
                "w_output_gate",
                "missing (this mechanism needs it)",
            ))
        }
        (_, None, None) => weights,
        (_, w, _) => {
            let field = if w.is_some() {
                "w_output_gate"
            } else {
                "b_output_gate"
            };
            return Err(SpecError::new(
                field,
                "only gated_attention has an output gate",
            ));
        }
    };
    weights.check_input(x.view())?;
    let shape = HeadShape::resolve(kind, &weights, heads)?;
    if kind == MechanismKind::GatedAttention {
        crate::engine::gated_attention::check(&weights, &shape)?;
    }
    if let Some(rope) = &weights.layout.rope {
        check_rotary_dim(rope, shape.head_dim)?;
    }
    scores::check_shapes(&weights, &shape, x.nrows())?;

    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::DiffTransformerV2 => {
            match &weights.w_lambda {
                None => {
                    return Err(SpecError::new(
                        "w_lambda",
                        "missing (this mechanism needs it)",
                    ))
                }
                Some(w) if w.nrows() != heads => {
                    return Err(SpecError::new(
                        "w_lambda",
                        format!(
                            "expected {heads} x {} (heads, d_model), found {} x {}",
                            weights.d_model(),
                            w.nrows(),
                            w.ncols()
                        ),
                    ))
                }
                Some(_) => {}
            }
            Mechanism::DiffTransformerV2 {
                lambda: raw.lambda.map(|l| finite("lambda", l)).transpose()?,
            }
        }
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: finite("tau", required("tau", raw.tau)?)?,
        },
        MechanismKind::Local => {
            let window = required("window", raw.window)?;
            let window = usize::try_from(window)
                .map_err(|_| SpecError::new("window", format!("must be >= 0, found {window}")))?;
            Mechanism::Local { window }
        }
        MechanismKind::Hierarchical => Mechanism::Hierarchical {
            segment: positive("segment", required("segment", raw.segment)?)?,
        },
        MechanismKind::GatedAttention => Mechanism::GatedAttention,
        MechanismKind::ShiftDiff => {
            let gate = required("gate", raw.gate)?.0;
            let gate = Gate {
                alpha: gate.alpha.0,
                beta: gate.beta.0,
                gamma: gate.gamma.0,
            };
            gate.check(heads)?;
            Mechanism::ShiftDiff(ShiftDiffParams {
                shift: required("shift", raw.shift)?,
                difference: name("difference", &required("difference", raw.difference)?)?,
                renormalize: name("renormalize", &required("renormalize", raw.renormalize)?)?,
                fill: match raw.shift_fill {
                    None => ShiftFill::Circular,
                    Some(fill) => name("shift_fill", &fill)?,
                },
                gate,
            })
        }
        MechanismKind::DiffTransformer => {
            let (depth, lambda_init) = match (raw.depth, raw.lambda_init) {
                (Some(depth), None) => (
                    u32::try_from(depth).map_err(|_| {
                        SpecError::new(
                            "depth",
                            format!("must be between 0 and 2^32 - 1, found {depth}"),
                        )
                    })?,
                    None,
                ),
                (None, Some(init)) => (0, Some(finite("lambda_init", init)?)),
                (None, None) => {
                    return Err(SpecError::new(
                        "depth",
                        "missing: give depth or lambda_init",
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(SpecError::new(
                        "depth",
                        "give exactly one of depth and lambda_init",
                    ))
                }
            };
            let [q1, k1, q2, k2] = lambdas.map(|(field, v)| required(field, v));
            let params = DiffTransformerParams {
                depth,
                lambda_q1: q1?,
                lambda_k1: k1?,
                lambda_q2: q2?,
                lambda_k2: k2?,
                // No learned weight (DiffLlama's groupnorm) is a weight of ones.
                subln: subln.unwrap_or_else(|| vec![1.0; 2 * shape.head_dim]),
                lambda_init,
                subln_eps: match raw.subln_eps {
                    None => RMS_NORM_EPS,
                    Some(eps) => positive_finite("subln_eps", eps)?,
                },
                lambda: raw.lambda.map(|l| finite("lambda", l)).transpose()?,
                temperature: match raw.temperature {
                    None => 1.0,
                    Some(t) => positive_finite("temperature", t)?,
                },
            };
            params.check(shape.head_dim)?;
            Mechanism::DiffTransformer(params)
        }
    };
    if raw.lambda.is_some() && kind.query_heads_per_head() != 2 {
        return Err(SpecError::new(
            "lambda",
            "only diff_transformer and diff_transformer_v2 subtract with a λ",
        ));
    }
    if kind != MechanismKind::DiffTransformer && weights.layout.pairing != Pairing::Adjacent {
        return Err(SpecError::new(
            "pairing",
            "only diff_transformer pairs heads",
        ));
    }

    let meta = Meta {
        tokens: match raw.tokens.map(|t| t.0) {
            Some(t) if t.len() != x.nrows() => {
                return Err(SpecError::new(
                    "tokens",
                    format!(
                        "expected {} labels (one per row of x), found {}",
                        x.nrows(),
                        t.len()
                    ),
                ))
            }
            t => t,
        },
        key_tokens: match (raw.key_tokens.map(|t| t.0), &weights.layout.x_kv) {
            (Some(_), None) => {
                return Err(SpecError::new(
                    "key_tokens",
                    "given without x_kv (the keys are the tokens: label them with tokens)",
                ))
            }
            (Some(t), Some(m)) if t.len() != m.nrows() => {
                return Err(SpecError::new(
                    "key_tokens",
                    format!(
                        "expected {} labels (one per row of x_kv), found {}",
                        m.nrows(),
                        t.len()
                    ),
                ))
            }
            (t, _) => t,
        },
        model: raw.model,
        layer: raw
            .layer
            .map(|l| {
                u64::try_from(l)
                    .map_err(|_| SpecError::new("layer", format!("must be >= 0, found {l}")))
            })
            .transpose()?,
    };
    let spec = Spec {
        mechanism,
        heads,
        causal: raw.causal,
        x,
        weights,
        meta,
    };
    spec.check_limits()?;
    Ok(spec)
}

/// The rope object (DESIGN.md §7.2) for a sequence of `tokens` tokens.
fn rope<L>(raw: RawRope<L>, tokens: usize) -> Result<Rope, SpecError> {
    let frequencies = match (raw.theta, raw.inv_freq) {
        (Some(theta), None) => {
            let theta = positive_finite("rope.theta", theta)?;
            Frequencies::Theta(theta as f64)
        }
        (None, Some(f)) => Frequencies::Explicit(f.0.into_iter().map(f64::from).collect()),
        _ => {
            return Err(SpecError::new(
                "rope",
                "give exactly one of theta and inv_freq",
            ))
        }
    };
    let positions = match raw.positions.map(|p| p.0) {
        None => (0..tokens as u64).collect(),
        Some(p) if p.len() != tokens => {
            return Err(SpecError::new(
                "rope.positions",
                format!(
                    "expected {tokens} integers (one per token), found {}",
                    p.len()
                ),
            ))
        }
        Some(p) => p
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                u64::try_from(v).map_err(|_| {
                    SpecError::new(
                        format!("rope.positions[{i}]"),
                        format!("must be >= 0, found {v}"),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Rope {
        layout: name("rope.layout", &raw.layout)?,
        frequencies,
        rotary_dim: raw
            .rotary_dim
            .map(|r| positive("rope.rotary_dim", r))
            .transpose()?,
        positions,
        attention_scaling: match raw.attention_scaling {
            None => 1.0,
            Some(c) => f64::from(finite("rope.attention_scaling", c)?),
        },
    })
}

fn check_rotary_dim(rope: &Rope, head_dim: usize) -> Result<(), SpecError> {
    let r = rope.rotary_dim.unwrap_or(head_dim);
    if r < 2 || r % 2 != 0 || r > head_dim {
        return Err(SpecError::new(
            "rope.rotary_dim",
            format!("expected an even number from 2 to head_dim {head_dim}, found {r}"),
        ));
    }
    if let Frequencies::Explicit(f) = &rope.frequencies {
        if f.len() != r / 2 {
            return Err(SpecError::new(
                "rope.inv_freq",
                format!(
                    "expected {} values (rotary_dim / 2), found {}",
                    r / 2,
                    f.len()
                ),
            ));
        }
    }
    Ok(())
}

fn positive_finite(field: &str, value: f64) -> Result<f32, SpecError> {
    let v = finite(field, value)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(SpecError::new(
            field,
            format!("must be positive, found {value}"),
        ))
    }
}

/// The value a name stands for (`crate::names`), or an error naming the field.
fn name<T: Named>(field: &str, text: &str) -> Result<T, SpecError> {
    parse::<T>(field, text).map_err(|e| {
        let message = e.to_string();
        let message = message
            .strip_prefix(&format!("{field}: "))
            .unwrap_or(&message)
            .to_string();
        SpecError::new(field, message)
    })
}

fn required<T>(field: &str, value: Option<T>) -> Result<T, SpecError> {
    value.ok_or_else(|| SpecError::new(field, "missing (this mechanism needs it)"))
}

fn positive(field: &str, value: i64) -> Result<usize, SpecError> {
    usize::try_from(value)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| SpecError::new(field, format!("must be a positive integer, found {value}")))
}

fn finite(field: &str, value: f64) -> Result<f32, SpecError> {
    let v = value as f32;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(SpecError::new(
            field,
            format!("{value} is not a finite f32 (|v| must be below 3.4e38)"),
        ))
    }
}

/// The matrix as an array. The reader made it rectangular and non-empty.
fn matrix<L: RowLimit>(field: &str, m: Matrix<L>) -> Result<Array2<f32>, SpecError> {
    Array2::from_shape_vec((m.rows, m.cols), m.data)
        .map_err(|e| SpecError::new(field, e.to_string()))
}
