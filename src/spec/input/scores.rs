//! The checks of DESIGN.md §7.9 (query and key norms, the scores' scale, soft cap, sinks and
//! relative bias) and §7.10 (cross-attention's keys from a second sequence): which mechanisms
//! take them, and their sizes against the layer's heads.

use super::SpecError;
use crate::engine::{HeadShape, Layout, MechanismKind, QkNorm, Weights};

/// ε of the query and key norms when a spec gives none (transformers' Qwen3 and Gemma default).
pub const QK_NORM_EPS: f64 = 1e-6;

/// The norms belong to every mechanism that projects tokens; the rest to the scaled dot
/// product's mechanisms (cosine scores with τ, input difference and hierarchical attention with
/// scores of their own).
pub(super) fn check_mechanism(kind: MechanismKind, layout: &Layout) -> Result<(), SpecError> {
    if let (MechanismKind::InputDiff, Some(norm)) = (kind, &layout.qk_norm) {
        return Err(SpecError::new(
            if norm.q.is_some() { "q_norm" } else { "k_norm" },
            "input_diff's keys are steps between tokens, which no model normalises",
        ));
    }
    let own_scores = !kind.scores_by_dot_product();
    for (field, given) in [
        ("scale", layout.scale.is_some()),
        ("softcap", layout.softcap.is_some()),
        ("sinks", layout.sinks.is_some()),
        ("relative_bias", layout.relative_bias.is_some()),
    ] {
        if given && own_scores {
            return Err(SpecError::new(
                field,
                "only the scaled dot product's mechanisms (standard, local, shift_diff, diff_transformer, diff_transformer_v2, gated_attention) take it",
            ));
        }
    }
    Ok(())
}

/// The sizes: each norm's weight `d_h` long (every head alone) or as long as its projection's
/// rows; one sink per softmax query head; the relative bias one row per softmax query head and
/// one column per offset of `tokens` tokens.
pub(super) fn check_shapes(
    weights: &Weights,
    shape: &HeadShape,
    tokens: usize,
) -> Result<(), SpecError> {
    if let Some(norm) = &weights.layout.qk_norm {
        check_qk_norm(norm, weights, shape.head_dim)?;
    }
    if let Some(bias) = &weights.layout.relative_bias {
        let want = (shape.query_heads, 2 * tokens - 1);
        if bias.dim() != want {
            return Err(SpecError::new(
                "relative_bias",
                format!(
                    "expected {} x {} (one row per softmax query head, one column per offset j − i from −{} to {}), found {} x {}",
                    want.0,
                    want.1,
                    tokens - 1,
                    tokens - 1,
                    bias.nrows(),
                    bias.ncols()
                ),
            ));
        }
    }
    if let Some(sinks) = &weights.layout.sinks {
        if sinks.len() != shape.query_heads {
            return Err(SpecError::new(
                "sinks",
                format!(
                    "expected {} values (one per softmax query head), found {}",
                    shape.query_heads,
                    sinks.len()
                ),
            ));
        }
    }
    Ok(())
}

fn check_qk_norm(norm: &QkNorm, weights: &Weights, head_dim: usize) -> Result<(), SpecError> {
    for (field, w, rows) in [
        ("q_norm", &norm.q, weights.w_q.nrows()),
        ("k_norm", &norm.k, weights.w_k.nrows()),
    ] {
        if let Some(w) = w {
            if w.len() != head_dim && w.len() != rows {
                return Err(SpecError::new(
                    field,
                    format!(
                        "expected {head_dim} values (head_dim: each head alone) or {rows} (the rows of w_{}), found {}",
                        &field[..1],
                        w.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Cross-attention (§7.10): standard attention only, with no causal mask, no rotary positions
/// and no relative bias (positions across two sequences mean nothing), and `x_kv` as wide as
/// `x`.
pub(super) fn check_cross_attention(
    kind: MechanismKind,
    causal: bool,
    layout: &Layout,
    d: usize,
) -> Result<(), SpecError> {
    let Some(x_kv) = &layout.x_kv else {
        return Ok(());
    };
    let why = if kind != MechanismKind::Standard {
        Some("only standard attention reads its keys and values from a second sequence")
    } else if causal {
        Some("cross-attention has no causal mask: give causal false")
    } else if layout.rope.is_some() {
        Some("cross-attention has no rotary positions (rope)")
    } else if layout.relative_bias.is_some() {
        Some("cross-attention has no relative bias between its two sequences")
    } else if x_kv.ncols() != d {
        return Err(SpecError::new(
            "x_kv",
            format!("rows of width {d} (d_model, as x), found {}", x_kv.ncols()),
        ));
    } else {
        None
    };
    match why {
        Some(why) => Err(SpecError::new("x_kv", why)),
        None => Ok(()),
    }
}
