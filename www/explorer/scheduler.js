// The frame scheduler: every change is coalesced into one piece of work per animation frame.
//
// Two kinds of work: `render` (send what changed to the engine, draw the maps) and `overlay`
// (repaint the highlight, tooltip and readout only; hovering never renders). A render also
// repaints the overlay. `flush()` runs the frame's work now, in the task that asks (the shown
// head's last piece came in between frames: drawing at once saves waiting for the next frame);
// `soon()` runs it at the end of the task that asks, at most once between two frames (a
// person's key: the next frame shows the maps instead of drawing them first; more changes
// before that frame wait for it, as they would without). Work run so is marked `early`.
// `settled()` resolves once nothing is pending, for tests and exports.

export class FrameScheduler {
  #dirty = { render: false, overlay: false };
  #requested = false;
  /** Counts requests, so that a frame callback that `flush()` overtook does nothing. */
  #request = 0;
  #waiters = [];
  /** Whether `soon()` ran the work since the last frame. */
  #early = false;
  #run;
  #hold;
  #requestFrame;

  /**
   * `run({ render, overlay, early })` does the work of one frame (`early`: outside an animation
   * frame, through `flush()` or `soon()`). `hold()` may return a promise to
   * wait for before rendering (weights in flight): the render is kept for the frame after it.
   * `requestFrame` defaults to `requestAnimationFrame` (tests pass their own).
   */
  constructor(run, { hold = () => null, requestFrame = (cb) => requestAnimationFrame(cb) } = {}) {
    this.#run = run;
    this.#hold = hold;
    this.#requestFrame = requestFrame;
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
    this.#frame(true);
  }

  /**
   * Runs the work asked for at the end of the current task (a microtask) instead of at the
   * next frame, unless it ran early once since the last frame: then it waits for the frame.
   */
  soon() {
    if (this.#early || !this.#requested) return;
    this.#early = true;
    this.#requestFrame(() => (this.#early = false));
    queueMicrotask(() => this.flush());
  }

  /** Whether a frame is requested. */
  get pending() {
    return this.#requested;
  }

  #frame(early = false) {
    this.#requested = false;
    const work = { ...this.#dirty, early };
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
    try {
      if (work.render || work.overlay) this.#run(work);
    } finally {
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
