//! Reading a spec: JSON text to validated engine values, with errors that name the field.

use std::fmt;

use ndarray::Array2;
use serde::Deserialize;

use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::{Gate, ShiftDiffParams, ShiftFill};
use crate::engine::{run, EngineError, Mechanism, MechanismKind, Stages, Weights};
use crate::names::{parse, Named};

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
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// Whether the causal mask applies.
    pub causal: bool,
    /// The vectors entering the layer, `(tokens, d)`.
    pub x: Array2<f32>,
    /// The projections.
    pub weights: Weights,
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
}

/// The spec as JSON has it, before validation. Numbers are read as f64 so that values beyond
/// f32's range are caught and reported instead of silently becoming infinite.
#[derive(Deserialize)]
struct RawSpec {
    mechanism: String,
    heads: i64,
    causal: bool,
    x: Vec<Vec<f64>>,
    w_q: Vec<Vec<f64>>,
    w_k: Vec<Vec<f64>>,
    w_v: Vec<Vec<f64>>,
    w_o: Vec<Vec<f64>>,
    shift: Option<i64>,
    difference: Option<String>,
    renormalize: Option<String>,
    shift_fill: Option<String>,
    gate: Option<RawGate>,
    depth: Option<i64>,
    lambda_q1: Option<Vec<f64>>,
    lambda_k1: Option<Vec<f64>>,
    lambda_q2: Option<Vec<f64>>,
    lambda_k2: Option<Vec<f64>>,
    subln: Option<Vec<f64>>,
    tau: Option<f64>,
    window: Option<i64>,
}

#[derive(Deserialize)]
struct RawGate {
    alpha: Vec<f64>,
    beta: Vec<f64>,
    gamma: Vec<f64>,
}

/// Parses and validates a spec (DESIGN.md §6).
///
/// Every failure names its field: `mechanism: unknown variant ...`, `heads: 3 does not divide
/// ...`, `x[2]: row has 3 values, expected 4`, `gate.alpha: expected 2 values ...`,
/// `w_q[0][1]: 1e39 is not a finite f32`.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: RawSpec = serde_path_to_error::deserialize(de).map_err(|e| {
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
    })?;
    validate(raw)
}

fn validate(raw: RawSpec) -> Result<Spec, SpecError> {
    let heads = positive("heads", raw.heads)?;
    let w_q = matrix("w_q", &raw.w_q)?;
    let d = w_q.nrows();
    let weights = Weights::new(
        w_q,
        matrix("w_k", &raw.w_k)?,
        matrix("w_v", &raw.w_v)?,
        matrix("w_o", &raw.w_o)?,
    )?;
    let x = matrix("x", &raw.x)?;
    weights.check_input(x.view())?;

    let kind: MechanismKind = name("mechanism", &raw.mechanism)?;
    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: finite("tau", required("tau", raw.tau)?)?,
        },
        MechanismKind::Local => {
            let window = required("window", raw.window)?;
            let window = usize::try_from(window)
                .map_err(|_| SpecError::new("window", format!("must be >= 0, found {window}")))?;
            Mechanism::Local { window }
        }
        MechanismKind::ShiftDiff => {
            let gate = required("gate", raw.gate)?;
            let gate = Gate {
                alpha: vector("gate.alpha", &gate.alpha)?,
                beta: vector("gate.beta", &gate.beta)?,
                gamma: vector("gate.gamma", &gate.gamma)?,
            };
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
            let depth = required("depth", raw.depth)?;
            let depth = u32::try_from(depth).map_err(|_| {
                SpecError::new(
                    "depth",
                    format!("must be between 0 and 2^32 - 1, found {depth}"),
                )
            })?;
            Mechanism::DiffTransformer(DiffTransformerParams {
                depth,
                lambda_q1: vector("lambda_q1", &required("lambda_q1", raw.lambda_q1)?)?,
                lambda_k1: vector("lambda_k1", &required("lambda_k1", raw.lambda_k1)?)?,
                lambda_q2: vector("lambda_q2", &required("lambda_q2", raw.lambda_q2)?)?,
                lambda_k2: vector("lambda_k2", &required("lambda_k2", raw.lambda_k2)?)?,
                subln: vector("subln", &required("subln", raw.subln)?)?,
            })
        }
    };

    // Check head counts and per-head vector lengths now, so the error names the field.
    match &mechanism {
        Mechanism::DiffTransformer(p) => {
            p.check(d, heads)?;
        }
        Mechanism::ShiftDiff(p) => {
            crate::engine::projection::head_width(d, heads, "d_model")?;
            p.gate.check(heads)?;
        }
        _ => {
            crate::engine::projection::head_width(d, heads, "d_model")?;
        }
    }

    Ok(Spec {
        mechanism,
        heads,
        causal: raw.causal,
        x,
        weights,
    })
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
