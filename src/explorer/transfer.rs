//! One head's caches moved from one explorer to another: the page's Web Worker computes a head
//! on an explorer of its own that mirrors the page's (the same model or spec, text and
//! settings), [`export_head`](Explorer::export_head)s it, and the page's explorer
//! [`adopt_head`](Explorer::adopt_head)s it, with the bits it would have computed itself.
//!
//! A head is only adopted under the [`HeadKey`] it was computed for: a hash of everything a
//! head's caches depend on (the mechanism with every parameter, the number of heads, the mask,
//! the vectors `x` and the weights). Both explorers run the same code on the same inputs, so
//! they compute the same key; a reply computed before a person moved a slider carries the old
//! key and is refused, never adopted into the wrong settings.

use std::cell::Cell;

use ndarray::{Array2, Array3, ArrayView, Axis, Dimension};

use super::heads::HeadCache;
use super::Explorer;
use crate::engine::diff_transformer::DiffTransformerMaps;
use crate::engine::diff_transformer_v2::DiffTransformerV2Maps;
use crate::engine::hierarchical::HierarchicalMaps;
use crate::engine::layout::Frequencies;
use crate::engine::shift_diff::ShiftDiffMaps;
use crate::engine::{lambda_table_of, BaseMaps, EngineError, MechanismKind, Projection, StageId};
use crate::render::MapStats;
use crate::schema::{self, value::Value, Layer};

/// What one head's caches were computed from, as one number (see the module's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeadKey(pub u64);

impl HeadKey {
    /// The key as 16 hex digits (how it crosses to JavaScript: no 64-bit number there).
    pub fn to_hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// A key written by [`to_hex`](Self::to_hex).
    pub fn from_hex(text: &str) -> Option<HeadKey> {
        (text.len() == 16)
            .then(|| u64::from_str_radix(text, 16).ok())
            .flatten()
            .map(HeadKey)
    }
}

/// Which maps a head keeps, in the order [`HeadParts::maps`] lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseKind {
    /// `A`.
    Attention,
    /// `A1`, `A2`, `A1 − λ·A2` (scalars: λ, λ_init).
    DiffTransformer,
    /// `A1`, `A2`, `A1 − λ·A2`, and the head's column of the λ table.
    DiffTransformerV2,
    /// `local`, `segments`, `A`.
    Hierarchical,
}

impl BaseKind {
    /// Its name over the boundary.
    pub fn name(self) -> &'static str {
        match self {
            BaseKind::Attention => "attention",
            BaseKind::DiffTransformer => "diff_transformer",
            BaseKind::DiffTransformerV2 => "diff_transformer_v2",
            BaseKind::Hierarchical => "hierarchical",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<BaseKind> {
        [
            BaseKind::Attention,
            BaseKind::DiffTransformer,
            BaseKind::DiffTransformerV2,
            BaseKind::Hierarchical,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// The stage of each of its maps (V2's λ column is no stage of its own: `None`).
    fn stages(self) -> &'static [Option<StageId>] {
        match self {
            BaseKind::Attention => &[Some(StageId::A)],
            BaseKind::DiffTransformer => {
                &[Some(StageId::A1), Some(StageId::A2), Some(StageId::Diff)]
            }
            BaseKind::DiffTransformerV2 => &[
                Some(StageId::A1),
                Some(StageId::A2),
                Some(StageId::Diff),
                None,
            ],
            BaseKind::Hierarchical => &[
                Some(StageId::Local),
                Some(StageId::Segments),
                Some(StageId::A),
            ],
        }
    }
}

/// Which shift stages a head keeps (after its maps in [`HeadParts::maps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShiftKind {
    /// None: the mechanism has no shift stages.
    None,
    /// `shift(A)`, `D`, `G`, `A′`.
    Forward,
    /// `shift(A)`, `shift₋(A)`, `D`, `G`, `A′` (the symmetric difference).
    Symmetric,
}

impl ShiftKind {
    /// How many maps.
    pub fn count(self) -> usize {
        match self {
            ShiftKind::None => 0,
            ShiftKind::Forward => 4,
            ShiftKind::Symmetric => 5,
        }
    }

