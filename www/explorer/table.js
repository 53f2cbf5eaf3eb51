// The screen-reader table: the active map's numbers as an HTML table, capped at
// TABLE_CAP × TABLE_CAP cells. The engine hands over just that window (`window`), never the
// whole map, and the table is rebuilt once the maps have stood still for TABLE_PAUSE_MS (or
// TABLE_MAX_WAIT_MS into a change that goes on): a thousand cells are a lot of DOM, and
// rebuilding them between a slider's ticks held the page for tens of milliseconds right when
// the next tick came (docs/PERFORMANCE.md, "One path for heavy work: what a person feels").

import { make } from './dom.js';
import { fmt, visibleToken } from './format.js';

/** The table lists at most this many rows and columns. */
export const TABLE_CAP = 32;
/** The table is rebuilt once the maps have not changed for this long. */
export const TABLE_PAUSE_MS = 300;
/** ... or once its first unshown change is this old, if the maps keep changing. */
export const TABLE_MAX_WAIT_MS = 2000;

export class ScreenReaderTable {
  #box;
  #build;
  #timer = null;
  /** When the oldest change not yet in the table came (null: none is pending). */
  #since = null;
  #lastKey = '';
  /** The table shown, for updating its numbers in place: `{ shape, caption, cells }`. */
  #shown = null;

  /** `box` holds the table; `build()` returns what to show (see `show`) or null. */
  constructor(box, build) {
    this.#box = box;
    this.#build = build;
  }

  /** Rebuilds the table once the maps stand still (see TABLE_PAUSE_MS). */
  schedule() {
    const now = performance.now();
    this.#since ??= now;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const wait = Math.min(TABLE_PAUSE_MS, Math.max(0, this.#since + TABLE_MAX_WAIT_MS - now));
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#since = null;
      this.show(this.#build());
    }, wait);
  }

  /** Forgets what was shown, so the next build redraws even if its key is the same. */
  invalidate() {
    this.#lastKey = '';
  }

  /**
   * Shows `content`: `{ key, caption, capped, window, rows, cols, rowLabels, keyLabels, corner,
   * sink }` where `window` is the engine's `window()` value and `rows`/`cols` the map's full
   * size, and `sink` the learned sink's column after the keys (`{ label, values }`, one value
   * per row of the window; null for a map without the sink's strip); or null for no table.
   */
  show(content) {
    if (!content) {
      this.#box.replaceChildren();
      this.#lastKey = '';
      this.#shown = null;
      return;
    }
    if (content.key === this.#lastKey) return;
    this.#lastKey = content.key;
    const { window: w, rowLabels, keyLabels } = content;
    const rows = Array.from({ length: w.rows }, (_, i) => visibleToken(rowLabels[w.row + i] ?? `${w.row + i + 1}`));
    const cols = Array.from({ length: w.cols }, (_, j) => visibleToken(keyLabels[w.col + j] ?? `${w.col + j + 1}`));
    const sink = content.sink ?? null;
    const shape = JSON.stringify([content.corner, rows, cols, sink?.label ?? null]);
    const captionText = content.capped ? `${content.caption} ${content.capped}` : content.caption;
    if (this.#shown?.shape === shape) {
      // The same rows and keys (a slider's tick): the numbers change in place, nothing is
      // rebuilt, so the browser lays out only the cells that changed.
      // Each cell's text node keeps its place and takes the new number (no node is replaced,
      // so no style is computed again).
      setData(this.#shown.caption, captionText);
      this.#shown.cells.forEach((td, k) => setData(td, fmt(w.data[k])));
      this.#shown.sinkCells.forEach((td, i) => setData(td, fmt(sink.values[i])));
      return;
    }
    const table = make('table');
    const caption = make('caption', '', captionText);
    table.append(caption);
    const thead = make('thead');
    const headRow = make('tr');
    const corner = make('th', '', content.corner);
    corner.scope = 'col';
    headRow.append(corner);
    for (const label of sink ? [...cols, sink.label] : cols) {
      const th = make('th', '', label);
      th.scope = 'col';
      headRow.append(th);
    }
    thead.append(headRow);
    const tbody = make('tbody');
    const cells = [];
    const sinkCells = [];
    for (let i = 0; i < w.rows; i++) {
      const tr = make('tr');
      const th = make('th', '', rows[i]);
      th.scope = 'row';
      tr.append(th);
      for (let j = 0; j < w.cols; j++) {
        const td = make('td', '', fmt(w.data[i * w.cols + j]));
        cells.push(td);
        tr.append(td);
      }
      if (sink) {
        const td = make('td', '', fmt(sink.values[i]));
        sinkCells.push(td);
        tr.append(td);
      }
      tbody.append(tr);
    }
    table.append(thead, tbody);
    this.#box.replaceChildren(table);
    this.#shown = { shape, caption, cells, sinkCells };
  }

  /** Cancels a pending rebuild. */
  destroy() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#since = null;
  }
}

/** Puts `text` in `el`'s one text node (made if it has none), when it differs. */
function setData(el, text) {
  const node = el.firstChild;
  if (node && node.nodeType === 3 && !node.nextSibling) {
    if (node.data !== text) node.data = text;
  } else {
    el.textContent = text;
  }
}
