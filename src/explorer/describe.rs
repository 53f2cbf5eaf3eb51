//! What the page says about the maps, computed here so that the page never branches on which
//! mechanism is shown: the numbers behind one cell, the parameter readout, the settings that
//! moved away from the trained (or the loaded spec's) ones, and a window of one map.

use ndarray::{s, Array2};

use super::Explorer;
use crate::engine::head_stats::sink_pieces;
use crate::engine::numeric::sigmoid;
use crate::engine::shift_diff::{Difference, Gate, Renormalize};
use crate::engine::{head_stats, HeadStats};
use crate::engine::{
    Columns, Frequencies, HeadShape, Mask, MechanismKind, Parameter, RopeLayout, StageId,
};
use crate::schema::{self, value::Value, LearnedBy};

/// What the page learns after the text changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokensInfo {
    /// The tokens drawn (at most [`crate::text::PAGE_MAX_TOKENS`]).
    pub tokens: Vec<String>,
    /// How many tokens the text had before truncation.
    pub total: usize,
    /// Whether only the first tokens are drawn.
    pub truncated: bool,
}

/// The numbers behind one cell, for the tooltip: every stage's value at `(row, col)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CellInfo {
    /// The query token (the row).
    pub query: String,
    /// The key token (the column).
    pub key: String,
    /// `(stage, value)` for every stage the mechanism shows.
    pub values: Vec<(StageId, f32)>,
    /// The gate's scalars of the shown head (for mechanisms with a gate).
    pub gate: Option<(f32, f32, f32)>,
    /// Row sums of the first and the final map for this query row.
    pub row_sums: Vec<(StageId, f32)>,
    /// The learned sink's share of this row, `1 − Σ_j A_ij`, of each map with a sink strip
    /// (`A`, or `A1` and `A2`), when the layer has sinks (DESIGN.md §7.9); empty otherwise.
    pub sink: Vec<(StageId, f32)>,
    /// Whether the cell is the sink strip's (the column past the keys), not a key's.
    pub sink_cell: bool,
    /// The Differential Transformer's lambda.
    pub lambda: Option<f32>,
    /// Gated attention's output gate of the shown head at this query, one value per channel
    /// (DESIGN.md §4.1: `Gₒ[i, h, c]`); its mean is the cell's `OutputGate` value.
    pub output_gate: Option<Vec<f32>>,
    /// Whether the mask forbids this cell.
    pub masked: bool,
}

/// What the page says about a loaded layer beside its maps: the model's name and the layer's
/// index (DESIGN.md §7.3), and its head layout as the engine runs it (§7.1–§7.4).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInfo {
    /// The model's name.
    pub model: Option<String>,
    /// The layer's index in the model.
    pub layer: Option<u64>,
    /// Whether the spec labels its tokens.
    pub labelled: bool,
    /// Heads (diff heads for the Differential Transformers).
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// The width of one softmax head.
    pub head_dim: usize,
    /// The model width.
    pub d_model: usize,
    /// Rotary positions: the layout, and the base θ when the frequencies come from one.
    pub rope: Option<(RopeLayout, Option<f64>)>,
    /// Whether any projection has a bias.
    pub biases: bool,
}

/// The largest and the smallest cell of one map, for the guided walk's sentences ("the
/// darkest cell of D is row *cat*, key *sat*").
#[derive(Debug, Clone, PartialEq)]
pub struct Extremes {
    /// `(row, col, value)` of the largest value (the first such cell, reading row by row).
    pub max: (usize, usize, f32),
    /// `(row, col, value)` of the smallest value.
    pub min: (usize, usize, f32),
}

/// One line of the row view: a stage's values along one query row (or `G ⊙ D`, the part of
/// `D` the gate lets through, in place of `G`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowLine {
    /// What a learner reads: `A`, `shift(A)`, `G ⊙ D`, `A′`.
    pub label: &'static str,
    /// The stage drawn, or `None` for `G ⊙ D`.
    pub stage: Option<StageId>,
    /// One value per key.
    pub values: Vec<f32>,
}

