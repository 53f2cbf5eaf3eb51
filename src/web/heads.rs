//! Work on every head, for what needs every head (the all-heads view, the layer output, the
//! prediction): computing the missing heads in steps between frames (`compute_step`), and the
//! heads' Web Worker's side of the handle (www/explorer/heads-offload.js, pkg/heads-worker.js):
//! the key a head is computed under, one head's caches exported by the worker's handle and
//! adopted by the page's, map by map (`crate::explorer`'s `transfer`).

use wasm_bindgen::prelude::*;

use super::handle::{now_ms, Explorer};
use super::js::{js_error, to_js, HeadMetaJs};
use crate::explorer;

#[wasm_bindgen]
impl Explorer {
    /// How many heads are not computed yet under the current settings (the shown one is once
    /// anything is drawn): what the all-heads view, the layer output and the prediction still
    /// need.
    pub fn pending_heads(&self) -> usize {
        self.state.missing_heads().len()
    }

    /// Computes heads not computed yet, the shown one first, until `budget_ms` have passed
    /// (at least one head, if any is missing): the page calls it across frames for work that
    /// needs every head, so the page never freezes. With `kept_maps_only`, only heads whose
    /// maps are kept (their shift stages alone are missing; the others are the Web Worker's).
    /// Returns `{ done, total, ms }`: heads up to date, heads in all, and the time it took.
    pub fn compute_step(
        &mut self,
        budget_ms: f64,
        kept_maps_only: Option<bool>,
    ) -> Result<JsValue, JsError> {
        /// `{ done, total, ms }`
        #[derive(serde::Serialize)]
        struct StepJs {
            done: usize,
            total: usize,
            ms: f64,
        }
        let t0 = now_ms();
        let kept = kept_maps_only.unwrap_or(false);
        let next = |state: &mut explorer::Explorer| {
            if kept {
                state.compute_next_with_maps()
            } else {
                state.compute_next()
            }
        };
        while next(&mut self.state).map_err(js_error)? {
            if now_ms() - t0 >= budget_ms {
                break;
            }
        }
        let total = self.state.settings().maps.heads;
        to_js(&StepJs {
            done: total - self.state.missing_heads().len().min(total),
            total,
            ms: now_ms() - t0,
        })
    }

    /// The key of every head's caches under the current input and settings (16 hex digits;
    /// `undefined` when nothing is drawn): a head computed elsewhere is adopted only under the
    /// key it was computed for (`adopt_start`).
    pub fn head_key(&self) -> Result<Option<String>, JsError> {
        Ok(self.state.head_key().map_err(js_error)?.map(|k| k.to_hex()))
    }

    /// The heads (from 0) whose maps are not computed yet, the shown one first: what the page
    /// leaves to its Web Worker (the others need only their shift stages, computed here).
    pub fn heads_without_maps(&self) -> Vec<u32> {
        self.state
            .heads_without_maps()
            .into_iter()
            .map(|h| h as u32)
            .collect()
    }

    /// `[gate, lambda]`: whether the gate and λ are the sliders' rather than the learned ones
    /// (what a mirror of this handle needs beside `settings()`, `set_overrides`).
    pub fn overrides(&self) -> Vec<u8> {
        let (gate, lambda) = self.state.overrides();
        vec![u8::from(gate), u8::from(lambda)]
    }

    /// Makes the gate and λ the sliders' or the learned ones, as `overrides()` of the handle
    /// this one mirrors said.
    pub fn set_overrides(&mut self, gate: bool, lambda: bool) {
        self.state.set_overrides(gate, lambda);
    }

    /// Computes head `head` (from 0) and gives its caches away, no longer keeping them (the Web
    /// Worker's side): `{ meta, maps }`, `meta` as `HeadMetaJs`, `maps` one `Float32Array` per
    /// map (row-major, the order `meta.shapes` gives), each with a buffer of its own to transfer.
    pub fn export_head(&mut self, head: usize) -> Result<JsValue, JsError> {
        let parts = self.state.export_head(head).map_err(js_error)?;
        let meta = to_js(&HeadMetaJs::of(&parts))?;
        let maps = js_sys::Array::new();
        for m in &parts.maps {
            let cells = m
                .as_slice()
                .ok_or_else(|| JsError::new("head: a map not in row order"))?;
            maps.push(&js_sys::Float32Array::from(cells));
        }
        let out = js_sys::Object::new();
        js_sys::Reflect::set(&out, &"meta".into(), &meta)
            .map_err(|_| JsError::new("head: cannot build the reply"))?;
        js_sys::Reflect::set(&out, &"maps".into(), &maps)
            .map_err(|_| JsError::new("head: cannot build the reply"))?;
        Ok(out.into())
    }

    /// Starts adopting a head computed elsewhere (the fields of `export_head`'s `meta`, its
    /// `stats` flat): false when it was computed under another key than this handle's now (a
    /// person moved something since), for another mechanism, or has its maps here already;
    /// then nothing changes and the reply is dropped. Its maps follow with `adopt_map`, one call
    /// each (so that no call copies more than one map into wasm memory).
    #[allow(clippy::too_many_arguments)]
    pub fn adopt_start(
        &mut self,
        key: &str,
        head: usize,
        mechanism: &str,
        base: &str,
        shift: &str,
        scalars: Vec<f32>,
        stats: Vec<f32>,
    ) -> Result<bool, JsError> {
        let parts = HeadMetaJs::parts(key, head, mechanism, base, shift, scalars, &stats)?;
        self.adopting = None;
        let fresh = !self.state.heads_without_maps().contains(&parts.head);
        if self.state.head_key().map_err(js_error)? != Some(parts.key)
            || parts.kind != self.state.kind()
            || fresh
        {
            return Ok(false);
        }
        self.adopting = Some(parts);
        Ok(true)
    }

    /// The next map of the head `adopt_start` began (its cells, row-major): `"partial"` while
    /// maps are still to come, `"adopted"` once the head is in (as if computed here), or
    /// `"stale"` when the key moved meanwhile or no head is being adopted (dropped).
    pub fn adopt_map(
        &mut self,
        rows: usize,
        cols: usize,
        cells: Vec<f32>,
    ) -> Result<String, JsError> {
        let key = self.state.head_key().map_err(js_error)?;
        let Some(mut parts) = self.adopting.take() else {
            return Ok("stale".to_string());
        };
        if key != Some(parts.key) {
            return Ok("stale".to_string());
        }
        let map = ndarray::Array2::from_shape_vec((rows, cols), cells)
            .map_err(|e| JsError::new(&format!("head: a map of {rows} × {cols}: {e}")))?;
        parts.maps.push(map);
        if parts.maps.len() < explorer::HeadParts::map_count(parts.base, parts.shift) {
            self.adopting = Some(parts);
            return Ok("partial".to_string());
        }
        let adopted = self.state.adopt_head(parts).map_err(js_error)?;
        Ok(if adopted { "adopted" } else { "stale" }.to_string())
    }
}
