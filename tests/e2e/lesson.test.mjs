// The retrieval lesson (`/www/?lesson=retrieval`, www/explorer/lesson.js): it opens from its
// address; editing the context changes the answer and the bars; the answer's tokens are
// marked in the token strip and on the map's axes; the layer control changes the maps and
// the bars; moving a knob (shift or λ) changes that model's bars; the page's two shares are
// the command line's for the same text (tests/retrieval.rs checks the CLI against the
// library, this checks the page against the CLI); both languages.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness, waitForReady } from './harness.mjs';
import { LESSON_STRINGS } from '../../www/explorer/lesson-text.js';
import { placeholders } from '../../www/explorer/i18n.js';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

async function openLesson(query = '', options = {}) {
  const { page, errors } = await h.newPage(options);
  await page.goto(h.url(`/www/?lesson=retrieval${query}`));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  return { page, errors };
}

/** `{ model: { answer, noise } }` from the bars drawn. */
async function bars(page) {
  return page.evaluate(() => {
    const out = {};
    for (const r of window.diffattn.root.querySelectorAll('rect.bar[data-model]')) {
      out[r.dataset.model] ??= {};
      out[r.dataset.model][r.dataset.kind] = Number(r.dataset.value);
    }
    return out;
  });
}

async function answers(page) {
  return page.evaluate(() => Object.fromEntries([...window.diffattn.root.querySelectorAll('li.lesson-answer')].map((li) => [li.dataset.model, li.dataset.answer])));
}

async function type(page, selector, text) {
  await page.evaluate(
    ([sel, value]) => {
      const node = window.diffattn.root.querySelector(sel);
      node.value = value;
      node.dispatchEvent(new Event('input', { bubbles: true }));
    },
    [selector, text],
  );
  await page.evaluate(() => window.diffattn.settled());
}

test('both languages have the same lesson strings and placeholders; every key the lesson uses exists', async () => {
  const { readFile } = await import('node:fs/promises');
  const used = new Set();
  for (const f of ['www/explorer/lesson.js', 'www/lesson-page.js']) {
    const text = await readFile(new URL(`../../${f}`, import.meta.url), 'utf8');
    for (const m of text.matchAll(/\b(?:lt\(|lessonText\([\w.]+, )'(\w+)'/g)) used.add(m[1]);
  }
  assert.ok(used.size > 15, `found only ${used.size} keys: the scan is broken`);
  for (const k of used) assert.ok(k in LESSON_STRINGS.en, `missing lesson key ${k}`);
  assert.deepEqual(Object.keys(LESSON_STRINGS.zh).sort(), Object.keys(LESSON_STRINGS.en).sort());
  for (const k of Object.keys(LESSON_STRINGS.en)) assert.deepEqual(placeholders(LESSON_STRINGS.zh[k]), placeholders(LESSON_STRINGS.en[k]), k);
});

test('the lesson opens from its address with every model answering and four bar pairs', async () => {
  const { page, errors } = await openLesson();
  const a = await answers(page);
  assert.deepEqual(Object.values(a), ['42', '42', '42', '42'], JSON.stringify(a));
  const b = await bars(page);
  assert.equal(Object.keys(b).length, 4);
  for (const v of Object.values(b)) assert.ok(Number.isFinite(v.answer) && Number.isFinite(v.noise));
  assert.match(page.url(), /lesson=retrieval/);
  // The answer token (42) is marked in the token strip.
  const marked = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('.lesson-token.answer')].map((n) => n.textContent));
  assert.deepEqual(marked, ['42']);
  await screenshot(page, 'lesson-1280');
  // A share below 0 (a difference map's) is explained, naming exactly the models with one.
  const negative = Object.entries(b).filter(([, v]) => v.answer < 0 || v.noise < 0).map(([m]) => m);
  assert.ok(negative.includes('diff_transformer'), `the default text gives diff_transformer a negative share: ${JSON.stringify(b)}`);
  const note = await page.evaluate(() => {
    const n = window.diffattn.root.getElementById('lesson-negative');
    return { hidden: n.hidden, text: n.textContent };
  });
  assert.equal(note.hidden, false);
  assert.match(note.text, /below 0/);
  assert.match(note.text, /absolute values/);
  for (const m of Object.keys(b)) assert.equal(note.text.includes(`${m},`) || note.text.includes(`${m})`), negative.includes(m), `${m} named exactly when its share is below 0: ${note.text}`);
  assert.deepEqual(errors, []);
});

