// The page: wires the controls to the wasm `Explorer`, draws every stage, and keeps the
// view in the address.
//
// Rust owns the matrices and the drawing; this module owns the DOM. The flow is one way:
// an event changes `state` (and marks what must be redone), one animation frame later
// `frame()` hands the changed values to the engine (only the setters whose value really
// changed, so caches survive), renders once, and repaints the light-weight layers (overlay
// highlight, tooltip, readout, table). Hovering never renders, it only repaints the overlay.
// User text only ever reaches the DOM through textContent.

import init, { Explorer, version } from '../pkg/diffattn.js';
import { LANGUAGES, PRESETS, STRINGS, detectLanguage, formatParts, parseLanguage, translate } from './i18n.js';
import { DEFAULTS, decodeState, encodeState, nearestChoice, shiftModulo } from './state.js';
import { cellLines, fmt, visibleToken } from './format.js';

/** The screen-reader table lists at most this many rows and columns. */
const TABLE_CAP = 32;
/** The address is rewritten at most this often while a slider moves. */
const URL_INTERVAL_MS = 250;
/** The table is rebuilt at most this often while a slider moves (it is a lot of DOM). */
const TABLE_INTERVAL_MS = 300;

const $ = (id) => document.getElementById(id);

const el = {
  html: document.documentElement,
  messages: $('messages'),
  modelStatus: $('model-status'),
  langToggle: $('lang-toggle'),
  sentence: $('sentence'),
  presets: $('presets'),
  specFile: $('spec-file'),
  specBanner: $('spec-banner'),
  specBannerText: $('spec-banner-text'),
  specBack: $('spec-back'),
  model: $('model'),
  mechanism: $('mechanism'),
  causal: $('causal'),
  heads: $('heads'),
  headsOut: $('heads-out'),
  head: $('head'),
  allHeads: $('all-heads'),
  shift: $('shift'),
  shiftOut: $('shift-out'),
  difference: $('difference'),
  fill: $('fill'),
  renormalize: $('renormalize'),
  alpha: $('alpha'),
  alphaOut: $('alpha-out'),
  beta: $('beta'),
  betaOut: $('beta-out'),
  gamma: $('gamma'),
  gammaOut: $('gamma-out'),
  gateSpecNote: $('gate-spec-note'),
  gateLearnedNote: $('gate-learned-note'),
  weightsLoading: $('weights-loading'),
  weightsProgress: $('weights-progress'),
  weightsLoadingText: $('weights-loading-text'),
  prediction: $('prediction'),
  predictionValue: $('prediction-value'),
  predictionMeter: $('prediction-meter'),
  predictionBar: $('prediction-bar'),
  predictionReason: $('prediction-reason'),
  trainedWith: $('trained-with'),
  movedAway: $('moved-away'),
  movedAwayText: $('moved-away-text'),
  backToTrained: $('back-to-trained'),
  tau: $('tau'),
  tauOut: $('tau-out'),
  window: $('window'),
  windowOut: $('window-out'),
  tokenCount: $('token-count'),
  paramReadout: $('param-readout'),
  timing: $('timing'),
  exportTarget: $('export-target'),
  exportPng: $('export-png'),
  exportSvg: $('export-svg'),
  exportJson: $('export-json'),
  truncated: $('truncated-notice'),
  loading: $('loading'),
  emptyHint: $('empty-hint'),
  maps: $('maps'),
  readout: $('readout'),
  table: $('table-fallback'),
  tooltip: $('tooltip'),
  dropOverlay: $('drop-overlay'),
  footer: $('footer-text'),
};

// ---------------------------------------------------------------------------------------
// State

const initialParams = new URLSearchParams(location.search);
const initialLang = parseLanguage(initialParams.get('lang')) ?? detectLanguage(navigator.languages ?? [navigator.language]);
/** Everything a person can set; mirrored in the address. */
const state = decodeState(location.search, { lang: initialLang, text: PRESETS[initialLang][0] });

/** What the page derived from the engine (not in the address). */
const view = {
  sentence: { tokens: [], total: 0, truncated: false },
  spec: null, // { name, tokens, savedState } while a user's spec file is drawn
  stages: [],
  headChoices: [],
  figures: [], // { figure, canvas, overlay, caption }
  layoutKey: '',
  hover: null, // { stage, clientX, clientY, row?, col? } while a mouse is over a map
  selected: null, // { stage, row, col } pinned by a click, a tap or the arrow keys
  activeStage: -1, // the map the table describes: focused, hovered or selected; -1 = the last
  lambda: undefined,
  renders: 0,
  empty: false,
  modelInfo: null,
  settings: null, // ex.settings() after the last render
  prediction: null, // ex.prediction() after the last render, or null
};

/** Address parameter -> state key, for the settings a trained model brings. */
const SETTING_PARAMS = {
  heads: 'heads',
  causal: 'causal',
  k: 'k',
  diff: 'difference',
  fill: 'fill',
  renorm: 'renormalize',
  alpha: 'alpha',
  beta: 'beta',
  gamma: 'gamma',
  tau: 'tau',
  w: 'window',
};
/** The settings the address names at start: they win over the trained model's. */
const addressSettings = new Set(Object.entries(SETTING_PARAMS).filter(([param]) => initialParams.has(param)).map(([, key]) => key));

const WEIGHTS_BASE = new URL('../weights/', import.meta.url);

/** Trained weights: the manifest, one ArrayBuffer promise per mechanism, the load in flight. */
const weights = {
  manifest: null,
  manifestPromise: null,
  buffers: new Map(),
  pending: null, // the promise of the load in flight, while one is
  loadingMechanism: null,
  loadId: 0,
};

const timings = { compute_ms: 0, draw_ms: 0, frame_ms: 0, renders: 0 };

/** The value each engine setter was last called with, so unchanged values are never re-sent. */
const applied = new Map();

let ex = null;
let engineDead = false;

function tokens() {
  return view.spec ? view.spec.tokens : view.sentence.tokens;
}

function t(key, params) {
  return translate(state.lang, key, params);
}

/** A translated template with DOM nodes for some placeholders (tokens stay text). */
function tNodes(key, params) {
  const fragment = document.createDocumentFragment();
  const template = translate(state.lang, key, Object.fromEntries(Object.keys(params).map((k) => [k, `{${k}}`])));
  for (const part of formatParts(template, params)) {
    fragment.append(part instanceof Node ? part : document.createTextNode(String(part)));
  }
  return fragment;
}

function tokenNode(token) {
  const bdi = document.createElement('bdi');
  bdi.className = 'token';
  bdi.textContent = visibleToken(token);
  return bdi;
}

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ---------------------------------------------------------------------------------------
// Messages: one visible, dismissable area (role="alert") for every error.

function showMessage(key, text, { action } = {}) {
  let box = el.messages.querySelector(`[data-key="${key}"]`);
  if (!box) {
    box = make('div', 'message');
    box.dataset.key = key;
    const p = make('p');
    const buttons = make('div', 'message-buttons');
    const dismiss = make('button', 'button', '×');
    dismiss.type = 'button';
    dismiss.dataset.role = 'dismiss';
    dismiss.addEventListener('click', () => box.remove());
    buttons.append(dismiss);
    box.append(p, buttons);
    el.messages.append(box);
  }
  box.querySelector('p').textContent = text;
  const dismiss = box.querySelector('[data-role="dismiss"]');
  dismiss.setAttribute('aria-label', t('dismiss'));
  dismiss.title = t('dismiss');
  if (action && !box.querySelector('[data-role="action"]')) {
    const button = make('button', 'button', action.label);
    button.type = 'button';
    button.dataset.role = 'action';
    button.addEventListener('click', action.run);
    dismiss.before(button);
  }
}

function clearMessage(key) {
  el.messages.querySelector(`[data-key="${key}"]`)?.remove();
}

