// The screen-reader table: the active map's numbers as an HTML table, capped at
// TABLE_CAP × TABLE_CAP cells. The engine hands over just that window (`window`), never the
// whole map, and the table is rebuilt at most every TABLE_INTERVAL_MS while a slider moves.

import { make } from './dom.js';
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
   * Shows `content`: `{ key, caption, capped, window, rows, cols, rowLabels, keyLabels, corner }`
   * where `window` is the engine's `window()` value and `rows`/`cols` the map's full size; or
   * null for no table.
   */
  show(content) {
    if (!content) {
      this.#box.replaceChildren();
      this.#lastKey = '';
      return;
    }
    if (content.key === this.#lastKey) return;
    this.#lastKey = content.key;
    const { window: w, rowLabels, keyLabels } = content;
    const table = make('table');
    const caption = make('caption', '', content.caption);
    if (content.capped) caption.append(' ', content.capped);
    table.append(caption);
    const thead = make('thead');
    const headRow = make('tr');
    const corner = make('th', '', content.corner);
    corner.scope = 'col';
    headRow.append(corner);
    for (let j = 0; j < w.cols; j++) {
      const th = make('th', '', visibleToken(keyLabels[w.col + j] ?? `${w.col + j + 1}`));
      th.scope = 'col';
      headRow.append(th);
    }
    thead.append(headRow);
    const tbody = make('tbody');
    for (let i = 0; i < w.rows; i++) {
      const tr = make('tr');
      const th = make('th', '', visibleToken(rowLabels[w.row + i] ?? `${w.row + i + 1}`));
      th.scope = 'row';
      tr.append(th);
      for (let j = 0; j < w.cols; j++) tr.append(make('td', '', fmt(w.data[i * w.cols + j])));
      tbody.append(tr);
    }
    table.append(thead, tbody);
    this.#box.replaceChildren(table);
  }

  /** Cancels a pending rebuild. */
  destroy() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
