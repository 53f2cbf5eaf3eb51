// The row view: one query token's row of every stage as lines over the keys (drawn by the
// engine with plotters: `render_row`), below the maps. A person opens it by clicking a cell or
// a row label, or with `row=` in the address; it follows the sliders (it is redrawn with the
// maps) and the pointer (the hovered key is highlighted here and in the maps, and its
// arithmetic shows in the readout).

import { setHidden } from './dom.js';

export class RowView {
  #view;
  /** The key under the pointer on the row chart, or null. */
  hoverKey = null;

  constructor(view) {
    this.#view = view;
    const el = view.el;
    el.rowClose.addEventListener('click', () => view.setFromPerson({ row: 0 }));
    el.rowCanvas.addEventListener('pointermove', (event) => {
      const key = this.#hit(event);
      if (key !== this.hoverKey) {
        this.hoverKey = key;
        view.rowHovered(key);
      }
    });
    el.rowCanvas.addEventListener('pointerleave', () => {
      this.hoverKey = null;
      view.rowHovered(null);
    });
  }

  #hit(event) {
    const canvas = this.#view.el.rowCanvas;
    const rect = canvas.getBoundingClientRect();
    if (rect.width === 0) return null;
    const x = ((event.clientX - rect.left) * canvas.width) / rect.width;
    const y = ((event.clientY - rect.top) * canvas.height) / rect.height;
    return this.#view.engine.call((ex) => ex.row_hit(x, y)) ?? null;
  }

  /** Draws the row (from 1 in the state; 0 hides the view) with key `hovered` (from 0). */
  paint(hovered) {
    const v = this.#view;
    const row = v.state.row;
    const el = v.el;
    const show = row >= 1 && row <= (v.view?.tokens ?? 0) && !v.isEmpty() && v.state.view !== 'compare' && v.state.view !== 'model';
    setHidden(el.rowView, !show);
    if (!show) return;
    const canvas = el.rowCanvas;
    const dpr = globalThis.devicePixelRatio || 1;
    const rect = canvas.getBoundingClientRect();
    const [w, h] = [Math.max(1, Math.round(rect.width * dpr)), Math.max(1, Math.round(rect.height * dpr))];
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    const font = Math.round(13 * dpr);
    v.engine.call((ex) => ex.render_row(canvas, row - 1, font, hovered ?? undefined));
    const query = v.labels.rows[row - 1] ?? '';
    el.rowViewTitle.textContent = v.t('row_view_title', { i: row, q: query });
    canvas.setAttribute('aria-label', v.t('row_view_aria', { i: row, q: query, n: v.view.keys }));
  }
}
