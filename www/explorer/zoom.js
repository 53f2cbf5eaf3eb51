// Zooming into long maps: the overview (the whole final map, with a box over the part shown)
// and what a person does to move that part, on the overview and on the maps themselves.
//
//   - the buttons: zoom in, zoom out, whole map;
//   - on a map: Ctrl (or ⌘) + wheel, or a trackpad pinch (which the browser sends as Ctrl +
//     wheel), zooms about the pointer; a plain wheel pans a zoomed map (and scrolls the page
//     once the map is at its edge, or when it is not zoomed); dragging pans; two fingers pinch;
//     + − 0 on a focused map zoom in, out and back to the whole;
//   - on the overview: click or drag to move the box, arrow keys move it a quarter, + − 0.
//
// Every gesture ends in `view.setFromPerson({ viewport })`: the viewport is state like any
// other (viewport.js), drawn by the engine (`set_viewport`), and written to the address.
// Zooming recomputes no map: the engine's caches hold the whole maps, and a render draws only
// the window's cells, labels and mask.

import { setAttr, setDisabled, setHidden, setText } from './dom.js';
import { centreOn, follow, MIN_VIEWPORT, panBy, viewportOf, zoomAt, ZOOM_FROM, ZOOM_STEP } from './viewport.js';

/** A drag shorter than this (CSS px) is a click, which selects a cell. */
const DRAG_PX = 4;
/** Wheel pixels per zoom factor e (one notch of 100 px zooms by about 1.2). */
const WHEEL_PX_PER_E = 550;

export class Zoom {
  /** The overview's CSS width, measured once a showing (0: not yet). */
  #overviewCss = 0;
  #view;
  #el;
  #maps;
  /** The viewport drawn by the last render (`viewportOf`), and the maps' shape. */
  shown = { row: 0, col: 0, size: 0, whole: true };
  shape = { rows: 0, cols: 0 };
  /** Whether zooming is offered now (a long enough map, the control allowed, not comparing). */
  active = false;
  #drag = null; // { pointerId, x, y, start: viewport, moved, cellPx }
  #pinch = new Map(); // pointerId -> { x, y } of touch pointers on the maps
  #pinchStart = null; // { distance, viewport, anchor }
  #suppressClick = false;
  #overviewDrag = null;
  /** After a zoom about the pointer: the cell that must stay under it (`{ canvas, x, y, row,
   * col }`), checked once the new window is drawn. */
  #anchor = null;

  /** `view` is the ExplorerView; `maps` its Maps (for the cell under a pointer). */
  constructor(view, maps) {
    this.#view = view;
    this.#el = view.el;
    this.#maps = maps;
    this.#wireButtons();
    this.#wireOverview();
    this.#wireMaps(view.el.maps);
  }

  /** The engine's viewport for the maps now drawn; call after `set_viewport`. */
  read() {
    const v = this.#view.engine.call((ex) => ex.viewport());
    this.shape = { rows: v.total_rows, cols: v.total_cols };
    this.shown = viewportOf(`${v.row},${v.col},${Math.max(v.rows, v.cols)}`, this.shape);
  }

  /**
   * Before the maps are sized: shows the zoom bar when zooming is offered (a map of at least
   * ZOOM_FROM tokens, one whose last drawing left labels out (`labelsHidden`, the stride), or
   * one zoomed already; the `zoom` control allowed; not comparing), so the maps are fitted to
   * the room it leaves. `allowed` is the controls option (or null).
   */
  show({ allowed, comparing, labelsHidden = 0 }) {
    const el = this.#el;
    // Also offered whenever the maps leave labels out (`labelsHidden`: every n-th drawn).
    this.labelsHidden = labelsHidden;
    const long = Math.max(this.shape.rows, this.shape.cols) >= ZOOM_FROM || labelsHidden > 1;
    const active = !comparing && (allowed === null || allowed.has('zoom')) && (long || !this.shown.whole);
    if (active && !this.active) this.#overviewCss = 0;
    this.active = active;
    setHidden(el.zoom, !this.active);
    el.maps.classList.toggle('zoomable', this.active);
    el.maps.classList.toggle('zoomed', this.active && !this.shown.whole);
  }

