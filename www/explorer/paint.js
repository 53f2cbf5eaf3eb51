// What the explorer writes around its maps after every render: the status line, the notices
// (truncated text, unknown words, a loaded spec, settings moved away from the trained ones),
// which controls show, the maps' captions and accessible names, and every translated string.
// Functions of the ExplorerView, kept here so view.js stays the render loop.

import { STRINGS } from './i18n.js';
import { setAttr, setDisabled, setHidden, setOptions, setText, setTitle } from './dom.js';
import { visibleToken } from './format.js';

/** The status line and the notices. */
export function paintStatus(v) {
  const el = v.el;
  const empty = v.isEmpty();
  const n = v.view?.tokens ?? 0;
  // A pretrained model's rows are its word pieces, and its positions cut a long text.
  const pieces = !v.specs.active && !!v.loader.info?.pretrained;
  setText(el.tokenCount, empty ? '' : pieces ? v.t('pieces_count', { n }) : v.t('tokens_count', { n }));
  const truncated = !v.specs.active && !empty && v.sentence.truncated;
  setHidden(el.truncatedNotice, !truncated);
  if (truncated) setText(el.truncatedNotice, v.t(pieces ? 'truncated_pieces' : 'truncated', { total: v.sentence.total, shown: n }));
  const readout = v.view?.readout;
  setHidden(el.paramReadout, !readout || empty);
  setText(el.paramReadout, readout ?? '');
  setText(el.timing, empty ? '' : v.t('timing', { c: v.timings.compute_ms.toFixed(1), d: v.timings.draw_ms.toFixed(1) }));
  // A figure of a spec that is not drawn (yet, or at all): no prediction of an empty sentence.
  setHidden(el.prediction, !!(v.specs.expected && !v.specs.active));
}

/**
 * Shows the controls that apply: the `controls` option (or, presenting, the presenter's),
 * the mechanism's parameters from the engine's view, and the notes about a learned gate.
 */
export function paintVisibility(v, controls, allowed) {
  const parameters = v.view?.parameters ?? [];
  const spec = !!v.specs.active;
  const pretrained = !!v.loader.info?.pretrained;
  controls.visibility(v.el.explorer, allowed, parameters, {
    'all-heads-stage-field': !!v.state.all_heads,
    'layer-field': (v.view?.layers ?? 1) > 1,
    'partner-field': v.view?.partner != null && !spec,
    'other-field': pretrained && !spec,
    // A cross-attention layer's keys are another sequence's: no key is after a query.
    'causal-field': !v.view?.cross,
    // The model view exports itself, every head: no map to choose.
    'export-target-field': v.state.view !== 'model',
  });
  const gate = parameters.includes('gate') && v.view.gate_learned;
  setHidden(v.el.gateSpecNote, !(gate && spec));
  setHidden(v.el.gateLearnedNote, !(gate && !spec && v.loader.info?.trained));
  setHidden(v.el.pretrainedNote, !pretrained || spec);
  paintLambda(v, parameters.includes('lambda'));
  // A loaded spec: the weights are the file's.
  setDisabled(v.el.weights, spec);
  setHidden(v.el.weights.querySelector('option[value="spec"]'), !spec);
  if (spec) v.el.weights.value = 'spec';
  for (const tab of v.el.explorer.querySelectorAll('[data-view]')) {
    setAttr(tab, 'aria-pressed', String(tab.dataset.view === v.state.view));
  }
  setAttr(v.el.present, 'aria-pressed', String(!!v.state.present));
}

/**
 * The λ slider's note and its way back: whose λ draws (the trained model's, the loaded
 * layer's, the seeded one; one per layer, or one per token and head as the engine's view
 * says), or the slider's once it moved.
 */
function paintLambda(v, shown) {
  if (!shown || !v.view) return;
  const info = v.loader.info;
  const source = v.specs.active ? 'captured' : info?.pretrained ? 'pretrained' : info?.trained ? 'trained' : 'seeded';
  const learned = v.view.lambda_learned;
  const perToken = v.view.lambda_per_token ? '_token' : '';
  setText(v.el.lambdaNote, learned ? v.t(`lambda_learned${perToken}_${source}`) : v.t(`lambda_yours${perToken}`));
  setHidden(v.el.lambdaBack, learned);
  setText(v.el.lambdaBack, v.t(`lambda_back_${source}`));
}