impl Explorer {
    /// The mask of `stage`'s map and where its keys sit: the mechanism's for maps whose
    /// columns are keys, none for the others (segments, V2's λ per head).
    pub fn stage_mask(&self, stage: StageId) -> Option<(Mask, usize)> {
        (stage.columns() == Columns::Keys).then(|| self.mask())
    }

    /// How `stage` is computed, in the notation of DESIGN.md: the registry's formula, or for
    /// a captured layer whose scores §7.9 changes (its own scale, a relative bias, a soft cap,
    /// learned sinks, normed queries and keys) the scores as that layer makes them.
    pub fn formula(&self, stage: StageId) -> String {
        let s = &self.settings;
        let kind = self.kind();
        let base = kind.formula(
            stage,
            s.shift.difference == Difference::Symmetric,
            s.shift.renormalize == Renormalize::Softmax,
        );
        let layout = &self.weights().layout;
        let product = match stage {
            StageId::A => "QKᵀ",
            StageId::A1 => "Q₁K₁ᵀ",
            StageId::A2 => "Q₂K₂ᵀ",
            _ => return base.to_string(),
        };
        let changed = layout.scale.is_some()
            || layout.relative_bias.is_some()
            || layout.softcap.is_some()
            || layout.sinks.is_some()
            || layout.qk_norm.is_some();
        if !changed || !base.contains("softmax(") || !kind.scores_by_dot_product() {
            return base.to_string();
        }
        let product = if layout.qk_norm.is_some() {
            product.replace('Q', "Q̂").replace('K', "K̂")
        } else {
            product.to_string()
        };
        let over_t = kind == MechanismKind::DiffTransformer;
        let mut score = match (layout.scale.is_some(), over_t) {
            (true, false) => format!("s·{product}"),
            (true, true) => format!("s·{product}/T"),
            (false, false) => format!("{product}/√dₕ"),
            (false, true) => format!("{product}/(T·√dₕ)"),
        };
        if layout.relative_bias.is_some() {
            score = format!("{score} + B");
        }
        if layout.softcap.is_some() {
            score = format!("c·tanh(({score})/c)");
        }
        let lhs = base.split(" = ").next().unwrap_or("A");
        let window = if kind == MechanismKind::Local {
            ", |i − j| ≤ w"
        } else {
            ""
        };
        let sink = if layout.sinks.is_some() {
            ", with a learned sink σₕ"
        } else {
            ""
        };
        format!("{lhs} = softmax({score} + M){window}{sink}")
    }

    /// The sink keys of the statistics ([`head_stats`]): a pretrained BERT's `[CLS]` and
    /// `[SEP]` pieces, else the first key.
    pub fn sink_keys(&self) -> Vec<usize> {
        if self.is_pretrained() {
            let sinks = sink_pieces(&self.key_labels());
            if !sinks.is_empty() {
                return sinks;
            }
        }
        vec![0]
    }

    /// Head `head`'s statistics on its map of `stage` (entropy, sink mass, previous- and
    /// next-token scores: [`head_stats`]), once that head is computed; `None` before, for a map
    /// whose columns are not keys, and for a map with nothing in it.
    pub fn head_statistics(&self, stage: StageId, head: usize) -> Option<HeadStats> {
        let (mask, key_offset) = self.stage_mask(stage)?;
        let map = self.head_map(stage, head)?;
        // A learned sink (§7.9) takes its share of each softmax map (sink.rs).
        head_stats(
            map,
            mask,
            key_offset,
            &self.sink_keys(),
            self.has_sink(stage),
        )
    }

    /// The loaded layer's name, index and head layout; `None` for the sentence.
    pub fn layer_info(&self) -> Option<LayerInfo> {
        let meta = self.meta()?;
        let shape = self.head_shape()?;
        let w = self.weights();
        let b = &w.biases;
        Some(LayerInfo {
            model: meta.model.clone(),
            layer: meta.layer,
            labelled: meta.tokens.is_some(),
            heads: shape.heads,
            kv_heads: shape.kv_heads,
            head_dim: shape.head_dim,
            d_model: w.d_model(),
            rope: w.layout.rope.as_ref().map(|r| {
                let theta = match r.frequencies {
                    Frequencies::Theta(t) => Some(t),
                    Frequencies::Explicit(_) => None,
                };
                (r.layout, theta)
            }),
            biases: b.b_q.is_some() || b.b_k.is_some() || b.b_v.is_some() || b.b_o.is_some(),
        })
    }

