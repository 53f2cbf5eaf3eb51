// Work that needs every head: the all-heads view, and the prediction (the layer output mixes
// every head's final map). A render computes the shown head only (the engine keeps each head's
// stages on their own, src/explorer/heads.rs); the other heads are computed here, so a slider
// or a typed word never waits for them and the page never freezes: a few milliseconds at a time
// between frames (`compute_step`), and, from OFFLOAD_TOKENS tokens on, where one head's maps
// take longer than a step (100–250 ms at 2,048 tokens), in a Web Worker (heads-offload.js),
// whose heads the page's handle adopts map by map; a head that keeps its maps and needs only
// its shift stages is computed here either way. The worker runs the build the page's handle
// runs, the first view's or the full one (a spec). Without a worker (the single file, an old
// browser, a worker that crashed too often) every head is computed here in steps. Over BUSY_MS
// the busy line says how far it is ("head 3 of 8"); when every head is in, `onDone` draws what
// waited for them.

import { BUSY_MS } from './busy.js';
import { HeadOffload } from './heads-offload.js';

/** The time one step between frames may take (ms): room is left for the frame. */
export const STEP_MS = 12;

/** The time a render may spend on the other heads itself (ms): small inputs finish within it,
 * so their prediction and all-heads view come in the same frame, as before. */
export const INLINE_MS = 8;

/** From this many tokens on, heads whose maps are missing go to the Web Worker: a head's maps
 * cost grows as tokens², about 100 ms at 2,048 tokens here, so at 1,024 about 25 ms, past a
 * step (docs/PERFORMANCE.md, "Control to paint"). */
export const OFFLOAD_TOKENS = 1024;

/** The busy line's words for `done` of `total` heads of `tokens` tokens (pure; tested). */
export function progressText(t, { done, total, tokens }) {
  return t('busy_heads', { done: Math.min(total, done + 1), total, n: tokens });
}

export class HeadSteps {
  #view;
  #onDone;
  #wait;
  #timer = null;
  #active = false;
  #since = 0;
  #shown = false;
  #waiters = [];
  /** The Web Worker's side (heads-offload.js), or null. */
  offload;

  /**
   * `view` is the ExplorerView (its engine, elements, `t`, `report`); `onDone()` runs once
   * every head is computed after steps; while `wait()` is true (a render is asked for, a person
   * is typing) no step runs, so a key or a slider never waits for a head it does not show.
   * `worker` is the runtime's `{ url, module, files }` for the heads' Web Worker (runtime.js), or
   * null: then every head is computed here.
   */
  constructor(view, { onDone, wait, worker = null }) {
    this.#view = view;
    this.#onDone = onDone;
    this.#wait = wait;
    this.offload = new HeadOffload(view, { worker, onChange: () => this.kick() });
  }

  /** Ends the worker (the explorer is destroyed). */
  stop() {
    this.offload.stop();
  }

  /** Whether steps are still to run (or heads are on their way from the worker). */
  get pending() {
    return this.#active;
  }

  /** Whether a render or a person comes first (no step, no adoption meanwhile). */
  waiting() {
    return this.#wait();
  }

  /**
   * Computes heads not computed yet for at most `ms` now; true when every head is computed.
   * Otherwise the rest follows in steps, and `onDone` when they are in.
   */
  now(ms = INLINE_MS) {
    const remote = this.#remoteKey() !== null;
    const step = this.#view.engine.call((ex) => ex.compute_step(ms, remote));
    if (step.done >= step.total) return true;
    this.#request();
    return false;
  }

  /** Resolves once no step is pending (for `settled()`). */
  idle() {
    if (!this.pending) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** The worker did something (a head adopted, a reply dropped, a crash): look again. */
  kick() {
    if (this.#active && this.#timer === null) this.#timer = setTimeout(() => this.#step(), 0);
  }

  /** The key under which heads go to the worker now, or null (they are computed here). */
  #remoteKey() {
    const offload = this.offload;
    if (!offload?.usable || (this.#view.view?.tokens ?? 0) < OFFLOAD_TOKENS) return null;
    const key = this.#view.engine.call((ex) => ex.head_key());
    return key && !offload.refused(key) ? key : null;
  }

  #request() {
    this.#active = true;
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
    let remote = false;
    try {
      const key = this.#remoteKey();
      step = view.engine.call((ex) => ex.compute_step(STEP_MS, key !== null));
      if (key !== null && step.done < step.total) {
        // Heads without their maps are the worker's; the others (shift stages only) are done here.
        const without = Array.from(view.engine.call((ex) => ex.heads_without_maps()));
        remote = without.length > 0 && this.offload.request(without, key);
        const local = step.total - step.done - without.length;
        if (remote && local <= 0) {
          // Nothing to do here until the worker replies (kick).
          if (performance.now() - this.#since > BUSY_MS) this.#show(step);
          return;
        }
      }
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
    this.#active = false;
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
