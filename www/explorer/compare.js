// The compare view: the same sentence under two or three mechanisms side by side (by default
// the ones the engine marks for comparison: standard attention, shift-difference and the
// Differential Transformer), each with its own engine handle and its trained model, each
// drawing its final map (A, A′, A1 − λA2). Hovering a cell in one highlights it in all and
// shows every mechanism's value there. The shown mechanism's panel follows every setting the
// schema says it uses; the others keep their trained settings and follow the causal mask.

import { Engine } from './engine.js';
import { make } from './dom.js';
import { fmt } from './format.js';
import { Maps } from './maps.js';
import { messageOf } from './messages.js';
import { KEYS } from './settings.generated.js';

/**
 * The settings a panel of `mechanism` follows (the schema's `compare`): every panel follows
 * those marked `every` (the causal mask); the shown mechanism's panel also those marked `shown`
 * that it uses (the heads, and each parameter the view's `parameters` name), but a value that
 * is the learned one (the frame's flag says so: the trained gate, λ) stays the panel's own.
 */
function followed(state, mechanism, settings, parameters) {
  const patch = {};
  for (const [key, s] of Object.entries(KEYS)) {
    if (!s.engine || !s.compare) continue;
    if (s.compare === 'shown' && (state.mechanism !== mechanism || (s.parameter && !parameters.includes(s.parameter)))) continue;
    if (s.learned && settings?.[s.learned] !== false) continue;
    patch[key] = state[key];
  }
  return patch;
}

class Panel {
  constructor(compare, mechanism, container) {
    this.compare = compare;
    this.mechanism = mechanism;
    const { runtime } = compare.view;
    // After a panic anywhere on the runtime the handle is a fresh one: the model, the sentence
    // and the settings go to it again at the explorer's next render (which the explorer asks
    // for when the panic was not its own: view.js `#restarted`).
    this.engine = new Engine(runtime, {
      onRestart: () => {
        this.text = null;
        this.loaded = null;
      },
    });
    this.figure = make('div', 'compare-panel');
    this.figure.dataset.mechanism = mechanism;
    this.title = make('h3', 'compare-title');
    this.value = make('p', 'compare-value');
    const maps = make('div', 'maps compare-maps');
    this.figure.append(this.title, maps, this.value);
    container.append(this.figure);
    this.maps = new Maps(maps, this.engine, {
      hintId: 'maps-hint',
      onInteraction: () => compare.hovered(this),
      onResize: () => compare.view.changed({ notify: false }),
      onShowHead: () => {},
    });
    this.maps.build(1);
    this.text = null;
    this.loaded = null; // 'trained' | 'untrained' | 'minilm' once a model is in
    this.pending = null;
    /** The pretrained model's feed of this panel's handle (pretrained.js), while it draws. */
    this.feed = null;
  }

  /** Loads the panel's model (trained, untrained or pretrained, as the explorer's weights say). */
  load(weights, store) {
    if (this.loaded === weights || this.pending) return this.pending;
    this.feed?.stop();
    this.feed = null;
    if (weights === 'minilm') {
      // The pretrained model the explorer read, shared by every explorer of the page, with a
      // feed of its own for this panel's handle (pretrained.js); not read yet (the explorer's
      // load is in flight): the next render asks again.
      const model = store.pretrainedReady;
      if (!model) return null;
      const feed = model.feed();
      this.engine.call((ex) => feed.attach(ex));
      this.feed = feed;
      this.engine.call((ex) => ex.update({ mechanism: this.mechanism }));
      this.loaded = 'minilm';
      this.text = null;
      return null;
    }
    if (weights === 'untrained') {
      this.engine.call((ex) => ex.use_untrained());
      this.engine.call((ex) => ex.update({ mechanism: this.mechanism }));
      this.loaded = 'untrained';
      return null;
    }
    this.pending = store
      .fetch(this.mechanism)
      .then((buffer) => {
        this.engine.call((ex) => ex.load_model(new Uint8Array(buffer)));
        this.loaded = 'trained';
      })
      .catch((err) => {
        this.compare.view.messages.show('compare', messageOf(err));
        this.engine.call((ex) => ex.update({ mechanism: this.mechanism }));
        this.loaded = 'untrained';
      })
      .finally(() => {
        this.pending = null;
        this.compare.view.changed({ notify: false });
      });
    return this.pending;
  }