function messageOf(err) {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

/**
 * Shows an engine error. A trap (a Rust panic) leaves that handle borrowed for good, so a
 * fresh handle replaces it: every setting is sent again at the next input, which redraws.
 * The old handle's memory is leaked, which is small. Nothing redraws automatically, so a
 * panic that the current input causes cannot loop.
 */
function reportEngineError(err) {
  if (err instanceof WebAssembly.RuntimeError) {
    showMessage('crash', t('engine_crashed', { msg: messageOf(err) }));
    try {
      ex = new Explorer();
    } catch (again) {
      engineDead = true;
      showMessage('crash', t('engine_dead', { msg: messageOf(again) }), {
        action: { label: t('reload'), run: () => location.reload() },
      });
      return;
    }
    if (window.diffattn) window.diffattn.explorer = ex;
    view.modelInfo = ex.model_info();
    updateModelStatus();
    if (state.model === 'trained') setTimeout(() => loadTrained(state.mechanism));
    if (view.spec) {
      Object.assign(state, view.spec.savedState, { lang: state.lang });
      view.spec = null;
      el.specBanner.hidden = true;
    }
    applied.clear();
    view.headChoices = [];
    view.selected = null;
    view.hover = null;
    return;
  }
  showMessage('engine', messageOf(err));
}

window.addEventListener('error', (event) => {
  showMessage('uncaught', messageOf(event.error ?? event.message));
});
window.addEventListener('unhandledrejection', (event) => {
  showMessage('uncaught', messageOf(event.reason));
});

// ---------------------------------------------------------------------------------------
// Frames: every change is coalesced into one render per animation frame.

const dirty = { render: false, overlay: false };
let frameRequested = false;
let settledWaiters = [];

function schedule(kind) {
  dirty[kind] = true;
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(frame);
  }
}

function frame() {
  frameRequested = false;
  const needRender = dirty.render;
  const needOverlay = dirty.overlay;
  dirty.render = false;
  dirty.overlay = false;
  if (needRender && weights.pending) {
    // The maps wait for the weights (a few ms on a fast connection); the load re-renders.
    dirty.render = true;
  } else if (ex && !engineDead) {
    try {
      if (needRender) renderNow();
      else if (needOverlay) paintInteraction();
    } catch (err) {
      reportEngineError(err);
    }
  }
  const waiters = settledWaiters;
  settledWaiters = [];
  for (const resolve of waiters) resolve();
}

