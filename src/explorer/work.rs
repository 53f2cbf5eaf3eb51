//! The work of the page, in short pieces: the projections, then each head's maps, λ and shift
//! stages, then the layer output, each kept in a cache until something it depends on changes.
//!
//! A piece ([`Explorer::work`]) is one call of one of the engine's staged steps over a block
//! of rows ([`crate::engine::Block`]) small enough to leave room for a frame (about
//! [`PIECE_CELLS`] cells), so the page can spread a long sentence over many tasks and answer a
//! slider between two of them. What it works toward is a [`Need`]: the shown head (what the
//! explore view draws), or every head and the layer output (the all-heads view, the
//! prediction). The shown head always comes first. Every piece has the bits the whole stack
//! has (the engine's steps compute each row alone), so the order of the pieces never shows.

use std::cell::RefCell;

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::{Explorer, Source};
use crate::engine::shift_diff::ShiftDiffMaps;
use crate::engine::{
    apply_lambda, base_maps_into, lambda_table, mix_into, output_gate_table, shift_stages_into,
    BaseMaps, Block, EngineError, Mechanism, MechanismKind, Projection, StageId,
};
use crate::model::Prediction;
use crate::render::MapStats;

/// About how many cells one piece of work computes: 2^17 cells are 512 KB of one map, a few
/// milliseconds of the slowest step in wasm (docs/PERFORMANCE.md, "One path for heavy work").
pub const PIECE_CELLS: usize = 1 << 17;

/// The rows one piece covers when a map has `columns` columns: whole blocks of 16 rows (the
/// engine's own row block), at least one block.
pub fn piece_rows(columns: usize) -> usize {
    let rows = PIECE_CELLS / columns.max(1);
    (rows / 16).max(1) * 16
}

/// What the work is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The shown head's stages: what the explore view draws.
    Shown,
    /// Every head's stages and the layer output: the all-heads view, the prediction.
    Every,
}

/// How far the work toward a [`Need`] is: heads done of the heads it needs, and whether
/// everything is (for [`Need::Every`] the layer output too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Heads up to date.
    pub done: usize,
    /// Heads needed.
    pub total: usize,
    /// Whether everything needed is up to date.
    pub finished: bool,
}

/// What is kept of one head: its maps, λ in them, and its shift stages, each with the rows
/// computed so far. Buffers stay when a setting clears them, so the next computation refills
/// them rather than allocating (a dragged shift slider recomputes the shift stages every
/// frame).
#[derive(Debug, Clone)]
pub(super) struct HeadCache {
    /// Its maps before any shift, one map per stack.
    base: BaseMaps,
    /// Rows of `base` computed.
    base_rows: usize,
    /// Whether λ is put into `base` (after its last row).
    lambda_done: bool,
    /// Its shift stages, for the mechanisms that have them.
    shift: ShiftDiffMaps,
    /// Rows of `shift` computed; `None` when the mechanism has no shift stages.
    shift_rows: Option<usize>,
    /// Whether everything it keeps is up to date.
    fresh: bool,
    /// The extremes of each map drawn so far ([`MapStats`]), found once per map and kept with
    /// it: a redraw (a zoom, a hover's highlight, another head and back) scans no map again.
    stats: RefCell<Vec<(StageId, MapStats)>>,
    /// The extremes of the rows computed so far of the maps being computed, found by each piece
    /// while its rows are still in cache; they join `stats` when their map is complete.
    partial: Vec<(StageId, MapStats)>,
    /// The learned sink's share of each row of its softmax maps, found once per map when first
    /// drawn (`sink.rs`).
    pub(super) sinks: RefCell<Vec<(StageId, std::sync::Arc<[f32]>)>>,
}

impl Default for HeadCache {
    /// Nothing computed yet.
    fn default() -> HeadCache {
        HeadCache {
            base: BaseMaps::default(),
            base_rows: 0,
            lambda_done: false,
            shift: ShiftDiffMaps::empty(),
            shift_rows: Some(0),
            fresh: false,
            stats: RefCell::default(),
            partial: Vec::new(),
            sinks: RefCell::default(),
        }
    }
}

impl HeadCache {
    /// Forgets the maps and what follows them (keeping the buffers).
    pub(super) fn clear_maps(&mut self) {
        self.base_rows = 0;
        self.stats.get_mut().clear();
        self.sinks.get_mut().clear();
        self.partial.clear();
        self.clear_shift();
    }

