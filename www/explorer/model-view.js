// The model view (`view=model`): every layer × head as a small map of one stage (the first map,
// A or A1, or the final one, A′, A1 − λ·A2, …; `all_heads_stage`), each with the engine's
// statistics of the head under it (`head_statistics`, head-stats.js; docs/DESIGN.md §8): H, S,
// ← and →. Sorted by any of them, highest first (`model_sort`); a click, or Enter on a focused
// head, opens that layer and head in the explore view with every stage.
//
// It draws the sentence's model (the trained or untrained model's one layer, the real model's
// six), or the spec file drawn: every layer of a multi-layer file (docs/DESIGN.md §7.11), read
// one at a time by layers.js `pickLayer`, as the explore view reads the one it shows; a file's
// layers may have different numbers of heads. When a layer's heads do not fit a row of cards
// with their figures (32 heads), the cards are compact: the map alone with its layer's name at
// the row's start, the figures in its title, the sorted one as a meter under the map.
//
// The view runs on a handle of its own (like a compare panel), so the explorer's handle keeps
// its layer and caches. It walks the layers one at a time: `layer` L set on its handle (a
// spec's layer L loaded into it), every head of it computed on the page's one path for heavy
// work (work.js `Work`, the pretrained model's pieces through its feed first), then that
// layer's cards made, its maps drawn and its statistics read, then the next layer in a task of
// its own. So no task is long, whatever the model's size.
// A chunk behind `import()` (commands.js `lazyModelView`): the first view loads neither it nor
// its stylesheet, and it imports no module of the first view (what it needs of those comes
// with the call, commands.js `MODEL_VIEW_PARTS`), only layers.js, shared with the spec files.

import { pickLayer } from './layers.js';
import { CSS, fitCards } from './model-view-style.js';
import { FIGURES, headStats } from './head-stats.js';
import { WORDS } from './model-view-words.js';

export { WORDS, headStats };

export class ModelView {
  #v;
  #parts;
  #root;
  #sheet;
  #bar;
  #stageSelect;
  #sortSelect;
  #note;
  #progress;
  #grid;
  engine;
  #feed = null;
  #loaded = null;
  #loading = null;
  #work;
  /** What the maps drawn were drawn from: a new key walks the layers again. */
  #key = null;
  /** The stage drawn. */
  #drawnStage = '';
  #generation = 0;
  /** The layer being computed (from 1), its count, its heads and the most heads of a layer so
   * far (a file's layers may differ: the retrieval models' first has one head). */
  #layer = 1;
  #layers = 1;
  #heads = 1;
  #widest = 1;
  /** The engine's view of the layer under way (its stages). */
  #layerView = null;
  #tokens = 0;
  /** `[{ layer, head, card, canvas, stats, figures, meter }]`, layer by layer. */
  #cards = [];
  /** Each layer's name at its row's start (compact cards only). */
  #rowNames = [];
  /** The spec file whose layers are drawn (a spec's `bytes`), and the settings sent with each. */
  #bytes = null;
  #sent = {};
  /** Whether the cards are compact, and whether a layer's heads fit one row of them. */
  #compact = false;
  #rowsFit = false;
  #sizedFor = '';
  /** The side of a map's canvas (device px). */
  #px = 1;
  /** What the note says of the walk under way (`#paintNote`). */
  #noteParams = null;
  #done = null;
  #resolve = null;
  #resize;

