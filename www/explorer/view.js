// The explorer as one self-contained component: `new ExplorerView(root, options)` owns its
// engine handle, its state, its DOM (built inside `root`, a shadow root), its canvases and its
// controls. Nothing lives at module level, so several explorers share a page without
// noticing each other; the page (www/app.js) is one of them plus chrome, and the custom
// element (pkg/diffattn-explorer.js) wraps this class in a few lines.
//
// The flow is one way. A control, an attribute or a property changes `state` and asks the
// scheduler for a render; one animation frame later `#render` sends the engine one patch with
// what really changed (`Explorer.update`), reads back what the engine made of it
// (`settings()`, `view()`), draws the maps, and repaints the light layers (highlight, tooltip,
// readout, table). Hovering only repaints the overlay.

import { Controls } from './controls.js';
import { buildExplorerDom } from './template.js';
import { Engine, EngineRestarted, EngineStopped } from './engine.js';
import { FrameScheduler } from './scheduler.js';
import { Maps } from './maps.js';
import { Messages, messageOf } from './messages.js';
import { ScreenReaderTable, TABLE_CAP } from './table.js';
import { cellContent, placeTooltip } from './readout.js';
import { paintModel } from './prediction.js';
import { STRINGS, PRESETS, translate } from './i18n.js';
import { ENGINE_KEYS, nearestChoice, patchOf, PAGE_CHOICES } from './state.js';
import { ModelLoader } from './loader.js';
import { Exporter } from './exporter.js';
import { SpecFiles } from './spec-files.js';

/** What the explorer shows until told otherwise, beyond the engine's own defaults. */
const PAGE_DEFAULTS = Object.freeze({ all_heads: false, weights: 'trained', lang: 'en', theme: 'auto' });

