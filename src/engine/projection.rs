//! The layer's weights and the linear maps around attention: `Q, K, V = X·Wᵀ + b`, head
//! splitting, and the output projection `·W_oᵀ + b_o` (DESIGN.md §1, §7.1).

use ndarray::{s, Array1, Array2, ArrayView2};

use super::error::EngineError;
use super::kernels;
use super::layout::Layout;
use super::numeric::saturate_all;

/// The projection matrices of one attention layer, PyTorch layout `[out, in]`, with the
/// optional parts of a real layer: biases, V2's λ projection and the head layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    /// Query projection `W_q`.
    pub w_q: Array2<f32>,
    /// Key projection `W_k`.
    pub w_k: Array2<f32>,
    /// Value projection `W_v`.
    pub w_v: Array2<f32>,
    /// Output projection `W_o`.
    pub w_o: Array2<f32>,
    /// `b_q`, `b_k`, `b_v`, `b_o`, each optional.
    pub biases: Biases,
    /// Differential Transformer V2's `W_λ`, `(heads, d)`: `λ = σ(x·W_λᵀ)` (§7.5).
    pub w_lambda: Option<Array2<f32>>,
    /// Gated attention's output gate `W_og`, `(heads · d_h, d)`, and its optional bias `b_og`:
    /// `Gₒ = σ(x·W_ogᵀ + b_og)` (§4.1; not shift-difference's gate `G`).
    pub output_gate: Option<OutputGateWeights>,
    /// How the projections split into heads, and the rotary positions.
    pub layout: Layout,
}

/// Gated attention's output gate projection (DESIGN.md §4.1): one row per query channel.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputGateWeights {
    /// `W_og`, `(heads · d_h, d)`.
    pub w: Array2<f32>,
    /// `b_og`, one value per row of `W_og`.
    pub b: Option<Array1<f32>>,
}

/// The optional biases of the four projections, one value per output row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Biases {
    /// `b_q`.
    pub b_q: Option<Array1<f32>>,
    /// `b_k`.
    pub b_k: Option<Array1<f32>>,
    /// `b_v`.
    pub b_v: Option<Array1<f32>>,
    /// `b_o`.
    pub b_o: Option<Array1<f32>>,
}

impl Biases {
    /// Checks that each bias has one value per row of its matrix.
    pub fn check(&self, w: &Weights) -> Result<(), EngineError> {
        for (field, b, m) in [
            ("b_q", &self.b_q, &w.w_q),
            ("b_k", &self.b_k, &w.w_k),
            ("b_v", &self.b_v, &w.w_v),
            ("b_o", &self.b_o, &w.w_o),
        ] {
            if let Some(b) = b {
                if b.len() != m.nrows() {
                    return Err(EngineError::Shape {
                        field,
                        expected: format!("{} values (rows of w_{})", m.nrows(), &field[2..]),
                        found: format!("{} values", b.len()),
                    });
                }
            }
        }
        Ok(())
    }
}

impl Weights {
    /// Checks that all four matrices are `d x d` for one `d >= 1`.
    pub fn new(
        w_q: Array2<f32>,
        w_k: Array2<f32>,
        w_v: Array2<f32>,
        w_o: Array2<f32>,
    ) -> Result<Weights, EngineError> {
        let d = w_q.nrows();
        if d == 0 {
            return Err(EngineError::ZeroWidth);
        }
        for (field, w) in [("w_q", &w_q), ("w_k", &w_k), ("w_v", &w_v), ("w_o", &w_o)] {
            if w.dim() != (d, d) {
                return Err(EngineError::Shape {
                    field,
                    expected: format!("{d} x {d} (d_model x d_model, from w_q's rows)"),
                    found: format!("{} x {}", w.nrows(), w.ncols()),
                });
            }
        }
        Ok(Weights::unchecked(w_q, w_k, w_v, w_o))
    }

