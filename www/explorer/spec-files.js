// Bring your own vectors and weights: a stages spec file (JSON, or the binary safetensors form
// that `diffattn.save` writes for large layers), picked or dropped, drawn in place of the
// sentence until the person goes back to it. Reading shows a progress bar (a captured layer
// can be tens of megabytes); the spec's settings become the controls' (the engine says what
// they are); a broken file, or one the page cannot draw (too many tokens), is a message naming
// the field at fault. A captured layer's name, index and head layout come from the engine's
// `view().layer`. A chunk the first view does not load: specs.js, what the view holds, imports
// it the first time a spec comes.

import { pickLayer } from './layers.js';
import { MAX_BINARY_SPEC_BYTES, readSpecFile, specByteLimit } from './files.js';
import { messageOf } from './messages.js';
import { EngineRestarted, EngineStopped } from './engine.js';
import { fmt } from './format.js';

/** Megabytes, to one decimal (64, 0.3). */
const mb = (bytes) => String(Math.round((bytes / (1024 * 1024)) * 10) / 10);

/** Lets the browser paint (the progress bar) before a long synchronous call. */
const painted = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

export class SpecFiles {
  #view;
  #reading = 0;
  /** The spec drawn now: `{ name, tokens, savedState, layer }`, or null. */
  active = null;
  /** Whether a file is being read or prepared (the progress bar shows). */
  loading = false;
  /**
   * How long the last file took, in ms (docs/PERFORMANCE.md): `read_ms` (its bytes, with the
   * bar), `paint_ms` (the bar painted before the engine runs), `load_ms` (the engine: the bytes
   * into wasm, parsed, checked, the projections and maps computed), `view_ms` (the engine's
   * view of it); null before any.
   */
  lastOpen = null;

  /** A chunk of its own: specs.js imports it on the first spec (and takes the drops). */
  constructor(view) {
    this.#view = view;
  }

