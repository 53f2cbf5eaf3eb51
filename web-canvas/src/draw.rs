//! Drawing one map on a canvas: plotters (through plotters-canvas) draws the frame, then the
//! plot's own pixels are put on as one image (see `diffattn::render::plot_rgba`), so a map with
//! more cells than pixels costs what its pixels cost.

use ndarray::ArrayView2;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use super::js_error;
use diffattn::render::{
    colorbar_rgba, draw_frame_around_images_at, draw_row_chart, legend_bar_rgba, plot_rgba,
    strip_rgba, CellMask, Frame, HeatmapLayout, LabelWidths, Legend, PixelRect, RowChart,
    RowLayout, Scale,
};

/// Draws maps on canvases, keeping one RGBA buffer between frames, and what each canvas of the
/// maps was last drawn with around its cells (`Frame::signature`, by its place in the render):
/// a slider's tick that changes only cells draws no label again.
#[derive(Default)]
pub struct Painter {
    rgba: Vec<u8>,
    framed: Vec<u64>,
    /// What the legend was last drawn with (its entries, size, font and colours).
    legend_drawn: Option<u64>,
    /// How many maps' frames (labels, borders, colour bar) and cells were drawn, since the
    /// handle was made (`draw_counts`).
    pub frames_drawn: u64,
    /// See `frames_drawn`.
    pub cells_drawn: u64,
}

impl Painter {
    /// Forgets what the canvases show (the page made new ones): the next render draws every
    /// frame.
    pub fn forget(&mut self) {
        self.framed.clear();
        self.legend_drawn = None;
    }

    /// Draws `map` in `frame` filling `canvas` (its width and height attributes, in device
    /// pixels), with the label widths measured once for the render; `slot` is the map's place
    /// in the render (the canvas it drew there last, its frame kept when unchanged; `None`
    /// for a canvas drawn once). Returns the layout, for hit-testing and highlights.
    pub fn draw(
        &mut self,
        canvas: &HtmlCanvasElement,
        slot: Option<usize>,
        map: ArrayView2<f32>,
        frame: &Frame,
        widths: &LabelWidths,
    ) -> Result<HeatmapLayout, JsError> {
        let layout = frame.layout_with(canvas.width(), canvas.height(), map.dim(), widths);
        let signature = frame.signature(canvas.width(), canvas.height());
        let kept = slot.is_some_and(|s| self.framed.get(s) == Some(&signature));
        let ctx = context(canvas)?;
        if !kept {
            self.frames_drawn += 1;
            self.draw_frame(canvas, &ctx, frame, &layout)?;
            if let Some(s) = slot {
                if self.framed.len() <= s {
                    self.framed.resize(s + 1, 0);
                }
                self.framed[s] = signature;
            }
        }
        plot_rgba(
            map,
            frame.scale,
            &layout,
            frame.mask.as_ref(),
            &mut self.rgba,
        );
        if self.rgba.is_empty() {
            return Ok(layout);
        }
        self.cells_drawn += 1;
        put(&ctx, &self.rgba, layout.plot, "the map's cells")?;
        // The learned sink's strip, on the map's scale: cells too, put on every time.
        if let Some(strip) = frame.drawn_strip() {
            strip_rgba(&strip, frame.scale, &layout, &mut self.rgba);
            if !self.rgba.is_empty() {
                put(&ctx, &self.rgba, layout.strip, "the strip")?;
            }
        }
        Ok(layout)
    }

    /// Everything of one map but its cells: plotters for the frame, the colorbar's gradient as
    /// one image.
    fn draw_frame(
        &mut self,
        canvas: &HtmlCanvasElement,
        ctx: &CanvasRenderingContext2d,
        frame: &Frame,
        layout: &HeatmapLayout,
    ) -> Result<(), JsError> {
        let backend = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
        let area = backend.into_drawing_area();
        draw_frame_around_images_at(&area, frame, layout, 1.0)
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        area.present()
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        // The colorbar's gradient as one image, like the cells (not one rectangle per band).
        colorbar_rgba(frame, layout, &mut self.rgba);
        if !self.rgba.is_empty() {
            put(ctx, &self.rgba, layout.colorbar, "the colorbar")?;
        }
        Ok(())
    }
}

impl Painter {
    /// Draws the cells of `map` alone, filling `canvas` (its width and height attributes): no
    /// frame and no labels, forbidden cells hatched. The overview of a zoomed map.
    pub fn draw_cells(
        &mut self,
        canvas: &HtmlCanvasElement,
        map: ArrayView2<f32>,
        scale: &Scale,
        mask: Option<&CellMask>,
    ) -> Result<(), JsError> {
        let layout = HeatmapLayout::cells_only(canvas.width(), canvas.height(), map.dim());
        plot_rgba(map, scale, &layout, mask, &mut self.rgba);
        let ctx = context(canvas)?;
        ctx.clear_rect(
            0.0,
            0.0,
            f64::from(canvas.width()),
            f64::from(canvas.height()),
        );
        if self.rgba.is_empty() {
            return Ok(());
        }
        put(&ctx, &self.rgba, layout.plot, "the map's cells")
    }
}

impl Painter {
    /// Draws `legend` filling `canvas` (its width and height attributes): plotters for the
    /// titles, borders and ticks, each bar's gradient put on as one image.
    pub fn draw_legend(
        &mut self,
        canvas: &HtmlCanvasElement,
        legend: &Legend,
    ) -> Result<(), JsError> {
        // Unchanged (a slider's tick that moves no shared scale): nothing to draw again.
        let signature = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (canvas.width(), canvas.height()).hash(&mut h);
            format!("{legend:?}").hash(&mut h);
            h.finish()
        };
        if self.legend_drawn == Some(signature) {
            return Ok(());
        }
        self.legend_drawn = Some(signature);
        let backend = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
        let area = backend.into_drawing_area();
        let slots = legend
            .draw(&area, false)
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        area.present()
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        let ctx = context(canvas)?;
        for (entry, slot) in legend.entries.iter().zip(&slots) {
            if entry.constant.is_some() {
                continue;
            }
            legend_bar_rgba(entry.scale, slot.bar, &mut self.rgba);
            if self.rgba.is_empty() {
                continue;
            }
            put(&ctx, &self.rgba, slot.bar, "the legend")?;
        }
        Ok(())
    }
}

impl Painter {
    /// Draws a row view filling `canvas`; returns its layout for hit-testing.
    pub fn draw_row(
        &mut self,
        canvas: &HtmlCanvasElement,
        chart: &RowChart,
    ) -> Result<RowLayout, JsError> {
        let backend = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
        let area = backend.into_drawing_area();
        let layout =
            draw_row_chart(&area, chart).map_err(|e| js_error(format!("drawing failed: {e}")))?;
        area.present()
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        Ok(layout)
    }
}

/// Puts `rgba` (`rect`'s width × height pixels) on `ctx` at `rect`'s corner, as one image;
/// `what` names it in the error.
fn put(
    ctx: &CanvasRenderingContext2d,
    rgba: &[u8],
    rect: PixelRect,
    what: &str,
) -> Result<(), JsError> {
    ImageData::new_with_u8_clamped_array_and_sh(Clamped(rgba), rect.width, rect.height)
        .and_then(|image| ctx.put_image_data(&image, f64::from(rect.x), f64::from(rect.y)))
        .map_err(|_| js_error(format!("cannot draw {what}")))
}

fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, JsError> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or_else(|| JsError::new("the canvas has no 2D context"))
}
