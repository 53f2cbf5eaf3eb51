// The noise lesson on the real model (`/www/?lesson=noise`, www/explorer/noise-lesson.js): it
// opens from its address, proposes «it» → «animal», draws three bars for each of the model's
// 72 heads whose figures are `diffattn noise`'s for the same text (tests/noise_lesson.rs checks
// those against `diffattn encode --attentions`), keeps the lesson in the address, takes a
// clicked target, proposes the answer of a retrieval context, and a bar opens its maps in the
// explorer; both languages, a phone and a projector's 1024 × 768. Needs the model file the
// set-up builds (weights/minilm/minilm.bin).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness, waitForReady } from './harness.mjs';
import { NOISE_EXAMPLES, NOISE_STRINGS } from '../../www/explorer/noise-text.js';
import { placeholders } from '../../www/explorer/i18n.js';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

async function openNoise(query = '', options = {}) {
  const { page, errors, context } = await h.newPage(options);
  await page.goto(h.url(`/www/?lesson=noise${query}`));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  return { page, errors, context };
}

/** `diffattn noise` on the same text (and query and target, when given). */
function cli(text, pick = null) {
  const args = ['run', '--quiet', '--release', '--bin', 'diffattn', '--', 'noise'];
  if (pick) args.push('--query', String(pick.query), '--target', String(pick.target));
  return JSON.parse(execFileSync('cargo', [...args, text], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })).lesson;
}

/** The page's lesson, and the bars drawn: `{ "L:H:kind": { target, sinks, other, href } }`. */
async function drawn(page) {
  return page.evaluate(() => {
    const bars = {};
    for (const a of window.diffattn.root.querySelectorAll('.noise-chart a')) {
      const d = a.dataset;
      bars[`${d.layer}:${d.head}:${d.kind}`] = { target: Number(d.target), sinks: Number(d.sinks), other: Number(d.other), href: a.getAttribute('href') };
    }
    return { lesson: window.diffattn.lesson.lesson, tokens: window.diffattn.lesson.tokens, bars };
  });
}

/** Every figure of the page's lesson equals the command line's. */
function sameFigures(page, out) {
  assert.deepEqual([page.query, page.target, page.sinks], [out.query, out.target, out.sinks]);
  assert.equal(page.heads.length, out.heads.length);
  const close = (a, b, what) => {
    for (const k of Object.keys(b)) assert.ok(Math.abs(a[k] - b[k]) < 1e-6, `${what} ${k}: ${a[k]} vs ${b[k]}`);
  };
  page.heads.forEach((p, i) => {
    const c = out.heads[i];
    const what = `layer ${c.layer + 1}, head ${c.head + 1}`;
    close(p.before, c.before, what);
    close(p.shift, c.shift, `${what} shift`);
    assert.equal(p.difference === null, c.difference === null, what);
    if (c.difference) {
      assert.deepEqual([p.difference.head, p.difference.lambda], [c.difference.head, c.difference.lambda], what);
      close(p.difference.shares, c.difference.shares, `${what} difference`);
    }
  });
  for (const k of ['mean_before', 'mean_difference', 'mean_shift']) close(page[k], out[k], k);
}

