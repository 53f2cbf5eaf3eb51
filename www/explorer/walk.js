// The guided walk: Back / Next (and the arrow keys) through the mechanism's stages, A →
// shift(A) → D → G → A′, then the layer's output, with one or two sentences per step that
// point at what is on screen ("the darkest purple cell of D is row «cat», key «sat»"): the
// engine finds those cells (`extremes`). Each step has its own address (`view=walk&step=d`).
// Entering shift(A) slides a copy of A's rows k columns across, unless the reader prefers
// reduced motion.

import { setDisabled } from './dom.js';
import { fmt } from './format.js';
import { STRINGS } from './i18n.js';
import { OUTPUT_STEP } from './state.js';

/** The steps of the walk for the engine's `view()`: every stage shown, then the output. */
export function walkSteps(view) {
  return [...(view?.stages ?? []).map((s) => s.id), OUTPUT_STEP];
}

/** How long the rows take to slide in shift(A), ms. */
export const SLIDE_MS = 700;

export class Walk {
  #view;
  /** Whether a slide is running (tests read it). */
  animating = false;
  /** The step last drawn, so that a slide runs once, on entering shift(A). */
  #lastStep = null;
  /** The cell the step's sentences name (`{ row, col }` of the step's map), or null: the maps
   * outline it while nothing is hovered or selected, and the readout explains it. */
  pointed = null;
  #frame = null;

  constructor(view) {
    this.#view = view;
    const el = view.el;
    el.walkBack.addEventListener('click', () => this.move(-1));
    el.walkNext.addEventListener('click', () => this.move(1));
  }

