//! The layer's weights and the linear maps around attention: `Q, K, V = X·Wᵀ`, head splitting,
//! and `O = concat_h(A_h·V_h)·W_oᵀ` (DESIGN.md §1).

use ndarray::{s, Array2, Array3, ArrayView2, Axis};

use super::error::EngineError;
use super::kernels::{self, PackedB};

/// The four `d x d` projection matrices of one attention layer, PyTorch layout `[out, in]`.
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
        Ok(Weights { w_q, w_k, w_v, w_o })
    }

    /// The model width `d`.
    pub fn d_model(&self) -> usize {
        self.w_q.nrows()
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

/// The queries, keys and values of one sentence, `(tokens, d)` each, before head splitting.
#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    /// `Q = X·W_qᵀ`.
    pub q: Array2<f32>,
    /// `K = X·W_kᵀ`.
    pub k: Array2<f32>,
    /// `V = X·W_vᵀ`.
    pub v: Array2<f32>,
}

impl Projected {
    /// Projects one sequence; queries, keys and values all come from `x` (DESIGN.md §1).
    pub fn new(x: ArrayView2<f32>, weights: &Weights) -> Projected {
        Projected {
            q: linear(x, weights.w_q.view()),
            k: linear(x, weights.w_k.view()),
            v: linear(x, weights.w_v.view()),
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

/// `O = concat_h(A_h·V_h)·W_oᵀ`: mixes the values with each head's map and projects back.
///
/// `maps` has shape `(heads, queries, keys)` and `v` shape `(keys, d)`; head `h` uses columns
/// `h·d_v .. (h+1)·d_v` of `v` where `d_v = d / heads`.
pub fn mix_values(maps: &Array3<f32>, v: ArrayView2<f32>, w_o: ArrayView2<f32>) -> Array2<f32> {
    let (heads, queries, _) = maps.dim();
    let d = v.ncols();
    let d_v = d / heads.max(1);
    let mut concat = Array2::<f32>::zeros((queries, d));
    let cells = concat.as_slice_mut().expect("a fresh array is contiguous");
    for (h, map) in maps.axis_iter(Axis(0)).enumerate() {
        // saturate(A_h·V_h), straight into columns h·d_v .. (h+1)·d_v of the concatenation.
        let v_h = PackedB::new(head(v, h, d_v));
        let map = map.as_standard_layout();
        let keys = map.ncols();
        let a = map.as_slice().expect("standard layout");
        v_h.mul_rows(a, keys, 0..queries, 0..d_v, 1.0, &mut cells[h * d_v..], d);
    }
    linear(concat.view(), w_o)
}
