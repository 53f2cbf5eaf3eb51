// How the maps fill the room they have. The engine fits the grid (`fit_grid`: every map as
// large as the room allows, cells square and the same size in every map, the axes shared, the
// shared scales in one legend); this module measures the room and asks for the grid that
// suits the view: on one screen (the page, presenting), or by width (a phone, a docs column,
// a long sentence). `roomBelow` and `gridAsks` are pure (tests/e2e/page-logic.test.mjs runs
// them); `placeMaps` asks the engine and places a view's maps.

import { ZOOM_FROM } from './viewport.js';

/** Under this width (CSS px) an explorer is narrow: one column, the maps by width. */
export const NARROW_PX = 760;

/** The page's header above an explorer, one line (CSS px): presenting sizes the maps from the
 * room they have below it. */
export const PAGE_HEADER_PX = 45;

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

/** The rail beside the maps (CSS px) in an explorer `width` wide: explorer.css's
 * `clamp(180px, 16cqw, 240px)`. */
export function railWidth(width) {
  return Math.min(240, Math.max(180, 0.16 * width));
}

/**
 * What to ask `fit_grid` for, in device pixels, for maps in a room `width × height` CSS px
 * (`height` Infinity: by width) at `dpr`: one ask, or while presenting two (`{ then }`, a
 * function of the first grid): the first fits the maps to `reference`, the room they have on
 * the page, the second lays them out by width, each plot at least 1.5 × as tall. `base` is the
 * rest of the ask (stages, all_heads, output). Pure.
 */
export function gridAsks({ width, height, dpr, present = null, viewportHeight, font_px, base }) {
  const px = (css) => Math.max(0, Math.floor(css * dpr));
  const title = px(present ? TITLE_PX.present : TITLE_PX.page);
  const ask = { ...base, width_px: px(width), font_px, title_px: title, gap_px: px(GRID_GAP_PX) };
  const cap = px(Math.min(viewportHeight * 0.8, MAX_BY_WIDTH_PX));
  if (present) {
    // Presenting: maps half as large again as on the page, as many across as that allows,
    // the page scrolling for the rest; none taller than the screen.
    const first = { ...ask, width_px: px(present.width), height_px: px(present.height), title_px: px(TITLE_PX.page) };
    const tallest = px(viewportHeight - 40) - title;
    const then = (grid) => {
      // As many maps on the screen as can be: no larger than that (a little over, for whole
      // cells), however wide the screen.
      const least = Math.ceil(grid.plot_px * 1.5);
      return { ...ask, height_px: 0, min_plot_px: least, max_plot_px: Math.max(Math.min(tallest, Math.ceil(least * 1.08)), least) };
    };
    return { first, then, title };
  }
  if (!Number.isFinite(height)) return { first: { ...ask, height_px: 0, min_plot_px: px(MIN_SIDE_BY_SIDE_PX), max_plot_px: cap }, then: null, title };
  return { first: { ...ask, height_px: px(height) }, then: null, title };
}

/** View `v`'s maps' top edge, in page coordinates (CSS px). */
export function mapsTop(v) {
  return v.el.maps.getBoundingClientRect().top + globalThis.scrollY;
}

/**
 * The room view `v`'s maps have (CSS px): `{ width, height, present }`. On one screen where
 * the view fits the window (`fit`: the page), else by width (`height` Infinity: a phone, a
 * docs column, a long sentence, whose maps are read zoomed in). Presenting, `present` is the
 * room the maps have on the page (the explorer's width beside the rail, the window's height
 * below a one-line header), which they are made half as large again as.
 */
export function roomOf(v, { fit: fitOption }) {
  const maps = v.el.maps;
  const width = v.el.explorer.clientWidth;
  const narrow = width < NARROW_PX;
  const long = (v.view?.tokens ?? 0) >= ZOOM_FROM && !v.state.all_heads;
  const presenting = !!v.state.present && !narrow && !long;
  const fit = fitOption && !narrow && !long && !presenting;
  const top = maps.getBoundingClientRect().top + (fit ? globalThis.scrollY : 0);
  const height = fit ? roomBelow(top, globalThis.innerHeight, { margin: 8 }) : Infinity;
  const present = presenting ? { width: width - railWidth(width) - GRID_GAP_PX, height: globalThis.innerHeight - PAGE_HEADER_PX - 8 } : null;
  return { width: maps.clientWidth, height, present };
}

/**
 * Asks `engine` for the grid of `base`'s maps in the room and places `maps` (a `Maps`) in it;
 * `present` is null or the room the maps have on the page, `{ width, height }` (presenting
 * makes them larger than there). Returns the grid (device pixels).
 */
export function placeMaps(engine, maps, { width, height, present = null, base }) {
  const dpr = globalThis.devicePixelRatio || 1;
  const { first, then, title } = gridAsks({ width, height, dpr, present, viewportHeight: globalThis.innerHeight, font_px: maps.fontPx(!!present), base });
  let grid = engine.call((ex) => ex.fit_grid(first));
  if (then) grid = engine.call((ex) => ex.fit_grid(then(grid)));
  maps.place(grid, title);
  return grid;
}

/**
 * Where a view's maps are: `place` fits and places them, and keeps the grid while nothing it
 * depends on changes (the maps drawn, the head, the sentence and its labels, the scale, the
 * language, the zoom, presenting, the room), so a slider's tick measures no layout and fits no
 * grid; `stale()` after the room changed, `moved(v)` after a render says whether the maps were
 * moved by something painted after them (then they are fitted again).
 */
export class Placement {
  #key = '';
  #valid = false;
  #grid = null;
  #top = null;
  #checked = false;
  /** Fittings again for the same key because the maps moved: at most one, so that something
   * that moves the maps back and forth on every render cannot keep the page rendering. */
  #corrections = 0;

  /** The room changed (a resize): the next `place` measures and fits again. */
  stale() {
    this.#valid = false;
    this.#corrections = 0;
  }

  /** Places view `v`'s `maps` for the ask `base` (`{ stages, all_heads, output, focus? }`). */
  place(v, maps, base, { fit, zoom = false, labelsHidden = 1 }) {
    const s = v.state;
    const key = JSON.stringify([base, s.head, s.heads, s.text, s.mechanism, s.weights, s.layer, s.viewport, s.shared_scale, s.lang, s.present, s.view, s.step, v.view?.tokens, v.view?.keys, v.specs?.active?.name ?? null, zoom, labelsHidden, maps.figures.length]);
    if (key === this.#key && this.#valid && this.#grid) {
      this.#checked = true;
      return this.#grid;
    }
    if (key !== this.#key) this.#corrections = 0;
    const room = roomOf(v, { fit });
    this.#top = Number.isFinite(room.height) ? mapsTop(v) : null;
    this.#checked = false;
    this.#grid = placeMaps(v.engine, maps, { ...room, base });
    this.#key = key;
    this.#valid = true;
    return this.#grid;
  }

  /** After a render: whether the maps moved since they were fitted to the window's height
   * (then the next render fits them again, once). */
  moved(v) {
    if (this.#top === null || this.#checked) return false;
    this.#checked = true;
    if (Math.abs(mapsTop(v) - this.#top) <= 1 || this.#corrections >= 1) return false;
    this.#corrections += 1;
    this.#valid = false;
    return true;
  }
}