test('the answer and the facts are marked on the map axes', async () => {
  const { page } = await openLesson();
  const found = await page.evaluate(() => {
    const { lesson, root } = window.diffattn;
    const canvas = root.querySelector('canvas.lesson-map');
    const ctx = canvas.getContext('2d');
    const roles = lesson.asked.roles;
    const answerAt = roles.indexOf('answer');
    return lesson.marks.map((m) => {
      const { data } = ctx.getImageData(m.x + Math.floor(m.width / 2), m.y + Math.floor(m.height / 2), 1, 1);
      return { role: m.role, index: m.index, axis: m.axis, rgb: [data[0], data[1], data[2]], answerAt };
    });
  });
  const answer = found.filter((m) => m.role === 'answer');
  assert.equal(answer.length, 2, 'one mark on each axis');
  for (const m of answer) {
    assert.equal(m.index, m.answerAt);
    assert.deepEqual(m.rgb, [214, 39, 40], `${m.axis}: the answer's mark is drawn`);
  }
  assert.ok(found.some((m) => m.role === 'fact' && m.rgb[2] === 180), 'the facts are marked too');
});

test('editing the context changes the answer and the bars; the shares are the CLI’s', async () => {
  const { page, errors } = await openLesson();
  const before = await bars(page);
  await type(page, '#lesson-context', 'The room of Anna is 8. The film was long but never dull. The room of Ben is 15. The code of Maria is 7. It was a cold and quiet morning.');
  const a = await answers(page);
  assert.deepEqual(Object.values(a), ['8', '8', '8', '8'], 'every model now answers 8');
  const after = await bars(page);
  assert.notDeepEqual(after, before);
  // Adding a fact changes the bars again.
  await page.evaluate(() => window.diffattn.root.querySelector('#lesson-add').click());
  await page.evaluate(() => window.diffattn.settled());
  assert.notDeepEqual(await bars(page), after);
  // The same text on the command line gives the same two shares (the retrieving layer).
  const text = await page.evaluate(() => window.diffattn.lesson.state.text);
  const asked = await page.evaluate(() => window.diffattn.lesson.asked);
  for (const m of asked.models) {
    const out = JSON.parse(execFileSync('cargo', ['run', '--quiet', '--release', '--bin', 'diffattn', '--', 'retrieve', '--mechanism', m.name, text], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const page_ = m.layers[m.retrieving_layer - 1];
    assert.equal(out.answer, m.answer, m.name);
    assert.ok(Math.abs(out.answer_attention - page_.answer) < 1e-6, `${m.name}: ${out.answer_attention} vs ${page_.answer}`);
    assert.ok(Math.abs(out.noise_attention - page_.noise) < 1e-6, `${m.name}: ${out.noise_attention} vs ${page_.noise}`);
    assert.ok(Math.abs(out.answer_abs - page_.answer_abs) < 1e-6, `${m.name}: ${out.answer_abs} vs ${page_.answer_abs}`);
    assert.ok(Math.abs(out.noise_abs - page_.noise_abs) < 1e-6, `${m.name}: ${out.noise_abs} vs ${page_.noise_abs}`);
  }
  // Each signed share has its share of absolute values beside it, drawn (between 0 and 1).
  const drawn = await bars(page);
  for (const [m, v] of Object.entries(drawn)) {
    for (const k of ['answer_abs', 'noise_abs']) assert.ok(v[k] >= 0 && v[k] <= 1, `${m} ${k} ${v[k]}`);
    const layer = asked.models.find((x) => x.name === m).layers.at(-1);
    assert.ok(Math.abs(v.answer_abs - layer.answer_abs) < 1e-4 && Math.abs(v.noise_abs - layer.noise_abs) < 1e-4, m);
  }
  assert.deepEqual(errors, []);
});

test('the layer control changes the maps and the bars', async () => {
  const { page } = await openLesson();
  const visible = await page.evaluate(() => !window.diffattn.root.querySelector('#lesson-layer-box').hidden);
  assert.ok(visible, 'the models have two layers: the control shows');
  const hash = () =>
    page.evaluate(() => {
      const c = window.diffattn.root.querySelector('canvas.lesson-map');
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let x = 2166136261;
      for (let i = 0; i < data.length; i += 4) x = Math.imul(x ^ data[i] ^ (data[i + 1] << 8) ^ (data[i + 2] << 16), 16777619) >>> 0;
      return x;
    });
  const h2 = await hash();
  const b2 = await bars(page);
  await page.evaluate(() => {
    const s = window.diffattn.root.querySelector('#lesson-layer');
    s.value = '1';
    s.dispatchEvent(new Event('change'));
  });
  await page.evaluate(() => window.diffattn.settled());
  assert.notEqual(await hash(), h2);
  const b1 = await bars(page);
  assert.notDeepEqual(b1, b2);
  // The binding layer's window never reaches past the question: 0 and 0 (docs/LESSON.md).
  for (const v of Object.values(b1)) assert.deepEqual([v.answer, v.noise], [0, 0]);
  assert.match(page.url(), /layer=1/);
});

test('moving a knob away from its trained value changes that model’s bars', async () => {
  const { page } = await openLesson();
  const knobs = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('input[type=range][data-knob]')].map((k) => ({ model: k.dataset.model, knob: k.dataset.knob, value: Number(k.value), min: Number(k.min) })));
  assert.deepEqual(knobs.map((k) => k.knob).sort(), ['lambda', 'shift']);
  for (const k of knobs) {
    const before = await bars(page);
    await page.evaluate(
      ([model, knob, value]) => {
        const input = window.diffattn.root.querySelector(`input[data-model="${model}"][data-knob="${knob}"]`);
        input.value = String(value);
        input.dispatchEvent(new Event('input'));
      },
      [k.model, k.knob, k.knob === 'shift' ? 0 : 0],
    );
    await page.evaluate(() => window.diffattn.settled());
    const after = await bars(page);
    assert.notDeepEqual(after[k.model], before[k.model], `${k.model} ${k.knob}`);
    for (const other of Object.keys(after).filter((m) => m !== k.model)) assert.deepEqual(after[other], before[other]);
  }
  await screenshot(page, 'lesson-knobs-moved');
  // The address keeps the moved knobs: opened again, it shows the same sliders and bars.
  const search = await page.evaluate(() => location.search);
  const moved = new URLSearchParams(search).getAll('knob').sort();
  assert.equal(moved.length, knobs.length, `one knob entry per moved knob: ${search}`);
  const again = await openLesson(search.replace(/^\?lesson=retrieval/, ''));
  const values = (p) => p.evaluate(() => Object.fromEntries([...window.diffattn.root.querySelectorAll('input[type=range][data-knob]')].map((k) => [`${k.dataset.model}/${k.dataset.knob}`, Number(k.value)])));
  assert.deepEqual(await values(again.page), await values(page));
  assert.deepEqual(await bars(again.page), await bars(page));
  assert.equal(await again.page.evaluate(() => location.search), search, 'the address is written back as it was read');
  // Back to the trained value: the entry leaves the address.
  await page.evaluate(() => window.diffattn.root.querySelector('.lesson-knob button').click());
  await page.evaluate(() => window.diffattn.settled());
  assert.equal(new URLSearchParams(await page.evaluate(() => location.search)).getAll('knob').length, knobs.length - 1);
});

