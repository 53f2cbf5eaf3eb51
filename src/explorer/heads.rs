//! The caches of the stages, one per head, computed on demand: the shown head first, the others
//! when something needs them (the all-heads view, the layer output, the prediction).
//!
//! Each head keeps what the engine's staged steps return for it alone ([`base_maps_of`] and
//! [`shift_stages_of_into`], with the same bits as the whole stack): its maps, and its shift
//! stages. A head once computed stays until something it depends on changes, so showing another
//! head and coming back recomputes nothing. The projections are shared by every head; V2's λ
//! table (one map for every head, a sigmoid per token and head) is computed whole.

use std::cell::RefCell;

use ndarray::{Array2, Array3, ArrayView2, Axis};

use super::Explorer;
use crate::engine::shift_diff::ShiftDiffMaps;
use crate::engine::{
    apply_lambda_of, base_maps_of, lambda_table_of, output_of, shift_stages_of_into, BaseMaps,
    EngineError, Mechanism, Projection, StageId,
};
use crate::model::Prediction;
use crate::render::MapStats;

/// What is kept of one head.
#[derive(Debug, Clone, Default)]
pub(super) struct HeadCache {
    /// Its maps before any shift, one map per stack ([`base_maps_of`]).
    pub(super) base: Option<BaseMaps>,
    /// Its shift stages, for the mechanisms that have them.
    pub(super) shift: Option<ShiftDiffMaps>,
    /// The buffers of its last shift stages once cleared, refilled by the next compute rather
    /// than allocated again (a dragged shift slider recomputes them every frame).
    spare: Option<ShiftDiffMaps>,
    /// Whether everything it keeps is up to date (a λ or a shift setting moved since clears
    /// it, keeping the maps: λ is put back in, the shift stages recomputed).
    pub(super) fresh: bool,
    /// The extremes of each map drawn so far ([`MapStats`]), found once per map and kept with
    /// it: a redraw (a zoom, a hover's highlight, another head and back) scans no map again.
    stats: RefCell<Vec<(StageId, MapStats)>>,
}

impl HeadCache {
    /// A head whose maps are computed, λ and the shift stages still to come.
    pub(super) fn with_maps(base: BaseMaps) -> HeadCache {
        HeadCache {
            base: Some(base),
            ..HeadCache::default()
        }
    }

    /// A head computed elsewhere (`transfer.rs`): its maps, its shift stages and their
    /// extremes, up to date.
    pub(super) fn adopted(
        base: BaseMaps,
        shift: Option<ShiftDiffMaps>,
        stats: Vec<(StageId, MapStats)>,
    ) -> HeadCache {
        HeadCache {
            base: Some(base),
            shift,
            spare: None,
            fresh: true,
            stats: RefCell::new(stats),
        }
    }

    /// Whether its maps are computed (its shift stages may not be).
    pub(super) fn has_maps(&self) -> bool {
        self.base.is_some()
    }

    /// Forgets the maps and what follows them.
    pub(super) fn clear_maps(&mut self) {
        self.base = None;
        self.stats.get_mut().clear();
        self.clear_shift();
    }

    /// Forgets the shift stages (keeping their buffers) and marks λ to be checked again.
    pub(super) fn clear_shift(&mut self) {
        self.fresh = false;
        // What neither a shift setting nor λ changes keeps its extremes.
        self.stats.get_mut().retain(|(stage, _)| {
            matches!(
                stage,
                StageId::A | StageId::A1 | StageId::A2 | StageId::Local | StageId::Segments
            )
        });
        if let Some(maps) = self.shift.take() {
            self.spare = Some(maps);
        }
    }

    /// One map of `stage`, if the head is up to date and has it.
    fn map(&self, stage: StageId) -> Option<ArrayView2<'_, f32>> {
        if !self.fresh {
            return None;
        }
        let base = self.base.as_ref()?;
        let stack = base
            .stage(stage)
            .or_else(|| self.shift.as_ref()?.stage(stage).map(|m| m.view()))?;
        (stack.len_of(Axis(0)) > 0).then(|| stack.index_axis_move(Axis(0), 0))
    }
}

impl Explorer {
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

    /// Brings the shown head's caches up to date (the projections, its maps, its shift
    /// stages). Cheap when nothing changed; the other heads wait until something asks for
    /// them ([`compute_all`](Self::compute_all), [`compute_next`](Self::compute_next)).
    pub fn compute(&mut self) -> Result<(), EngineError> {
        self.compute_head(self.head)
    }

    /// Brings every head's caches up to date: what the all-heads view, the layer output and
    /// the prediction need.
    pub fn compute_all(&mut self) -> Result<(), EngineError> {
        self.compute()?;
        for h in 0..self.settings.maps.heads {
            self.compute_head(h)?;
        }
        Ok(())
    }

