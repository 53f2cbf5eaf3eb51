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
import { placeMaps } from './layout.js';
import { messageOf } from './messages.js';
import { KEYS } from './settings.generated.js';

/**
 * The settings a panel of `mechanism` follows (the schema's `compare`): every panel follows
 * those marked `every` (the causal mask); the shown mechanism's panel also those marked `shown`
 * that it uses (the heads, and each parameter the view's `parameters` name), but a value that
 * is the learned one (the frame's flag says so: the trained gate, λ) stays the panel's own.
 */
/** Past this many tokens the panels are not matched (each head's map is copied and compared). */
const MATCH_MAX_TOKENS = 256;

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
        this.matchedTo = null;
      },
    });
    this.figure = make('div', 'compare-panel');
    this.figure.dataset.mechanism = mechanism;
    this.title = make('h3', 'compare-title');
    this.note = make('p', 'compare-note muted');
    this.value = make('p', 'compare-value');
    const maps = make('div', 'maps compare-maps');
    this.figure.append(this.title, this.note, maps, this.value);
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
    /** The head matched to the explorer's (`{ head, cosines }`), the reference it was matched
     * to (its key), and the panel's stage it compared. */
    this.match = null;
    this.matchedTo = null;
    this.matchStage = '';
    /** The pretrained model's feed of this panel's handle (pretrained.js), while it draws. */
    this.feed = null;
  }

  /** Loads the panel's model (trained, untrained or pretrained, as the explorer's weights say). */
  load(weights, store) {
    if (this.loaded === weights || this.pending) return this.pending;
    this.matchedTo = null;
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
        this.matchedTo = null;
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

  /**
   * Sends the sentence and the settings this panel follows, then draws its final map. Another
   * mechanism's model is shown at its head whose first map (A, or A1) is closest to the
   * explorer's shown head's (`reference`, `{ values, stage, key }`): their head numbers mean
   * nothing across separately trained models.
   */
  render(state, font, reference) {
    const v = this.compare.view;
    let frame = this.engine.call((ex) => {
      if (this.text !== state.text) {
        if (this.feed) this.feed.setText(ex, state.text);
        else ex.set_text(state.text);
        this.text = state.text;
      }
      ex.set_theme(v.resolvedTheme());
      ex.set_shared_scale(!!state.shared_scale);
      // The shown mechanism's panel is the explorer's model: at its shown head too.
      const patch = followed(state, this.mechanism, v.frame?.settings, v.view?.parameters ?? []);
      if (this.mechanism === state.mechanism) patch.head = state.head;
      return ex.update(patch);
    });
    // The pretrained layer's vectors and weights, from the model's module, before the render
    // computes the panel's maps (and before its heads are matched).
    this.feed?.prepare(this.engine);
    const own = this.mechanism === state.mechanism;
    if (!own && reference && reference.key !== this.matchedTo) {
      const first = frame.view.stages[0]?.id ?? '';
      this.match = this.engine.call((ex) => ex.closest_head(reference.values, first));
      this.matchedTo = reference.key;
      this.matchStage = frame.view.stages[0]?.label ?? '';
      if (this.match) frame = this.engine.call((ex) => ex.update({ head: this.match.head }));
    }
    if (own || !reference) this.match = null;
    const view = frame.view;
    this.view = view;
    const finalLabel = view.stages.find((s) => s.id === view.final_stage)?.label ?? '';
    const head = frame.settings.head;
    this.title.textContent = `${v.mechName(this.mechanism)} · ${finalLabel} · ${v.t('head_option', { n: head, total: view.heads })}`;
    this.title.title = this.title.textContent;
    this.note.textContent = this.match
      ? v.t('compare_matched', { own: this.matchStage, ref: reference.stage, cos: fmt(this.match.cosines[head - 1], 2) })
      : own
        ? v.t('compare_shown')
        : v.t('compare_unmatched');
    this.maps.fit(view.tokens, view.keys);
    // Each panel's map by its own width (the three panels share a row).
    const grid = placeMaps(this.engine, this.maps, { width: this.maps.width(), height: Infinity, base: { stages: [view.final_stage] } });
    this.engine.call((ex) => ex.render(this.maps.canvases(), grid.font_px, [view.final_stage]));
    if (grid.legend) this.engine.call((ex) => ex.render_legend(this.maps.legend));
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
    const reference = this.#reference();
    for (const p of this.#panels) p.render(state, font, reference);
    this.paint();
  }

  /**
   * The explorer's shown head's first map (A, or A1), which the other models' heads are
   * matched against: `{ values, stage, key }` (`key` changes when the map does), or null past
   * MATCH_MAX_TOKENS (the panels then show their first head, and say so).
   */
  #reference() {
    const v = this.view;
    const stage = v.view?.stages[0];
    if (!stage || (v.view?.tokens ?? 0) > MATCH_MAX_TOKENS) return null;
    const values = v.engine.call((ex) => ex.map_values(stage.id));
    if (!values?.length) return null;
    let sum = 0;
    for (let i = 0; i < values.length; i += 1) sum += values[i] * ((i % 97) + 1);
    return { values, stage: stage.label, key: `${values.length}:${sum}` };
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
