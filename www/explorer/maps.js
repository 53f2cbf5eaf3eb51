// The maps of one explorer: one figure per map (the canvas the engine draws on, an overlay
// canvas for the highlight, the formula below), their sizes in device pixels, and what a
// person does with them: hover, tap or click a cell, move it with the arrow keys.
//
// Hit-testing and highlight rectangles come from the engine (`hit`, `cell_rect`: the same
// layout the map was drawn with), so the highlight lands on the cell under the pointer.
// Hovering only repaints the overlay; it never renders the maps.

import { make, setHidden } from './dom.js';

export class Maps {
  #container;
  #engine;
  #hint;
  #onInteraction;
  #onShowHead;
  #onRowLabel;
  #roomObserver;
  #onWindowResize;
  #onDocumentPointer;
  #onDocumentKey;
  #room = { widths: [], height: globalThis.innerHeight, at: 0 };
  /** `{ figure, canvas, overlay, caption }` per map, in the order drawn (`caption` is the
   * map's title line, above it). */
  figures = [];
  /** The legend's canvas: the colour scales the maps share, drawn once. */
  legend = null;
  /** The grid the figures were last placed in (`place`), in device pixels. */
  grid = null;
  /** The cell under the mouse: `{ index, clientX, clientY, row?, col?, pending }` or null. */
  hover = null;
  /** The cell pinned by a click, a tap or the keys: `{ index, row, col, keyboard? }` or null. */
  selected = null;
  /** The cell the guided walk's step names (`{ index, row, col }`), or null: described while
   * nothing is hovered or selected. */
  pointed = null;
  /** The map the table describes (focused, hovered or selected); -1 for the last one. */
  active = -1;
  /** Whether the figures show every head of one stage (clicking one shows its stages). */
  allHeads = false;
  /** Rows and key columns of the maps now drawn. */
  shape = { rows: 0, cols: 0 };

