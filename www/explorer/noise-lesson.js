// The noise lesson on the real model (docs/LESSON.md, "The noise lesson on the real model"): a
// mode of the page (`?lesson=noise`). A typed text, its word pieces (click one to make it the
// query or the target; the engine proposes a pronoun's antecedent or a retrieval answer), and
// for every layer and head of all-MiniLM-L6-v2 where the query's row goes (the target, [CLS]/
// [SEP], the rest) before and after a difference, in one chart whose bars open their maps in
// the explorer; the means over the heads beside the paper's. The model runs in its own wasm
// module (web-pretrained/, `Encoder`: the forward pass in pieces, then `noise_lesson`, the
// function behind `diffattn noise`); nothing here computes a figure or names a mechanism.

import { make, tokenNode } from './dom.js';
import { messageOf } from './messages.js';
import { headBars, noiseChart } from './noise-chart.js';
import { NOISE_EXAMPLES, noiseText } from './noise-text.js';

/** The address key that opens a lesson, and this lesson's value. */
export const NOISE_LESSON = 'noise';

/** Milliseconds of the model's work per frame, and the typing pause before a new text runs. */
const WORK_MS = 12;
const TYPING_MS = 250;

const MARKUP = `
<section class="lesson noise" aria-labelledby="noise-title">
  <h2 id="noise-title"></h2>
  <p class="lesson-intro" id="noise-intro"></p>
  <p class="lesson-status" id="noise-status" role="status"></p>
  <div class="noise-top">
    <div class="lesson-input">
      <label for="noise-text" id="noise-text-label"></label>
      <textarea id="noise-text" rows="2" spellcheck="false"></textarea>
      <div class="lesson-buttons"><button type="button" id="noise-pronoun"></button> <button type="button" id="noise-retrieval"></button></div>
    </div>
    <div class="noise-pieces">
      <p class="lesson-small" id="noise-tokens-label"></p>
      <div class="noise-pick" role="group"><label><input type="radio" name="noise-pick" value="query" id="noise-pick-query"> <span id="noise-pick-query-label"></span></label> <label><input type="radio" name="noise-pick" value="target" id="noise-pick-target" checked> <span id="noise-pick-target-label"></span></label></div>
      <div class="lesson-tokens" id="noise-tokens"></div>
      <p class="noise-picked" id="noise-picked"></p>
    </div>
  </div>
  <h3 id="noise-chart-title"></h3>
  <p class="lesson-small" id="noise-chart-caption"></p>
  <p class="noise-legend" id="noise-legend"></p>
  <div id="noise-chart"></div>
  <p class="lesson-small" id="noise-search"></p>
  <div class="noise-means">
    <h3 id="noise-means-title"></h3>
    <table id="noise-means"></table>
    <p class="lesson-small" id="noise-negative"></p>
    <p class="lesson-small" id="noise-paper"></p>
  </div>
  <p class="lesson-small" id="noise-honest"></p>
</section>`;

/** A figure to two places. */
const f2 = (v) => (Math.abs(v) < 0.005 ? 0 : v).toFixed(2);

export class NoiseLesson {
  #el = {};
  #encoder = null;
  #model = null;
  #runtime = null;
  #onChange;
  #explorerHref;
  #generation = 0;
  #pending = null;
  #timer = null;
  /** The word pieces of the text run last, and its figures (`Encoder.noise_lesson`), or null. */
  tokens = [];
  lesson = null;
  /** The model module's version, once loaded. */
  version = '';
  /** The engine's proposal for the text (`{ query, target }`), or null. */
  proposed = null;
  /** `{ lang, text, query, target }`: query and target from 0, null while proposed. */
  state;

  /**
   * `root`: a shadow root or element; `model`: a promise of the model's runtime (weights.js
   * `pretrained`: `{ glue, model }`) whose progress `onProgress` would follow, given as
   * `load(onProgress)`; `state`; `onChange()` after a person's change; `explorerHref(params)`
   * the explorer's address with `params`.
   */
  constructor(root, { load, state, onChange, explorerHref }) {
    this.load = load;
    this.#onChange = onChange;
    this.#explorerHref = explorerHref;
    this.state = { lang: 'en', text: NOISE_EXAMPLES.pronoun, query: null, target: null, ...state };
    const host = make('div', 'lesson-host');
    host.innerHTML = MARKUP; // constant markup, no user text
    root.append(host);
    for (const node of host.querySelectorAll('[id]')) this.#el[node.id.replace(/^noise-/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase())] = node;
    this.#el.text.value = this.state.text;
    this.#wire();
    this.translate();
  }

