// The retrieval lesson (docs/LESSON.md): a mode of the page (`?lesson=retrieval`). An editable
// context and question, every retrieval model's answer, a bar chart of attention on the
// answer against noise for every model side by side, one slider per knob the engine offers
// (a layer's shift or λ), and the maps of the chosen model's chosen layer with the answer and
// the facts marked on both axes; "Every layer and head" mounts the explorer's element in its
// model view on the chosen model's multi-layer spec of the text (`Lesson.spec_json`), the
// package's element imported on first use (`explorer`, lesson-page.js). The numbers come from
// the wasm `Lesson` handle (web-lesson/src/lesson.rs), which calls the same `ask` and measure
// as `diffattn retrieve`.
// No mechanism is named here: the models, their layers and knobs are what the engine says.

import { barChart } from './lesson-bars.js';
import { EXTRA_FACTS, LESSON_TEXT, lessonText } from './lesson-text.js';
import { make, setOptions, tokenNode } from './dom.js';
import { messageOf } from './messages.js';

/** The address key that opens the lesson, and its one value. */
export const LESSON_KEY = 'lesson';
export const LESSON_NAME = 'retrieval';

const MARKUP = `
<section class="lesson" aria-labelledby="lesson-title">
  <h2 id="lesson-title"></h2>
  <p class="lesson-intro" id="lesson-intro"></p>
  <p class="lesson-status" id="lesson-status" role="status"></p>
  <div class="lesson-top">
    <div class="lesson-input">
      <label for="lesson-context" id="lesson-context-label"></label>
      <textarea id="lesson-context" rows="5" spellcheck="false"></textarea>
      <label for="lesson-question" id="lesson-question-label"></label>
      <input id="lesson-question" type="text" spellcheck="false">
      <div class="lesson-buttons"><button type="button" id="lesson-add"></button> <button type="button" id="lesson-reset"></button></div>
      <p class="lesson-small" id="lesson-tokens-label"></p>
      <div class="lesson-tokens" id="lesson-tokens"></div>
    </div>
    <div class="lesson-results">
      <h3 id="lesson-bars-title"></h3>
      <div id="lesson-bars"></div>
      <p class="lesson-small" id="lesson-negative" hidden></p>
      <ul class="lesson-answers" id="lesson-answers"></ul>
      <div class="lesson-knobs" id="lesson-knobs"></div>
      <p class="lesson-small" id="lesson-honest"></p>
    </div>
  </div>
  <div class="lesson-map-controls">
    <label><span id="lesson-model-label"></span> <select id="lesson-model"></select></label>
    <label id="lesson-layer-box"><span id="lesson-layer-label"></span> <select id="lesson-layer"></select></label>
    <button type="button" id="lesson-every"></button>
  </div>
  <p class="lesson-small" id="lesson-caption"></p>
  <div class="lesson-maps" id="lesson-maps"></div>
  <p class="lesson-small" id="lesson-every-note" hidden></p>
  <div class="lesson-explorer" id="lesson-explorer"></div>
</section>`;

/** Reads `text` back into context and question: the question is the last `What … ?`. */
export function splitText(text) {
  const m = /(what\s[^?]*\?)\s*$/i.exec(text ?? '');
  if (!m) return { context: String(text ?? ''), question: '' };
  return { context: text.slice(0, m.index).trim(), question: m[1] };
}

export class RetrievalLesson {
  #root;
  #el = {};
  #lesson = null;
  #models = [];
  #asked = null;
  #frame = 0;
  #onChange;
  #explorer;
  /** The model the explorer's element was last opened on, or null. */
  #everyModel = null;
  #facts = 0;
  /**
   * The lesson's state: `{ lang, text, mechanism, layer, knobs }` (layer from 1, 0 = the last;
   * knobs: the ones moved away from their trained value, `[{ model, layer, name, value }]`).
   */
  state;

  /**
   * `root`: a shadow root or element; `glue`: the wasm-bindgen module (its `Lesson`);
   * `weightsBase`: the URL of `weights/retrieval/`; `state`: `{ lang, text?, mechanism?,
   * layer?, knobs? }`; `onChange()` after every change a person makes; `explorer()` resolves
   * to the tag of the explorer's element, registered on its first call.
   */
  constructor(root, { glue, weightsBase, state, onChange, explorer }) {
    this.#root = root;
    this.#onChange = onChange;
    this.#explorer = explorer;
    this.glue = glue;
    this.weightsBase = new URL(weightsBase);
    this.state = { lang: 'en', text: `${LESSON_TEXT.context} ${LESSON_TEXT.question}`, mechanism: '', layer: 0, knobs: [], ...state };
    const host = make('div', 'lesson-host');
    host.innerHTML = MARKUP; // constant markup, no user text
    root.append(host);
    for (const node of host.querySelectorAll('[id]')) this.#el[node.id.replace(/^lesson-/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase())] = node;
    const { context, question } = splitText(this.state.text);
    this.#el.context.value = context;
    this.#el.question.value = question;
    this.#wire();
    this.translate();
  }

