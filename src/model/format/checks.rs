//! A trained model's parts checked: they fit together, the engine accepts them, every learned
//! value is finite.

use ndarray::Array2;

use super::ModelError;
use crate::engine::{Mechanism, Weights};
use crate::model::Trained;

/// Checks that the parts of a trained model fit together and that the engine accepts them.
pub(in crate::model) fn check(weights: &Weights, t: &Trained) -> Result<(), ModelError> {
    let d = weights.d_model();
    let invalid = |s: String| Err(ModelError::Invalid(s));
    if t.table.vectors.ncols() != d {
        return invalid(format!(
            "embedding: width {} but d_model is {d}",
            t.table.vectors.ncols()
        ));
    }
    let features = t.pooling.features(d);
    if t.classifier.dim() != (2, features) {
        return invalid(format!(
            "classifier.weight: expected 2 x {features}, found {:?}",
            t.classifier.dim()
        ));
    }
    if t.classifier_bias.len() != 2 {
        return invalid("classifier.bias: expected 2 values".to_string());
    }
    match (&t.mechanism, &t.encoder) {
        (Mechanism::InputDiff, Some(e)) if e.input_width() != d || e.output_width() != d => {
            return invalid(format!(
                "bilstm: input {} and output {} must both be d_model {d}",
                e.input_width(),
                e.output_width()
            ));
        }
        (Mechanism::InputDiff, Some(_)) => {}
        (_, Some(_)) => return invalid("bilstm: only input_diff has an encoder".to_string()),
        _ => {}
    }
    check_finite(weights, t)?;
    // One token through the engine proves the head count and the mechanism's parameters fit.
    let x = Array2::<f32>::zeros((2, d));
    crate::engine::run(x.view(), weights, t.heads, false, &t.mechanism)?;
    Ok(())
}

/// Checks every learned value of a model finite, naming the tensor and the index of the first
/// that is not (`gate.beta[1]: NaN`).
fn check_finite(weights: &Weights, t: &Trained) -> Result<(), ModelError> {
    finite("embedding", &t.table.vectors)?;
    finite("w_q", &weights.w_q)?;
    finite("w_k", &weights.w_k)?;
    finite("w_v", &weights.w_v)?;
    finite("w_o", &weights.w_o)?;
    finite("classifier.weight", &t.classifier)?;
    finite("classifier.bias", &t.classifier_bias)?;
    match &t.mechanism {
        Mechanism::ShiftDiff(p) => {
            finite("gate.alpha", &p.gate.alpha)?;
            finite("gate.beta", &p.gate.beta)?;
            finite("gate.gamma", &p.gate.gamma)?;
        }
        Mechanism::DiffTransformer(p) => {
            finite("lambda_q1", &p.lambda_q1)?;
            finite("lambda_k1", &p.lambda_k1)?;
            finite("lambda_q2", &p.lambda_q2)?;
            finite("lambda_k2", &p.lambda_k2)?;
            finite("subln", &p.subln)?;
            finite("lambda_init", &p.lambda_init)?;
            finite("subln_eps", [&p.subln_eps])?;
            finite("lambda", &p.lambda)?;
        }
        Mechanism::Cosine { tau } => finite("tau", [tau])?,
        Mechanism::DiffTransformerV2 { lambda } => finite("lambda", lambda)?,
        Mechanism::Standard
        | Mechanism::InputDiff
        | Mechanism::Local { .. }
        | Mechanism::Hierarchical { .. }
        | Mechanism::GatedAttention => {}
    }
    if let Some(w_lambda) = &weights.w_lambda {
        finite("w_lambda", w_lambda)?;
    }
    if let Some(g) = &weights.output_gate {
        finite("w_output_gate", &g.w)?;
        finite("b_output_gate", g.b.iter().flatten())?;
    }
    if let Some(e) = &t.encoder {
        for (dir, l) in [("forward", &e.forward), ("backward", &e.backward)] {
            finite(&format!("bilstm.{dir}.w_ih"), &l.w_ih)?;
            finite(&format!("bilstm.{dir}.w_hh"), &l.w_hh)?;
            finite(&format!("bilstm.{dir}.b_ih"), &l.b_ih)?;
            finite(&format!("bilstm.{dir}.b_hh"), &l.b_hh)?;
        }
    }
    Ok(())
}

/// Checks every value of a parameter finite, naming the first that is not by its index in
/// row-major order.
pub(super) fn finite<'a>(
    name: &str,
    values: impl IntoIterator<Item = &'a f32>,
) -> Result<(), ModelError> {
    match values.into_iter().enumerate().find(|(_, v)| !v.is_finite()) {
        None => Ok(()),
        Some((i, v)) => Err(not_finite(name, i, *v)),
    }
}

/// The error of [`finite`], one copy for all its instances.
fn not_finite(name: &str, i: usize, v: f32) -> ModelError {
    ModelError::Invalid(format!("{name}[{i}]: {v} (every parameter must be finite)"))
}
