//! A block of a layer's stack: some heads and some query rows, what one call of a staged step
//! ([`crate::engine::steps`]) computes.

use std::ops::Range;

use super::error::EngineError;
use super::standard;

/// A part of a layer's stack that one call of a step computes: the heads `heads` (of the
/// layer's `H`) and the query rows `queries` (of its `L` tokens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The heads, from 0 (diff heads for the Differential Transformers).
    pub heads: Range<usize>,
    /// The query rows, from 0.
    pub queries: Range<usize>,
}

impl Block {
    /// Every head and every row: the whole stack.
    pub fn all(heads: usize, tokens: usize) -> Block {
        Block {
            heads: 0..heads,
            queries: 0..tokens,
        }
    }

    /// Every row of one head.
    pub fn head(head: usize, tokens: usize) -> Block {
        Block {
            heads: head..head + 1,
            queries: 0..tokens,
        }
    }

    /// Checks that the heads are within `0..heads` and the rows within `0..tokens`.
    pub(crate) fn check(&self, heads: usize, tokens: usize) -> Result<(), EngineError> {
        if self.heads.start > self.heads.end || self.heads.end > heads {
            return Err(EngineError::Shape {
                field: "head",
                expected: format!("heads within 0..{heads}"),
                found: format!("{:?}", self.heads),
            });
        }
        standard::check_rows(&self.queries, tokens)
    }
}
