//! A bidirectional LSTM encoder, forward pass only: the encoder the BiLSTM article puts in
//! front of input-difference attention (DESIGN.md §4).
//!
//! The equations and the weight layout are PyTorch's `nn.LSTM` (Hochreiter and Schmidhuber
//! 1997, with the forget gate of Gers et al. 2000), so weights exported from PyTorch load as
//! they are. For each step `t` with input `x_t`, previous hidden state `h` and cell `c`:
//!
//! ```text
//! z   = W_ih·x_t + b_ih + W_hh·h + b_hh       (4·hidden values, in the gate order i, f, g, o)
//! i   = σ(z[0..n])     f = σ(z[n..2n])     g = tanh(z[2n..3n])     o = σ(z[3n..4n])
//! c'  = f ⊙ c + i ⊙ g
//! h'  = o ⊙ tanh(c')
//! ```
//!
//! starting from `h = c = 0`. The forward direction reads tokens `0, 1, …, L-1`, the backward
//! direction `L-1, …, 0`; row `t` of the output is `[h_fwd(t); h_bwd(t)]`, width `2·hidden`.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

use super::error::EngineError;
use super::numeric::{saturate, sigmoid};

/// One direction's weights, PyTorch layout: `w_ih` is `(4·hidden, input)`, `w_hh` is
/// `(4·hidden, hidden)`, both biases have `4·hidden` values; rows are grouped `i, f, g, o`.
#[derive(Debug, Clone, PartialEq)]
pub struct LstmWeights {
    /// Input-to-gates weights `(4·hidden, input)`.
    pub w_ih: Array2<f32>,
    /// Hidden-to-gates weights `(4·hidden, hidden)`.
    pub w_hh: Array2<f32>,
    /// Input-side bias `(4·hidden)`.
    pub b_ih: Array1<f32>,
    /// Hidden-side bias `(4·hidden)`.
    pub b_hh: Array1<f32>,
}

impl LstmWeights {
    /// Checks the four shapes against each other and returns `(input, hidden)`.
    pub fn check(&self, field: &'static str) -> Result<(usize, usize), EngineError> {
        let hidden = self.w_hh.ncols();
        let input = self.w_ih.ncols();
        let four = 4 * hidden;
        let shape_error = |found: String| EngineError::Shape {
            field,
            expected: format!(
                "w_ih (4·hidden, input), w_hh (4·hidden, hidden), b_ih and b_hh (4·hidden) \
                 with hidden = {hidden}"
            ),
            found,
        };
        if hidden == 0 {
            return Err(EngineError::ZeroWidth);
        }
        if self.w_ih.nrows() != four
            || self.w_hh.nrows() != four
            || self.b_ih.len() != four
            || self.b_hh.len() != four
        {
            return Err(shape_error(format!(
                "w_ih {:?}, w_hh {:?}, b_ih {}, b_hh {}",
                self.w_ih.dim(),
                self.w_hh.dim(),
                self.b_ih.len(),
                self.b_hh.len()
            )));
        }
        Ok((input, hidden))
    }

    /// The hidden width.
    pub fn hidden(&self) -> usize {
        self.w_hh.ncols()
    }

    /// One step: the new `(h, c)` from the input `x` and the previous `(h, c)`.
    fn step(&self, x: ArrayView1<f32>, h: &Array1<f32>, c: &Array1<f32>) -> [Array1<f32>; 2] {
        let n = self.hidden();
        let z = self.w_ih.dot(&x) + &self.b_ih + self.w_hh.dot(h) + &self.b_hh;
        let mut h_next = Array1::<f32>::zeros(n);
        let mut c_next = Array1::<f32>::zeros(n);
        for k in 0..n {
            let i = sigmoid(saturate(z[k]));
            let f = sigmoid(saturate(z[n + k]));
            let g = saturate(z[2 * n + k]).tanh();
            let o = sigmoid(saturate(z[3 * n + k]));
            c_next[k] = saturate(f * c[k] + i * g);
            h_next[k] = o * c_next[k].tanh();
        }
        [h_next, c_next]
    }