  /** The steps now, and the index of the current one (the first when the state names none). */
  position() {
    const steps = walkSteps(this.#view.view);
    const i = steps.indexOf(this.#view.state.step);
    return { steps, index: i < 0 ? 0 : i };
  }

  /** Moves `by` steps (−1 back, +1 next), as a person does. */
  move(by) {
    const { steps, index } = this.position();
    const next = Math.min(steps.length - 1, Math.max(0, index + by));
    if (next === index) return;
    this.#view.setFromPerson({ step: steps[next] });
  }

  /** The stages drawn at the current step: every stage up to it (all of them at the output). */
  shownStages(stages) {
    const { steps, index } = this.position();
    return steps[index] === OUTPUT_STEP ? stages : stages.slice(0, index + 1);
  }

  /** Whether the current step is the output. */
  atOutput() {
    const { steps, index } = this.position();
    return steps[index] === OUTPUT_STEP;
  }

  /** Paints the step's title, text and buttons. */
  paint() {
    const v = this.#view;
    const { steps, index } = this.position();
    const id = steps[index];
    const el = v.el;
    setDisabled(el.walkBack, index === 0);
    setDisabled(el.walkNext, index === steps.length - 1);
    const stage = v.view?.stages.find((s) => s.id === id);
    const name = stage ? stage.label : v.t('walk_output_name');
    el.walkTitle.textContent = v.t('walk_title', { n: index + 1, total: steps.length, name });
    el.walkText.textContent = this.#text(id, stage?.sink);
  }

  /** The step's sentences, filled with the cells the engine finds on screen; `sink`: the
   * step's map has the learned sink's strip beside it (its rows sum to less than 1). */
  #text(id, sink = false) {
    const v = this.#view;
    const s = v.state;
    const params = { k: s.shift, mk: -s.shift, s: s.segment, lambda: '' };
    const readout = v.view?.readout ?? '';
    if (readout.startsWith('λ')) params.lambda = readout;
    this.pointed = null;
    if (id !== OUTPUT_STEP) {
      try {
        const e = v.engine.call((ex) => ex.extremes(id));
        if (e) {
          this.pointed = { row: e.max.row, col: e.max.col };
          Object.assign(params, {
            q: e.max.query,
            key: e.max.key,
            v: fmt(e.max.value),
            q_min: e.min.query,
            key_min: e.min.key,
            v_min: fmt(e.min.value),
          });
        }
      } catch (err) {
        v.report(err);
      }
    }
    const key = sink && `walk_${id}_sink` in STRINGS.en ? `walk_${id}_sink` : `walk_${id}`;
    const fill = s.fill === 'zero' ? v.t('walk_fill_zero') : v.t('walk_fill_circular');
    const text = v.t(key in STRINGS.en ? key : 'walk_other', { ...params, fill });
    return sink && !key.endsWith('_sink') ? `${text} ${v.t('walk_sink')}` : text;
  }

  /**
   * After the maps of the walk (`stages`, on `maps`, a `Maps`) are drawn: on entering
   * shift(A), A's rows slide into it (their plots from the engine, each in its own canvas's
   * pixels; A is the smaller of the two).
   */
  entered(maps, stages) {
    const { steps, index } = this.position();
    const id = steps[index];
    if (id === this.#lastStep) return;
    this.#lastStep = id;
    const i = stages.findIndex((s) => s.id === id);
    if (stages[i]?.id !== 'shifted' || i < 1) return;
    const v = this.#view;
    const plotOf = (at) => {
      const first = v.engine.call((ex) => ex.cell_rect(at, 0, 0));
      const last = v.engine.call((ex) => ex.cell_rect(at, v.view.tokens - 1, v.view.keys - 1));
      if (!first || !last) return null;
      return { x: first.x, y: first.y, width: last.x + last.width - first.x, height: last.y + last.height - first.y, cell: first.width };
    };
    const from = plotOf(0);
    const to = plotOf(i);
    if (from && to) this.slide(maps.figures[0], maps.figures[i], { from, to, shift: v.state.shift, circular: v.state.fill === 'circular' });
  }

  /**
   * Slides a copy of A's rows (figure `from`, its plot `fromPlot`) across figure `to`'s
   * overlay (over its plot `toPlot`) by `shift` columns over SLIDE_MS, wrapping round for
   * circular fill; the final map is already drawn underneath. The plots are in each canvas's
   * device pixels, with their cell width (`cell`): A's rows are scaled to shift(A)'s size.
   * Nothing moves under reduced motion.
   */
  slide(from, to, { from: fromPlot, to: toPlot, shift, circular }) {
    this.stop();
    const reduced = globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
    if (reduced || !fromPlot || !toPlot || !toPlot.cell || shift === 0) return;
    const ctx = to.overlay.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    const start = performance.now();
    const distance = shift * toPlot.cell;
    this.animating = true;
    to.figure.dataset.animating = 'true';
    const step = (now) => {
      const t = Math.min(1, (now - start) / SLIDE_MS);
      const eased = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
      const dx = Math.round(eased * distance);
      ctx.clearRect(0, 0, to.overlay.width, to.overlay.height);
      if (t < 1) {
        // A's plot scaled onto shift(A)'s, moved by dx and clipped to it.
        ctx.save();
        ctx.beginPath();
        ctx.rect(toPlot.x, toPlot.y, toPlot.width, toPlot.height);
        ctx.clip();
        const put = (offset) =>
          ctx.drawImage(from.canvas, fromPlot.x, fromPlot.y, fromPlot.width, fromPlot.height, toPlot.x + offset, toPlot.y, toPlot.width, toPlot.height);
        put(dx);
        if (circular) put(dx > 0 ? dx - toPlot.width : dx + toPlot.width);
        ctx.restore();
        this.#frame = requestAnimationFrame(step);
      } else {
        this.stop();
        this.#view.repaintOverlay();
      }
    };
    this.#frame = requestAnimationFrame(step);
  }

  /** Stops a slide. */
  stop() {
    if (this.#frame !== null) cancelAnimationFrame(this.#frame);
    this.#frame = null;
    if (this.animating) {
      this.animating = false;
      for (const f of this.#view.el.maps.querySelectorAll('[data-animating]')) delete f.dataset.animating;
    }
  }
}
