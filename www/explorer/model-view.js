// The model view (`view=model`): every layer × head of the model as a small map of one stage
// (the mechanism's first map, A or A1, or its final map, A′, A1 − λ·A2, …; the `all_heads_stage`
// key), each with the head's statistics under it, computed by the engine (`head_statistics`,
// web/src/model_view.rs over src/engine/head_stats.rs): the mean row entropy (H, nats), the mass
// on the sink tokens (S: [CLS] and [SEP] for the pretrained model, else the first token), the
// previous-token (←) and next-token (→) scores. The maps can be sorted by any of them, highest
// first (the `model_sort` key); a click, or Enter on a focused head, opens that layer and head
// in the explore view with every stage.
//
// The view runs on a handle of its own (like a compare panel), so the explorer's handle keeps
// its layer and caches. It walks the layers one at a time: `layer` L set on its handle, every
// head of it computed on the page's one path for heavy work (work.js `Work`, the pretrained
// model's pieces through its feed first), then that layer's maps drawn and its statistics read,
// then the next layer in a task of its own. So no task is long, whatever the model's size.
// This module is a chunk behind `import()` (commands.js `lazyModelView`): the first view does
// not load it, nor its stylesheet, which it adopts into the explorer's shadow root itself, and
// it imports nothing: what it needs of the first view's modules comes with the call
// (commands.js `MODEL_VIEW_PARTS`), so no module is split off the first view's files for it.

/**
 * The view's own strings, in both languages the page speaks (kept here, not in i18n.js, so the
 * first view carries none of them); English is the fallback of every key.
 */
export const WORDS = Object.freeze({
  en: Object.freeze({
    model_stage_label: 'Map',
    model_sort_label: 'Sort by',
    model_sort_layer: 'layer and head',
    model_sort_entropy: 'entropy (H), highest first',
    model_sort_sink: 'sink mass (S), highest first',
    model_sort_previous: 'previous token (←), highest first',
    model_sort_next: 'next token (→), highest first',
    model_note:
      'Layers × heads: {layers} × {heads}, each its map {stage}. Under each: H the mean row entropy (nats), S the mass on the sink tokens ({sinks}), ← the previous-token and → the next-token score (on |map| made a distribution per row). Click a head, or focus it and press Enter, to open it with every stage.',
    model_head: 'L{layer} H{head}',
    model_head_pending: 'Layer {layer}, head {head}: being computed',
    model_head_stats: 'Layer {layer}, head {head}: entropy {entropy} nats, sink mass {sink}, previous token {previous}, next token {next}',
    model_signed: 'on the signed values: sink {sink}, previous {previous}, next {next}',
    model_before: 'on {stage}: entropy {entropy}, sink mass {sink}, previous {previous}, next {next}',
    model_progress: 'Computing layer {layer} of {layers}…',
    model_spec: 'A loaded layer is one layer: "Every head side by side" in the explore view shows its heads. The model view draws the typed sentence’s model; go back to the sentence to see it.',
  }),
  zh: Object.freeze({
    model_stage_label: '图',
    model_sort_label: '排序',
    model_sort_layer: '按层与头',
    model_sort_entropy: '熵（H），从高到低',
    model_sort_sink: '汇聚质量（S），从高到低',
    model_sort_previous: '前一词元（←），从高到低',
    model_sort_next: '后一词元（→），从高到低',
    model_note:
      '{layers} 层 × {heads} 个头，每个显示其 {stage} 图。下方：H 为各行平均熵（奈特），S 为汇聚词元（{sinks}）上的质量，← 为前一词元得分，→ 为后一词元得分（按行将 |图| 归一化为分布）。点击一个头，或聚焦后按回车，即可查看它的所有阶段。',
    model_head: 'L{layer} H{head}',
    model_head_pending: '第 {layer} 层第 {head} 个头：计算中',
    model_head_stats: '第 {layer} 层第 {head} 个头：熵 {entropy} 奈特，汇聚质量 {sink}，前一词元 {previous}，后一词元 {next}',
    model_signed: '按带符号的值：汇聚 {sink}，前一词元 {previous}，后一词元 {next}',
    model_before: '在 {stage} 上：熵 {entropy}，汇聚质量 {sink}，前一词元 {previous}，后一词元 {next}',
    model_progress: '正在计算第 {layer} 层，共 {layers} 层…',
    model_spec: '载入的是单独一层：在“探索”视图中勾选“并排显示所有头”即可查看它的各个头。全模型视图显示所输入句子的模型；回到句子即可查看。',
  }),
});