    /// Computes one head that is not up to date, the shown one first, then the lowest; returns
    /// whether there was one. The page calls it across frames so that work for every head never
    /// freezes it.
    pub fn compute_next(&mut self) -> Result<bool, EngineError> {
        match self.missing_heads().first() {
            Some(&h) => self.compute_head(h).map(|()| true),
            None => Ok(false),
        }
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

    /// Brings head `head`'s caches up to date.
    pub(super) fn compute_head(&mut self, head: usize) -> Result<(), EngineError> {
        if self.is_empty() {
            return Ok(());
        }
        let kind = self.kind();
        let heads = self.settings.maps.heads;
        if head >= heads {
            return Ok(());
        }
        if self.heads.len() != heads {
            self.heads.resize_with(heads, HeadCache::default);
        }
        if self.heads[head].fresh {
            return Ok(());
        }
        let mechanism = self.mechanism()?;
        let projection = match self.projection.take() {
            Some(p) if p.serves(kind) => p,
            _ => {
                self.recomputations.projections += 1;
                for cache in &mut self.heads {
                    cache.clear_maps();
                }
                Projection::new(kind, self.x.view(), self.weights())
            }
        };
        let result = self.compute_head_with(&mechanism, &projection, head);
        self.projection = Some(projection);
        result
    }

    /// Head `head` over `projection`: its maps if it has none, λ put into them, its shift
    /// stages if it has none.
    fn compute_head_with(
        &mut self,
        mechanism: &Mechanism,
        projection: &Projection,
        head: usize,
    ) -> Result<(), EngineError> {
        let (heads, causal) = (self.settings.maps.heads, self.settings.maps.causal);
        if self.lambda_table.is_none() {
            if let Some(table) = lambda_table_of(mechanism, projection, heads) {
                self.lambda_table = Some(table?.insert_axis(Axis(0)));
            }
        }
        // Out of the list while it is computed, so the weights can be borrowed meanwhile.
        let mut cache = std::mem::take(&mut self.heads[head]);
        let result = self.fill(&mut cache, mechanism, projection, head, heads, causal);
        self.heads[head] = cache;
        result
    }

    fn fill(
        &mut self,
        cache: &mut HeadCache,
        mechanism: &Mechanism,
        projection: &Projection,
        head: usize,
        heads: usize,
        causal: bool,
    ) -> Result<(), EngineError> {
        let of = head..head + 1;
        let base = match cache.base.take() {
            Some(base) => base,
            None => {
                cache.clear_shift();
                let base = base_maps_of(mechanism, projection, self.weights(), heads, causal, of)?;
                self.recomputations.maps += 1;
                base
            }
        };
        let base = cache.base.insert(base);
        if apply_lambda_of(mechanism, projection, base, head)? {
            self.recomputations.lambda += 1;
        }
        if cache.shift.is_none() {
            let mut maps = cache.spare.take().unwrap_or_else(ShiftDiffMaps::empty);
            if shift_stages_of_into(mechanism, base, causal, head, &mut maps)? {
                cache.shift = Some(maps);
                self.recomputations.shift_stages += 1;
            } else {
                cache.spare = Some(maps);
            }
        }
        cache.fresh = true;
        Ok(())
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
        self.heads.get(self.head)?.base.as_ref()?.lambda()
    }

    /// V2's λ of token `row` in the shown head, once computed.
    pub fn lambda_at(&self, row: usize) -> Option<f32> {
        let table = self.lambda_table.as_ref()?;
        table.get((0, row, self.head)).copied()
    }

    /// The λ the maps were computed with as one number: the Differential Transformer's, or
    /// V2's mean over tokens and heads; `None` for other mechanisms or before a compute.
    pub fn learned_lambda(&self) -> Option<f32> {
        self.lambda().or_else(|| self.lambda_table.as_ref()?.mean())
    }

    /// Whether the trained model's sentiment applies to what is drawn (a trained model, the
    /// sentence, not empty, the model's own mechanism): then the prediction needs every head.
    pub fn predicts(&self) -> bool {
        match self.model.trained_parts() {
            Some(t) => !self.is_spec() && !self.is_empty() && t.mechanism.kind() == self.kind(),
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
        self.compute_all()?;
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
        let Some(projection) = &self.projection else {
            return Ok(None);
        };
        let stage = self.final_stage();
        let heads = self.settings.maps.heads;
        let finals = (0..heads)
            .map(|h| self.head_map(stage, h))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| EngineError::Shape {
                field: "head",
                expected: format!("every one of {heads} heads computed"),
                found: "a head missing".to_string(),
            })?;
        output_of(
            &self.mechanism()?,
            projection,
            self.weights(),
            heads,
            &|h| finals[h],
        )
        .map(Some)
    }
}
