// The viewport: the part of a long map that is drawn when a person zooms in (src/render/
// viewport.rs draws it; `Explorer.set_viewport` takes it). In the state, the address and the
// element's `viewport` attribute it is one text, `"row,col,size"` (from 0, a square window
// of `size` tokens: cells stay square), or `""` for whole maps. Pure functions, no DOM:
// tests/e2e/page-logic.test.mjs runs them under node.

/** The fewest tokens a viewport shows: closer than this, labels and cells are already large. */
export const MIN_VIEWPORT = 8;

/** From this many tokens on, the explorer offers zooming (the overview and its buttons). */
export const ZOOM_FROM = 40;

/** How much one step of the buttons or keys zooms. */
export const ZOOM_STEP = 1.5;

/** The largest row, column or size a text may name (past any map the page draws). */
const MAX_INDEX = 1_000_000;

/** The canonical text of a viewport text (`" 120, 120 ,64"` → `"120,120,64"`), `""` for
 * whole maps, or `undefined` for a text that names no viewport. */
export function parseViewport(raw) {
  const text = String(raw ?? '').trim().toLowerCase();
  if (text === '' || text === 'whole') return '';
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length !== 3) return undefined;
  const [row, col, size] = parts.map(Number);
  const ok = (n, min) => parts.every((p) => p !== '') && Number.isInteger(n) && n >= min && n <= MAX_INDEX;
  if (!ok(row, 0) || !ok(col, 0) || !ok(size, 1)) return undefined;
  return `${row},${col},${size}`;
}

/** The viewport a text names, fitted to maps of `rows × cols` (as Rust's `Viewport::within`
 * fits it): `{ row, col, size, whole }`, where `whole` says it shows all of both extents. */
export function viewportOf(text, { rows, cols }) {
  const canonical = parseViewport(text) || '';
  const longest = Math.max(rows, cols);
  let [row, col, size] = canonical ? canonical.split(',').map(Number) : [0, 0, longest];
  size = Math.min(size, longest);
  row = Math.max(0, Math.min(row, rows - Math.min(size, rows)));
  col = Math.max(0, Math.min(col, cols - Math.min(size, cols)));
  return { row, col, size, whole: size >= rows && size >= cols };
}

/** The text of a viewport of maps of `rows × cols`: `""` when it shows them whole. */
export function formatViewport({ row, col, size }, { rows, cols }) {
  const at = (n) => Math.min(MAX_INDEX, Math.max(0, Math.round(n)));
  const v = viewportOf(`${at(row)},${at(col)},${Math.max(1, at(size))}`, { rows, cols });
  return v.whole ? '' : `${v.row},${v.col},${v.size}`;
}

/**
 * Zooms viewport `v` (from `viewportOf`) by `factor` (> 1 zooms in) keeping the whole-map
 * position `anchor` (`{ row, col }`, fractions allowed: the point under the pointer) at the
 * same place on the screen; the size stays within [MIN_VIEWPORT, the longest extent].
 * Returns the new viewport's text.
 */
export function zoomAt(v, shape, factor, anchor) {
  const longest = Math.max(shape.rows, shape.cols);
  const min = Math.min(MIN_VIEWPORT, longest);
  const size = Math.max(min, Math.min(longest, Math.round(v.size / factor)));
  const at = anchor ?? { row: v.row + v.size / 2, col: v.col + v.size / 2 };
  const keep = size / v.size;
  const row = at.row - (at.row - v.row) * keep;
  const col = at.col - (at.col - v.col) * keep;
  return formatViewport({ row, col, size }, shape);
}

/** Moves viewport `v` by `rows` and `cols` tokens (kept inside the maps); its new text. */
export function panBy(v, shape, rows, cols) {
  return formatViewport({ row: v.row + rows, col: v.col + cols, size: v.size }, shape);
}

/** Centres viewport `v` on the whole-map position `at` (`{ row, col }`); its new text. */
export function centreOn(v, shape, at) {
  return formatViewport({ row: at.row - v.size / 2, col: at.col - v.size / 2, size: v.size }, shape);
}

/** The text of viewport `v` moved just enough to show cell `cell` (`{ row, col }`), or
 * `null` when it is shown already. For the arrow keys, so the selected cell stays in view. */
export function follow(v, shape, cell) {
  if (v.whole) return null;
  const inside = (i, start) => i >= start && i < start + v.size;
  if (inside(cell.row, v.row) && inside(cell.col, v.col)) return null;
  const move = (i, start) => (i < start ? i : i >= start + v.size ? i - v.size + 1 : start);
  return formatViewport({ row: move(cell.row, v.row), col: move(cell.col, v.col), size: v.size }, shape);
}
