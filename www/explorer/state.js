// The explorer's state: what a person (or an author, through attributes) can set, under one
// name each, the same in the address, on the custom element, in the engine's patch and in the
// widget's traits (`shift`, `difference`, `renormalize`, never `k`, `diff` or `renorm`). Pure
// functions, no DOM: tests/e2e/page-logic.test.mjs runs them under node.
//
// Which keys exist, their kinds, ranges and the page's defaults are the schema's
// (settings.generated.js, made from the Rust schema in src/schema/); the engine's defaults and
// the names of mechanisms and choices are Rust's too (`defaults()`, `names()` of the wasm
// module). This module derives the tables the page reads from the schema and writes none.

import { KEYS } from './settings.generated.js';
import { parseViewport } from './viewport.js';

const entries = (filter) => Object.entries(KEYS).filter(([, spec]) => filter(spec));

/** Every key of the state (the address, the attributes, the `change` detail), with its schema entry. `head` counts from 1, as the page shows it. */
export const STATE_KEYS = Object.freeze(Object.fromEntries(entries((s) => s.state)));

/** The keys the engine holds (the settings of `Explorer.update`; a frame's `settings` has them all). */
export const ENGINE_KEYS = Object.freeze(entries((s) => s.engine).map(([key]) => key));

/** The page's own keys of the state (the engine never holds them). */
export const PAGE_KEYS = Object.freeze(entries((s) => s.state && !s.engine).map(([key]) => key));

/** What the explorer shows until told otherwise, beyond the engine's own defaults. */
export const PAGE_DEFAULTS = Object.freeze(Object.fromEntries(entries((s) => s.state && !s.engine && 'default' in s).map(([key, s]) => [key, s.default])));

/** Slider ranges; the controls use the same numbers. */
export const RANGES = Object.freeze(Object.fromEntries(entries((s) => s.kind === 'slider').map(([key, { min, max, step }]) => [key, Object.freeze({ min, max, step })])));

/** Choices that are the page's own, not the engine's. */
export const PAGE_CHOICES = Object.freeze(Object.fromEntries(entries((s) => !s.engine && Array.isArray(s.choices)).map(([key, s]) => [key, s.choices])));

/** The guided walk's last step, after the mechanism's stages: the layer's output. */
export const OUTPUT_STEP = 'output';

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
  const spec = KEYS[key];
  const text = String(raw).trim();
  switch (spec?.kind) {
    case 'text':
      return String(raw);
    case 'choice': {
      const choices = typeof spec.choices === 'string' ? names?.[spec.choices] : spec.choices;
      return choices?.includes(text) ? text : undefined;
    }
    case 'stage':
      return text === '' || names?.stages?.includes(text) ? text : undefined;
    case 'step':
      return text === OUTPUT_STEP || names?.stages?.includes(text) ? text : undefined;
    case 'viewport':
      return parseViewport(text);
    case 'lang': {
      const primary = text.toLowerCase().split('-')[0];
      return spec.choices.includes(primary) ? primary : undefined;
    }
    case 'bool':
      if (['1', 'true', 'yes', 'on', ''].includes(text.toLowerCase())) return true;
      if (['0', 'false', 'no', 'off'].includes(text.toLowerCase())) return false;
      return undefined;
    case 'int': {
      const n = Number(text);
      return text !== '' && Number.isInteger(n) && n >= spec.min && n <= spec.max ? n : undefined;
    }
    case 'slider': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) ? snap(n, spec) : undefined;
    }
    default:
      return undefined;
  }
}

/** The text that `parseValue` reads back as `value` (booleans as 1 and 0). */
export function formatValue(key, value) {
  if (KEYS[key]?.kind === 'bool') return value ? '1' : '0';
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

/** Splits a partial state into the engine's settings (a patch) and the page's own keys. */
export function splitState(partial) {
  const engine = {};
  const page = {};
  for (const [key, value] of Object.entries(partial)) {
    if (value === undefined) continue;
    if (KEYS[key]?.engine) engine[key] = value;
    else page[key] = value;
  }
  return { engine, page };
}

/**
 * The mechanism's own parameters as a learner reads them, `k = 1`, `τ = 10.0`, `λ = 0.512`:
 * every setting with a symbol whose registry parameter is in `parameters` (the engine's
 * `view().parameters`, in the registry's order), with its value in `settings`. `format(value,
 * digits)` writes a number; with `lambdaPerToken` (the view's `lambda_per_token`: V2's learned
 * λ, one per token and head, is drawn as a map) λ is left out.
 */
export function parameterParts(parameters, settings, format, { lambdaPerToken = false } = {}) {
  const parts = [];
  const named = Object.entries(KEYS).filter(([key, s]) => s.engine && s.symbol && parameters.includes(s.parameter) && s.control === key);
  // (A setting that is one of a control's several, the gate's α, β, γ, learned per head, is not one number to name.)
  named.sort(([, a], [, b]) => parameters.indexOf(a.parameter) - parameters.indexOf(b.parameter));
  for (const [key, s] of named) {
    if (lambdaPerToken && s.learned === 'lambda_learned') continue;
    const value = settings?.[key];
    if (typeof value !== 'number') continue;
    // A learned value (λ) is off the slider's grid: one digit finer than the slider shows.
    parts.push(`${s.symbol} = ${s.type === 'integer' ? String(value) : format(value, s.digits + (s.learned ? 1 : 0))}`);
  }
  return parts;
}
