// The explorer as one self-contained component: `new ExplorerView(root, options)` owns its
// engine handle, its state, its DOM (built inside `root`, a shadow root), its canvases and its
// controls. Nothing lives at module level, so several explorers share a page without
// noticing each other; the page (www/app.js) is one of them plus chrome, and the custom
// element (pkg/diffattn-explorer.js) wraps this class in a few lines.
//
// The flow is one way. A control, an attribute or a property changes the state (view-state.js:
// the page's own keys at once, the engine's settings as a pending patch) and asks the scheduler
// for a render; one animation frame later (or, when a person changed it, at the end of the
// input's own task: the next frame then shows the maps instead of drawing them first;
// scheduler.js `soon`) `#renderNow` sends the engine that patch
// (`Explorer.update`), which returns one frame (the settings as the engine now has them, the
// learned λ among them, and what to draw and say), draws the maps of the current view (explore,
// the guided walk's steps, or the compare view), and repaints the light layers (highlight,
// tooltip, readout, row view, table). JavaScript keeps no copy of the engine's settings beyond
// that frame. Hovering only repaints the overlay.

import { Controls } from './controls.js';
import { buildExplorerDom } from './template.js';
import { Engine, EngineRestarted, EngineStopped } from './engine.js';
import { EngineLink } from './engine-link.js';
import { FrameScheduler } from './scheduler.js';
import { Maps } from './maps.js';
import { Messages, messageOf } from './messages.js';
import { ScreenReaderTable } from './table.js';
import { Language, STRINGS, PRESETS, translate } from './i18n.js';
import { PAGE_CHOICES, PAGE_DEFAULTS } from './state.js';
import { ViewState } from './view-state.js';
import { PRESENT_CONTROLS } from './controls.js';
import { ModelLoader } from './loader.js';
import { Specs } from './specs.js';
import { Walk } from './walk.js';
import { RowView } from './row-view.js';
import { CompareView } from './compare.js';
import { Zoom } from './zoom.js';
import { RENDER_MS, Work } from './work.js';
import { Readouts } from './readouts.js';
import { Placement } from './layout.js';
import { explorerKey, fromControl, lazyExporter, lazyModelView, present } from './commands.js';
import { paintExportTargets, paintFigureText, paintStatus, paintVisibility, translateAll } from './paint.js';
import { setHidden } from './dom.js';