/** Resolves once no frame is pending (after the pending one ran) and the address is written. */
/** Also waits for a weights load in flight and the render that follows it. */
async function settled() {
  for (;;) {
    if (weights.pending) {
      await weights.pending.catch(() => {});
      continue;
    }
    flushUrl();
    if (!frameRequested) return;
    await new Promise((resolve) => settledWaiters.push(resolve));
    if (!weights.pending && !frameRequested) {
      flushUrl();
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------
// The engine: hand it what changed.

/** Which `state` fields each engine setter carries, to undo a value the engine refused. */
const SETTER_FIELDS = {
  mechanism: ['mechanism'],
  heads: ['heads'],
  head: ['head'],
  causal: ['causal'],
  k: ['k'],
  difference: ['difference'],
  fill: ['fill'],
  renormalize: ['renormalize'],
  gate: ['alpha', 'beta', 'gamma'],
  tau: ['tau'],
  window: ['window'],
};

/**
 * Calls a setter when its value changed. If the engine refuses the value (it throws an
 * Error naming the problem), the message is shown and the control goes back to the value
 * the engine still has, so the maps stay consistent with the controls.
 */
function apply(name, value, call) {
  if (applied.has(name) && applied.get(name) === value) return false;
  try {
    call();
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError || !applied.has(name) || !SETTER_FIELDS[name]) throw err;
    reportEngineError(err);
    const previous = applied.get(name);
    const fields = SETTER_FIELDS[name];
    const values = fields.length === 1 ? [previous] : String(previous).split(',').map(Number);
    fields.forEach((field, i) => {
      state[field] = values[i];
    });
    syncControls();
    scheduleUrl();
    return false;
  }
  applied.set(name, value);
  return true;
}

function resolvedTheme() {
  if (state.theme === 'light' || state.theme === 'dark') return state.theme;
  return darkQuery.matches ? 'dark' : 'light';
}

/** Sends every changed value to the engine. Throws what the engine throws. */
function applyEngine() {
  apply('theme', resolvedTheme(), () => ex.set_theme(resolvedTheme()));
  if (!view.spec) {
    const text = state.text;
    if (text.trim() === '') {
      view.empty = true;
    } else {
      apply('text', text, () => {
        const info = ex.set_text(text);
        view.sentence = { tokens: Array.from(info.tokens ?? []), total: info.total ?? 0, truncated: !!info.truncated };
      });
      view.empty = view.sentence.tokens.length === 0;
    }
  } else {
    view.empty = view.spec.tokens.length === 0;
  }
  const mechanismChanged = apply('mechanism', state.mechanism, () => ex.set_mechanism(state.mechanism));
  if (mechanismChanged || view.headChoices.length === 0) {
    // The valid head counts depend on the mechanism (d, or d/2 for the Diff Transformer),
    // and the engine may have re-split the heads: send the count and the head again.
    view.headChoices = Array.from(ex.head_choices());
    applied.delete('heads');
    applied.delete('head');
    if (!view.headChoices.includes(state.heads)) state.heads = nearestChoice(view.headChoices, state.heads);
    syncHeadControls();
  }
  apply('heads', state.heads, () => ex.set_heads(state.heads));
  if (state.head >= state.heads) {
    state.head = state.heads - 1;
    syncHeadControls();
  }
  apply('head', state.head, () => ex.set_head(state.head));
  apply('causal', state.causal, () => ex.set_causal(state.causal));
  apply('k', state.k, () => ex.set_shift(state.k));
  apply('difference', state.difference, () => ex.set_difference(state.difference));
  apply('fill', state.fill, () => ex.set_shift_fill(state.fill));
  apply('renormalize', state.renormalize, () => ex.set_renormalize(state.renormalize));
  const gate = `${state.alpha},${state.beta},${state.gamma}`;
  apply('gate', gate, () => ex.set_gate(state.alpha, state.beta, state.gamma));
  apply('tau', state.tau, () => ex.set_tau(state.tau));
  apply('window', state.window, () => ex.set_window(state.window));
}

// ---------------------------------------------------------------------------------------
// Rendering

const darkQuery = matchMedia('(prefers-color-scheme: dark)');
const measured = new WeakMap(); // canvas -> [width_px, height_px] in device pixels

const resizeObserver = new ResizeObserver((entries) => {
  let changed = false;
  for (const entry of entries) {
    const canvas = entry.target;
    const dpr = window.devicePixelRatio || 1;
    const box = entry.contentBoxSize?.[0];
    let size = box
      ? [Math.round(box.inlineSize * dpr), Math.round(box.blockSize * dpr)]
      : [Math.round(entry.contentRect.width * dpr), Math.round(entry.contentRect.height * dpr)];
    // The exact device-pixel size, where the browser knows it, avoids a resampled (blurry)
    // canvas; emulated screens (devtools, headless) may report CSS pixels there, so it is
    // only trusted when it agrees with CSS size × devicePixelRatio.
    const device = entry.devicePixelContentBoxSize?.[0];
    if (device && Math.abs(device.inlineSize - size[0]) <= 2 && Math.abs(device.blockSize - size[1]) <= 2) {
      size = [device.inlineSize, device.blockSize];
    }
    measured.set(canvas, size);
    if (canvas.width !== size[0] || canvas.height !== size[1]) changed = true;
  }
  if (changed) schedule('render');
});

function observe(canvas) {
  try {
    resizeObserver.observe(canvas, { box: 'device-pixel-content-box' });
  } catch {
    resizeObserver.observe(canvas);
  }
}

/** One figure per map: the drawn canvas, an overlay for the highlight, the formula below. */
function buildFigures(count) {
  for (const f of view.figures) resizeObserver.unobserve(f.canvas);
  el.maps.replaceChildren();
  view.figures = [];
  for (let index = 0; index < count; index++) {
    const figure = make('figure', 'map');
    const frame = make('div', 'map-frame');
    const canvas = make('canvas', 'map-canvas');
    canvas.setAttribute('role', 'img');
    canvas.tabIndex = 0;
    canvas.setAttribute('aria-describedby', 'maps-hint');
    const overlay = make('canvas', 'map-overlay');
    overlay.setAttribute('aria-hidden', 'true');
    const caption = make('figcaption');
    frame.append(canvas, overlay);
    figure.append(frame, caption);
    el.maps.append(figure);
    wireCanvas(canvas, index);
    observe(canvas);
    view.figures.push({ figure, canvas, overlay, caption });
  }
  el.maps.dataset.count = String(count);
}

function sizeCanvases() {
  const dpr = window.devicePixelRatio || 1;
  for (const { canvas, overlay } of view.figures) {
    let size = measured.get(canvas);
    if (!size) {
      const rect = canvas.getBoundingClientRect();
      size = [Math.round(rect.width * dpr), Math.round(rect.height * dpr)];
    }
    const [w, h] = [Math.max(1, size[0]), Math.max(1, size[1])];
    // Assigning a canvas's size clears it, even to the same value: only when it changed.
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    if (overlay.width !== w) overlay.width = w;
    if (overlay.height !== h) overlay.height = h;
  }
}

/** Label font in device pixels: 12 CSS px on small maps, up to 15 on large ones. */
function fontPx() {
  const dpr = window.devicePixelRatio || 1;
  const first = view.figures[0]?.canvas;
  const cssWidth = first ? first.width / dpr : 400;
  const css = Math.min(15, Math.max(12, cssWidth / 30));
  return Math.round(css * dpr);
}

/** Applies what changed, renders every map once, and refreshes what depends on the numbers. */
function renderNow() {
  const started = performance.now();
  applyEngine();
  const empty = view.empty;
  el.emptyHint.hidden = !empty;
  el.maps.hidden = empty;
  setExportEnabled(!empty);
  if (empty) {
    view.layoutKey = '';
    for (const f of view.figures) resizeObserver.unobserve(f.canvas);
    view.figures = [];
    el.maps.replaceChildren();
    view.hover = null;
    view.selected = null;
    updateStatus();
    updatePrediction();
    paintInteraction();
    el.table.replaceChildren();
    return;
  }
  view.stages = Array.from(ex.stages());
  const count = state.allHeads ? state.heads : view.stages.length;
  const layoutKey = state.allHeads ? `all:${count}` : view.stages.map((s) => s.id).join(',');
  if (layoutKey !== view.layoutKey) {
    buildFigures(count);
    view.layoutKey = layoutKey;
    el.maps.classList.toggle('all-heads', state.allHeads);
    view.hover = null;
    if (view.activeStage >= count) view.activeStage = -1;
    fillExportTargets();
  }
  const n = tokens().length;
  if (view.selected && (view.selected.row >= n || view.selected.col >= keyCount())) view.selected = null;
  sizeCanvases();
  const canvases = view.figures.map((f) => f.canvas);
  const result = state.allHeads ? ex.render_all_heads(canvases, fontPx()) : ex.render(canvases, fontPx());
  // After the render, which computed everything: asking before would move the compute time here.
  view.lambda = state.mechanism === 'diff_transformer' ? ex.lambda() : undefined;
  view.renders += 1;
  timings.compute_ms = result?.compute_ms ?? 0;
  timings.draw_ms = result?.draw_ms ?? 0;
  timings.renders = view.renders;
  clearMessage('engine');
  updateFigureText();
  updateStatus();
  updatePrediction();
  paintInteraction();
  scheduleTable();
  timings.frame_ms = performance.now() - started;
}

function keyCount() {
  const n = tokens().length;
  return state.mechanism === 'input_diff' ? Math.max(0, n - 1) : n;
}

function stageDescription(stage) {
  const key = `stage_${stage.id}`;
  return translate(state.lang, key in STRINGS.en ? key : 'stage_other', { k: state.k, mk: -state.k });
}

/** aria-labels and formulas: they name the stage and the head, and change with the language. */
function updateFigureText() {
  const n = tokens().length;
  const heads = state.heads;
  if (state.allHeads) {
    const final = view.stages[view.stages.length - 1];
    view.figures.forEach(({ canvas, caption, figure }, h) => {
      canvas.setAttribute('aria-label', t('aria_map', { name: final?.name ?? 'A', h: h + 1, total: heads, desc: final ? stageDescription(final) : '', n }));
      caption.textContent = t('head_option', { n: h + 1, total: heads });
      figure.classList.toggle('selected', h === state.head);
    });
    return;
  }
  view.figures.forEach(({ canvas, caption, figure }, i) => {
    const stage = view.stages[i];
    canvas.setAttribute('aria-label', t('aria_map', { name: stage.name, h: state.head + 1, total: heads, desc: stageDescription(stage), n }));
    canvas.dataset.stage = stage.id;
    caption.textContent = stage.formula ?? '';
    figure.classList.toggle('selected', i === view.activeStage);
  });
}

function updateStatus() {
  const n = tokens().length;
  el.tokenCount.textContent = view.empty ? '' : t('tokens_count', { n });
  const showTruncated = !view.spec && !view.empty && view.sentence.truncated;
  el.truncated.hidden = !showTruncated;
  if (showTruncated) el.truncated.textContent = t('truncated', { total: view.sentence.total, shown: n });
  // The parameter the mechanism's maps depend on, next to the token count.
  let param = '';
  if (typeof view.lambda === 'number') param = t('lambda_value', { v: fmt(view.lambda) });
  else if (state.mechanism === 'cosine') param = `τ = ${fmt(state.tau, 1)}`;
  else if (state.mechanism === 'local') param = `w = ${state.window}`;
  el.paramReadout.hidden = param === '' || view.empty;
  el.paramReadout.textContent = param;
  el.timing.textContent = view.empty ? '' : t('timing', { c: timings.compute_ms.toFixed(1), d: timings.draw_ms.toFixed(1) });
  updateShiftOutput();
}

// ---------------------------------------------------------------------------------------
// Interaction: hover, tap, keyboard; highlight on every map, tooltip, readout.

function hitAt(index, clientX, clientY) {
  const canvas = view.figures[index]?.canvas;
  if (!canvas) return null;
  const rect = canvas.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) return null;
  const x = ((clientX - rect.left) * canvas.width) / rect.width;
  const y = ((clientY - rect.top) * canvas.height) / rect.height;
  const hit = ex.hit(index, x, y);
  return hit ? { row: hit[0], col: hit[1] } : null;
}

function wireCanvas(canvas, index) {
  canvas.addEventListener('pointermove', (event) => {
    if (event.pointerType === 'touch' || state.allHeads) return;
    view.hover = { stage: index, clientX: event.clientX, clientY: event.clientY, pending: true };
    schedule('overlay');
  });
  canvas.addEventListener('pointerleave', () => {
    if (!view.hover) return;
    view.hover = null;
    schedule('overlay');
  });
  canvas.addEventListener('click', (event) => {
    if (state.allHeads) {
      showHead(index);
      return;
    }
    if (!ex || engineDead) return;
    try {
      const cell = hitAt(index, event.clientX, event.clientY);
      const same = cell && view.selected && view.selected.row === cell.row && view.selected.col === cell.col;
      view.selected = cell && !same ? { stage: index, ...cell } : null;
      view.activeStage = index;
      if (event.pointerType === 'touch') view.hover = null;
      markActive();
      scheduleTable();
      schedule('overlay');
    } catch (err) {
      reportEngineError(err);
    }
  });
  canvas.addEventListener('focus', () => {
    if (state.allHeads) return;
    view.activeStage = index;
    markActive();
    scheduleTable();
  });
  canvas.addEventListener('keydown', (event) => {
    if (state.allHeads) {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        showHead(index);
      }
      return;
    }
    if (event.key === 'Escape') {
      if (view.selected) {
        view.selected = null;
        schedule('overlay');
        event.preventDefault();
      }
      return;
    }
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -Infinity], End: [0, Infinity] };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    const rows = tokens().length;
    const cols = keyCount();
    if (rows === 0 || cols === 0) return;
    const from = view.selected ?? { row: 0, col: 0 };
    const fresh = !view.selected;
    const clamp = (v, n) => Math.min(n - 1, Math.max(0, v));
    const row = fresh ? 0 : clamp(from.row + move[0], rows);
    const col = fresh ? 0 : clamp(from.col + (Number.isFinite(move[1]) ? move[1] : move[1] > 0 ? cols : -cols), cols);
    view.selected = { stage: index, row, col, keyboard: true };
    view.hover = null;
    view.activeStage = index;
    markActive();
    schedule('overlay');
  });
}