    /// Forgets the shift stages (keeping their buffers) and marks λ to be put in again.
    pub(super) fn clear_shift(&mut self) {
        self.fresh = false;
        self.lambda_done = false;
        self.shift_rows = Some(0);
        // What neither a shift setting nor λ changes keeps its extremes.
        self.stats
            .get_mut()
            .retain(|(stage, _)| before_lambda(*stage));
        self.partial.retain(|(stage, _)| before_lambda(*stage));
    }

    /// Merges the extremes of rows `rows` of each map of `stages` (those this head has) into
    /// `partial`, and moves them to `stats` when `complete`.
    fn note_extremes(&mut self, stages: &[StageId], rows: std::ops::Range<usize>, complete: bool) {
        for &stage in stages {
            let Some(map) = self.stack_map(stage) else {
                continue;
            };
            let block = MapStats::of(map.slice_move(ndarray::s![rows.clone(), ..]));
            match self.partial.iter_mut().find(|(s, _)| *s == stage) {
                Some((_, seen)) => *seen = seen.merge(block),
                None => self.partial.push((stage, block)),
            }
        }
        if complete {
            let done: Vec<_> = self
                .partial
                .iter()
                .filter(|(s, _)| stages.contains(s))
                .copied()
                .collect();
            self.partial.retain(|(s, _)| !stages.contains(s));
            let stats = self.stats.get_mut();
            for (stage, found) in done {
                stats.retain(|(s, _)| *s != stage);
                stats.push((stage, found));
            }
        }
    }

    /// The one map of `stage` this head's buffers hold, up to date or not.
    fn stack_map(&self, stage: StageId) -> Option<ArrayView2<'_, f32>> {
        let stack = self
            .base
            .stage(stage)
            .or_else(|| self.shift.stage(stage).map(|m| m.view()))?;
        (stack.len_of(Axis(0)) > 0).then(|| stack.index_axis_move(Axis(0), 0))
    }

    /// One map of `stage`, if the head is up to date and has it.
    fn map(&self, stage: StageId) -> Option<ArrayView2<'_, f32>> {
        if !self.fresh {
            return None;
        }
        let stack = self.base.stage(stage).or_else(|| {
            let rows = self.shift_rows?;
            (rows > 0).then(|| self.shift.stage(stage).map(|m| m.view()))?
        })?;
        (stack.len_of(Axis(0)) > 0).then(|| stack.index_axis_move(Axis(0), 0))
    }
}

/// Whether a map of `stage` is made before λ and the shift stages, so that neither changes it.
fn before_lambda(stage: StageId) -> bool {
    matches!(
        stage,
        StageId::A | StageId::A1 | StageId::A2 | StageId::Local | StageId::Segments
    )
}

/// The maps whose extremes the pieces find as they go: those made before λ, and the shift
/// stages (`A1 − λ·A2` is found when drawn: λ changes it after its maps are made).
const BASE_STAGES: [StageId; 5] = [
    StageId::A,
    StageId::A1,
    StageId::A2,
    StageId::Local,
    StageId::Segments,
];
const SHIFT_STAGES: [StageId; 5] = [
    StageId::Shifted,
    StageId::ShiftedBack,
    StageId::D,
    StageId::G,
    StageId::Fused,
];

/// The layer output, head by head: each head's values mixed with its final map into its
/// columns of the heads' concatenation, then projected back.
#[derive(Debug, Clone, Default)]
pub(super) struct Mixed {
    /// `concat_h(A_h·V_h)`, `(tokens, out_heads · d_v)`.
    concat: Array2<f32>,
    /// Heads mixed into `concat` so far, in order.
    heads: usize,
    /// `concat·W_oᵀ + b_o` once every head is in.
    pub(super) output: Option<Array2<f32>>,
}

impl Mixed {
    /// Forgets the output (keeping the buffer).
    pub(super) fn clear(&mut self) {
        self.heads = 0;
        self.output = None;
    }
}

