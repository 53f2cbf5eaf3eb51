// The page in lesson mode (`?lesson=retrieval`, README "Links that open a view"): the
// retrieval lesson (explorer/lesson.js) in place of the explorer, with the address kept in
// step (`lesson`, `text`, `mechanism`, `layer`, `lang`, and one `knob` per knob moved away
// from its trained value: `knob=MODEL:LAYER:NAME:VALUE`). Nothing runs at import. The page
// imports it only when the address has `lesson` (a chunk of the bundle www/dist/app.js).

// The lesson's own wasm module (pkg/diffattn_lesson.js, crate web-lesson/), not the explorer's:
// only this page loads it, and the explorer's first view does not carry it.
import * as wasmGlue from '../pkg/diffattn_lesson.js';
import { detectLanguage, translated } from './explorer/i18n.js';
import { loadStyles } from './explorer/mount.js';
import { LESSON_KEY, LESSON_NAME, RetrievalLesson } from './explorer/lesson.js';
import { lessonText } from './explorer/lesson-text.js';
import { messageOf } from './explorer/messages.js';
import { wasmBuild, wasmUrl } from './explorer/wasm-features.js';
import { enterLessonMode, lessonChrome } from './lesson-chrome.js';

/** At most this many `knob` entries are read from an address (the models have a handful). */
const MAX_KNOBS = 32;

/** `MODEL:LAYER:NAME:VALUE` → `{ model, layer, name, value }`, or null when malformed. */
export function decodeKnob(text) {
  const m = /^([A-Za-z0-9_-]{1,64}):([1-9]\d{0,2}):([A-Za-z_]{1,32}):(-?\d+(?:\.\d+)?)$/.exec(text);
  if (!m) return null;
  const value = Number(m[4]);
  return Number.isFinite(value) ? { model: m[1], layer: Number(m[2]), name: m[3], value } : null;
}

/** `{ model, layer, name, value }` → `MODEL:LAYER:NAME:VALUE` (a value to four places at most). */
export function encodeKnob(k) {
  return `${k.model}:${k.layer}:${k.name}:${Number(k.value.toFixed(4))}`;
}

/** The lesson's state from the address. */
export function decodeLesson(search) {
  const p = new URLSearchParams(search);
  const state = {};
  const lang = p.get('lang')?.split('-')[0];
  if (lang === 'en' || lang === 'zh') state.lang = lang;
  if (p.has('text')) state.text = p.get('text').slice(0, 20_000);
  if (p.has('mechanism')) state.mechanism = p.get('mechanism');
  const layer = Number(p.get('layer'));
  if (Number.isInteger(layer) && layer >= 1) state.layer = layer;
  const knobs = p.getAll('knob').slice(0, MAX_KNOBS).map(decodeKnob).filter(Boolean);
  if (knobs.length) state.knobs = knobs;
  return state;
}

/** The address of `state` (without `?`). */
export function encodeLesson(state) {
  const p = new URLSearchParams();
  p.set(LESSON_KEY, LESSON_NAME);
  p.set('text', state.text);
  p.set('lang', state.lang);
  if (state.mechanism) p.set('mechanism', state.mechanism);
  if (state.layer) p.set('layer', String(state.layer));
  for (const k of state.knobs ?? []) p.append('knob', encodeKnob(k));
  return p.toString();
}

/**
 * Starts the lesson when the address asks for it (`lesson=retrieval`); resolves to whether it
 * did. `base` is the repository root's URL; `translatePage(lang, version, mechanism)` and
 * `pageMessage(text)` are the page's.
 */
export async function startLesson(base, translatePage, pageMessage) {
  if (new URLSearchParams(location.search).get(LESSON_KEY) !== LESSON_NAME) return false;
  const state = { lang: detectLanguage(navigator.languages ?? [navigator.language]), ...decodeLesson(location.search) };
  translatePage(state.lang, '', '');
  const host = enterLessonMode();
  const glue = wasmGlue;
  let styles;
  try {
    // The build wasm-features.js picks, simd128 or baseline, of the lesson's module.
    await glue.default({ module_or_path: wasmUrl(new URL('pkg/', base), wasmBuild(), 'diffattn_lesson') });
    styles = await loadStyles(new URL('www/explorer/lesson.css', base));
  } catch (err) {
    pageMessage(await translated(state.lang, 'load_failed', { msg: messageOf(err) }));
    return true;
  }
  const root = host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [styles];
  const page = lessonChrome({ encode: encodeLesson, text: lessonText, version: () => glue.version(), translatePage });
  // "Every layer and head": the package's element (pkg/diffattn-explorer.js registers
  // `<diffattn-explorer>`, finding its wasm, stylesheet and weights beside it), imported on the
  // first press only, by its URL: the lesson's first view loads neither it nor the page's
  // module, and the page's bundle shares no module with it (nothing split off its first view).
  const explorer = () => import(new URL('pkg/diffattn-explorer.js', base).href).then((m) => m.TAG_NAME);
  const lesson = new RetrievalLesson(root, { glue, weightsBase: new URL('weights/retrieval/', base), state, onChange: page.write, explorer });
  await page.run(lesson, root);
  return true;
}
