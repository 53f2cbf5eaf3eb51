//! Errors the engine reports instead of panicking: shapes and head counts that do not fit.

use std::fmt;

/// Why the engine refused its input. Messages name the spec field at fault (DESIGN.md §6), so
/// the CLI and the page can show them as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The number of heads is zero.
    ZeroHeads,
    /// The number of heads does not divide the width that has to be split among them.
    HeadsDoNotDivide {
        /// The width being split (`d`, or `d / 2` for the Differential Transformer).
        width: usize,
        /// The requested number of heads.
        heads: usize,
        /// Which mechanism asked, for the message.
        what: &'static str,
    },
    /// A matrix or vector has the wrong size.
    Shape {
        /// The spec field at fault, such as `w_q` or `gate.alpha`.
        field: &'static str,
        /// What was expected, in words (`"32 x 32"`).
        expected: String,
        /// What was found.
        found: String,
    },
    /// A sequence with no tokens: there is nothing to attend over.
    EmptySequence,
    /// A model width of zero.
    ZeroWidth,
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::ZeroHeads => write!(f, "heads: must be at least 1"),
            EngineError::HeadsDoNotDivide { width, heads, what } => write!(
                f,
                "heads: {heads} does not divide {what} {width}; choose a divisor of {width}"
            ),
            EngineError::Shape {
                field,
                expected,
                found,
            } => write!(f, "{field}: expected {expected}, found {found}"),
            EngineError::EmptySequence => write!(f, "x: needs at least one token (row)"),
            EngineError::ZeroWidth => write!(f, "x: rows need at least one column (d_model >= 1)"),
        }
    }
}

impl std::error::Error for EngineError {}
