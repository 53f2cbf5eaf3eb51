// The pretrained model's own wasm module (web-pretrained/: pkg/diffattn_pretrained.js and one
// .wasm per SIMD flavour), fetched and instantiated together with the model's weights file on
// first use of `weights=minilm` (weights.js, `pretrained`), never by the first view: this file
// and the module's glue are chunks behind `import()`. The page's module (the explorer's handle)
// carries none of the model's code and never holds the model: the model runs here and hands the
// explorer what one layer needs, when the explorer asks (ARCHITECTURE.md, "Where the pretrained
// model enters"; natively the same path is `diffattn::pretrained::Feed`):
//
//   the word pieces          Encoder.set_text(text)           → Explorer.set_pretrained_text
//   the layer drawn          Explorer.pretrained_need()       → Encoder.work(layer, ms) in pieces,
//                            then Encoder.input / .attention  → Explorer.set_pretrained_layer
//   the similarity           Explorer.similarity_need()       → Encoder.similarity_work(…, ms)
//                                                             → Explorer.set_similarity
//
// The forward pass runs on the page's one path for heavy work: `PretrainedFeed#work` is what
// work.js calls in place of `Explorer.work` while the model draws, the model's pieces (a layer's
// attention half, or 64 rows of its feed-forward) before the explorer's.
//
// A Rust panic in the model's module traps the call and leaves its instance as the panic left
// it, so the instance is thrown away, as runtime.js does for the page's (`reset`): a fresh
// instance of the same compiled module (wasm-bindgen's `__wbg_reset_state`), the model read
// again from the bytes the page kept, and every feed on it a fresh encoder with its text. What
// an explorer was handed stays whole (the layer's vectors are copies), so no map is drawn half.
// Nothing is stored at module level, and nothing is imported: what this chunk needs of the
// first view's modules (the engine's errors) is given to it (weights.js), so that no module is
// split off the first view's files for it.

/**
 * Instantiates the model's module (`module`, the wasm-bindgen glue; `compiled`, its compiled
 * `.wasm`) and reads the model from `bytes` (the weights file, a Uint8Array). `errors` are
 * engine.js's `{ EngineRestarted, EngineStopped }`, which a feed's calls throw after a panic.
 * Returns the model's runtime: `{ glue, build, model, resets, attach(renew), reset(cause),
 * feed() }`, `model` being `{ name, layers, heads, d_model }`. Throws an `Error` naming the
 * problem for a file cut short, corrupted or of another version.
 */
export function instantiatePretrained({ module, compiled }, bytes, { build = null, errors }) {
  // Instantiated at once from the compiled module (an instance the asynchronous
  // `WebAssembly.instantiate` made stays referenced in Chromium: runtime.js).
  module.initSync({ module: compiled });
  let model;
  try {
    model = module.Encoder.load(bytes);
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) module.__wbg_reset_state?.();
    throw err;
  }
  const renewals = new Set();
  const runtime = {
    glue: module,
    build,
    model,
    /** How often the instance was thrown away and made again. */
    resets: 0,
    /** Registers a feed: `renew(cause, failure)` runs after every reset; returns the function that detaches it. */
    attach(renew) {
      renewals.add(renew);
      return () => renewals.delete(renew);
    },
    /** Throws the instance away, makes a fresh one and reads the model into it again, then renews every feed; throws when that fails (every feed then stops). */
    reset(cause) {
      let failure = null;
      try {
        if (typeof module.__wbg_reset_state !== 'function') throw new Error('this wasm build cannot make a fresh instance (no __wbg_reset_state: scripts/build-wasm makes it)');
        module.__wbg_reset_state();
        module.Encoder.load(bytes);
        runtime.resets += 1;
      } catch (err) {
        failure = err;
      }
      for (const renew of [...renewals]) renew(cause, failure);
      if (failure) throw failure;
    },
    /** A feed of the model for one explorer (its own encoder). */
    feed() {
      return new PretrainedFeed(runtime);
    },
    errors,
  };
  return runtime;
}

/**
 * The model feeding one explorer: an encoder of the model's module (one text through the model
 * in pieces) and what the explorer asks for handed over. Its calls on the explorer's handle go
 * through the explorer's engine wrapper (engine.js), those on the encoder through `call` (a
 * trap in the model's module resets it, and the call throws `EngineRestarted`).
 */
export class PretrainedFeed {
  #runtime;
  #session = null;
  #text = null;
  #state = 'ready';
  #detach;

