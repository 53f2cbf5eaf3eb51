// Bring your own vectors and weights: a stages spec file, picked or dropped, drawn in place of
// the sentence until the person goes back to it. The spec's settings become the controls'
// (the engine says what they are); a broken file is a message naming the field at fault.

import { acceptDrops, readSpecFile } from './files.js';
import { messageOf } from './messages.js';
import { EngineRestarted, EngineStopped } from './engine.js';

export class SpecFiles {
  #view;
  #undrop;
  /** The spec drawn now: `{ name, tokens, savedState }`, or null. */
  active = null;

  /** `dropTarget` is where files may be dropped (the explorer, or the whole page). */
  constructor(view, dropTarget) {
    this.#view = view;
    this.#undrop = acceptDrops(dropTarget, view.el.dropOverlay, (file) => this.open(file));
  }

  /** Reads and draws a file. */
  async open(file) {
    const view = this.#view;
    let text;
    try {
      text = await readSpecFile(file);
    } catch (err) {
      const key = err.reason === 'too_large' ? 'spec_too_large' : 'spec_read_error';
      view.messages.show('spec', view.t(key, { name: file.name }));
      return;
    }
    this.load(text, file.name);
  }

  /** Draws the spec `text` (from a file named `name`). */
  load(text, name) {
    const view = this.#view;
    let info;
    try {
      info = view.engine.call((ex) => ex.load_spec(text));
    } catch (err) {
      if (err instanceof EngineRestarted || err instanceof EngineStopped) view.report(err);
      else view.messages.show('spec', view.t('spec_error', { name, msg: messageOf(err) }));
      return;
    }
    view.messages.clearTransient();
    const savedState = this.active ? this.active.savedState : { ...view.state };
    this.active = { name, tokens: Array.from(info.tokens ?? []), savedState };
    view.adoptEngineSettings();
    view.state.all_heads = false;
    this.relabel();
    view.el.specBanner.hidden = false;
    view.changed({ notify: false });
  }

  /** Goes back to the sentence; `restore` brings back the settings from before the spec. */
  leave({ restore }) {
    if (!this.active) return;
    const view = this.#view;
    const saved = this.active.savedState;
    this.active = null;
    view.el.specBanner.hidden = true;
    try {
      view.engine.call((ex) => ex.clear_spec());
    } catch (err) {
      view.report(err);
    }
    view.forgetText();
    if (restore) Object.assign(view.state, saved, { lang: view.state.lang });
    const info = view.loader.info;
    if (view.state.weights === 'trained' && info?.mechanism !== view.state.mechanism) view.loader.loadTrained(view.state.mechanism);
    view.changed({ notify: false });
  }

  /** After an engine restart: the spec is gone with the old handle. */
  drop() {
    if (!this.active) return;
    Object.assign(this.#view.state, this.active.savedState, { lang: this.#view.state.lang });
    this.active = null;
    this.#view.el.specBanner.hidden = true;
  }

  /** Re-translates the banner. */
  relabel() {
    if (!this.active) return;
    const view = this.#view;
    view.el.specBannerText.textContent = view.t('spec_active', { name: this.active.name, n: this.active.tokens.length });
  }

  /** Stops accepting drops. */
  destroy() {
    this.#undrop();
  }
}
