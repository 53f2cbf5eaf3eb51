// The guided walk: Back / Next (and the arrow keys) through the mechanism's stages, A →
// shift(A) → D → G → A′, then the layer's output, with one or two sentences per step that
// point at what is on screen ("the darkest purple cell of D is row «cat», key «sat»"): the
// engine finds those cells (`extremes`). Each step has its own address (`view=walk&step=d`).
// Entering shift(A) slides a copy of A's rows k columns across, unless the reader prefers
// reduced motion.

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
    el.walkBack.disabled = index === 0;
    el.walkNext.disabled = index === steps.length - 1;
    const stage = v.view?.stages.find((s) => s.id === id);
    const name = stage ? stage.label : v.t('walk_output_name');
    el.walkTitle.textContent = v.t('walk_title', { n: index + 1, total: steps.length, name });
    el.walkText.textContent = this.#text(id);
  }

  /** The step's sentences, filled with the cells the engine finds on screen. */
  #text(id) {
    const v = this.#view;
    const s = v.state;
    const params = { k: s.shift, mk: -s.shift, s: s.segment, lambda: '' };
    const readout = v.view?.readout ?? '';
    if (readout.startsWith('λ')) params.lambda = readout;
    if (id !== OUTPUT_STEP) {
      try {
        const e = v.engine.call((ex) => ex.extremes(id));
        if (e) {
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
    const key = `walk_${id}`;
    const fill = s.fill === 'zero' ? v.t('walk_fill_zero') : v.t('walk_fill_circular');
    return v.t(key in STRINGS.en ? key : 'walk_other', { ...params, fill });
  }

  /**
   * Slides a copy of A's rows (`from`, the first figure) across `to`'s overlay by `shift`
   * columns over SLIDE_MS, wrapping round for circular fill; the final map is already drawn
   * underneath. `cellWidth` and `plot` are device pixels. Nothing moves under reduced motion.
   */
  slide(from, to, { plot, cellWidth, shift, circular }) {
    this.stop();
    const reduced = globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches;
    if (reduced || !plot || !cellWidth || shift === 0) return;
    const source = from.canvas.getContext('2d').getImageData(plot.x, plot.y, plot.width, plot.height);
    const ctx = to.overlay.getContext('2d');
    const start = performance.now();
    const distance = shift * cellWidth;
    this.animating = true;
    to.figure.dataset.animating = 'true';
    const step = (now) => {
      const t = Math.min(1, (now - start) / SLIDE_MS);
      const eased = t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2;
      const dx = Math.round(eased * distance);
      ctx.clearRect(0, 0, to.overlay.width, to.overlay.height);
      if (t < 1) {
        // putImageData ignores clipping: draw only the columns that land inside the plot.
        const put = (offset) => {
          const c0 = Math.max(0, -offset);
          const c1 = Math.min(plot.width, plot.width - offset);
          if (c1 > c0) ctx.putImageData(source, plot.x + offset, plot.y, c0, 0, c1 - c0, plot.height);
        };
        put(dx);
        if (circular) put(dx > 0 ? dx - plot.width : dx + plot.width);
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