/** The statistics shown under each map, with their symbols, in that order (the engine's names). */
const FIGURES = Object.freeze([
  ['entropy', 'H'],
  ['sink', 'S'],
  ['previous', '←'],
  ['next', '→'],
]);

/** The smallest and largest side of a head's map (CSS px). */
const SIDE_PX = Object.freeze({ min: 44, max: 112 });

/** The gap between two heads (CSS px). */
const GAP_PX = 6;

/** The room a head's label, figures and meter take with its map, and the view's bar over the
 * maps (CSS px): every layer fits the window's height when it can (the note comes after). */
const TEXT_PX = Object.freeze({ head: 44, view: 56 });

const CSS = `
.model-view { display: flex; flex-direction: column; gap: 8px; }
.mv-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; font-size: 0.9em; }
.mv-bar label { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.mv-bar select { width: auto; max-width: 20em; }
.model-view:not([hidden]) ~ .readout { display: none; }
.mv-note { margin: 0; font-size: 0.85em; }
.mv-grid { display: grid; gap: ${GAP_PX}px; grid-template-columns: repeat(var(--mv-cols), var(--mv-side)); }
.mv-card { display: flex; flex-direction: column; gap: 1px; padding: 0; border: 1px solid transparent; border-radius: 3px; cursor: pointer; font-size: clamp(8px, calc(var(--mv-side) / 7), 11px); line-height: 1.2; font-variant-numeric: tabular-nums; }
.mv-card:hover, .mv-card:focus-visible { border-color: var(--accent, #36c); outline: none; }
.mv-card:focus-visible { box-shadow: 0 0 0 2px var(--accent, #36c); }
.mv-label { font-weight: 600; white-space: nowrap; overflow: hidden; }
.mv-map { display: block; width: var(--mv-side); height: var(--mv-side); background: var(--surface-2, #eee); }
.mv-stats { display: grid; grid-template-columns: 1fr 1fr; column-gap: 2px; white-space: nowrap; overflow: hidden; }
.mv-stats [data-sorted] { font-weight: 700; }
.mv-meter { height: 3px; background: var(--accent, #36c); width: 0; }
.mv-layer-start { grid-column-start: 1; }
`;

/** How many numbers the engine's `head_statistics` gives per head (web/src/model_view.rs). */
const PER_HEAD = 9;

/**
 * The engine's statistics of every head, nine numbers each (`entropy, sink, previous, next,
 * signed_sink, signed_previous, signed_next, negative, rows`), as `{ entropy, … }` per head, or
 * null for a head without any (`rows` 0).
 */
