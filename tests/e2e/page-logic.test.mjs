// Unit tests of the page's pure modules (no browser): the address encoding, the i18n
// dictionary, the cell arithmetic text and the custom element's attributes. They run with the e2e files under
// `node --test tests/e2e/` and need neither pkg/ nor Chromium.

import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { LANGUAGES, Language, PRESETS, STRINGS, detectLanguage, formatParts, loadStrings, placeholders, translate, translated } from '../../www/explorer/i18n.js';
import { RANGES, nearestChoice, parameterParts, parseValue, patchOf, shiftModulo, snap } from '../../www/explorer/state.js';
import { decodeAddress, encodeAddress } from '../../www/address.js';
import { cellLines, fmt, parseFmt, visibleToken } from '../../www/explorer/format.js';
import { FrameScheduler } from '../../www/explorer/scheduler.js';
import { gridAsks, roomBelow } from '../../www/explorer/layout.js';
import { readerMoved } from '../../www/explorer/prediction.js';
import { unknownWords } from '../../www/explorer/paint.js';
import { Engine, EngineRestarted, EngineStopped } from '../../www/explorer/engine.js';
import { runtimeOf } from '../../www/explorer/runtime.js';
import { ATTRIBUTES, formatGate, nameSet, parseGate, readAttribute, readAttributes, readNameList } from '../../www/explorer/attributes.js';
import { CONTROL_NAMES } from '../../www/explorer/controls.js';
import { KEYS } from '../../www/explorer/settings.generated.js';
import { ViewState } from '../../www/explorer/view-state.js';

/** The engine's names (what `names()` of the wasm module returns), for the pure functions. */
const NAMES = {
  mechanisms: ['shift_diff', 'standard', 'diff_transformer', 'input_diff', 'cosine', 'local', 'diff_transformer_v2', 'hierarchical'],
  differences: ['single', 'symmetric'],
  fills: ['circular', 'zero'],
  renormalizations: ['none', 'softmax'],
};

test('i18n: every key exists in both languages with the same placeholders', async () => {
  const en = Object.keys(STRINGS.en).sort();
  for (const lang of LANGUAGES) {
    const strings = await loadStrings(lang);
    assert.deepEqual(Object.keys(strings).sort(), en, `keys of ${lang}`);
    for (const key of en) {
      assert.ok(strings[key].trim().length > 0, `${lang}.${key} is empty`);
      assert.deepEqual(placeholders(strings[key]), placeholders(STRINGS.en[key]), `placeholders of ${lang}.${key}`);
    }
  }
  assert.equal(await loadStrings('en'), STRINGS.en);
  assert.deepEqual(Object.keys(STRINGS), ['en'], 'the Chinese strings are a module of their own (a chunk of the bundle)');
});

test('i18n: a count of one takes the language’s singular ("1 head", not "1 heads")', async () => {
  const zh = await loadStrings('zh');
  assert.equal(translate(STRINGS.en, 'tw_heads', { n: 1 }), '1 head');
  assert.equal(translate(STRINGS.en, 'tw_heads', { n: 4 }), '4 heads');
  assert.equal(translate(STRINGS.en, 'tokens_count', { n: 1 }), '1 token');
  assert.equal(translate(STRINGS.en, 'spec_layout', { n: 1, dh: 64, kv: 1, d: 64 }), '1 head of 64 channels, key/value heads: 1, d_model = 64');
  assert.equal(translate(STRINGS.en, 'spec_layout', { n: 8, dh: 8, kv: 8, d: 64 }), '8 heads of 8 channels, key/value heads: 8, d_model = 64');
  assert.equal(translate(zh, 'tw_heads', { n: 1 }), '1 个头');
  // A key with no singular keeps its one form.
  assert.equal(translate(STRINGS.en, 'head_option', { n: 1, total: 4 }), 'head 1 of 4');
});

test('i18n: a Language loads its strings; the last language asked for wins', async () => {
  const language = new Language();
  assert.equal(language.strings, STRINGS.en);
  const ready = [];
  language.use('zh', () => ready.push('zh'));
  language.use('en', () => ready.push('en'));
  assert.ok(language.pending);
  await language.pending;
  assert.deepEqual(ready, ['en']);
  assert.equal(language.strings, STRINGS.en);
  assert.equal(language.pending, null);
  language.use('zh', () => ready.push('zh'));
  await language.pending;
  assert.deepEqual(ready, ['en', 'zh']);
  assert.equal(language.strings, await loadStrings('zh'));
});

