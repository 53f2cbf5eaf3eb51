//! What the model view (www/explorer/model-view.js) asks of a layer once every head is in: each
//! head's statistics (`diffattn::engine::head_stats`: entropy, sink mass, previous- and
//! next-token scores) and one head's map as plain cells on a small canvas. The view walks the
//! layers on a handle of its own, one `layer` setting at a time, its heads computed by `work`.

use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use super::handle::Explorer;
use diffattn::engine::{HeadStats, StageId};
use diffattn::render::Scale;

/// How many numbers `head_statistics` gives per head.
const FIGURES: usize = 9;

/// One head's statistics as `head_statistics` lays them out: `entropy, sink, previous, next,
/// signed_sink, signed_previous, signed_next, negative (1 or 0), rows` (`HeadStats`; the first
/// four on the absolute values, the `signed_` ones on the values as they are); a head without
/// any is nine zeros (`rows` 0). Flat numbers, not an object per head: no serializer in the
/// page's module for them.
fn figures(s: Option<HeadStats>) -> [f32; FIGURES] {
    s.map_or([0.0; FIGURES], |s| {
        [
            s.entropy,
            s.sink,
            s.previous,
            s.next,
            s.signed_sink,
            s.signed_previous,
            s.signed_next,
            f32::from(u8::from(s.negative)),
            s.rows as f32,
        ]
    })
}

impl Explorer {
    /// `name` as a stage the mechanism shows; its final stage when empty.
    fn stage_or_final(&self, name: &str) -> Result<StageId, JsError> {
        if name.is_empty() {
            Ok(self.state.final_stage())
        } else {
            self.stage_shown(name)
        }
    }
}

#[wasm_bindgen]
impl Explorer {
    /// Every head's statistics on its map of `stage` (its name; the final stage when empty), in
    /// head order, nine numbers per head (see `figures`): zeros with `rows` 0 for a head not
    /// computed yet, a map whose columns are not keys, or a map with nothing in it. Computes
    /// nothing (`work` does). The sinks are a pretrained model's `[CLS]` and `[SEP]`, else the
    /// first token (`sink_keys`).
    pub fn head_statistics(&self, stage: &str) -> Result<Vec<f32>, JsError> {
        let stage = self.stage_or_final(stage)?;
        let heads = self.state.settings().maps.heads;
        Ok((0..heads)
            .flat_map(|h| figures(self.state.head_statistics(stage, h)))
            .collect())
    }

    /// The sink keys of the statistics, from 0.
    pub fn sink_keys(&self) -> Vec<usize> {
        self.state.sink_keys()
    }

    /// Draws head `head`'s (from 0) map of `stage` (its name; the final stage when empty) whole on
    /// `canvas` as plain cells filling its width and height attributes, with the map's own
    /// colour scale and its masked cells hatched: no frame, no labels. Returns false (drawing
    /// nothing) while that head is not computed.
    pub fn render_head_cells(
        &mut self,
        canvas: HtmlCanvasElement,
        stage: &str,
        head: usize,
    ) -> Result<bool, JsError> {
        let stage = self.stage_or_final(stage)?;
        let (Some(map), Some(stats)) = (
            self.state.head_map(stage, head),
            self.state.head_stats(stage, head),
        ) else {
            return Ok(false);
        };
        let scale = Scale::from_stats(stage.scale_kind(), stats);
        let mask = self.cell_mask(stage);
        self.painter
            .draw_cells(&canvas, map, &scale, mask.as_ref())?;
        Ok(true)
    }
}