  constructor(runtime) {
    this.#runtime = runtime;
    this.#detach = runtime.attach((cause, failure) => this.#renew(failure));
    try {
      this.#session = new runtime.glue.Encoder();
    } catch (err) {
      this.stop();
      throw err;
    }
  }

  /** `{ name, layers, heads, d_model }`. */
  get model() {
    return this.#runtime.model;
  }

  /** The model's runtime. */
  get runtime() {
    return this.#runtime;
  }

  /** Makes the model draw the sentence of `ex` (the explorer's handle), cut into its word pieces; returns the handle's `model_info()`. */
  attach(ex) {
    const info = ex.set_pretrained(this.model);
    this.setText(ex, ex.text());
    return info;
  }

  /** Sends `text` to `ex`, cut into the model's word pieces (`set_text` when the model does not draw there); returns `{ tokens, total, truncated }`. */
  setText(ex, text) {
    if (!ex.is_pretrained()) return ex.set_text(text);
    this.#text = text;
    return ex.set_pretrained_text(text, this.call((s) => s.set_text(text)));
  }

  /**
   * Up to `ms` of work toward the shown head (`every` false) or every head (true) of the
   * explorer on `engine` (its engine wrapper): the model's pieces toward the layer the explorer
   * waits for and the layer handed over, then the explorer's pieces (`Explorer.work`), then for
   * every head the similarity's. Returns `{ done, total, finished, ms }` as `Explorer.work` does.
   */
  work(engine, ms, every) {
    const t0 = performance.now();
    const left = () => Math.max(0, ms - (performance.now() - t0));
    if (!this.#feedLayer(engine, ms)) return { ...engine.call((ex) => ex.progress(every)), ms: performance.now() - t0 };
    let r = engine.call((ex) => ex.work(left(), every));
    if (every && !r.finished) {
      const need = engine.call((ex) => ex.similarity_need());
      const s = need && this.call((session) => session.similarity_work(need.layer, need.output, need.other, left()));
      if (s) r = engine.call((ex) => (ex.set_similarity(s.model, s.mechanism), ex.progress(every)));
    }
    return { ...r, ms: performance.now() - t0 };
  }

  /** The layer the explorer on `engine` waits for, computed and handed over at once (a compare panel draws in its render). */
  prepare(engine) {
    this.#feedLayer(engine, Infinity);
  }

  /** How many of the model's layers this feed's encoder ran. */
  modelLayers() {
    return this.call((s) => s.model_layers());
  }

  /** Frees the encoder; the feed is stopped afterwards. */
  stop() {
    this.#state = 'stopped';
    this.#detach?.();
    const old = this.#session;
    this.#session = null;
    try {
      old?.free();
    } catch {
      // Already freed, or of an instance thrown away: nothing more to give back.
    }
  }

  /** Pieces of the forward pass toward the layer the explorer waits for, for at most `ms`, and the layer handed over once in; true when the explorer waits for nothing. */
  #feedLayer(engine, ms) {
    const t0 = performance.now();
    for (;;) {
      const need = engine.call((ex) => ex.pretrained_need());
      if (!need) return true;
      if (!this.call((s) => s.work(need.layer, Math.max(0, ms - (performance.now() - t0))))) return false;
      const input = this.call((s) => s.input(need.layer));
      const attention = need.weights ? this.call((s) => s.attention(need.layer)) : undefined;
      engine.call((ex) => ex.set_pretrained_layer(need.layer, input, attention));
    }
  }

  /** Runs `fn(encoder)` and returns what it returns; a trap resets the model's module and throws `EngineRestarted` (or `EngineStopped` when no fresh instance could be made). */
  call(fn) {
    const { EngineRestarted, EngineStopped } = this.#runtime.errors;
    if (this.#state !== 'ready') throw new EngineStopped(this.#state);
    try {
      return fn(this.#session);
    } catch (err) {
      if (!(err instanceof WebAssembly.RuntimeError)) throw err;
      try {
        this.#runtime.reset(err);
      } catch {
        // No fresh instance: every feed on the runtime, this one too, is stopped.
      }
      throw this.#state === 'ready' ? new EngineRestarted(err) : new EngineStopped(err);
    }
  }

  /** The runtime made a fresh instance (or failed to): a fresh encoder there, with the text again. */
  #renew(failure) {
    if (this.#state === 'stopped') return;
    // The old instance's encoder is dropped, not freed: its address means nothing in the new one.
    this.#session = null;
    try {
      if (failure) throw failure;
      this.#session = new this.#runtime.glue.Encoder();
      if (this.#text !== null) this.#session.set_text(this.#text);
    } catch {
      this.#state = 'stopped';
      this.#detach?.();
    }
  }
}