export function headStats(flat) {
  const out = [];
  for (let i = 0; i + PER_HEAD <= flat.length; i += PER_HEAD) {
    const [entropy, sink, previous, next, signedSink, signedPrevious, signedNext, negative, rows] = flat.slice(i, i + PER_HEAD);
    out.push(rows > 0 ? { entropy, sink, previous, next, signed_sink: signedSink, signed_previous: signedPrevious, signed_next: signedNext, negative: negative > 0, rows } : null);
  }
  return out;
}


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
  /** The layer being computed (from 1), its count and the heads of each. */
  #layer = 1;
  #layers = 1;
  #heads = 1;
  #tokens = 0;
  /** `[{ layer, head, card, canvas, stats, figures, meter, drawn }]`, layer by layer. */
  #cards = [];
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
      if (!this.#root.hidden && this.#cards.length) this.#size();
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

  /** `x` with two digits, no leading zero below 1 (`.45`), to fit under a small map. */
  #short(x) {
    return this.#parts.fmt(x, 2).replace(/^(−?)0\./, '$1.');
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
    if (v.specs.active) {
      // A loaded layer is one layer: its heads are the explore view's "every head".
      this.clear();
      this.show(true);
      this.#grid.replaceChildren();
      this.#parts.setText(this.#note, this.#say('model_spec'));
      return;
    }
    if (!this.#load(v.state.weights)) return;
    const stage = this.#stage();
    const patch = this.#patch();
    const key = JSON.stringify([v.state.weights, v.state.mechanism, v.state.text, patch, stage, v.resolvedTheme()]);
    if (key !== this.#key) this.#restart(key, patch, stage);
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
    setOptions(
      this.#stageSelect,
      this.#stages().map((s) => ({ value: s.id, label: s.label })),
    );
    this.#stageSelect.value = this.#stage();
    setOptions(
      this.#sortSelect,
      KEYS.model_sort.choices.map((c) => ({ value: c, label: this.#say(`model_sort_${c}`) })),
    );
    this.#sortSelect.value = v.state.model_sort;
  }

  /**
   * The explorer's engine settings for this view's handle: every one but the layer and the
   * head shown, and but a value that is the learned one (the frame's flag says so), which stays
   * the handle's own (a layer's λ_init differs by depth).
   */
  #patch() {
    const { KEYS } = this.#parts;
    const { state, frame } = this.#v;
    const patch = {};
    for (const [key, s] of Object.entries(KEYS)) {
      if (!s.engine || s.layer === 'head' || key === 'layer') continue;
      if (s.learned && frame?.settings?.[s.learned] !== false) continue;
      patch[key] = state[key];
    }
    return patch;
  }

  /** Brings the handle's model to `weights`; false while it is loading. */
  #load(weights) {
    const { messageOf } = this.#parts;
    const v = this.#v;
    const want = weights === 'trained' ? `trained:${v.state.mechanism}` : weights;
    if (this.#loaded === want) return true;
    if (this.#loading) return false;
    this.#stop();
    this.#feed?.stop();
    this.#feed = null;
    this.#key = null;
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

  /** Sends the sentence and settings, lays out a card per head and walks the layers from 1. */
  #restart(key, patch, stage) {
    const { messageOf, setText } = this.#parts;
    const v = this.#v;
    this.#stop();
    this.#key = key;
    this.#drawnStage = stage;
    let frame;
    try {
      frame = this.engine.call((ex) => {
        ex.set_theme(v.resolvedTheme());
        if (this.#feed) this.#feed.setText(ex, v.state.text);
        else ex.set_text(v.state.text);
        return ex.update({ ...patch, layer: 1 });
      });
    } catch (err) {
      setText(this.#note, messageOf(err));
      this.#grid.replaceChildren();
      return;
    }
    const info = this.engine.call((ex) => ex.model_info());
    this.#layers = info.layers ?? 1;
    this.#heads = frame.settings.heads;
    this.#tokens = frame.view.tokens;
    this.#paintNote(frame);
    this.#build();
    this.#layer = 1;
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
    if (this.#tokens === 0) return this.#finish();
    // The cards are laid out in this task; the work starts in the next.
    const generation = this.#generation;
    setTimeout(() => this.#advance(generation), 0);
  }

  #paintNote(frame) {
    const { setText } = this.#parts;
    const v = this.#v;
    const labels = this.engine.call((ex) => ex.labels());
    const sinks = [...this.engine.call((ex) => ex.sink_keys())].map((k) => labels.keys[k]).filter((l) => l !== undefined);
    const stage = frame.view.stages.find((s) => s.id === this.#drawnStage);
    setText(
      this.#note,
      this.#say('model_note', { layers: this.#layers, heads: this.#heads, stage: stage?.label ?? '', sinks: [...new Set(sinks)].join(', ') }),
    );
  }

  /** One card per layer and head, sized so a layer's heads fill a row of the room there is. */
  #build() {
    const { make } = this.#parts;
    const side = this.#size();
    const dpr = globalThis.devicePixelRatio || 1;
    const px = Math.round(side * dpr);
    this.#cards = [];
    for (let layer = 1; layer <= this.#layers; layer += 1) {
      for (let head = 1; head <= this.#heads; head += 1) {
        const card = make('div', 'mv-card');
        card.tabIndex = 0;
        card.setAttribute('role', 'button');
        card.dataset.layer = String(layer);
        card.dataset.head = String(head);
        const label = make('span', 'mv-label', this.#say('model_head', { layer, head }));
        const canvas = make('canvas', 'mv-map');
        canvas.width = px;
        canvas.height = px;
        const stats = make('div', 'mv-stats');
        const figures = {};
        for (const [name, symbol] of FIGURES) {
          figures[name] = make('span', '', `${symbol}\u2009…`);
          figures[name].dataset.stat = name;
          stats.append(figures[name]);
        }
        const meter = make('div', 'mv-meter');
        card.append(label, canvas, stats, meter);
        card.setAttribute('aria-label', this.#say('model_head_pending', { layer, head }));
        this.#cards.push({ layer, head, card, canvas, figures, meter, stats: null, drawn: false });
      }
    }
    this.#grid.replaceChildren(...this.#cards.map((c) => c.card));
  }

  /** Sizes the maps to the room there is (a layer's heads in a row, every layer in the window's
   * height when they fit); returns the side of one map (CSS px). The canvases keep their pixels. */
  #size() {
    const width = Math.max(this.#root.clientWidth || this.#v.el.maps.clientWidth || 0, 320);
    const cols = this.#heads;
    const byWidth = Math.floor((width - (cols - 1) * GAP_PX) / cols);
    const byHeight = Math.floor(((globalThis.innerHeight || 800) - TEXT_PX.view) / this.#layers - TEXT_PX.head - GAP_PX);
    const side = Math.max(SIDE_PX.min, Math.min(SIDE_PX.max, byWidth, byHeight));
    this.#grid.style.setProperty('--mv-cols', String(Math.min(cols, Math.max(1, Math.floor((width + GAP_PX) / (side + GAP_PX))))));
    this.#grid.style.setProperty('--mv-side', `${side}px`);
    return side;
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
    this.engine.call((ex) => ex.update({ layer: this.#layer }));
    setTimeout(() => this.#advance(generation), 0);
  }

  /** Draws layer `layer`'s heads and reads their statistics. */
  #drawLayer(layer) {
    const { fmt, setText } = this.#parts;
    const stage = this.#drawnStage;
    const all = headStats(this.engine.call((ex) => ex.head_statistics(stage)));
    // A later map than the first (A′, A1 − λ·A2): the first map's figures too, so a head's
    // title says what the mechanism changed (which heads the difference cleans).
    const first = this.#v.view?.stages?.[0];
    const before = first && first.id !== stage ? headStats(this.engine.call((ex) => ex.head_statistics(first.id))) : [];
    for (const c of this.#cards.filter((card) => card.layer === layer)) {
      c.drawn = this.engine.call((ex) => ex.render_head_cells(c.canvas, stage, c.head - 1));
      const s = all[c.head - 1] ?? null;
      c.stats = s;
      for (const [name, symbol] of FIGURES) setText(c.figures[name], `${symbol}\u2009${s ? this.#short(s[name]) : '–'}`);
      const words = s
        ? this.#say('model_head_stats', { layer, head: c.head, entropy: fmt(s.entropy, 3), sink: fmt(s.sink, 3), previous: fmt(s.previous, 3), next: fmt(s.next, 3) })
        : this.#say('model_head', { layer, head: c.head });
      const b = before[c.head - 1];
      const was = b ? this.#say('model_before', { stage: first.label, entropy: fmt(b.entropy, 3), sink: fmt(b.sink, 3), previous: fmt(b.previous, 3), next: fmt(b.next, 3) }) : '';
      const title = [words, s?.negative ? this.#signedText(s) : '', was].filter(Boolean).join(' · ');
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
      for (const [name] of FIGURES) c.figures[name].toggleAttribute('data-sorted', name === stat);
      c.meter.style.width = stat && c.stats ? `${Math.round((100 * c.stats[stat]) / max)}%` : '0';
      c.card.classList.toggle('mv-layer-start', !stat && c.head === 1);
    }
    const now = [...this.#grid.children];
    if (now.length !== order.length || order.some((c, i) => c.card !== now[i])) this.#grid.replaceChildren(...order.map((c) => c.card));
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
    const cards = [...this.#grid.children].map((el) => this.#cards.find((c) => c.card === el)).filter(Boolean);
    return {
      stage: this.#drawnStage,
      stageLabel: stage?.label ?? this.#drawnStage,
      sort,
      sortLabel: this.#say(`model_sort_${sort}`),
      layers: this.#layers,
      heads: this.#heads,
      rows: rows.length,
      cols: keys.length,
      cards: cards.map((c) => ({
        layer: c.layer,
        head: c.head,
        label: this.#say('model_head', { layer: c.layer, head: c.head }),
        title: c.card.title,
        canvas: c.canvas,
        stats: c.stats,
        figures: FIGURES.map(([name]) => ({ name, text: c.figures[name].textContent, sorted: name === sort })),
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