  /** After a render: the zoom bar's status, the overview of `stage` (an id), the box. */
  paint(stage) {
    if (!this.active) return;
    const el = this.#el;
    const { row, col, size, whole } = this.shown;
    const { rows, cols } = this.shape;
    const t = (k, p) => this.#view.t(k, p);
    const status = whole
      ? this.labelsHidden > 1
        ? t('zoom_labels_hidden', { n: rows, every: this.labelsHidden })
        : t('zoom_whole_status', { n: rows })
      : t('zoom_status', { r0: row + 1, r1: Math.min(rows, row + size), c0: col + 1, c1: Math.min(cols, col + size), n: rows });
    setText(el.zoomStatus, status);
    setDisabled(el.zoomIn, size <= Math.min(MIN_VIEWPORT, Math.max(rows, cols)));
    setDisabled(el.zoomOut, whole);
    setDisabled(el.zoomWhole, whole);
    this.#drawOverview(stage);
    // The box, in the overview's own proportions (it is drawn square over a square map).
    const box = el.zoomWindow.style;
    const put = (name, value) => box[name] !== value && (box[name] = value);
    put('left', `${(100 * col) / cols}%`);
    put('top', `${(100 * row) / rows}%`);
    put('width', `${(100 * Math.min(size, cols)) / cols}%`);
    put('height', `${(100 * Math.min(size, rows)) / rows}%`);
    setHidden(el.zoomWindow, whole);
    setAttr(el.zoomOverview, 'aria-label', t('zoom_overview_label', { status: el.zoomStatus.textContent }));
    this.#keepAnchor();
  }

