// What the explorer says about the cell under the pointer (or selected), without rendering a
// map: the highlight in every map, the tooltip and the readout with the cell's arithmetic, the
// row view's marker, and the screen-reader table's window of the active map. The view calls
// `paint()` after every render and on every overlay frame; it keeps the last cell it described,
// so a pointer that stays in one cell asks the engine nothing.

import { setHidden } from './dom.js';
import { cellContent, placeTooltip } from './readout.js';
import { TABLE_CAP } from './table.js';

export class Readouts {
  #view;
  #parts;
  #lastCellKey = '';
  #colors = null;

  /** `view` is the ExplorerView; `parts` its `{ maps, compare, rowView, zoom }`. */
  constructor(view, parts) {
    this.#view = view;
    this.#parts = parts;
  }

  /** Describes the cell again on the next `paint()` (a new language, a slide ended). */
  invalidate() {
    this.#lastCellKey = '';
  }

  /** Reads the highlight's colours from the stylesheet again (a new theme). */
  resetColors() {
    this.#colors = null;
  }

  /** The highlight's colours from the stylesheet. */
  highlightColors() {
    if (!this.#colors) {
      const style = getComputedStyle(this.#view.el.maps);
      this.#colors = {
        outer: style.getPropertyValue('--highlight').trim() || '#000',
        inner: style.getPropertyValue('--highlight-inner').trim() || '#fff',
        surface: style.getPropertyValue('--surface').trim() || '#fff',
      };
    }
    return this.#colors;
  }

  /** Overlay highlight, tooltip, readout and row view for the current cell. Never renders maps. */
  paint() {
    if (this.#view.engine.state !== 'ready') return;
    if (this.#view.state.view === 'compare' || this.#view.state.view === 'model') {
      if (this.#view.state.view === 'compare') this.#parts.compare.paint();
      else setHidden(this.#view.el.tooltip, true);
      return;
    }
    this.#parts.maps.resolveHover();
    const cell = this.#view.isEmpty() ? null : this.#parts.maps.currentCell();
    if (!this.#view.walk.animating) this.#parts.maps.paint(cell, this.highlightColors());
    this.#parts.rowView.paint(cell && cell.row + 1 === this.#view.state.row ? cell.col : null);
    const key = cell ? `${cell.row},${cell.col},${this.#view.timings.renders},${this.#view.state.lang}` : `none,${this.#view.state.lang},${this.#view.isEmpty()},${this.#view.state.all_heads}`;
    if (key !== this.#lastCellKey) {
      this.#lastCellKey = key;
      const info = cell ? this.#view.engine.call((ex) => ex.cell(cell.row, cell.col)) : null;
      if (!info) {
        this.#view.el.readout.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: this.#view.t(this.#view.state.all_heads ? 'all_heads_hint' : 'readout_hint') }));
        setHidden(this.#view.el.tooltip, true);
        return;
      }
      const columns = Object.fromEntries(this.#view.view.stages.map((s) => [s.id, s.columns]));
      const context = { renormalize: this.#view.state.renormalize, lambda: info.lambda, columns, segment: this.#view.state.segment, tokens: this.#view.view.keys, col: cell.col };
      this.#view.el.tooltip.replaceChildren(cellContent(info, cell, context, (k, p) => this.#view.t(k, p)));
      this.#view.el.readout.replaceChildren(cellContent(info, cell, context, (k, p) => this.#view.t(k, p)));
    }
    // The walk's named cell is explained in the readout only: no popover over the maps.
    if (cell && !cell.fromRow && cell !== this.#parts.maps.pointed) placeTooltip(this.#view.el.tooltip, this.#parts.maps.anchor(cell));
    else setHidden(this.#view.el.tooltip, true);
  }

  /** What the screen-reader table shows: the active map's top-left window. */
  tableContent() {
    if (this.#view.engine.state !== 'ready' || this.#view.isEmpty() || !this.#view.view || this.#view.state.view === 'compare' || this.#view.state.view === 'model') return null;
    const stages = this.#view.shownStages();
    const active = this.#parts.maps.active;
    const stage = this.#view.state.all_heads || active < 0 ? stages[stages.length - 1] : stages[Math.min(active, stages.length - 1)];
    try {
      const shown = this.#parts.zoom.shown;
      const w = this.#view.engine.call((ex) => ex.window(stage.id, shown.row, shown.col, TABLE_CAP, TABLE_CAP));
      if (!w) return null;
      // The learned sink's strip beside the map: one more column, after the keys.
      const shares = stage.sink ? this.#view.engine.call((ex) => ex.sink_window(stage.id, w.row, w.rows)) : null;
      const { tokens: rows, keys: cols } = this.#view.view;
      const part = rows > w.rows || cols > w.cols;
      const from = { r0: w.row + 1, r1: w.row + w.rows, c0: w.col + 1, c1: w.col + w.cols, rows, cols };
      const capped = !part ? '' : w.row || w.col ? this.#view.t('table_window', from) : this.#view.t('table_capped', { r: w.rows, c: w.cols, rows, cols });
      return {
        key: `${stage.id},${this.#view.timings.renders},${this.#view.state.lang},${shown.row},${shown.col}`,
        caption: this.#view.t('table_caption', { name: stage.label, h: this.#view.state.head, total: this.#view.state.heads }),
        capped,
        window: w,
        rowLabels: this.#view.labels.rows,
        keyLabels: stage.columns === 'keys' ? this.#view.labels.keys : this.#view.engine.call((ex) => ex.column_labels(stage.id)),
        corner: this.#view.t('table_corner'),
        sink: shares ? { label: this.#view.t('sink_label'), values: shares } : null,
      };
    } catch (err) {
      this.#view.report(err);
      return null;
    }
  }
}