function markActive() {
  view.figures.forEach(({ figure }, i) => figure.classList.toggle('selected', i === view.activeStage));
}

function showHead(h) {
  state.head = h;
  state.allHeads = false;
  syncHeadControls();
  el.allHeads.checked = false;
  changed();
}

/** The cell the readouts describe: the hovered one, else the selected one. */
function currentCell() {
  if (view.hover && view.hover.row !== undefined) return view.hover;
  if (view.selected) return view.selected;
  return null;
}

let highlightColors = null;
function colors() {
  if (!highlightColors) {
    const style = getComputedStyle(document.documentElement);
    highlightColors = {
      outer: style.getPropertyValue('--highlight').trim() || '#000',
      inner: style.getPropertyValue('--highlight-inner').trim() || '#fff',
      surface: style.getPropertyValue('--surface').trim() || '#fff',
    };
  }
  return highlightColors;
}

/** Overlay highlight, tooltip and readout for the current cell. Never renders the maps. */
function paintInteraction() {
  if (view.hover?.pending) {
    const { stage, clientX, clientY } = view.hover;
    const cell = hitAt(stage, clientX, clientY);
    view.hover = cell ? { stage, clientX, clientY, ...cell } : { stage, clientX, clientY };
    if (cell && view.activeStage !== stage) {
      view.activeStage = stage;
      markActive();
      scheduleTable();
    }
  }
  const cell = state.allHeads || view.empty ? null : currentCell();
  const dpr = window.devicePixelRatio || 1;
  const { outer, inner } = colors();
  view.figures.forEach(({ overlay }, i) => {
    const ctx = overlay.getContext('2d');
    ctx.clearRect(0, 0, overlay.width, overlay.height);
    if (!cell) return;
    const lastCol = keyCount() - 1;
    const rowStart = ex.cell_rect(i, cell.row, 0);
    const rowEnd = ex.cell_rect(i, cell.row, lastCol);
    const rect = ex.cell_rect(i, cell.row, cell.col);
    if (rowStart && rowEnd) {
      ctx.setLineDash([4 * dpr, 3 * dpr]);
      ctx.lineWidth = Math.max(1, dpr);
      ctx.strokeStyle = outer;
      const x0 = rowStart.x;
      const x1 = rowEnd.x + rowEnd.width;
      ctx.strokeRect(x0 + 0.5, rowStart.y + 0.5, x1 - x0 - 1, rowStart.height - 1);
      ctx.setLineDash([]);
    }
    if (rect) {
      const w = Math.max(2, Math.round(2 * dpr));
      ctx.lineWidth = w + 2 * Math.max(1, Math.round(dpr));
      ctx.strokeStyle = inner;
      ctx.strokeRect(rect.x - w / 2, rect.y - w / 2, rect.width + w, rect.height + w);
      ctx.lineWidth = w;
      ctx.strokeStyle = outer;
      ctx.strokeRect(rect.x - w / 2, rect.y - w / 2, rect.width + w, rect.height + w);
    }
  });
  updateCellText(cell);
}

let lastCellKey = '';
function updateCellText(cell) {
  const key = cell ? `${cell.row},${cell.col},${view.renders},${state.lang}` : `none,${state.lang},${view.empty},${state.allHeads}`;
  if (key !== lastCellKey) {
    lastCellKey = key;
    if (!cell) {
      el.readout.replaceChildren(make('p', 'muted', t(state.allHeads ? 'all_heads_hint' : 'readout_hint')));
      el.tooltip.hidden = true;
      return;
    }
    const info = ex.cell(cell.row, cell.col);
    if (!info) {
      el.tooltip.hidden = true;
      return;
    }
    el.tooltip.replaceChildren(cellContent(info, cell));
    el.readout.replaceChildren(cellContent(info, cell));
  }
  if (cell) positionTooltip(cell);
}

/** The cell's tokens, its arithmetic and the row sums, built from text nodes only. */
function cellContent(info, cell) {
  const fragment = document.createDocumentFragment();
  const head = make('p', 'tokens');
  head.append(
    tNodes('readout_cell', {
      i: String(cell.row),
      j: String(cell.col),
      q: tokenNode(info.query),
      k: tokenNode(info.key),
    }),
  );
  fragment.append(head);
  const context = { mechanism: state.mechanism, renormalize: state.renormalize, lambda: view.lambda };
  for (const line of cellLines(info, context)) {
    const p = make('p', 'eq');
    for (const seg of line) {
      if (seg.term) {
        const span = make('span', 'num', seg.text);
        span.dataset.term = seg.term;
        p.append(span);
      } else {
        p.append(seg.text);
      }
    }
    fragment.append(p);
  }
  const sums = info.row_sum ?? {};
  if (typeof sums.a === 'number') {
    const p = make('p', 'rowsum');
    p.textContent =
      typeof sums.fused === 'number'
        ? t('readout_rowsums', { i: cell.row, a: fmt(sums.a), f: fmt(sums.fused) })
        : t('readout_rowsum_a', { i: cell.row, a: fmt(sums.a) });
    fragment.append(p);
  }
  return fragment;
}

function positionTooltip(cell) {
  const tip = el.tooltip;
  let x;
  let y;
  if (view.hover && view.hover.row !== undefined) {
    x = view.hover.clientX;
    y = view.hover.clientY;
  } else {
    const figure = view.figures[cell.stage];
    if (!figure) {
      tip.hidden = true;
      return;
    }
    const r = ex.cell_rect(cell.stage, cell.row, cell.col);
    if (!r) {
      tip.hidden = true;
      return;
    }
    const rect = figure.canvas.getBoundingClientRect();
    const scale = rect.width / figure.canvas.width;
    x = rect.left + (r.x + r.width) * scale;
    y = rect.top + (r.y + r.height) * scale;
    if (y < 0 || y > innerHeight || x < 0 || x > innerWidth) {
      tip.hidden = true;
      return;
    }
  }
  tip.hidden = false;
  const pad = 8;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  let left = x + 16;
  let top = y + 16;
  if (left + w + pad > innerWidth) left = Math.max(pad, x - 16 - w);
  if (top + h + pad > innerHeight) top = Math.max(pad, y - 16 - h);
  tip.style.left = `${Math.round(left)}px`;
  tip.style.top = `${Math.round(top)}px`;
}

// ---------------------------------------------------------------------------------------
// The screen-reader table: the active map, capped at TABLE_CAP × TABLE_CAP.

let tableTimer = null;
let lastTableKey = '';
let lastTableAt = -Infinity;

function scheduleTable() {
  if (tableTimer !== null) return;
  const wait = Math.max(0, lastTableAt + TABLE_INTERVAL_MS - performance.now());
  tableTimer = setTimeout(() => {
    tableTimer = null;
    lastTableAt = performance.now();
    try {
      buildTable();
    } catch (err) {
      reportEngineError(err);
    }
  }, wait);
}