/** The maps' captions and accessible names: they name the stage and the head, in the language. */
export function paintFigureText(v, figures, stages, { allHeads, final, output }) {
  const n = v.view.tokens;
  const { heads, head } = v.state;
  const describe = (stage) => {
    const key = `stage_${stage.id}`;
    return v.t(key in STRINGS.en ? key : 'stage_other', { k: v.state.shift, mk: -v.state.shift });
  };
  figures.forEach(({ canvas, caption, figure }, i) => {
    if (output && i === figures.length - 1) {
      setAttr(canvas, 'aria-label', v.t('aria_output', { n, d: v.view.d_model }));
      setAttr(canvas, 'data-stage', 'output');
      setText(caption, v.t('output_caption'));
      return;
    }
    const stage = allHeads ? final : stages[i];
    const h = allHeads ? i + 1 : head;
    setAttr(canvas, 'aria-label', v.t('aria_map', { name: stage.label, h, total: heads, desc: describe(stage), n }));
    setAttr(canvas, 'data-stage', stage.id);
    setText(caption, allHeads ? `${stage.label} · ${v.t('head_option', { n: i + 1, total: heads })}` : stage.formula);
    setTitle(caption, caption.textContent);
    figure.classList.toggle('selected', allHeads ? i + 1 === head : i === v.activeMap());
  });
}

/** Translates every string of the explorer into `state.lang`. */
export function translateAll(v) {
  const root = v.el.explorer;
  root.lang = v.state.lang === 'zh' ? 'zh-Hans' : 'en';
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = v.t(node.dataset.i18n);
  for (const node of root.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = v.t(node.dataset.i18nPlaceholder);
  for (const node of root.querySelectorAll('[data-i18n-aria-label]')) node.setAttribute('aria-label', v.t(node.dataset.i18nAriaLabel));
  for (const node of root.querySelectorAll('[data-i18n-title]')) node.title = v.t(node.dataset.i18nTitle);
}

/**
 * The unknown-words note: how many tokens the trained model does not know, and a hedge when
 * most are unknown (the prediction then means little).
 */
export function paintUnknown(v, prediction) {
  const note = v.el.unknownNote;
  const at = prediction?.unknown_at ?? [];
  const unknown = at.length;
  setHidden(note, !prediction || unknown === 0);
  v.el.prediction.classList.toggle('hedged', !!prediction && unknown * 2 > prediction.tokens);
  if (note.hidden) return;
  const key = unknown * 2 > prediction.tokens ? 'unknown_most' : 'unknown_some';
  const words = unknownWords(v.labels?.rows ?? [], at, v.state.lang);
  setText(note, v.t(key, { u: unknown, n: prediction.tokens, words }));
}

/** The most unknown words a note names; the rest are counted. */
const UNKNOWN_NAMED = 8;

/**
 * The tokens at positions `at` of `tokens`, quoted and listed once each in order (`“cat”,
 * “mat”`), the first UNKNOWN_NAMED of them and then how many more: the words the note says
 * the model does not know. Pure (page-logic tests run it).
 */
export function unknownWords(tokens, at, lang = 'en') {
  const seen = [...new Set(at.map((i) => tokens[i]).filter((t) => t !== undefined))];
  const [open, close, sep] = lang === 'zh' ? ['“', '”', '、'] : ['“', '”', ', '];
  const named = seen.slice(0, UNKNOWN_NAMED).map((t) => `${open}${visibleToken(t)}${close}`);
  const more = seen.length - named.length;
  return more > 0 ? `${named.join(sep)} …(+${more})` : named.join(sep);
}

/** Fills "What to export" with the maps drawn and the panel of all of them. */
export function paintExportTargets(v, stages) {
  const select = v.el.exportTarget;
  setOptions(select, [...stages.map((s) => ({ value: s.id, label: s.label })), { value: 'panel', label: v.t('export_panel') }]);
  if (!select.value) select.value = 'panel';
}
