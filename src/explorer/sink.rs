//! The learned sink's share of each row of a softmax map (DESIGN.md §7.9), for the strip the
//! page draws beside that map and what its readout says: which maps have a strip, the shares
//! (found once per map and kept with its head), and the numbers behind a strip's cell. The
//! strip's drawing is `crate::render::Strip`.

use std::sync::Arc;

use super::{CellInfo, Explorer};
use crate::engine::softmax::sink_shares;
use crate::engine::StageId;

impl Explorer {
    /// Whether the mechanism shown has a map of `stage` whose rows lost mass to a learned sink:
    /// the layer has sinks, the mechanism's scores take them (the scaled dot product's; the
    /// page also runs a layer with sinks as cosine or hierarchical attention, whose softmax has
    /// none) and each row of that map is one softmax they joined ([`StageId::takes_sink`]:
    /// `A`, or `A1` and `A2`). Only such a map has a sink strip.
    pub fn has_sink(&self, stage: StageId) -> bool {
        self.weights().layout.sinks.is_some()
            && self.kind().scores_by_dot_product()
            && stage.takes_sink()
            && self.stages().contains(&stage)
    }

    /// The learned sink's share of each row of head `head`'s map of `stage`, `1 − Σ_j a_ij`
    /// ([`sink_shares`]), once that head is computed; `None` for a map without a sink strip.
    /// Found once per map and kept with the head until its maps change.
    pub fn sink_shares(&self, stage: StageId, head: usize) -> Option<Arc<[f32]>> {
        if !self.has_sink(stage) {
            return None;
        }
        let map = self.head_map(stage, head)?;
        let mut kept = self.heads.get(head)?.sinks.borrow_mut();
        if let Some((_, shares)) = kept.iter().find(|(s, _)| *s == stage) {
            return Some(Arc::clone(shares));
        }
        let shares: Arc<[f32]> = sink_shares(map).into();
        kept.push((stage, Arc::clone(&shares)));
        Some(shares)
    }

    /// The shown head's sink share of row `row` of each map with a sink strip, in the stages'
    /// order (empty without sinks).
    pub fn sinks_at(&self, row: usize) -> Vec<(StageId, f32)> {
        let head = self.head();
        self.stages()
            .into_iter()
            .filter_map(|s| Some((s, *self.sink_shares(s, head)?.get(row)?)))
            .collect()
    }

    /// Whether column `col` is the sink strip's: the one past the last key, in a layer whose
    /// maps have a strip. The page's hit-testing answers it for a strip's cell.
    pub fn is_sink_column(&self, col: usize) -> bool {
        col == self.key_count() && self.stages().into_iter().any(|s| self.has_sink(s))
    }

    /// The numbers behind row `row`'s cell of the sink strips: the query, each strip's share
    /// and the row sums; `None` outside the map or before the head is computed.
    pub(super) fn sink_cell(&self, row: usize) -> Option<CellInfo> {
        let query = self.labels().get(row)?.clone();
        let sink = self.sinks_at(row);
        if sink.is_empty() {
            return None;
        }
        let row_sums = sink
            .iter()
            .filter_map(|&(s, _)| Some((s, self.map(s)?.row(row).sum())))
            .collect();
        Some(CellInfo {
            query,
            key: String::new(),
            values: Vec::new(),
            gate: None,
            row_sums,
            sink,
            sink_cell: true,
            lambda: None,
            output_gate: None,
            masked: false,
        })
    }
}
