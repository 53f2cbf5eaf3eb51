// The page: one explorer plus chrome. It reads the address into the explorer's state, keeps
// the address in step with what a person changes (the explorer's `change` callback), owns the
// header's language switch and the footer, and shows errors the explorer could not catch.
// Everything else is the explorer's own (www/explorer/). Nothing runs at import but `main()`,
// and no state lives at module level.
//
// The browser runs this module as the bundle www/dist/app.js (scripts/bundle.mjs: this module,
// the explorer's and the glue, minified), so the URLs below are computed from there; the
// retrieval lesson is a chunk of it that only `?lesson=` loads.

import { decodeAddress, encodeAddress } from './address.js';
import { detectLanguage, loadStrings, translate, translated } from './explorer/i18n.js';
import * as glue from '../pkg/diffattn.js';
import { loadStyles, mountExplorer } from './explorer/mount.js';
import { loadRuntime } from './explorer/runtime.js';
import { wasmBuild, wasmUrl } from './explorer/wasm-features.js';
import { messageOf } from './explorer/messages.js';
import { setAttr, setText } from './explorer/dom.js';
import { WeightsStore } from './explorer/weights.js';
import { EMBED_CONTROLS } from './explorer/controls.js';
import { controlName, nameSet } from './explorer/attributes.js';
import { ENGINE_KEYS, PAGE_DEFAULTS } from './explorer/state.js';
import { KEYS } from './explorer/settings.generated.js';

/** The address is rewritten at most this often while a slider moves. */
const URL_INTERVAL_MS = 250;

/**
 * Translates the page's own strings (header, footer, title); the lede describes `mechanism`,
 * or the captured layer drawn (`spec`, the explorer's `onSpec` value: its model and layer).
 */
function translatePage(lang, version, mechanism, spec = null) {
  // Painted once the language's strings are in (Chinese is a chunk), unless another language
  // was asked for meanwhile.
  const root = document.documentElement;
  if (root.dataset.strings !== lang) root.dataset.strings = lang;
  loadStrings(lang).then((strings) => {
    if (root.dataset.strings === lang) paintPage(strings, lang, version, mechanism, spec);
  });
}

function paintPage(strings, lang, version, mechanism, spec) {
  // Called on every change the explorer reports (a slider's tick among them): each string is
  // written only when it differs (setText, setAttr), so that a tick leaves the page's header
  // and footer as they are, and the maps' next drawing finds no page text to lay out again.
  const t = (key, params) => translate(strings, key, params);
  const root = document.documentElement;
  setAttr(root, 'lang', lang === 'zh' ? 'zh-Hans' : 'en');
  const title = t('page_title');
  if (document.title !== title) document.title = title;
  for (const node of document.querySelectorAll('[data-i18n]')) setText(node, t(node.dataset.i18n));
  for (const node of document.querySelectorAll('[data-i18n-aria-label]')) setAttr(node, 'aria-label', t(node.dataset.i18nAriaLabel));
  setAttr(document.getElementById('lang-toggle'), 'lang', lang === 'zh' ? 'en' : 'zh-Hans');
  setText(document.getElementById('footer-text'), t('footer', { v: version }));
  const lede = `lede_${mechanism}`;
  const ledeNode = document.querySelector('.lede');
  const layer = spec?.layer;
  if (layer?.model && layer.layer !== null && layer.layer !== undefined) setText(ledeNode, t('lede_layer', { model: layer.model, layer: layer.layer }));
  else if (spec) setText(ledeNode, t('lede_layer_unnamed', { name: layer?.model ?? spec.name }));
  else setText(ledeNode, t(lede === t(lede) ? 'lede' : lede));
  setAttr(ledeNode, 'title', ledeNode.textContent);
  const header = document.querySelector('.site-header');
  if (header.classList.contains('has-layer') !== !!spec) header.classList.toggle('has-layer', !!spec);
}

/** Shows an error outside the explorer (it failed to start, or something escaped it). */
function pageMessage(text) {
  const box = document.getElementById('page-messages');
  const p = document.createElement('p');
  p.className = 'message';
  p.textContent = text;
  box.replaceChildren(p);
}

/**
 * The defaults an address is written against: the engine's, or with a trained model its
 * training settings (and its learned gate, never written while it is in use), so a link
 * names only what a person moved away from.
 */
function addressDefaults(view, engineDefaults) {
  const trained = view.loader.info?.trained && view.state.weights === 'trained' ? view.loader.info.trained_with : null;
  // With a trained model its settings, but the mechanism: a link names the mechanism it shows.
  const out = { ...engineDefaults, ...PAGE_DEFAULTS, ...(trained && { ...pick(trained, ENGINE_KEYS), mechanism: engineDefaults.mechanism }) };
  // A learned value (λ: trained, seeded or V2's mean; the trained gate) is never written, only
  // one a person moved to: the frame's flags say which (the schema's `learned`).
  for (const [key, s] of Object.entries(KEYS)) {
    if (s.learned && view.frame?.settings?.[s.learned]) out[key] = view.state[key];
  }
  return out;
}

const pick = (object, keys) => Object.fromEntries(keys.map((k) => [k, object[k]]));

/** The message an embedded page (embed=1 in an iframe) posts to its parent; docs/EMBED.md. */
const HEIGHT_MESSAGE = 'diffattn:height';

/**
 * In an iframe: tells the parent the page's height, in CSS pixels, now and on every change of
 * it, as `{ type: 'diffattn:height', height }`, so the host can size the frame to fit (no
 * scrolling inside it). The height is the body's (its bottom margin included), not the
 * viewport's, so a frame can shrink as well as grow. Sent to any origin: it says nothing but
 * a height.
 */
