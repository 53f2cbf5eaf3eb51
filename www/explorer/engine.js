// The owner of one wasm `Explorer` handle: the engine wrapper.
//
// Every call on the handle goes through `call(fn)`, one try/catch for all of them. A Rust
// panic traps the call with a `WebAssembly.RuntimeError` and leaves that handle unusable, so
// the wrapper frees it (see `release`) and makes a fresh one, moving from `ready` back to
// `ready` through a restart; if no fresh handle can be made it is `stopped` for good. There
// are no "is the engine dead?" checks anywhere else: a call on a stopped engine throws
// `EngineStopped`, and the component shows one message for it.
//
// The handle lives in one of two builds of the module (runtime.js): the first view's, without
// the spec reader and the JSON and SVG exports, or the full one. `runtime` is the one it is on
// now, the one place that says so (its `glue`, `exports`, `build` and `source`, the glue and
// wasm it was loaded from); `useFull()` moves the handle to the full build, once, before a
// spec is opened or a file exported.
//
// The handle's methods are documented in src/web/ (handle.rs, render.rs, hover.rs, files.rs,
// heads.rs) and the shapes they return in src/web/js.rs and src/web/js/; the names match
// (`update({ shift: 2 })`, `view().stages`, ...).

/** Thrown by `call` when the engine is stopped (it could not be started or restarted). */
export class EngineStopped extends Error {
  constructor(cause) {
    super(`the engine stopped: ${cause?.message ?? cause ?? 'unknown reason'}`);
    this.name = 'EngineStopped';
    this.cause = cause;
  }
}

/** Thrown by `call` after a Rust panic: the handle was replaced by a fresh one. */
export class EngineRestarted extends Error {
  constructor(cause) {
    super(`the engine crashed and was restarted: ${cause?.message ?? cause}`);
    this.name = 'EngineRestarted';
    this.cause = cause;
  }
}

/**
 * Frees a handle whose call trapped. wasm-bindgen 0.2.130 (pinned in Cargo.toml) keeps an
 * exported object in an `Rc`; a method call holds one strong count for its duration, so a
 * call that trapped leaves one count that nothing will drop, and `free()` would only take
 * the handle's own. This reads the strong count (the first word of Rust's `#[repr(C)]`
 * `RcInner`, 8 bytes before the value on wasm32 for a value aligned to at most 8) and drops
 * every count, so the handle's memory is given back. Checked by tests/e2e/component.test.mjs
 * and tests/e2e/soak.test.mjs, which panic a real handle many times and watch the memory stay
 * flat (and, in the soak, grow by about 6 MB per panic when the crashed handle is dropped).
 */
export function release(handle, exports) {
  const ptr = handle?.__destroy_into_raw?.();
  if (!ptr || !exports?.memory || typeof exports.__wbg_explorer_free !== 'function') return false;
  const strong = new Uint32Array(exports.memory.buffer, ptr - 8, 1)[0];
  // A sane count is 1 (the handle's own) plus at most one per call in flight.
  if (!(strong >= 1 && strong <= 4)) return false;
  for (let i = 0; i < strong; i++) exports.__wbg_explorer_free(ptr, 1);
  return true;
}

export class Engine {
  #runtime;
  #handle = null;
  #state = 'starting';
  #onRestart;
  #onStop;
  /** How often the handle was replaced after a panic. */
  restarts = 0;

  /**
   * `runtime` is runtime.js's (at least `glue`, the wasm-bindgen module with its `Explorer`
   * class, and `exports`, the instance's exports, for `release`). `onRestart(cause)` runs
   * after a fresh handle replaced a crashed one (the caller sends its settings again);
   * `onStop(cause)` when none could be made.
   */
  constructor(runtime, { onRestart, onStop } = {}) {
    this.#runtime = runtime;
    this.#onRestart = onRestart;
    this.#onStop = onStop;
    try {
      this.#handle = new runtime.glue.Explorer();
      this.#state = 'ready';
    } catch (err) {
      this.#state = 'stopped';
      this.#onStop?.(err);
    }
  }

  /** `'starting' | 'ready' | 'stopped'`. */
  get state() {
    return this.#state;
  }

  /** The runtime the handle is on now (the first view's build or the full one). */
  get runtime() {
    return this.#runtime;
  }

  /**
   * Moves the handle to the full build (the spec reader, the JSON and SVG exports): loads it
   * (once per page, `runtime.full()`), then `prepare()` may fetch what the new handle needs,
   * asynchronously; then, with no await in between, a fresh handle is made there,
   * `replay(handle, prepared)` gives it what the old one held (the model; the caller sends
   * text and settings after), and the old one is freed. Resolves to true when it moved, false when the handle already was on the full
   * build; throws (the handle staying where it was) when the full build could not load or
   * `replay` threw.
   */
  async useFull({ prepare = async () => {}, replay = () => {} } = {}) {
    if (this.#runtime.files) return false;
    const full = await this.#runtime.full();
    const prepared = await prepare();
    if (this.#state !== 'ready') throw new EngineStopped(this.#state);
    if (this.#runtime.files) return false;
    const handle = new full.glue.Explorer();
    try {
      replay(handle, prepared);
    } catch (err) {
      try {
        handle.free();
      } catch {
        // A trapped replay leaves the new handle borrowed: it is leaked, never used.
      }
      throw err;
    }
    const old = this.#handle;
    this.#handle = handle;
    this.#runtime = full;
    try {
      old?.free();
    } catch {
      // Already freed or borrowed: nothing more to give back.
    }
    return true;
  }

  /** Runs `fn(handle)` and returns what it returns; see the file header for failures. */
  call(fn) {
    if (this.#state !== 'ready') throw new EngineStopped(this.#state);
    try {
      return fn(this.#handle);
    } catch (err) {
      if (!(err instanceof WebAssembly.RuntimeError)) throw err;
      this.#restart(err);
      throw this.#state === 'ready' ? new EngineRestarted(err) : new EngineStopped(err);
    }
  }

  #restart(cause) {
    const old = this.#handle;
    this.#handle = null;
    this.#state = 'starting';
    try {
      release(old, this.#runtime.exports);
    } catch {
      // Freeing is best effort: a handle that cannot be freed is leaked, never reused.
    }
    try {
      this.#handle = new this.#runtime.glue.Explorer();
      this.#state = 'ready';
      this.restarts += 1;
    } catch (err) {
      this.#state = 'stopped';
      this.#onStop?.(err);
      return;
    }
    this.#onRestart?.(cause);
  }

  /** Frees the handle; the engine is stopped afterwards. */
  stop() {
    const old = this.#handle;
    this.#handle = null;
    this.#state = 'stopped';
    try {
      old?.free();
    } catch {
      // Already freed or borrowed: nothing more to give back.
    }
  }
}
