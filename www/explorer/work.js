// The one path for heavy work. The engine computes in pieces (src/explorer/work.rs: a block
// of rows of one step of one head, a few milliseconds each); `Explorer.work(budget_ms, every)`
// does pieces until its budget is used. While the pretrained model draws, its feed
// (pretrained.js `PretrainedFeed#work`) takes that call's place: the model's own pieces in its
// module first (a layer's attention half, or 64 rows of its feed-forward), then the engine's. A render first gives the shown head RENDER_MS; what
// is left, and everything that needs every head (the all-heads view, the prediction), follows
// here in tasks of STEP_MS between frames, so a slider or a key never waits longer than one
// piece and the page never freezes, whatever the length. The shown head comes first: when it is
// in, `onShown` draws it; when every head is in, `onEvery` draws what waited for them. While
// a person types, work that would take long waits for a pause (TYPING_IDLE_MS): every key
// changes the maps, and only the last text's maps are worth computing. Past BUSY_MS the busy
// line says how far it is ("head 3 of 8").

/** The time a render gives the shown head's pieces itself (ms): short inputs finish in it and
 * draw in the same frame, and so does a shift tick at 2,048 tokens (the shown head's shift
 * stages, about 15 ms) on most machines; with the drawing the render stays within 50 ms. */
export const RENDER_MS = 20;

/** The time one task between frames may work (ms): room is left for input and a frame. */
export const STEP_MS = 8;

/** The time work for every head may take inside a render (ms), so that short inputs have
 * their prediction and all-heads view in the same frame. */
export const INLINE_MS = 8;

/** Work going on longer than this (ms) is announced on the busy line. */
export const BUSY_MS = 100;

/** While a person types, long work waits for this long a pause (ms). */
export const TYPING_IDLE_MS = 250;

/** The busy line's words for `done` of `total` heads of `tokens` tokens (pure; tested): the
 * shown head alone, or the head being computed of every head. */
export function progressText(t, { done, total, tokens, every = true }) {
  if (!every) return t('busy_computing', { n: tokens });
  return t('busy_heads', { done: Math.min(total, done + 1), total, n: tokens });
}

/** Runs `fn` in a task of its own, after any input and frame already waiting. */
function postTask(fn) {
  if (globalThis.scheduler?.postTask) return void globalThis.scheduler.postTask(fn, { priority: 'user-visible' }).catch(() => {});
  const channel = new MessageChannel();
  channel.port1.onmessage = () => fn();
  channel.port2.postMessage(null);
}

export class Work {
  #view;
  #onShown;
  #onEvery;
  #held;
  /** What is still wanted: the shown head, every head. */
  #want = { shown: false, every: false };
  #queued = false;
  #since = 0;
  #shown = false;
  #typedAt = -Infinity;
  /**
   * From how many cells (tokens² × heads) on the work is known to take longer than a render
   * gives it, for the shown head and for every head: from there, while a person types, a render
   * leaves the shown head's work to the tasks (which wait for a pause), and a render always
   * leaves the work for every head to the tasks, so its frame does not wait for it.
   */
  #longFrom = { shown: Infinity, every: Infinity };
  #waiters = [];
  #stopped = false;
  /** Whether the next frame is to come before any task works (`beforeFrame`). */
  #frameFirst = false;

  /**
   * `view` is the ExplorerView (its engine, elements, `t`, `report`); `onShown()` runs when
   * the shown head came in after a render left it to the tasks, `onEvery()` when every head
   * did; while `held()` is true (a render is asked for) no task works, so the render comes
   * first and says what is needed.
   */
  constructor(view, { onShown, onEvery, held }) {
    this.#view = view;
    this.#onShown = onShown;
    this.#onEvery = onEvery;
    this.#held = held;
  }

  /** A person typed: long work waits for a pause. */
  typed() {
    this.#typedAt = performance.now();
  }

  /** Whether a person typed within the last TYPING_IDLE_MS. */
  typing() {
    return performance.now() - this.#typedAt < TYPING_IDLE_MS;
  }

  /** Whether work is still to come. */
  get pending() {
    return this.#want.shown || this.#want.every;
  }

