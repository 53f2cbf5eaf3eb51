//! Reading a spec: JSON text to validated engine values, with errors that name the field.

use std::fmt;

use ndarray::{Array1, Array2};
use serde::Deserialize;

use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams, ShiftFill};
use crate::engine::{
    run, Biases, EngineError, Frequencies, HeadShape, Layout, Mechanism, MechanismKind, Pairing,
    Rope, Stages, Weights,
};
use crate::names::{parse, Named};

/// The most tokens a spec the page draws may have: the sentence's limit
/// ([`crate::text::MAX_TOKENS`]).
pub const MAX_PAGE_TOKENS: usize = crate::text::MAX_TOKENS;

/// The most cells one stage of a spec the page draws may have, over all its softmax maps
/// (query heads × tokens × tokens): 32 heads at 512 tokens, 32 MiB of f32 per stage.
pub const MAX_PAGE_MAP_CELLS: usize = 32 * 512 * 512;

/// A spec that was rejected, with the field at fault (`"gate.alpha[1]"`, `"x"`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The JSON path of the field at fault, or `"spec"` for the whole document.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl SpecError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

impl From<EngineError> for SpecError {
    fn from(e: EngineError) -> SpecError {
        // The engine's messages already start with the field name.
        let text = e.to_string();
        match text.split_once(": ") {
            Some((field, message)) => SpecError::new(field, message),
            None => SpecError::new("spec", text),
        }
    }
}

/// A validated spec: everything the engine needs for one sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The mechanism and its parameters.
    pub mechanism: Mechanism,
    /// Heads (diff heads for the Differential Transformers).
    pub heads: usize,
    /// Whether the causal mask applies.
    pub causal: bool,
    /// The vectors entering the layer, `(tokens, d)`.
    pub x: Array2<f32>,
    /// The projections, with a real layer's biases and head layout (DESIGN.md §7.1–§7.2).
    pub weights: Weights,
    /// Labels of the tokens, model name and layer index (§7.3), if given.
    pub meta: Meta,
}

/// A spec's metadata (DESIGN.md §7.3): shown, never computed with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Meta {
    /// One label per token.
    pub tokens: Option<Vec<String>>,
    /// The model's name.
    pub model: Option<String>,
    /// The layer's index in the model.
    pub layer: Option<u64>,
}

impl Spec {
    /// Runs the engine on this spec.
    pub fn run(&self) -> Result<Stages, SpecError> {
        Ok(run(
            self.x.view(),
            &self.weights,
            self.heads,
            self.causal,
            &self.mechanism,
        )?)
    }

    /// Why the page cannot draw this spec, if it cannot: it draws every layout and mechanism
    /// the CLI runs, up to [`MAX_PAGE_TOKENS`] tokens and [`MAX_PAGE_MAP_CELLS`] cells per
    /// stage (every softmax map of every head), so that the maps of one layer fit in a
    /// browser tab's memory. `diffattn stages` runs any size.
    pub fn page_support(&self) -> Result<(), SpecError> {
        let tokens = self.x.nrows();
        if tokens > MAX_PAGE_TOKENS {
            return Err(SpecError::new(
                "x",
                format!(
                    "{tokens} tokens are too many for the page, which draws at most \
                     {MAX_PAGE_TOKENS}; `diffattn stages` runs it"
                ),
            ));
        }
        let kind = self.mechanism.kind();
        let query_heads = self.heads.saturating_mul(kind.query_heads_per_head());
        let cells = query_heads.saturating_mul(tokens).saturating_mul(tokens);
        if cells > MAX_PAGE_MAP_CELLS {
            return Err(SpecError::new(
                "heads",
                format!(
                    "{query_heads} softmax maps of {tokens} x {tokens} tokens are {cells} cells \
                     per stage, more than the page's {MAX_PAGE_MAP_CELLS}; `diffattn stages` \
                     runs it"
                ),
            ));
        }
        Ok(())
    }
}