export class ExplorerView {
  /** The engine wrapper (`call(fn)` on the wasm handle). */
  engine;
  /** Everything a person can set, under the names of state.js. */
  state;
  /** The engine's `view()` after the last render (what it draws and says). */
  view = null;
  /** `{ compute_ms, draw_ms, frame_ms, renders }` of the last render. */
  timings = { compute_ms: 0, draw_ms: 0, frame_ms: 0, renders: 0 };
  el;
  runtime;
  messages;
  /** Which model draws (loader.js). */
  loader;
  /** The spec file drawn, if any (spec-files.js). */
  specs;
  #controls;
  #maps;
  #table;
  #scheduler;
  #exporter;
  /** The engine values the handle holds now; only what differs is sent. */
  #applied = {};
  #sentText = null;
  #sentTheme = null;
  #sentMaskedLabel = null;
  #options;
  #sentence = { tokens: [], total: 0, truncated: false };
  #labels = { rows: [], keys: [] };
  #layoutKey = '';
  #lastCellKey = '';
  #highlight = null;
  #darkQuery;
  #onDark = () => {
    this.#highlight = null;
    this.#applyTheme();
    this.#scheduler.schedule('render');
  };

  /**
   * `root` is where the explorer builds its DOM (a shadow root). `options`:
   * `runtime` (from runtime.js: the wasm module, its names and defaults), `weights` (a
   * WeightsStore), `state` (initial values, any keys of state.js), `controls` and `maps`
   * (Sets of names to show, or null for all), `dropTarget` (where spec files may be dropped;
   * default the explorer itself), `docsBase` (URL of the docs folder), `onChange(state)`
   * (after a person changed a control), `showTimings`.
   */
  constructor(root, options) {
    this.#options = options;
    this.runtime = options.runtime;
    this.root = root;
    this.el = buildExplorerDom(root);
    const t = (key, params) => this.t(key, params);
    this.messages = new Messages(this.el.messages, t);
    const defaults = { ...this.runtime.defaults, ...PAGE_DEFAULTS };
    const lang = PAGE_CHOICES.lang.includes(options.state?.lang) ? options.state.lang : defaults.lang;
    this.state = { ...defaults, text: PRESETS[lang][0], ...options.state, lang };
    this.engine = new Engine(this.runtime.glue, this.runtime.exports, {
      onRestart: (cause) => this.#restarted(cause),
      onStop: (cause) => this.#stopped(cause),
    });
    this.#scheduler = new FrameScheduler((work) => this.#frame(work), { hold: () => this.loader?.pending ?? null });
    this.#controls = new Controls(this.el, this.runtime.names, { t, emit: (kind, payload) => this.#fromControl(kind, payload) });
    this.#maps = new Maps(this.el.maps, this.engine, {
      hintId: 'maps-hint',
      onInteraction: (what) => this.#interacted(what),
      onResize: () => this.#scheduler.schedule('render'),
      onShowHead: (index) => this.#fromControl('set', { head: index + 1, all_heads: false }),
    });
    this.#table = new ScreenReaderTable(this.el.tableFallback, () => this.#tableContent());
    this.loader = new ModelLoader(this, options.weights);
    this.#exporter = new Exporter(this);
    this.specs = new SpecFiles(this, options.dropTarget ?? this.el.mapsSection.parentElement);
    this.#darkQuery = globalThis.matchMedia?.('(prefers-color-scheme: dark)');
    this.#darkQuery?.addEventListener('change', this.#onDark);
    this.el.modelDocLink.href = new URL('MODEL.md#when-the-heads-slider-leaves-the-trained-head-count', options.docsBase ?? location.href).href;
    this.el.timing.hidden = !options.showTimings;
    this.#applyTheme();
    this.applyLanguage();
    this.#controls.sync(this.state, null);
    this.#controls.setExportEnabled(false);
  }

  /** The string `key` in the explorer's language. */
  t(key, params) {
    return translate(this.state.lang, key, params);
  }

  /** A mechanism's name in the explorer's language (its own name when there is no string). */
  mechName(mechanism) {
    const key = `mech_${mechanism}`;
    return key in STRINGS.en ? this.t(key) : String(mechanism ?? '');
  }

  /**
   * Starts the explorer: loads the trained model when asked (the settings of `keep`, e.g. the
   * address's, stay as given), then draws. Resolves once the first maps are on screen.
   */
  async start({ keep = new Set() } = {}) {
    this.el.loading.hidden = true;
    if (this.engine.state !== 'ready') return;
    this.loader.refreshInfo();
    if (this.state.weights === 'trained') await this.loader.loadTrained(this.state.mechanism, keep);
    this.#scheduler.schedule('render');
    await this.settled();
  }

  /** Resolves once every pending change is drawn (and any weights in flight are in). */
  async settled() {
    for (;;) {
      await this.loader.pending?.catch(() => {});
      await this.#scheduler.settled();
      if (!this.loader.pending && !this.#scheduler.pending) return;
    }
  }

  /** A copy of the state. */
  getState() {
    return { ...this.state };
  }

  /**
   * Changes any keys of the state from outside (an attribute, a property, the address); no
   * `change` event. Invalid values are ignored by the caller (state.js `parseValue`).
   */
  set(partial) {
    const before = this.state;
    this.state = { ...before, ...partial };
    if (partial.lang !== undefined && partial.lang !== before.lang) this.applyLanguage();
    if (partial.theme !== undefined && partial.theme !== before.theme) this.#applyTheme();
    if (partial.weights !== undefined && partial.weights !== before.weights) this.loader.choose(partial.weights);
    else if (partial.mechanism !== undefined && partial.mechanism !== before.mechanism && this.state.weights === 'trained' && !this.specs.active) {
      this.loader.loadTrained(this.state.mechanism);
    }
    if (partial.text !== undefined && this.specs.active) this.specs.leave({ restore: false });
    this.#controls.sync(this.state, this.view);
    this.changed({ notify: false });
  }

  /** Limits the controls shown (a Set of names of controls.js, or null for all). */
  setControls(allowed) {
    this.#options.controls = allowed;
    this.#visibility();
  }

  /** Limits the maps drawn (a Set of stage names, canonical, or null for all). */
  setMaps(allowed) {
    this.#options.maps = allowed;
    this.changed({ notify: false });
  }

  /** After a change of `state`: redraw next frame, and tell the host if a person did it. */
  changed({ notify = true } = {}) {
    this.#scheduler.schedule('render');
    if (notify) this.#options.onChange?.(this.getState());
  }

  /** What a control asked for. */
  #fromControl(kind, payload) {
    switch (kind) {
      case 'set': {
        const mechanismChanged = payload.mechanism !== undefined && payload.mechanism !== this.state.mechanism;
        Object.assign(this.state, payload);
        if (payload.heads !== undefined && this.state.head > this.state.heads) this.state.head = this.state.heads;
        if (mechanismChanged && this.state.weights === 'trained' && !this.specs.active) {
          // The trained model of that mechanism, at the settings it was trained with.
          this.loader.loadTrained(this.state.mechanism);
        }
        this.#controls.sync(this.state, this.view);
        this.changed();
        return;
      }
      case 'text':
      case 'preset':
        if (this.specs.active) this.specs.leave({ restore: false });
        this.state.text = payload;
        this.#controls.sync(this.state, this.view);
        this.changed();
        return;
      case 'weights':
        this.state.weights = payload;
        this.loader.choose(payload);
        this.changed();
        return;
      case 'spec_file':
        this.specs.open(payload);
        return;
      case 'spec_back':
        this.specs.leave({ restore: true });
        return;
      case 'back_to_trained':
        if (this.state.weights === 'trained') this.loader.loadTrained(this.state.mechanism);
        return;
      case 'export':
        this.#exporter.run(payload).catch((err) => this.report(err));
        return;
      default:
    }
  }

  /** Shows an error: a restarted or stopped engine, or a message naming what was wrong. */
  report(err) {
    if (err instanceof EngineRestarted) {
      this.messages.show('crash', this.t('engine_crashed', { msg: messageOf(err.cause) }));
    } else if (err instanceof EngineStopped) {
      this.messages.show('crash', this.t('engine_dead', { msg: messageOf(err.cause) }), {
        action: { label: this.t('reload'), run: () => location.reload() },
      });
    } else {
      this.messages.show('engine', messageOf(err));
    }
  }

  /** A fresh handle replaced a crashed one: everything is sent again at the next render. */
  #restarted() {
    this.#forget();
    this.specs.drop();
    this.loader.refreshInfo();
    if (this.state.weights === 'trained') setTimeout(() => this.loader.loadTrained(this.state.mechanism));
    this.#maps.selected = null;
    this.#maps.hover = null;
  }

  #stopped(cause) {
    this.report(new EngineStopped(cause));
  }

  /** Forgets what the handle holds, so the next render sends everything. */
  #forget() {
    this.#applied = {};
    this.#sentText = null;
    this.#sentTheme = null;
    this.#sentMaskedLabel = null;
  }

  /** The handle now holds these engine values (after a model or a spec set them). */
  adoptEngineSettings(keep = new Set()) {
    const settings = this.engine.call((ex) => ex.settings());
    for (const key of ENGINE_KEYS) {
      if (!keep.has(key)) this.state[key] = settings[key];
    }
    this.#applied = Object.fromEntries(ENGINE_KEYS.map((k) => [k, settings[k]]));
    this.#maps.selected = null;
    this.#maps.hover = null;
    this.#controls.sync(this.state, this.view);
  }

  /** The handle's text changed behind the explorer's back (a spec was left): send it again. */
  forgetText() {
    this.#sentText = null;
  }

  #frame(work) {
    if (this.engine.state !== 'ready') return;
    try {
      if (work.render) this.#renderNow();
      else this.#paintInteraction();
    } catch (err) {
      this.report(err);
    }
  }

  /** Sends what changed to the engine; a refused value goes back to what the engine has. */
  #applyEngine() {
    const theme = this.resolvedTheme();
    this.engine.call((ex) => {
      if (theme !== this.#sentTheme) ex.set_theme((this.#sentTheme = theme));
      const words = [this.t('masked_label'), this.t('constant_label'), this.t('row_label')];
      if (words.join('\n') !== this.#sentMaskedLabel) {
        ex.set_labels(...words);
        this.#sentMaskedLabel = words.join('\n');
      }
      if (!this.specs.active && this.state.text.trim() !== '' && this.state.text !== this.#sentText) {
        this.#sentence = ex.set_text(this.state.text);
        this.#sentText = this.state.text;
        this.#layoutKey = '';
      }
    });
    const patch = patchOf(this.state, this.#applied);
    if (Object.keys(patch).length) {
      try {
        this.engine.call((ex) => ex.update(patch));
        this.messages.clear('settings');
      } catch (err) {
        if (err instanceof EngineRestarted || err instanceof EngineStopped) throw err;
        this.messages.show('settings', messageOf(err));
      }
    }
    // What the engine made of it (a new mechanism snaps the heads, a refused value stays).
    const settings = this.engine.call((ex) => ex.settings());
    for (const key of ENGINE_KEYS) this.state[key] = settings[key];
    this.#applied = Object.fromEntries(ENGINE_KEYS.map((k) => [k, settings[k]]));
  }

  /** The stages drawn: the mechanism's, limited to the `maps` option when it names some. */
  #shownStages() {
    const all = this.view.stages;
    const allowed = this.#options.maps;
    const some = allowed ? all.filter((s) => allowed.has(s.id)) : all;
    return some.length ? some : all;
  }

  #renderNow() {
    const started = performance.now();
    this.#applyEngine();
    const empty = this.isEmpty();
    this.view = this.engine.call((ex) => ex.view());
    this.el.emptyHint.hidden = !empty;
    this.el.maps.hidden = empty;
    this.#controls.setExportEnabled(!empty);
    this.#visibility();
    if (empty) {
      this.#layoutKey = '';
      this.#maps.clear();
      this.#afterRender(started);
      return;
    }
    this.#labels = this.engine.call((ex) => ex.labels());
    const stages = this.#shownStages();
    const allHeads = this.state.all_heads;
    const count = allHeads ? this.state.heads : stages.length;
    const layoutKey = allHeads ? `all:${count}:${this.view.final_stage}` : stages.map((s) => s.id).join(',');
    if (layoutKey !== this.#layoutKey) {
      this.#maps.build(count);
      this.#layoutKey = layoutKey;
      this.el.maps.classList.toggle('all-heads', allHeads);
      this.#exporter.fillTargets(allHeads ? [] : stages);
    }
    this.#maps.allHeads = allHeads;
    this.#maps.fit(this.view.tokens, this.view.keys);
    this.#maps.size();
    const canvases = this.#maps.canvases();
    const font = this.#maps.fontPx();
    const result = this.engine.call((ex) =>
      allHeads ? ex.render_all_heads(canvases, font, '') : ex.render(canvases, font, stages.map((s) => s.id)),
    );
    this.timings.compute_ms = result?.compute_ms ?? 0;
    this.timings.draw_ms = result?.draw_ms ?? 0;
    this.messages.clear('engine');
    this.#figureText(stages);
    this.#afterRender(started);
  }

  #afterRender(started) {
    this.timings.renders += 1;
    this.#status();
    this.loader.paint();
    this.#paintInteraction();
    this.#table.schedule();
    this.timings.frame_ms = performance.now() - started;
  }

  /** Whether nothing is drawn (an empty box, and no spec). */
  isEmpty() {
    return this.specs.active ? this.specs.active.tokens.length === 0 : this.state.text.trim() === '' || this.#sentence.tokens.length === 0;
  }

  /** Shows the controls that apply, and the notes about a learned gate. */
  #visibility() {
    this.#controls.visibility(this.el.explorer, this.#options.controls ?? null, this.view?.parameters ?? []);
    const gate = this.view?.parameters.includes('gate') && this.view.gate_learned;
    this.el.gateSpecNote.hidden = !(gate && this.specs.active);
    this.el.gateLearnedNote.hidden = !(gate && !this.specs.active && this.loader.info?.trained);
  }

  /** aria-labels and formulas: they name the stage and the head, and follow the language. */
  #figureText(stages) {
    const n = this.view.tokens;
    const { heads, head } = this.state;
    const describe = (stage) => {
      const key = `stage_${stage.id}`;
      return this.t(key in STRINGS.en ? key : 'stage_other', { k: this.state.shift, mk: -this.state.shift });
    };
    const final = this.view.stages.find((s) => s.id === this.view.final_stage);
    this.#maps.figures.forEach(({ canvas, caption, figure }, i) => {
      const stage = this.state.all_heads ? final : stages[i];
      const h = this.state.all_heads ? i + 1 : head;
      canvas.setAttribute('aria-label', this.t('aria_map', { name: stage.label, h, total: heads, desc: describe(stage), n }));
      canvas.dataset.stage = stage.id;
      caption.textContent = this.state.all_heads ? this.t('head_option', { n: i + 1, total: heads }) : stage.formula;
      figure.classList.toggle('selected', this.state.all_heads ? i + 1 === head : i === this.#maps.active);
    });
  }

  #status() {
    const el = this.el;
    const empty = this.isEmpty();
    const n = this.view?.tokens ?? 0;
    el.tokenCount.textContent = empty ? '' : this.t(n === 1 ? 'tokens_count_one' : 'tokens_count', { n });
    const truncated = !this.specs.active && !empty && this.#sentence.truncated;
    el.truncatedNotice.hidden = !truncated;
    if (truncated) el.truncatedNotice.textContent = this.t('truncated', { total: this.#sentence.total, shown: n });
    const readout = this.view?.readout;
    el.paramReadout.hidden = !readout || empty;
    el.paramReadout.textContent = readout ?? '';
    el.timing.textContent = empty ? '' : this.t('timing', { c: this.timings.compute_ms.toFixed(1), d: this.timings.draw_ms.toFixed(1) });
    this.#controls.outputs(this.state, this.view);
    this.#controls.sync(this.state, this.view);
  }

  #interacted(what) {
    if (what === 'active') this.#table.schedule();
    this.#scheduler.schedule('overlay');
  }

  #colors() {
    if (!this.#highlight) {
      const style = getComputedStyle(this.el.maps);
      this.#highlight = {
        outer: style.getPropertyValue('--highlight').trim() || '#000',
        inner: style.getPropertyValue('--highlight-inner').trim() || '#fff',
        surface: style.getPropertyValue('--surface').trim() || '#fff',
      };
    }
    return this.#highlight;
  }

  /** Overlay highlight, tooltip and readout for the current cell. Never renders the maps. */
  #paintInteraction() {
    if (this.engine.state !== 'ready') return;
    this.#maps.resolveHover();
    const cell = this.isEmpty() ? null : this.#maps.currentCell();
    this.#maps.paint(cell, this.#colors());
    const key = cell ? `${cell.row},${cell.col},${this.timings.renders},${this.state.lang}` : `none,${this.state.lang},${this.isEmpty()},${this.state.all_heads}`;
    if (key !== this.#lastCellKey) {
      this.#lastCellKey = key;
      const info = cell ? this.engine.call((ex) => ex.cell(cell.row, cell.col)) : null;
      if (!info) {
        this.el.readout.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: this.t(this.state.all_heads ? 'all_heads_hint' : 'readout_hint') }));
        this.el.tooltip.hidden = true;
        return;
      }
      const context = { renormalize: this.state.renormalize, lambda: info.lambda };
      this.el.tooltip.replaceChildren(cellContent(info, cell, context, (k, p) => this.t(k, p)));
      this.el.readout.replaceChildren(cellContent(info, cell, context, (k, p) => this.t(k, p)));
    }
    if (cell) placeTooltip(this.el.tooltip, this.#maps.anchor(cell));
  }

  /** What the screen-reader table shows: the active map's top-left window. */
  #tableContent() {
    if (this.engine.state !== 'ready' || this.isEmpty() || !this.view) return null;
    const stages = this.#shownStages();
    const active = this.#maps.active;
    const stage = this.state.all_heads || active < 0 ? stages[stages.length - 1] : stages[Math.min(active, stages.length - 1)];
    try {
      const w = this.engine.call((ex) => ex.window(stage.id, 0, 0, TABLE_CAP, TABLE_CAP));
      if (!w) return null;
      const { tokens: rows, keys: cols } = this.view;
      const capped = rows > w.rows || cols > w.cols ? this.t('table_capped', { r: w.rows, c: w.cols, rows, cols }) : '';
      return {
        key: `${stage.id},${this.timings.renders},${this.state.lang}`,
        caption: this.t('table_caption', { name: stage.label, h: this.state.head, total: this.state.heads }),
        capped,
        window: w,
        rowLabels: this.#labels.rows,
        keyLabels: this.#labels.keys,
        corner: this.t('table_corner'),
      };
    } catch (err) {
      this.report(err);
      return null;
    }
  }

  /** The theme the maps are drawn in: the state's, or the system's for `auto`. */
  resolvedTheme() {
    if (this.state.theme === 'light' || this.state.theme === 'dark') return this.state.theme;
    return this.#darkQuery?.matches ? 'dark' : 'light';
  }

  #applyTheme() {
    this.el.explorer.dataset.theme = this.resolvedTheme();
    this.#highlight = null;
  }

  /** Translates every string of the explorer into `state.lang`. */
  applyLanguage() {
    const root = this.el.explorer;
    root.lang = this.state.lang === 'zh' ? 'zh-Hans' : 'en';
    for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = this.t(node.dataset.i18n);
    for (const node of root.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = this.t(node.dataset.i18nPlaceholder);
    for (const node of root.querySelectorAll('[data-i18n-aria-label]')) node.setAttribute('aria-label', this.t(node.dataset.i18nAriaLabel));
    this.#controls.fill();
    this.#controls.sync(this.state, this.view);
    this.messages.relabel();
    this.specs?.relabel();
    this.loader?.paint();
    this.#lastCellKey = '';
    this.#table.invalidate();
    this.#layoutKey = '';
    this.#scheduler.schedule('render');
  }

  /** The maps' canvases and what they show, for exports. */
  drawn() {
    return { canvases: this.#maps.canvases(), stages: this.#shownStages(), background: this.#colors().surface, font: this.#maps.fontPx() };
  }

  /** Sets the head count choice nearest to `heads` (for a model that cannot show `heads`). */
  nearestHeads(heads) {
    return nearestChoice(this.view?.head_choices ?? [heads], heads);
  }

  /** Frees the engine handle and stops listening; the explorer is unusable afterwards. */
  destroy() {
    this.#darkQuery?.removeEventListener('change', this.#onDark);
    this.#maps.destroy();
    this.#table.destroy();
    this.specs.destroy();
    this.engine.stop();
  }
}