  /** Loads every model of the manifest, then draws. */
  async start() {
    this.#status(lessonText(this.state.lang, 'loading'));
    try {
      const manifest = await fetch(new URL('manifest.json', this.weightsBase)).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`manifest.json: HTTP ${r.status}`))));
      const files = await Promise.all(
        manifest.models.map(async (m) => {
          const res = await fetch(new URL(m.file, this.weightsBase));
          if (!res.ok) throw new Error(`${m.file}: HTTP ${res.status}`);
          return [m.mechanism, new Uint8Array(await res.arrayBuffer())];
        }),
      );
      this.#lesson = new this.glue.Lesson();
      for (const [name, bytes] of files) this.#lesson.load(name, bytes);
      if (globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches) this.#lesson.set_theme('dark');
      this.#applyKnobs(this.state.knobs);
      if (!this.#models.some((m) => m.name === this.state.mechanism)) this.state.mechanism = (this.#models.find((m) => m.knobs.length) ?? this.#models[0]).name;
      this.#status('');
      this.#fillModels();
      this.renderNow();
    } catch (err) {
      this.#status(lessonText(this.state.lang, 'failed', { msg: messageOf(err) }));
    }
  }

  /** The last answers (see `AskedJs` in web-lesson/src/lesson.rs), or null. */
  get asked() {
    return this.#asked;
  }

  /** The models (see `ModelInfoJs`). */
  get models() {
    return this.#models;
  }

  /** The handle, for tests. */
  get handle() {
    return this.#lesson;
  }

  /** The explorer's element of "Every layer and head", once mounted, else null. */
  get explorerElement() {
    return this.#el.explorer.firstElementChild;
  }

  /**
   * "Every layer and head": the explorer's element in its model view, mounted below the maps
   * on first use, given the chosen model's multi-layer spec of the text (every layer's input,
   * weights and mechanism with the knobs as set; `Lesson.spec_json`). Resolves once it is
   * drawn, to the element.
   */
  async openEveryLayer() {
    const lt = (k, p) => lessonText(this.state.lang, k, p);
    const e = this.#el;
    const { model } = this.#chosen();
    let spec;
    try {
      this.#lesson.set_text(this.state.text);
      spec = this.#lesson.spec_json(model.name);
    } catch (err) {
      this.#status(messageOf(err));
      return null;
    }
    e.every.disabled = true;
    e.everyNote.hidden = false;
    e.everyNote.textContent = lt('every_layer_loading');
    try {
      const tag = await this.#explorer();
      let el = this.explorerElement;
      if (!el) {
        el = document.createElement(tag);
        el.setAttribute('view', 'model');
        el.setAttribute('text', ''); // no sentence drawn before the spec
        el.setAttribute('lang', this.state.lang);
        e.explorer.append(el);
      }
      await el.loadSpec(spec, `retrieval-${model.name}.json`);
      this.#everyModel = model.name;
      this.#everyNote();
      return el;
    } catch (err) {
      e.everyNote.textContent = lt('every_layer_failed', { msg: messageOf(err) });
      return null;
    } finally {
      e.every.disabled = false;
    }
  }

  #everyNote() {
    if (this.#everyModel === null) return;
    const n = this.#models.find((m) => m.name === this.#everyModel)?.layers.length ?? 0;
    this.#el.everyNote.textContent = lessonText(this.state.lang, 'every_layer_note', { model: this.#everyModel, layers: n });
  }

  /** Resolves after the render in flight (if any) is done. */
  settled() {
    return new Promise((resolve) => {
      const wait = () => (this.#frame ? requestAnimationFrame(wait) : resolve());
      wait();
    });
  }

  /** Changes the state (`{ lang?, text?, mechanism?, layer? }`) and draws again. */
  set(patch) {
    Object.assign(this.state, patch);
    if ('text' in patch) {
      const { context, question } = splitText(this.state.text);
      this.#el.context.value = context;
      this.#el.question.value = question;
    }
    if ('lang' in patch) this.translate();
    this.#schedule();
  }

  #wire() {
    const e = this.#el;
    const fromBoxes = () => {
      this.state.text = `${e.context.value.trim()} ${e.question.value.trim()}`.trim();
      this.#changed();
    };
    e.context.addEventListener('input', fromBoxes);
    e.question.addEventListener('input', fromBoxes);
    e.every.addEventListener('click', () => this.openEveryLayer());
    e.add.addEventListener('click', () => {
      const fact = EXTRA_FACTS[this.#facts % EXTRA_FACTS.length];
      this.#facts += 1;
      e.context.value = `${e.context.value.trim()} ${fact}`.trim();
      fromBoxes();
    });
    e.reset.addEventListener('click', () => {
      e.context.value = LESSON_TEXT.context;
      e.question.value = LESSON_TEXT.question;
      this.#facts = 0;
      for (const m of this.#models) this.#lesson?.reset_knobs(m.name);
      this.#syncKnobs();
      fromBoxes();
    });
    e.model.addEventListener('change', () => {
      this.state.mechanism = e.model.value;
      this.#changed();
    });
    e.layer.addEventListener('change', () => {
      this.state.layer = Number(e.layer.value);
      this.#changed();
    });
  }

  /**
   * Sets the knobs a saved state names (an address). The engine clamps each value to the knob's
   * range (a shift to a whole number); a knob no model has is left out of the state.
   */
  #applyKnobs(knobs) {
    for (const k of knobs ?? []) {
      try {
        this.#lesson.set_knob(k.model, k.layer, k.name, k.value);
      } catch {
        // An old or hand-edited address: that model or knob does not exist; nothing to set.
      }
    }
    this.#syncKnobs();
  }

  /** The models' knobs from the engine, and `state.knobs` from them (the moved ones). */
  #syncKnobs() {
    this.#models = this.#lesson?.models() ?? [];
    this.state.knobs = this.#models.flatMap((m) => m.knobs.filter((k) => k.value !== k.trained).map((k) => ({ model: m.name, layer: k.layer, name: k.name, value: k.value })));
  }

  #changed() {
    this.#schedule();
    this.#onChange?.();
  }

  #schedule() {
    if (this.#frame || !this.#lesson) return;
    this.#frame = requestAnimationFrame(() => {
      this.renderNow();
      this.#frame = 0;
    });
  }

  #status(text) {
    this.#el.status.textContent = text;
    this.#el.status.hidden = !text;
  }

  /** Every string in the state's language. */
  translate() {
    const lt = (k, p) => lessonText(this.state.lang, k, p);
    const e = this.#el;
    e.title.textContent = lt('title');
    e.intro.textContent = lt('intro');
    e.contextLabel.textContent = lt('context');
    e.questionLabel.textContent = lt('question');
    e.add.textContent = lt('add_fact');
    e.reset.textContent = lt('reset');
    e.tokensLabel.textContent = lt('tokens');
    e.modelLabel.textContent = lt('model');
    e.layerLabel.textContent = lt('layer');
    e.honest.textContent = lt('honest');
    this.#everyNote();
    this.explorerElement?.setAttribute('lang', this.state.lang);
    if (this.#lesson) this.#schedule();
  }

  #fillModels() {
    setOptions(this.#el.model, this.#models.map((m) => ({ value: m.name, label: m.name })));
    this.#el.model.value = this.state.mechanism;
  }

  /** The chosen model and its layer (from 1). */
  #chosen() {
    const model = this.#models.find((m) => m.name === this.state.mechanism) ?? this.#models[0];
    const n = model.layers.length;
    const layer = this.state.layer >= 1 && this.state.layer <= n ? this.state.layer : n;
    return { model, layer };
  }

  /** Asks every model and draws everything now. */
  renderNow() {
    if (!this.#lesson) return;
    const lt = (k, p) => lessonText(this.state.lang, k, p);
    const e = this.#el;
    const { model, layer } = this.#chosen();
    e.every.textContent = lt('every_layer', { model: model.name });
    try {
      this.#lesson.set_text(this.state.text);
      this.#asked = this.#lesson.ask();
    } catch (err) {
      this.#status(messageOf(err));
      return;
    }
    const asked = this.#asked;
    this.#status(asked.question ? '' : lt('no_question'));
    // Tokens, marked by role.
    e.tokens.replaceChildren(
      ...asked.tokens.map((tok, i) => {
        const chip = make('span', `lesson-token ${asked.roles[i]}`);
        chip.dataset.index = String(i);
        chip.dataset.role = asked.roles[i];
        chip.append(tokenNode(tok));
        return chip;
      }),
    );
    // The layer control, only when the model has more than one layer.
    const n = model.layers.length;
    e.layerBox.hidden = n < 2;
    setOptions(e.layer, model.layers.map((l, i) => ({ value: String(i + 1), label: `${i + 1} · ${l.mechanism} (${l.heads})` })));
    e.layer.value = String(layer);
    // Bars at the chosen layer (the retrieving one, the last, by default).
    e.barsTitle.textContent = lt('bars_title', { layer });
    const groups = asked.models.filter((m) => m.layers).map((m) => ({ name: m.name, ...m.layers[Math.min(layer, m.layers.length) - 1] }));
    const width = Math.max(280, Math.min(560, e.bars.clientWidth || 480));
    e.bars.replaceChildren(groups.length ? barChart(groups, { answer: lt('bar_answer'), noise: lt('bar_noise'), abs: lt('bar_abs') }, width) : '');
    // A share below 0 (a difference map's): what it means, for the models that have one.
    const negative = groups.filter((g) => g.answer < 0 || g.noise < 0).map((g) => g.name);
    e.negative.hidden = negative.length === 0;
    e.negative.textContent = negative.length ? lt('negative_share', { models: negative.join(', ') }) : '';
    // Answers.
    e.answers.replaceChildren(
      ...asked.models.map((m) => {
        const li = make('li', 'lesson-answer', lt('answers', { model: m.name, answer: m.answer, p: (m.probability * 100).toFixed(1) }));
        li.dataset.model = m.name;
        li.dataset.answer = m.answer;
        if (m.unknown_keys.length) li.append(make('span', 'lesson-warning', ` ${lt('unknown_keys', { keys: m.unknown_keys.join(', ') })}`));
        return li;
      }),
      make('li', 'lesson-expected', asked.expected !== null ? lt('expected', { n: asked.expected }) : asked.question ? lt('no_answer_in_context') : ''),
    );
    this.#drawKnobs();
    // Maps of the chosen model's layer.
    const info = model.layers[layer - 1];
    e.caption.textContent = lt('maps_caption', { layer, formula: info.formula });
    const canvases = this.#canvases(info.heads);
    const dpr = globalThis.devicePixelRatio || 1;
    try {
      this.marks = this.#lesson.render(model.name, layer, canvases, 11 * dpr, `${model.name} · ${info.stage}`);
    } catch (err) {
      this.#status(messageOf(err));
    }
  }

  #canvases(heads) {
    const box = this.#el.maps;
    while (box.children.length > heads) box.lastChild.remove();
    while (box.children.length < heads) {
      const c = make('canvas', 'lesson-map');
      c.setAttribute('role', 'img');
      box.append(c);
    }
    const dpr = globalThis.devicePixelRatio || 1;
    const canvases = [...box.children];
    for (const c of canvases) {
      const w = Math.max(200, Math.floor(c.clientWidth || 360));
      c.width = Math.round(w * dpr);
      c.height = Math.round(w * dpr);
      c.setAttribute('aria-label', this.#el.caption.textContent);
    }
    return canvases;
  }

  #drawKnobs() {
    const lt = (k, p) => lessonText(this.state.lang, k, p);
    const rows = [];
    for (const m of this.#models) {
      for (const k of m.knobs) {
        const id = `knob-${m.name}-${k.layer}-${k.name}`;
        const row = make('div', 'lesson-knob');
        const label = make('label', '', lt('knob', { model: m.name, layer: k.layer, name: k.name === 'lambda' ? 'λ' : k.name }));
        label.htmlFor = id;
        const input = Object.assign(make('input'), { type: 'range', id, min: k.min, max: k.max, step: k.step, value: k.value });
        input.dataset.model = m.name;
        input.dataset.knob = k.name;
        const out = make('output', '', `${k.step < 1 ? k.value.toFixed(2) : k.value} (${lt('knob_trained', { v: k.step < 1 ? k.trained.toFixed(2) : k.trained })})`);
        const reset = make('button', 'quiet', lt('knob_reset'));
        reset.type = 'button';
        reset.disabled = k.value === k.trained;
        input.addEventListener('input', () => {
          this.#lesson.set_knob(m.name, k.layer, k.name, Number(input.value));
          this.#syncKnobs();
          this.#changed();
        });
        reset.addEventListener('click', () => {
          this.#lesson.set_knob(m.name, k.layer, k.name, k.trained);
          this.#syncKnobs();
          this.#changed();
        });
        row.append(label, input, out, reset);
        rows.push(row);
      }
    }
    // Keep the slider a person is dragging: replace only when the set of knobs changed.
    const box = this.#el.knobs;
    const active = this.#root.activeElement ?? document.activeElement;
    if (box.contains(active) && box.children.length === rows.length) {
      rows.forEach((row, i) => {
        const old = box.children[i];
        const [, , out, reset] = row.children;
        old.children[2].replaceWith(out);
        old.children[3].replaceWith(reset);
      });
      return;
    }
    box.replaceChildren(...rows);
  }
}