/// The spec as JSON has it, before validation. Numbers are read as f64 so that values beyond
/// f32's range are caught and reported instead of silently becoming infinite. The array fields
/// may instead come as tensors of the binary form (DESIGN.md §7.8).
#[derive(Deserialize)]
struct RawSpec {
    mechanism: String,
    heads: i64,
    causal: bool,
    x: Option<Vec<Vec<f64>>>,
    w_q: Option<Vec<Vec<f64>>>,
    w_k: Option<Vec<Vec<f64>>>,
    w_v: Option<Vec<Vec<f64>>>,
    w_o: Option<Vec<Vec<f64>>>,
    b_q: Option<Vec<f64>>,
    b_k: Option<Vec<f64>>,
    b_v: Option<Vec<f64>>,
    b_o: Option<Vec<f64>>,
    head_dim: Option<i64>,
    kv_heads: Option<i64>,
    rope: Option<RawRope>,
    tokens: Option<Vec<String>>,
    model: Option<String>,
    layer: Option<i64>,
    shift: Option<i64>,
    difference: Option<String>,
    renormalize: Option<String>,
    shift_fill: Option<String>,
    gate: Option<RawGate>,
    depth: Option<i64>,
    lambda_init: Option<f64>,
    pairing: Option<String>,
    lambda_q1: Option<Vec<f64>>,
    lambda_k1: Option<Vec<f64>>,
    lambda_q2: Option<Vec<f64>>,
    lambda_k2: Option<Vec<f64>>,
    subln: Option<Vec<f64>>,
    subln_eps: Option<f64>,
    w_lambda: Option<Vec<Vec<f64>>>,
    lambda: Option<f64>,
    tau: Option<f64>,
    window: Option<i64>,
    segment: Option<i64>,
    /// The stages computed from this spec (an exported file carries them, for reading); they
    /// are recomputed, never read.
    #[allow(dead_code)]
    stages: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct RawGate {
    alpha: Vec<f64>,
    beta: Vec<f64>,
    gamma: Vec<f64>,
}

#[derive(Deserialize)]
struct RawRope {
    layout: String,
    theta: Option<f64>,
    inv_freq: Option<Vec<f64>>,
    rotary_dim: Option<i64>,
    positions: Option<Vec<i64>>,
    attention_scaling: Option<f64>,
}

/// Parses and validates a spec (DESIGN.md §6–§7).
///
/// Every failure names its field: `mechanism: unknown variant ...`, `heads: 3 does not divide
/// ...`, `x[2]: row has 3 values, expected 4`, `gate.alpha: expected 2 values ...`,
/// `w_q[0][1]: 1e39 is not a finite f32`, `kv_heads: expected a divisor of heads 4, found 3`.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    validate(raw_spec(text)?, Tensors::default())
}

/// Parses a spec file's bytes: JSON, or the binary form (a safetensors file, DESIGN.md §7.8).
pub fn parse_spec_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
    if super::binary::is_safetensors(bytes) {
        let (spec_json, tensors) = super::binary::read(bytes)?;
        return validate(raw_spec(&spec_json)?, tensors);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_spec(text),
        Err(e) => Err(SpecError::new(
            "spec",
            format!("neither JSON (not UTF-8: {e}) nor a safetensors file"),
        )),
    }
}

fn raw_spec(text: &str) -> Result<RawSpec, SpecError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path.is_empty() {
            "spec".to_string()
        } else {
            path
        };
        let inner = e.into_inner();
        let message = match inner.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                format!("not valid JSON: {inner}")
            }
            _ => inner.to_string(),
        };
        SpecError::new(field, message)
    })
}

/// Array fields read from the binary form, by field name.
pub(super) type Tensors = std::collections::BTreeMap<String, Array2<f32>>;

/// A matrix field from the JSON or a tensor (never both).
fn matrix_field(
    field: &str,
    raw: Option<Vec<Vec<f64>>>,
    tensors: &mut Tensors,
) -> Result<Option<Array2<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(rows), None) => matrix(field, &rows).map(Some),
        (None, Some(m)) => Ok(Some(m)),
        (None, None) => Ok(None),
    }
}

