// The explorer's state: what a person (or an author, through attributes) can set, under one
// name each, the same in the address, on the custom element and in the engine's settings
// (`shift`, `difference`, `renormalize`, never `k`, `diff` or `renorm`). Pure functions, no
// DOM: tests/e2e/page-logic.test.mjs runs them under node.
//
// The defaults of the engine's settings are Rust's (`defaults()` from the wasm module); the
// names of mechanisms and choices are Rust's too (`names()`); this module only knows which
// keys exist, their kinds, and the slider ranges.

import { parseViewport } from './viewport.js';

/** Every key of the state, with its kind. `head` counts from 1, as the page shows it. */
export const STATE_KEYS = Object.freeze({
  text: 'text',
  mechanism: 'mechanism',
  heads: 'int',
  head: 'int',
  causal: 'bool',
  shift: 'range',
  difference: 'difference',
  fill: 'fill',
  renormalize: 'renormalize',
  alpha: 'range',
  beta: 'range',
  gamma: 'range',
  tau: 'range',
  window: 'range',
  segment: 'range',
  lambda: 'range',
  all_heads: 'bool',
  all_heads_stage: 'stage',
  shared_scale: 'bool',
  row: 'count',
  view: 'view',
  step: 'step',
  present: 'bool',
  viewport: 'viewport',
  weights: 'weights',
  lang: 'lang',
  theme: 'theme',
});

/** What the explorer shows until told otherwise, beyond the engine's own defaults. */
export const PAGE_DEFAULTS = Object.freeze({
  all_heads: false,
  all_heads_stage: '',
  shared_scale: false,
  row: 0,
  view: 'explore',
  step: '',
  present: false,
  viewport: '',
  weights: 'trained',
  lang: 'en',
  theme: 'auto',
});

/** The keys the engine holds (`Explorer.settings()` returns them all). */
export const ENGINE_KEYS = Object.freeze([
  'mechanism',
  'heads',
  'head',
  'causal',
  'shift',
  'difference',
  'fill',
  'renormalize',
  'alpha',
  'beta',
  'gamma',
  'tau',
  'window',
  'segment',
  'lambda',
]);

/** Slider ranges; the controls use the same numbers. */
export const RANGES = Object.freeze({
  shift: { min: -24, max: 24, step: 1 },
  alpha: { min: -10, max: 10, step: 0.1 },
  beta: { min: -10, max: 10, step: 0.1 },
  gamma: { min: -10, max: 10, step: 0.1 },
  tau: { min: 0.1, max: 20, step: 0.1 },
  window: { min: 0, max: 32, step: 1 },
  segment: { min: 1, max: 32, step: 1 },
  // λ of both Differential Transformers: learned values lie in about 0.1 to 0.9 (V2's in
  // (0, 1), a sigmoid); the slider reaches past them both ways to show what λ does.
  lambda: { min: -1, max: 2, step: 0.01 },
});

/** Choices that are the page's own, not the engine's. */
export const PAGE_CHOICES = Object.freeze({
  weights: ['trained', 'untrained'],
  lang: ['en', 'zh'],
  theme: ['auto', 'light', 'dark'],
  view: ['explore', 'walk', 'compare'],
});

/** The guided walk's last step, after the mechanism's stages: the layer's output. */
export const OUTPUT_STEP = 'output';

/** The longest head count or head index a text may name. */
const MAX_HEADS = 4096;

/** Rounds `value` to the slider's step and clamps it into the slider's range. */
export function snap(value, { min, max, step }) {
  const stepped = Math.round((value - min) / step) * step + min;
  const clamped = Math.min(max, Math.max(min, stepped));
  // Decimal steps leave binary dust (0.30000000000000004); keep the digits the step has.
  const digits = (String(step).split('.')[1] ?? '').length;
  return Number(clamped.toFixed(digits));
}

/**
 * The value of `key` that the text `raw` names (from an address or an attribute), or
 * `undefined` when it names none. `names` is the wasm module's `names()` (the engine's
 * mechanisms and choices).
 */
export function parseValue(key, raw, names) {
  if (raw === null || raw === undefined) return undefined;
  const text = String(raw).trim();
  switch (STATE_KEYS[key]) {
    case 'text':
      return String(raw);
    case 'mechanism':
      return names.mechanisms.includes(text) ? text : undefined;
    case 'difference':
      return names.differences.includes(text) ? text : undefined;
    case 'fill':
      return names.fills.includes(text) ? text : undefined;
    case 'renormalize':
      return names.renormalizations.includes(text) ? text : undefined;
    case 'weights':
    case 'theme':
    case 'view':
      return PAGE_CHOICES[STATE_KEYS[key]].includes(text) ? text : undefined;
    case 'stage':
      return text === '' || names.stages?.includes(text) ? text : undefined;
    case 'step':
      return text === OUTPUT_STEP || names.stages?.includes(text) ? text : undefined;
    case 'viewport':
      return parseViewport(text);
    case 'count': {
      const n = Number(text);
      return text !== '' && Number.isInteger(n) && n >= 0 && n <= 1_000_000 ? n : undefined;
    }
    case 'lang': {
      const primary = text.toLowerCase().split('-')[0];
      return PAGE_CHOICES.lang.includes(primary) ? primary : undefined;
    }
    case 'bool':
      if (['1', 'true', 'yes', 'on', ''].includes(text.toLowerCase())) return true;
      if (['0', 'false', 'no', 'off'].includes(text.toLowerCase())) return false;
      return undefined;
    case 'int': {
      const n = Number(text);
      return text !== '' && Number.isInteger(n) && n >= 1 && n <= MAX_HEADS ? n : undefined;
    }
    case 'range': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) ? snap(n, RANGES[key]) : undefined;
    }
    default:
      return undefined;
  }
}

/** The text that `parseValue` reads back as `value` (booleans as 1 and 0). */
export function formatValue(key, value) {
  if (STATE_KEYS[key] === 'bool') return value ? '1' : '0';
  return String(value);
}

/** `k mod L` in [0, L) for any integer k (JavaScript's % keeps the sign of k). */
export function shiftModulo(k, length) {
  if (!(length > 0)) return 0;
  return ((k % length) + length) % length;
}

/** The choice nearest to `wanted` (ties go to the smaller), from `choices` in any order. */
export function nearestChoice(choices, wanted) {
  let best = choices[0];
  for (const c of choices) {
    const closer = Math.abs(c - wanted) < Math.abs(best - wanted);
    const tie = Math.abs(c - wanted) === Math.abs(best - wanted) && c < best;
    if (closer || tie) best = c;
  }
  return best;
}

/** The engine keys of `state` whose values differ from `applied`'s, as an update patch. */
export function patchOf(state, applied) {
  const patch = {};
  for (const key of ENGINE_KEYS) {
    if (state[key] !== undefined && state[key] !== applied[key]) patch[key] = state[key];
  }
  return patch;
}