  /**
   * Cells are whole device pixels, so a new window's plot is not exactly the old one scaled:
   * after a zoom about the pointer the cell under it may have moved by a few cells. Once
   * drawn, pan by that difference (once), so the cell a person zoomed on stays under the pointer.
   */
  #keepAnchor() {
    const anchor = this.#anchor;
    this.#anchor = null;
    if (!anchor || this.shown.whole) return;
    const index = this.#maps.canvases().indexOf(anchor.canvas);
    if (index < 0) return;
    const cell = this.#maps.hitAt(index, anchor.x, anchor.y);
    if (!cell) return;
    const dr = Math.floor(anchor.row) - cell.row;
    const dc = Math.floor(anchor.col) - cell.col;
    if (dr || dc) this.#set(panBy(this.shown, this.shape, dr, dc));
  }

  /** Hides the zoom bar (an empty box, or the compare view). */
  hide() {
    this.active = false;
    this.#el.zoom.hidden = true;
    this.#el.maps.classList.remove('zoomable', 'zoomed');
  }

  #drawOverview(stage) {
    const canvas = this.#el.zoomOverview;
    const dpr = globalThis.devicePixelRatio || 1;
    // Measured once a showing (reading it after the render's changes would make the browser
    // lay the page out in the middle of a slider's tick).
    if (!this.#overviewCss) this.#overviewCss = canvas.getBoundingClientRect().width || 96;
    const side = Math.max(16, Math.round(this.#overviewCss * dpr));
    if (canvas.width !== side) canvas.width = side;
    if (canvas.height !== side) canvas.height = side;
    this.#view.engine.call((ex) => ex.render_overview(canvas, stage ?? ''));
  }

  /** Moves the viewport so the cell the keys selected stays in view. */
  follow(cell) {
    if (!this.active || !cell) return;
    const next = follow(this.shown, this.shape, cell);
    if (next !== null) this.#set(next);
  }

  #set(viewport) {
    if (viewport === (this.#view.state.viewport ?? '')) return;
    this.#view.setFromPerson({ viewport });
  }

  /**
   * The viewport asked for: the state's, which is ahead of `shown` until the next render
   * draws it. Gestures start from it, so two clicks in one frame zoom twice, not once.
   */
  #requested() {
    return viewportOf(this.#view.state.viewport ?? '', this.shape);
  }

  #zoom(factor, anchor) {
    if (!this.active) return;
    this.#set(zoomAt(this.#requested(), this.shape, factor, anchor));
  }

  /** + − 0 (and = for +, _ for −, as on keyboards without a keypad). True if handled. */
  key(event) {
    if (!this.active || event.altKey || event.ctrlKey || event.metaKey) return false;
    const factor = { '+': ZOOM_STEP, '=': ZOOM_STEP, '-': 1 / ZOOM_STEP, _: 1 / ZOOM_STEP }[event.key];
    if (factor) {
      const cell = this.#maps.selected;
      this.#zoom(factor, cell ? { row: cell.row + 0.5, col: cell.col + 0.5 } : undefined);
    } else if (event.key === '0') {
      this.#set('');
    } else {
      return false;
    }
    event.preventDefault();
    return true;
  }

  #wireButtons() {
    const el = this.#el;
    el.zoomIn.addEventListener('click', () => this.#zoom(ZOOM_STEP));
    el.zoomOut.addEventListener('click', () => this.#zoom(1 / ZOOM_STEP));
    el.zoomWhole.addEventListener('click', () => this.#set(''));
  }

  /** The whole-map position under a client point on the overview (fractions). */
  #overviewAt(event) {
    const rect = this.#el.zoomOverview.getBoundingClientRect();
    const fx = Math.min(1, Math.max(0, (event.clientX - rect.left) / (rect.width || 1)));
    const fy = Math.min(1, Math.max(0, (event.clientY - rect.top) / (rect.height || 1)));
    return { row: fy * this.shape.rows, col: fx * this.shape.cols };
  }

  #wireOverview() {
    const overview = this.#el.zoomOverview;
    const frame = overview.parentElement;
    frame.addEventListener('pointerdown', (event) => {
      if (!this.active || this.shown.whole || event.button > 0) return;
      event.preventDefault();
      frame.setPointerCapture?.(event.pointerId);
      this.#overviewDrag = event.pointerId;
      this.#set(centreOn(this.shown, this.shape, this.#overviewAt(event)));
    });
    frame.addEventListener('pointermove', (event) => {
      if (this.#overviewDrag !== event.pointerId) return;
      this.#set(centreOn(this.shown, this.shape, this.#overviewAt(event)));
    });
    const end = (event) => {
      if (this.#overviewDrag === event.pointerId) this.#overviewDrag = null;
    };
    frame.addEventListener('pointerup', end);
    frame.addEventListener('pointercancel', end);
    overview.addEventListener('keydown', (event) => {
      if (this.key(event)) return;
      const quarter = Math.max(1, Math.round(this.shown.size / 4));
      const move = { ArrowUp: [-quarter, 0], ArrowDown: [quarter, 0], ArrowLeft: [0, -quarter], ArrowRight: [0, quarter] }[event.key];
      if (!move || !this.active || this.shown.whole) return;
      event.preventDefault();
      this.#set(panBy(this.#requested(), this.shape, move[0], move[1]));
    });
  }

  /** The whole-map position (fractions) under a client point on map `index`, or null. */
  #mapAt(canvas, clientX, clientY) {
    const index = this.#maps.canvases().indexOf(canvas);
    if (index < 0) return null;
    const cell = this.#maps.hitAt(index, clientX, clientY);
    if (!cell) return null;
    // The fraction inside the cell, so zooming keeps the exact point under the pointer.
    const r = this.#view.engine.call((ex) => ex.cell_rect(index, cell.row, cell.col));
    const rect = canvas.getBoundingClientRect();
    const scale = canvas.width / (rect.width || 1);
    const fx = r ? ((clientX - rect.left) * scale - r.x) / (r.width || 1) : 0.5;
    const fy = r ? ((clientY - rect.top) * scale - r.y) / (r.height || 1) : 0.5;
    return { row: cell.row + Math.min(1, Math.max(0, fy)), col: cell.col + Math.min(1, Math.max(0, fx)) };
  }

  /** CSS pixels per token on map `canvas` now (for dragging by whole tokens). */
  #cellPx(canvas) {
    const index = this.#maps.canvases().indexOf(canvas);
    const r = index < 0 ? null : this.#view.engine.call((ex) => ex.cell_rect(index, this.shown.row, this.shown.col));
    const rect = canvas.getBoundingClientRect();
    return r ? (r.width * (rect.width || 1)) / (canvas.width || 1) : 1;
  }

  #wireMaps(container) {
    const mapCanvas = (event) => {
      const target = event.composedPath()[0];
      return target instanceof HTMLCanvasElement && target.classList.contains('map-canvas') ? target : null;
    };
    container.addEventListener(
      'wheel',
      (event) => {
        const canvas = mapCanvas(event);
        if (!canvas || !this.active) return;
        if (event.ctrlKey || event.metaKey) {
          event.preventDefault();
          const delta = event.deltaMode === 1 ? event.deltaY * 33 : event.deltaY;
          const at = this.#mapAt(canvas, event.clientX, event.clientY);
          this.#anchor = at ? { canvas, x: event.clientX, y: event.clientY, ...at } : null;
          this.#zoom(Math.exp(-delta / WHEEL_PX_PER_E), at ?? undefined);
          return;
        }
        if (this.shown.whole) return;
        const cell = this.#cellPx(canvas);
        const lines = event.deltaMode === 1 ? 1 : 1 / cell;
        const [dr, dc] = event.shiftKey ? [0, event.deltaY * lines] : [event.deltaY * lines, event.deltaX * lines];
        const next = panBy(this.#requested(), this.shape, Math.round(dr), Math.round(dc));
        // At the edge the page scrolls, as it would over any picture.
        if (next === this.#view.state.viewport) return;
        event.preventDefault();
        this.#set(next);
      },
      { passive: false },
    );
    container.addEventListener('pointerdown', (event) => {
      const canvas = mapCanvas(event);
      if (!canvas || !this.active) return;
      if (event.pointerType === 'touch') {
        this.#pinch.set(event.pointerId, { x: event.clientX, y: event.clientY, canvas });
        if (this.#pinch.size === 2) this.#startPinch(canvas);
      }
      if (this.shown.whole || event.button > 0 || this.#pinch.size > 1) return;
      this.#drag = { pointerId: event.pointerId, x: event.clientX, y: event.clientY, start: this.shown, moved: false, cellPx: this.#cellPx(canvas), canvas };
    });
    container.addEventListener('pointermove', (event) => {
      if (this.#pinch.has(event.pointerId)) {
        const p = this.#pinch.get(event.pointerId);
        p.x = event.clientX;
        p.y = event.clientY;
        if (this.#pinch.size === 2 && this.#pinchStart) {
          this.#movePinch();
          return;
        }
      }
      const drag = this.#drag;
      if (!drag || drag.pointerId !== event.pointerId) return;
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < DRAG_PX) return;
      if (!drag.moved) {
        drag.moved = true;
        drag.canvas.setPointerCapture?.(event.pointerId);
        this.#el.maps.classList.add('panning');
      }
      this.#set(panBy(drag.start, this.shape, -Math.round(dy / drag.cellPx), -Math.round(dx / drag.cellPx)));
    });
    const end = (event) => {
      this.#pinch.delete(event.pointerId);
      if (this.#pinch.size < 2) this.#pinchStart = null;
      if (this.#drag?.pointerId === event.pointerId) {
        if (this.#drag.moved) this.#suppressClick = true;
        this.#drag = null;
        this.#el.maps.classList.remove('panning');
      }
    };
    container.addEventListener('pointerup', end);
    container.addEventListener('pointercancel', end);
    // A drag is not a click: the cell under the pointer where it ended is not selected.
    container.addEventListener(
      'click',
      (event) => {
        if (!this.#suppressClick) return;
        this.#suppressClick = false;
        event.stopPropagation();
        event.preventDefault();
      },
      true,
    );
    container.addEventListener('keydown', (event) => {
      if (mapCanvas(event)) this.key(event);
    });
  }

  #startPinch(canvas) {
    const [a, b] = [...this.#pinch.values()];
    const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    this.#drag = null;
    this.#pinchStart = {
      distance: Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)),
      viewport: this.shown,
      anchor: this.#mapAt(canvas, mid.x, mid.y) ?? undefined,
    };
  }

  #movePinch() {
    const [a, b] = [...this.#pinch.values()];
    const start = this.#pinchStart;
    const factor = Math.hypot(a.x - b.x, a.y - b.y) / start.distance;
    this.#suppressClick = true;
    this.#set(zoomAt(start.viewport, this.shape, factor, start.anchor));
  }
}