    /// Runs over the rows of `x` in the given order and writes each `h` into `out`'s columns
    /// `column..column + hidden`.
    fn run_into(
        &self,
        x: ArrayView2<f32>,
        order: impl Iterator<Item = usize>,
        out: &mut Array2<f32>,
        column: usize,
    ) {
        let n = self.hidden();
        let mut h = Array1::<f32>::zeros(n);
        let mut c = Array1::<f32>::zeros(n);
        for t in order {
            let [h_next, c_next] = self.step(x.row(t), &h, &c);
            h = h_next;
            c = c_next;
            for k in 0..n {
                out[[t, column + k]] = h[k];
            }
        }
    }
}

/// A bidirectional LSTM: a forward and a backward direction of the same hidden width.
#[derive(Debug, Clone, PartialEq)]
pub struct BiLstm {
    /// Reads tokens left to right.
    pub forward: LstmWeights,
    /// Reads tokens right to left.
    pub backward: LstmWeights,
}

impl BiLstm {
    /// A BiLSTM from its two directions, checked: both must have the same input and hidden
    /// widths.
    pub fn new(forward: LstmWeights, backward: LstmWeights) -> Result<BiLstm, EngineError> {
        let f = forward.check("bilstm.forward")?;
        let b = backward.check("bilstm.backward")?;
        if f != b {
            return Err(EngineError::Shape {
                field: "bilstm.backward",
                expected: format!(
                    "input {} and hidden {} like the forward direction",
                    f.0, f.1
                ),
                found: format!("input {} and hidden {}", b.0, b.1),
            });
        }
        Ok(BiLstm { forward, backward })
    }

    /// The input width.
    pub fn input_width(&self) -> usize {
        self.forward.w_ih.ncols()
    }

    /// The output width, `2·hidden`.
    pub fn output_width(&self) -> usize {
        2 * self.forward.hidden()
    }

