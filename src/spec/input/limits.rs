//! A spec checked against the limits of one request (`crate::text::limits`), and against what
//! the page draws.

use super::{Spec, SpecError};
use crate::text::limits::{
    grouped, map_cells, MAX_D_MODEL, MAX_MAP_CELLS, MAX_TOKENS, PAGE_MAX_TOKENS,
};

/// The most cells one stage of a spec the page draws may have, over all its softmax maps
/// (query heads × tokens × tokens): the library's [`MAX_MAP_CELLS`] counted in query heads, so
/// 8 query heads at [`PAGE_MAX_TOKENS`] = 2,048 tokens, 32 at 1,024 (a 1B model's layer, 16
/// diff heads of a DiffLlama), 128 at 512; 128 MiB of f32 per stage when every head is
/// computed (the page computes the shown one, and the others when asked).
pub const PAGE_MAX_STAGE_CELLS: usize = MAX_MAP_CELLS;

impl Spec {
    /// The cells of one of its maps, `heads × queries × keys` (keys are the steps between
    /// tokens for input-difference attention), or `None` if the product overflows.
    pub fn map_cells(&self) -> Option<usize> {
        map_cells(self.heads, self.x.nrows(), self.keys())
    }

    /// The keys of every map: the rows of `x_kv` (cross-attention, §7.10), else the tokens (the
    /// steps between them for input difference).
    pub fn keys(&self) -> usize {
        match &self.weights.layout.x_kv {
            Some(m) => m.nrows(),
            None => self
                .x
                .nrows()
                .saturating_sub(self.mechanism.kind().key_offset()),
        }
    }

    /// Checks the spec against [`MAX_TOKENS`], [`MAX_D_MODEL`] and [`MAX_MAP_CELLS`] before
    /// anything of that size is allocated. Parsing checks them as it reads; a spec built in code
    /// is checked here when it runs.
    pub fn check_limits(&self) -> Result<(), SpecError> {
        let tokens = self.x.nrows();
        if tokens > MAX_TOKENS {
            return Err(SpecError::new(
                "x",
                format!(
                    "{} tokens, more than the limit of {} (diffattn::text::limits::MAX_TOKENS)",
                    grouped(tokens),
                    grouped(MAX_TOKENS)
                ),
            ));
        }
        let d = self.weights.d_model();
        if d > MAX_D_MODEL {
            return Err(SpecError::new(
                "w_q",
                format!(
                    "d_model {}, more than the limit of {} (diffattn::text::limits::MAX_D_MODEL)",
                    grouped(d),
                    grouped(MAX_D_MODEL)
                ),
            ));
        }
        let keys = self.keys();
        match self.map_cells() {
            Some(cells) if cells <= MAX_MAP_CELLS => Ok(()),
            cells => Err(SpecError::new(
                "x",
                format!(
                    "{} tokens × {} keys × {} heads = {} cells per map, over the limit of {} \
                     (diffattn::text::limits::MAX_MAP_CELLS, 128 MiB of f32 per map); use \
                     fewer tokens or fewer heads",
                    grouped(tokens),
                    grouped(keys),
                    grouped(self.heads),
                    cells.map_or_else(|| "more than 2^64".to_string(), grouped),
                    grouped(MAX_MAP_CELLS),
                ),
            )),
        }
    }

    /// Why the page cannot draw this spec, if it cannot: it draws every layout and mechanism
    /// the CLI runs, up to [`PAGE_MAX_TOKENS`] tokens and [`PAGE_MAX_STAGE_CELLS`] cells per
    /// stage (every softmax map of every head), so that the maps of one layer fit in a
    /// browser tab's memory and its frame budgets. `diffattn stages` runs specs up to the
    /// library's limits.
    pub fn page_support(&self) -> Result<(), SpecError> {
        let tokens = self.x.nrows();
        if tokens > PAGE_MAX_TOKENS {
            return Err(SpecError::new(
                "x",
                format!(
                    "{} tokens, more than the page draws, {} \
                     (diffattn::text::limits::PAGE_MAX_TOKENS); `diffattn stages` runs specs of \
                     up to {} tokens",
                    grouped(tokens),
                    grouped(PAGE_MAX_TOKENS),
                    grouped(MAX_TOKENS)
                ),
            ));
        }
        let kind = self.mechanism.kind();
        let query_heads = self.heads.saturating_mul(kind.query_heads_per_head());
        let cells = query_heads.saturating_mul(tokens).saturating_mul(tokens);
        if cells > PAGE_MAX_STAGE_CELLS {
            return Err(SpecError::new(
                "heads",
                format!(
                    "{query_heads} softmax maps of {tokens} × {tokens} tokens are {} cells per \
                     stage, more than the page draws, {}; `diffattn stages` runs it",
                    grouped(cells),
                    grouped(PAGE_MAX_STAGE_CELLS)
                ),
            ));
        }
        Ok(())
    }
}
