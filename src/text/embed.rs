//! Seeded embeddings: each token's vector is a pure function of (seed, token text), plus a sinusoidal position code.
//!
//! This is the untrained model's input layer. Nothing is learned, yet the vectors behave like an
//! embedding table: the same token gets the same vector at every position, in every sentence,
//! on every platform, and different tokens get independent random directions. The position code
//! is the fixed sinusoid of Vaswani et al. 2017 ("Attention Is All You Need", section 3.5), added
//! to the token vector as in that paper.

use ndarray::Array2;

use super::portable_math::{exp, sin_cos_turns};
use super::seeded::{normal_draws, Domain};
use super::tokenizer::Token;

/// Vectors for tokens without a trained table: `d_model` standard normal values per token text,
/// drawn from a stream keyed by `seed` and the text's [`fnv1a_64`] hash.
///
/// ```
/// use diffattn::text::{tokenize, SeededEmbedding};
///
/// let embedding = SeededEmbedding::new(8, 1);
/// let x = embedding.embed(&tokenize("not good, not bad"));
/// assert_eq!(x.dim(), (5, 8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeededEmbedding {
    /// The width of every vector.
    pub d_model: usize,
    /// Picks the whole table: another seed gives every token another vector.
    pub seed: u64,
}

impl SeededEmbedding {
    /// An embedding of width `d_model` whose table is picked by `seed`.
    ///
    /// ```
    /// use diffattn::text::SeededEmbedding;
    ///
    /// let embedding = SeededEmbedding::new(16, 7);
    /// assert_eq!((embedding.d_model, embedding.seed), (16, 7));
    /// ```
    pub fn new(d_model: usize, seed: u64) -> Self {
        Self { d_model, seed }
    }

    /// The vector of one token text, before any position is added: `d_model` values with mean 0
    /// and standard deviation 1.
    ///
    /// Standard deviation 1 matches the scale of the position code, whose entries lie in
    /// `[-1, 1]`, so neither term drowns the other.
    ///
    /// ```
    /// use diffattn::text::SeededEmbedding;
    ///
    /// let embedding = SeededEmbedding::new(4, 0);
    /// assert_eq!(embedding.token_vector("good"), embedding.token_vector("good"));
    /// assert_ne!(embedding.token_vector("good"), embedding.token_vector("bad"));
    /// ```
    pub fn token_vector(&self, text: &str) -> Vec<f32> {
        normal_draws(
            Domain::Tokens,
            self.seed,
            fnv1a_64(text.as_bytes()),
            self.d_model,
            1.0,
        )
    }

    /// The `(tokens, d_model)` matrix entering attention: row `p` is the vector of token `p`
    /// plus the sinusoidal code of position `p` (Vaswani et al. 2017, section 3.5).
    ///
    /// ```
    /// use diffattn::text::{sinusoidal_positions, tokenize, SeededEmbedding};
    ///
    /// let embedding = SeededEmbedding::new(6, 3);
    /// let tokens = tokenize("good good");
    /// let x = embedding.embed(&tokens);
    /// let positions = sinusoidal_positions(2, 6);
    /// // The same token at positions 0 and 1 differs only by the position term.
    /// let moved = &(&x.row(1) - &x.row(0)) - &(&positions.row(1) - &positions.row(0));
    /// assert!(moved.iter().all(|d| d.abs() < 1e-5));
    /// ```
    pub fn embed(&self, tokens: &[Token]) -> Array2<f32> {
        let mut x = sinusoidal_positions(tokens.len(), self.d_model);
        for (mut row, token) in x.rows_mut().into_iter().zip(tokens) {
            for (value, token_value) in row.iter_mut().zip(self.token_vector(&token.text)) {
                *value += token_value;
            }
        }
        x
    }
}

