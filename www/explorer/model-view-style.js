// The model view's geometry and stylesheet (model-view.js): the sides of its maps, normal and
// compact, the gaps, the room its text takes, how the cards fit a width (`fitCards`, pure),
// and the CSS that lays them out.

/** The smallest and largest side of a head's map with its label and figures under it, and the
 * smallest of a compact card, the map alone (CSS px). */
const SIDE_PX = Object.freeze({ min: 44, max: 112, compact: 22 });

/** The gap between two heads, and between two compact ones (CSS px). */
const GAP_PX = 6;
const COMPACT_GAP_PX = 2;

/** The width of a compact grid's column of layer names (CSS px). */
const ROW_NAME_PX = 30;

/** The room a head's label, figures and meter take with its map, and the view's bar over the
 * maps (CSS px): every layer fits the window's height when it can (the note comes after). */
const TEXT_PX = Object.freeze({ head: 44, view: 56 });

/** The view's stylesheet, adopted into the explorer's shadow root by the view. */
export const CSS = `
.model-view { display: flex; flex-direction: column; gap: 8px; }
.mv-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; font-size: 0.9em; }
.mv-bar label { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.mv-bar select { width: auto; max-width: 20em; }
.model-view:not([hidden]) ~ .readout { display: none; }
.mv-note { margin: 0; font-size: 0.85em; }
.mv-grid { display: grid; gap: ${GAP_PX}px; grid-template-columns: repeat(var(--mv-cols), var(--mv-side)); }
.mv-grid.mv-compact { gap: ${COMPACT_GAP_PX}px; }
.mv-grid.mv-compact.mv-rows { grid-template-columns: ${ROW_NAME_PX}px repeat(var(--mv-cols), var(--mv-side)); }
.mv-compact .mv-card { border-width: 0; border-radius: 0; }
.mv-compact .mv-card:hover, .mv-compact .mv-card:focus-visible { outline: 2px solid var(--accent, #36c); outline-offset: 0; }
.mv-row { align-self: center; font-size: 11px; font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
.mv-grid:not(.mv-rows) .mv-row { display: none; }
.mv-rows .mv-row { grid-column-start: 1; }
.mv-card { display: flex; flex-direction: column; gap: 1px; padding: 0; border: 1px solid transparent; border-radius: 3px; cursor: pointer; font-size: clamp(8px, calc(var(--mv-side) / 7), 11px); line-height: 1.2; font-variant-numeric: tabular-nums; }
.mv-card:hover, .mv-card:focus-visible { border-color: var(--accent, #36c); outline: none; }
.mv-card:focus-visible { box-shadow: 0 0 0 2px var(--accent, #36c); }
.mv-label { font-weight: 600; white-space: nowrap; overflow: hidden; }
.mv-map { display: block; width: var(--mv-side); height: var(--mv-side); background: var(--surface-2, #eee); }
.mv-stats { display: grid; grid-template-columns: 1fr 1fr; column-gap: 2px; white-space: nowrap; overflow: hidden; }
.mv-stats [data-sorted] { font-weight: 700; }
.mv-meter { height: 3px; background: var(--accent, #36c); width: 0; }
.mv-layer-start { grid-column-start: 1; }
`;

/**
 * How the cards of `layers` layers of at most `heads` heads fit `width` × `height` (CSS px):
 * `{ compact, side, cols, rows }`. A layer's heads in a row of cards with their label and
 * figures when at least `SIDE_PX.min` wide, else compact cards (the map alone): a layer's heads
 * in a row after its name (`rows`, unless `sorted`), every layer in the height when they fit
 * at the smallest side, else as wide as the row lets them (the grid scrolls with the page).
 */
export function fitCards({ width, height, heads, layers, sorted }) {
  const byWidth = Math.floor((width - (heads - 1) * GAP_PX) / heads);
  if (byWidth >= SIDE_PX.min) {
    const byHeight = Math.floor((height - TEXT_PX.view) / layers - TEXT_PX.head - GAP_PX);
    const side = Math.max(SIDE_PX.min, Math.min(SIDE_PX.max, byWidth, byHeight));
    return { compact: false, side, cols: Math.min(heads, Math.max(1, Math.floor((width + GAP_PX) / (side + GAP_PX)))), rows: false };
  }
  const inRow = Math.floor((width - ROW_NAME_PX - heads * COMPACT_GAP_PX) / heads);
  const byHeight = Math.floor((height - TEXT_PX.view) / layers - COMPACT_GAP_PX - 3);
  const side = Math.max(SIDE_PX.compact, Math.min(inRow, SIDE_PX.max, byHeight >= SIDE_PX.compact ? byHeight : Infinity));
  const rows = inRow >= side && !sorted;
  const cols = rows ? heads : Math.min(heads, Math.max(1, Math.floor((width + COMPACT_GAP_PX) / (side + COMPACT_GAP_PX))));
  return { compact: true, side, cols, rows };
}
