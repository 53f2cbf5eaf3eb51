// The Web Worker that computes heads for the page (www/explorer/heads-offload.js is the page's
// side; this is an entry, as written, like element.js beside it, not shipped): its own wasm
// `Explorer` handle, over the same compiled module the page's handle runs (the page sends it),
// mirrors the page's handle (the same model or spec, text, settings), computes the heads it is
// asked for, one job at a time, and sends each head's maps back as transferable Float32Arrays
// (`export_head`: every map of the head, shift stages included). Nothing here draws.
// A head sent is no longer kept here (`export_head` takes it out of the handle), so the worker
// never holds a second copy of every head. Bundled on its own (scripts/bundle.mjs:
// www/dist/heads-worker.js for the page, pkg/diffattn-heads-worker.js for the element), with
// the glue inside; the single file has none.
//
// It runs the page's build (runtime.js), whose glue is inside the bundle.
//
// Messages in: `{ type: 'start', module }` (a compiled WebAssembly.Module); `{ type: 'job',
// head, key, settings, overrides, source? }` (`source`, sent when it changed: `{ model, text,
// spec }`, `model` a trained weights file's bytes or null for the untrained model, `spec` a
// spec's bytes or JSON text, or null for the sentence); `{ type: 'trap' }` (tests: a panic in
// the bench build, otherwise the same RuntimeError a panic throws). Out: `{ type: 'ready' }`,
// `{ type: 'head', meta, maps, ms, memory }`, `{ type: 'mismatch', head, key, found }` (this mirror does
// not have the page's inputs: the page computes that head itself), `{ type: 'error', head,
// message }`, `{ type: 'crashed', message }` (a Rust panic: the page ends this worker).

import * as glue from './diffattn.js';

/** What a job's `source` was last applied as (model and spec by identity, text by value). */
class Mirror {
  handle;
  #model = undefined;
  #spec = null;
  #text = null;

  /** `glue` is the wasm-bindgen module of the build the worker runs, initialised. */
  constructor(glue) {
    this.handle = new glue.Explorer();
  }

  /** Brings the handle's model, spec or sentence to `source`'s. */
  apply({ model, text, spec }) {
    const ex = this.handle;
    if (model !== this.#model) {
      if (model) ex.load_model(model);
      else ex.use_untrained();
      this.#model = model;
    }
    if (spec) {
      if (spec !== this.#spec) {
        if (typeof spec === 'string') ex.load_spec(spec);
        else ex.load_spec_bytes(spec);
        this.#spec = spec;
      }
      return;
    }
    if (this.#spec) {
      this.#spec = null;
      this.#text = null;
    }
    if (text !== this.#text) {
      ex.set_text(text ?? '');
      this.#text = text;
    }
  }
}

export class HeadsWorker {
  #scope;
  #mirror = null;
  #memory = null;
  #started = null;

  /** `scope` is the worker's global scope. */
  constructor(scope) {
    this.#scope = scope;
    scope.addEventListener('message', (event) => this.#receive(event.data));
  }

  #post(message, transfer = []) {
    this.#scope.postMessage(message, transfer);
  }

  async #receive(message) {
    try {
      if (message.type === 'start') {
        // Messages wait for the start: a job posted meanwhile is run after it.
        this.#started = this.#start(message);
        await this.#started;
        this.#post({ type: 'ready' });
        return;
      }
      await this.#started;
      if (message.type === 'job') {
        this.#job(message);
      } else if (message.type === 'trap') {
        const ex = this.#mirror.handle;
        if (typeof ex.trap_for_tests === 'function') ex.trap_for_tests();
        else throw new WebAssembly.RuntimeError('unreachable (a test of the worker crashing)');
      }
    } catch (err) {
      if (err instanceof WebAssembly.RuntimeError || !this.#mirror) {
        // A panic leaves the handle unusable; the page ends this worker and starts another.
        this.#post({ type: 'crashed', message: String(err?.message ?? err) });
        return;
      }
      this.#post({ type: 'error', head: message.head, message: String(err?.message ?? err) });
    }
  }

  async #start({ module }) {
    this.#memory = glue.initSync({ module }).memory;
    this.#mirror = new Mirror(glue);
  }

  #job({ head, key, settings, overrides, source }) {
    const started = performance.now();
    const mirror = this.#mirror;
    if (source) mirror.apply(source);
    const ex = mirror.handle;
    ex.update(settings);
    ex.set_overrides(!!overrides[0], !!overrides[1]);
    const found = ex.head_key();
    if (found !== key) {
      this.#post({ type: 'mismatch', head, key, found: found ?? null });
      return;
    }
    const { meta, maps } = ex.export_head(head);
    // `memory`: the worker's wasm memory, for docs/PERFORMANCE.md (it holds one head at a time).
    this.#post({ type: 'head', meta, maps, ms: performance.now() - started, memory: this.#memory.buffer.byteLength }, maps.map((m) => m.buffer));
  }
}

// Started as a worker (not when a test imports this module to read it).
if (typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope) new HeadsWorker(globalThis);