export class ExplorerView {
  /** Whether a frame (`#frame`) is running: a panic during it restarts nothing at once. */
  #inFrame = false;
  /** The engine wrapper (`call(fn)` on the wasm handle). */
  engine;
  /** The engine's frame after the last change: `{ settings, view }` (null before one). */
  frame = null;
  /** Its `view`: what the engine draws and says. */
  view = null;
  /** `{ compute_ms, draw_ms, frame_ms, renders }` of the last render. */
  timings = { compute_ms: 0, draw_ms: 0, frame_ms: 0, renders: 0 };
  /** The row and key labels of the maps drawn. */
  labels = { rows: [], keys: [] };
  /** What the engine said about the sentence: `{ tokens, total, truncated }`. */
  sentence = { tokens: [], total: 0, truncated: false };
  el;
  messages;
  /** Which model draws (loader.js). */
  loader;
  /** The spec file drawn, if any (specs.js; spec-files.js once one comes). */
  specs;
  /** The guided walk (walk.js). */
  walk;
  /** The language spoken: its strings (i18n.js; Chinese is loaded when first spoken). */
  language = new Language();
  weightsStore;
  #controls;
  #maps; #table; #scheduler; #exporter; #rowView; #compare; #zoom; #model; // prettier-ignore
  /** The page's keys, the pending patch and the last frame's settings (view-state.js). */
  #state;
  /** What the engine has been sent, and the one way a patch reaches it (engine-link.js). */
  #link;
  #options;
  /** The label stride of the maps last drawn whole (1: every token labelled): over 1, zooming
   * is offered whatever the length. */
  #labelsHidden = 1;
  /** Where the maps are: the grid, kept while nothing it depends on changes (layout.js). */
  #placement = new Placement();
  #layoutKey = '';
  #readouts;
  #darkQuery;
  #onDark = () => {
    this.#applyTheme();
    this.#scheduler.schedule('render');
  };
  #keyTarget;
  #onKey = (event) => explorerKey(this, event);
  #onFullscreen = () => {
    if (!document.fullscreenElement && this.state.present) this.setFromPerson({ present: false });
  };

  /**
   * `root` is where the explorer builds its DOM (a shadow root). `options`: `runtime` (from
   * runtime.js), `weights` (a WeightsStore), `state` (initial values, any keys of state.js),
   * `controls` and `maps` (Sets of names to show, or null for all), `fit` (size the maps to
   * the window, as the page does), `dropTarget` (where spec files may be dropped; default
   * the explorer itself), `globalKeys` (P and the walk's arrow keys work anywhere on the page,
   * for the page's one explorer), `onChange(state)` (after a person changed something),
   * `onSpec(spec)` (a spec file was drawn: `{ name, layer, tokens }`, its `layer` the engine's
   * `view().layer`; null when the sentence is back), `showTimings`.
   */
  constructor(root, options) {
    this.#options = options;
    const runtime = options.runtime;
    this.weightsStore = options.weights;
    this.root = root;
    this.el = buildExplorerDom(root);
    const t = (key, params) => this.t(key, params);
    this.messages = new Messages(this.el.messages, t);
    const defaults = { ...runtime.defaults, ...PAGE_DEFAULTS };
    const lang = PAGE_CHOICES.lang.includes(options.state?.lang) ? options.state.lang : defaults.lang;
    this.#state = new ViewState(runtime.defaults, { ...PAGE_DEFAULTS, text: PRESETS[lang][0], ...options.state, lang });
    this.#link = new EngineLink(this, this.#state);
    // The walk shares one colour scale unless told otherwise.
    if (this.state.view === 'walk' && options.state?.shared_scale === undefined) this.#state.change({ shared_scale: true });
    this.engine = new Engine(runtime, {
      onRestart: (cause, { own }) => this.#restarted(own),
      onStop: (cause) => this.report(new EngineStopped(cause)),
    });
    this.work = new Work(this, {
      onShown: () => {
        this.#scheduler.schedule('render');
        this.#scheduler.flush();
      },
      onEvery: () => (this.state.all_heads ? this.#scheduler.schedule('render') : this.loader.paint()),
      held: () => this.#scheduler.pending,
    });
    this.#scheduler = new FrameScheduler((work) => this.#frame(work), {
      hold: () => this.language.pending ?? this.loader?.pending ?? this.#compare?.pending ?? null,
    });
    this.#controls = new Controls(this.el, runtime.names, { t, emit: (kind, payload) => this.#fromControl(kind, payload) });
    this.#maps = new Maps(this.el.maps, this.engine, {
      hintId: 'maps-hint',
      onInteraction: (what) => this.#interacted(what),
      onResize: () => {
        this.#placement.stale();
        this.#scheduler.schedule('render');
      },
      onShowHead: (index) => this.setFromPerson({ head: index + 1, all_heads: false }),
      onRowLabel: (row) => this.setFromPerson({ row: row + 1 }),
    });
    this.#zoom = new Zoom(this, this.#maps);
    this.#table = new ScreenReaderTable(this.el.tableFallback, () => this.#readouts.tableContent());
    this.loader = new ModelLoader(this, options.weights);
    this.#model = lazyModelView(this);
    this.#exporter = lazyExporter(this, this.#model);
    this.specs = new Specs(this, options.dropTarget ?? this.el.explorer);
    this.walk = new Walk(this);
    this.#rowView = new RowView(this);
    this.#compare = new CompareView(this, this.el.compare);
    this.#readouts = new Readouts(this, { maps: this.#maps, compare: this.#compare, rowView: this.#rowView, zoom: this.#zoom });
    this.#darkQuery = globalThis.matchMedia?.('(prefers-color-scheme: dark)');
    this.#darkQuery?.addEventListener('change', this.#onDark);
    document.addEventListener('fullscreenchange', this.#onFullscreen);
    // The page's explorer hears keys anywhere on the page; an embedded one only inside itself.
    this.#keyTarget = options.globalKeys ? document : this.el.explorer;
    this.#keyTarget.addEventListener('keydown', this.#onKey);
    this.el.timing.hidden = !options.showTimings;
    this.#applyTheme();
    this.#useLanguage();
    if (this.state.present) present(this, true);
    this.#controls.sync(this.state, null);
    this.#controls.setExportEnabled(false);
  }

  /** Everything a person can set, under the schema's names (frozen: `set`, `setFromPerson` and `assign` change it). */
  get state() { return this.#state.state; } // prettier-ignore

  /** The runtime the engine's handle is on now (runtime.js; engine.js `runtime`). */
  get runtime() { return this.engine.runtime; } // prettier-ignore

  /** The string `key` in the explorer's language. */
  t(key, params) { return translate(this.language.strings, key, params); } // prettier-ignore

  /** Speaks the state's language: now in what is loaded, again once its strings are in. */
  #useLanguage() {
    this.applyLanguage();
    this.language.use(this.state.lang, () => (this.applyLanguage(), this.changed({ notify: false })));
  }

  /** A mechanism's name in the explorer's language (its own name when there is no string). */
  mechName(mechanism) { return `mech_${mechanism}` in STRINGS.en ? this.t(`mech_${mechanism}`) : String(mechanism ?? ''); } // prettier-ignore

  /** Loads the trained model when asked (the settings of `keep` stay as given), then draws. */
  async start({ keep = new Set() } = {}) {
    await this.language.pending;
    this.el.loading.hidden = true;
    if (this.engine.state !== 'ready') return;
    this.loader.refreshInfo();
    if (this.state.weights === 'trained') await this.loader.loadTrained(this.state.mechanism, keep);
    else if (this.state.weights === 'minilm') await this.loader.loadPretrained(keep);
    this.#scheduler.schedule('render');
    await this.settled();
  }

  /** Resolves once every pending change is drawn (and any weights in flight are in). */
  async settled() {
    for (;;) {
      await this.language.pending;
      await this.loader.pending?.catch(() => {});
      await this.#compare.pending?.catch(() => {});
      await this.#scheduler.settled();
      await this.work.idle();
      await this.#model.pending?.catch(() => {});
      if (!this.language.pending && !this.loader.pending && !this.#compare.pending && !this.#scheduler.pending && !this.work.pending && !this.#model.pending) return;
    }
  }

  /** A copy of the state. */
  getState() {
    return { ...this.state };
  }

  /** Changes keys of the state without what a change does (no model loaded, nothing drawn): a restored state. */
  assign(partial) {
    this.#state.change(partial);
  }

  /** Changes any keys of the state from outside (an attribute, a property); no change event. */
  set(partial) {
    this.#change(partial);
    this.changed({ notify: false });
  }

  /**
   * The state's keys the reader changed with the page's controls (not the address, the
   * element's attributes or a host's `set`): what the author gave is the figure, so only these
   * are "moved away from the trained settings" (prediction.js).
   */
  readerMoved = new Set();

  /** Changes keys of the state as a person did (a control, the walk, the row view). */
  setFromPerson(partial) {
    if (partial.text !== undefined && partial.text !== this.state.text) this.work.typed();
    for (const [key, value] of Object.entries(partial)) if (value !== this.state[key]) this.readerMoved.add(key);
    this.#change(partial);
    this.changed();
    if (!this.#inFrame) this.#scheduler.soon();
  }

  #change(partial) {
    const before = this.state;
    this.#state.change(partial);
    const moved = (key) => partial[key] !== undefined && partial[key] !== before[key];
    if (partial.heads !== undefined && this.state.head > this.state.heads) this.#state.change({ head: this.state.heads });
    if (moved('lang')) this.#useLanguage();
    if (moved('theme')) this.#applyTheme();
    if (moved('present')) present(this, this.state.present);
    if (moved('view') && this.state.view === 'walk' && partial.shared_scale === undefined) this.#state.change({ shared_scale: true });
    if (moved('view')) ({ compare: this.#compare, model: this.#model })[before.view]?.clear();
    if (moved('text') || moved('mechanism')) this.messages.clearTransient();
    if (moved('weights')) this.loader.choose(this.state.weights);
    else if (moved('mechanism') && this.state.weights === 'trained' && !this.specs.active) this.loader.loadTrained(this.state.mechanism);
    if (partial.text !== undefined && this.specs.active) this.specs.leave({ restore: false });
    else if (moved('layer')) this.specs.showLayer(); // a multi-layer file's other layer (layers.js)
    this.#controls.sync(this.state, this.view);
  }

  /** Limits the controls shown (a Set of names of controls.js, or null for all). */
  setControls(allowed) {
    this.#options.controls = allowed;
    this.#scheduler.schedule('render');
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

  /** What a control asked for (commands.js). */
  #fromControl(kind, payload) { fromControl(this, kind, payload, { exporter: this.#exporter }); } // prettier-ignore

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

  /**
   * A fresh handle replaced one lost to a panic: everything is sent again at the next render.
   * When the panic was another engine's (another explorer of the page on the same runtime),
   * that render comes at once, so this explorer draws what it drew before; when it was this
   * explorer's own call, or came during its render (a compare panel's), the next change does
   * (drawing the same state at once could panic again, and again).
   */
  #restarted(own) {
    if (!own && !this.#inFrame) this.#scheduler.schedule('render');
    this.resend();
    this.specs.drop();
    this.loader.refreshInfo();
    if (this.state.weights === 'trained') setTimeout(() => this.loader.loadTrained(this.state.mechanism));
    else if (this.state.weights === 'minilm') setTimeout(() => this.loader.loadPretrained());
    this.#maps.selected = null;
    this.#maps.hover = null;
  }

  /** The handle is a fresh one (a restart): text, settings, theme, labels, viewport and grid are sent again, at the next render or now. */
  resend({ now = false } = {}) {
    this.#state.forget();
    this.#placement.stale();
    this.#link.forget();
    if (now) this.#link.apply();
  }

  /** The handle now holds its own settings (a model or a spec set them): its frame, and of the pending settings only those `keep` names. */
  adoptEngineSettings(keep = new Set()) {
    this.#link.adopt(this.engine.call((ex) => ex.frame()), keep);
    this.#maps.selected = null;
    this.#maps.hover = null;
    this.#controls.sync(this.state, this.view);
  }

  /** A spec was loaded or left: the host hears of it (`onSpec`: the loaded layer, or null). */
  specChanged() {
    const active = this.specs.active;
    this.#options.onSpec?.(active ? { name: active.name, layer: active.layer, tokens: active.tokens.length } : null);
  }

  /** The handle's text changed behind the explorer's back (a spec was left): send it again. */
  forgetText() {
    this.#link.forgetText();
  }

  #frame(work) {
    if (this.engine.state !== 'ready') return;
    this.#inFrame = true;
    try {
      // A render outside an animation frame: the work it leaves waits for the frame (work.js).
      if (work.render && work.early) this.work.beforeFrame(() => this.#renderNow());
      else if (work.render) this.#renderNow();
      else this.#readouts.paint();
    } catch (err) {
      this.report(err);
    } finally {
      this.#inFrame = false;
    }
  }

  /**
   * Sends `patch` to the engine and takes the frame it returns (engine-link.js): what the
   * engine made of it; a refused patch changes nothing, and its message says why.
   */
  send(patch) {
    this.#link.send(patch);
  }

  /** The stages drawn: the mechanism's, limited to the `maps` option, and to the walk's step. */
  shownStages() {
    const all = this.view.stages;
    const allowed = this.#options.maps;
    const some = allowed ? all.filter((s) => allowed.has(s.id)) : all;
    const stages = some.length ? some : all;
    return this.state.view === 'walk' ? this.walk.shownStages(stages) : stages;
  }

  #renderNow() {
    const started = performance.now();
    this.#link.apply();
    const empty = this.isEmpty();
    const mode = this.state.view;
    setHidden(this.el.emptyHint, !empty || this.specs.expected);
    setHidden(this.el.maps, empty || mode === 'compare' || mode === 'model');
    setHidden(this.el.compare, empty || mode !== 'compare');
    setHidden(this.el.walk, mode !== 'walk' || empty);
    this.#controls.setExportEnabled(!empty, mode === 'model' ? this.t('export_json_model') : '');
    this.#controls.fillStages(this.view.stages, this.state.all_heads_stage || this.view.final_stage);
    paintVisibility(this, this.#controls, this.#allowedControls());
    if (empty) {
      this.#layoutKey = '';
      this.#maps.clear();
      this.#compare.clear();
      this.#model.clear();
      this.#zoom.hide();
      this.#afterRender(started);
      return;
    }
    this.labels = this.engine.call((ex) => ex.labels());
    if (mode === 'compare' || mode === 'model') {
      this.#zoom.hide();
      if (mode === 'model') this.#model.render();
      else this.#compare.render(this.#maps.fontPx());
      this.#afterRender(started);
      return;
    }
    const stages = this.shownStages();
    const allHeads = this.state.all_heads && mode === 'explore';
    const output = mode === 'walk' && this.walk.atOutput();
    const allStage = this.state.all_heads_stage || this.view.final_stage;
    const count = allHeads ? this.state.heads : stages.length + (output ? 1 : 0);
    // The maps' work first (work.js): what is not in after RENDER_MS follows in tasks, and this
    // renders again when it is; meanwhile the maps drawn before stay as they were.
    if (!this.work.now(RENDER_MS, allHeads || output)) {
      // Only the controls follow now (a slider's value); the rest is painted with the maps.
      this.#controls.sync(this.state, this.view);
      this.timings.frame_ms = performance.now() - started;
      return;
    }
    const layoutKey = `${mode}:${allHeads ? `all:${count}:${allStage}` : stages.map((s) => s.id).join(',')}:${output}`;
    if (layoutKey !== this.#layoutKey) {
      this.#maps.build(count);
      this.#layoutKey = layoutKey;
      this.el.maps.classList.toggle('all-heads', allHeads);
      paintExportTargets(this, allHeads ? [] : stages);
    }
    this.#zoom.read();
    this.#zoom.show({ allowed: this.#allowedControls(), comparing: false, labelsHidden: this.#labelsHidden });
    this.#maps.allHeads = allHeads;
    this.#maps.fit(this.view.tokens, this.view.keys);
    // The walk's text first, the maps below it; the cell it names is outlined on every map.
    if (mode === 'walk') this.walk.paint();
    this.#maps.pointed = mode === 'walk' && this.walk.pointed && !output ? { index: count - 1, ...this.walk.pointed } : null;
    // The grid (the engine's) sizes every canvas and picks the labels' font; in the walk the
    // step's map is the large one, the maps it came from small beside it.
    const focus = mode === 'walk' && count > 1 ? count - 1 : null;
    const grid = this.#place(allHeads ? [allStage] : stages.map((s) => s.id), { allHeads, output, focus });
    const font = grid.font_px;
    const canvases = this.#maps.canvases();
    const result = this.engine.call((ex) =>
      allHeads ? ex.render_all_heads(canvases, font, allStage) : ex.render(canvases.slice(0, stages.length), font, stages.map((s) => s.id)),
    );
    if (output) this.engine.call((ex) => ex.render_output(canvases[canvases.length - 1], font));
    if (grid.legend) this.engine.call((ex) => ex.render_legend(this.#maps.legend));
    // Labels left out (too many tokens for their size, below ZOOM_FROM): zooming is offered,
    // and the zoom bar says how many are shown; it takes room, so the maps are fitted again.
    const hidden = allHeads || this.#zoom.shown?.whole === false ? this.#labelsHidden : this.#maps.labelStride();
    if (hidden !== this.#labelsHidden) {
      this.#labelsHidden = hidden;
      this.#scheduler.schedule('render');
    }
    this.timings.compute_ms = result?.compute_ms ?? 0;
    this.timings.draw_ms = result?.draw_ms ?? 0;
    this.messages.clear('engine');
    const final = this.view.stages.find((s) => s.id === allStage);
    paintFigureText(this, this.#maps.figures, stages, { allHeads, final, output });
    this.#zoom.paint(allHeads ? allStage : stages[stages.length - 1]?.id);
    if (mode === 'walk') this.walk.entered(this.#maps, stages);
    this.#afterRender(started);
  }

  /** Fits the maps of `stages` into the room they have and places them (layout.js). */
  #place(stages, { allHeads, output, focus = null }) {
    const base = { stages, all_heads: allHeads, output, ...(focus === null ? {} : { focus }) };
    return this.#placement.place(this, this.#maps, base, { fit: this.#options.fit, zoom: this.#zoom.active, labelsHidden: this.#labelsHidden });
  }

  #afterRender(started) {
    this.timings.renders += 1;
    paintStatus(this);
    this.#controls.sync(this.state, this.view);
    this.loader.paint();
    this.#readouts.paint();
    this.#table.schedule();
    // Something painted after the maps were placed moved them: fit them to the room they have.
    if (this.#placement.moved(this)) this.#scheduler.schedule('render');
    this.timings.frame_ms = performance.now() - started;
  }

  /** The controls to show: the `controls` option, or the presenter's while presenting. */
  #allowedControls() {
    if (this.state.present && !this.#options.controls) return new Set(PRESENT_CONTROLS);
    return this.#options.controls ?? null;
  }

  /** Whether nothing is drawn (an empty box, and no spec). */
  isEmpty() {
    return this.specs.active ? this.specs.active.tokens.length === 0 : this.state.text.trim() === '' || this.sentence.tokens.length === 0;
  }

  /** The index of the map the table describes. */
  activeMap() {
    return this.#maps.active;
  }

  #interacted(what) {
    if (what === 'active') {
      const cell = this.#maps.selected;
      if (cell?.keyboard) this.#zoom.follow(cell);
      if (cell && cell.row + 1 !== this.state.row) this.setFromPerson({ row: cell.row + 1 });
      this.#table.schedule();
    }
    this.#scheduler.schedule('overlay');
  }

  /** The row view's pointer moved to key `key` (from 0, or null). */
  rowHovered(key) {
    const row = this.state.row - 1;
    this.#maps.hover = key === null ? null : { index: this.#maps.figures.length - 1, row, col: key, fromRow: true };
    this.#scheduler.schedule('overlay');
  }

  /** Repaints the highlight (after a slide ends). */
  repaintOverlay() {
    this.#readouts.invalidate();
    this.#scheduler.schedule('overlay');
  }

  /** The highlight's colours from the stylesheet. */
  highlightColors() {
    return this.#readouts.highlightColors();
  }

  /** The theme the maps are drawn in: the state's, or the system's for `auto`. */
  resolvedTheme() {
    if (this.state.theme === 'light' || this.state.theme === 'dark') return this.state.theme;
    return this.#darkQuery?.matches ? 'dark' : 'light';
  }

  #applyTheme() {
    this.el.explorer.dataset.theme = this.resolvedTheme();
    this.#readouts?.resetColors();
  }

  /** Translates every string of the explorer into `state.lang`. */
  applyLanguage() {
    translateAll(this);
    this.#controls.fill();
    this.#controls.sync(this.state, this.view);
    this.messages.relabel();
    this.specs?.relabel();
    this.loader?.paint();
    this.#readouts.invalidate();
    this.#table.invalidate();
    this.#layoutKey = '';
    this.#scheduler.schedule('render');
  }

  /** The maps' canvases and what they show, for exports. */
  drawn() {
    return { canvases: this.#maps.canvases(), stages: this.shownStages(), background: this.highlightColors().surface, font: this.#maps.fontPx() };
  }

  /** Frees the engine handle and stops listening; the explorer is unusable afterwards. */
  destroy() {
    this.#darkQuery?.removeEventListener('change', this.#onDark);
    document.removeEventListener('fullscreenchange', this.#onFullscreen);
    this.#keyTarget.removeEventListener('keydown', this.#onKey);
    this.walk.stop();
    this.#maps.destroy();
    this.#compare.clear();
    this.#model.destroy();
    this.#table.destroy();
    this.specs.destroy();
    this.work.stop();
    this.loader.stop();
    this.engine.stop();
  }
}
