//! Heatmaps of attention maps on any plotters backend, and the RGBA cell buffers the page blits.
//!
//! A map (rows = query tokens, columns = key tokens) is drawn in two parts:
//!
//! * the frame ([`draw_frame`]): background, title, token labels, plot border and colorbar,
//!   drawn by plotters on any [`plotters::prelude::DrawingBackend`] (the page's canvas, or SVG);
//! * the cells ([`plot_rgba`]): the pixels of [`HeatmapLayout::plot`], each the colour of the
//!   cell under it, which the page puts onto its canvas as one image. Drawing a rectangle per
//!   cell with plotters costs 305 ms for 512 x 512 in the browser, against 13 ms for an image
//!   (docs/TOOLCHAIN.md); sampling at the plot's resolution makes the cost that of the
//!   plot's pixels, not of the L x L cells. [`cells_rgba`] (one pixel per cell) remains for
//!   callers that scale the image themselves.
//!
//! The geometry ([`HeatmapLayout`]) is computed without drawing, so the page hit-tests the
//! pointer with the same numbers the frame was drawn with. [`heatmap_svg`] and [`panel_svg`]
//! put frame and cells in one standalone SVG document for export and tests.
//!
//! Colours: [`Scale::Sequential`] (viridis) for `A`, `shift(A)` and, on the fixed
//! [`Scale::unit`], the gate `G`; [`Scale::Diverging`] (ColorBrewer PuOr, neutral at zero) for
//! `D` and `A'`, which can be negative. Nothing here depends on the browser.

mod cells;
mod colormap;
mod focus;
mod frame;
mod grid;
mod label;
mod layout;
mod legend;
mod row;
mod scale;
mod stats;
mod strip;
mod strip_size;
mod svg;
mod theme;
mod ticks;
mod viewport;

pub use cells::{cells_rgba, masked_rgba, plot_rgba, CellMask, MASKED_RGB};
pub use colormap::{Palette, Rgb};
pub use focus::fit_focus;
pub use frame::{
    colorbar_rgba, draw_frame, draw_frame_around_images_at, draw_frame_at, Frame, FrameParts,
};
pub use grid::{
    fit_grid, label_font, legend_entry_px, legend_min_width_px, GridLayout, GridMap, GridPlace,
    GridSpec,
};
pub use label::{
    display_label, text_width_em, LabelWidths, MAX_LABEL_GRAPHEMES, MAX_TITLE_GRAPHEMES,
};
pub use layout::{
    Bands, HeatmapLayout, LayoutSpec, PixelRect, LABEL_PITCH_EM, LABEL_SHRINK, TITLE_SCALE,
};
pub use legend::{legend_bar_rgba, Legend, LegendEntry, LegendSlot};
pub use row::{draw_row_chart, RowChart, RowLayout, RowSeries};
pub use scale::{ColorLut, Scale, ABS_MAX_FLOOR, LUT_STEPS, NAN_COLOR};
pub use stats::{constant_of, constant_value, MapStats};
pub use strip::{strip_rgba, Strip};
pub use strip_size::extent_px as strip_extent_px;
pub use svg::{heatmap_svg, panel_svg, Panel};
pub use theme::Theme;
pub use viewport::Viewport;