  /** Sends the sentence and the settings this panel follows, then draws its final map. */
  render(state, font) {
    const v = this.compare.view;
    const frame = this.engine.call((ex) => {
      if (this.text !== state.text) {
        if (this.feed) this.feed.setText(ex, state.text);
        else ex.set_text(state.text);
        this.text = state.text;
      }
      ex.set_theme(v.resolvedTheme());
      ex.set_shared_scale(!!state.shared_scale);
      return ex.update(followed(state, this.mechanism, v.frame?.settings, v.view?.parameters ?? []));
    });
    // The pretrained layer's vectors and weights, from the model's module, before the render
    // computes the panel's maps.
    this.feed?.prepare(this.engine);
    const view = frame.view;
    this.view = view;
    this.title.textContent = `${v.mechName(this.mechanism)} · ${view.stages.find((s) => s.id === view.final_stage)?.label ?? ''}`;
    this.maps.fit(view.tokens, view.keys);
    this.maps.size();
    this.engine.call((ex) => ex.render(this.maps.canvases(), font, [view.final_stage]));
    const stage = view.stages.find((s) => s.id === view.final_stage);
    this.maps.figures[0].caption.textContent = stage?.formula ?? '';
    this.maps.figures[0].canvas.setAttribute('aria-label', v.t('compare_aria', { name: v.mechName(this.mechanism), n: view.tokens }));
  }

  /** Highlights `cell` (or nothing) and shows this panel's value there. */
  paint(cell, colors) {
    const fits = cell && this.view && cell.row < this.view.tokens && cell.col < this.view.keys;
    this.maps.paint(fits ? cell : null, colors);
    if (!fits) {
      this.value.textContent = '';
      return;
    }
    const info = this.engine.call((ex) => ex.cell(cell.row, cell.col));
    const v = info?.values?.[this.view.final_stage];
    this.value.textContent = typeof v === 'number' ? `${info.query} → ${info.key}: ${fmt(v)}` : '';
  }

  destroy() {
    this.maps.destroy();
    this.feed?.stop();
    this.engine.stop();
    this.figure.remove();
  }
}

export class CompareView {
  view;
  #container;
  #panels = [];
  #cell = null;

  constructor(view, container) {
    this.view = view;
    this.#container = container;
  }

  /** The mechanisms compared: the engine's choice for comparison, the shown one among them. */
  #mechanisms() {
    const marked = this.view.runtime.mechanisms.filter((m) => m.compare).map((m) => m.name);
    const shown = this.view.state.mechanism;
    return marked.includes(shown) ? marked : [...marked.slice(0, 2), shown];
  }

  /** Draws every panel (making or dropping panels when the list changed). */
  render(font) {
    const want = this.#mechanisms();
    if (want.join() !== this.#panels.map((p) => p.mechanism).join()) {
      for (const p of this.#panels) p.destroy();
      this.#panels = want.map((m) => new Panel(this, m, this.#container));
      this.#container.dataset.count = String(want.length);
    }
    const { state } = this.view;
    const pending = this.#panels.map((p) => p.load(state.weights, this.view.weightsStore)).filter(Boolean);
    if (pending.length) return;
    for (const p of this.#panels) p.render(state, font);
    this.paint();
  }

  /** Whether a panel's model is still loading. */
  get pending() {
    const p = this.#panels.map((panel) => panel.pending).filter(Boolean);
    return p.length ? Promise.all(p) : null;
  }

  /** A panel's hovered or selected cell became the cell of every panel. */
  hovered(panel) {
    panel.maps.resolveHover();
    this.#cell = panel.maps.currentCell();
    this.paint();
  }

  /** Paints the shared cell on every panel. */
  paint() {
    const colors = this.view.highlightColors();
    for (const p of this.#panels) p.paint(this.#cell, colors);
  }

  /** Drops every panel (leaving the compare view). */
  clear() {
    for (const p of this.#panels) p.destroy();
    this.#panels = [];
    this.#cell = null;
  }
}
