// The explorer's controls: filling the menus from the engine's names, showing the state in
// every control, hiding what does not apply, and turning what a person does into calls of
// `emit(kind, payload)` on the component (`'set'` with `{ key: value }`, `'text'`, `'preset'`,
// `'weights'`, `'spec_file'`, `'spec_back'`, `'back_to_trained'`, `'lambda_back'`, `'export'`,
// `'present'`).

import { setAttr, setDisabled, setHidden, setOptions, setText, setTitle } from './dom.js';
import { fmt } from './format.js';
import { LANGUAGES, PRESETS } from './i18n.js';
import { CONTROLS, KEYS } from './settings.generated.js';
import { shiftModulo } from './state.js';

/** Every control's name, as the `controls` option lists them (the schema's). */
export const CONTROL_NAMES = Object.freeze(CONTROLS.map((c) => c.name));

/** The controls an embedded page (`embed=1`) shows unless it names its own. */
export const EMBED_CONTROLS = Object.freeze(CONTROLS.filter((c) => c.embed).map((c) => c.name));

/** The controls shown while presenting, unless the `controls` option names others. */
export const PRESENT_CONTROLS = Object.freeze(CONTROLS.filter((c) => c.present).map((c) => c.name));

/** The sliders that set one state key each, to the number they show, with their schema entries (template.js builds them). */
export const SLIDERS = Object.freeze(Object.entries(KEYS).filter(([, s]) => s.slider));

/**
 * The menus of the engine's own names (a difference, a fill, a renormalisation): the settings
 * that are a choice of a `names()` list, each option labelled by the string `<key>_<name>`;
 * the mechanism has its menu of its own (labelled `mech_<name>`, as everywhere).
 */
