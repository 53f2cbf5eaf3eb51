// How the maps fill the room they have. The engine fits the grid (`fit_grid`: every map as
// large as the room allows, cells square and the same size in every map, the axes shared, the
// shared scales in one legend); this module measures the room and asks for the grid that
// suits the view: on one screen (the page, presenting), or by width (a phone, a docs column,
// a long sentence). `roomBelow` and `gridAsks` are pure (tests/e2e/page-logic.test.mjs runs
// them); `placeMaps` asks the engine and places a view's maps.

/** Between maps (CSS px). */
export const GRID_GAP_PX = 10;

/** A map's title line (CSS px): the page's, and while presenting. */
export const TITLE_PX = Object.freeze({ page: 18, present: 26 });

/** By width alone, the smallest plot (CSS px) that keeps maps side by side: below it, fewer
 * maps a row, each larger (a docs column puts three across, a phone two). */
export const MIN_SIDE_BY_SIDE_PX = 130;

/** By width alone, the largest plot (CSS px): a map never taller than most of a screen. */
export const MAX_BY_WIDTH_PX = 640;

/**
 * The room the maps have in the window: from the maps' top edge (page coordinates) to the
 * bottom of the viewport, less `margin`. Below `minHeight` the window is too short to fit
 * them on one screen, and the maps lay out by width alone (Infinity).
 */
export function roomBelow(topInPage, viewportHeight, { margin = 12, minHeight = 260 } = {}) {
  const room = viewportHeight - topInPage - margin;
  return room >= minHeight ? room : Infinity;
}

/**
 * What to ask `fit_grid` for, in device pixels, for maps in a room `width × height` CSS px
 * (`height` Infinity: by width) at `dpr`: one ask, or while presenting two, the second's
 * least plot being 1.5 × the first's (`{ then }`, a function of the first grid). `base` is
 * the rest of the ask (stages, all_heads, output). Pure.
 */
export function gridAsks({ width, height, dpr, present = false, viewportHeight, font_px, base }) {
  const px = (css) => Math.max(0, Math.floor(css * dpr));
  const title = px(present ? TITLE_PX.present : TITLE_PX.page);
  const ask = { ...base, width_px: px(width), font_px, title_px: title, gap_px: px(GRID_GAP_PX) };
  const cap = px(Math.min(viewportHeight * 0.8, MAX_BY_WIDTH_PX));
  if (!Number.isFinite(height)) return { first: { ...ask, height_px: 0, min_plot_px: px(MIN_SIDE_BY_SIDE_PX), max_plot_px: cap }, then: null, title };
  const first = { ...ask, height_px: px(height) };
  if (!present) return { first, then: null, title };
  // Presenting: maps half as large again as fit on the screen, as many across as that allows,
  // the page scrolling for the rest; none taller than the screen.
  const tallest = px(Math.max(height, viewportHeight - 80)) - title;
  const then = (grid) => ({ ...ask, height_px: 0, min_plot_px: Math.ceil(grid.plot_px * 1.5), max_plot_px: Math.max(tallest, Math.ceil(grid.plot_px * 1.5)) });
  return { first, then, title };
}

/**
 * Asks `engine` for the grid of `base`'s maps in the room and places `maps` (a `Maps`) in it.
 * Returns the grid (device pixels).
 */
export function placeMaps(engine, maps, { width, height, present = false, base }) {
  const dpr = globalThis.devicePixelRatio || 1;
  const { first, then, title } = gridAsks({ width, height, dpr, present, viewportHeight: globalThis.innerHeight, font_px: maps.fontPx(present), base });
  let grid = engine.call((ex) => ex.fit_grid(first));
  if (then) grid = engine.call((ex) => ex.fit_grid(then(grid)));
  maps.place(grid, title);
  return grid;
}