function reportHeight() {
  const body = document.body;
  let last = -1;
  const send = () => {
    const margin = parseFloat(getComputedStyle(body).marginBottom) || 0;
    const height = Math.ceil(body.getBoundingClientRect().bottom + window.scrollY + margin);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: HEIGHT_MESSAGE, height }, '*');
  };
  new ResizeObserver(send).observe(body);
  send();
}

async function main() {
  // The repository root: this module runs as www/dist/app.js.
  const base = new URL('../../', import.meta.url);
  const lesson = new URLSearchParams(location.search).get('lesson');
  if (lesson === 'noise') {
    const { startNoiseLesson } = await import('./noise-page.js');
    if (await startNoiseLesson(base, translatePage, pageMessage)) return;
  } else if (lesson !== null) {
    const { startLesson } = await import('./lesson-page.js');
    if (await startLesson(base, translatePage, pageMessage)) return;
  }
  const addressLang = new URLSearchParams(location.search).get('lang');
  const lang0 = ['en', 'zh'].includes(addressLang?.split('-')[0]) ? addressLang.split('-')[0] : detectLanguage(navigator.languages ?? [navigator.language]);
  translatePage(lang0, '', '');
  let runtime;
  let styles;
  const build = wasmBuild();
  try {
    [runtime, styles] = await Promise.all([
      // The simd128 build where the browser runs WebAssembly SIMD, the baseline build elsewhere.
      loadRuntime({ glue, wasm: wasmUrl(new URL('pkg/', base), build), build }),
      loadStyles(new URL('www/explorer/explorer.css', base)),
    ]);
  } catch (err) {
    pageMessage(await translated(lang0, 'load_failed', { msg: messageOf(err) }));
    return;
  }
  const address = decodeAddress(location.search, runtime.names);
  document.body.classList.toggle('embed', address.embed);
  const host = document.getElementById('explorer-host');
  const writeAddress = () => {
    // A spec is not in the address (the sentence's settings are), but a multi-layer file's layer is.
    const active = view.specs.active;
    const state = active ? { ...active.savedState, lang: view.state.lang, ...(active.layers > 1 && { layer: view.state.layer }) } : view.state;
    const query = encodeAddress(state, addressDefaults(view, runtime.defaults), { embed: address.embed, maps: address.maps, controls: address.controls });
    const url = `${location.pathname}?${query}${location.hash}`;
    if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(history.state, '', url);
  };
  let timer = null;
  /** The spec file drawn (the explorer's `onSpec`), for the header. */
  let spec = null;
  // Written once the changes pause (replaceState takes milliseconds: not on every tick of a
  // dragged slider).
  const scheduleAddress = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      writeAddress();
    }, URL_INTERVAL_MS);
  };
  const view = mountExplorer(host, styles, {
    runtime,
    // The pretrained model's own wasm module: fetched with its weights on first use, never
    // by the first view (its glue is a chunk behind import()).
    weights: new WeightsStore(new URL('weights/', base), {
      pretrained: { glue: () => import('../pkg/diffattn_pretrained.js'), wasm: wasmUrl(new URL('pkg/', base), build, 'diffattn_pretrained'), build },
    }),
    state: { lang: lang0, ...address.state },
    controls: address.controls === null && address.embed ? new Set(EMBED_CONTROLS) : nameSet(address.controls, controlName),
    maps: nameSet(address.maps, (n) => runtime.stageName(n)),
    dropTarget: document,
    docsBase: new URL('docs/', base),
    showTimings: address.debug,
    // Sized to the window, except in a frame, which sizes itself to the page (embed=1).
    fit: !address.embed,
    globalKeys: true,
    onChange: () => {
      scheduleAddress();
      translatePage(view.state.lang, runtime.version, view.state.mechanism, spec);
    },
    onSpec: (drawn) => {
      spec = drawn;
      translatePage(view.state.lang, runtime.version, view.state.mechanism, spec);
    },
  });
  translatePage(view.state.lang, runtime.version, view.state.mechanism);
  document.getElementById('lang-toggle').addEventListener('click', () => {
    const lang = view.state.lang === 'en' ? 'zh' : 'en';
    view.set({ lang });
    translatePage(lang, runtime.version, view.state.mechanism, spec);
    scheduleAddress();
  });
  window.addEventListener('error', (event) => view.messages.show('uncaught', messageOf(event.error ?? event.message)));
  window.addEventListener('unhandledrejection', (event) => view.messages.show('uncaught', messageOf(event.reason)));
  // The page has the lesson the "what is it for" panel points to (an embedded element does not).
  if (!address.embed) host.shadowRoot.getElementById('purpose-lesson-line').hidden = false;
  // For the end-to-end tests and the benchmark: the explorer, and one way to wait for it.
  window.diffattn = {
    view,
    root: host.shadowRoot,
    get state() {
      return view.state;
    },
    call: (fn) => view.engine.call(fn),
    timings: view.timings,
    settled: async () => {
      await view.settled();
      if (timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
      writeAddress();
    },
    version: runtime.version,
  };
  // The address's settings win over the trained model's.
  await view.start({ keep: address.named });
  translatePage(view.state.lang, runtime.version, view.state.mechanism, spec);
  writeAddress();
  if (address.embed && window.parent !== window) reportHeight();
  // Mark ready after the first paint reached the screen.
  requestAnimationFrame(() => {
    document.body.dataset.ready = 'true';
  });
}

main();
