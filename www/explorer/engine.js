// The owner of one wasm `Explorer` handle: the engine wrapper.
//
// Every call on the handle goes through `call(fn)`, one try/catch for all of them. A Rust
// panic traps the call with a `WebAssembly.RuntimeError` and leaves the whole instance as the
// panic left it, so the wrapper asks the runtime to throw the instance away and make a fresh
// one (runtime.js, `reset`): every engine on that runtime (the page may hold several explorers,
// and a compare view has a handle per panel) then makes a fresh handle there and is told to
// send its state again (`onRestart`), moving from `ready` back to `ready` through a restart;
// the handles of the old instance are dropped, never freed (freeing one would free its address
// in the new instance). If no fresh instance or handle can be made the engine is `stopped` for
// good. There are no "is the engine dead?" checks anywhere else: a call on a stopped engine
// throws `EngineStopped`, and the component shows one message for it.
//
// The handle's methods are documented in web/src/ (handle.rs, render.rs, grid.rs, hover.rs,
// files.rs, work.rs, pretrained.rs) and the shapes they return in web/src/js.rs and
// web/src/js/; the names match
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

export class Engine {
  #runtime;
  #handle = null;
  #state = 'starting';
  #onRestart;
  #onStop;
  #detach = null;
  /** Whether the reset under way is this engine's own call's (`onRestart`'s `own`). */
  #trapped = false;
  /** How often the handle was replaced after a panic (this engine's or another's on the runtime). */
  restarts = 0;

  /**
   * `runtime` is runtime.js's (at least `glue`, the wasm-bindgen module with its `Explorer`
   * class, `attach` and `reset`). `onRestart(cause, { own })` runs after a fresh handle
   * replaced one lost to a panic (the caller sends its state again; `own`: the panic was this
   * engine's call, else another engine's on the same runtime); `onStop(cause)` when none could
   * be made.
   */
  constructor(runtime, { onRestart, onStop } = {}) {
    this.#runtime = runtime;
    this.#onRestart = onRestart;
    this.#onStop = onStop;
    this.#detach = runtime.attach((cause, failure) => this.#renew(cause, failure));
    try {
      this.#handle = new runtime.glue.Explorer();
      this.#state = 'ready';
    } catch (err) {
      this.#stopped(err);
    }
  }

  /** `'starting' | 'ready' | 'stopped'`. */
  get state() {
    return this.#state;
  }

  /** The runtime the handle is on. */
  get runtime() {
    return this.#runtime;
  }

  /** Runs `fn(handle)` and returns what it returns; see the file header for failures. */
  call(fn) {
    if (this.#state !== 'ready') throw new EngineStopped(this.#state);
    try {
      return fn(this.#handle);
    } catch (err) {
      if (!(err instanceof WebAssembly.RuntimeError)) throw err;
      this.#trapped = true;
      try {
        this.#runtime.reset(err);
      } catch {
        // No fresh instance: every engine on the runtime, this one too, is stopped.
      } finally {
        this.#trapped = false;
      }
      throw this.#state === 'ready' ? new EngineRestarted(err) : new EngineStopped(err);
    }
  }

  /** The runtime made a fresh instance (or failed to: `failure`): a fresh handle there. */
  #renew(cause, failure) {
    if (this.#state === 'stopped') return;
    // The old instance's handle is dropped, not freed: its address means nothing in the new one.
    this.#handle = null;
    this.#state = 'starting';
    if (failure) {
      this.#stopped(failure);
      return;
    }
    try {
      this.#handle = new this.#runtime.glue.Explorer();
      this.#state = 'ready';
      this.restarts += 1;
    } catch (err) {
      this.#stopped(err);
      return;
    }
    this.#onRestart?.(cause, { own: this.#trapped });
  }

  #stopped(cause) {
    this.#state = 'stopped';
    this.#detach?.();
    this.#onStop?.(cause);
  }

  /** Frees the handle; the engine is stopped afterwards. */
  stop() {
    const old = this.#handle;
    this.#handle = null;
    this.#state = 'stopped';
    this.#detach?.();
    try {
      old?.free();
    } catch {
      // Already freed or borrowed: nothing more to give back.
    }
  }
}
