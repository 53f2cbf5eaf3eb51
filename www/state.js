// The view's state and its place in the page address.
//
// Everything a person can set (the sentence and every control) is one plain object,
// `state`; `encodeState` writes it to a query string and `decodeState` reads it back,
// replacing anything missing or malformed with the default, so any address, however
// mangled, opens a working page. Pure functions, no DOM: tests/e2e/state.test.mjs runs
// them under node.

import { parseLanguage } from './i18n.js';

export const MECHANISMS = ['shift_diff', 'standard', 'diff_transformer', 'input_diff', 'cosine', 'local'];
export const DIFFERENCES = ['single', 'symmetric'];
export const FILLS = ['circular', 'zero'];
export const RENORMALIZATIONS = ['none', 'softmax'];
export const THEMES = ['auto', 'light', 'dark'];
/** Which weights draw the sentence: the trained model (default) or the untrained seeded one. */
export const MODELS = ['trained', 'untrained'];

/** Slider ranges; the page's inputs use the same numbers. */
export const RANGES = {
  k: { min: -24, max: 24, step: 1 },
  alpha: { min: -10, max: 10, step: 0.1 },
  beta: { min: -10, max: 10, step: 0.1 },
  gamma: { min: -10, max: 10, step: 0.1 },
  tau: { min: 0.1, max: 20, step: 0.1 },
  window: { min: 0, max: 32, step: 1 },
};

/** The longest sentence kept in the address, in UTF-16 code units; the box itself takes any length. */
export const MAX_TEXT_IN_ADDRESS = 20_000;

export const DEFAULTS = Object.freeze({
  text: 'The acting is wonderful, but the plot is thin.',
  mechanism: 'shift_diff',
  heads: 4,
  head: 0, // 0-based here; the address and the page count heads from 1
  causal: false,
  k: 1,
  difference: 'single',
  fill: 'circular',
  renormalize: 'none',
  alpha: 1,
  beta: 1,
  gamma: 0,
  tau: 1,
  window: 2,
  allHeads: false,
  lang: 'en',
  embed: false,
  theme: 'auto',
  model: 'trained',
});

/** Rounds `value` to the slider's step and clamps it into the slider's range. */
export function snap(value, { min, max, step }) {
  const stepped = Math.round((value - min) / step) * step + min;
  const clamped = Math.min(max, Math.max(min, stepped));
  // Decimal steps leave binary dust (0.30000000000000004); keep the digits the step has.
  const digits = (String(step).split('.')[1] ?? '').length;
  return Number(clamped.toFixed(digits));
}

function parseNumber(raw, range, fallback) {
  if (raw === null || raw.trim() === '') return fallback;
  const value = Number(raw);
  return Number.isFinite(value) ? snap(value, range) : fallback;
}

function parseChoice(raw, choices, fallback) {
  return choices.includes(raw) ? raw : fallback;
}

function parseBool(raw, fallback) {
  if (raw === null) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  return fallback;
}

function parsePositiveInt(raw, max, fallback) {
  if (raw === null) return fallback;
  const value = Number(raw);
  return Number.isInteger(value) && value >= 1 && value <= max ? value : fallback;
}

/**
 * The state an address describes. `search` is `location.search` (with or without `?`);
 * `fallback` supplies what the address leaves out (the language from the browser, the
 * default sentence in that language).
 */
export function decodeState(search, fallback = {}) {
  const base = { ...DEFAULTS, ...fallback };
  const p = new URLSearchParams(search);
  const lang = parseLanguage(p.get('lang')) ?? base.lang;
  const text = p.has('text') ? p.get('text').slice(0, MAX_TEXT_IN_ADDRESS) : base.text;
  return {
    text,
    mechanism: parseChoice(p.get('mech'), MECHANISMS, base.mechanism),
    heads: parsePositiveInt(p.get('heads'), 4096, base.heads),
    head: parsePositiveInt(p.get('head'), 4096, base.head + 1) - 1,
    causal: parseBool(p.get('causal'), base.causal),
    k: parseNumber(p.get('k'), RANGES.k, base.k),
    difference: parseChoice(p.get('diff'), DIFFERENCES, base.difference),
    fill: parseChoice(p.get('fill'), FILLS, base.fill),
    renormalize: parseChoice(p.get('renorm'), RENORMALIZATIONS, base.renormalize),
    alpha: parseNumber(p.get('alpha'), RANGES.alpha, base.alpha),
    beta: parseNumber(p.get('beta'), RANGES.beta, base.beta),
    gamma: parseNumber(p.get('gamma'), RANGES.gamma, base.gamma),
    tau: parseNumber(p.get('tau'), RANGES.tau, base.tau),
    window: parseNumber(p.get('w'), RANGES.window, base.window),
    allHeads: parseBool(p.get('all'), base.allHeads),
    lang,
    embed: parseBool(p.get('embed'), base.embed),
    theme: parseChoice(p.get('theme'), THEMES, base.theme),
    model: parseChoice(p.get('model'), MODELS, base.model),
  };
}

/**
 * The query string (without `?`) for `state`. The sentence and the language are always
 * written, so a link means the same thing in every browser; other values only when they
 * differ from the defaults, to keep links short. `defaults` may replace the settings
 * defaults (the page passes the trained model's settings, so an address only names what a
 * person moved away from).
 */
export function encodeState(state, defaults = DEFAULTS) {
  const DEFAULTS_ = { ...DEFAULTS, ...defaults };
  const p = new URLSearchParams();
  p.set('text', String(state.text).slice(0, MAX_TEXT_IN_ADDRESS));
  p.set('lang', state.lang);
  const put = (key, value, fallback, write = String) => {
    if (value !== fallback) p.set(key, write(value));
  };
  put('mech', state.mechanism, DEFAULTS_.mechanism);
  put('heads', state.heads, DEFAULTS_.heads);
  put('head', state.head, DEFAULTS_.head, (h) => String(h + 1));
  put('causal', state.causal, DEFAULTS_.causal, (b) => (b ? '1' : '0'));
  put('k', state.k, DEFAULTS_.k);
  put('diff', state.difference, DEFAULTS_.difference);
  put('fill', state.fill, DEFAULTS_.fill);
  put('renorm', state.renormalize, DEFAULTS_.renormalize);
  put('alpha', state.alpha, DEFAULTS_.alpha);
  put('beta', state.beta, DEFAULTS_.beta);
  put('gamma', state.gamma, DEFAULTS_.gamma);
  put('tau', state.tau, DEFAULTS_.tau);
  put('w', state.window, DEFAULTS_.window);
  put('all', state.allHeads, DEFAULTS_.allHeads, (b) => (b ? '1' : '0'));
  put('embed', state.embed, DEFAULTS_.embed, (b) => (b ? '1' : '0'));
  put('theme', state.theme, DEFAULTS_.theme);
  put('model', state.model, DEFAULTS.model);
  return p.toString();
}

/** `k mod L` in [0, L) for any integer k (JavaScript's % keeps the sign of k). */
export function shiftModulo(k, length) {
  if (!(length > 0)) return 0;
  return ((k % length) + length) % length;
}

/** The valid head count nearest to `wanted` (ties go to the smaller), from `choices` in any order. */
export function nearestChoice(choices, wanted) {
  let best = choices[0];
  for (const c of choices) {
    if (Math.abs(c - wanted) < Math.abs(best - wanted) || (Math.abs(c - wanted) === Math.abs(best - wanted) && c < best)) {
      best = c;
    }
  }
  return best;
}