function buildTable() {
  if (!ex || engineDead || view.empty || view.stages.length === 0) {
    el.table.replaceChildren();
    lastTableKey = '';
    return;
  }
  const stageIndex = state.allHeads || view.activeStage < 0 ? view.stages.length - 1 : Math.min(view.activeStage, view.stages.length - 1);
  const stage = view.stages[stageIndex];
  const key = `${stage.id},${view.renders},${state.lang}`;
  if (key === lastTableKey) return;
  lastTableKey = key;
  const map = ex.map(stage.id);
  const rows = map.rows;
  const cols = map.cols;
  const r = Math.min(rows, TABLE_CAP);
  const c = Math.min(cols, TABLE_CAP);
  const names = tokens();
  const keyNames = [];
  for (let j = 0; j < c; j++) {
    keyNames.push(state.mechanism === 'input_diff' ? (ex.cell(0, j)?.key ?? `${j}`) : names[j] ?? `${j}`);
  }
  const table = make('table');
  const caption = make('caption', '', t('table_caption', { name: stage.name, h: state.head + 1, total: state.heads }));
  if (rows > r || cols > c) caption.append(' ', t('table_capped', { r, c, rows, cols }));
  table.append(caption);
  const thead = make('thead');
  const headRow = make('tr');
  const corner = make('th', '', t('table_corner'));
  corner.scope = 'col';
  headRow.append(corner);
  for (let j = 0; j < c; j++) {
    const th = make('th', '', visibleToken(keyNames[j]));
    th.scope = 'col';
    headRow.append(th);
  }
  thead.append(headRow);
  const tbody = make('tbody');
  for (let i = 0; i < r; i++) {
    const tr = make('tr');
    const th = make('th', '', visibleToken(names[i] ?? `${i}`));
    th.scope = 'row';
    tr.append(th);
    for (let j = 0; j < c; j++) tr.append(make('td', '', fmt(map.data[i * cols + j])));
    tbody.append(tr);
  }
  table.append(thead, tbody);
  el.table.replaceChildren(table);
}

// ---------------------------------------------------------------------------------------
// Controls

function setOptions(select, options) {
  const current = select.value;
  select.replaceChildren(
    ...options.map(({ value, label, group }) => {
      if (group) {
        const optgroup = make('optgroup');
        optgroup.label = group;
        optgroup.append(...label.map((o) => Object.assign(make('option', '', o.label), { value: o.value })));
        return optgroup;
      }
      return Object.assign(make('option', '', label), { value });
    }),
  );
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}

function fillPresets() {
  setOptions(el.presets, [
    { value: '', label: t('presets_choose') },
    ...LANGUAGES.map((lang) => ({
      group: t(`preset_group_${lang}`),
      label: PRESETS[lang].map((text, i) => ({ value: `${lang}:${i}`, label: text })),
    })),
  ]);
  el.presets.value = '';
}

function fillExportTargets() {
  const stages = view.stages;
  setOptions(el.exportTarget, [...stages.map((s, i) => ({ value: String(i), label: s.name })), { value: 'panel', label: t('export_panel') }]);
  if (!el.exportTarget.value) el.exportTarget.value = 'panel';
}

function setExportEnabled(enabled) {
  for (const b of [el.exportPng, el.exportSvg, el.exportJson, el.exportTarget]) b.disabled = !enabled;
}

function syncHeadControls() {
  const choices = view.headChoices.length ? view.headChoices : [state.heads];
  el.heads.min = '0';
  el.heads.max = String(Math.max(0, choices.length - 1));
  const index = Math.max(0, choices.indexOf(state.heads));
  el.heads.value = String(index);
  const width = state.mechanism === 'diff_transformer' ? (modelWidth() / state.heads / 2) : modelWidth() / state.heads;
  el.headsOut.textContent = Number.isInteger(width) ? `${state.heads} · d_h = ${width}` : String(state.heads);
  el.heads.setAttribute('aria-valuetext', t('heads_valuetext', { h: state.heads }));
  const options = [];
  for (let h = 0; h < state.heads; h++) options.push({ value: String(h), label: t('head_option', { n: h + 1, total: state.heads }) });
  if (el.head.options.length !== options.length || el.head.dataset.lang !== state.lang) {
    setOptions(el.head, options);
    el.head.dataset.lang = state.lang;
  }
  el.head.value = String(Math.min(state.head, state.heads - 1));
}

function modelWidth() {
  return view.spec?.dModel ?? view.modelInfo?.d_model ?? 64;
}

function updateShiftOutput() {
  const n = view.empty ? 0 : keyCount();
  el.shiftOut.textContent = n > 0 ? t('shift_value', { k: state.k, m: shiftModulo(state.k, n) }) : t('shift_value_empty', { k: state.k });
  el.shift.setAttribute('aria-valuetext', el.shiftOut.textContent);
}

function updateOutputs() {
  updateShiftOutput();
  el.alphaOut.textContent = fmt(state.alpha, 1);
  el.betaOut.textContent = fmt(state.beta, 1);
  el.gammaOut.textContent = fmt(state.gamma, 1);
  el.tauOut.textContent = fmt(state.tau, 1);
  el.windowOut.textContent = String(state.window);
}

/** Shows the controls that apply to the mechanism, hides the rest. */
function updateVisibility() {
  const mechanism = state.mechanism;
  for (const node of document.querySelectorAll('[data-mech]')) {
    node.hidden = !node.dataset.mech.split(' ').includes(mechanism);
  }
  // A spec brings one gate per head; the sliders take over (same α, β, γ for every head) once moved.
  el.gateSpecNote.hidden = !(view.spec && view.spec.specGate);
  el.gateLearnedNote.hidden = !(!view.spec && view.modelInfo?.trained && view.settings?.gate_learned && mechanism === 'shift_diff');
}

/** state -> every control. */
function syncControls() {
  if (el.sentence.value !== state.text) el.sentence.value = state.text;
  el.model.value = state.model;
  el.mechanism.value = state.mechanism;
  el.causal.checked = state.causal;
  el.allHeads.checked = state.allHeads;
  el.shift.value = String(state.k);
  el.difference.value = state.difference;
  el.fill.value = state.fill;
  el.renormalize.value = state.renormalize;
  el.alpha.value = String(state.alpha);
  el.beta.value = String(state.beta);
  el.gamma.value = String(state.gamma);
  el.tau.value = String(state.tau);
  el.window.value = String(state.window);
  syncHeadControls();
  updateOutputs();
  updateVisibility();
}

/** After any change of `state`: re-render next frame, rewrite the address soon. */
function changed() {
  scheduleUrl();
  schedule('render');
}

function wireControls() {
  el.sentence.addEventListener('input', () => {
    if (view.spec) leaveSpec({ restore: false });
    state.text = el.sentence.value;
    changed();
  });
  el.presets.addEventListener('change', () => {
    const [lang, i] = el.presets.value.split(':');
    const text = PRESETS[lang]?.[Number(i)];
    if (text === undefined) return;
    if (view.spec) leaveSpec({ restore: false });
    state.text = text;
    el.sentence.value = text;
    el.presets.value = '';
    changed();
  });
  el.mechanism.addEventListener('change', () => {
    state.mechanism = el.mechanism.value;
    updateVisibility();
    if (state.model === 'trained' && !view.spec && ex && !engineDead) {
      // The trained model of that mechanism, at the settings it was trained with.
      scheduleUrl();
      loadTrained(state.mechanism);
      return;
    }
    changed();
  });
  el.model.addEventListener('change', () => setModelChoice(el.model.value));
  el.backToTrained.addEventListener('click', () => {
    if (state.model === 'trained' && ex && !engineDead) loadTrained(state.mechanism);
  });
  el.causal.addEventListener('change', () => {
    state.causal = el.causal.checked;
    changed();
  });
  el.heads.addEventListener('input', () => {
    const choice = view.headChoices[Number(el.heads.value)];
    if (choice === undefined) return;
    state.heads = choice;
    if (state.head >= state.heads) state.head = state.heads - 1;
    syncHeadControls();
    changed();
  });
  el.head.addEventListener('change', () => {
    state.head = Number(el.head.value);
    changed();
  });
  el.allHeads.addEventListener('change', () => {
    state.allHeads = el.allHeads.checked;
    changed();
  });
  el.shift.addEventListener('input', () => {
    state.k = Number(el.shift.value);
    updateShiftOutput();
    changed();
  });
  for (const [id, key] of [['difference', 'difference'], ['fill', 'fill'], ['renormalize', 'renormalize']]) {
    el[id].addEventListener('change', () => {
      state[key] = el[id].value;
      changed();
    });
  }
  for (const id of ['alpha', 'beta', 'gamma', 'tau', 'window']) {
    el[id].addEventListener('input', () => {
      state[id] = Number(el[id].value);
      if (view.spec && ['alpha', 'beta', 'gamma'].includes(id)) {
        view.spec.specGate = false;
        updateVisibility();
      }
      updateOutputs();
      changed();
    });
  }
  el.langToggle.addEventListener('click', () => {
    const next = LANGUAGES[(LANGUAGES.indexOf(state.lang) + 1) % LANGUAGES.length];
    setLanguage(next);
  });
  el.specFile.addEventListener('change', () => {
    const file = el.specFile.files?.[0];
    el.specFile.value = '';
    if (file) loadSpecFile(file);
  });
  el.specBack.addEventListener('click', () => leaveSpec({ restore: true }));
  el.exportPng.addEventListener('click', () => exportPng().catch((err) => reportEngineError(err)));
  el.exportSvg.addEventListener('click', () => guarded(exportSvg));
  el.exportJson.addEventListener('click', () => guarded(exportJson));
  darkQuery.addEventListener('change', () => {
    applyTheme();
    schedule('render');
  });
  wireDragAndDrop();
}

