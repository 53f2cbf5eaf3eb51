// The frame scheduler: every change is coalesced into one piece of work per animation frame.
//
// Two kinds of work: `render` (send what changed to the engine, draw the maps) and `overlay`
// (repaint the highlight, tooltip and readout only; hovering never renders). A render also
// repaints the overlay. `flush()` runs the frame's work now, in the task that asks (the shown
// head's last piece came in between frames: drawing at once saves waiting for the next frame).
// `now()` is for what a person just did (a key on a slider, a typed word): the work runs in the
// input's own task, so the next frame shows it, instead of waiting for that frame to begin
// before drawing (docs/PERFORMANCE.md, "One path for heavy work: what a person feels"); it
// keeps to one run a frame, so a burst of inputs is still drawn once a frame.
// `settled()` resolves once nothing is pending, for tests and exports.

/** `now()` runs the work at once only if the last run began at least this long ago (ms). */
export const FRAME_MS = 16;

export class FrameScheduler {
  #dirty = { render: false, overlay: false };
  #requested = false;
  /** Counts requests, so that a frame callback that `flush()` overtook does nothing. */
  #request = 0;
  #waiters = [];
  #run;
  #hold;
  #requestFrame;
  #clock;
  /** When the last run began (the clock's ms), and whether one is running. */
  #lastRun = -Infinity;
  #running = false;

  /**
   * `run({ render, overlay })` does the work of one frame. `hold()` may return a promise to
   * wait for before rendering (weights in flight): the render is kept for the frame after it.
   * `requestFrame` defaults to `requestAnimationFrame` and `clock` to `performance.now` (tests
   * pass their own).
   */
  constructor(run, { hold = () => null, requestFrame = (cb) => requestAnimationFrame(cb), clock = () => performance.now() } = {}) {
    this.#run = run;
    this.#hold = hold;
    this.#requestFrame = requestFrame;
    this.#clock = clock;
  }

  /** Asks for `kind` (`'render'` or `'overlay'`) in the next frame. */
  schedule(kind) {
    this.#dirty[kind] = true;
    if (!this.#requested) {
      this.#requested = true;
      const request = ++this.#request;
      this.#requestFrame(() => {
        if (request === this.#request && this.#requested) this.#frame();
      });
    }
  }

  /** Runs the work asked for now instead of at the next frame (nothing when none is). */
  flush() {
    if (!this.#requested) return;
    this.#request += 1;
    this.#frame();
  }

  /**
   * Runs the work asked for now, in the task of the input that asked, unless a run began less
   * than FRAME_MS ago or one is running (then the frame asked for runs it, as `schedule` said).
   */
  now() {
    if (this.#running || this.#clock() - this.#lastRun < FRAME_MS) return;
    this.flush();
  }

  /** Whether a frame is requested. */
  get pending() {
    return this.#requested;
  }

  #frame() {
    this.#requested = false;
    const work = { ...this.#dirty };
    this.#dirty.render = false;
    this.#dirty.overlay = false;
    const held = work.render ? this.#hold() : null;
    if (held) {
      // The maps wait (a few ms on a fast connection); the render comes when it resolves.
      this.#dirty.render = true;
      const again = () => this.schedule('render');
      held.then(again, again);
      return;
    }
    this.#lastRun = this.#clock();
    this.#running = true;
    try {
      if (work.render || work.overlay) this.#run(work);
    } finally {
      this.#running = false;
      if (!this.#requested) {
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const resolve of waiters) resolve();
      }
    }
  }

  /** Resolves once no frame is pending and nothing holds a render back. */
  settled() {
    if (!this.#requested && !this.#dirty.render) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