const MENUS = Object.freeze(Object.entries(KEYS).filter(([key, s]) => s.engine && s.kind === 'choice' && s.control === key && key !== 'mechanism'));

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
    for (const [key, s] of MENUS) {
      setOptions(this.#el[key], this.#names[s.choices].map((v) => ({ value: v, label: label(key, v) })));
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
    if (el.other.value !== (state.other ?? '')) el.other.value = state.other ?? '';
    if (!el.weights.disabled) el.weights.value = state.weights;
    el.mechanism.value = state.mechanism;
    // A loaded layer runs only the mechanisms its weights fit (the engine's view says which).
    const choices = view?.mechanism_choices;
    for (const option of el.mechanism.options) setDisabled(option, !!choices && !choices.includes(option.value));
    el.causal.checked = state.causal;
    el.allHeads.checked = state.all_heads;
    el.sharedScale.checked = !!state.shared_scale;
    for (const [key] of SLIDERS) el[key].value = String(state[key]);
    for (const [key] of MENUS) el[key].value = state[key];
    this.#syncHeads(state, view);
    this.outputs(state, view);
  }

  /**
   * The numbers beside the sliders, with the schema's digits; a slider whose value wraps
   * around the keys (the shift) says the value and its residue, with its strings
   * `<key>_value` and `<key>_value_empty`.
   */
  outputs(state, view) {
    const el = this.#el;
    const n = view?.keys ?? 0;
    for (const [key, s] of SLIDERS) {
      const out = el[`${key}Out`];
      const v = state[key];
      if (s.wraps) {
        setText(out, n > 0 ? this.#t(`${key}_value`, { k: v, m: shiftModulo(v, n) }) : this.#t(`${key}_value_empty`, { k: v }));
        setAttr(el[key], 'aria-valuetext', out.textContent);
      } else {
        setText(out, s.digits > 0 ? fmt(v, s.digits) : String(v));
      }
    }
  }

  #syncHeads(state, view) {
    const el = this.#el;
    this.#headChoices = view?.head_choices?.length ? view.head_choices : [state.heads];
    const choices = this.#headChoices;
    setAttr(el.heads, 'min', '0');
    setAttr(el.heads, 'max', Math.max(0, choices.length - 1));
    el.heads.value = String(Math.max(0, choices.indexOf(state.heads)));
    // A captured layer's weights fix its heads, and so does the Differential Transformer's
    // pairing of a pretrained layer's heads: the slider has one position and says so.
    const paired = view?.partner != null;
    const fixed = choices.length === 1 && (!!view?.spec || paired);
    setDisabled(el.heads, fixed);
    const width = view?.head_width;
    const shown = width ? `${state.heads} · d_h = ${width}` : String(state.heads);
    setText(el.headsOut, fixed ? this.#t('heads_fixed', { shown }) : shown);
    setTitle(el.heads, fixed ? this.#t(paired ? 'heads_fixed_paired_title' : 'heads_fixed_title') : '');
    setAttr(el.heads, 'aria-valuetext', this.#t('heads_valuetext', { n: state.heads }));
    const options = [];
    for (let h = 1; h <= state.heads; h++) options.push({ value: String(h), label: this.#t('head_option', { n: h, total: state.heads }) });
    setOptions(el.head, options);
    el.head.value = String(Math.min(state.head, state.heads));
    // A pretrained model's layers (the field shows only when there are several: paint.js).
    const layers = view?.layers ?? 1;
    const layerOptions = [];
    for (let n = 1; n <= layers; n++) layerOptions.push({ value: String(n), label: this.#t('layer_option', { n, total: layers }) });
    setOptions(el.layer, layerOptions);
    el.layer.value = String(Math.min(state.layer, layers));
    // The Differential Transformer on a pretrained layer: which head is A2 (paint.js shows it).
    const partner = view?.partner ?? null;
    const partnerOptions = [{ value: '0', label: this.#t('partner_next', { n: (state.head % state.heads) + 1 }) }];
    if (partner !== null) for (let n = 1; n <= state.heads; n++) partnerOptions.push({ value: String(n), label: this.#t('head_option', { n, total: state.heads }) });
    setOptions(el.partner, partnerOptions);
    el.partner.value = String(state.partner ?? 0);
  }

  /**
   * Shows a control when `allowed` names it (null: all), for a mechanism's own parameter when
   * the mechanism takes it (`parameters`, from the engine's view), and when the page has it
   * apply (`applies`, by the field's id: false hides it); a group shows when one of its
   * controls does. Each is written once, and only when it changes: a field shown and hidden
   * again in one tick would lay out the page twice.
   */
  visibility(root, allowed, parameters, applies = {}) {
    for (const node of root.querySelectorAll('[data-control]')) {
      const name = node.dataset.control;
      const param = node.dataset.parameter;
      setHidden(node, (allowed !== null && !allowed.has(name)) || (param !== undefined && !parameters.includes(param)) || applies[node.id] === false);
    }
    for (const group of root.querySelectorAll('fieldset.group')) {
      setHidden(group, ![...group.querySelectorAll('[data-control]')].some((n) => !n.hidden));
    }
  }

  #wire() {
    const el = this.#el;
    const set = (patch) => this.#emit('set', patch);
    el.sentence.addEventListener('input', () => this.#emit('text', el.sentence.value));
    el.other.addEventListener('input', () => set({ other: el.other.value }));
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
    el.layer.addEventListener('change', () => set({ layer: Number(el.layer.value) }));
    el.partner.addEventListener('change', () => set({ partner: Number(el.partner.value) }));
    for (const [key] of MENUS) el[key].addEventListener('change', () => set({ [key]: el[key].value }));
    for (const [key] of SLIDERS) {
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

  /** Enables or disables the export buttons; `jsonOff`, when given, disables the JSON export and says why (its title). */
  setExportEnabled(enabled, jsonOff = '') {
    const el = this.#el;
    for (const b of [el.exportPng, el.exportSvg, el.exportTarget, el.exportSize]) setDisabled(b, !enabled);
    setDisabled(el.exportJson, !enabled || !!jsonOff);
    setTitle(el.exportJson, jsonOff);
  }
}