test('a lesson address with knobs no model has, or values out of range, opens with what can be set', async () => {
  const first = await openLesson();
  const shift = await first.page.evaluate(() => {
    const k = window.diffattn.root.querySelector('input[data-knob="shift"]');
    return { model: k.dataset.model, layer: Number(k.id.split('-').at(-2)), max: Number(k.max) };
  });
  const { page, errors } = await openLesson(`&knob=nosuchmodel:1:shift:2&knob=${shift.model}:9:shift:2&knob=${shift.model}:${shift.layer}:shift:999&knob=junk`);
  const kept = new URLSearchParams(await page.evaluate(() => location.search)).getAll('knob');
  // Only the knob that exists was set, clamped to its range by the engine.
  assert.deepEqual(kept, [`${shift.model}:${shift.layer}:shift:${shift.max}`]);
  const value = await page.evaluate(() => Number(window.diffattn.root.querySelector('input[data-knob="shift"]').value));
  assert.equal(value, shift.max, 'the slider shows the clamped value');
  assert.deepEqual(errors, []);
});

test('Chinese interface text, and the page on a phone and at 1024 × 768', async () => {
  const { page, errors } = await openLesson('&lang=zh');
  const title = await page.evaluate(() => window.diffattn.root.querySelector('#lesson-title').textContent);
  assert.equal(title, LESSON_STRINGS.zh.title);
  await screenshot(page, 'lesson-zh');
  for (const [w, hgt, name] of [
    [390, 844, 'lesson-phone'],
    [1024, 768, 'lesson-1024'],
  ]) {
    const p = await openLesson('', { width_px: w, height_px: hgt });
    const overflow = await p.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name}: no horizontal scrolling (${overflow} px)`);
    await screenshot(p.page, name);
  }
  assert.deepEqual(errors, []);
});

test('the package carries the retrieval models (scripts/build-pkg), byte for byte, each ≤ 300 KB gzipped', async () => {
  const { readFile } = await import('node:fs/promises');
  const { gzipSync } = await import('node:zlib');
  const path = await import('node:path');
  const manifest = JSON.parse(await readFile(path.join(ROOT, 'weights/retrieval/manifest.json'), 'utf8'));
  assert.equal(manifest.models.length, 4);
  const served = await fetch(h.url('/pkg/weights/retrieval/manifest.json')).then((r) => r.json());
  assert.deepEqual(served, manifest);
  for (const m of manifest.models) {
    const mine = await readFile(path.join(ROOT, 'weights/retrieval', m.file));
    const res = await fetch(h.url(`/pkg/weights/retrieval/${m.file}`));
    assert.equal(res.status, 200, m.file);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(mine), `${m.file}: the package's copy is the file`);
    assert.ok(gzipSync(mine, { level: 9 }).length <= 300 * 1024, `${m.file}: within the download budget`);
  }
});