    /// The projections of a real layer (DESIGN.md §7.1): `w_q`, `w_k`, `w_v` read rows of width
    /// `d` (the rows of `w_o`); their heights, the biases and the layout are checked against the
    /// heads when the layer runs ([`HeadShape::resolve`](super::head_shape::HeadShape::resolve)).
    pub fn real(
        w_q: Array2<f32>,
        w_k: Array2<f32>,
        w_v: Array2<f32>,
        w_o: Array2<f32>,
        biases: Biases,
        w_lambda: Option<Array2<f32>>,
        layout: Layout,
    ) -> Result<Weights, EngineError> {
        let d = w_o.nrows();
        if d == 0 {
            return Err(EngineError::ZeroWidth);
        }
        // V2's `w_lambda` reads `x` too (one row per head): its rows are as wide as the others'.
        let widths = [
            ("w_q", Some(&w_q)),
            ("w_k", Some(&w_k)),
            ("w_v", Some(&w_v)),
            ("w_lambda", w_lambda.as_ref()),
        ];
        for (field, w) in widths.into_iter().filter_map(|(f, w)| w.map(|w| (f, w))) {
            if w.ncols() != d {
                return Err(EngineError::Shape {
                    field,
                    expected: format!("rows of width {d} (d_model, the rows of w_o)"),
                    found: format!("rows of width {}", w.ncols()),
                });
            }
        }
        let weights = Weights {
            biases,
            w_lambda,
            layout,
            ..Weights::unchecked(w_q, w_k, w_v, w_o)
        };
        weights.biases.check(&weights)?;
        Ok(weights)
    }

    fn unchecked(
        w_q: Array2<f32>,
        w_k: Array2<f32>,
        w_v: Array2<f32>,
        w_o: Array2<f32>,
    ) -> Weights {
        Weights {
            w_q,
            w_k,
            w_v,
            w_o,
            biases: Biases::default(),
            w_lambda: None,
            output_gate: None,
            layout: Layout::default(),
        }
    }

    /// These weights with gated attention's output gate `W_og` (and its bias `b_og`): `W_og`
    /// reads rows of width `d`, and the bias has one value per row of `W_og`. Its height is
    /// checked against the heads when the layer runs.
    pub fn with_output_gate(
        self,
        w: Array2<f32>,
        b: Option<Array1<f32>>,
    ) -> Result<Weights, EngineError> {
        let d = self.d_model();
        if w.ncols() != d {
            return Err(EngineError::Shape {
                field: "w_output_gate",
                expected: format!("rows of width {d} (d_model, the rows of w_o)"),
                found: format!("rows of width {}", w.ncols()),
            });
        }
        if let Some(b) = &b {
            if b.len() != w.nrows() {
                return Err(EngineError::Shape {
                    field: "b_output_gate",
                    expected: format!("{} values (rows of w_output_gate)", w.nrows()),
                    found: format!("{} values", b.len()),
                });
            }
        }
        Ok(Weights {
            output_gate: Some(OutputGateWeights { w, b }),
            ..self
        })
    }

    /// The output gate's logits `X·W_ogᵀ + b_og`, `(tokens, heads · d_h)`, when the weights
    /// have `W_og`.
    pub fn output_gate_logits(&self, x: ArrayView2<f32>) -> Option<Array2<f32>> {
        let g = self.output_gate.as_ref()?;
        Some(affine(x, g.w.view(), g.b.as_ref()))
    }

    /// `Q = X·W_qᵀ + b_q`.
    pub fn queries(&self, x: ArrayView2<f32>) -> Array2<f32> {
        affine(x, self.w_q.view(), self.biases.b_q.as_ref())
    }

    /// `K = X·W_kᵀ + b_k`.
    pub fn keys(&self, x: ArrayView2<f32>) -> Array2<f32> {
        affine(x, self.w_k.view(), self.biases.b_k.as_ref())
    }

    /// `V = X·W_vᵀ + b_v`.
    pub fn values(&self, x: ArrayView2<f32>) -> Array2<f32> {
        affine(x, self.w_v.view(), self.biases.b_v.as_ref())
    }