  /** `v` is the ExplorerView; the view's elements go after its maps. `parts`: commands.js `MODEL_VIEW_PARTS`. */
  constructor(v, parts) {
    this.#v = v;
    this.#parts = parts;
    const { Engine, make } = parts;
    this.#sheet = new CSSStyleSheet();
    this.#sheet.replaceSync(CSS);
    v.root.adoptedStyleSheets = [...v.root.adoptedStyleSheets, this.#sheet];
    this.#root = make('div', 'model-view');
    this.#root.setAttribute('part', 'model-view');
    this.#bar = make('div', 'mv-bar');
    this.#stageSelect = make('select');
    this.#sortSelect = make('select');
    this.#stageSelect.id = 'model-stage';
    this.#sortSelect.id = 'model-sort';
    this.#stageSelect.addEventListener('change', () => v.setFromPerson({ all_heads_stage: this.#stageSelect.value }));
    this.#sortSelect.addEventListener('change', () => v.setFromPerson({ model_sort: this.#sortSelect.value }));
    this.#progress = make('span', 'muted');
    this.#progress.setAttribute('role', 'status');
    this.#bar.append(this.#labelled('model_stage_label', this.#stageSelect), this.#labelled('model_sort_label', this.#sortSelect), this.#progress);
    this.#note = make('p', 'mv-note muted');
    this.#grid = make('div', 'mv-grid');
    this.#grid.addEventListener('click', (event) => this.#open(event.target.closest?.('.mv-card')));
    this.#grid.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      this.#open(event.target.closest?.('.mv-card'));
    });
    this.#root.append(this.#bar, this.#grid, this.#note);
    v.el.maps.after(this.#root);
    // The window or the page's columns changed: the maps follow (their CSS size only).
    this.#resize = new ResizeObserver(() => {
      if (this.#root.hidden || !this.#cards.length) return;
      const compact = this.#compact;
      this.#size();
      // Compact cards and others are made differently: drawn again.
      if (compact !== this.#compact) {
        this.#key = null;
        v.changed({ notify: false });
      }
    });
    this.#resize.observe(this.#root);
    this.engine = new Engine(v.runtime, {
      onRestart: () => {
        this.#loaded = null;
        this.#key = null;
        v.changed({ notify: false });
      },
    });
    this.#work = this.#newWork();
  }

  /** The signed figures of a head whose map has negative values, for its title. */
  #signedText(s) {
    const { fmt } = this.#parts;
    return this.#say('model_signed', { sink: fmt(s.signed_sink, 3), previous: fmt(s.signed_previous, 3), next: fmt(s.signed_next, 3) });
  }

  /** Figure `name` of statistics `s` as a card shows it under its map: `H 1.39`, `S .28`. */
  #figure(s, name) {
    // Two digits, no leading zero below 1 (`.45`), to fit under a small map.
    const value = s ? this.#parts.fmt(s[name], 2).replace(/^(−?)0\./, '$1.') : '–';
    return `${FIGURES.find(([n]) => n === name)[1]}\u2009${value}`;
  }

  /** The view's string `key` in the explorer's language. */
  #say(key, params) {
    const { translate } = this.#parts;
    return translate(WORDS[this.#v.state.lang] ?? WORDS.en, key, params);
  }

  #labelled(key, control) {
    const { make } = this.#parts;
    const label = make('label');
    label.dataset.words = key;
    label.append(make('span', '', this.#say(key)), control);
    return label;
  }

  /** The work for this view's handle: the page's Work, on this handle and its feed. */
  #newWork() {
    const { Work } = this.#parts;
    const v = this.#v;
    const view = this;
    const host = {
      engine: this.engine,
      el: v.el,
      t: (key, params) => v.t(key, params),
      report: (err) => v.report(err),
      get loader() {
        return { pretrained: view.#feed };
      },
      get view() {
        return { tokens: view.#tokens };
      },
      get state() {
        return { heads: view.#heads };
      },
    };
    return new Work(host, { onShown: () => {}, onEvery: () => this.#advance(this.#generation), held: () => false });
  }

  /** Resolves once every layer is drawn (null when nothing is under way). */
  get pending() {
    return this.#loading ?? this.#done;
  }

  /** Shows or hides the view. */
  show(on) {
    this.#root.hidden = !on;
  }

  /** Stops what is under way and forgets what was drawn (the view was left). */
  clear() {
    this.show(false);
    this.#stop();
    this.#key = null;
  }

  /** Draws the model view of the explorer's state (called by the explorer's render). */
  render() {
    const v = this.#v;
    this.show(true);
    this.#paintControls();
    const spec = v.specs.active;
    if (!this.#load(v.state.weights, spec)) return;
    const stage = this.#stage();
    const patch = this.#patch();
    const source = spec ? ['spec', spec.name, spec.layers] : [v.state.weights, v.state.text];
    const key = JSON.stringify([source, v.state.mechanism, patch, stage, v.resolvedTheme()]);
    if (key !== this.#key || (spec && spec.bytes !== this.#bytes)) this.#restart(key, patch, stage, spec);
    this.#order();
  }

  /** The offered stages (the mechanism's first and final maps, and the one the state names). */
  #stages() {
    const all = this.#v.view?.stages ?? [];
    const chosen = this.#v.state.all_heads_stage;
    const final = this.#v.view?.final_stage;
    return all.filter((s, i) => i === 0 || s.id === final || s.id === chosen);
  }

  #stage() {
    const ids = this.#stages().map((s) => s.id);
    const chosen = this.#v.state.all_heads_stage;
    return ids.includes(chosen) ? chosen : (this.#v.view?.final_stage ?? ids[0] ?? '');
  }

  #paintControls() {
    const { KEYS, setOptions, setText } = this.#parts;
    const v = this.#v;
    for (const label of this.#bar.querySelectorAll('[data-words] > span')) setText(label, this.#say(label.parentElement.dataset.words));
    setOptions(this.#stageSelect, this.#stages().map((s) => ({ value: s.id, label: s.label })));
    this.#stageSelect.value = this.#stage();
    setOptions(this.#sortSelect, KEYS.model_sort.choices.map((c) => ({ value: c, label: this.#say(`model_sort_${c}`) })));
    this.#sortSelect.value = v.state.model_sort;
  }

  /**
   * The explorer's engine settings for this view's handle: every one but the layer and the
   * head shown, and but a value that is the learned one (the frame's flag says so), which stays
   * the handle's own (a layer's λ_init differs by depth); for a spec file, only those moved
   * from the file's.
   */
  #patch() {
    const { KEYS } = this.#parts;
    const { state, frame, specs } = this.#v;
    // A spec file's layers each keep their own settings (causal, λ, …) but those a person moved.
    const file = specs.active?.adopted;
    const patch = {};
    for (const [key, s] of Object.entries(KEYS)) {
      if (!s.engine || s.layer === 'head' || key === 'layer') continue;
      if (s.learned && frame?.settings?.[s.learned] !== false) continue;
      if (file && Object.is(file[key], state[key])) continue;
      patch[key] = state[key];
    }
    return patch;
  }

  /** Brings the handle's model to `weights`, or to the spec file drawn; false while it is loading. */
  #load(weights, spec) {
    const { messageOf } = this.#parts;
    const v = this.#v;
    const want = spec ? 'spec' : weights === 'trained' ? `trained:${v.state.mechanism}` : weights;
    if (this.#loaded === want) return true;
    if (this.#loading) return false;
    this.#stop();
    this.#feed?.stop();
    this.#feed = null;
    this.#key = null;
    // Another model: no card of the last one stays while this one loads.
    this.#cards = [];
    this.#grid.replaceChildren();
    if (this.#loaded === 'spec') {
      this.#bytes = null;
      this.engine.call((ex) => ex.clear_spec());
    }
    if (spec) {
      // Each layer is loaded as the walk comes to it (`#loadLayer`).
      this.#loaded = want;
      return true;
    }
    if (weights === 'minilm') {
      // The model the explorer read (weights.js), with a feed of this view's own.
      const model = v.weightsStore.pretrainedReady;
      if (!model) return false;
      this.#feed = model.feed();
      this.engine.call((ex) => this.#feed.attach(ex));
      this.#loaded = want;
      return true;
    }
    if (weights === 'untrained') {
      this.engine.call((ex) => ex.use_untrained());
      this.#loaded = want;
      return true;
    }
    this.#loading = v.weightsStore
      .fetch(v.state.mechanism)
      .then((buffer) => this.engine.call((ex) => ex.load_model(new Uint8Array(buffer))))
      .catch((err) => {
        v.messages.show('model-view', messageOf(err));
        this.engine.call((ex) => ex.use_untrained());
      })
      .finally(() => {
        this.#loaded = want;
        this.#loading = null;
        v.changed({ notify: false });
      });
    return false;
  }

  /** Loads layer `layer` of the spec file drawn into the handle `ex`, with the explorer's settings. */
  #loadLayer(ex, layer) {
    const picked = pickLayer(this.#bytes, layer);
    const one = picked ? picked.spec : this.#bytes;
    if (typeof one === 'string') ex.load_spec(one);
    else ex.load_spec_bytes(one);
    return ex.update(this.#sent);
  }

  /** Sends the sentence (or the spec's first layer) and settings, lays out a card per head and walks the layers from 1. */
  #restart(key, patch, stage, spec) {
    const { messageOf, setText } = this.#parts;
    const v = this.#v;
    this.#stop();
    this.#key = key;
    this.#drawnStage = stage;
    this.#bytes = spec?.bytes ?? null;
    this.#sent = patch;
    let frame;
    try {
      frame = this.engine.call((ex) => {
        ex.set_theme(v.resolvedTheme());
        if (this.#bytes) return this.#loadLayer(ex, 1);
        if (this.#feed) this.#feed.setText(ex, v.state.text);
        else ex.set_text(v.state.text);
        return ex.update({ ...patch, layer: 1 });
      });
    } catch (err) {
      setText(this.#note, messageOf(err));
      this.#grid.replaceChildren();
      return;
    }
    this.#layers = spec ? (spec.layers ?? 1) : (this.engine.call((ex) => ex.model_info()).layers ?? 1);
    this.#heads = frame.settings.heads;
    this.#widest = this.#heads;
    this.#layerView = frame.view;
    this.#tokens = frame.view.tokens;
    this.#build();
    this.#paintNote(frame);
    this.#layer = 1;
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
    if (this.#tokens === 0) return this.#finish();
    // The cards are laid out in this task; the work starts in the next.
    const generation = this.#generation;
    setTimeout(() => this.#advance(generation), 0);
  }

  #paintNote(frame) {
    const labels = this.engine.call((ex) => ex.labels());
    const sinks = [...this.engine.call((ex) => ex.sink_keys())].map((k) => labels.keys[k]).filter((l) => l !== undefined);
    const stage = frame.view.stages.find((s) => s.id === this.#drawnStage);
    this.#noteParams = { layers: this.#layers, heads: this.#widest, stage: stage?.label ?? '', sinks: [...new Set(sinks)].join(', '), mixed: false };
    this.#paintNoteText();
  }

  /** The note for the walk under way: compact cards or not, and whether a layer shows another map. */
  #paintNoteText() {
    const p = this.#noteParams;
    const text = this.#say(this.#compact ? 'model_note_compact' : 'model_note', p);
    this.#parts.setText(this.#note, p.mixed ? `${text} ${this.#say('model_note_mixed')}` : text);
  }

  /** A new walk's grid, sized to the room there is: no cards yet, each layer's come with its
   * maps (`#addLayer`), so no task lays out a thousand cards (32 × 32 heads). */
  #build() {
    this.#px = Math.round(this.#size() * (globalThis.devicePixelRatio || 1));
    this.#cards = [];
    this.#rowNames = [];
    this.#grid.replaceChildren();
  }

  /** Makes layer `layer`'s cards, one per head, and its row's name. */
  #addLayer(layer) {
    const { make } = this.#parts;
    const name = make('span', 'mv-row', this.#say('model_layer_row', { layer }));
    name.setAttribute('aria-hidden', 'true');
    this.#rowNames[layer - 1] = name;
    for (let head = 1; head <= this.#heads; head += 1) {
      const card = make('div', 'mv-card');
      card.tabIndex = 0;
      card.setAttribute('role', 'button');
      card.dataset.layer = String(layer);
      card.dataset.head = String(head);
      const canvas = make('canvas', 'mv-map');
      canvas.width = this.#px;
      canvas.height = this.#px;
      const meter = make('div', 'mv-meter');
      const figures = {};
      if (this.#compact) card.append(canvas, meter); // the label and figures are its title's
      else {
        const stats = make('div', 'mv-stats');
        for (const [figure, symbol] of FIGURES) {
          figures[figure] = make('span', '', `${symbol}\u2009…`);
          figures[figure].dataset.stat = figure;
          stats.append(figures[figure]);
        }
        card.append(make('span', 'mv-label', this.#say('model_head', { layer, head })), canvas, stats, meter);
      }
      this.#cards.push({ layer, head, card, canvas, figures, meter, stats: null });
    }
  }

  /** Sizes the maps to the room there is (a layer's heads in a row, every layer in the window's
   * height when they fit); returns the side of one map (CSS px). The canvases keep their pixels. */
  #size() {
    const width = Math.max(this.#root.clientWidth || this.#v.el.maps.clientWidth || 0, 320);
    const sorted = this.#v.state.model_sort !== 'layer';
    const fit = fitCards({ width, height: globalThis.innerHeight || 800, heads: this.#widest, layers: this.#layers, sorted });
    this.#rowsFit = fit.rows;
    this.#sizedFor = this.#v.state.model_sort;
    this.#grid.classList.toggle('mv-compact', fit.compact);
    this.#grid.classList.toggle('mv-rows', fit.rows);
    const renote = this.#noteParams && (fit.compact !== this.#compact || this.#noteParams.heads !== this.#widest);
    this.#compact = fit.compact;
    if (renote) {
      this.#noteParams.heads = this.#widest;
      this.#paintNoteText();
    }
    this.#grid.style.setProperty('--mv-cols', String(fit.cols));
    this.#grid.style.setProperty('--mv-side', `${fit.side}px`);
    return fit.side;
  }


  /** The walk: the layer under way computed (in the Work's tasks), drawn, then the next. */
  #advance(generation) {
    const { STEP_MS, setText } = this.#parts;
    if (generation !== this.#generation || this.#layer > this.#layers) return;
    setText(this.#progress, this.#say('model_progress', { layer: this.#layer, layers: this.#layers }));
    let done;
    try {
      done = this.#work.now(STEP_MS, true);
    } catch (err) {
      this.#v.report(err);
      return this.#finish();
    }
    if (!done) return; // the Work's tasks go on, and `onEvery` comes back here
    this.#drawLayer(this.#layer);
    this.#layer += 1;
    if (this.#layer > this.#layers) return this.#finish();
    const layer = this.#layer;
    try {
      const frame = this.engine.call((ex) => (this.#bytes ? this.#loadLayer(ex, layer) : ex.update({ layer })));
      if (frame.view.tokens !== this.#tokens) {
        throw new Error(`layer ${layer}: ${frame.view.tokens} tokens, where layer 1 has ${this.#tokens}: the model view draws the layers of one text`);
      }
      this.#heads = frame.settings.heads;
      this.#layerView = frame.view;
      if (this.#heads > this.#widest) {
        this.#widest = this.#heads;
        this.#size();
      }
    } catch (err) {
      this.#parts.setText(this.#note, this.#parts.messageOf(err));
      return this.#finish();
    }
    setTimeout(() => this.#advance(generation), 0);
  }

  /** Draws layer `layer`'s heads and reads their statistics. */
  #drawLayer(layer) {
    const { fmt, setText } = this.#parts;
    this.#addLayer(layer);
    // The stage chosen, or on a layer of another mechanism (a file's layers may differ) its map
    // in the same place: its final one for the final map chosen, else its first; named in the
    // titles.
    const { stages, final_stage: final } = this.#layerView;
    const chosen = this.#drawnStage;
    const stage = stages.some((s) => s.id === chosen) ? chosen : this.#v.view?.final_stage === chosen ? final : stages[0].id;
    const named = stage === chosen ? '' : stages.find((s) => s.id === stage)?.label;
    if (named && !this.#noteParams.mixed) {
      this.#noteParams.mixed = true;
      this.#paintNoteText();
    }
    const all = headStats(this.engine.call((ex) => ex.head_statistics(stage)));
    // A later map than the first (A′, A1 − λ·A2): the first map's figures too, so a head's
    // title says what the mechanism changed (which heads the difference cleans).
    const first = stages[0];
    const before = first && first.id !== stage ? headStats(this.engine.call((ex) => ex.head_statistics(first.id))) : [];
    for (const c of this.#cards.filter((card) => card.layer === layer)) {
      this.engine.call((ex) => ex.render_head_cells(c.canvas, stage, c.head - 1));
      const s = all[c.head - 1] ?? null;
      c.stats = s;
      for (const [name] of FIGURES) if (c.figures[name]) setText(c.figures[name], this.#figure(s, name));
      const words = s
        ? this.#say('model_head_stats', { layer, head: c.head, entropy: fmt(s.entropy, 3), sink: fmt(s.sink, 3), previous: fmt(s.previous, 3), next: fmt(s.next, 3) })
        : this.#say('model_head', { layer, head: c.head });
      const b = before[c.head - 1];
      const was = b ? this.#say('model_before', { stage: first.label, entropy: fmt(b.entropy, 3), sink: fmt(b.sink, 3), previous: fmt(b.previous, 3), next: fmt(b.next, 3) }) : '';
      const title = [named, words, s?.negative ? this.#signedText(s) : '', was].filter(Boolean).join(' · ');
      c.card.title = title;
      c.card.setAttribute('aria-label', title);
      c.canvas.setAttribute('role', 'img');
      c.canvas.setAttribute('aria-label', title);
    }
    this.#order();
  }

  /** Puts the cards in the order asked for and marks the sorted figure, with its meter. */
  #order() {
    const by = this.#v.state.model_sort;
    const stat = FIGURES.some(([name]) => name === by) ? by : null;
    const value = (c) => (stat && c.stats ? c.stats[stat] : -Infinity);
    const order = stat ? [...this.#cards].sort((a, b) => value(b) - value(a) || a.layer - b.layer || a.head - b.head) : this.#cards;
    const max = stat ? Math.max(1e-9, ...this.#cards.map((c) => (c.stats ? c.stats[stat] : 0))) : 1;
    for (const c of this.#cards) {
      for (const [name] of FIGURES) c.figures[name]?.toggleAttribute('data-sorted', name === stat);
      c.meter.style.width = stat && c.stats ? `${Math.round((100 * c.stats[stat]) / max)}%` : '0';
      c.card.classList.toggle('mv-layer-start', !stat && c.head === 1 && !this.#compact);
    }
    // Compact cards in layer order: each layer's name at its row's start.
    if (this.#compact && this.#sizedFor !== by) this.#size();
    const items = this.#rowsFit ? order.flatMap((c) => (c.head === 1 ? [this.#rowNames[c.layer - 1], c.card] : [c.card])) : order.map((c) => c.card);
    const now = [...this.#grid.children];
    if (now.length !== items.length || items.some((el, i) => el !== now[i])) this.#grid.replaceChildren(...items);
  }

  /**
   * What the PNG and SVG exports draw (exporter.js): the stage, the sort and every head in the
   * order on screen, with its map's canvas and its figures as shown; null before every layer
   * is drawn (or with no head).
   */
  exportable() {
    if (this.#done || !this.#cards.length) return null;
    const { rows, keys } = this.engine.call((ex) => ex.labels());
    const stage = this.#v.view?.stages?.find((s) => s.id === this.#drawnStage);
    const sort = this.#v.state.model_sort;
    // The weights this view's handle drew (untrained where the trained file failed), as it says.
    const info = this.engine.call((ex) => ex.model_info());
    const cards = [...this.#grid.children].map((el) => this.#cards.find((c) => c.card === el)).filter(Boolean);
    return {
      stage: this.#drawnStage,
      stageLabel: stage?.label ?? this.#drawnStage,
      sort,
      sortLabel: this.#say(`model_sort_${sort}`),
      weights: info?.pretrained ? 'minilm' : info?.trained ? 'trained' : 'untrained',
      layers: this.#layers,
      heads: this.#widest,
      rows: rows.length,
      cols: keys.length,
      cards: cards.map((c) => ({
        layer: c.layer,
        head: c.head,
        label: this.#say('model_head', { layer: c.layer, head: c.head }),
        title: c.card.title,
        canvas: c.canvas,
        stats: c.stats,
        figures: FIGURES.map(([name]) => ({ name, text: this.#figure(c.stats, name), sorted: name === sort })),
      })),
    };
  }

  /** Opens the head of `card` in the explore view, with every stage. */
  #open(card) {
    if (!card) return;
    const layer = Number(card.dataset.layer);
    const head = Number(card.dataset.head);
    this.#v.setFromPerson({ view: 'explore', all_heads: false, layer, head });
  }

  #finish() {
    const { setText } = this.#parts;
    setText(this.#progress, '');
    const resolve = this.#resolve;
    this.#resolve = null;
    this.#done = null;
    resolve?.();
  }

  /** Stops the walk under way (a new key, or the view left). */
  #stop() {
    this.#generation += 1;
    this.#work.stop();
    this.#work = this.#newWork();
    this.#finish();
  }

  /** Frees the handle and the feed (the explorer is destroyed). */
  destroy() {
    this.#resize.disconnect();
    this.#stop();
    this.#feed?.stop();
    this.engine.stop();
    this.#root.remove();
    this.#v.root.adoptedStyleSheets = this.#v.root.adoptedStyleSheets.filter((s) => s !== this.#sheet);
  }
}