  /**
   * Works toward the shown head (`every` false) or every head for at most `ms` now; true when
   * it is all in. Otherwise the rest follows in tasks, and `onShown` or `onEvery` when it is.
   */
  now(ms, every) {
    const which = every ? 'every' : 'shown';
    const cells = (this.#view.view?.tokens ?? 0) ** 2 * (this.#view.state?.heads ?? 1);
    const long = cells >= this.#longFrom[which];
    const wait = every ? long : long && this.typing();
    // The pause counts from when the page is done with a key, not from when it came: on a slow
    // machine a key's own tokenizing may take longer than the pause, and the work would then
    // start between any two keys.
    if (!every && wait) this.#typedAt = performance.now();
    if (wait && this.#view.engine.call((ex) => ex.progress(every)).finished) return true;
    const done = !wait && this.#call(ms, every);
    if (!wait) this.#longFrom[which] = done ? Math.max(this.#longFrom[which], cells + 1) : Math.min(this.#longFrom[which], cells);
    if (done) return true;
    this.#want[every ? 'every' : 'shown'] = true;
    this.#since ||= performance.now();
    this.#queue();
    return false;
  }

  /**
   * Runs `fn`, a render outside an animation frame (in an input's own task): no task works
   * until the next frame, which shows the render, has run; the work waits for it, as it waits
   * for a render asked for (`held`).
   */
  beforeFrame(fn) {
    try {
      fn();
    } finally {
      if (!this.#frameFirst) {
        this.#frameFirst = true;
        requestAnimationFrame(() => (this.#frameFirst = false));
      }
    }
  }

  /** Stops working (the explorer is destroyed). */
  stop() {
    this.#stopped = true;
    this.#finish();
  }

  /** Resolves once no work is pending (for `settled()`). */
  idle() {
    if (!this.pending) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #call(ms, every) {
    // While the pretrained model draws, its pieces come first (pretrained.js: the forward pass
    // toward the layer drawn, in its own module), on this same path.
    const feed = this.#view.loader?.pretrained;
    const r = feed ? feed.work(this.#view.engine, ms, every) : this.#view.engine.call((ex) => ex.work(ms, every));
    if (!r.finished && this.#since && performance.now() - this.#since > BUSY_MS) {
      this.#show(progressText((k, p) => this.#view.t(k, p), { ...r, every, tokens: this.#tokens() }), r);
    }
    return r.finished;
  }

  #tokens() {
    return this.#view.view?.tokens ?? 0;
  }

  #queue() {
    if (this.#queued || this.#stopped) return;
    this.#queued = true;
    postTask(() => this.#step());
  }

  #step() {
    this.#queued = false;
    const view = this.#view;
    if (this.#stopped || view.engine.state !== 'ready') return this.#finish();
    if (!this.pending) return;
    if (this.#frameFirst) {
      // A render outside a frame (`beforeFrame`): its frame first, then this work.
      requestAnimationFrame(() => this.#queue());
      return;
    }
    if (this.#held() || this.typing()) {
      // A render comes first (it says what is needed now), or a person is typing: look again
      // after a frame.
      if (this.typing() && this.#want.shown) this.#show(this.#view.t('busy_typing', { n: this.#tokens() }), null);
      setTimeout(() => this.#queue(), 16);
      return;
    }
    try {
      if (this.#want.shown) {
        if (this.#call(STEP_MS, false)) {
          this.#want.shown = false;
          this.#onShown();
        }
      } else if (this.#call(STEP_MS, true)) {
        this.#want.every = false;
        this.#onEvery();
      }
    } catch (err) {
      this.#want = { shown: false, every: false };
      this.#finish();
      view.report(err);
      return;
    }
    if (this.pending) this.#queue();
    else this.#finish();
  }

  /** Shows `text` on the busy line, with the progress of `r` (`{ done, total }`) or none. */
  #show(text, r) {
    const el = this.#view.el;
    el.busyText.textContent = text;
    if (r) {
      el.busyProgress.max = r.total;
      el.busyProgress.value = r.done;
    } else el.busyProgress.removeAttribute('value');
    el.busy.hidden = false;
    this.#shown = true;
  }

  #finish() {
    if (this.#shown) {
      const el = this.#view.el;
      el.busy.hidden = true;
      el.busyProgress.removeAttribute('value');
      this.#shown = false;
    }
    this.#since = 0;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