impl Explorer {
    /// Does one piece of work toward `need` (the projections, a block of one head's maps or
    /// shift stages, λ, one head's share of the layer output), the shown head first; returns
    /// whether there was one to do. Nothing to do once everything `need` asks for is up to date
    /// (and never for an empty sentence).
    pub fn work(&mut self, need: Need) -> Result<bool, EngineError> {
        if self.is_empty() {
            return Ok(false);
        }
        let heads = self.settings.maps.heads;
        if self.heads.len() != heads {
            self.heads.resize_with(heads, HeadCache::default);
        }
        if self.pretrained_need().is_some() {
            // The pretrained model hands the layer's vectors over first (`pretrained.rs`).
            return Ok(false);
        }
        let mechanism = self.mechanism()?;
        if self.project_piece(&mechanism)? {
            return Ok(true);
        }
        if self.lambda_table.is_none() {
            // The one table every head shares: V2's λ, or gated attention's output gate.
            let table = lambda_table(&mechanism, &self.projection, heads)
                .or_else(|| output_gate_table(&mechanism, &self.projection, self.weights(), heads));
            if let Some(table) = table {
                self.lambda_table = Some(table?.insert_axis(Axis(0)));
                return Ok(true);
            }
        }
        let shown = self.head;
        let order = std::iter::once(shown).chain((0..heads).filter(|&h| h != shown));
        let count = if need == Need::Shown { 1 } else { heads };
        for head in order.take(count).collect::<Vec<_>>() {
            if head < heads && self.head_piece(&mechanism, head)? {
                return Ok(true);
            }
        }
        if need == Need::Every {
            return self.mix_piece(&mechanism);
        }
        Ok(false)
    }

    /// How far the work toward `need` is.
    pub fn progress(&self, need: Need) -> Progress {
        let heads = self.settings.maps.heads;
        if self.is_empty() {
            return Progress {
                done: 0,
                total: 0,
                finished: true,
            };
        }
        let fresh = |h: usize| self.heads.get(h).is_some_and(|c| c.fresh);
        match need {
            Need::Shown => Progress {
                done: usize::from(fresh(self.head)),
                total: 1,
                finished: fresh(self.head),
            },
            Need::Every => {
                let done = (0..heads).filter(|&h| fresh(h)).count();
                Progress {
                    done,
                    total: heads,
                    finished: done == heads
                        && self.mixed.output.is_some()
                        && (!self.compares() || self.similarity().is_some()),
                }
            }
        }
    }

    /// Brings the shown head's caches up to date (the projections, its maps, its shift
    /// stages), piece after piece. Cheap when nothing changed; the other heads wait until
    /// something asks for them ([`compute_all`](Self::compute_all)).
    pub fn compute(&mut self) -> Result<(), EngineError> {
        while self.work(Need::Shown)? {}
        Ok(())
    }

    /// Brings every head's caches and the layer output up to date: what the all-heads view
    /// and the prediction need.
    pub fn compute_all(&mut self) -> Result<(), EngineError> {
        while self.work(Need::Every)? {}
        Ok(())
    }

    /// One block of the projections' rows, if they are not all computed for the mechanism and
    /// head count shown.
    fn project_piece(&mut self, mechanism: &Mechanism) -> Result<bool, EngineError> {
        let kind = mechanism.kind();
        let heads = self.settings.maps.heads;
        let tokens = self.x.nrows();
        if self.projected_rows > 0 && !self.projection.serves(kind, self.weights(), heads) {
            self.invalidate_sentence();
        }
        if self.projected_rows >= tokens {
            return Ok(false);
        }
        let start = self.projected_rows;
        let rows = start..(start + piece_rows(self.d_model())).min(tokens);
        let mut projection = std::mem::replace(&mut self.projection, Projection::empty());
        let result = Projection::project_into(
            kind,
            self.x.view(),
            self.weights(),
            heads,
            rows.clone(),
            &mut projection,
        );
        self.projection = projection;
        result?;
        self.projected_rows = rows.end;
        if rows.end >= tokens {
            self.recomputations.projections += 1;
        }
        Ok(true)
    }

    /// One piece of head `head`: a block of its maps' rows, λ put in, or a block of its shift
    /// stages' rows; false when it is up to date.
    fn head_piece(&mut self, mechanism: &Mechanism, head: usize) -> Result<bool, EngineError> {
        if self.heads[head].fresh {
            return Ok(false);
        }
        // Out of the list while it is worked on, so the weights can be borrowed meanwhile.
        let mut cache = std::mem::take(&mut self.heads[head]);
        let result = self.fill_piece(mechanism, head, &mut cache);
        self.heads[head] = cache;
        result
    }