    fn stages(self) -> &'static [Option<StageId>] {
        match self {
            ShiftKind::None => &[],
            ShiftKind::Forward => &[
                Some(StageId::Shifted),
                Some(StageId::D),
                Some(StageId::G),
                Some(StageId::Fused),
            ],
            ShiftKind::Symmetric => &[
                Some(StageId::Shifted),
                Some(StageId::ShiftedBack),
                Some(StageId::D),
                Some(StageId::G),
                Some(StageId::Fused),
            ],
        }
    }
}

/// One head's caches as plain maps, to cross between two explorers (a Web Worker's and the
/// page's): the maps in the order [`BaseKind`] and [`ShiftKind`] say, each `(rows, columns)`,
/// and each map's extremes (found where it was computed, so the page scans no map).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadParts {
    /// What the head was computed from.
    pub key: HeadKey,
    /// Which head.
    pub head: usize,
    /// The mechanism it was computed with.
    pub kind: MechanismKind,
    /// Which maps come first.
    pub base: BaseKind,
    /// Which shift stages follow.
    pub shift: ShiftKind,
    /// The Differential Transformer's λ and λ_init; empty otherwise.
    pub scalars: Vec<f32>,
    /// The maps.
    pub maps: Vec<Array2<f32>>,
    /// The extremes of each map (of `maps`, in order).
    pub stats: Vec<MapStats>,
}

impl HeadParts {
    /// How many maps a head of `base` and `shift` has.
    pub fn map_count(base: BaseKind, shift: ShiftKind) -> usize {
        base.stages().len() + shift.count()
    }
}

/// A 64-bit hash of words, the same on every platform (multiply and rotate; not for secrets).
struct KeyHasher(u64);

impl KeyHasher {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(Self::K);
    }

    fn f32(&mut self, v: f32) {
        self.word(u64::from(v.to_bits()));
    }

    fn opt_f32(&mut self, v: Option<f32>) {
        self.word(v.map_or(u64::MAX, |v| u64::from(v.to_bits())));
    }

    fn floats(&mut self, v: &[f32]) {
        self.word(v.len() as u64);
        for &x in v {
            self.f32(x);
        }
    }

    fn array<D: Dimension>(&mut self, a: ArrayView<'_, f32, D>) {
        for &n in a.shape() {
            self.word(n as u64);
        }
        let mut pair = None;
        for &v in a.iter() {
            match pair.take() {
                None => pair = Some(v.to_bits()),
                Some(lo) => self.word(u64::from(lo) | (u64::from(v.to_bits()) << 32)),
            }
        }
        if let Some(lo) = pair {
            self.word(u64::from(lo));
        }
    }

    fn finish(mut self) -> u64 {
        self.word(0);
        self.0 ^ (self.0 >> 31)
    }
}

/// The cached hash of the vectors and the weights (cleared with the projections).
pub(super) type InputKey = Cell<Option<u64>>;

