// The explorer's controls: filling the menus from the engine's names, showing the state in
// every control, hiding what does not apply, and turning what a person does into calls of
// `emit(kind, payload)` on the component (`'set'` with `{ key: value }`, `'text'`, `'preset'`,
// `'weights'`, `'spec_file'`, `'spec_back'`, `'back_to_trained'`, `'lambda_back'`, `'export'`,
// `'present'`).

import { setOptions } from './dom.js';
import { fmt } from './format.js';
import { LANGUAGES, PRESETS } from './i18n.js';
import { RANGES, shiftModulo } from './state.js';

/** Every control's name, as the `controls` option lists them. */
export const CONTROL_NAMES = Object.freeze([
  'text',
  'presets',
  'spec',
  'weights',
  'mechanism',
  'heads',
  'head',
  'causal',
  'all_heads',
  'shared_scale',
  'views',
  'present',
  'shift',
  'difference',
  'fill',
  'renormalize',
  'gate',
  'tau',
  'window',
  'segment',
  'lambda',
  'export',
  'zoom',
  'readout',
  'howto',
]);

/** The controls an embedded page (`embed=1`) shows unless it names its own. */
export const EMBED_CONTROLS = Object.freeze(['text', 'heads', 'shift']);

/** The sliders that set one state key each, to the number they show. */
const SLIDERS = Object.freeze(['shift', 'alpha', 'beta', 'gamma', 'tau', 'window', 'segment', 'lambda']);

/** The menus filled from the engine's names, with the i18n key prefix of their labels. */
const MENUS = Object.freeze([
  ['difference', 'differences', 'diff'],
  ['fill', 'fills', 'fill'],
  ['renormalize', 'renormalizations', 'renorm'],
]);

export class Controls {
  #el;
  #names;
  #t;
  #emit;
  #headChoices = [];

  /** `el` are the explorer's elements by id, `names` the engine's `names()`. */
  constructor(el, names, { t, emit }) {
    this.#el = el;
    this.#names = names;
    this.#t = t;
    this.#emit = emit;
    for (const [key, range] of Object.entries(RANGES)) {
      Object.assign(el[key], { min: String(range.min), max: String(range.max), step: String(range.step) });
    }
    this.#wire();
  }