test('every layer and head: the explorer element, loaded on first press, gets the chosen model’s multi-layer spec, the CLI’s', async () => {
  const { page, errors } = await h.newPage();
  const wasm = [];
  page.on('request', (req) => {
    const p = new URL(req.url()).pathname;
    if (p.endsWith('.wasm')) wasm.push(p);
  });
  await page.goto(h.url('/www/?lesson=retrieval'));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  // The lesson's first view: its own module only, no element registered.
  assert.ok(wasm.length > 0 && wasm.every((p) => /\/pkg\/diffattn_lesson(_simd)?_bg\.wasm$/.test(p)), JSON.stringify(wasm));
  assert.equal(await page.evaluate(() => customElements.get('diffattn-explorer') === undefined), true);
  const { name, layers, heads, label } = await page.evaluate(() => {
    const lesson = window.diffattn.lesson;
    const model = lesson.models.find((m) => m.name === lesson.state.mechanism);
    return { name: model.name, layers: model.layers.length, heads: model.layers.map((l) => l.heads), label: window.diffattn.root.getElementById('lesson-every').textContent };
  });
  assert.ok(label.includes(name), label);
  await page.evaluate(() => window.diffattn.root.getElementById('lesson-every').click());
  // The note is written once the element has the spec.
  const note = LESSON_STRINGS.en.every_layer_note.replace('{model}', name).replace('{layers}', String(layers));
  await page.waitForFunction((want) => window.diffattn.root.getElementById('lesson-every-note').textContent === want, note, { timeout: 60_000 });
  await page.evaluate(() => window.diffattn.lesson.explorerElement.settled());
  const seen = await page.evaluate(() => {
    const el = window.diffattn.lesson.explorerElement;
    return {
      tag: el.localName,
      view: el.state.view,
      options: [...el.shadowRoot.getElementById('layer').options].map((o) => o.value),
      note: window.diffattn.root.getElementById('lesson-every-note').textContent,
    };
  });
  assert.equal(seen.tag, 'diffattn-explorer');
  assert.equal(seen.view, 'model');
  assert.equal(seen.options.length, layers, `the element's layer control has the model's ${layers} layers: ${seen.options}`);
  // The model view draws the file's layers × heads: a card per head, in layer order, every
  // layer though they differ in heads (the binding layer has one).
  assert.ok(heads.some((n) => n !== heads[0]), `the layers differ in heads: ${heads}`);
  const want = heads.flatMap((n, l) => Array.from({ length: n }, (_, h) => `${l + 1}:${h + 1}`));
  await page.waitForFunction((n) => window.diffattn.lesson.explorerElement.shadowRoot.querySelectorAll('.mv-card').length >= n, want.length, { timeout: 60_000 });
  await page.evaluate(() => window.diffattn.lesson.explorerElement.settled());
  const view = await page.evaluate(() => {
    const r = window.diffattn.lesson.explorerElement.shadowRoot;
    return { cards: [...r.querySelectorAll('.mv-card')].map((c) => `${c.dataset.layer}:${c.dataset.head}`), drawn: r.querySelectorAll('canvas.mv-map[role="img"]').length };
  });
  assert.deepEqual(view.cards, want, 'every layer and head of the model');
  assert.equal(view.drawn, want.length, 'every map drawn');
  assert.ok(seen.note.includes(name), seen.note);
  // The page's module is instantiated now, on the press.
  assert.ok(wasm.some((p) => /\/pkg\/diffattn(_simd)?_bg\.wasm$/.test(p)), JSON.stringify(wasm));
  // The spec handed over is what `diffattn retrieve --spec` writes for the same text.
  const { text, spec } = await page.evaluate(() => {
    const lesson = window.diffattn.lesson;
    return { text: lesson.state.text, spec: lesson.handle.spec_json(lesson.state.mechanism) };
  });
  const cli = execFileSync('cargo', ['run', '--quiet', '--release', '--bin', 'diffattn', '--', 'retrieve', '--mechanism', name, '--spec', '-', text], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
  assert.deepEqual(JSON.parse(spec), JSON.parse(cli));
  assert.equal(JSON.parse(spec).layers.length, layers);
  // Both languages: the button and the note follow the lesson's language.
  await page.evaluate(() => window.diffattn.lesson.set({ lang: 'zh' }));
  await page.evaluate(() => window.diffattn.settled());
  const zh = await page.evaluate(() => ({ button: window.diffattn.root.getElementById('lesson-every').textContent, note: window.diffattn.root.getElementById('lesson-every-note').textContent, lang: window.diffattn.lesson.explorerElement.getAttribute('lang') }));
  assert.equal(zh.button, LESSON_STRINGS.zh.every_layer.replace('{model}', name));
  assert.ok(zh.note.startsWith('探索器'), zh.note);
  assert.equal(zh.lang, 'zh');
  assert.deepEqual(errors, []);
});
