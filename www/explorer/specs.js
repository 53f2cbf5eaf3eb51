// The explorer's spec files as its first view loads them: the drop target, and what the view
// asks before a spec is opened (none is drawn). The rest (reading a file with its progress bar,
// the banner: spec-files.js) is a chunk, imported the first time a spec is picked, dropped or
// given (an element's `src`); the first view never downloads it (docs/PERFORMANCE.md, "Size of
// each build"). The wasm reads specs in every build: nothing waits for the engine here.

import { acceptDrops } from './files.js';
import { messageOf } from './messages.js';

export class Specs {
  #view;
  #undrop;
  /** spec-files.js's `SpecFiles` once imported, and the promise of it meanwhile. */
  #files = null;
  #importing = null;

  /** `dropTarget` is where files may be dropped (the explorer, or the whole page). */
  constructor(view, dropTarget) {
    this.#view = view;
    this.#undrop = acceptDrops(dropTarget, view.el.dropOverlay, (file) => this.open(file));
  }

  /** Whether a spec is what this explorer is for (an element's `src`): until one is drawn
   * nothing else is (no sentence, no prediction), and a spec that fails says why. */
  expected = false;

  /** The spec drawn now (`{ name, tokens, savedState, layer }`), or null. */
  get active() {
    return this.#files?.active ?? null;
  }

  /** Whether a file is being read or prepared. */
  get loading() {
    return this.#files?.loading ?? false;
  }

  /** How long the last file took (spec-files.js), or null. */
  get lastOpen() {
    return this.#files?.lastOpen ?? null;
  }

  /** The chunk's `SpecFiles`, imported once; null (with a message) when it cannot load, and a
   * later call tries again. */
  async #loaded() {
    if (this.#files) return this.#files;
    this.#importing ??= import('./spec-files.js').then(({ SpecFiles }) => (this.#files = new SpecFiles(this.#view)));
    try {
      return await this.#importing;
    } catch (err) {
      this.#importing = null;
      this.#view.messages.show('spec', this.#view.t('files_failed', { msg: messageOf(err) }));
      return null;
    }
  }

  /** Reads and draws a picked or dropped file. */
  async open(file) {
    await (await this.#loaded())?.open(file);
  }

  /** Draws a spec: its JSON text or a file's bytes, from a file named `name`. */
  async load(spec, name) {
    await (await this.#loaded())?.load(spec, name);
  }

  /** The engine's view with a multi-layer file's layers (the module draws one spec at a
   * time): the count the layer control offers. */
  withLayers(view) {
    const layers = this.active?.layers;
    return layers > 1 ? { ...view, layers } : view;
  }

  /** Draws the `layer` setting's layer of the multi-layer file drawn (layers.js). */
  async showLayer() {
    await this.#files?.showLayer();
  }

  /** Goes back to the sentence (nothing to do while no spec was ever opened). */
  leave(options) {
    this.#files?.leave(options);
  }

  /** After an engine restart: the spec is gone with the old handle. */
  drop() {
    this.#files?.drop();
  }

  /** The loaded layer in words, or null. */
  describe() {
    return this.#files?.describe() ?? null;
  }

  /** Re-translates the banner. */
  relabel() {
    this.#files?.relabel();
  }

  /** Stops accepting drops. */
  destroy() {
    this.#undrop();
  }
}
