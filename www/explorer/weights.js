// The trained weights: the manifest and one file per mechanism, fetched once per store and
// shared by every explorer that uses the store (a failed fetch is tried again next time); and
// the pretrained model: its weights file and its own wasm module (pretrained.js), fetched
// together on first use and read once for every explorer of the page.
// Files are read with arrayBuffer(), not a body stream: reading a stream to count bytes made
// Chromium report the request as aborted now and then.

import { compileWasm, moduleOf } from './runtime.js';
import { EngineRestarted, EngineStopped } from './engine.js';

export class WeightsStore {
  #base;
  #manifest = null;
  #manifestPromise = null;
  #buffers = new Map();
  #pretrained = null;
  #module;
  #model = null;
  #ready = null;

  /**
   * `base` is the URL of the folder holding `manifest.json` and the `*.bin` files; `pretrained`
   * the pretrained model's wasm module, `{ glue, wasm, build }` (the glue: a function that
   * imports pkg/diffattn_pretrained.js; `wasm`: the URL of the build wasm-features.js picks),
   * from the entry, which knows where the package is; without it the model cannot be loaded.
   */
  constructor(base, { pretrained = null } = {}) {
    this.#base = new URL(base);
    this.#module = pretrained;
  }

  /** The folder's URL. */
  get base() {
    return this.#base;
  }

  /** The manifest once fetched, else null. */
  get manifest() {
    return this.#manifest;
  }

  /** Fetches the manifest (once). */
  fetchManifest() {
    if (!this.#manifestPromise) {
      const promise = fetch(new URL('manifest.json', this.#base))
        .then((res) => {
          if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
          return res.json();
        })
        .then((manifest) => {
          this.#manifest = manifest;
          return manifest;
        });
      promise.catch(() => {
        if (this.#manifestPromise === promise) this.#manifestPromise = null;
      });
      this.#manifestPromise = promise;
    }
    return this.#manifestPromise;
  }

  /** The manifest's entry for `mechanism`, once the manifest is in, else null. */
  entry(mechanism) {
    return this.#manifest?.models?.find((m) => m.mechanism === mechanism) ?? null;
  }

  /** The bytes of `mechanism`'s weights (fetched once); rejects with a readable error. */
  fetch(mechanism) {
    let promise = this.#buffers.get(mechanism);
    if (!promise) {
      promise = (async () => {
        await this.fetchManifest();
        const entry = this.entry(mechanism);
        if (!entry) throw new Error(`no trained file for ${mechanism}`);
        const res = await fetch(new URL(entry.file, this.#base));
        if (!res.ok) throw new Error(`${entry.file}: HTTP ${res.status}`);
        return res.arrayBuffer();
      })();
      promise.catch(() => {
        if (this.#buffers.get(mechanism) === promise) this.#buffers.delete(mechanism);
      });
      this.#buffers.set(mechanism, promise);
    }
    return promise;
  }

  /**
   * The bytes of the pretrained model's file (`minilm/minilm.bin` in the folder, built by the
   * set-up: docs/MINILM.md), fetched once and then cached by the browser; `onProgress(loaded,
   * total)` follows the download (`total` 0 when the server does not say). Rejects with a
   * readable error for a missing file or a download that fails half-way (a file cut short is
   * the engine's to refuse); a later call tries again.
   */
  fetchPretrained(onProgress = () => {}) {
    if (!this.#pretrained) {
      // XMLHttpRequest, for its progress events (a body stream read to count bytes made
      // Chromium report the request as aborted now and then, see above).
      const promise = new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('GET', new URL(PRETRAINED_FILE, this.#base));
        xhr.responseType = 'arraybuffer';
        xhr.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
        xhr.onload = () => {
          if (xhr.status !== 200) {
            const hint = xhr.status === 404 ? ' (the set-up builds it: scripts/fetch-model)' : '';
            reject(new Error(`${PRETRAINED_FILE}: HTTP ${xhr.status}${hint}`));
          } else resolve(xhr.response);
        };
        xhr.onerror = () => reject(new Error(`${PRETRAINED_FILE}: the download failed`));
        xhr.onabort = () => reject(new Error(`${PRETRAINED_FILE}: the download was stopped`));
        xhr.send();
      });
      promise.catch(() => {
        if (this.#pretrained === promise) this.#pretrained = null;
      });
      this.#pretrained = promise;
    }
    return this.#pretrained;
  }

  /**
   * The pretrained model, ready to draw (pretrained.js `instantiatePretrained`: its module
   * instantiated, the model read from its file), made once for every explorer of the page: the
   * file (`fetchPretrained`, `onProgress` as there) and the module are fetched together. Rejects
   * with a readable error (a missing or broken file, a module that did not load); a later call
   * tries again, without fetching again what came in.
   */
  pretrained(onProgress = () => {}) {
    if (!this.#model) {
      if (!this.#module) return Promise.reject(new Error('no wasm module for the pretrained model was given'));
      const { glue, wasm, build = null } = this.#module;
      // The module (its glue, its compiled wasm, pretrained.js) comes while the file does.
      const module = Promise.all([moduleOf(glue), compileWasm(wasm), import('./pretrained.js')]);
      const promise = Promise.all([this.fetchPretrained(onProgress), module]).then(([buffer, [glue, compiled, m]]) => {
        this.#ready = m.instantiatePretrained({ module: glue, compiled }, new Uint8Array(buffer), { build, errors: { EngineRestarted, EngineStopped } });
        return this.#ready;
      });
      promise.catch(() => {
        if (this.#model === promise) this.#model = null;
      });
      this.#model = promise;
    }
    return this.#model;
  }

  /** The pretrained model once ready (`pretrained`), else null. */
  get pretrainedReady() {
    return this.#ready;
  }
}

/** The pretrained model's file, in the weights folder. */
export const PRETRAINED_FILE = 'minilm/minilm.bin';