  /** Reads and draws a file (JSON or safetensors), with a progress bar while it reads. */
  async open(file) {
    const view = this.#view;
    const id = ++this.#reading;
    view.messages.clear('spec');
    if (file.size > specByteLimit(file.name)) {
      view.messages.show('spec', view.t('spec_too_large_bytes', { name: file.name, mb: mb(file.size), max: mb(specByteLimit(file.name)), bin: mb(MAX_BINARY_SPEC_BYTES) }));
      return;
    }
    this.#progress(true, view.t('spec_reading', { name: file.name, mb: mb(file.size) }), 0);
    const started = performance.now();
    let bytes;
    try {
      bytes = await readSpecFile(file, (loaded, total) => {
        if (id === this.#reading) view.el.specProgress.value = total > 0 ? loaded / total : 1;
      });
    } catch (err) {
      if (id !== this.#reading) return;
      this.#progress(false);
      const key = { too_large: 'spec_too_large_bytes', not_text: 'spec_not_text' }[err.reason] ?? 'spec_read_error';
      view.messages.show('spec', view.t(key, { name: file.name, mb: mb(file.size), max: mb(specByteLimit(file.name)), bin: mb(MAX_BINARY_SPEC_BYTES) }));
      return;
    }
    const read = performance.now();
    if (id !== this.#reading) return;
    // Parsing and the first maps run in the engine at once: the bar turns indeterminate.
    this.#progress(true, view.t('spec_parsing', { name: file.name, n: mb(bytes.length) }), null);
    await painted();
    if (id !== this.#reading) return;
    this.#progress(false);
    const timing = { bytes: bytes.length, read_ms: read - started, paint_ms: performance.now() - read };
    await this.load(bytes, file.name);
    if (this.lastOpen) Object.assign(this.lastOpen, timing);
  }

  /** Shows or hides the progress bar: `value` 0 to 1, or null for indeterminate. */
  #progress(on, text = '', value = null) {
    const el = this.#view.el;
    this.loading = on;
    el.specLoading.hidden = !on;
    el.specLoadingText.textContent = text;
    if (value === null) el.specProgress.removeAttribute('value');
    else el.specProgress.value = value;
  }

  /** Draws a spec: its JSON text, or a file's bytes (JSON or safetensors), from a file named `name`. */
  async load(spec, name) {
    const view = this.#view;
    let info;
    let layer = null;
    let picked = null;
    this.lastOpen = null;
    const file = typeof spec === 'string' || spec instanceof Uint8Array ? spec : new Uint8Array(spec);
    const head = this.active?.bytes === file ? this.#view.state.head : null;
    try {
      const t0 = performance.now();
      // A multi-layer file: the layer of the `layer` setting (docs/DESIGN.md §7.11, layers.js).
      picked = pickLayer(file, view.state.layer);
      const bytes = picked ? picked.spec : file;
      info = view.engine.call((ex) => (typeof bytes === 'string' ? ex.load_spec(bytes) : ex.load_spec_bytes(bytes)));
      const t1 = performance.now();
      layer = view.engine.call((ex) => ex.view()).layer ?? null;
      this.lastOpen = { name, load_ms: t1 - t0, view_ms: performance.now() - t1 };
    } catch (err) {
      if (err instanceof EngineRestarted || err instanceof EngineStopped) view.report(err);
      else view.messages.show('spec', view.t('spec_error', { name, msg: messageOf(err) }));
      return;
    }
    view.messages.clearTransient();
    view.messages.clear('spec');
    const savedState = this.active ? this.active.savedState : { ...view.state };
    // A learned λ is the sentence's model's to give again, not a setting to restore.
    if (!this.active && view.view?.lambda_learned !== false) delete savedState.lambda;
    // `bytes`: the file as given, one layer or many (`layers`), kept to draw another layer and
    // for the model view, which reads every layer of it.
    this.active = { name, tokens: Array.from(info.tokens ?? []), savedState, layer, layers: picked?.layers ?? 1, shown: picked?.layer ?? 1, bytes: file };
    view.adoptEngineSettings();
    if (picked) view.assign({ layer: picked.layer });
    view.assign({ all_heads: false });
    // Another layer of the same file: the head shown stays (a layer's heads are its file's).
    if (head && head !== view.state.head && head <= view.state.heads) view.send({ head });
    // The settings as the file gives them for the layer shown: what a person moves from them
    // the model view applies to every layer, each of which keeps its own otherwise.
    this.active.adopted = { ...view.state };
    this.relabel();
    view.el.specBanner.hidden = false;
    view.specChanged();
    view.changed({ notify: false });
  }

  /** Draws the `layer` setting's layer of the multi-layer file drawn, once it differs from the one shown. */
  async showLayer() {
    const active = this.active;
    if (active?.layers > 1 && active.shown !== this.#view.state.layer) await this.load(active.bytes, active.name);
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
    if (restore) {
      const { lambda, ...rest } = saved;
      view.assign({ ...rest, lang: view.state.lang, view: view.state.view }); // the view a person is in stays
      if (lambda !== undefined) view.set({ lambda });
    }
    const info = view.loader.info;
    if (view.state.weights === 'trained' && info?.mechanism !== view.state.mechanism) view.loader.loadTrained(view.state.mechanism);
    else if (view.state.weights === 'minilm') view.loader.loadPretrained();
    view.specChanged();
    view.changed({ notify: false });
  }

  /** After an engine restart: the spec is gone with the old handle. */
  drop() {
    if (!this.active) return;
    this.#view.assign({ ...this.active.savedState, lang: this.#view.state.lang });
    this.active = null;
    this.#view.el.specBanner.hidden = true;
    this.#view.specChanged();
  }

  /** The loaded layer in words: `{ title, layout }` (title names the model and layer when the spec does). */
  describe() {
    const a = this.active;
    if (!a) return null;
    const t = (k, p) => this.#view.t(k, p);
    const l = a.layer;
    const n = a.tokens.length;
    let title;
    if (l?.model && l.layer !== null && l.layer !== undefined) title = t('spec_active_layer', { layer: t('spec_layer', { layer: l.layer, model: l.model }), name: a.name, n });
    else if (l?.model) title = t('spec_active_layer', { layer: l.model, name: a.name, n });
    else title = t(l?.labelled ? 'spec_active_labelled' : 'spec_active', { name: a.name, n });
    const parts = [];
    if (l) {
      parts.push(t('spec_layout', { n: l.heads, dh: l.head_dim, kv: l.kv_heads, d: l.d_model }));
      if (l.rope) parts.push(l.rope.theta === null ? t('spec_rope_explicit', { layout: l.rope.layout }) : t('spec_rope', { layout: l.rope.layout, theta: fmt(l.rope.theta, 0) }));
      if (l.biases) parts.push(t('spec_biases'));
    }
    return { title, layout: parts.join(' · ') };
  }

  /** Re-translates the banner. */
  relabel() {
    const d = this.describe();
    if (!d) return;
    const el = this.#view.el;
    el.specBannerText.textContent = d.title;
    el.specLayout.textContent = d.layout;
  }

}