impl Explorer {
    /// The hash of `x` and the weights, found once per input (a 2,048-token spec's weights
    /// take some milliseconds) and kept until the projections are cleared.
    fn input_hash(&self) -> u64 {
        if let Some(h) = self.input_key.get() {
            return h;
        }
        let mut h = KeyHasher(1);
        h.array(self.x.view());
        let w = self.weights();
        for m in [&w.w_q, &w.w_k, &w.w_v, &w.w_o] {
            h.array(m.view());
        }
        for b in [&w.biases.b_q, &w.biases.b_k, &w.biases.b_v, &w.biases.b_o] {
            match b {
                Some(b) => h.array(b.view()),
                None => h.word(u64::MAX),
            }
        }
        match &w.w_lambda {
            Some(m) => h.array(m.view()),
            None => h.word(u64::MAX),
        }
        let layout = &w.layout;
        for n in [layout.head_dim, layout.kv_heads] {
            h.word(n.map_or(u64::MAX, |n| n as u64));
        }
        h.word(layout.pairing as u64);
        match &layout.rope {
            None => h.word(u64::MAX),
            Some(rope) => {
                h.word(rope.layout as u64);
                match &rope.frequencies {
                    Frequencies::Theta(theta) => h.word(theta.to_bits()),
                    Frequencies::Explicit(f) => {
                        h.word(f.len() as u64);
                        for v in f {
                            h.word(v.to_bits());
                        }
                    }
                }
                h.word(rope.rotary_dim.map_or(u64::MAX, |n| n as u64));
                h.word(rope.positions.len() as u64);
                for &p in &rope.positions {
                    h.word(p);
                }
                h.word(rope.attention_scaling.to_bits());
            }
        }
        let h = h.finish();
        self.input_key.set(Some(h));
        h
    }

    /// The key of every head's caches under the current input and settings (see the module's
    /// header); `None` when nothing is drawn.
    pub fn head_key(&self) -> Result<Option<HeadKey>, EngineError> {
        if self.is_empty() {
            return Ok(None);
        }
        // The mechanism is `settings.mechanism(learned)`: its inputs are hashed (every setting,
        // and what was learned).
        self.mechanism()?;
        let learned = self.learned();
        let mut h = KeyHasher(self.input_hash());
        // Every setting the caches depend on, as the schema lists them (not the head shown).
        for key in schema::engine_keys().filter(|k| k.layer != Layer::Head) {
            match self.settings.value(key, 0) {
                Some(Value::Int(n)) => h.word(n as u64),
                Some(Value::Float(x)) => h.f32(x),
                Some(Value::Bool(b)) => h.word(u64::from(b)),
                Some(Value::Name(name)) => name.bytes().for_each(|b| h.word(u64::from(b))),
                Some(Value::Unset) | None => h.word(u64::MAX),
            }
        }
        match &learned.gate {
            None => h.word(u64::MAX),
            Some(g) => {
                for v in [&g.alpha, &g.beta, &g.gamma] {
                    h.floats(v);
                }
            }
        }
        match &learned.diff_transformer {
            None => h.word(u64::MAX),
            Some(p) => {
                h.word(u64::from(p.depth));
                for v in [
                    &p.lambda_q1,
                    &p.lambda_k1,
                    &p.lambda_q2,
                    &p.lambda_k2,
                    &p.subln,
                ] {
                    h.floats(v);
                }
                h.opt_f32(p.lambda_init);
                h.f32(p.subln_eps);
                h.opt_f32(p.lambda);
            }
        }
        h.opt_f32(learned.lambda);
        Ok(Some(HeadKey(h.finish())))
    }

    /// The heads whose maps are not computed (not only their shift stages), the shown one
    /// first: what is worth computing elsewhere (a head with its maps needs only its shift
    /// stages, cheap to compute here).
    pub fn heads_without_maps(&self) -> Vec<usize> {
        self.missing_heads()
            .into_iter()
            .filter(|&h| self.heads.get(h).is_none_or(|c| !c.has_maps()))
            .collect()
    }

    /// Computes one head that is not up to date but keeps its maps (only its shift stages are
    /// missing), the shown one first; returns whether there was one.
    pub fn compute_next_with_maps(&mut self) -> Result<bool, EngineError> {
        let kept = self
            .missing_heads()
            .into_iter()
            .find(|&h| self.heads.get(h).is_some_and(|c| c.has_maps()));
        match kept {
            Some(h) => self.compute_head(h).map(|()| true),
            None => Ok(false),
        }
    }

