// The custom element's attributes (pkg/diffattn-explorer.js, www/explorer/element.js) and the
// page's `maps=` / `controls=` address lists, read into the explorer's state. One name per
// thing: every attribute is a key of the schema (settings.generated.js): a key of the state
// (`shift`, `renormalize`, `all_heads`, ...) or `gate` (α, β, γ in one attribute), `maps`,
// `controls` or `src`. Pure functions, no DOM:
// tests/e2e/page-logic.test.mjs runs them under node.

import { CONTROL_NAMES } from './controls.js';
import { KEYS } from './settings.generated.js';
import { parseValue, STATE_KEYS } from './state.js';

/** The gate's three parameters (the settings of the registry's parameter `gate`), in the order the `gate` attribute lists them. */
export const GATE_KEYS = Object.freeze(Object.keys(KEYS).filter((key) => KEYS[key].engine && KEYS[key].parameter === 'gate'));

/** Every attribute the element observes, each reflected as a property of the same name (the schema's). */
export const ATTRIBUTES = Object.freeze(Object.keys(KEYS).filter((key) => KEYS[key].attribute));

/**
 * A comma list of names as a Set of the names `canon` accepts (each canonicalised by it), or
 * null for "all" (no list, or `all`); `none` is the empty Set. Also returns the names `canon`
 * refused: `{ set, unknown }`.
 */
export function readNameList(list, canon) {
  if (list === null || list === undefined) return { set: null, unknown: [] };
  const names = String(list)
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'all') return { set: null, unknown: [] };
  if (names.length === 1 && names[0] === 'none') return { set: new Set(), unknown: [] };
  const set = new Set();
  const unknown = [];
  for (const name of names) {
    const canonical = canon(name);
    if (canonical) set.add(canonical);
    else unknown.push(name);
  }
  return { set, unknown };
}

/** The Set of names of a comma list (see readNameList), unknown names dropped; null for all. */
export function nameSet(list, canon) {
  return readNameList(list, canon).set;
}

/** A control name of controls.js, or null. */
export function controlName(name) {
  return CONTROL_NAMES.includes(name) ? name : null;
}

/**
 * The gate written `α,β,γ` (e.g. `1.5,3,-0.5`; spaces allowed) as `{ alpha, beta, gamma }`,
 * each snapped into its slider's range, or undefined unless it is exactly three numbers.
 */
export function parseGate(raw, names) {
  if (raw === null || raw === undefined) return undefined;
  const parts = String(raw).split(',');
  if (parts.length !== GATE_KEYS.length) return undefined;
  const out = {};
  for (const [i, key] of GATE_KEYS.entries()) {
    const value = parseValue(key, parts[i], names);
    if (value === undefined) return undefined;
    out[key] = value;
  }
  return out;
}

/** The `gate` attribute's text for a state (`"1.5,3,-0.5"`). */
export function formatGate(state) {
  return GATE_KEYS.map((key) => String(state[key])).join(',');
}

/**
 * What the attribute `name` with the text `raw` asks for. `names` is the wasm module's
 * `names()`, `stageName` the runtime's (`"A"` → `"a"`). Returns one of
 * `{ state }` (a partial state), `{ maps }` / `{ controls }` (a Set or null), `{ src }`
 * (a string or null), each with `invalid` (a sentence naming what was ignored) when some or
 * all of the text was not understood; `raw === null` (the attribute was removed) gives
 * `{ state: {} }` for a state key: the explorer keeps what it shows.
 */
export function readAttribute(name, raw, names, stageName) {
  const bad = (what) => `<diffattn-explorer ${name}="${raw}">: ${what}; ignored`;
  switch (name) {
    case 'maps':
    case 'controls': {
      const canon = name === 'maps' ? (n) => stageName(n) ?? null : controlName;
      const { set, unknown } = readNameList(raw, canon);
      const out = { [name]: set };
      if (unknown.length) {
        out.invalid = bad(`unknown ${name === 'maps' ? 'stage' : 'control'} ${unknown.join(', ')}`);
      }
      return out;
    }
    case 'src':
      return { src: raw === null || String(raw).trim() === '' ? null : String(raw).trim() };
    case 'gate': {
      if (raw === null) return { state: {} };
      const gate = parseGate(raw, names);
      return gate ? { state: gate } : { state: {}, invalid: bad('expected three numbers α,β,γ such as "1.5,3,-0.5"') };
    }
    default: {
      if (!(name in STATE_KEYS)) return { state: {}, invalid: bad('not an attribute of the explorer') };
      if (raw === null) return { state: {} };
      const value = parseValue(name, raw, names);
      return value === undefined ? { state: {}, invalid: bad(`not a valid ${name}`) } : { state: { [name]: value } };
    }
  }
}

/**
 * Everything the attributes of an element say at start, from `get(name)` (the attribute's
 * text or null): `{ state, named, maps, controls, src, invalid }`, `named` being the Set of
 * state keys an attribute set (they win over a trained model's settings) and `invalid` the
 * sentences of readAttribute.
 */
export function readAttributes(get, names, stageName) {
  const state = {};
  const invalid = [];
  const out = { state, named: new Set(), maps: null, controls: null, src: null, invalid };
  for (const name of ATTRIBUTES) {
    const raw = get(name);
    if (raw === null || raw === undefined) continue;
    const read = readAttribute(name, raw, names, stageName);
    if (read.invalid) invalid.push(read.invalid);
    if (read.state) Object.assign(state, read.state);
    if ('maps' in read) out.maps = read.maps;
    if ('controls' in read) out.controls = read.controls;
    if ('src' in read) out.src = read.src;
  }
  for (const key of Object.keys(state)) out.named.add(key);
  return out;
}