  /**
   * `container` holds the figures; `engine` is the component's `Engine`; `hintId` the id of
   * the keyboard hint. `onInteraction(what)` runs when the highlighted cell or the active map
   * changes (`'overlay'` or `'active'`), `onResize()` when a canvas's size changed, and
   * `onShowHead(index)` when a map of the all-heads view is picked, `onRowLabel(row)` when a
   * row label (left of a map) is clicked.
   */
  constructor(container, engine, { hintId, onInteraction, onResize, onShowHead, onRowLabel = () => {} }) {
    this.#container = container;
    this.#engine = engine;
    this.#hint = hintId;
    this.#onInteraction = onInteraction;
    this.#onShowHead = onShowHead;
    this.#onRowLabel = onRowLabel;
    // The grid is fitted to the room the maps have (the engine's `fit_grid`): the container's
    // width and the window's height. Each canvas is sized from the grid, never from its own
    // box, so only the room is watched: a wider container or a taller window fits the maps
    // again, and a link opened in a large window draws what it draws after a resize.
    this.#roomObserver = new ResizeObserver((entries) => {
      const width = Math.round(entries[entries.length - 1].contentRect.width);
      if (this.#roomChanged(width, this.#room.height)) onResize();
    });
    this.#roomObserver.observe(container);
    this.#onWindowResize = () => {
      const height = globalThis.innerHeight;
      if (this.#roomChanged(this.#room.widths[0] ?? 0, height)) onResize();
    };
    globalThis.addEventListener('resize', this.#onWindowResize);
    // A pinned cell's popover closes with a tap anywhere but on a map, or with Escape from
    // anywhere (on a phone it covered the walk, Compare and Present, and nothing closed it).
    this.#onDocumentPointer = (event) => {
      if (event.pointerType !== 'touch' || !this.selected) return;
      const path = event.composedPath();
      if (this.figures.some((f) => path.includes(f.canvas))) return;
      this.deselect();
    };
    this.#onDocumentKey = (event) => {
      if (event.key === 'Escape' && !event.defaultPrevented && this.deselect()) event.preventDefault();
    };
    document.addEventListener('pointerdown', this.#onDocumentPointer, true);
    document.addEventListener('keydown', this.#onDocumentKey);
  }

  /** Unpins the selected cell (its highlight and popover go); whether one was selected. */
  deselect() {
    if (!this.selected) return false;
    this.selected = null;
    this.#onInteraction('overlay');
    return true;
  }

  /**
   * Records the room's `width` and `height` (CSS px); whether the maps should be fitted again.
   * A width that returns within a second to the one before the last, a scrollbar's width
   * away (A, B, A: a page scrollbar that the fitted maps make appear and then disappear), is
   * not followed, so the two cannot chase each other.
   */
  #roomChanged(width, height) {
    const [last, before] = this.#room.widths;
    if (width === last && height === this.#room.height) return false;
    const now = performance.now();
    const flapping =
      width !== last && width === before && Math.abs(width - last) <= SCROLLBAR_PX && height === this.#room.height && now - this.#room.at < 1000;
    this.#room = { widths: width === last ? this.#room.widths : [width, last], height, at: now };
    return last !== undefined && !flapping;
  }

  /** Replaces the figures with `count` empty ones, and the legend. */
  build(count) {
    this.#container.replaceChildren();
    // New canvases: the engine draws every map whole again, not only its cells.
    if (this.#engine.state === 'ready') this.#engine.call((ex) => ex.forget_drawn());
    this.figures = [];
    for (let index = 0; index < count; index++) {
      const figure = make('figure', 'map');
      figure.setAttribute('part', 'map');
      const caption = make('figcaption', 'map-title');
      const frame = make('div', 'map-frame');
      const canvas = make('canvas', 'map-canvas');
      canvas.setAttribute('role', 'img');
      canvas.tabIndex = 0;
      canvas.setAttribute('aria-describedby', this.#hint);
      const overlay = make('canvas', 'map-overlay');
      overlay.setAttribute('aria-hidden', 'true');
      frame.append(canvas, overlay);
      figure.append(caption, frame);
      this.#container.append(figure);
      this.#wire(canvas, index);
      this.figures.push({ figure, canvas, overlay, caption });
    }
    this.legend = make('canvas', 'legend-canvas');
    this.legend.setAttribute('part', 'legend');
    this.legend.setAttribute('aria-hidden', 'true');
    this.legend.hidden = true;
    this.#container.append(this.legend);
    this.#container.dataset.count = String(count);
    this.grid = null;
    this.hover = null;
    if (this.active >= count) this.active = -1;
  }

  /** Removes every figure (an empty sentence). */
  clear() {
    this.build(0);
    this.selected = null;
  }

  /**
   * Places the figures and the legend where `grid` (the engine's `fit_grid`, device pixels)
   * puts them, each canvas exactly its place's size, its title line `titlePx` above it.
   */
  place(grid, titlePx) {
    const dpr = globalThis.devicePixelRatio || 1;
    const css = (px) => `${px / dpr}px`;
    this.grid = grid;
    this.#container.style.setProperty('--grid-w', css(grid.width_px));
    this.#container.style.setProperty('--grid-h', css(grid.height_px));
    this.#container.style.setProperty('--title-h', css(titlePx));
    this.figures.forEach(({ figure, canvas, overlay, caption }, i) => {
      const p = grid.places[i];
      if (!p) return;
      figure.style.left = css(p.x);
      figure.style.top = css(p.y - titlePx);
      figure.style.width = css(p.width);
      // The title centred over the plot, not over the row labels beside it.
      caption.style.marginLeft = css(p.plot.x);
      caption.style.width = css(p.plot.width);
      for (const c of [canvas, overlay]) {
        // Assigning a canvas's size clears it, even to the same value: only when it changed.
        if (c.width !== p.width) c.width = p.width;
        if (c.height !== p.height) c.height = p.height;
        c.style.width = css(p.width);
        c.style.height = css(p.height);
      }
    });
    const legend = this.legend;
    setHidden(legend, !grid.legend);
    if (grid.legend) {
      const l = grid.legend;
      legend.style.left = css(l.x);
      legend.style.top = css(l.y);
      legend.style.width = css(l.width);
      legend.style.height = css(l.height);
      if (legend.width !== l.width) legend.width = l.width;
      if (legend.height !== l.height) legend.height = l.height;
    }
  }

  /** The width the maps have (CSS px): their container's. */
  width() {
    return this.#container.clientWidth;
  }

  /** The largest label stride of the maps just drawn (1: every token on their axes). */
  labelStride() {
    let stride = 1;
    for (let i = 0; i < this.figures.length; i++) {
      const d = this.#engine.call((ex) => ex.labels_drawn(i));
      if (d?.row_labels) stride = Math.max(stride, d.row_stride);
      if (d?.col_labels) stride = Math.max(stride, d.col_stride);
    }
    return stride;
  }

  /** The canvases, in order. */
  canvases() {
    return this.figures.map((f) => f.canvas);
  }

  /** The label font asked for, in device pixels: 13 CSS px, 16 while presenting. The grid
   * shrinks it where a map's cells are too close for every token's label at that size, down
   * to 0.8 of it (`LABEL_SHRINK` in src/render/layout.rs), before it leaves any out. */
  fontPx(presenting = false) {
    const dpr = globalThis.devicePixelRatio || 1;
    return Math.round((presenting ? 16 : 13) * dpr);
  }

  /** The cell the readouts describe: the hovered one, else the selected one. */
  currentCell() {
    if (this.allHeads) return null;
    if (this.hover && this.hover.row !== undefined) return this.hover;
    return this.selected ?? this.pointed;
  }

  /** Drops a selection that no longer fits the maps (fewer tokens now). Column `cols`, past
   * the keys, is the learned sink's strip (`hit` answers it there). */
  fit(rows, cols) {
    this.shape = { rows, cols };
    if (this.selected && (this.selected.row >= rows || this.selected.col > cols)) this.selected = null;
  }

  /** The cell under a client position on map `index`, or null. */
  hitAt(index, clientX, clientY) {
    const canvas = this.figures[index]?.canvas;
    if (!canvas) return null;
    const rect = canvas.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return null;
    const x = ((clientX - rect.left) * canvas.width) / rect.width;
    const y = ((clientY - rect.top) * canvas.height) / rect.height;
    const hit = this.#engine.call((ex) => ex.hit(index, x, y));
    return hit ? { row: hit[0], col: hit[1] } : null;
  }

  /** The row whose label is under a client position on map `index`, or null. */
  #rowLabelAt(index, clientX, clientY) {
    const canvas = this.figures[index]?.canvas;
    const rect = canvas?.getBoundingClientRect();
    if (!rect || rect.width === 0) return null;
    const x = ((clientX - rect.left) * canvas.width) / rect.width;
    const y = ((clientY - rect.top) * canvas.height) / rect.height;
    return this.#engine.call((ex) => ex.row_label_hit(index, x, y)) ?? null;
  }

  /** Resolves a hover that moved since the last frame into its cell. */
  resolveHover() {
    if (!this.hover?.pending) return;
    const { index, clientX, clientY } = this.hover;
    const cell = this.hitAt(index, clientX, clientY);
    this.hover = cell ? { index, clientX, clientY, ...cell } : { index, clientX, clientY };
    if (cell && this.active !== index) {
      this.active = index;
      this.markActive();
      this.#onInteraction('active');
    }
  }

  /** Outlines the active map's figure. */
  markActive() {
    this.figures.forEach(({ figure }, i) => figure.classList.toggle('selected', i === this.active));
  }

  /** Paints the highlight of `cell` (its row dashed, the cell outlined) on every overlay. */
  paint(cell, { outer, inner }) {
    const dpr = globalThis.devicePixelRatio || 1;
    this.figures.forEach(({ overlay }, i) => {
      const ctx = overlay.getContext('2d');
      ctx.clearRect(0, 0, overlay.width, overlay.height);
      if (!cell) return;
      const [rowStart, rowEnd, rect] = this.#engine.call((ex) => [
        ex.cell_rect(i, cell.row, 0),
        ex.cell_rect(i, cell.row, Math.max(0, this.shape.cols - 1)),
        ex.cell_rect(i, cell.row, cell.col),
      ]);
      if (rowStart && rowEnd) {
        ctx.setLineDash([4 * dpr, 3 * dpr]);
        ctx.lineWidth = Math.max(1, dpr);
        ctx.strokeStyle = outer;
        const x0 = rowStart.x;
        const x1 = rowEnd.x + rowEnd.width;
        ctx.strokeRect(x0 + 0.5, rowStart.y + 0.5, x1 - x0 - 1, rowStart.height - 1);
        ctx.setLineDash([]);
      }
      if (rect) {
        const w = Math.max(2, Math.round(2 * dpr));
        ctx.lineWidth = w + 2 * Math.max(1, Math.round(dpr));
        ctx.strokeStyle = inner;
        ctx.strokeRect(rect.x - w / 2, rect.y - w / 2, rect.width + w, rect.height + w);
        ctx.lineWidth = w;
        ctx.strokeStyle = outer;
        ctx.strokeRect(rect.x - w / 2, rect.y - w / 2, rect.width + w, rect.height + w);
      }
    });
  }

  /** Where to put a tooltip for `cell`, in client pixels, or null when it is off screen. */
  anchor(cell) {
    if (this.hover && this.hover.row !== undefined) return { x: this.hover.clientX, y: this.hover.clientY };
    const figure = this.figures[cell.index];
    if (!figure) return null;
    const r = this.#engine.call((ex) => ex.cell_rect(cell.index, cell.row, cell.col));
    if (!r) return null;
    const rect = figure.canvas.getBoundingClientRect();
    const scale = rect.width / figure.canvas.width;
    const x = rect.left + (r.x + r.width) * scale;
    const y = rect.top + (r.y + r.height) * scale;
    if (y < 0 || y > innerHeight || x < 0 || x > innerWidth) return null;
    return { x, y };
  }

  #wire(canvas, index) {
    canvas.addEventListener('pointermove', (event) => {
      if (event.pointerType === 'touch' || this.allHeads) return;
      this.hover = { index, clientX: event.clientX, clientY: event.clientY, pending: true };
      this.#onInteraction('overlay');
    });
    canvas.addEventListener('pointerleave', () => {
      if (!this.hover) return;
      this.hover = null;
      this.#onInteraction('overlay');
    });
    canvas.addEventListener('click', (event) => {
      if (this.allHeads) {
        this.#onShowHead(index);
        return;
      }
      const cell = this.hitAt(index, event.clientX, event.clientY);
      if (!cell) {
        const row = this.#rowLabelAt(index, event.clientX, event.clientY);
        if (row !== null) this.#onRowLabel(row);
        return;
      }
      const same = this.selected && this.selected.row === cell.row && this.selected.col === cell.col;
      this.selected = cell && !same ? { index, ...cell } : null;
      this.active = index;
      if (event.pointerType === 'touch') this.hover = null;
      this.markActive();
      this.#onInteraction('active');
    });
    canvas.addEventListener('focus', () => {
      if (this.allHeads) return;
      this.active = index;
      this.markActive();
      this.#onInteraction('active');
    });
    canvas.addEventListener('keydown', (event) => this.#key(event, index));
  }

  #key(event, index) {
    if (this.allHeads) {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this.#onShowHead(index);
      }
      return;
    }
    if (event.key === 'Escape') {
      if (this.deselect()) event.preventDefault();
      return;
    }
    const move = MOVES[event.key];
    if (!move) return;
    event.preventDefault();
    const { rows, cols } = this.shape;
    if (rows === 0 || cols === 0) return;
    const from = this.selected;
    const clamp = (v, n) => Math.min(n - 1, Math.max(0, v));
    const row = from ? clamp(from.row + move[0], rows) : 0;
    const step = Number.isFinite(move[1]) ? move[1] : Math.sign(move[1]) * cols;
    const col = from ? clamp(from.col + step, cols) : 0;
    this.selected = { index, row, col, keyboard: true };
    this.hover = null;
    this.active = index;
    this.markActive();
    this.#onInteraction('active');
  }

  /** Stops observing the canvases. */
  destroy() {
    this.#roomObserver.disconnect();
    globalThis.removeEventListener('resize', this.#onWindowResize);
    document.removeEventListener('pointerdown', this.#onDocumentPointer, true);
    document.removeEventListener('keydown', this.#onDocumentKey);
  }
}

/** The widest page scrollbar (CSS px): a width change this small may be one appearing. */
const SCROLLBAR_PX = 24;

const MOVES = Object.freeze({
  ArrowUp: [-1, 0],
  ArrowDown: [1, 0],
  ArrowLeft: [0, -1],
  ArrowRight: [0, 1],
  Home: [0, -Infinity],
  End: [0, Infinity],
});