    /// Whether the gate and λ are the sliders' (moved) rather than the learned ones: what
    /// [`set_overrides`](Self::set_overrides) gives a mirror.
    pub fn overrides(&self) -> (bool, bool) {
        (self.gate_override, !self.lambda_is_learned())
    }

    /// Makes the gate and λ the sliders' or the learned ones, as in the explorer this one
    /// mirrors; clears the shift stages when that changes anything.
    pub fn set_overrides(&mut self, gate: bool, lambda: bool) {
        if gate != self.gate_override {
            self.gate_override = gate;
            self.clear_shift();
        }
        // A chosen λ came with the settings; a learned one is unset again.
        if !lambda {
            self.reset_lambda();
        }
    }

    /// Computes head `head` (if it is not up to date) and takes its caches out of this
    /// explorer as [`HeadParts`]: the head is no longer kept here (a Web Worker sends it away
    /// and keeps no second copy). Its shift stages go with its maps: computed on the page,
    /// into new buffers, they cost about as much as the maps (45–55 ms a head at 2,048 tokens,
    /// docs/PERFORMANCE.md), one long task each; adopted, they are four copies of a few ms.
    /// Errors for an empty sentence or a head past the count.
    pub fn export_head(&mut self, head: usize) -> Result<HeadParts, EngineError> {
        let heads = self.settings.maps.heads;
        if head >= heads {
            return Err(EngineError::Shape {
                field: "head",
                expected: format!("a head index below {heads}"),
                found: head.to_string(),
            });
        }
        let key = self.head_key()?.ok_or(EngineError::EmptySequence)?;
        self.compute_head(head)?;
        let cache = std::mem::take(&mut self.heads[head]);
        let kind = self.kind();
        let (base, scalars, mut maps) = match cache.base {
            Some(BaseMaps::Attention(a)) => (BaseKind::Attention, vec![], vec![a]),
            Some(BaseMaps::DiffTransformer(m)) => (
                BaseKind::DiffTransformer,
                vec![m.lambda, m.lambda_init],
                vec![m.a1, m.a2, m.diff],
            ),
            Some(BaseMaps::DiffTransformerV2(m)) => (
                BaseKind::DiffTransformerV2,
                vec![],
                vec![m.a1, m.a2, m.diff, m.lambda.insert_axis(Axis(0))],
            ),
            Some(BaseMaps::Hierarchical(m)) => (
                BaseKind::Hierarchical,
                vec![],
                vec![m.local, m.segments, m.a],
            ),
            None => return Err(EngineError::EmptySequence),
        };
        let shift = match cache.shift {
            None => ShiftKind::None,
            Some(s) => {
                let symmetric = s.shifted_back.is_some();
                maps.push(s.shifted);
                maps.extend(s.shifted_back);
                maps.extend([s.d, s.g, s.fused]);
                if symmetric {
                    ShiftKind::Symmetric
                } else {
                    ShiftKind::Forward
                }
            }
        };
        let maps: Vec<Array2<f32>> = maps
            .into_iter()
            .map(|m| {
                let m = m.index_axis_move(Axis(0), 0);
                if m.is_standard_layout() {
                    m
                } else {
                    m.as_standard_layout().into_owned()
                }
            })
            .collect();
        let stats = maps.iter().map(|m| MapStats::of(m.view())).collect();
        Ok(HeadParts {
            key,
            head,
            kind,
            base,
            shift,
            scalars,
            maps,
            stats,
        })
    }