  #say(key, params) {
    return noiseText(this.state.lang, key, params);
  }

  /** Loads the model (once for the page), then runs the text. */
  async start() {
    this.#status(this.#say('loading', { mb: '0.0' }));
    try {
      const runtime = await this.load((loaded) => this.#status(this.#say('loading', { mb: (loaded / 1e6).toFixed(1) })));
      this.#runtime = runtime;
      this.#model = runtime.model;
      this.version = runtime.glue.version?.() ?? '';
      this.#encoder = new runtime.glue.Encoder();
    } catch (err) {
      this.#status(this.#say('failed', { msg: messageOf(err) }));
      return;
    }
    this.#status('');
    await this.#run();
  }

  /** Resolves once the text in the box has run and been drawn. */
  async settled() {
    while (this.#timer !== null || this.#pending) await (this.#pending ?? new Promise((r) => setTimeout(r, TYPING_MS)));
  }

  /** Changes the state (`{ lang?, text?, query?, target? }`) and draws again. */
  set(patch) {
    Object.assign(this.state, patch);
    if ('text' in patch) this.#el.text.value = this.state.text;
    if ('lang' in patch) this.translate();
    if ('text' in patch || 'query' in patch || 'target' in patch) this.#run();
    else this.#draw();
  }

  #wire() {
    const e = this.#el;
    e.text.addEventListener('input', () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.state.text = e.text.value;
        this.state.query = this.state.target = null;
        this.#run();
        this.#onChange?.();
      }, TYPING_MS);
    });
    for (const [id, key] of [
      ['pronoun', 'pronoun'],
      ['retrieval', 'retrieval'],
    ]) {
      e[id].addEventListener('click', () => {
        this.set({ text: NOISE_EXAMPLES[key], query: null, target: null });
        this.#onChange?.();
      });
    }
    for (const radio of [e.pickQuery, e.pickTarget]) radio.addEventListener('change', () => this.#draw());
    e.tokens.addEventListener('click', (event) => {
      const chip = event.target.closest?.('[data-index]');
      if (!chip || !this.lesson) return;
      const i = Number(chip.dataset.index);
      const which = e.pickQuery.checked ? 'query' : 'target';
      if (which === 'target' && this.lesson.sinks.includes(i)) {
        e.picked.textContent = this.#say('sink_target');
        return;
      }
      const next = { query: this.lesson.query, target: this.lesson.target, [which]: i };
      if (next.query === next.target) return;
      this.set(next);
      this.#onChange?.();
    });
  }

  /** Runs the text through the model in pieces between frames, then asks for the figures. */
  #run() {
    if (!this.#encoder) return Promise.resolve();
    const generation = ++this.#generation;
    const run = (async () => {
      try {
        await this.#compute(generation);
      } catch (err) {
        // A panic in the model's module: its instance is thrown away and made afresh
        // (pretrained.js `reset`), and this lesson takes a fresh encoder on it.
        this.lesson = null;
        this.#status(messageOf(err));
        if (err instanceof WebAssembly.RuntimeError) {
          try {
            this.#runtime.reset(err);
            this.#encoder = new this.#runtime.glue.Encoder();
          } catch {
            this.#encoder = null;
          }
        }
        this.#draw();
      }
    })();
    const done = run.finally(() => {
      if (this.#pending === done) this.#pending = null;
    });
    this.#pending = done;
    return done;
  }

  /** The text through the model, then the figures, unless a newer run began meanwhile. */
  async #compute(generation) {
    const info = this.#encoder.set_text(this.state.text);
    this.tokens = info.tokens;
    this.#status(this.#say('computing'));
    const layers = this.#model.layers;
    while (!this.#encoder.work(layers - 1, WORK_MS)) {
      await new Promise((r) => requestAnimationFrame(r));
      if (generation !== this.#generation) return;
    }
    this.#status('');
    const proposed = this.#encoder.propose() ?? null;
    this.proposed = proposed;
    if (generation !== this.#generation) return;
    const query = this.state.query ?? proposed?.query ?? null;
    const target = this.state.target ?? proposed?.target ?? null;
    const inside = (i) => i !== null && i < this.tokens.length;
    this.lesson = inside(query) && inside(target) ? (this.#encoder.noise_lesson(query, target) ?? null) : null;
    this.#draw();
  }

  #status(text) {
    this.#el.status.textContent = text;
    this.#el.status.hidden = !text;
  }

  /** Every string in the state's language. */
  translate() {
    const e = this.#el;
    e.title.textContent = this.#say('title');
    e.intro.textContent = this.#say('intro');
    e.textLabel.textContent = this.#say('text');
    e.pronoun.textContent = this.#say('example_pronoun');
    e.retrieval.textContent = this.#say('example_retrieval');
    e.pickQueryLabel.textContent = this.#say('pick_query');
    e.pickTargetLabel.textContent = this.#say('pick_target');
    e.meansTitle.textContent = this.#say('means_title');
    e.paper.textContent = this.#say('paper');
    e.honest.textContent = this.#say('honest');
    e.negative.textContent = this.#say('negative');
    const order = this.#say('bars_order', { a: this.#say('bar_before'), b: this.#say('bar_difference'), c: this.#say('bar_shift') });
    e.legend.replaceChildren(...['target', 'sinks', 'other'].flatMap((k) => [make('span', `swatch ${k}`), ` ${this.#say(`legend_${k}`)}  `]), order);
    this.#draw();
  }

  /** The explorer's address for head `h`'s bar `kind`: the engine's settings for its maps, on this model and text. */
  href(h, kind) {
    return this.#explorerHref({ weights: 'minilm', text: this.state.text, lang: this.state.lang, ...h.links[kind] });
  }

  #tip(h, kind) {
    const at = { l: h.layer + 1, h: h.head + 1 };
    const figures = (s) => ({ t: f2(s.target), ta: f2(s.target_abs), s: f2(s.sinks), sa: f2(s.sinks_abs), o: f2(s.other), oa: f2(s.other_abs) });
    if (kind === 'difference') {
      if (!h.difference) return this.#say('tip_none', at);
      return this.#say('tip_partner', { ...at, lam: h.difference.lambda.toFixed(2), p: h.difference.head + 1, ...figures(h.difference.shares) });
    }
    return this.#say('tip', { ...at, what: this.#say(kind === 'before' ? 'bar_before' : 'bar_shift'), ...figures(kind === 'before' ? h.before : h.shift) });
  }

  /** The head the lesson points at: the one that puts the most of the query's row on the target. */
  #best() {
    const withPartner = this.lesson.heads.filter((h) => h.difference);
    const pool = withPartner.length ? withPartner : this.lesson.heads;
    return pool.reduce((a, b) => (b.before.target > a.before.target ? b : a));
  }

  #draw() {
    const e = this.#el;
    const lesson = this.lesson;
    const q = lesson?.query ?? -1;
    const t = lesson?.target ?? -1;
    const sinks = lesson?.sinks ?? [];
    e.tokensLabel.textContent = this.#say('tokens', { which: this.#say(e.pickQuery.checked ? 'pick_query' : 'pick_target') });
    e.tokens.replaceChildren(
      ...this.tokens.map((tok, i) => {
        const role = i === q ? 'query' : i === t ? 'target' : sinks.includes(i) ? 'sink' : '';
        const chip = make('button', `lesson-token noise-token ${role}`);
        chip.type = 'button';
        chip.dataset.index = String(i);
        if (role) chip.dataset.role = role;
        chip.append(tokenNode(tok));
        return chip;
      }),
    );
    if (!lesson) {
      e.picked.textContent = this.tokens.length ? this.#say('no_proposal') : '';
      for (const k of ['chart', 'means']) e[k].replaceChildren();
      for (const k of ['chartTitle', 'chartCaption', 'search']) e[k].textContent = '';
      return;
    }
    const chosen = this.state.query !== null || this.state.target !== null;
    const proposedKind = lesson && this.proposed && !chosen ? (this.tokens[this.proposed.query] === '?' ? 'proposed_retrieval' : 'proposed_pronoun') : 'chosen';
    e.picked.textContent = `${this.#say('picked', { query: this.tokens[q], target: this.tokens[t] })}: ${this.#say(proposedKind)}`;
    e.chartTitle.textContent = this.#say('chart_title', { query: this.tokens[q] });
    e.chartCaption.textContent = this.#say('chart_caption', { target: this.tokens[t] });
    const best = this.#best();
    const width = Math.max(340, Math.min(900, e.chart.clientWidth || 760));
    e.chart.replaceChildren(
      noiseChart(lesson, { text: (k, p) => this.#say(k, p), tip: (h, kind) => this.#tip(h, kind), href: (h, kind) => this.href(h, kind), mark: best }, width),
    );
    const d = best.difference;
    const found = d ? this.#say('search_found', { l: best.layer + 1, h: best.head + 1, lam: d.lambda.toFixed(2), p: d.head + 1, t: f2(d.shares.target), t0: f2(best.before.target), s: f2(d.shares.sinks), s0: f2(best.before.sinks) }) : '';
    e.search.textContent = this.#say('search', { found });
    // The means: one row per map, target / sinks / rest, signed with the share of |values|.
    const head = make('tr');
    head.append(make('th'), ...['means_target', 'means_sinks', 'means_other'].map((k) => make('th', '', this.#say(k))));
    const rows = [
      ['means_row_before', lesson.mean_before, 'before'],
      ['means_row_difference', lesson.mean_difference, 'difference'],
      ['means_row_shift', lesson.mean_shift, 'shift'],
    ].map(([label, s, kind]) => {
      const tr = make('tr');
      tr.dataset.kind = kind;
      tr.append(make('th', '', this.#say(label)), ...[['target', 'target_abs'], ['sinks', 'sinks_abs'], ['other', 'other_abs']].map(([a, b]) => make('td', '', `${f2(s[a])} (${f2(s[b])})`)));
      return tr;
    });
    e.means.replaceChildren(head, ...rows);
    const negative = lesson.heads.some((h) => headBars(h).some(([, s]) => s && (s.target < 0 || s.sinks < 0 || s.other < 0)));
    e.negative.hidden = !negative;
  }
}