    fn fill_piece(
        &mut self,
        mechanism: &Mechanism,
        head: usize,
        cache: &mut HeadCache,
    ) -> Result<bool, EngineError> {
        let (heads, causal) = (self.settings.maps.heads, self.settings.maps.causal);
        let tokens = self.len();
        let piece = piece_rows(self.key_count());
        let rows_from = |start: usize| start..(start + piece).min(tokens);
        if cache.base_rows < tokens {
            let block = Block {
                heads: head..head + 1,
                queries: rows_from(cache.base_rows),
            };
            let (projection, weights) = (&self.projection, self.weights());
            base_maps_into(
                mechanism,
                projection,
                weights,
                heads,
                causal,
                &block,
                &mut cache.base,
            )?;
            cache.base_rows = block.queries.end;
            let complete = cache.base_rows >= tokens;
            cache.note_extremes(&BASE_STAGES, block.queries, complete);
            if complete {
                self.recomputations.maps += 1;
            }
            return Ok(true);
        }
        if !cache.lambda_done {
            if apply_lambda(mechanism, &self.projection, &mut cache.base, head)? {
                self.recomputations.lambda += 1;
            }
            cache.lambda_done = true;
        }
        if let Some(done) = cache.shift_rows.filter(|&r| r < tokens) {
            let block = Block {
                heads: head..head + 1,
                queries: rows_from(done),
            };
            if shift_stages_into(mechanism, &cache.base, causal, &block, &mut cache.shift)? {
                cache.shift_rows = Some(block.queries.end);
                let complete = block.queries.end >= tokens;
                cache.note_extremes(&SHIFT_STAGES, block.queries, complete);
                if complete {
                    self.recomputations.shift_stages += 1;
                }
            } else {
                cache.shift_rows = None;
            }
            return Ok(true);
        }
        cache.fresh = true;
        Ok(false)
    }

    /// One head's share of the layer output (its values mixed with its final map), or the
    /// projection back once every head is in; false when the output is up to date.
    fn mix_piece(&mut self, mechanism: &Mechanism) -> Result<bool, EngineError> {
        if self.mixed.output.is_some() {
            return Ok(false);
        }
        let mut mixed = std::mem::take(&mut self.mixed);
        let result = self.mix_step(mechanism, &mut mixed);
        self.mixed = mixed;
        result.map(|()| true)
    }

    fn mix_step(&self, mechanism: &Mechanism, mixed: &mut Mixed) -> Result<(), EngineError> {
        let heads = self.settings.maps.heads;
        if mixed.heads >= heads {
            mixed.output = Some(self.weights().out(mixed.concat.view()));
            return Ok(());
        }
        let head = mixed.heads;
        let map = self
            .head_map(self.final_stage(), head)
            .ok_or_else(|| EngineError::Shape {
                field: "head",
                expected: format!("head {} computed", head + 1),
                found: "not yet".to_string(),
            })?;
        let (projection, weights, of) = (&self.projection, self.weights(), head..head + 1);
        mix_into(
            mechanism,
            projection,
            weights,
            heads,
            of,
            &|_| map,
            &mut mixed.concat,
        )?;
        mixed.heads += 1;
        Ok(())
    }

    /// V2's mean λ over tokens and heads, once its table is computed.
    fn lambda_table_mean(&self) -> Option<f32> {
        if self.kind() != MechanismKind::DiffTransformerV2 {
            return None;
        }
        self.lambda_table.as_ref()?.mean()
    }

    /// The extremes of one head's map of `stage` (see [`head_map`](Self::head_map)), found
    /// once per map and kept with it.
    pub fn head_stats(&self, stage: StageId, head: usize) -> Option<MapStats> {
        let map = self.head_map(stage, head)?;
        let Some(cache) = self.heads.get(head).filter(|_| !stage.shared_by_heads()) else {
            return Some(MapStats::of(map));
        };
        let mut kept = cache.stats.borrow_mut();
        if let Some(&(_, stats)) = kept.iter().find(|(s, _)| *s == stage) {
            return Some(stats);
        }
        let stats = MapStats::of(map);
        kept.push((stage, stats));
        Some(stats)
    }

