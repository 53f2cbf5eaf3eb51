// What an explorer knows of its state, without a copy of the engine's: the page's own keys
// (the view, the language, the weights, …: the engine never holds them), the change a person
// (or an author) made that is not sent yet (one patch of the engine's settings), and the
// settings of the last frame the engine returned (`Explorer.update` / `frame()`, read once per
// change). `state` puts the three together, newest first, as one frozen object under the
// schema's names; nothing here decides a setting (a new mechanism's heads, the learned λ):
// the next frame says what the engine made of the patch. Pure, no DOM: page-logic.test.mjs.

import { KEYS } from './settings.generated.js';
import { ENGINE_KEYS, splitState } from './state.js';

const pick = (object, keys) => Object.fromEntries(keys.filter((k) => object?.[k] !== undefined).map((k) => [k, object[k]]));

export class ViewState {
  /** The page's own keys. */
  #page;
  /** The engine's settings changed since the last frame, not sent yet. */
  #pending = {};
  /** The last frame's settings (with `gate_learned`, `lambda_learned`), or null before one. */
  #settings = null;
  /** The engine's defaults (the wasm module's `defaults()`), until a frame comes. */
  #defaults;
  #state = null;

  /** `defaults`: the engine's defaults; `initial`: the state to start from (page keys and any settings, which become the first patch). */
  constructor(defaults, initial) {
    this.#defaults = pick(defaults, ENGINE_KEYS);
    const { engine, page } = splitState(initial);
    this.#page = page;
    this.#pending = engine;
  }

  /** Everything a person can set, under the schema's names (frozen: change it with `change`). */
  get state() {
    this.#state ??= Object.freeze({ ...this.#defaults, ...pick(this.#settings, ENGINE_KEYS), ...this.#pending, ...this.#page });
    return this.#state;
  }

  /** The last frame's settings, or null before one. */
  get settings() {
    return this.#settings;
  }

  /** Changes keys of the state: the page's at once, the engine's in the next patch. */
  change(partial) {
    const { engine, page } = splitState(partial);
    Object.assign(this.#page, page);
    Object.assign(this.#pending, engine);
    this.#state = null;
  }

  /** What the next `Explorer.update` sends: the pending settings that differ from the last frame's. */
  patch() {
    const shown = this.#settings ?? {};
    return Object.fromEntries(Object.entries(this.#pending).filter(([key, value]) => value !== shown[key]));
  }

  /** The patch to send, no longer pending. */
  take() {
    const patch = this.patch();
    this.#pending = {};
    this.#state = null;
    return patch;
  }

  /**
   * A frame's settings are what the engine holds now. `keep`: after a model or a spec brought
   * its own settings, the pending settings it names stay (an address's win over a trained
   * model's) and the others are dropped; null keeps every pending one.
   */
  adopt(settings, keep = null) {
    this.#settings = settings;
    if (keep) this.#pending = pick(this.#pending, Object.keys(this.#pending).filter((k) => keep.has(k)));
    this.#state = null;
  }

  /**
   * The handle is a fresh one: every setting the old one had is pending again (but one that
   * was unset, the learned λ, which the new handle's model gives), to be sent whole in the
   * next patch.
   */
  forget() {
    const s = this.#settings;
    const unset = (key) => 'unset' in KEYS[key] && s[KEYS[key].learned] !== false;
    if (s) this.#pending = { ...pick(s, ENGINE_KEYS.filter((k) => !unset(k))), ...this.#pending };
    this.#settings = null;
    this.#state = null;
  }
}