    /// The largest and smallest cells of the shown head's map of `stage`, among the cells the
    /// mask allows; `None` when the stage is not drawn or every cell is masked.
    pub fn extremes(&self, stage: StageId) -> Option<Extremes> {
        let map = self.map(stage)?;
        let allows = |i: usize, j: usize| {
            self.stage_mask(stage)
                .is_none_or(|(mask, offset)| mask.allows(i, j + offset))
        };
        let mut found: Option<Extremes> = None;
        for ((i, j), &v) in map.indexed_iter() {
            if !allows(i, j) || !v.is_finite() {
                continue;
            }
            let e = found.get_or_insert(Extremes {
                max: (i, j, v),
                min: (i, j, v),
            });
            if v > e.max.2 {
                e.max = (i, j, v);
            }
            if v < e.min.2 {
                e.min = (i, j, v);
            }
        }
        found
    }

    /// The row view of query `row` of the shown head: every stage but the gate as a line over
    /// the keys, and `G ⊙ D` where the mechanism has both (in `G`'s place, after `D`);
    /// `None` outside the map or before [`compute`](Self::compute).
    pub fn row_lines(&self, row: usize) -> Option<Vec<RowLine>> {
        let stages = self.stages();
        let row_of = |s: StageId| -> Option<Vec<f32>> {
            let map = self.map(s)?;
            (row < map.nrows()).then(|| map.row(row).to_vec())
        };
        let mut lines = Vec::new();
        // The row view draws lines over the keys: maps whose columns are segments or heads
        // have no line there.
        for &stage in stages.iter().filter(|s| s.columns() == Columns::Keys) {
            if stage == StageId::G {
                let (Some(g), Some(d)) = (row_of(StageId::G), row_of(StageId::D)) else {
                    continue;
                };
                let values = g.iter().zip(&d).map(|(g, d)| g * d).collect();
                lines.push(RowLine {
                    label: "G ⊙ D",
                    stage: None,
                    values,
                });
                continue;
            }
            lines.push(RowLine {
                label: stage.label(),
                stage: Some(stage),
                values: row_of(stage)?,
            });
        }
        Some(lines)
    }

    /// The numbers behind one cell of the shown head, query `row` and key `col` (each map's
    /// value where that key falls: its segment, or the shown head's λ); `None` outside the map
    /// or before [`compute`](Self::compute).
    pub fn cell(&self, row: usize, col: usize) -> Option<CellInfo> {
        if self.is_sink_column(col) {
            return self.sink_cell(row);
        }
        let keys = self.key_labels();
        let (query, key) = (self.labels().get(row)?.clone(), keys.get(col)?.clone());
        let stages = self.stages();
        let values: Vec<(StageId, f32)> = stages
            .iter()
            .filter_map(|&s| Some((s, *self.map(s)?.get((row, self.column_of_key(s, col)))?)))
            .collect();
        if values.is_empty() {
            return None;
        }
        let mut summed = vec![stages[0]];
        if self.final_stage() != stages[0] {
            summed.push(self.final_stage());
        }
        let row_sums: Vec<(StageId, f32)> = summed
            .into_iter()
            .filter(|s| s.columns() == Columns::Keys)
            .filter_map(|s| Some((s, self.map(s)?.row(row).sum())))
            .collect();
        let gate = self.kind().takes(Parameter::Gate).then(|| {
            let g: Gate = self.gate();
            let h = self.head().min(g.alpha.len().saturating_sub(1));
            (g.alpha[h], g.beta[h], g.gamma[h])
        });
        let (mask, offset) = self.mask();
        Some(CellInfo {
            query,
            key,
            values,
            gate,
            row_sums,
            sink: self.sinks_at(row),
            sink_cell: false,
            lambda: self.lambda().or_else(|| self.lambda_at(row)),
            output_gate: self.output_gate_at(row),
            masked: !mask.allows(row, col + offset),
        })
    }