    /// Encodes `x` (`(tokens, input)`) into `(tokens, 2·hidden)`: row `t` is
    /// `[h_forward(t); h_backward(t)]`.
    ///
    /// ```
    /// use diffattn::engine::bilstm::{BiLstm, LstmWeights};
    /// use ndarray::{Array1, Array2};
    ///
    /// // Zero weights: every gate is σ(0) = 1/2 and g = tanh(0) = 0, so c and h stay 0.
    /// let zero = LstmWeights {
    ///     w_ih: Array2::zeros((4, 3)),
    ///     w_hh: Array2::zeros((4, 1)),
    ///     b_ih: Array1::zeros(4),
    ///     b_hh: Array1::zeros(4),
    /// };
    /// let lstm = BiLstm::new(zero.clone(), zero).unwrap();
    /// let h = lstm.encode(Array2::<f32>::ones((5, 3)).view()).unwrap();
    /// assert_eq!(h.dim(), (5, 2));
    /// assert!(h.iter().all(|&v| v == 0.0));
    /// ```
    pub fn encode(&self, x: ArrayView2<f32>) -> Result<Array2<f32>, EngineError> {
        if x.ncols() != self.input_width() {
            return Err(EngineError::Shape {
                field: "x",
                expected: format!("rows of width {} (the BiLSTM's input)", self.input_width()),
                found: format!("rows of width {}", x.ncols()),
            });
        }
        let n = self.forward.hidden();
        let len = x.nrows();
        let mut out = Array2::<f32>::zeros((len, 2 * n));
        self.forward.run_into(x, 0..len, &mut out, 0);
        self.backward.run_into(x, (0..len).rev(), &mut out, n);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// hidden = 1, input = 1: w_ih = [1, 2, 3, 4]ᵀ (i, f, g, o), w_hh = [0.5, 0.5, 0.5, 0.5]ᵀ,
    /// b_ih = [0, 1, 0, 0], b_hh = [0, 0, 0, -1].
    fn tiny() -> LstmWeights {
        LstmWeights {
            w_ih: array![[1.0], [2.0], [3.0], [4.0]],
            w_hh: array![[0.5], [0.5], [0.5], [0.5]],
            b_ih: array![0.0, 1.0, 0.0, 0.0],
            b_hh: array![0.0, 0.0, 0.0, -1.0],
        }
    }

    fn sig(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// The hand-derived step: from (h, c) and input x, with the weights of [`tiny`].
    fn by_hand(x: f64, h: f64, c: f64) -> (f64, f64) {
        let i = sig(x + 0.5 * h);
        let f = sig(2.0 * x + 1.0 + 0.5 * h);
        let g = (3.0 * x + 0.5 * h).tanh();
        let o = sig(4.0 * x - 1.0 + 0.5 * h);
        let c = f * c + i * g;
        (o * c.tanh(), c)
    }

    #[test]
    fn one_step_matches_the_equations() {
        // x = 1 from h = c = 0: i = σ(1) = 0.7311, f = σ(3) = 0.9526, g = tanh(3) = 0.9951,
        // o = σ(3) = 0.9526; c = i·g = 0.7275, h = o·tanh(c) = 0.9526 · 0.6216 = 0.5921.
        let lstm = BiLstm::new(tiny(), tiny()).unwrap();
        let h = lstm.encode(array![[1.0f32]].view()).unwrap();
        assert!((h[[0, 0]] - 0.5921).abs() < 1e-4, "{h}");
        // One token: the backward direction sees the same single step.
        assert_eq!(h[[0, 0]], h[[0, 1]]);
    }

    #[test]
    fn directions_read_in_opposite_orders() {
        let xs = [1.0f64, -0.5, 2.0];
        let lstm = BiLstm::new(tiny(), tiny()).unwrap();
        let x = Array2::from_shape_fn((3, 1), |(t, _)| xs[t] as f32);
        let out = lstm.encode(x.view()).unwrap();
        let (mut h, mut c) = (0.0, 0.0);
        for t in 0..3 {
            (h, c) = by_hand(xs[t], h, c);
            assert!((f64::from(out[[t, 0]]) - h).abs() < 1e-6, "forward t = {t}");
        }
        let (mut h, mut c) = (0.0, 0.0);
        for t in (0..3).rev() {
            (h, c) = by_hand(xs[t], h, c);
            assert!(
                (f64::from(out[[t, 1]]) - h).abs() < 1e-6,
                "backward t = {t}"
            );
        }
    }

    #[test]
    fn gate_order_is_i_f_g_o() {
        // Only the o rows see the input: with i = f = σ(0) = 1/2 and g = tanh(0) = 0 the cell
        // stays 0, so h = o·tanh(0) = 0 whatever o is. Move the weight to g instead and the
        // cell fills: c = ½·tanh(2), h = ½·tanh(c).
        let mut w = tiny();
        w.w_ih = array![[0.0], [0.0], [2.0], [0.0]];
        w.w_hh.fill(0.0);
        w.b_ih.fill(0.0);
        w.b_hh.fill(0.0);
        let lstm = BiLstm::new(w.clone(), w).unwrap();
        let h = lstm.encode(array![[1.0f32]].view()).unwrap();
        let c = 0.5 * 2f64.tanh();
        assert!((f64::from(h[[0, 0]]) - 0.5 * c.tanh()).abs() < 1e-6);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let mut w = tiny();
        w.b_hh = array![0.0, 0.0];
        assert!(BiLstm::new(w, tiny()).is_err());
        let lstm = BiLstm::new(tiny(), tiny()).unwrap();
        assert!(lstm.encode(Array2::<f32>::zeros((2, 3)).view()).is_err());
        // No tokens: an empty encoding.
        assert_eq!(
            lstm.encode(Array2::<f32>::zeros((0, 1)).view())
                .unwrap()
                .dim(),
            (0, 2)
        );
    }
}