test('i18n: every key the page uses is in the dictionary', async () => {
  const sources = ['../../www/index.html', '../../www/app.js', ...(await readdir(new URL('../../www/explorer/', import.meta.url))).filter((f) => f.endsWith('.js')).map((f) => `../../www/explorer/${f}`)];
  const used = new Set();
  for (const file of sources) {
    const text = await readFile(new URL(file, import.meta.url), 'utf8');
    for (const m of text.matchAll(/data-i18n(?:-[a-z-]+)?="([\w]+)"/g)) used.add(m[1]);
    for (const m of text.matchAll(/\bt\('([\w]+)'/g)) used.add(m[1]);
    for (const m of text.matchAll(/translate\([\w.]+, '([\w]+)'/g)) used.add(m[1]);
  }
  assert.ok(used.size > 40, `found only ${used.size} keys: the scan is broken`);
  for (const key of used) assert.ok(key in STRINGS.en, `missing key ${key}`);
  // Keys built at run time.
  for (const id of ['a', 'shifted', 'shifted_back', 'd', 'g', 'fused', 'a1', 'a2', 'diff']) assert.ok(`stage_${id}` in STRINGS.en);
  for (const m of NAMES.mechanisms) assert.ok(`mech_${m}` in STRINGS.en, m);
  // The schema's: each menu of the engine's names (`<key>_<name>`), each slider's label, the
  // moved-away word of each parameter (and of the heads and the mask, which every mechanism has).
  for (const [key, s] of Object.entries(KEYS)) {
    if (s.engine && s.kind === 'choice' && s.choices !== 'mechanisms') {
      for (const v of NAMES[s.choices]) assert.ok(`${key}_${v}` in STRINGS.en, `${key}_${v}`);
    }
    if (s.slider) assert.ok(`${key}_label` in STRINGS.en, `${key}_label`);
    if (s.parameter) assert.ok(`moved_${s.parameter}` in STRINGS.en, s.parameter);
  }
  for (const p of ['heads', 'causal']) assert.ok(`moved_${p}` in STRINGS.en, p);
  for (const source of ['trained', 'captured', 'seeded']) {
    for (const key of [`lambda_learned_${source}`, `lambda_learned_token_${source}`, `lambda_back_${source}`]) assert.ok(key in STRINGS.en, key);
  }
  for (const lang of LANGUAGES) assert.ok(`preset_group_${lang}` in STRINGS.en);
});

test('i18n: the slider labels say "shift" and "heads" in English', () => {
  assert.match(STRINGS.en.shift_label, /\bshift\b/i);
  assert.match(STRINGS.en.heads_label, /\bheads\b/i);
  // No other label of a control shares those words, so a label search finds one control.
  for (const key of ['head_label', 'all_heads_label', 'fill_label']) assert.doesNotMatch(STRINGS.en[key], /\bheads\b/i);
});

test('i18n: language detection and formatting', async () => {
  const zh = await loadStrings('zh');
  const en = STRINGS.en;
  assert.equal(detectLanguage(['zh-CN', 'en']), 'zh');
  assert.equal(detectLanguage(['zh-Hant-TW']), 'zh');
  assert.equal(detectLanguage(['fr-FR', 'en-GB']), 'en');
  assert.equal(detectLanguage(['de']), 'en');
  assert.equal(detectLanguage([]), 'en');
  assert.equal(translate(en, 'tokens_count', { n: 7 }), '7 tokens');
  assert.equal(translate(zh, 'tokens_count', { n: 7 }), '7 个词元');
  assert.equal(await translated('zh', 'tokens_count', { n: 7 }), '7 个词元');
  assert.equal(translate(en, 'no_such_key'), 'no_such_key');
  const node = { node: true };
  assert.deepEqual(formatParts('a {x} b {y}', { x: node }), ['a ', node, ' b ', '{y}']);
  assert.equal(
    translate(en, 'aria_map', { name: 'A′', h: 2, total: 4, desc: 'fused attention', n: 7 }),
    'A′, head 2 of 4: fused attention of 7 tokens',
  );
  assert.ok(translate(zh, 'aria_map', { name: 'A′', h: 2, total: 4, desc: '融合注意力', n: 7 }).startsWith('A′'));
  for (const lang of LANGUAGES) assert.ok(PRESETS[lang].length >= 3);
});

test('address: an empty address names nothing; every key round-trips', () => {
  const empty = decodeAddress('', NAMES);
  assert.deepEqual(empty.state, {});
  assert.equal(empty.named.size, 0);
  const state = {
    text: 'A <b>bold</b> & "quoted" 🤦🏽‍♀️ שלום\u200b text + more',
    mechanism: 'diff_transformer',
    heads: 8,
    head: 3,
    causal: true,
    shift: -7,
    difference: 'symmetric',
    fill: 'zero',
    renormalize: 'softmax',
    alpha: -2.3,
    beta: 0.1,
    gamma: 4,
    tau: 12.5,
    window: 5,
    segment: 3,
    lambda: -0.25,
    all_heads: true,
    weights: 'untrained',
    lang: 'zh',
    theme: 'dark',
  };
  const query = encodeAddress(state, {});
  assert.deepEqual(decodeAddress(`?${query}`, NAMES).state, state);
  // Only what differs from the defaults is written, besides the text and the language.
  assert.equal(encodeAddress({ text: 'x', lang: 'en', shift: 1, heads: 4 }, { shift: 1, heads: 4 }), 'text=x&lang=en');
  assert.equal(encodeAddress({ text: 'x', lang: 'en', shift: 2 }, { shift: 1 }, { embed: true, maps: 'A,D' }), 'text=x&lang=en&shift=2&embed=1&maps=A%2CD');
});

test('address: older parameter names are read, the new name wins when both are there', () => {
  const old = decodeAddress('?mech=cosine&k=3&diff=symmetric&renorm=softmax&w=4&all=1&model=untrained', NAMES).state;
  assert.deepEqual(old, { mechanism: 'cosine', shift: 3, difference: 'symmetric', renormalize: 'softmax', window: 4, all_heads: true, weights: 'untrained' });
  assert.equal(decodeAddress('?k=3&shift=5', NAMES).state.shift, 5);
  assert.equal(decodeAddress('?shift=5&k=3', NAMES).state.shift, 5);
});

test('address: malformed values are left out, numbers snap into range', () => {
  const s = decodeAddress('?mechanism=evil&heads=0&head=-2&causal=maybe&shift=1e9&alpha=NaN&beta=0.30000000004&tau=-5&window=2.6&difference=x&fill=&renormalize=softmax&lang=fr&theme=neon&bogus=1', NAMES).state;
  assert.deepEqual(s, { shift: RANGES.shift.max, beta: 0.3, tau: RANGES.tau.min, window: 3, renormalize: 'softmax' });
  assert.equal(decodeAddress('?text=', NAMES).state.text, '');
  assert.equal(snap(0.1 + 0.2, RANGES.alpha), 0.3);
  assert.equal(parseValue('lang', 'zh-Hans', NAMES), 'zh');
  assert.equal(parseValue('causal', '', NAMES), true, 'a bare attribute means true');
  const real = decodeAddress('?segment=0&lambda=9&mechanism=hierarchical', NAMES).state;
  assert.deepEqual(real, { segment: RANGES.segment.min, lambda: RANGES.lambda.max, mechanism: 'hierarchical' });
  assert.equal(parseValue('lambda', '0.123456', NAMES), 0.12, 'λ snaps to the slider’s step');
  assert.equal(parseValue('lambda', 'λ', NAMES), undefined);
});

test('state: k mod L, the nearest head count, and the patch of what changed', () => {
  assert.equal(shiftModulo(3, 5), 3);
  assert.equal(shiftModulo(-1, 5), 4);
  assert.equal(shiftModulo(10, 5), 0);
  assert.equal(shiftModulo(-11, 5), 4);
  assert.equal(shiftModulo(3, 0), 0);
  assert.equal(nearestChoice([1, 2, 4, 8, 16, 32, 64], 5), 4);
  assert.equal(nearestChoice([1, 2, 4, 8, 16, 32], 64), 32);
  assert.equal(nearestChoice([1, 2, 4], 3), 2);
  // Only engine keys whose values differ from what the engine holds are sent.
  assert.deepEqual(patchOf({ shift: 2, heads: 4, text: 'x', lang: 'en' }, { shift: 1, heads: 4 }), { shift: 2 });
  assert.deepEqual(patchOf({ shift: 1 }, { shift: 1 }), {});
  // A mechanism's parameters as the trained-with note and the exports name them: the schema's
  // symbols and digits (a learned λ one finer), in the registry's order; names and the gate's
  // three scalars are not one number, V2's λ per token is a map.
  const settings = { shift: 3, difference: 'single', alpha: 1, tau: 10, lambda: 0.51234, temperature: 2 };
  assert.deepEqual(parameterParts(['shift', 'difference', 'fill', 'renormalize', 'gate'], settings, fmt), ['k = 3']);
  assert.deepEqual(parameterParts(['lambda', 'temperature'], settings, fmt), ['λ = 0.512', 'T = 2.0']);
  assert.deepEqual(parameterParts(['lambda'], settings, fmt, { lambdaPerToken: true }), []);
  assert.deepEqual(parameterParts(['tau'], settings, fmt), ['τ = 10.0']);
});

test('view state: the page keeps its own keys and a pending patch, and of the engine only the last frame', () => {
  const defaults = { mechanism: 'standard', heads: 4, head: 1, shift: 1, lambda: 0.5, gate_learned: false, lambda_learned: true };
  const vs = new ViewState(defaults, { view: 'walk', lang: 'en', shift: 2 });
  assert.ok(Object.isFrozen(vs.state), 'the state is changed through change(), never in place');
  assert.equal(vs.state.shift, 2, 'a setting given at start is pending');
  assert.equal(vs.state.heads, 4, "the engine's default until a frame");
  assert.equal(vs.state.gate_learned, undefined, 'the frame flags are not state');
  assert.deepEqual(vs.patch(), { shift: 2 });
  // A frame: the patch is sent, the engine's settings are what the state shows.
  assert.deepEqual(vs.take(), { shift: 2 });
  vs.adopt({ ...defaults, shift: 2, heads: 8, lambda: 0.81 });
  assert.deepEqual([vs.state.shift, vs.state.heads, vs.state.lambda, vs.state.view], [2, 8, 0.81, 'walk']);
  assert.deepEqual(vs.patch(), {});
  // Only what differs from the frame is sent; page keys never are.
  vs.change({ shift: 2, heads: 2, view: 'compare', all_heads: true });
  assert.deepEqual(vs.patch(), { heads: 2 });
  assert.deepEqual([vs.state.heads, vs.state.view, vs.state.all_heads], [2, 'compare', true]);
  // A model brings its own settings: only the pending ones `keep` names stay.
  vs.change({ shift: 5 });
  vs.adopt({ ...defaults, heads: 4, shift: 1 }, new Set(['shift']));
  assert.deepEqual(vs.patch(), { shift: 5 });
  // A fresh handle: every setting is pending again, but a learned λ (the new handle's model gives it).
  vs.take();
  vs.adopt({ ...defaults, heads: 4, shift: 5, lambda: 0.81, lambda_learned: true });
  vs.forget();
  const resent = vs.patch();
  assert.equal(resent.lambda, undefined);
  assert.deepEqual([resent.heads, resent.shift, resent.mechanism, resent.head], [4, 5, 'standard', 1]);
  vs.adopt({ ...defaults, lambda: 0.3, lambda_learned: false });
  vs.forget();
  assert.equal(vs.patch().lambda, 0.3, 'a chosen λ is sent again');
});

test('scheduler: many changes in one frame make one render; overlays never render', () => {
  const frames = [];
  const runs = [];
  const s = new FrameScheduler((work) => runs.push(work), { requestFrame: (cb) => frames.push(cb) });
  s.schedule('render');
  s.schedule('overlay');
  s.schedule('render');
  assert.equal(frames.length, 1, 'one frame requested');
  frames.shift()();
  assert.deepEqual(runs, [{ render: true, overlay: true, early: false }]);
  s.schedule('overlay');
  frames.shift()();
  assert.deepEqual(runs[1], { render: false, overlay: true, early: false });
});

test('scheduler: flush() runs the frame now, and the frame asked for then does nothing', () => {
  const frames = [];
  const runs = [];
  const s = new FrameScheduler((work) => runs.push(work), { requestFrame: (cb) => frames.push(cb) });
  s.flush();
  assert.equal(runs.length, 0, 'nothing asked for: nothing run');
  s.schedule('render');
  s.flush();
  assert.deepEqual(runs, [{ render: true, overlay: false, early: true }]);
  assert.equal(s.pending, false);
  frames.shift()();
  assert.equal(runs.length, 1, 'the overtaken frame runs nothing');
  s.schedule('overlay');
  assert.equal(frames.length, 1, 'a new frame is asked for');
  frames.shift()();
  assert.deepEqual(runs[1], { render: false, overlay: true, early: false });
});

test('scheduler: a render waits for what holds it back, then runs', async () => {
  const frames = [];
  const runs = [];
  let release;
  let held = new Promise((resolve) => (release = resolve));
  const s = new FrameScheduler((work) => runs.push(work), { hold: () => held, requestFrame: (cb) => frames.push(cb) });
  s.schedule('render');
  frames.shift()();
  assert.equal(runs.length, 0, 'held');
  let settled = false;
  s.settled().then(() => (settled = true));
  held = null;
  release();
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(frames.length, 1, 'a frame was asked for once the hold was released');
  frames.shift()();
  assert.deepEqual(runs, [{ render: true, overlay: false, early: false }]);
  await Promise.resolve();
  assert.equal(settled, true);
});

/**
 * A stand-in for the wasm-bindgen module (as runtime.js `runtimeOf` reads it): handles that
 * count their frees and can trap, and an instance that `__wbg_reset_state` makes afresh (the
 * number of instances made so far is `instance()`; a handle of an older one refuses calls, as
 * wasm-bindgen's do). `resettable: false` leaves the reset function out, as a glue built
 * without `--experimental-reset-state-function`.
 */
function fakeModule({ resettable = true } = {}) {
  const made = [];
  let instance = 0;
  const fake = { made, instance: () => instance, refuse: null };
  class Explorer {
    constructor() {
      if (fake.refuse) throw fake.refuse;
      this.instance = instance;
      this.freed = 0;
      made.push(this);
    }
    free() {
      this.freed += 1;
    }
    ok() {
      if (this.instance !== instance) throw new Error('Invalid stale object from previous Wasm instance');
      return 42;
    }
    trap() {
      throw new WebAssembly.RuntimeError('unreachable');
    }
    refuse() {
      throw new Error('heads: 3 does not divide 64');
    }
  }
  fake.module = {
    Explorer,
    initSync: () => ({ memory: { instance } }),
    names: () => ({ mechanisms: [] }),
    defaults: () => ({}),
    mechanisms: () => [],
    max_tokens: () => 2048,
    version: () => '0.1.0',
    stage_name: (name) => name,
  };
  if (resettable) fake.module.__wbg_reset_state = () => (instance += 1);
  return fake;
}

test('engine: a panic throws the instance away; every engine on the runtime gets a fresh handle there, is told, and frees nothing', () => {
  const fake = fakeModule();
  const runtime = runtimeOf(fake.module);
  const told = [];
  const first = new Engine(runtime, { onRestart: (cause, { own }) => told.push(['first', own, cause.message]) });
  const second = new Engine(runtime, { onRestart: (cause, { own }) => told.push(['second', own, cause.message]) });
  assert.equal(first.state, 'ready');
  assert.equal(first.call((ex) => ex.ok()), 42);
  const [old1, old2] = fake.made;
  assert.throws(() => first.call((ex) => ex.trap()), EngineRestarted);
  assert.equal(fake.instance(), 1, 'one fresh instance');
  assert.equal(runtime.resets, 1);
  assert.equal(runtime.exports.memory.instance, 1, "the runtime's exports are the fresh instance's");
  assert.deepEqual(told, [['first', true, 'unreachable'], ['second', false, 'unreachable']], 'each engine is told, and whether the panic was its own');
  assert.deepEqual([old1.freed, old2.freed], [0, 0], "the old instance's handles are dropped, never freed into the new one");
  assert.equal(fake.made.length, 4);
  for (const engine of [first, second]) {
    assert.equal(engine.state, 'ready');
    assert.equal(engine.restarts, 1);
    assert.equal(engine.call((ex) => ex.instance), 1, 'the handle is on the fresh instance');
    assert.equal(engine.call((ex) => ex.ok()), 42);
  }
  assert.throws(() => old1.ok(), /stale object/, 'a handle of the old instance refuses');
  // An ordinary error is passed on and restarts nothing.
  assert.throws(() => second.call((ex) => ex.refuse()), /heads: 3/);
  assert.equal(fake.instance(), 1);
  assert.equal(second.restarts, 1);
  // A panic in the second: the first is renewed as well.
  assert.throws(() => second.call((ex) => ex.trap()), EngineRestarted);
  assert.deepEqual(told.slice(2), [['first', false, 'unreachable'], ['second', true, 'unreachable']]);
  assert.deepEqual([first.restarts, second.restarts, runtime.resets], [2, 2, 2]);
});

test('engine: a stopped engine is freed once and left alone by later resets', () => {
  const fake = fakeModule();
  const runtime = runtimeOf(fake.module);
  const first = new Engine(runtime);
  const second = new Engine(runtime, { onRestart: () => assert.fail('a stopped engine is not restarted') });
  const handle = fake.made[1];
  second.stop();
  assert.equal(handle.freed, 1);
  assert.equal(second.state, 'stopped');
  assert.throws(() => first.call((ex) => ex.trap()), EngineRestarted);
  assert.equal(fake.made.length, 3, "only the first engine's fresh handle");
  assert.equal(second.state, 'stopped');
  assert.throws(() => second.call((ex) => ex.ok()), EngineStopped);
});

test('engine: when no fresh handle can be made every engine on the runtime is stopped, and says so on every call', () => {
  const fake = fakeModule();
  const runtime = runtimeOf(fake.module);
  const stopped = [];
  const first = new Engine(runtime, { onStop: (cause) => stopped.push(String(cause)) });
  const second = new Engine(runtime, { onStop: (cause) => stopped.push(String(cause)) });
  fake.refuse = new WebAssembly.RuntimeError('out of memory');
  assert.throws(() => first.call((ex) => ex.trap()), EngineStopped);
  assert.deepEqual([first.state, second.state], ['stopped', 'stopped']);
  assert.equal(stopped.length, 2);
  assert.match(stopped[0], /out of memory/);
  assert.throws(() => first.call((ex) => ex.ok()), EngineStopped);
  assert.throws(() => second.call((ex) => ex.ok()), EngineStopped);
});

test('engine: a glue without the reset function stops every engine after a panic, saying why', () => {
  const fake = fakeModule({ resettable: false });
  const runtime = runtimeOf(fake.module);
  const stopped = [];
  const first = new Engine(runtime, { onStop: (cause) => stopped.push(cause.message) });
  const second = new Engine(runtime, { onStop: (cause) => stopped.push(cause.message) });
  assert.throws(() => second.call((ex) => ex.trap()), EngineStopped);
  assert.deepEqual([first.state, second.state], ['stopped', 'stopped']);
  assert.equal(stopped.length, 2);
  assert.match(stopped[0], /cannot make a fresh instance \(no __wbg_reset_state/);
  assert.equal(fake.made.length, 2, 'no handle made on the broken instance');
});

test('format: numbers, and the arithmetic of a shift-difference cell', () => {
  assert.equal(fmt(0.12345), '0.1235');
  assert.equal(fmt(-0.5), '\u22120.5000');
  assert.equal(fmt(-0.00001), '0.0000');
  assert.equal(parseFmt('\u22120.5000'), -0.5);
  const cell = {
    query: 'cat',
    key: 'sat',
    values: { a: 0.2, shifted: 0.1, d: 0.1, g: 0.5, fused: 0.25 },
    gate: { alpha: 1, beta: 2, gamma: -1 },
    row_sum: { a: 1, fused: 1.05 },
    lambda: null,
  };
  const lines = cellLines(cell, { renormalize: 'none' });
  const terms = Object.fromEntries(lines.flat().filter((s) => s.term).map((s) => [s.term, parseFmt(s.text)]));
  assert.equal(terms.a, 0.2);
  assert.equal(terms.g, 0.5);
  assert.equal(terms.d, 0.1);
  assert.equal(terms.fused, 0.25);
  assert.equal(terms.alpha, 1);
  assert.equal(terms.gamma, -1);
  assert.match(lines[0].map((s) => s.text).join(''), /^A′ᵢⱼ = Aᵢⱼ \+ Gᵢⱼ × Dᵢⱼ = 0\.2000 \+ 0\.5000 × 0\.1000 = 0\.2500$/);
  const softmax = cellLines(cell, { renormalize: 'softmax' });
  assert.equal(softmax[0].find((s) => s.term === 'pre').text, '0.2500');
  assert.equal(softmax[1].find((s) => s.term === 'fused').text, '0.2500');
  const negative = cellLines({ ...cell, values: { ...cell.values, d: -0.1 } }, { renormalize: 'none' });
  assert.match(negative[0].map((s) => s.text).join(''), /× \(−0\.1000\)/);
});

test('format: Diff Transformer and single-map cells', () => {
  const dt = cellLines({ values: { a1: 0.5, a2: 0.25, diff: 0.3 }, lambda: 0.8 }, {});
  assert.match(dt[0].map((s) => s.text).join(''), /^\(A1 − λ·A2\)ᵢⱼ = 0\.5000 − 0\.8000 × 0\.2500 = 0\.3000$/);
  const single = cellLines({ values: { a: 0.125 } }, {});
  assert.equal(single[0].map((s) => s.text).join(''), 'Aᵢⱼ = 0.1250');
  // A map over segments (the view's `columns`) spreads a segment's weight over its tokens: key 5
  // of 7 tokens in segments of 3 is in the last, one-token segment.
  const columns = { local: 'keys', segments: 'segments', a: 'keys' };
  const spread = cellLines({ values: { local: 0, segments: 0.3, a: 0.3 } }, { columns, segment: 3, tokens: 7, col: 6 });
  assert.equal(spread[0].map((s) => s.text).join(''), 'Aᵢⱼ = localᵢⱼ + segmentsᵢⱼ / |segment of j| = 0.0000 + 0.3000 / 1 = 0.3000');
  const inner = cellLines({ values: { local: 0, segments: 0.3, a: 0.1 } }, { columns, segment: 3, tokens: 7, col: 4 });
  assert.match(inner[0].map((s) => s.text).join(''), /0\.3000 \/ 3 = 0\.1000$/);
  // Without the view's columns, one line per map.
  assert.equal(cellLines({ values: { local: 0, segments: 0.3, a: 0.1 } }, {}).length, 3);
  // Gated attention: its gate's mean at the query, and the gate channel by channel (the first
  // eight of them, then how many there are).
  const gated = cellLines({ values: { a: 0.5, output_gate_mean: 0.25 }, output_gate: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95] }, {});
  assert.deepEqual(
    gated.map((line) => line.map((s) => s.text).join('')),
    ['Aᵢⱼ = 0.5000', 'mean Gₒᵢ = 0.2500', 'Gₒ[i, c] = (0.10, 0.20, 0.30, 0.40, 0.50, 0.60, 0.70, 0.80, … (10))'],
  );
});

test('format: invisible characters in tokens are shown', () => {
  assert.equal(visibleToken('cat'), 'cat');
  assert.equal(visibleToken('\u200b'), '⟨U+200B⟩');
  assert.equal(visibleToken('a\u202eb'), 'a⟨U+202E⟩b');
  assert.equal(visibleToken('👩‍💻'), '👩‍💻');
  assert.equal(visibleToken(' '), '⟨U+0020⟩');
  assert.equal(visibleToken('<img src=x>'), '<img src=x>');
});

// The custom element's attributes (www/explorer/attributes.js).

/** The runtime's stageName, for the names the tests use. */
const STAGES = { a: 'a', A: 'a', shift: 'shifted', shifted: 'shifted', d: 'd', D: 'd', g: 'g', G: 'g', fused: 'fused', a1: 'a1', a2: 'a2', diff: 'diff' };
const stageName = (n) => STAGES[n];

test('attributes: every state key, gate, maps, controls and src; one name each', () => {
  assert.deepEqual(ATTRIBUTES.slice(-4), ['gate', 'maps', 'controls', 'src']);
  for (const key of ['text', 'mechanism', 'heads', 'head', 'shift', 'causal', 'difference', 'fill', 'renormalize', 'alpha', 'beta', 'gamma', 'tau', 'window', 'segment', 'lambda', 'weights', 'lang', 'theme', 'all_heads']) {
    assert.ok(ATTRIBUTES.includes(key), key);
  }
  assert.ok(Object.isFrozen(ATTRIBUTES));
});

test('attributes: gate is three numbers α,β,γ, each snapped into its range', () => {
  assert.deepEqual(parseGate('1.5,3,-0.5', NAMES), { alpha: 1.5, beta: 3, gamma: -0.5 });
  assert.deepEqual(parseGate(' 1 , 2 , 3 ', NAMES), { alpha: 1, beta: 2, gamma: 3 });
  assert.deepEqual(parseGate('99,0.04,-99', NAMES), { alpha: 10, beta: 0, gamma: -10 });
  for (const bad of ['', '1,2', '1,2,3,4', '1,x,3', '1,,3', null]) assert.equal(parseGate(bad, NAMES), undefined, String(bad));
  assert.equal(formatGate({ alpha: 1.5, beta: 3, gamma: -0.5 }), '1.5,3,-0.5');
  assert.deepEqual(parseGate(formatGate({ alpha: -0.4, beta: 0.6, gamma: 0.1 }), NAMES), { alpha: -0.4, beta: 0.6, gamma: 0.1 });
});

test('attributes: name lists (maps, controls): all, none, canonical names, unknown ones reported', () => {
  assert.deepEqual(readNameList(null, stageName), { set: null, unknown: [] });
  assert.deepEqual(readNameList('all', stageName), { set: null, unknown: [] });
  assert.deepEqual(readNameList('none', stageName), { set: new Set(), unknown: [] });
  assert.deepEqual(readNameList('A, shift,D,,fused', stageName), { set: new Set(['a', 'shifted', 'd', 'fused']), unknown: [] });
  assert.deepEqual(readNameList('A,nope', stageName), { set: new Set(['a']), unknown: ['nope'] });
  assert.deepEqual(nameSet('shift,heads,bogus', (n) => (CONTROL_NAMES.includes(n) ? n : null)), new Set(['shift', 'heads']));
});

test('attributes: one attribute at a time, invalid values ignored with a sentence that names them', () => {
  assert.deepEqual(readAttribute('shift', '3', NAMES, stageName), { state: { shift: 3 } });
  assert.deepEqual(readAttribute('causal', '', NAMES, stageName), { state: { causal: true } });
  assert.deepEqual(readAttribute('mechanism', 'standard', NAMES, stageName), { state: { mechanism: 'standard' } });
  assert.deepEqual(readAttribute('lang', 'zh-Hans', NAMES, stageName), { state: { lang: 'zh' } });
  assert.deepEqual(readAttribute('shift', null, NAMES, stageName), { state: {} }, 'removed: the explorer keeps its value');
  assert.deepEqual(readAttribute('shift', 'lots', NAMES, stageName), { state: {}, invalid: '<diffattn-explorer shift="lots">: not a valid shift; ignored' });
  assert.match(readAttribute('mechanism', 'magic', NAMES, stageName).invalid, /not a valid mechanism/);
  assert.match(readAttribute('gate', '1,2', NAMES, stageName).invalid, /three numbers/);
  assert.deepEqual(readAttribute('maps', 'A,D', NAMES, stageName), { maps: new Set(['a', 'd']) });
  assert.match(readAttribute('controls', 'shift,wheel', NAMES, stageName).invalid, /unknown control wheel/);
  assert.deepEqual(readAttribute('src', ' spec.json ', NAMES, stageName), { src: 'spec.json' });
  assert.deepEqual(readAttribute('src', '', NAMES, stageName), { src: null });
});

test('attributes: all at once, the gate winning over alpha, beta, gamma; named keys listed', () => {
  const attrs = { shift: '2', alpha: '9', gate: '1,2,3', maps: 'A,fused', controls: 'none', heads: 'x', text: 'hi' };
  const read = readAttributes((n) => attrs[n] ?? null, NAMES, stageName);
  assert.deepEqual(read.state, { text: 'hi', shift: 2, alpha: 1, beta: 2, gamma: 3 });
  assert.deepEqual(read.named, new Set(['text', 'shift', 'alpha', 'beta', 'gamma']));
  assert.deepEqual(read.maps, new Set(['a', 'fused']));
  assert.deepEqual(read.controls, new Set());
  assert.equal(read.src, null);
  assert.deepEqual(read.invalid, ['<diffattn-explorer heads="x">: not a valid heads; ignored']);
});

test('layout: the room the maps have, and what the engine is asked for on one screen, by width and presenting', () => {
  assert.equal(roomBelow(200, 768), 768 - 200 - 12);
  assert.equal(roomBelow(600, 768), Infinity, 'too short to fit: lay out by width');
  const base = { stages: ['a', 'fused'] };
  // One screen: the room in device pixels (dpr 2), the title line and the gap with it.
  const one = gridAsks({ width: 700.6, height: 500, dpr: 2, viewportHeight: 800, font_px: 26, base });
  assert.deepEqual(one.first, { stages: ['a', 'fused'], width_px: 1401, font_px: 26, title_px: 36, gap_px: 20, height_px: 1000 });
  assert.equal(one.then, null);
  // By width: no height, maps side by side while each is at least 130 CSS px, none taller
  // than 0.8 of the screen (at most 640 CSS px).
  const wide = gridAsks({ width: 720, height: Infinity, dpr: 1, viewportHeight: 900, font_px: 13, base });
  assert.deepEqual([wide.first.height_px, wide.first.min_plot_px, wide.first.max_plot_px], [0, 130, 640]);
  // Presenting: the maps fitted to the room they have on the page, then by width, each plot
  // at least 1.5 × as tall.
  const present = gridAsks({ width: 1248, height: Infinity, dpr: 1, present: { width: 1040, height: 740 }, viewportHeight: 800, font_px: 16, base });
  assert.deepEqual([present.first.width_px, present.first.height_px, present.first.title_px], [1040, 740, 18]);
  const second = present.then({ plot_px: 308 });
  assert.deepEqual([second.width_px, second.height_px, second.min_plot_px, second.title_px], [1248, 0, 462, 26]);
  assert.ok(second.max_plot_px >= 462);
});

test('viewport: texts parse to one canonical form or to nothing', async () => {
  const { parseViewport } = await import('../../www/explorer/viewport.js');
  assert.equal(parseViewport(' 120, 120 ,64'), '120,120,64');
  assert.equal(parseViewport(''), '');
  assert.equal(parseViewport('whole'), '');
  assert.equal(parseViewport(null), '');
  for (const bad of ['1,2', '1,2,3,4', '-1,0,8', '0,0,0', '1.5,0,8', 'a,b,c', '0,,8', '0,0,1e9']) {
    assert.equal(parseViewport(bad), undefined, bad);
  }
});

test('viewport: fitted to the maps like Rust`s Viewport::within, formatted back to a text', async () => {
  const { viewportOf, formatViewport } = await import('../../www/explorer/viewport.js');
  const shape = { rows: 100, cols: 100 };
  assert.deepEqual(viewportOf('', shape), { row: 0, col: 0, size: 100, whole: true });
  // A window past the end slides back inside; one larger than the maps is the whole map.
  assert.deepEqual(viewportOf('95,90,10', shape), { row: 90, col: 90, size: 10, whole: false });
  assert.deepEqual(viewportOf('5,5,500', shape), { row: 0, col: 0, size: 100, whole: true });
  assert.equal(formatViewport({ row: 10.4, col: 20.6, size: 30 }, shape), '10,21,30');
  assert.equal(formatViewport({ row: 0, col: 0, size: 100 }, shape), '');
  // Maps with fewer keys than rows (a spec): the window fits each extent on its own.
  assert.deepEqual(viewportOf('0,50,20', { rows: 60, cols: 30 }), { row: 0, col: 10, size: 20, whole: false });
});

test('viewport: zooming keeps the point under the pointer in place, within its limits', async () => {
  const { viewportOf, zoomAt, MIN_VIEWPORT } = await import('../../www/explorer/viewport.js');
  const shape = { rows: 200, cols: 200 };
  const whole = viewportOf('', shape);
  // Zoom ×2 about (50, 150): the anchor is at 1/4 and 3/4 of the window before and after.
  const text = zoomAt(whole, shape, 2, { row: 50, col: 150 });
  assert.equal(text, '25,75,100');
  const v = viewportOf(text, shape);
  assert.equal((50 - v.row) / v.size, 50 / 200);
  assert.equal((150 - v.col) / v.size, 150 / 200);
  // Never closer than MIN_VIEWPORT tokens, never wider than the maps.
  let t = text;
  for (let i = 0; i < 30; i++) t = zoomAt(viewportOf(t, shape), shape, 1.5);
  assert.equal(viewportOf(t, shape).size, MIN_VIEWPORT);
  for (let i = 0; i < 30; i++) t = zoomAt(viewportOf(t, shape), shape, 1 / 1.5);
  assert.equal(t, '');
});

test('viewport: panning and centring stay inside the maps; follow moves only when the cell is hidden', async () => {
  const { viewportOf, panBy, centreOn, follow } = await import('../../www/explorer/viewport.js');
  const shape = { rows: 100, cols: 100 };
  const v = viewportOf('10,10,20', shape);
  assert.equal(panBy(v, shape, 5, -3), '15,7,20');
  assert.equal(panBy(v, shape, 500, -500), '80,0,20');
  assert.equal(centreOn(v, shape, { row: 50, col: 50 }), '40,40,20');
  assert.equal(centreOn(v, shape, { row: 0, col: 99 }), '0,80,20');
  assert.equal(follow(v, shape, { row: 15, col: 29 }), null);
  assert.equal(follow(v, shape, { row: 30, col: 15 }), '11,10,20');
  assert.equal(follow(v, shape, { row: 9, col: 9 }), '9,9,20');
  assert.equal(follow(viewportOf('', shape), shape, { row: 99, col: 99 }), null);
});

test('work: the busy line names the head being computed', async () => {
  const { progressText } = await import('../../www/explorer/work.js');
  const { translate } = await import('../../www/explorer/i18n.js');
  // `done` heads are in: the line names the one being computed.
  assert.equal(progressText((k, p) => translate('en', k, p), { done: 2, total: 8, tokens: 2048 }), 'Computing head 3 of 8 (2048 tokens)…');
  assert.equal(progressText((k, p) => translate('en', k, p), { done: 8, total: 8, tokens: 16 }), 'Computing head 8 of 8 (16 tokens)…');
});

test('work: while a person types, the pause counts from when the page is done with the key, so a slow key does not let the work in', async () => {
  const { Work, TYPING_IDLE_MS } = await import('../../www/explorer/work.js');
  let clock = 0;
  const realNow = performance.now;
  performance.now = () => clock;
  try {
    const calls = [];
    const engine = { state: 'ready', call: (fn) => fn({ work: (ms, every) => (calls.push(['work', ms, every]), { finished: false, done: 0, total: 1 }), progress: () => ({ finished: false }) }) };
    const view = { view: { tokens: 2048 }, state: { heads: 8 }, engine, t: (k) => k, el: {}, report: assert.fail };
    const work = new Work(view, { onShown() {}, onEvery() {}, held: () => false });
    work.stop(); // no tasks: only what `now` decides is looked at
    // Not typing: the render works, does not finish, and so learns that this length is long.
    assert.equal(work.now(20, false), false);
    assert.equal(calls.length, 1);
    // A key; the page takes longer than the pause to tokenize it before the render comes.
    work.typed();
    clock += TYPING_IDLE_MS - 1;
    assert.equal(work.now(20, false), false);
    assert.equal(calls.length, 1, 'while typing, a long render leaves the work to the tasks');
    // The pause is counted from that render: just after it the person is still typing.
    clock += TYPING_IDLE_MS - 1;
    assert.equal(work.typing(), true, 'counted from the render, not from the key');
    clock += 2;
    assert.equal(work.typing(), false);
  } finally {
    performance.now = realNow;
  }
});

test('work: after a render outside a frame, no task works before the next frame has run', async () => {
  const { Work } = await import('../../www/explorer/work.js');
  const frames = [];
  const tasks = [];
  const saved = { raf: globalThis.requestAnimationFrame, scheduler: globalThis.scheduler };
  globalThis.requestAnimationFrame = (cb) => frames.push(cb);
  globalThis.scheduler = { postTask: (fn) => (tasks.push(fn), Promise.resolve()) };
  const steps = [];
  try {
    const engine = { state: 'ready', call: (fn) => fn({ work: (ms, every) => (steps.push(every), { finished: false, done: 0, total: 8 }), progress: () => ({ finished: false }) }) };
    const view = { view: { tokens: 16 }, state: { heads: 8 }, engine, t: (k) => k, el: {}, report: assert.fail };
    const work = new Work(view, { onShown() {}, onEvery() {}, held: () => false });
    // The render (in an input's task) works for every head and leaves the rest to a task.
    work.beforeFrame(() => assert.equal(work.now(8, true), false));
    assert.deepEqual([steps.length, tasks.length], [1, 1]);
    // That task comes before the frame: it does no work, and asks again after the frame.
    tasks.shift()();
    assert.deepEqual([steps.length, tasks.length, frames.length], [1, 0, 2]);
    for (const frame of frames.splice(0)) frame();
    assert.equal(tasks.length, 1);
    tasks.shift()();
    assert.equal(steps.length, 2, 'after the frame the work goes on');
    // From then on a step that did not finish queues the next at once (no frame between).
    assert.deepEqual([frames.length, tasks.length], [0, 1]);
    tasks.shift()();
    assert.equal(steps.length, 3);
    work.stop();
  } finally {
    globalThis.requestAnimationFrame = saved.raf;
    globalThis.scheduler = saved.scheduler;
  }
});

test('scheduler: soon() runs the frame at the end of the task, at most once between two frames', async () => {
  const frames = [];
  const runs = [];
  const s = new FrameScheduler((work) => runs.push(work), { requestFrame: (cb) => frames.push(cb) });
  s.schedule('render');
  s.soon();
  assert.equal(runs.length, 0, 'not within the task');
  await Promise.resolve();
  assert.deepEqual(runs, [{ render: true, overlay: false, early: true }]);
  // A second change before the frame waits for it.
  s.schedule('render');
  s.soon();
  await Promise.resolve();
  assert.equal(runs.length, 1);
  for (const frame of frames.splice(0)) frame();
  assert.deepEqual(runs[1], { render: true, overlay: false, early: false });
  // After that frame, a change runs early again; with nothing asked for, soon() does nothing.
  s.soon();
  await Promise.resolve();
  assert.equal(runs.length, 2);
  s.schedule('overlay');
  s.soon();
  await Promise.resolve();
  assert.deepEqual(runs[2], { render: false, overlay: true, early: true });
});

test('spec files: UTF-8 text and the binary form are read as bytes; binary garbage, other encodings and oversized files are refused by reason', async () => {
  const { readSpecFile, looksLikeSafetensors, MAX_SPEC_BYTES, MAX_BINARY_SPEC_BYTES } = await import('../../www/explorer/files.js');
  const text = async (blob) => new TextDecoder().decode(await readSpecFile(blob));
  assert.equal(await text(new Blob(['{"heads": 1, "tokens": ["été", "猫"]}'])), '{"heads": 1, "tokens": ["été", "猫"]}');
  // A byte-order mark is kept for the engine, which skips it as the CLI does.
  assert.deepEqual([...(await readSpecFile(new Blob([new Uint8Array([0xef, 0xbb, 0xbf]), '{}'])))], [0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
  const reason = (blob) => readSpecFile(blob).then(() => 'read', (err) => err.reason);
  // Binary garbage, Latin-1 text ("é" as one byte), a lone UTF-16 byte-order mark.
  assert.equal(await reason(new Blob([new Uint8Array([0x00, 0xff, 0xfe, 0x80, 0x7b])])), 'not_text');
  assert.equal(await reason(new Blob([new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x7d])])), 'not_text');
  assert.equal(await reason(new Blob([new Uint8Array([0xff, 0xfe, 0x7b, 0x00])])), 'not_text');
  // The binary form: an 8-byte header length that fits, then `{`; its tensors are not text.
  const header = new TextEncoder().encode('{"x":{}}');
  const safetensors = new Uint8Array([header.length, 0, 0, 0, 0, 0, 0, 0, ...header, 0xff, 0x80]);
  assert.equal(looksLikeSafetensors(safetensors), true);
  assert.equal(await reason(new Blob([safetensors])), 'read');
  assert.equal(looksLikeSafetensors(new Uint8Array([200, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0x7d])), false, 'a header longer than the file');
  // Over the limit: refused from its size alone, before a byte is read; .safetensors files may be larger.
  const huge = { size: MAX_SPEC_BYTES + 1, arrayBuffer: () => assert.fail('read a file over the limit') };
  assert.equal(await reason(huge), 'too_large');
  assert.equal(await reason({ ...huge, name: 'layer.safetensors', size: MAX_BINARY_SPEC_BYTES + 1 }), 'too_large');
  const big = { name: 'layer.safetensors', size: MAX_SPEC_BYTES + 1, arrayBuffer: () => Promise.reject(new Error('gone')) };
  assert.equal(await reason(big), 'unreadable', 'a 64 MB binary spec is read');
  const broken = { size: 10, arrayBuffer: () => Promise.reject(new Error('gone')) };
  assert.equal(await reason(broken), 'unreadable');
});

test('"moved away" names only what the reader moved: a key of that name or of that parameter', () => {
  const moved = ['heads', 'shift', 'gate'];
  // An author's figure (attributes, a shared address): the reader moved nothing.
  assert.deepEqual(readerMoved(moved, new Set()), []);
  // The gate's three sliders are one parameter; the text and the view are none.
  assert.deepEqual(readerMoved(moved, new Set(['beta', 'text', 'view'])), ['gate']);
  assert.deepEqual(readerMoved(moved, new Set(['heads', 'shift'])), ['heads', 'shift']);
  // Without a record of the reader (a caller that keeps none), everything moved is named.
  assert.deepEqual(readerMoved(moved, undefined), moved);
});

test('the unknown words a note names: once each, in order, quoted, the first eight then a count', () => {
  const tokens = ['the', 'cat', 'sat', 'on', 'the', 'mat', ',', 'the', 'cat'];
  assert.equal(unknownWords(tokens, [1, 5, 8]), '“cat”, “mat”');
  assert.equal(unknownWords(tokens, [1, 5], 'zh'), '“cat”、“mat”');
  assert.equal(unknownWords(tokens, []), '');
  const many = Array.from({ length: 11 }, (_, i) => `w${i}`);
  assert.equal(unknownWords(many, many.map((_, i) => i)), '“w0”, “w1”, “w2”, “w3”, “w4”, “w5”, “w6”, “w7” …(+3)');
  // A control character is shown as its code point, as the axes show it.
  assert.equal(unknownWords(['a\u0007'], [0]), '“a⟨U+0007⟩”');
});

test("the model view's exports: every string in both languages with the same placeholders; cells split pixels as the engine does; the header wraps", async () => {
  const { WORDS, cellSpans, wrapText } = await import('../../www/explorer/model-export.js');
  const text = await readFile(new URL('../../www/explorer/model-export.js', import.meta.url), 'utf8');
  const used = new Set([...text.matchAll(/say\(v, '([\w]+)'/g)].map((m) => m[1]));
  assert.ok(used.size >= 5, `found only ${used.size} keys: the scan is broken`);
  // The model's words, one per weights choice.
  for (const c of KEYS.weights.choices) used.add(`mx_weights_${c}`);
  for (const key of used) assert.ok(key in WORDS.en, `missing key ${key}`);
  assert.deepEqual(Object.keys(WORDS.zh).sort(), Object.keys(WORDS.en).sort());
  for (const key of Object.keys(WORDS.en)) assert.deepEqual(placeholders(WORDS.zh[key]), placeholders(WORDS.en[key]), key);
  // 3 cells over 10 px: the centres 0.5 … 9.5 fall in [0, 3.33), [3.33, 6.67), [6.67, 10).
  assert.deepEqual(cellSpans(3, 10), [[0, 3], [3, 7], [7, 10]]);
  assert.deepEqual(cellSpans(4, 8), [[0, 2], [2, 4], [4, 6], [6, 8]]);
  // More cells than pixels: some cells have none; the pixels are each in one cell, in order.
  const spans = cellSpans(7, 4);
  assert.equal(spans.filter(Boolean).length, 4);
  assert.deepEqual(spans.filter(Boolean).flatMap(([a, b]) => [a, b]), [0, 1, 1, 2, 2, 3, 3, 4]);
  // One character a unit wide: at spaces, and a word longer than a line cut.
  const width = (t) => t.length;
  assert.deepEqual(wrapText('the film was not good', 8, width), ['the film', 'was not', 'good']);
  assert.deepEqual(wrapText('abcdefghij xy', 4, width), ['abcd', 'efgh', 'ij', 'xy']);
  assert.deepEqual(wrapText('short', 40, width), ['short']);
});

test('the model view: every string it says is in both languages, with the same placeholders; the engine figures read back per head', async () => {
  const { WORDS, headStats } = await import('../../www/explorer/model-view.js');
  const text = await readFile(new URL('../../www/explorer/model-view.js', import.meta.url), 'utf8');
  // Every key the view names: a literal 'model_…' string (said directly or chosen by a condition).
  const used = new Set([...text.matchAll(/'(model_[a-z_]+)'/g)].map((m) => m[1]));
  assert.ok(used.size >= 9, `found only ${used.size} keys: the scan is broken`);
  // The sort menu's, built at run time from the schema's choices.
  for (const c of KEYS.model_sort.choices) used.add(`model_sort_${c}`);
  for (const key of used) assert.ok(key in WORDS.en, `missing key ${key}`);
  assert.deepEqual(Object.keys(WORDS.zh).sort(), Object.keys(WORDS.en).sort());
  for (const key of Object.keys(WORDS.en)) assert.deepEqual(placeholders(WORDS.zh[key]), placeholders(WORDS.en[key]), key);
  // Nine numbers per head (web/src/model_view.rs); a head with no rows has no statistics.
  const flat = new Float32Array([1.5, 0.25, 0.5, 0, 0.25, -0.5, 0, 1, 4, ...new Array(9).fill(0)]);
  assert.deepEqual(headStats(flat), [
    { entropy: 1.5, sink: 0.25, previous: 0.5, next: 0, signed_sink: 0.25, signed_previous: -0.5, signed_next: 0, negative: true, rows: 4 },
    null,
  ]);
});

test('the model view fits its cards to the room: with their figures while a layer fits a row, else compact, a row per layer unless sorted', async () => {
  const { fitCards } = await import('../../www/explorer/model-view-style.js');
  // 12 heads in 1,040 px: cards with figures, as wide as a row of 12 lets them (at most 112).
  let f = fitCards({ width: 1040, height: 800, heads: 12, layers: 6, sorted: false });
  assert.deepEqual([f.compact, f.rows, f.cols], [false, false, 12]);
  assert.ok(f.side >= 44 && 12 * f.side + 11 * 6 <= 1040, `side ${f.side}`);
  // 32 heads: compact, a row per layer after its name, every row within the width.
  f = fitCards({ width: 1040, height: 800, heads: 32, layers: 32, sorted: false });
  assert.deepEqual([f.compact, f.rows, f.cols], [true, true, 32]);
  assert.ok(30 + 32 * (f.side + 2) <= 1040 && f.side >= 22, `side ${f.side}`);
  // Sorted: one list, no row names.
  f = fitCards({ width: 1040, height: 800, heads: 32, layers: 32, sorted: true });
  assert.deepEqual([f.compact, f.rows], [true, false]);
  // A phone: 12 heads compact in a row; 32 heads do not fit a row and wrap.
  f = fitCards({ width: 374, height: 844, heads: 12, layers: 6, sorted: false });
  assert.deepEqual([f.compact, f.rows, f.cols], [true, true, 12]);
  f = fitCards({ width: 374, height: 844, heads: 32, layers: 32, sorted: false });
  assert.deepEqual([f.compact, f.rows, f.side], [true, false, 22]);
  assert.ok(f.cols < 32 && f.cols * 24 <= 376, `cols ${f.cols}`);
});
