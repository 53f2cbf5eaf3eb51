// The page in the noise lesson's mode (`?lesson=noise`, README "Links that open a view"): the
// noise lesson on the real model (explorer/noise-lesson.js) in place of the explorer, with the
// address kept in step (`lesson`, `text`, `query` and `target` once a person picked them,
// `lang`). The model and its own wasm module come as the explorer's `weights=minilm` brings
// them (weights.js `pretrained`, pretrained.js). Nothing runs at import; the page imports it
// only when the address asks for this lesson (a chunk of the bundle www/dist/app.js).

import { detectLanguage } from './explorer/i18n.js';
import { loadStyles } from './explorer/mount.js';
import { NOISE_LESSON, NoiseLesson } from './explorer/noise-lesson.js';
import { noiseText } from './explorer/noise-text.js';
import { messageOf } from './explorer/messages.js';
import { wasmBuild, wasmUrl } from './explorer/wasm-features.js';
import { WeightsStore } from './explorer/weights.js';
import { enterLessonMode, lessonChrome } from './lesson-chrome.js';

/** The lesson's state from the address. */
export function decodeNoise(search) {
  const p = new URLSearchParams(search);
  const state = {};
  const lang = p.get('lang')?.split('-')[0];
  if (lang === 'en' || lang === 'zh') state.lang = lang;
  if (p.has('text')) state.text = p.get('text').slice(0, 20_000);
  for (const key of ['query', 'target']) {
    const v = Number(p.get(key));
    if (p.has(key) && Number.isInteger(v) && v >= 0 && v < 512) state[key] = v;
  }
  return state;
}

/** The address of `state` (without `?`). */
export function encodeNoise(state) {
  const p = new URLSearchParams();
  p.set('lesson', NOISE_LESSON);
  p.set('text', state.text);
  p.set('lang', state.lang);
  if (state.query !== null) p.set('query', String(state.query));
  if (state.target !== null) p.set('target', String(state.target));
  return p.toString();
}

/**
 * Starts the noise lesson when the address asks for it (`lesson=noise`); resolves to whether it
 * did. `base` is the repository root's URL; `translatePage(lang, version, mechanism)` and
 * `pageMessage(text)` are the page's.
 */
export async function startNoiseLesson(base, translatePage, pageMessage) {
  if (new URLSearchParams(location.search).get('lesson') !== NOISE_LESSON) return false;
  const state = { lang: detectLanguage(navigator.languages ?? [navigator.language]), ...decodeNoise(location.search) };
  translatePage(state.lang, '', '');
  const host = enterLessonMode();
  let styles;
  try {
    styles = await loadStyles(new URL('www/explorer/lesson.css', base));
  } catch (err) {
    pageMessage(messageOf(err));
    return true;
  }
  const root = host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [styles];
  const build = wasmBuild();
  const weights = new WeightsStore(new URL('weights/', base), {
    pretrained: { glue: () => import('../pkg/diffattn_pretrained.js'), wasm: wasmUrl(new URL('pkg/', base), build, 'diffattn_pretrained'), build },
  });
  const page = lessonChrome({ encode: encodeNoise, text: noiseText, version: () => lesson.version, translatePage });
  const lesson = new NoiseLesson(root, {
    load: (onProgress) => weights.pretrained(onProgress),
    state,
    onChange: page.write,
    explorerHref: (params) => `${location.pathname}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`,
  });
  await page.run(lesson, root);
  return true;
}