/// A vector field from the JSON or a tensor (a tensor of one row).
fn vector_field(
    field: &str,
    raw: Option<Vec<f64>>,
    tensors: &mut Tensors,
) -> Result<Option<Vec<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(values), None) => vector(field, &values).map(Some),
        (None, Some(m)) if m.nrows() == 1 => Ok(Some(m.into_raw_vec_and_offset().0)),
        (None, Some(_)) => Err(SpecError::new(field, "expected a tensor of rank 1")),
        (None, None) => Ok(None),
    }
}

fn both(field: &str) -> SpecError {
    SpecError::new(field, "given both as a tensor and in __metadata__.spec")
}

fn validate(raw: RawSpec, mut tensors: Tensors) -> Result<Spec, SpecError> {
    let t = &mut tensors;
    let heads = positive("heads", raw.heads)?;
    let kind: MechanismKind = name("mechanism", &raw.mechanism)?;
    let w_q = required("w_q", matrix_field("w_q", raw.w_q, t)?)?;
    let w_k = required("w_k", matrix_field("w_k", raw.w_k, t)?)?;
    let w_v = required("w_v", matrix_field("w_v", raw.w_v, t)?)?;
    let w_o = required("w_o", matrix_field("w_o", raw.w_o, t)?)?;
    let w_lambda = matrix_field("w_lambda", raw.w_lambda, t)?;
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
        rope: raw.rope.map(|r| rope(r, x.nrows())).transpose()?,
    };
    if kind == MechanismKind::InputDiff && layout.rope.is_some() {
        return Err(SpecError::new(
            "rope",
            "input_diff has no positions for its keys (steps between tokens)",
        ));
    }
    let real = layout.head_dim.is_some()
        || layout.kv_heads.is_some()
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
    weights.check_input(x.view())?;
    let shape = HeadShape::resolve(kind, &weights, heads)?;
    if let Some(rope) = &weights.layout.rope {
        check_rotary_dim(rope, shape.head_dim)?;
    }

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
        MechanismKind::ShiftDiff => {
            let gate = required("gate", raw.gate)?;
            let gate = Gate {
                alpha: vector("gate.alpha", &gate.alpha)?,
                beta: vector("gate.beta", &gate.beta)?,
                gamma: vector("gate.gamma", &gate.gamma)?,
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
        tokens: match raw.tokens {
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
        model: raw.model,
        layer: raw
            .layer
            .map(|l| {
                u64::try_from(l)
                    .map_err(|_| SpecError::new("layer", format!("must be >= 0, found {l}")))
            })
            .transpose()?,
    };
    Ok(Spec {
        mechanism,
        heads,
        causal: raw.causal,
        x,
        weights,
        meta,
    })
}

/// The rope object (DESIGN.md §7.2) for a sequence of `tokens` tokens.
fn rope(raw: RawRope, tokens: usize) -> Result<Rope, SpecError> {
    let frequencies = match (raw.theta, raw.inv_freq) {
        (Some(theta), None) => {
            let theta = positive_finite("rope.theta", theta)?;
            Frequencies::Theta(theta as f64)
        }
        (None, Some(f)) => Frequencies::Explicit(
            vector("rope.inv_freq", &f)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        _ => {
            return Err(SpecError::new(
                "rope",
                "give exactly one of theta and inv_freq",
            ))
        }
    };
    let positions = match raw.positions {
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

fn vector(field: &str, values: &[f64]) -> Result<Vec<f32>, SpecError> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| finite(&format!("{field}[{i}]"), v))
        .collect()
}

fn matrix(field: &str, rows: &[Vec<f64>]) -> Result<Array2<f32>, SpecError> {
    let width = rows.first().map_or(0, Vec::len);
    if rows.is_empty() || width == 0 {
        return Err(SpecError::new(
            field,
            "must be a non-empty matrix (a list of non-empty rows)",
        ));
    }
    let mut data = Vec::with_capacity(rows.len() * width);
    for (i, row) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(SpecError::new(
                format!("{field}[{i}]"),
                format!("row has {} values, expected {width} like row 0", row.len()),
            ));
        }
        for (j, &v) in row.iter().enumerate() {
            data.push(finite(&format!("{field}[{i}][{j}]"), v)?);
        }
    }
    Array2::from_shape_vec((rows.len(), width), data)
        .map_err(|e| SpecError::new(field, e.to_string()))
}