/// The sinusoidal position code of Vaswani et al. 2017, section 3.5, shape `(len, d_model)`:
/// `PE(pos, 2i) = sin(pos / 10000^(2i/d_model))` and `PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))`.
///
/// An odd `d_model` ends with a sine column whose cosine partner would lie past the edge. The
/// functions come from the crate's portable series, so the code is identical on every platform.
///
/// ```
/// use diffattn::text::sinusoidal_positions;
///
/// let pe = sinusoidal_positions(3, 5);
/// assert_eq!(pe.dim(), (3, 5));
/// // Position 0: every sine is 0 and every cosine is 1.
/// assert_eq!(pe.row(0).to_vec(), vec![0.0, 1.0, 0.0, 1.0, 0.0]);
/// // Column 0 has frequency 1: PE(1, 0) = sin 1.
/// assert!((pe[[1, 0]] - 1f32.sin()).abs() < 1e-6);
/// ```
pub fn sinusoidal_positions(len: usize, d_model: usize) -> Array2<f32> {
    // ln 10000 = 4 ln 10; multiplying by 4 is exact, so this constant is the same everywhere.
    let ln_10000 = 4.0 * core::f64::consts::LN_10;
    // Frequencies in turns per position: 10000^(-2i/d) / 2π, shared by columns 2i and 2i+1.
    let turns_per_position: Vec<f64> = (0..d_model.div_ceil(2))
        .map(|i| exp(-((2 * i) as f64 / d_model as f64) * ln_10000) / core::f64::consts::TAU)
        .collect();
    Array2::from_shape_fn((len, d_model), |(pos, column)| {
        let (sin, cos) = sin_cos_turns(pos as f64 * turns_per_position[column / 2]);
        if column % 2 == 0 {
            sin as f32
        } else {
            cos as f32
        }
    })
}

/// The 64-bit FNV-1a hash of `bytes` (Fowler, Noll and Vo; offset basis `0xcbf29ce484222325`,
/// prime `0x100000001b3`): for each byte, XOR it into the state, then multiply by the prime.
///
/// The embedding keys each token's stream with this hash of its UTF-8 text. It is written out
/// here rather than taken from `std`'s `DefaultHasher`, whose output may change between Rust
/// versions; FNV-1a is fixed by its definition, so a token keeps its vector forever.
///
/// ```
/// use diffattn::text::fnv1a_64;
///
/// // Reference values from the FNV authors' test suite.
/// assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
/// ```
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |state, &byte| {
        (state ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_match_the_formula() {
        // Compared with the platform's own sin and cos, which agree to float precision.
        let d_model = 7;
        let pe = sinusoidal_positions(50, d_model);
        for ((pos, column), &value) in pe.indexed_iter() {
            let i = column / 2;
            let angle = pos as f64 / 10000f64.powf((2 * i) as f64 / d_model as f64);
            let expected = if column % 2 == 0 {
                angle.sin()
            } else {
                angle.cos()
            };
            assert!(
                (f64::from(value) - expected).abs() < 1e-6,
                "PE({pos}, {column}) = {value}, expected {expected}"
            );
        }
    }

    #[test]
    fn a_token_vector_is_pinned() {
        // Computed independently from the definition (FNV-1a of "good", key
        // `0 ‖ hash ‖ "diffattn/tokens/"`, ChaCha8, Box–Muller) by a from-scratch Python script;
        // see `seeded::tests::the_first_values_are_pinned`.
        let bits: Vec<u32> = SeededEmbedding::new(4, 0)
            .token_vector("good")
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(
            bits,
            [3_210_122_323, 1_057_927_324, 1_067_543_130, 3_203_232_152]
        );
    }

    #[test]
    fn empty_inputs_give_empty_matrices() {
        assert_eq!(sinusoidal_positions(0, 4).dim(), (0, 4));
        assert_eq!(sinusoidal_positions(3, 0).dim(), (3, 0));
        assert_eq!(SeededEmbedding::new(4, 0).embed(&[]).dim(), (0, 4));
    }
}