function guarded(fn) {
  if (!ex || engineDead) return;
  try {
    fn();
  } catch (err) {
    reportEngineError(err);
  }
}

// ---------------------------------------------------------------------------------------
// Language and theme

function setLanguage(lang) {
  state.lang = lang;
  applyLanguage();
  scheduleUrl();
  if (ex) {
    updateFigureText();
    updateStatus();
    fillExportTargets();
    lastTableKey = '';
    scheduleTable();
    schedule('overlay');
  }
}

function applyLanguage() {
  el.html.lang = state.lang === 'zh' ? 'zh-Hans' : 'en';
  document.title = t('page_title');
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const node of document.querySelectorAll('[data-i18n-aria-label]')) node.setAttribute('aria-label', t(node.dataset.i18nAriaLabel));
  const other = LANGUAGES[(LANGUAGES.indexOf(state.lang) + 1) % LANGUAGES.length];
  el.langToggle.lang = other === 'zh' ? 'zh-Hans' : 'en';
  fillPresets();
  syncHeadControls();
  updateOutputs();
  updateModelStatus();
  paintPrediction();
  updateWeightsLoading();
  el.footer.textContent = t('footer', { v: safeVersion() });
  for (const b of el.messages.querySelectorAll('[data-role="dismiss"]')) b.setAttribute('aria-label', t('dismiss'));
  if (view.spec) el.specBannerText.textContent = t('spec_active', { name: view.spec.name, n: view.spec.tokens.length });
  lastCellKey = '';
}

function applyTheme() {
  el.html.dataset.theme = resolvedTheme();
  highlightColors = null;
}

function safeVersion() {
  try {
    return ex ? version() : '';
  } catch {
    return '';
  }
}

function updateModelStatus() {
  const info = view.modelInfo;
  el.modelStatus.hidden = !info;
  if (!info) return;
  if (view.spec) {
    el.modelStatus.textContent = t('model_spec', { name: view.spec.name, d: modelWidth() });
    return;
  }
  el.modelStatus.dataset.model = info.trained ? 'trained' : 'untrained';
  if (weights.pending && state.model === 'trained') {
    el.modelStatus.textContent = t('model_loading', { mech: mechName(weights.loadingMechanism) });
    return;
  }
  el.modelStatus.textContent = info.trained
    ? t('model_trained', { mech: mechName(info.mechanism ?? info.trained_with?.mechanism), d: info.d_model })
    : t('model_untrained', { d: info.d_model });
}

function mechName(mechanism) {
  const key = `mech_${mechanism}`;
  return key in STRINGS.en ? t(key) : String(mechanism ?? '');
}

// ---------------------------------------------------------------------------------------
// The address

let urlTimer = null;
let urlDirty = false;
let lastUrlAt = -Infinity;

function scheduleUrl() {
  urlDirty = true;
  if (urlTimer !== null) return;
  const wait = Math.max(0, lastUrlAt + URL_INTERVAL_MS - performance.now());
  urlTimer = setTimeout(flushUrl, wait);
}

