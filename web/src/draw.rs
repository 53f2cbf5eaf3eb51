//! Drawing one map on a canvas: plotters (through plotters-canvas) draws the frame, then the
//! plot's own pixels are put on as one image (see `diffattn::render::plot_rgba`), so a map with
//! more cells than pixels costs what its pixels cost.

use ndarray::ArrayView2;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use super::js::js_error;
use diffattn::render::{
    colorbar_rgba, draw_frame_around_images_at, draw_row_chart, plot_rgba, CellMask, Frame,
    HeatmapLayout, LabelWidths, RowChart, RowLayout, Scale,
};

/// Draws maps on canvases, keeping one RGBA buffer between frames.
#[derive(Default)]
pub(super) struct Painter {
    rgba: Vec<u8>,
}

impl Painter {
    /// Draws `map` in `frame` filling `canvas` (its width and height attributes, in device
    /// pixels), with the label widths measured once for the render. Returns the layout, for
    /// hit-testing and highlights.
    pub(super) fn draw(
        &mut self,
        canvas: &HtmlCanvasElement,
        map: ArrayView2<f32>,
        frame: &Frame,
        widths: &LabelWidths,
    ) -> Result<HeatmapLayout, JsError> {
        let layout = frame.layout_with(canvas.width(), canvas.height(), map.dim(), widths);
        let backend = CanvasBackend::with_canvas_object(canvas.clone())
            .ok_or_else(|| JsError::new("the canvas has no 2D context"))?;
        let area = backend.into_drawing_area();
        draw_frame_around_images_at(&area, frame, &layout, 1.0)
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        area.present()
            .map_err(|e| js_error(format!("drawing failed: {e}")))?;
        let ctx = context(canvas)?;
        // The colorbar's gradient as one image, like the cells (not one rectangle per band).
        colorbar_rgba(frame, &layout, &mut self.rgba);
        if !self.rgba.is_empty() {
            let bar = layout.colorbar;
            let image = ImageData::new_with_u8_clamped_array_and_sh(
                Clamped(&self.rgba),
                bar.width,
                bar.height,
            )
            .map_err(|_| JsError::new("cannot make the colorbar's image"))?;
            ctx.put_image_data(&image, f64::from(bar.x), f64::from(bar.y))
                .map_err(|_| JsError::new("cannot draw the colorbar"))?;
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
        let plot = layout.plot;
        let image = ImageData::new_with_u8_clamped_array_and_sh(
            Clamped(&self.rgba),
            plot.width,
            plot.height,
        )
        .map_err(|_| JsError::new("cannot make the map's image"))?;
        ctx.put_image_data(&image, f64::from(plot.x), f64::from(plot.y))
            .map_err(|_| JsError::new("cannot draw the map's cells"))?;
        Ok(layout)
    }
}

impl Painter {
    /// Draws the cells of `map` alone, filling `canvas` (its width and height attributes): no
    /// frame and no labels, forbidden cells hatched. The overview of a zoomed map.
    pub(super) fn draw_cells(
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
        let image = ImageData::new_with_u8_clamped_array_and_sh(
            Clamped(&self.rgba),
            layout.plot.width,
            layout.plot.height,
        )
        .map_err(|_| JsError::new("cannot make the map's image"))?;
        ctx.put_image_data(&image, 0.0, 0.0)
            .map_err(|_| JsError::new("cannot draw the map's cells"))
    }
}

impl Painter {
    /// Draws a row view filling `canvas`; returns its layout for hit-testing.
    pub(super) fn draw_row(
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

fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, JsError> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or_else(|| JsError::new("the canvas has no 2D context"))
}
