// Work that needs every head: the all-heads view, and the prediction (the layer output mixes
// every head's final map). A render computes the shown head only (the engine keeps each head's
// stages on their own, src/explorer/heads.rs); the other heads are computed here, a few
// milliseconds at a time between frames (`compute_step`), so a slider or a typed word never
// waits for them and the page never freezes. Over BUSY_MS the busy line says how far it is
// ("head 3 of 8"); when every head is in, `onDone` draws what waited for them.

import { BUSY_MS } from './busy.js';

/** The time one step between frames may take (ms): room is left for the frame. */
export const STEP_MS = 12;

/** The time a render may spend on the other heads itself (ms): small inputs finish within it,
 * so their prediction and all-heads view come in the same frame, as before. */
export const INLINE_MS = 8;

/** The busy line's words for `done` of `total` heads of `tokens` tokens (pure; tested). */
export function progressText(t, { done, total, tokens }) {
  return t('busy_heads', { done: Math.min(total, done + 1), total, n: tokens });
}

export class HeadSteps {
  #view;
  #onDone;
  #wait;
  #timer = null;
  #since = 0;
  #shown = false;
  #waiters = [];

  /**
   * `view` is the ExplorerView (its engine, elements, `t`, `report`); `onDone()` runs once
   * every head is computed after steps; while `wait()` is true (a render is asked for, a person
   * is typing) no step runs, so a key or a slider never waits for a head it does not show.
   */
  constructor(view, { onDone, wait }) {
    this.#view = view;
    this.#onDone = onDone;
    this.#wait = wait;
  }

  /** Whether steps are still to run. */
  get pending() {
    return this.#timer !== null;
  }

  /**
   * Computes heads not computed yet for at most `ms` now; true when every head is computed.
   * Otherwise the rest follows in steps, and `onDone` when they are in.
   */
  now(ms = INLINE_MS) {
    const step = this.#view.engine.call((ex) => ex.compute_step(ms));
    if (step.done >= step.total) return true;
    this.#request();
    return false;
  }

  /** Resolves once no step is pending (for `settled()`). */
  idle() {
    if (!this.pending) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #request() {
    if (this.#timer !== null) return;
    this.#since ||= performance.now();
    this.#timer = setTimeout(() => this.#step(), 0);
  }

  #step() {
    this.#timer = null;
    const view = this.#view;
    if (view.engine.state !== 'ready') return this.#finish(false);
    // A render is coming first (a person moved something: it says what is needed then), or a
    // person is typing.
    if (this.#wait()) {
      this.#timer = setTimeout(() => this.#step(), 16);
      return;
    }
    let step;
    try {
      step = view.engine.call((ex) => ex.compute_step(STEP_MS));
    } catch (err) {
      this.#finish(false);
      view.report(err);
      return;
    }
    if (step.done < step.total) {
      if (performance.now() - this.#since > BUSY_MS) this.#show(step);
      this.#timer = setTimeout(() => this.#step(), 0);
      return;
    }
    this.#finish(true);
  }

  #show(step) {
    const el = this.#view.el;
    el.busyText.textContent = progressText((k, p) => this.#view.t(k, p), { ...step, tokens: this.#view.view?.tokens ?? 0 });
    el.busyProgress.max = step.total;
    el.busyProgress.value = step.done;
    el.busy.hidden = false;
    this.#shown = true;
  }

  #finish(done) {
    const el = this.#view.el;
    if (this.#shown) {
      el.busy.hidden = true;
      el.busyProgress.removeAttribute('value');
      this.#shown = false;
    }
    this.#since = 0;
    if (done) this.#onDone();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
