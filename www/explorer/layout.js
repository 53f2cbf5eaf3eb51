// How the maps fill the room they have: the grid (columns, map width) that shows `count` maps
// as large as possible in a box, so that on a projector the sentence, the controls and every
// map are on one screen without scrolling. `bestGrid` and `roomBelow` are pure
// (tests/e2e/page-logic.test.mjs runs them); `fitMaps` applies them to a view's maps.

import { ZOOM_FROM } from './viewport.js';

/**
 * The columns and the map width (CSS px) that show `count` maps largest in `width` ×
 * `height` px. A map is `width × aspect` tall plus `extra` px (its caption and padding);
 * maps are `gap` apart. With no height limit (`height` Infinity) as many maps share a row as
 * keep each at least `preferred` wide. Returns `{ cols, mapWidth }`.
 */
export function bestGrid(count, width, height, { aspect = 7 / 8, extra = 40, gap = 12, minWidth = 200, maxWidth = 900, preferred = 320 } = {}) {
  if (count <= 0 || width <= 0) return { cols: 1, mapWidth: Math.max(0, Math.floor(width)) };
  const across = (cols) => Math.min(maxWidth, (width - gap * (cols - 1)) / cols);
  if (!Number.isFinite(height)) {
    // No height to fit: as many maps to a row as keep each at least `preferred` wide.
    const cols = Math.max(1, Math.min(count, Math.floor((width + gap) / (Math.max(preferred, minWidth) + gap))));
    return { cols, mapWidth: Math.max(1, Math.floor(across(cols))) };
  }
  let best = { cols: 1, mapWidth: 0 };
  for (let cols = 1; cols <= count; cols++) {
    const rows = Math.ceil(count / cols);
    const byHeight = ((height - gap * (rows - 1)) / rows - extra) / aspect;
    const w = Math.min(across(cols), byHeight);
    // Prefer the larger maps; between equals, fewer rows.
    if (w > best.mapWidth + 0.5) best = { cols, mapWidth: w };
  }
  return { cols: best.cols, mapWidth: Math.max(1, Math.floor(best.mapWidth)) };
}

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
 * Sizes view `v`'s grid of `count` maps to the window (the page, presenting) or to the width
 * alone: `fit` is the view's option, `narrowPx` the width under which the rail stacks.
 */
export function fitMaps(v, count, { fit: fitOption, narrowPx }) {
  const maps = v.el.maps;
  const width = maps.clientWidth;
  const narrow = v.el.explorer.clientWidth < narrowPx;
  // A long sentence cannot be read on one screen anyway: its maps lay out by width, large
  // enough for the labels of a zoomed-in window (the classroom's one screen is for short ones).
  const long = (v.view?.tokens ?? 0) >= ZOOM_FROM && !v.state.all_heads;
  const fit = (fitOption || v.state.present) && !narrow && !long;
  const top = maps.getBoundingClientRect().top + (fit && !v.state.present ? globalThis.scrollY : 0);
  const room = fit ? roomBelow(top, globalThis.innerHeight, { margin: v.state.present ? 8 : 16 }) : Infinity;
  const { cols, mapWidth } = bestGrid(count, width, room, { minWidth: v.state.all_heads ? 260 : 220, preferred: long ? 360 : 320 });
  maps.style.setProperty('--cols', String(cols));
  maps.style.setProperty('--map-w', `${mapWidth}px`);
}