    /// Takes `parts` as head `parts.head`'s caches, as if computed here: only when they were
    /// computed under this explorer's current [`head_key`](Self::head_key), for its mechanism,
    /// and the head has no maps here yet (the projections are made first if a new sentence
    /// cleared them, as computing the head would). Returns whether it was adopted; a refused head
    /// changes nothing. Adopting counts as no recomputation ([`Recomputations::adopted`]).
    ///
    /// [`Recomputations::adopted`]: super::Recomputations::adopted
    pub fn adopt_head(&mut self, parts: HeadParts) -> Result<bool, EngineError> {
        let heads = self.settings.maps.heads;
        let kind = self.kind();
        if self.head_key()? != Some(parts.key) || parts.kind != kind {
            return Ok(false);
        }
        // A head with its maps needs at most its shift stages, computed here.
        if parts.head >= heads || self.heads.get(parts.head).is_some_and(|c| c.has_maps()) {
            return Ok(false);
        }
        let count = HeadParts::map_count(parts.base, parts.shift);
        let want_scalars = if parts.base == BaseKind::DiffTransformer {
            2
        } else {
            0
        };
        let rows = self.len();
        if parts.maps.len() != count
            || parts.stats.len() != count
            || parts.scalars.len() != want_scalars
            || parts.maps.iter().any(|m| m.nrows() != rows)
        {
            return Err(EngineError::Shape {
                field: "head",
                expected: format!("{count} maps of {rows} rows and {want_scalars} scalars"),
                found: format!(
                    "{} maps and {} scalars",
                    parts.maps.len(),
                    parts.scalars.len()
                ),
            });
        }
        let stages: Vec<Option<StageId>> = parts
            .base
            .stages()
            .iter()
            .chain(parts.shift.stages())
            .copied()
            .collect();
        let kept_stats: Vec<(StageId, MapStats)> = stages
            .iter()
            .zip(&parts.stats)
            .filter_map(|(s, &st)| s.map(|s| (s, st)))
            .collect();
        let mut maps = parts.maps.into_iter().map(|m| m.insert_axis(Axis(0)));
        let mut next = || maps.next().unwrap_or_else(|| Array3::zeros((1, 0, 0)));
        let base = match parts.base {
            BaseKind::Attention => BaseMaps::Attention(next()),
            BaseKind::DiffTransformer => BaseMaps::DiffTransformer(DiffTransformerMaps {
                a1: next(),
                a2: next(),
                diff: next(),
                lambda: parts.scalars[0],
                lambda_init: parts.scalars[1],
            }),
            BaseKind::DiffTransformerV2 => BaseMaps::DiffTransformerV2(DiffTransformerV2Maps {
                a1: next(),
                a2: next(),
                diff: next(),
                lambda: next().index_axis_move(Axis(0), 0),
            }),
            BaseKind::Hierarchical => BaseMaps::Hierarchical(HierarchicalMaps {
                local: next(),
                segments: next(),
                a: next(),
            }),
        };
        let shift = match parts.shift {
            ShiftKind::None => None,
            ShiftKind::Forward => Some(ShiftDiffMaps {
                shifted: next(),
                shifted_back: None,
                d: next(),
                g: next(),
                fused: next(),
            }),
            ShiftKind::Symmetric => Some(ShiftDiffMaps {
                shifted: next(),
                shifted_back: Some(next()),
                d: next(),
                g: next(),
                fused: next(),
            }),
        };
        // What every head shares, as computing a head here would make it: the projections
        // (a new sentence clears them; cheap beside a head's maps) and V2's λ table.
        let mechanism = self.mechanism()?;
        if !self.projection.as_ref().is_some_and(|p| p.serves(kind)) {
            self.recomputations.projections += 1;
            for cache in &mut self.heads {
                cache.clear_maps();
            }
            self.projection = Some(Projection::new(kind, self.x.view(), self.weights()));
        }
        if self.lambda_table.is_none() {
            if let Some(projection) = &self.projection {
                if let Some(table) = lambda_table_of(&mechanism, projection, heads) {
                    self.lambda_table = Some(table?.insert_axis(Axis(0)));
                }
            }
        }
        if self.heads.len() != heads {
            self.heads.resize_with(heads, HeadCache::default);
        }
        self.heads[parts.head] = HeadCache::adopted(base, shift, kept_stats);
        self.recomputations.adopted += 1;
        Ok(true)
    }
}