function flushUrl() {
  if (urlTimer !== null) {
    clearTimeout(urlTimer);
    urlTimer = null;
  }
  if (!urlDirty) return;
  urlDirty = false;
  lastUrlAt = performance.now();
  // While a spec file is drawn the address keeps describing the sentence view.
  const described = view.spec ? { ...view.spec.savedState, lang: state.lang } : state;
  const url = `${location.pathname}?${encodeState(described, addressDefaults(described))}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(history.state, '', url);
}

/**
 * With a trained model the address names only what a person moved away from the model's
 * trained settings (and the learned gate is never written), so a reload means the same.
 */
function addressDefaults(described) {
  const trainedWith = view.modelInfo?.trained ? view.modelInfo.trained_with : null;
  if (!trainedWith || state.model !== 'trained') return DEFAULTS;
  const base = { ...DEFAULTS, ...settingsToState(trainedWith), mechanism: DEFAULTS.mechanism };
  const gateUnmoved = applied.get('gate') === `${described.alpha},${described.beta},${described.gamma}`;
  if (view.settings?.gate_learned && gateUnmoved && !view.spec) Object.assign(base, { alpha: described.alpha, beta: described.beta, gamma: described.gamma });
  return base;
}

// ---------------------------------------------------------------------------------------
// Trained weights

/** The engine's settings object in the page's state keys. */
function settingsToState(s) {
  return {
    mechanism: s.mechanism,
    heads: s.heads,
    causal: s.causal,
    k: s.shift,
    difference: s.difference,
    fill: s.fill,
    renormalize: s.renormalize,
    alpha: s.alpha,
    beta: s.beta,
    gamma: s.gamma,
    tau: s.tau,
    window: s.window,
  };
}

function fetchManifest() {
  if (!weights.manifestPromise) {
    const promise = fetch(new URL('manifest.json', WEIGHTS_BASE))
      .then((res) => {
        if (!res.ok) throw new Error(`manifest.json: HTTP ${res.status}`);
        return res.json();
      })
      .then((manifest) => {
        weights.manifest = manifest;
        return manifest;
      });
    promise.catch(() => {
      if (weights.manifestPromise === promise) weights.manifestPromise = null;
    });
    weights.manifestPromise = promise;
  }
  return weights.manifestPromise;
}

function manifestEntry(mechanism) {
  return weights.manifest?.models?.find((m) => m.mechanism === mechanism) ?? null;
}

/**
 * The bytes of a mechanism's weights, fetched once (a failed fetch is tried again next time).
 * Read with arrayBuffer(), not a body stream: see loadWasm about Chromium and streams.
 */
function fetchWeights(mechanism) {
  let promise = weights.buffers.get(mechanism);
  if (!promise) {
    promise = (async () => {
      await fetchManifest();
      const entry = manifestEntry(mechanism);
      if (!entry) throw new Error(t('weights_missing'));
      const res = await fetch(new URL(entry.file, WEIGHTS_BASE));
      if (!res.ok) throw new Error(`${entry.file}: HTTP ${res.status}`);
      return res.arrayBuffer();
    })();
    promise.catch(() => {
      if (weights.buffers.get(mechanism) === promise) weights.buffers.delete(mechanism);
    });
    weights.buffers.set(mechanism, promise);
  }
  return promise;
}

function updateWeightsLoading() {
  const loading = !!weights.pending && state.model === 'trained';
  el.weightsLoading.hidden = !loading;
  if (!loading) return;
  const entry = manifestEntry(weights.loadingMechanism);
  const kb = entry ? Math.round(entry.bytes / 1024) : '…';
  el.weightsLoadingText.textContent = t('weights_loading', { mech: mechName(weights.loadingMechanism), kb });
}

/**
 * Loads `mechanism`'s trained model and its settings; `keep` names the state keys that stay
 * as they are (the address's, at start). Later calls win over earlier ones still in flight.
 * A failure shows a message and falls back to the untrained model.
 */
function loadTrained(mechanism, keep = new Set()) {
  const id = ++weights.loadId;
  weights.loadingMechanism = mechanism;
  el.weightsProgress.removeAttribute('value');
  const job = (async () => {
    let buffer;
    try {
      buffer = await fetchWeights(mechanism);
    } catch (err) {
      if (id === weights.loadId && state.model === 'trained') fallBackToUntrained(mechanism, err);
      return;
    }
    if (id !== weights.loadId || state.model !== 'trained' || !ex || engineDead) return;
    try {
      view.modelInfo = ex.load_model(new Uint8Array(buffer));
    } catch (err) {
      if (err instanceof WebAssembly.RuntimeError) {
        reportEngineError(err);
        return;
      }
      fallBackToUntrained(mechanism, err);
      return;
    }
    clearMessage('weights');
    adoptEngineSettings(keep);
  })();
  const pending = job.finally(() => {
    if (weights.pending === pending) {
      weights.pending = null;
      el.weightsProgress.value = 1;
      updateWeightsLoading();
      updateModelStatus();
      schedule('render');
    }
  });
  weights.pending = pending;
  updateWeightsLoading();
  updateModelStatus();
  return pending;
}

/** After the engine changed model: its settings become the page's (except `keep`), and nothing is re-sent. */
function adoptEngineSettings(keep = new Set()) {
  const fromEngine = settingsToState(ex.settings());
  for (const [key, value] of Object.entries(fromEngine)) {
    if (!keep.has(key)) state[key] = value;
    applied.set(key, value);
  }
  applied.set('gate', `${fromEngine.alpha},${fromEngine.beta},${fromEngine.gamma}`);
  // Another model may cut the sentence into other tokens; the head is sent again.
  applied.delete('text');
  applied.delete('head');
  view.headChoices = Array.from(ex.head_choices());
  if (!view.headChoices.includes(state.heads)) state.heads = nearestChoice(view.headChoices, state.heads);
  if (state.head >= state.heads) state.head = state.heads - 1;
  view.settings = ex.settings();
  view.selected = null;
  view.hover = null;
  updateModelStatus();
  syncControls();
  changed();
}

function fallBackToUntrained(mechanism, err) {
  showMessage('weights', t('weights_failed', { mech: mechName(mechanism), msg: messageOf(err) }));
  state.model = 'untrained';
  if (!ex || engineDead) return;
  try {
    view.modelInfo = ex.use_untrained();
  } catch (again) {
    reportEngineError(again);
    return;
  }
  // The engine keeps its settings; the mechanism the person chose is sent again.
  applied.delete('mechanism');
  applied.delete('text');
  view.headChoices = [];
  updateModelStatus();
  syncControls();
  changed();
}

function setModelChoice(choice) {
  if (choice === state.model) return;
  state.model = choice;
  scheduleUrl();
  if (!ex || engineDead) return;
  if (choice === 'trained') {
    clearMessage('weights');
    if (view.spec) leaveSpec({ restore: false });
    loadTrained(state.mechanism);
    return;
  }
  weights.loadId += 1; // a load in flight is dropped
  clearMessage('weights');
  try {
    view.modelInfo = ex.use_untrained();
    adoptEngineSettings();
  } catch (err) {
    reportEngineError(err);
  }
}

/** The prediction under the current settings, after every render. */
function updatePrediction() {
  try {
    // With an empty box the engine still holds the last sentence: no prediction for it.
    view.prediction = view.empty ? null : ex.prediction() ?? null;
    view.settings = ex.settings();
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) throw err;
    view.prediction = null;
  }
  updateVisibility();
  paintPrediction();
}

function predictionReason() {
  if (state.model === 'trained' && (weights.pending || !view.modelInfo)) return 'prediction_none_loading';
  if (!view.modelInfo?.trained) return 'prediction_none_untrained';
  if (view.spec) return 'prediction_none_spec';
  if (view.empty) return 'prediction_none_empty';
  return 'prediction_none_mechanism';
}

function paintPrediction() {
  const p = view.prediction;
  const box = el.prediction;
  if (p) {
    // A probability never reaches 1: above 99.5 % the page says "> 99" rather than "100".
    const percent = p.probability >= 0.995 ? '> 99' : String(Math.round(p.probability * 100));
    box.dataset.label = p.label;
    box.dataset.probability = String(p.probability);
    el.predictionValue.textContent = t('prediction_value', { label: t(`sentiment_${p.label}`), p: percent });
    el.predictionMeter.hidden = false;
    el.predictionMeter.title = t('prediction_meter', { p: percent });
    el.predictionBar.style.width = `${(p.probability * 100).toFixed(1)}%`;
    el.predictionReason.textContent = '';
  } else {
    box.dataset.label = 'none';
    delete box.dataset.probability;
    el.predictionValue.textContent = '—';
    el.predictionMeter.hidden = true;
    el.predictionReason.textContent = t(predictionReason());
  }
  paintTrainedWith();
}

/** "Trained with: …" and, when the settings moved away from it, a notice saying so. */
function paintTrainedWith() {
  const info = view.modelInfo;
  const trainedWith = info?.trained && !view.spec ? info.trained_with : null;
  el.trainedWith.hidden = !trainedWith;
  if (!trainedWith) {
    el.movedAway.hidden = true;
    return;
  }
  const parts = [mechName(trainedWith.mechanism), t('tw_heads', { h: trainedWith.heads })];
  if (trainedWith.mechanism === 'shift_diff') parts.push(`k = ${trainedWith.shift}`);
  if (trainedWith.mechanism === 'cosine') parts.push(`τ = ${fmt(trainedWith.tau, 1)}`);
  if (trainedWith.mechanism === 'local') parts.push(`w = ${trainedWith.window}`);
  parts.push(t(trainedWith.causal ? 'tw_causal' : 'tw_no_causal'));
  let settings = parts.join(state.lang === 'zh' ? '，' : ', ');
  const acc = manifestEntry(trainedWith.mechanism)?.test_int8;
  if (acc?.en && acc?.zh) {
    const pct = (a) => (a * 100).toFixed(1);
    settings = t('trained_with_accuracy', { settings, en: pct(acc.en.accuracy), zh: pct(acc.zh.accuracy) });
  }
  el.trainedWith.textContent = t('trained_with', { settings });
  const now = view.settings;
  const moved = [];
  if (now && now.mechanism === trainedWith.mechanism) {
    if (now.heads !== trainedWith.heads) moved.push('heads');
    if (now.causal !== trainedWith.causal) moved.push('causal');
    if (trainedWith.mechanism === 'shift_diff') {
      if (now.shift !== trainedWith.shift) moved.push('shift');
      for (const key of ['difference', 'fill', 'renormalize']) if (now[key] !== trainedWith[key]) moved.push(key);
      if (!now.gate_learned) moved.push('gate');
    }
    if (trainedWith.mechanism === 'cosine' && Math.abs(now.tau - trainedWith.tau) > 1e-6) moved.push('tau');
    if (trainedWith.mechanism === 'local' && now.window !== trainedWith.window) moved.push('window');
  }
  el.movedAway.hidden = moved.length === 0;
  if (moved.length) {
    el.movedAwayText.textContent = t('moved_away', { what: moved.map((m) => t(`moved_${m}`)).join(state.lang === 'zh' ? '、' : ', ') });
  }
}

// ---------------------------------------------------------------------------------------
// Bring your own: spec files

function wireDragAndDrop() {
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
  document.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth += 1;
    el.dropOverlay.hidden = false;
  });
  document.addEventListener('dragover', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('dragleave', (event) => {
    if (!hasFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) el.dropOverlay.hidden = true;
  });
  document.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    el.dropOverlay.hidden = true;
    const file = event.dataTransfer.files?.[0];
    if (file) loadSpecFile(file);
  });
}

async function loadSpecFile(file) {
  if (!ex || engineDead) return;
  let text;
  try {
    text = await file.text();
  } catch {
    showMessage('spec', t('spec_read_error', { name: file.name }));
    return;
  }
  loadSpecText(text, file.name);
}

function loadSpecText(text, name) {
  let info;
  try {
    info = ex.load_spec(text);
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) {
      reportEngineError(err);
      return;
    }
    showMessage('spec', t('spec_error', { name, msg: messageOf(err) }));
    return;
  }
  clearMessage('spec');
  let spec = {};
  try {
    spec = JSON.parse(text);
  } catch {
    // load_spec accepted it, so it is JSON; keep going with the defaults if not.
  }
  const savedState = view.spec ? view.spec.savedState : { ...state };
  view.spec = {
    name,
    tokens: Array.from(info.tokens ?? []),
    savedState,
    mechanism: spec.mechanism ?? state.mechanism,
    specGate: spec.mechanism === 'shift_diff',
    dModel: Array.isArray(spec.x?.[0]) ? spec.x[0].length : undefined,
  };
  adoptSpec(spec);
  view.selected = null;
  view.hover = null;
  el.specBannerText.textContent = t('spec_active', { name, n: view.spec.tokens.length });
  el.specBanner.hidden = false;
  updateModelStatus();
  syncControls();
  schedule('render');
}

/** The spec sets the engine's parameters: show them in the controls, and do not re-send them. */
function adoptSpec(spec) {
  const take = (key, value, valid) => {
    if (valid(value)) state[key] = value;
  };
  take('mechanism', spec.mechanism, (v) => typeof v === 'string');
  take('heads', spec.heads, Number.isInteger);
  take('causal', spec.causal, (v) => typeof v === 'boolean');
  take('k', spec.shift, Number.isInteger);
  take('difference', spec.difference, (v) => typeof v === 'string');
  take('renormalize', spec.renormalize, (v) => typeof v === 'string');
  take('fill', spec.shift_fill ?? 'circular', (v) => typeof v === 'string');
  take('tau', spec.tau, (v) => typeof v === 'number');
  take('window', spec.window, Number.isInteger);
  state.head = 0;
  state.allHeads = false;
  for (const key of ['mechanism', 'heads', 'head', 'causal', 'k', 'difference', 'renormalize', 'fill', 'tau', 'window']) {
    applied.set(key, state[key]);
  }
  applied.set('gate', `${state.alpha},${state.beta},${state.gamma}`);
  view.headChoices = Array.from(ex.head_choices());
  if (!view.headChoices.includes(state.heads)) view.headChoices = [state.heads];
}

function leaveSpec({ restore }) {
  if (!view.spec) return;
  const saved = view.spec.savedState;
  try {
    const info = ex.clear_spec();
    view.sentence = { tokens: Array.from(info?.tokens ?? []), total: info?.total ?? 0, truncated: !!info?.truncated };
  } catch (err) {
    reportEngineError(err);
  }
  view.spec = null;
  el.specBanner.hidden = true;
  updateModelStatus();
  if (restore) Object.assign(state, saved, { lang: state.lang });
  // The engine is back on the sentence with its own parameters: send everything again.
  applied.clear();
  view.headChoices = [];
  view.selected = null;
  view.hover = null;
  syncControls();
  changed();
  if (state.model === 'trained' && view.modelInfo?.trained_with && view.modelInfo.trained_with.mechanism !== state.mechanism) {
    loadTrained(state.mechanism);
  }
}

// ---------------------------------------------------------------------------------------
// Export: downloads through an <a download> and a Blob URL.

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = make('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

function exportBase() {
  return view.spec ? view.spec.name.replace(/\.json$/i, '').replace(/[^\w.-]+/g, '_') || 'spec' : 'diffattn';
}

function toBlob(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
  });
}

async function exportPng() {
  if (!ex || engineDead || view.empty) return;
  const target = el.exportTarget.value;
  const head = `head${state.head + 1}`;
  let canvases = view.figures.map((f) => f.canvas);
  let name;
  if (state.allHeads && target !== 'panel') {
    // The stage canvases are not on screen: draw the stage once, off screen, at the size of a map.
    const size = view.figures[0]?.canvas.width || 800;
    const all = view.stages.map(() => {
      const c = make('canvas');
      c.width = size;
      c.height = size;
      return c;
    });
    ex.render(all, fontPx());
    canvases = [all[Number(target)]].filter(Boolean);
    schedule('render');
  } else if (target !== 'panel') {
    canvases = [canvases[Number(target)]].filter(Boolean);
  }
  if (target === 'panel') {
    name = state.allHeads ? `${exportBase()}-all-heads.png` : `${exportBase()}-panel-${head}.png`;
  } else {
    name = `${exportBase()}-${view.stages[Number(target)]?.id ?? 'map'}-${head}.png`;
  }
  if (canvases.length === 0) return;
  const blob = canvases.length === 1 ? await toBlob(canvases[0]) : await toBlob(composite(canvases));
  download(blob, name);
}

/** The maps on one canvas, in a row (or a grid for many heads), on the page's surface colour. */
function composite(canvases) {
  const gap = Math.round(16 * (window.devicePixelRatio || 1));
  const perRow = canvases.length <= 6 ? canvases.length : Math.ceil(Math.sqrt(canvases.length));
  const rows = Math.ceil(canvases.length / perRow);
  const w = Math.max(...canvases.map((c) => c.width));
  const h = Math.max(...canvases.map((c) => c.height));
  const out = make('canvas');
  out.width = perRow * w + (perRow + 1) * gap;
  out.height = rows * h + (rows + 1) * gap;
  const ctx = out.getContext('2d');
  ctx.fillStyle = colors().surface;
  ctx.fillRect(0, 0, out.width, out.height);
  canvases.forEach((c, i) => {
    const x = gap + (i % perRow) * (w + gap);
    const y = gap + Math.floor(i / perRow) * (h + gap);
    ctx.drawImage(c, x, y);
  });
  return out;
}

function exportSvg() {
  if (view.empty) return;
  const target = el.exportTarget.value;
  const head = `head${state.head + 1}`;
  const svg = target === 'panel' ? ex.export_panel_svg() : ex.export_svg(Number(target));
  const id = target === 'panel' ? 'panel' : view.stages[Number(target)]?.id ?? 'map';
  download(new Blob([svg], { type: 'image/svg+xml' }), `${exportBase()}-${id}-${head}.svg`);
}

function exportJson() {
  if (view.empty) return;
  download(new Blob([ex.export_json()], { type: 'application/json' }), `${exportBase()}-stages.json`);
}

// ---------------------------------------------------------------------------------------
// Start

/**
 * Instantiates the wasm module (compiled while it streams in). The progress bar is
 * indeterminate: reading the response body from JavaScript to count bytes made Chromium
 * report the request as aborted now and then, although the module loaded.
 */
async function loadWasm() {
  await init({ module_or_path: new URL('../pkg/diffattn_bg.wasm', import.meta.url) });
}

function applyEmbed() {
  document.body.classList.toggle('embed', state.embed);
}

async function main() {
  applyEmbed();
  applyTheme();
  applyLanguage();
  syncControls();
  setExportEnabled(false);
  wireControls();
  // The weights download while the engine compiles.
  if (state.model === 'trained') fetchWeights(state.mechanism).catch(() => {});
  else fetchManifest().catch(() => {});
  try {
    await loadWasm();
    ex = new Explorer();
    view.modelInfo = ex.model_info();
  } catch (err) {
    el.loading.hidden = true;
    showMessage('load', t('load_failed', { msg: messageOf(err) }));
    return;
  }
  el.loading.hidden = true;
  updateModelStatus();
  el.footer.textContent = t('footer', { v: safeVersion() });
  window.diffattn = {
    explorer: ex,
    render: () => {
      renderNow();
      return { ...timings };
    },
    timings,
    state,
    settled,
    version: safeVersion(),
  };
  if (state.model === 'trained') {
    // The first maps wait for the trained model (about 280 KB); the address's settings win.
    await loadTrained(state.mechanism, addressSettings);
  }
  try {
    renderNow();
  } catch (err) {
    reportEngineError(err);
  }
  syncControls();
  // Mark ready after the first paint reached the screen.
  requestAnimationFrame(() => {
    document.body.dataset.ready = 'true';
  });
}

main();