    /// Gated attention's output gate `Gₒ[row, h, ·]` of the shown head `h`, one value per
    /// channel, from the projection's logits once its row is in; `None` for other mechanisms.
    pub fn output_gate_at(&self, row: usize) -> Option<Vec<f32>> {
        if self.kind() != MechanismKind::GatedAttention || row >= self.projected_rows {
            return None;
        }
        let logits = self.projection.gate_logits()?;
        let heads = self.settings.maps.heads;
        let d_h = HeadShape::resolve(self.kind(), self.weights(), heads)
            .ok()?
            .head_dim;
        let h = self.head;
        let channels = logits.get((row, (h + 1) * d_h - 1)).map(|_| {
            logits
                .slice(s![row, h * d_h..(h + 1) * d_h])
                .iter()
                .map(|&z| sigmoid(z))
                .collect()
        });
        channels
    }

    /// The parameter the maps depend on beyond heads and mask, as a learner reads it
    /// (`λ = 0.5100`, `τ = 10.0`, `w = 2`, negative numbers with a true minus sign); `None`
    /// when there is none or nothing is computed.
    pub fn parameter_readout(&self) -> Option<String> {
        let m = &self.settings().maps;
        match m.mechanism {
            MechanismKind::DiffTransformer => {
                self.lambda_shown().map(|l| format!("λ = {}", number(l, 4)))
            }
            // The mean over every token and head, as the λ slider shows it (the λ map has
            // each one).
            MechanismKind::DiffTransformerV2 => {
                self.lambda_shown().map(|l| format!("λ̄ = {}", number(l, 4)))
            }
            MechanismKind::Cosine => Some(format!("τ = {}", number(m.tau, 1))),
            MechanismKind::Local => Some(format!("w = {}", m.window)),
            MechanismKind::Hierarchical => Some(format!("s = {}", m.segment)),
            _ => None,
        }
    }

    /// The controls whose values differ from the ones the trained model (or the loaded spec)
    /// came with, by their names (`heads`, `causal`, then the mechanism's parameters as in
    /// [`Parameter`]); empty when nothing moved, for the untrained model, or when another
    /// mechanism than the reference's is shown.
    pub fn moved_away(&self) -> Vec<&'static str> {
        let Some(reference) = self.reference_settings() else {
            return Vec::new();
        };
        let (now, was) = (self.settings(), &reference);
        if now.maps.mechanism != was.maps.mechanism {
            return Vec::new();
        }
        let mut moved = Vec::new();
        if now.maps.heads != was.maps.heads {
            moved.push("heads");
        }
        if now.maps.causal != was.maps.causal {
            moved.push("causal");
        }
        // A parameter moved when one of its settings (the schema's) did: a learned one (the
        // gate, λ) once it is no longer the learned one, any other when its value differs.
        let differs = |key: &schema::Key| match key.learned_flag {
            Some(LearnedBy::Gate) => !self.gate_is_learned(),
            Some(LearnedBy::Lambda) => !self.lambda_is_learned(),
            None => match (now.value(key, 0), was.value(key, 0)) {
                (Some(Value::Float(a)), Some(Value::Float(b))) => (a - b).abs() > 1e-6,
                (a, b) => a != b,
            },
        };
        for &p in now.maps.mechanism.parameters() {
            if schema::engine_keys()
                .filter(|k| k.parameter == Some(p))
                .any(differs)
            {
                moved.push(crate::names::name_of(p));
            }
        }
        moved
    }

    /// The cells `rows × cols` of the shown head's map of `stage` starting at `(row, col)`,
    /// clipped to the map: what the screen-reader table shows, without copying the whole map.
    pub fn map_window(
        &self,
        stage: StageId,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Option<Array2<f32>> {
        let map = self.map(stage)?;
        let (r0, c0) = (row.min(map.nrows()), col.min(map.ncols()));
        let (r1, c1) = (
            r0.saturating_add(rows).min(map.nrows()),
            c0.saturating_add(cols).min(map.ncols()),
        );
        Some(map.slice(s![r0..r1, c0..c1]).to_owned())
    }
}

/// `x` with `digits` decimals as the page prints numbers: a true minus sign (U+2212), and no
/// "−0.0".
fn number(x: f32, digits: usize) -> String {
    let text = format!("{x:.digits$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        return text.trim_start_matches('-').to_string();
    }
    text.replace('-', "\u{2212}")
}
