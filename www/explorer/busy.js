// Long inputs: what the page does when a render will take longer than a frame.
//
// The engine's cost grows with tokens² per head (each head's maps are L × L; a render computes
// the shown head, heads.js the others between frames). After each render
// that recomputed, `Busy` keeps the time per cell it measured; before the next render that
// will recompute, it predicts that render's time. Over BUSY_MS the page first says so (a
// progress line with what it computes, painted before the work starts: the render waits two
// frames), and while a person is typing it waits until the typing pauses (TYPING_IDLE_MS), so
// the text box keeps up with the keys instead of freezing on every one.
//
// The prediction is pure (`predictMs`, tested under node); the class only remembers and holds.

import { KEYS } from './settings.generated.js';

/** Renders predicted to take longer than this (ms) are announced first. */
export const BUSY_MS = 100;

/** While typing, a render predicted over BUSY_MS waits for this long a pause (ms). */
export const TYPING_IDLE_MS = 250;

/** The engine's cells for `tokens` and `heads`: every head's L × L map. */
export function cellsOf(tokens, heads) {
  return Math.max(0, tokens) ** 2 * Math.max(1, heads);
}

/**
 * The predicted compute time (ms) of a render of `tokens` × `heads` from the last measured one
 * (`{ cells, ms }`, or null): its time per cell times the new cells. `null` without a
 * measurement worth scaling (under 1 ms, or no cells), so small inputs never wait.
 */
export function predictMs(last, tokens, heads) {
  if (!last || !(last.ms >= 1) || !(last.cells > 0)) return null;
  return (last.ms / last.cells) * cellsOf(tokens, heads);
}

/** The state keys that change the maps (the schema's map settings, Rust's MapSettings); the
 * rest of the engine's keys change only the stages after the maps. */
const MAP_KEYS = Object.freeze(Object.keys(KEYS).filter((key) => KEYS[key].layer === 'maps'));

/**
 * What the next render will recompute (pure; tested): `slot` is `'maps'` (new `text` or a
 * map-level key of `patch`: the shown head's maps) or `'stages'` (the stages after the maps),
 * of one head of `tokens` tokens; `recomputes` false when it only draws (a head, a viewport, a
 * theme), when nothing is `ready`, in the compare view, and in the all-heads view, whose other
 * heads the head steps compute with their own progress (heads.js).
 */
export function workOf({ ready, state, text, patch, tokens }) {
  if (!ready || state.view === 'compare' || (state.all_heads && state.view === 'explore')) return { recomputes: false };
  const keys = Object.keys(patch).filter((k) => k !== 'head');
  if (!text && !keys.length) return { recomputes: false };
  const maps = text || keys.some((k) => MAP_KEYS.includes(k));
  return { recomputes: true, slot: maps ? 'maps' : 'stages', tokens, heads: 1 };
}

export class Busy {
  #view;
  #last = {}; // slot -> { cells, ms } of the last render that recomputed it
  #typedAt = 0;
  #announced = false;
  #timer = null;

  /** `view` is the ExplorerView (its elements `busy`, `busyText`, its `t`). */
  constructor(view) {
    this.#view = view;
  }

  /** A person typed: the next heavy render waits for a pause. */
  typed() {
    this.#typedAt = performance.now();
  }

  /** Whether a person typed within the last TYPING_IDLE_MS (the head steps wait meanwhile). */
  typing() {
    return performance.now() - this.#typedAt < TYPING_IDLE_MS;
  }

  /** After a render (`slot` as in `hold`, null when it only drew): remembers its time per cell if it recomputed; hides the progress line. */
  rendered({ slot, tokens, heads, computeMs }) {
    if (slot && computeMs >= 1) this.#last[slot] = { cells: cellsOf(tokens, heads), ms: computeMs };
    this.#announced = false;
    this.#view.el.busy.hidden = true;
  }

  /**
   * Before a render that will recompute `tokens` × `heads` (`slot`: `'maps'` or `'stages'`,
   * each with its own measurement): null to go ahead, or a promise to
   * wait for (the scheduler renders when it resolves, and asks again).
   */
  hold({ slot, tokens, heads, recomputes }) {
    if (!recomputes) return null;
    const ms = predictMs(this.#last[slot], tokens, heads);
    if (ms === null || ms <= BUSY_MS) return null;
    const idle = performance.now() - this.#typedAt;
    if (idle < TYPING_IDLE_MS) {
      this.#show(tokens, heads, ms, true);
      return this.#wait(TYPING_IDLE_MS - idle);
    }
    if (this.#announced) return null;
    this.#show(tokens, heads, ms, false);
    this.#announced = true;
    // Two frames: the first paints the line, the render runs in the second.
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }

  #wait(ms) {
    clearTimeout(this.#timer);
    return new Promise((resolve) => {
      this.#timer = setTimeout(resolve, ms);
    });
  }

  #show(tokens, heads, ms, typing) {
    const el = this.#view.el;
    el.busyText.textContent = this.#view.t(typing ? 'busy_typing' : 'busy_computing', {
      n: tokens,
      heads,
      s: (ms / 1000).toFixed(ms < 1000 ? 2 : 1),
    });
    el.busy.hidden = false;
  }
}