test('both languages have the same noise-lesson strings and placeholders; every key the lesson uses exists', async () => {
  const { readFile } = await import('node:fs/promises');
  const used = new Set();
  for (const f of ['www/explorer/noise-lesson.js', 'www/noise-page.js']) {
    const text = await readFile(new URL(`../../${f}`, import.meta.url), 'utf8');
    for (const m of text.matchAll(/(?:#say\(|noiseText\([\w.]+, )'(\w+)'/g)) used.add(m[1]);
  }
  assert.ok(used.size > 15, `found only ${used.size} keys: the scan is broken`);
  for (const k of used) assert.ok(k in NOISE_STRINGS.en, `missing noise-lesson key ${k}`);
  assert.deepEqual(Object.keys(NOISE_STRINGS.zh).sort(), Object.keys(NOISE_STRINGS.en).sort());
  for (const k of Object.keys(NOISE_STRINGS.en)) assert.deepEqual(placeholders(NOISE_STRINGS.zh[k]), placeholders(NOISE_STRINGS.en[k]), k);
});

test('the lesson opens on the pronoun sentence, proposes «it» → «animal», and its 72 heads are the command line’s figures', async () => {
  const { page, errors, context } = await openNoise('', { width_px: 1280, height_px: 800 });
  const { lesson, tokens, bars } = await drawn(page);
  assert.equal(tokens[lesson.query], 'it');
  assert.equal(tokens[lesson.target], 'animal');
  assert.equal(Object.keys(bars).length, 72 * 3);
  sameFigures(lesson, cli(NOISE_EXAMPLES.pronoun));
  // Issue 22's figure: layer 4, head 2 puts 0.68 of «it» on «animal».
  assert.ok(Math.abs(lesson.heads[3 * 12 + 1].before.target - 0.6768) < 5e-4);
  // The bars draw the shares of absolute values, and link to their maps in the explorer.
  const b = bars['4:2:before'];
  assert.ok(Math.abs(b.target - lesson.heads[37].before.target_abs) < 1e-4);
  const before = new URLSearchParams(b.href.split('?')[1]);
  assert.deepEqual(Object.fromEntries(['weights', 'layer', 'head', 'heads'].map((k) => [k, before.get(k)])), { weights: 'minilm', layer: '4', head: '2', heads: '12' });
  assert.equal(before.get('text'), NOISE_EXAMPLES.pronoun);
  const p = lesson.heads[37].difference;
  const diff = new URLSearchParams(bars['4:2:difference'].href.split('?')[1]);
  const links = lesson.heads[37].links;
  assert.deepEqual([diff.get('mechanism'), diff.get('partner'), diff.get('lambda')], [links.difference.mechanism, String(p.head + 1), String(Number(p.lambda.toFixed(2)))]);
  assert.notEqual(links.difference.mechanism, links.before.mechanism);
  assert.equal(new URLSearchParams(bars['4:2:shift'].href.split('?')[1]).get('mechanism'), links.shift.mechanism);
  // The page says what it searched and found, and what a negative value means.
  const said = await page.evaluate(() => ['noise-search', 'noise-negative', 'noise-paper', 'noise-picked'].map((id) => window.diffattn.root.getElementById(id).textContent));
  assert.match(said[0], /layer 4, head 2 − 0\.\d\d × head \d+/);
  assert.match(said[1], /below 0/);
  assert.match(said[2], /Table 3/);
  assert.match(said[3], /proposed/);
  assert.match(page.url(), /lesson=noise/);
  await screenshot(page, 'noise-lesson-1280');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a clicked target is the lesson’s and the address’s, with the command line’s figures', async () => {
  const { page, errors, context } = await openNoise();
  const street = await page.evaluate(() => window.diffattn.lesson.tokens.indexOf('street'));
  await page.evaluate((i) => window.diffattn.root.querySelector(`#noise-tokens [data-index="${i}"]`).click(), street);
  await page.evaluate(() => window.diffattn.settled());
  const { lesson } = await drawn(page);
  assert.deepEqual([lesson.query, lesson.target], [10, street]);
  assert.match(page.url(), new RegExp(`target=${street}`));
  assert.match(page.url(), /lesson=noise/);
  sameFigures(lesson, cli(NOISE_EXAMPLES.pronoun, { query: 10, target: street }));
  // [CLS] cannot be the target.
  await page.evaluate(() => window.diffattn.root.querySelector('#noise-tokens [data-index="0"]').click());
  assert.match(await page.evaluate(() => window.diffattn.root.getElementById('noise-picked').textContent), /sinks/);
  // The address opens the same choice; a sink as the target is refused with the engine's reason.
  const again = await openNoise(`&target=${street}`);
  assert.equal((await drawn(again.page)).lesson.target, street);
  await again.context.close();
  const sink = await openNoise('&target=0');
  assert.equal((await drawn(sink.page)).lesson, null);
  assert.match(await sink.page.evaluate(() => window.diffattn.root.getElementById('noise-status').textContent), /not \[CLS\] or \[SEP\]/);
  assert.deepEqual(sink.errors, []);
  await sink.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('a retrieval context: the question mark and the answer are proposed, the figures the command line’s', async () => {
  const { page, errors, context } = await openNoise('', { width_px: 1280, height_px: 800 });
  await page.evaluate(() => window.diffattn.root.getElementById('noise-retrieval').click());
  await page.evaluate(() => window.diffattn.settled());
  const { lesson, tokens } = await drawn(page);
  assert.deepEqual([tokens[lesson.query], tokens[lesson.target]], ['?', '42']);
  sameFigures(lesson, cli(NOISE_EXAMPLES.retrieval));
  assert.match(await page.evaluate(() => window.diffattn.root.getElementById('noise-picked').textContent), /question mark and the answer/);
  await screenshot(page, 'noise-lesson-retrieval');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a bar opens its maps in the explorer: the real model at that layer and head', async () => {
  const { page, errors, context } = await openNoise();
  const { bars } = await drawn(page);
  await page.evaluate(() => window.diffattn.root.querySelector('.noise-chart a[data-layer="4"][data-head="2"][data-kind="difference"]').dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true })));
  await page.waitForURL((url) => url.search.includes('weights=minilm'));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  const s = await page.evaluate(() => ({ ...window.diffattn.state }));
  const want = new URLSearchParams(bars['4:2:difference'].href.split('?')[1]);
  assert.deepEqual([s.weights, s.layer, s.head, s.mechanism, s.partner], ['minilm', 4, 2, want.get('mechanism'), Number(want.get('partner'))]);
  assert.ok(Math.abs(s.lambda - Number(want.get('lambda'))) < 1e-6, `λ ${s.lambda}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Chinese, a phone and a projector: the lesson fits', async () => {
  const zh = await openNoise('&lang=zh', { width_px: 1280, height_px: 800 });
  assert.match(await zh.page.evaluate(() => window.diffattn.root.getElementById('noise-title').textContent), /噪声课/);
  await screenshot(zh.page, 'noise-lesson-zh');
  await zh.context.close();
  for (const [w, ht, name] of [
    [390, 844, 'noise-lesson-phone'],
    [1024, 768, 'noise-lesson-1024'],
  ]) {
    const { page, errors, context } = await openNoise('', { width_px: w, height_px: ht });
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(over <= 0, `${name}: ${over} px wider than the window`);
    await screenshot(page, name);
    assert.deepEqual(errors, []);
    await context.close();
  }
});