    /// The heads whose caches are not up to date, the shown one first: empty once every head
    /// is (nothing is drawn for an empty sentence, so nothing is missing then).
    pub fn missing_heads(&self) -> Vec<usize> {
        if self.is_empty() {
            return Vec::new();
        }
        let heads = self.settings.maps.heads;
        let fresh = |h: usize| self.heads.get(h).is_some_and(|c| c.fresh);
        std::iter::once(self.head)
            .chain((0..heads).filter(|&h| h != self.head))
            .filter(|&h| h < heads && !fresh(h))
            .collect()
    }

    /// Every head's map of one stage, `(heads, queries, columns)`, once every head is computed
    /// ([`compute_all`](Self::compute_all)); `None` when the stage is not part of the mechanism,
    /// nothing is drawn, or a head is not computed. A stage shared by the heads (V2's λ) has
    /// one map. A copy: the page draws one head at a time ([`head_map`](Self::head_map)).
    pub fn maps(&self, stage: StageId) -> Option<Array3<f32>> {
        if stage.shared_by_heads() {
            return self.lambda_table.clone();
        }
        let heads = self.settings.maps.heads;
        let views = (0..heads)
            .map(|h| self.head_map(stage, h))
            .collect::<Option<Vec<_>>>()?;
        ndarray::stack(Axis(0), &views).ok()
    }

    /// The shown head's map of one stage (see [`head_map`](Self::head_map)).
    pub fn map(&self, stage: StageId) -> Option<ArrayView2<'_, f32>> {
        self.head_map(stage, self.head)
    }

    /// One head's map of one stage (the one map of a stage the heads share), once that head
    /// is computed; `None` before, or when the stage is not part of the mechanism.
    pub fn head_map(&self, stage: StageId, head: usize) -> Option<ArrayView2<'_, f32>> {
        if stage.shared_by_heads() {
            let table = self.lambda_table.as_ref()?;
            return Some(table.index_axis(Axis(0), 0));
        }
        self.heads.get(head)?.map(stage)
    }

    /// The Differential Transformer's lambda, once the shown head is computed.
    pub fn lambda(&self) -> Option<f32> {
        let cache = self.heads.get(self.head)?;
        cache.fresh.then(|| cache.base.lambda())?
    }

    /// V2's λ of token `row` in the shown head, once computed.
    pub fn lambda_at(&self, row: usize) -> Option<f32> {
        if self.kind() != MechanismKind::DiffTransformerV2 {
            return None;
        }
        let table = self.lambda_table.as_ref()?;
        table.get((0, row, self.head)).copied()
    }

    /// The λ the maps were computed with as one number: the Differential Transformer's, or
    /// V2's mean over tokens and heads; `None` for other mechanisms or before a compute.
    pub fn learned_lambda(&self) -> Option<f32> {
        self.lambda().or_else(|| self.lambda_table_mean())
    }

    /// Whether the trained model's sentiment applies to what is drawn (a trained model, the
    /// sentence, not empty, the model's own mechanism): then the prediction needs every head.
    pub fn predicts(&self) -> bool {
        match self.model.trained_parts() {
            Some(t) => {
                matches!(self.source, Source::Sentence)
                    && !self.is_empty()
                    && t.mechanism.kind() == self.kind()
            }
            None => false,
        }
    }

    /// The trained model's sentiment for the sentence under the current settings (which may
    /// differ from the trained ones: the page says so), computing every head it still needs.
    /// `None` when it does not apply ([`predicts`](Self::predicts)).
    pub fn prediction(&mut self) -> Result<Option<Prediction>, EngineError> {
        if !self.predicts() {
            return Ok(None);
        }
        if let Some(cached) = self.prediction {
            return Ok(cached);
        }
        let Some(out) = self.layer_output()? else {
            return Ok(None);
        };
        let prediction = self.model.classify_output(out.view());
        self.prediction = Some(prediction);
        Ok(prediction)
    }

    /// The layer output `(tokens, d)` under the current settings (what the final map mixes the
    /// values into), computing every head it still needs; `None` for an empty sentence.
    pub fn layer_output(&mut self) -> Result<Option<Array2<f32>>, EngineError> {
        self.compute_all()?;
        Ok(self.mixed.output.clone())
    }
}