  /** Fills the menus in the current language. */
  fill() {
    const t = this.#t;
    const label = (prefix, name) => {
      const text = t(`${prefix}_${name}`);
      return text === `${prefix}_${name}` ? name : text;
    };
    setOptions(this.#el.mechanism, this.#names.mechanisms.map((m) => ({ value: m, label: label('mech', m) })));
    for (const [id, list, prefix] of MENUS) {
      setOptions(this.#el[id], this.#names[list].map((v) => ({ value: v, label: label(prefix, v) })));
    }
    setOptions(this.#el.presets, [
      { value: '', label: t('presets_choose') },
      ...LANGUAGES.map((lang) => ({
        group: t(`preset_group_${lang}`),
        label: PRESETS[lang].map((text, i) => ({ value: `${lang}:${i}`, label: text })),
      })),
    ]);
    this.#el.presets.value = '';
  }

  /** Shows `state` in every control; `view` is the engine's `view()` (or null before one). */
  sync(state, view) {
    const el = this.#el;
    if (el.sentence.value !== state.text) el.sentence.value = state.text;
    if (!el.weights.disabled) el.weights.value = state.weights;
    el.mechanism.value = state.mechanism;
    // A loaded layer runs only the mechanisms its weights fit (the engine's view says which).
    const choices = view?.mechanism_choices;
    for (const option of el.mechanism.options) option.disabled = !!choices && !choices.includes(option.value);
    el.causal.checked = state.causal;
    el.allHeads.checked = state.all_heads;
    el.sharedScale.checked = !!state.shared_scale;
    for (const key of SLIDERS) el[key].value = String(state[key]);
    for (const [id] of MENUS) el[id].value = state[id];
    this.#syncHeads(state, view);
    this.outputs(state, view);
  }

  /** The numbers beside the sliders. */
  outputs(state, view) {
    const el = this.#el;
    const n = view?.keys ?? 0;
    el.shiftOut.textContent =
      n > 0 ? this.#t('shift_value', { k: state.shift, m: shiftModulo(state.shift, n) }) : this.#t('shift_value_empty', { k: state.shift });
    el.shift.setAttribute('aria-valuetext', el.shiftOut.textContent);
    el.alphaOut.textContent = fmt(state.alpha, 1);
    el.betaOut.textContent = fmt(state.beta, 1);
    el.gammaOut.textContent = fmt(state.gamma, 1);
    el.tauOut.textContent = fmt(state.tau, 1);
    el.windowOut.textContent = String(state.window);
    el.segmentOut.textContent = String(state.segment);
    el.lambdaOut.textContent = fmt(state.lambda, 2);
  }

  #syncHeads(state, view) {
    const el = this.#el;
    this.#headChoices = view?.head_choices?.length ? view.head_choices : [state.heads];
    const choices = this.#headChoices;
    el.heads.min = '0';
    el.heads.max = String(Math.max(0, choices.length - 1));
    el.heads.value = String(Math.max(0, choices.indexOf(state.heads)));
    // A captured layer's weights fix its heads: the slider has one position and says so.
    const fixed = choices.length === 1 && !!view?.spec;
    el.heads.disabled = fixed;
    const width = view?.head_width;
    const shown = width ? `${state.heads} · d_h = ${width}` : String(state.heads);
    el.headsOut.textContent = fixed ? this.#t('heads_fixed', { shown }) : shown;
    el.heads.title = fixed ? this.#t('heads_fixed_title') : '';
    el.heads.setAttribute('aria-valuetext', this.#t('heads_valuetext', { h: state.heads }));
    const options = [];
    for (let h = 1; h <= state.heads; h++) options.push({ value: String(h), label: this.#t('head_option', { n: h, total: state.heads }) });
    setOptions(el.head, options);
    el.head.value = String(Math.min(state.head, state.heads));
  }

  /**
   * Shows a control when `allowed` names it (null: all) and, for a mechanism's own parameter,
   * when the mechanism takes it (`parameters`, from the engine's view); a group shows when one
   * of its controls does.
   */
  visibility(root, allowed, parameters) {
    for (const node of root.querySelectorAll('[data-control]')) {
      const name = node.dataset.control;
      const param = node.dataset.parameter;
      node.hidden = (allowed !== null && !allowed.has(name)) || (param !== undefined && !parameters.includes(param));
    }
    for (const group of root.querySelectorAll('fieldset.group')) {
      group.hidden = ![...group.querySelectorAll('[data-control]')].some((n) => !n.hidden);
    }
  }

  #wire() {
    const el = this.#el;
    const set = (patch) => this.#emit('set', patch);
    el.sentence.addEventListener('input', () => this.#emit('text', el.sentence.value));
    el.presets.addEventListener('change', () => {
      const [lang, i] = el.presets.value.split(':');
      const text = PRESETS[lang]?.[Number(i)];
      el.presets.value = '';
      if (text !== undefined) this.#emit('preset', text);
    });
    el.mechanism.addEventListener('change', () => set({ mechanism: el.mechanism.value }));
    el.weights.addEventListener('change', () => this.#emit('weights', el.weights.value));
    el.causal.addEventListener('change', () => set({ causal: el.causal.checked }));
    el.allHeads.addEventListener('change', () => set({ all_heads: el.allHeads.checked }));
    el.sharedScale.addEventListener('change', () => set({ shared_scale: el.sharedScale.checked }));
    el.allHeadsStage.addEventListener('change', () => set({ all_heads_stage: el.allHeadsStage.value }));
    for (const tab of el.explorer.querySelectorAll('[data-view]')) tab.addEventListener('click', () => set({ view: tab.dataset.view }));
    el.present.addEventListener('click', () => this.#emit('present'));
    el.heads.addEventListener('input', () => {
      const heads = this.#headChoices[Number(el.heads.value)];
      if (heads !== undefined) set({ heads });
    });
    el.head.addEventListener('change', () => set({ head: Number(el.head.value) }));
    for (const [id] of MENUS) el[id].addEventListener('change', () => set({ [id]: el[id].value }));
    for (const key of SLIDERS) {
      el[key].addEventListener('input', () => set({ [key]: Number(el[key].value) }));
    }
    el.lambdaBack.addEventListener('click', () => this.#emit('lambda_back'));
    el.specFile.addEventListener('change', () => {
      const file = el.specFile.files?.[0];
      el.specFile.value = '';
      if (file) this.#emit('spec_file', file);
    });
    el.specBack.addEventListener('click', () => this.#emit('spec_back'));
    el.backToTrained.addEventListener('click', () => this.#emit('back_to_trained'));
    el.exportPng.addEventListener('click', () => this.#emit('export', 'png'));
    el.exportSvg.addEventListener('click', () => this.#emit('export', 'svg'));
    el.exportJson.addEventListener('click', () => this.#emit('export', 'json'));
  }

  /** Offers the mechanism's stages for the all-heads view, `value` selected. */
  fillStages(stages, value) {
    const select = this.#el.allHeadsStage;
    if (select.options.length !== stages.length || [...select.options].some((o, i) => o.value !== stages[i].id)) {
      setOptions(select, stages.map((s) => ({ value: s.id, label: s.label })));
    }
    select.value = value;
  }

  /** Enables or disables the export buttons. */
  setExportEnabled(enabled) {
    const el = this.#el;
    for (const b of [el.exportPng, el.exportSvg, el.exportJson, el.exportTarget, el.exportSize]) b.disabled = !enabled;
  }
}
