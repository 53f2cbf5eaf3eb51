// The screen-reader table: the active map's numbers as an HTML table, capped at
// TABLE_CAP × TABLE_CAP cells. The engine hands over just that window (`window`), never the
// whole map, and the table is rebuilt at most every TABLE_INTERVAL_MS while a slider moves.

import { make, setText } from './dom.js';
import { fmt, visibleToken } from './format.js';

/** The table lists at most this many rows and columns. */
export const TABLE_CAP = 32;
/** The table is rebuilt at most this often while a slider moves (it is a lot of DOM). */
export const TABLE_INTERVAL_MS = 300;

export class ScreenReaderTable {
  #box;
  #build;
  #timer = null;
  #lastAt = -Infinity;
  #lastKey = '';
  /** The table shown, for updating its numbers in place: `{ shape, caption, cells }`. */
  #shown = null;

  /** `box` holds the table; `build()` returns what to show (see `show`) or null. */
  constructor(box, build) {
    this.#box = box;
    this.#build = build;
  }

  /** Rebuilds the table soon (at most every TABLE_INTERVAL_MS). */
  schedule() {
    if (this.#timer !== null) return;
    const wait = Math.max(0, this.#lastAt + TABLE_INTERVAL_MS - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#lastAt = performance.now();
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
      setText(this.#shown.caption, captionText);
      this.#shown.cells.forEach((td, k) => setText(td, fmt(w.data[k])));
      this.#shown.sinkCells.forEach((td, i) => setText(td, fmt(sink.values[i])));
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
  }
}
