//! Gated attention (Qiu et al. 2025, arXiv 2505.06708; Qwen3-Next's full-attention layers;
//! DESIGN.md §4.1): standard softmax attention per head, then the *output gate*, a sigmoid of
//! the token's own projection, multiplied elementwise onto each head's output before `W_o`:
//!
//! ```text
//! A_h = softmax(Q_h·K_hᵀ / sqrt(d_h) + M)
//! Gₒ[t, h, c] = σ((x·W_ogᵀ + b_og)[t, h·d_h + c])
//! O_h = (A_h·V_h) ⊙ Gₒ[:, h, :],   O = concat_h(O_h)·W_oᵀ + b_o
//! ```
//!
//! The maps are standard attention's ([`crate::engine::standard::maps_into`]); what this module
//! adds is the gate: its values from the projection's logits ([`gate`]), its mean over each
//! head's channels ([`mean_table`], the one table the page draws for every head, like V2's λ)
//! and its product with the heads' concatenation ([`gate_into`]). The gate is named apart from
//! shift-difference attention's `G` (§2), which weighs maps, not values.

use std::ops::Range;

use ndarray::{s, Array2, ArrayView2, Axis};

use super::error::EngineError;
use super::head_shape::HeadShape;
use super::numeric::sigmoid;
use super::projection::Weights;

/// Checks that `weights` have an output gate of `heads · d_h` rows of width `d` (one row per
/// query channel), as `shape` splits the queries.
pub fn check(weights: &Weights, shape: &HeadShape) -> Result<(), EngineError> {
    let rows = shape.heads * shape.head_dim;
    let d = weights.d_model();
    let Some(g) = &weights.output_gate else {
        return Err(EngineError::Shape {
            field: "w_output_gate",
            expected: format!("a {rows} x {d} matrix (gated_attention needs it)"),
            found: "none".to_string(),
        });
    };
    if g.w.dim() != (rows, d) {
        return Err(EngineError::Shape {
            field: "w_output_gate",
            expected: format!(
                "{rows} x {d} (heads {} x head_dim {}, d_model {d})",
                shape.heads, shape.head_dim
            ),
            found: format!("{} x {}", g.w.nrows(), g.w.ncols()),
        });
    }
    Ok(())
}

/// The gate `Gₒ = σ(logits)`, `(tokens, heads · d_h)`: column `h·d_h + c` is head `h`'s channel
/// `c`. `logits` are the projection's `x·W_ogᵀ + b_og`; without them (weights with no output
/// gate) the error names `w_output_gate`.
pub fn gate(logits: Option<&Array2<f32>>, width: usize) -> Result<Array2<f32>, EngineError> {
    let logits = logits.ok_or_else(|| EngineError::Shape {
        field: "w_output_gate",
        expected: format!("{width} rows (gated_attention needs it)"),
        found: "none".to_string(),
    })?;
    if logits.ncols() != width {
        return Err(EngineError::Shape {
            field: "w_output_gate",
            expected: format!("{width} rows (heads x head_dim)"),
            found: format!("{} rows", logits.ncols()),
        });
    }
    Ok(logits.mapv(sigmoid))
}

/// The gate's mean over each head's `d_h` channels, `(tokens, heads)`: row `t`, column `h` is
/// `mean_c Gₒ[t, h, c]` (summed from channel 0 up, then divided by `d_h`).
pub fn mean_table(gate: ArrayView2<f32>, heads: usize, d_h: usize) -> Array2<f32> {
    let tokens = gate.nrows();
    let mut table = Array2::zeros((tokens, heads));
    if d_h == 0 {
        return table;
    }
    for (t, row) in gate.axis_iter(Axis(0)).enumerate() {
        for h in 0..heads {
            let sum: f32 = row.slice(s![h * d_h..(h + 1) * d_h]).iter().sum();
            table[(t, h)] = sum / d_h as f32;
        }
    }
    table
}

/// Multiplies the heads `of`'s columns of the heads' concatenation `concat`
/// (`(tokens, heads · d_h)`, each head's `A_h·V_h`) by the gate `σ(logits)`, cell by cell:
/// afterwards they hold `O_h = (A_h·V_h) ⊙ Gₒ[:, h, :]`, with the bits of [`gate`]'s cells.
pub fn gate_into(
    concat: &mut Array2<f32>,
    logits: Option<&Array2<f32>>,
    of: Range<usize>,
    d_h: usize,
) -> Result<(), EngineError> {
    let width = concat.ncols();
    let logits = logits.ok_or_else(|| EngineError::Shape {
        field: "w_output_gate",
        expected: format!("{width} rows (gated_attention needs it)"),
        found: "none".to_string(),
    })?;
    let cols = of.start * d_h..of.end * d_h;
    if logits.nrows() != concat.nrows() || cols.end > logits.ncols() || cols.end > width {
        return Err(EngineError::Shape {
            field: "w_output_gate",
            expected: format!("{width} rows (heads x head_dim)"),
            found: format!("{} rows", logits.ncols()),
        });
    }
    concat
        .slice_mut(s![.., cols.clone()])
        .zip_mut_with(&logits.slice(s![.., cols]), |o, &z| *o *= sigmoid(z));
    Ok(())
}
