// The weights store of the single-file build (pkg/inline.js): the same interface as
// WeightsStore (weights.js), over a manifest and model bytes that are already in memory. A
// mechanism whose model is not inside is an error with a readable message; the loader then
// falls back to the untrained model and says so.

export class InlineWeightsStore {
  #manifest;
  #models;
  #buffers = new Map();

  /**
   * `manifest` is weights/manifest.json (or the part of it that is inside); `models` maps a
   * mechanism to a function returning its file's bytes (an ArrayBuffer), called once.
   */
  constructor(manifest, models) {
    this.#manifest = manifest;
    this.#models = models;
  }

  /** The manifest (always in). */
  get manifest() {
    return this.#manifest;
  }

  /** Resolves to the manifest. */
  fetchManifest() {
    return Promise.resolve(this.#manifest);
  }

  /** The manifest's entry for `mechanism`, or null. */
  entry(mechanism) {
    return this.#manifest?.models?.find((m) => m.mechanism === mechanism) ?? null;
  }

  /** The bytes of `mechanism`'s weights; rejects when they are not inside this build. */
  async fetch(mechanism) {
    if (!this.#buffers.has(mechanism)) {
      const make = Object.hasOwn(this.#models, mechanism) ? this.#models[mechanism] : null;
      if (!make || !this.entry(mechanism)) {
        // The page's author chose a build without it: theirs to hear (a console warning), not
        // the reader's (the maps are drawn with the untrained model, and its badge says so).
        const err = new Error(`diffattn: the single-file build carries only the ${this.#manifest?.default} model, so “${mechanism}” is drawn with the untrained (seeded) model; serve the package with its weights/ folder to draw its trained model`);
        err.forAuthor = true;
        throw err;
      }
      this.#buffers.set(mechanism, make());
    }
    return this.#buffers.get(mechanism);
  }

  /** The pretrained model is not inside (45.5 MB, and its own wasm module): rejects with a readable message. */
  fetchPretrained() {
    return Promise.reject(new Error('the single-file build does not carry the pretrained model (45.5 MB): use the package served with weights/minilm/minilm.bin beside its weights'));
  }

  /** The pretrained model is not inside: rejects as `fetchPretrained` does. */
  pretrained() {
    return this.fetchPretrained();
  }

  /** Never ready here. */
  get pretrainedReady() {
    return null;
  }
}