    /// `concat · W_oᵀ + b_o`.
    pub fn out(&self, concat: ArrayView2<f32>) -> Array2<f32> {
        affine(concat, self.w_o.view(), self.biases.b_o.as_ref())
    }

    /// The model width `d`: the width of the input rows (and of the output).
    pub fn d_model(&self) -> usize {
        self.w_o.nrows()
    }

    /// Checks that `x` is a non-empty `(tokens, d)` sequence for these weights.
    pub fn check_input(&self, x: ArrayView2<f32>) -> Result<(), EngineError> {
        if x.nrows() == 0 {
            return Err(EngineError::EmptySequence);
        }
        if x.ncols() != self.d_model() {
            return Err(EngineError::Shape {
                field: "x",
                expected: format!("rows of width {} (d_model, from w_q)", self.d_model()),
                found: format!("rows of width {}", x.ncols()),
            });
        }
        Ok(())
    }
}

/// `y = x·Wᵀ` for a PyTorch-layout weight, saturated so that overflow never yields NaN.
///
/// ```
/// use diffattn::engine::projection::linear;
/// use ndarray::array;
/// // W = [[1, 2], [0, 1]] maps x = [3, 4] to [1·3 + 2·4, 0·3 + 1·4] = [11, 4].
/// let y = linear(array![[3.0f32, 4.0]].view(), array![[1.0f32, 2.0], [0.0, 1.0]].view());
/// assert_eq!(y, array![[11.0f32, 4.0]]);
/// ```
pub fn linear(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    kernels::matmul(x, w.t(), 1.0)
}

/// `y = x·Wᵀ + b` (no bias: [`linear`]).
pub fn affine(x: ArrayView2<f32>, w: ArrayView2<f32>, b: Option<&Array1<f32>>) -> Array2<f32> {
    let mut y = linear(x, w);
    if let Some(b) = b {
        y += b;
        saturate_all(&mut y);
    }
    y
}

/// The queries, keys and values of one sentence, `(tokens, d)` each, before head splitting.
#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    /// `Q = X·W_qᵀ + b_q`.
    pub q: Array2<f32>,
    /// `K = X·W_kᵀ + b_k`.
    pub k: Array2<f32>,
    /// `V = X·W_vᵀ + b_v`.
    pub v: Array2<f32>,
    /// `X·W_λᵀ`, `(tokens, heads)`, when the weights have V2's `W_λ`.
    pub lambda_logits: Option<Array2<f32>>,
    /// `X·W_ogᵀ + b_og`, `(tokens, heads · d_h)`, when the weights have gated attention's
    /// output gate.
    pub gate_logits: Option<Array2<f32>>,
}

impl Projected {
    /// Projects one sequence; queries, keys and values all come from `x` (DESIGN.md §1).
    pub fn new(x: ArrayView2<f32>, weights: &Weights) -> Projected {
        Projected {
            q: weights.queries(x),
            k: weights.keys(x),
            v: weights.values(x),
            lambda_logits: weights.w_lambda.as_ref().map(|w| linear(x, w.view())),
            gate_logits: weights.output_gate_logits(x),
        }
    }
}

/// The width of one head when `width` is split among `heads`, or why it cannot be.
///
/// ```
/// use diffattn::engine::projection::head_width;
/// assert_eq!(head_width(64, 8, "d_model").unwrap(), 8);
/// assert!(head_width(64, 3, "d_model").is_err());
/// assert!(head_width(64, 0, "d_model").is_err());
/// ```
pub fn head_width(width: usize, heads: usize, what: &'static str) -> Result<usize, EngineError> {
    if heads == 0 {
        return Err(EngineError::ZeroHeads);
    }
    if width % heads != 0 {
        return Err(EngineError::HeadsDoNotDivide { width, heads, what });
    }
    Ok(width / heads)
}

/// Head `h` of a `(tokens, d)` matrix split column-wise into heads of width `d_h`.
pub fn head(m: ArrayView2<'_, f32>, h: usize, d_h: usize) -> ArrayView2<'_, f32> {
    m.slice_move(s![.., h * d_h..(h + 1) * d_h])
}
