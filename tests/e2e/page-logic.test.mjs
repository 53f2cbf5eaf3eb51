// Unit tests of the page's pure modules (no browser): the address encoding, the i18n
// dictionary and the cell arithmetic text. They run with the e2e files under
// `node --test tests/e2e/` and need neither pkg/ nor Chromium.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { LANGUAGES, PRESETS, STRINGS, detectLanguage, formatParts, placeholders, translate } from '../../www/i18n.js';
import { DEFAULTS, RANGES, decodeState, encodeState, nearestChoice, shiftModulo, snap } from '../../www/state.js';
import { cellLines, fmt, parseFmt, visibleToken } from '../../www/format.js';

test('i18n: every key exists in both languages with the same placeholders', () => {
  const en = Object.keys(STRINGS.en).sort();
  for (const lang of LANGUAGES) {
    assert.deepEqual(Object.keys(STRINGS[lang]).sort(), en, `keys of ${lang}`);
    for (const key of en) {
      assert.ok(STRINGS[lang][key].trim().length > 0, `${lang}.${key} is empty`);
      assert.deepEqual(placeholders(STRINGS[lang][key]), placeholders(STRINGS.en[key]), `placeholders of ${lang}.${key}`);
    }
  }
});

test('i18n: every key the page uses is in the dictionary', async () => {
  const html = await readFile(new URL('../../www/index.html', import.meta.url), 'utf8');
  const app = await readFile(new URL('../../www/app.js', import.meta.url), 'utf8');
  const used = new Set();
  for (const m of html.matchAll(/data-i18n(?:-[a-z-]+)?="([\w]+)"/g)) used.add(m[1]);
  for (const m of app.matchAll(/\bt(?:Nodes)?\('([\w]+)'/g)) used.add(m[1]);
  for (const m of app.matchAll(/translate\(state\.lang, '([\w]+)'/g)) used.add(m[1]);
  assert.ok(used.size > 40, `found only ${used.size} keys: the scan is broken`);
  for (const key of used) assert.ok(key in STRINGS.en, `missing key ${key}`);
  // Keys built at run time.
  for (const id of ['a', 'shifted', 'shifted_back', 'd', 'g', 'fused', 'a1', 'a2', 'diff']) assert.ok(`stage_${id}` in STRINGS.en);
  for (const lang of LANGUAGES) assert.ok(`preset_group_${lang}` in STRINGS.en);
});

test('i18n: the slider labels say "shift" and "heads" in English', () => {
  assert.match(STRINGS.en.shift_label, /\bshift\b/i);
  assert.match(STRINGS.en.heads_label, /\bheads\b/i);
  // No other label of a control shares those words, so a label search finds one control.
  for (const key of ['head_label', 'all_heads_label', 'fill_label']) assert.doesNotMatch(STRINGS.en[key], /\bheads\b/i);
});

test('i18n: language detection and formatting', () => {
  assert.equal(detectLanguage(['zh-CN', 'en']), 'zh');
  assert.equal(detectLanguage(['zh-Hant-TW']), 'zh');
  assert.equal(detectLanguage(['fr-FR', 'en-GB']), 'en');
  assert.equal(detectLanguage(['de']), 'en');
  assert.equal(detectLanguage([]), 'en');
  assert.equal(translate('en', 'tokens_count', { n: 7 }), '7 tokens');
  assert.equal(translate('zh', 'tokens_count', { n: 7 }), '7 个词元');
  assert.equal(translate('en', 'no_such_key'), 'no_such_key');
  const node = { node: true };
  assert.deepEqual(formatParts('a {x} b {y}', { x: node }), ['a ', node, ' b ', '{y}']);
  assert.equal(
    translate('en', 'aria_map', { name: 'A′', h: 2, total: 4, desc: 'fused attention', n: 7 }),
    'A′, head 2 of 4: fused attention of 7 tokens',
  );
  assert.ok(translate('zh', 'aria_map', { name: 'A′', h: 2, total: 4, desc: '融合注意力', n: 7 }).startsWith('A′'));
  for (const lang of LANGUAGES) assert.ok(PRESETS[lang].length >= 3);
});

test('state: defaults decode from an empty address', () => {
  assert.deepEqual(decodeState(''), { ...DEFAULTS });
  assert.deepEqual(decodeState('?', { lang: 'zh', text: '你好' }), { ...DEFAULTS, lang: 'zh', text: '你好' });
});

test('state: encode then decode gives the same state', () => {
  const state = {
    ...DEFAULTS,
    text: 'A <b>bold</b> & "quoted" 🤦🏽‍♀️ שלום\u200b text + more',
    mechanism: 'diff_transformer',
    heads: 8,
    head: 3,
    causal: true,
    k: -7,
    difference: 'symmetric',
    fill: 'zero',
    renormalize: 'softmax',
    alpha: -2.3,
    beta: 0.1,
    gamma: 4,
    tau: 12.5,
    window: 5,
    allHeads: true,
    lang: 'zh',
    embed: true,
    theme: 'dark',
    model: 'untrained',
  };
  const query = encodeState(state);
  assert.deepEqual(decodeState(`?${query}`), state);
  // Only what differs from the defaults is written, besides the text and the language.
  assert.equal(encodeState({ ...DEFAULTS }), new URLSearchParams({ text: DEFAULTS.text, lang: 'en' }).toString());
});

test('state: malformed values fall back to the defaults, numbers snap into range', () => {
  const s = decodeState('?mech=evil&heads=0&head=-2&causal=maybe&k=1e9&alpha=NaN&beta=0.30000000004&tau=-5&w=2.6&diff=x&fill=&renorm=softmax&lang=fr&theme=neon');
  assert.equal(s.mechanism, DEFAULTS.mechanism);
  assert.equal(s.heads, DEFAULTS.heads);
  assert.equal(s.head, DEFAULTS.head);
  assert.equal(s.causal, DEFAULTS.causal);
  assert.equal(s.k, RANGES.k.max);
  assert.equal(s.alpha, DEFAULTS.alpha);
  assert.equal(s.beta, 0.3);
  assert.equal(s.tau, RANGES.tau.min);
  assert.equal(s.window, 3);
  assert.equal(s.difference, DEFAULTS.difference);
  assert.equal(s.fill, DEFAULTS.fill);
  assert.equal(s.renormalize, 'softmax');
  assert.equal(s.lang, DEFAULTS.lang);
  assert.equal(s.theme, DEFAULTS.theme);
  assert.equal(decodeState('?text=').text, '');
  assert.equal(snap(0.1 + 0.2, RANGES.alpha), 0.3);
});

test('state: k mod L and the nearest head count', () => {
  assert.equal(shiftModulo(3, 5), 3);
  assert.equal(shiftModulo(-1, 5), 4);
  assert.equal(shiftModulo(10, 5), 0);
  assert.equal(shiftModulo(-11, 5), 4);
  assert.equal(shiftModulo(3, 0), 0);
  assert.equal(nearestChoice([1, 2, 4, 8, 16, 32, 64], 5), 4);
  assert.equal(nearestChoice([1, 2, 4, 8, 16, 32], 64), 32);
  assert.equal(nearestChoice([1, 2, 4], 3), 2);
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
});

test('format: invisible characters in tokens are shown', () => {
  assert.equal(visibleToken('cat'), 'cat');
  assert.equal(visibleToken('\u200b'), '⟨U+200B⟩');
  assert.equal(visibleToken('a\u202eb'), 'a⟨U+202E⟩b');
  assert.equal(visibleToken('👩‍💻'), '👩‍💻');
  assert.equal(visibleToken(' '), '⟨U+0020⟩');
  assert.equal(visibleToken('<img src=x>'), '<img src=x>');
});
