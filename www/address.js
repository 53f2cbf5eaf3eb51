// The page address and the explorer's state. Parameters carry the state's own names
// (`shift`, `difference`, `renormalize`, `window`, `all_heads`, `weights`, ...; the schema's,
// explorer/settings.generated.js); the page's older names (the schema's `aliases`: `k`, `mech`,
// `diff`, …) are still read, so old links keep working, and never written. Anything missing or
// malformed is left out, so any address, however mangled, opens a working page. Pure
// functions: tests/e2e/page-logic.test.mjs runs them under node.

import { KEYS } from './explorer/settings.generated.js';
import { formatValue, parseValue, STATE_KEYS } from './explorer/state.js';

/** Older parameter names, read as the state's names (the schema's `aliases`). */
export const LEGACY_NAMES = Object.freeze(Object.fromEntries(Object.entries(KEYS).flatMap(([key, s]) => (s.aliases ?? []).map((alias) => [alias, key]))));

/** The longest sentence kept in the address, in UTF-16 code units; the box takes any length. */
export const MAX_TEXT_IN_ADDRESS = 20_000;

/**
 * What an address says. `search` is `location.search`; `names` the engine's `names()`.
 * Returns `{ state, named, embed, maps, controls, debug }`: `state` holds only the keys the
 * address names with a valid value, `named` is the Set of those keys, `maps` and `controls`
 * are the raw comma lists (or null).
 */
export function decodeAddress(search, names) {
  const p = new URLSearchParams(search);
  const state = {};
  for (const [param, raw] of p) {
    const key = LEGACY_NAMES[param] ?? param;
    if (!(key in STATE_KEYS) || (key !== param && p.has(key))) continue;
    const value = parseValue(key, key === 'text' ? raw.slice(0, MAX_TEXT_IN_ADDRESS) : raw, names);
    if (value !== undefined) state[key] = value;
  }
  const flag = (name) => parseValue(name, p.get(name), names) === true;
  return {
    state,
    named: new Set(Object.keys(state)),
    embed: flag('embed'),
    debug: flag('debug'),
    maps: p.get('maps'),
    controls: p.get('controls'),
  };
}

/**
 * The query string (without `?`) for `state`. The sentence and the language are always
 * written, so a link means the same thing in every browser; other keys only when they differ
 * from `defaults` (the engine's defaults, or the trained model's settings), to keep links
 * short. `extras` (`{ embed, maps, controls }`) are written when set.
 */
export function encodeAddress(state, defaults, extras = {}) {
  const p = new URLSearchParams();
  p.set('text', String(state.text).slice(0, MAX_TEXT_IN_ADDRESS));
  p.set('lang', state.lang);
  for (const key of Object.keys(STATE_KEYS)) {
    if (key === 'text' || key === 'lang' || state[key] === undefined) continue;
    if (state[key] !== defaults[key]) p.set(key, formatValue(key, state[key]));
  }
  if (extras.embed) p.set('embed', '1');
  if (extras.maps) p.set('maps', extras.maps);
  if (extras.controls) p.set('controls', extras.controls);
  return p.toString();
}
