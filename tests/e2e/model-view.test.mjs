// End-to-end: the model view (issue 20, item 1; www/explorer/model-view.js). `view=model` draws
// every layer × head of the model as a small map of one stage, with the engine's statistics of
// each head under it (src/engine/head_stats.rs): for the real model (6 × 12 heads, labelled by
// layer and head) the previous-token head docs/MINILM.md names (layer 1, head 3) scores near 1;
// sorting by the sink mass reorders the heads, highest first; a click, or Enter on a focused
// head, opens that layer and head in the explore view, which the address keeps. The small
// trained models have one layer. A multi-layer spec file shows every layer, each head's figures
// those of the CLI's map; 32 heads a layer make the maps compact, a row per layer.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness } from './harness.mjs';
import { openExplorer, settled } from './www-helpers.mjs';

const FACTS = JSON.parse(await readFile(path.join(ROOT, 'tests/golden/minilm/forward.json'), 'utf8')).facts;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Every head's card in page order: its layer, head, label, figures (from its title) and how many colours its map has. */
function cards(page) {
  return page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('.mv-card')].map((card) => {
      const canvas = card.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4 * 7) colours.add(`${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`);
      const figure = (name) => {
        const m = card.title.match(new RegExp(`${name} (−?[0-9.]+)`));
        return m ? Number(m[1].replace('−', '-')) : null;
      };
      return {
        layer: Number(card.dataset.layer),
        head: Number(card.dataset.head),
        label: card.querySelector('.mv-label')?.textContent ?? null,
        entropy: figure('entropy'),
        sink: figure('sink mass'),
        previous: figure('previous token'),
        next: figure('next token'),
        shown: card.querySelector('.mv-stats')?.textContent ?? null,
        colours: colours.size,
      };
    }),
  );
}

const params = (page) => new URL(page.url()).searchParams;

test('view=model with the real model: 72 heads labelled by layer and head, L1 H3 a previous-token head, sorting by sink mass, a click and Enter open a head', async () => {
  const text = FACTS.sentence;
  const { page, errors } = await openExplorer(h, { weights: 'minilm', view: 'model', text }, { width_px: 1280, height_px: 800 });
  let all = await cards(page);
  assert.equal(all.length, 72, 'six layers of twelve heads');
  assert.deepEqual(
    all.map((c) => c.label),
    Array.from({ length: 72 }, (_, i) => `L${Math.floor(i / 12) + 1} H${(i % 12) + 1}`),
    'labelled by layer and head, in layer order',
  );
  for (const c of all) {
    assert.ok(c.colours > 2, `${c.label}: its map is drawn (${c.colours} colours)`);
    assert.ok(c.entropy !== null && c.sink !== null && c.previous !== null && c.next !== null, `${c.label}: its statistics (${c.shown})`);
  }
  // docs/MINILM.md: layer 1, head 3 attends to the token before (subdiagonal ≈ 1.00), on the
  // mechanism's final map (the page's default mechanism) as on A.
  const byHead = (list, layer, head) => list.find((c) => c.layer === layer && c.head === head);
  assert.ok(byHead(all, 1, 3).previous > 0.98, `L1 H3 previous ${byHead(all, 1, 3).previous}`);
  assert.equal(Math.max(...all.map((c) => c.previous)), byHead(all, 1, 3).previous, 'no other head is as much a previous-token head');
  // On A, the model's own maps: transformers' figures (tests/golden/minilm/forward.json).
  const first = await page.evaluate(() => window.diffattn.root.querySelector('#model-stage option').value);
  assert.ok(first === 'a' || first === 'a1', first);
  await page.selectOption('#model-stage', first);
  await settled(page);
  assert.equal(params(page).get('all_heads_stage'), first);
  all = await cards(page);
  assert.equal(all.length, 72);
  const l1h3 = byHead(all, 1, 3);
  assert.ok(Math.abs(l1h3.previous - FACTS.layer1_head3_subdiagonal) < 0.002, `L1 H3 previous ${l1h3.previous}`);
  assert.match(l1h3.shown, /←\s1\.00|←\s\.99/);
  // The sink mass of layer 4, head 2 is the figure docs/MINILM.md measures on [CLS] and [SEP].
  const l4h2 = byHead(all, 4, 2);
  assert.ok(Math.abs(l4h2.sink - FACTS.layer4_head2_cls_sep) < 0.002, `L4 H2 sink ${l4h2.sink}`);
  assert.equal(params(page).get('view'), 'model');
  // The exports draw the explore view's maps: off here.
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('export-png').disabled), true);
  // A smaller window: the maps follow.
  const side = () => page.evaluate(() => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width);
  const wide = await side();
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.waitForFunction((w) => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width < w, wide);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction((w) => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width === w, wide);

  // Sorting by the sink mass: highest first, another order than layer and head.
  await page.selectOption('#model-sort', 'sink');
  await settled(page);
  all = await cards(page);
  const sinks = all.map((c) => c.sink);
  assert.ok(
    sinks.every((s, i) => i === 0 || s <= sinks[i - 1]),
    `highest first: ${sinks.slice(0, 8).join(', ')}…`,
  );
  assert.notEqual(all.map((c) => c.label).join(), Array.from({ length: 72 }, (_, i) => `L${Math.floor(i / 12) + 1} H${(i % 12) + 1}`).join(), 'reordered');
  assert.ok(Math.abs(sinks[0] - FACTS.cls_sep_max) < 0.002 && Math.abs(sinks[71] - FACTS.cls_sep_min) < 0.002, `${sinks[0]}, ${sinks[71]}`);
  assert.equal(params(page).get('model_sort'), 'sink');

  // A click opens the head in the explore view, every stage of it.
  await page.click('.mv-card[data-layer="1"][data-head="3"]');
  await settled(page);
  // The address leaves a default out: view=explore and layer=1 are the defaults.
  let q = params(page);
  assert.deepEqual([q.get('view') ?? 'explore', q.get('layer') ?? '1', q.get('head')], ['explore', '1', '3']);
  const s = await page.evaluate(() => ({ ...window.diffattn.state }));
  assert.deepEqual([s.view, s.layer, s.head, s.all_heads], ['explore', 1, 3, false]);
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelector('.model-view').hidden), true);
  assert.ok((await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length)) >= 1);

  // Back to the model view (kept sorted), and Enter on a focused head opens it.
  await page.click('#view-model');
  await settled(page);
  await page.focus('.mv-card[data-layer="4"][data-head="2"]');
  await page.keyboard.press('Enter');
  await settled(page);
  q = params(page);
  assert.deepEqual([q.get('view') ?? 'explore', q.get('layer'), q.get('head')], ['explore', '4', '2']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('view=model with a small trained model: one layer of heads, its first or final map, a sink on the first token', async () => {
  const { page, errors } = await openExplorer(h, { mechanism: 'shift_diff', view: 'model', text: 'the film was not good but the actors were wonderful' }, { width_px: 1024, height_px: 768 });
  const heads = await page.evaluate(() => window.diffattn.state.heads);
  let all = await cards(page);
  assert.equal(all.length, heads, 'one layer');
  assert.ok(all.every((c) => c.layer === 1 && c.colours > 2));
  const stages = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#model-stage option')].map((o) => o.value));
  assert.deepEqual(stages, ['a', 'fused'], 'the first and the final map');
  const finalSinks = all.map((c) => c.sink);
  // Each title also gives the first map's figures (what the mechanism changed).
  const onA = await page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('.mv-card')].map((card) => Number(card.title.match(/on A: entropy [0-9.]+, sink mass ([0-9.]+)/)?.[1])),
  );
  await page.selectOption('#model-stage', 'a');
  await settled(page);
  assert.equal(params(page).get('all_heads_stage'), 'a');
  all = await cards(page);
  assert.equal(all.length, heads);
  assert.notDeepEqual(all.map((c) => c.sink), finalSinks, "A's figures are not A′'s");
  assert.deepEqual(all.map((c) => c.sink), onA, "A's figures are those the final map's titles gave");
  // The figures are the engine's for that head's map: opened in the explore view, the
  // explorer's own handle (which computed it there) says the same.
  const first = all.find((c) => c.head === 1);
  await page.click('.mv-card[data-layer="1"][data-head="1"]');
  await settled(page);
  // Nine numbers per head (web/src/model_view.rs): entropy, sink, previous, next, …
  const engine = [...(await page.evaluate(() => window.diffattn.call((ex) => [...ex.head_statistics('a')])))];
  assert.equal(engine.length, 9 * heads);
  const [entropy, sink, previous] = engine;
  assert.ok(Math.abs(sink - first.sink) < 0.0006 && Math.abs(entropy - first.entropy) < 0.0006 && Math.abs(previous - first.previous) < 0.0006, `${engine.slice(0, 9)} vs ${JSON.stringify(first)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

/** What the CLI prints for layer `n` of `file`: every head's `a`. */
function cliHeads(file, n) {
  const out = execFileSync('cargo', ['run', '--quiet', '--bin', 'diffattn', '--', 'stages', '--layer', String(n), file], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out).heads.map((head) => head.a);
}

/** docs/DESIGN.md §8 on a softmax map (rows sum to 1, the first key the sink), by hand. */
function figuresOf(a) {
  const rows = a.filter((row) => row.some((v) => v !== 0));
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    entropy: mean(rows.map((row) => -row.reduce((s, p) => (p > 0 ? s + p * Math.log(p) : s), 0))),
    sink: mean(rows.map((row) => row[0])),
    previous: mean(a.slice(1).map((row, i) => row[i])),
  };
}

async function pickSpec(page, file) {
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(file);
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('messages').textContent), '');
  await settled(page);
}

for (const name of ['multilayer-two.json', 'multilayer-two.safetensors']) {
  test(`view=model with a multi-layer file (${path.extname(name)}): every layer's heads, each with the figures of the CLI's maps; a click opens that layer of the file`, async () => {
    const file = path.join(ROOT, 'tests/e2e/fixtures', name);
    const { page, errors } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
    await pickSpec(page, file);
    await page.click('#view-model');
    await settled(page);
    const all = await cards(page);
    assert.deepEqual(
      all.map((c) => c.label),
      ['L1 H1', 'L1 H2', 'L1 H3', 'L1 H4', 'L2 H1', 'L2 H2', 'L2 H3', 'L2 H4'],
      'two layers of four heads, in layer order',
    );
    for (const layer of [1, 2]) {
      cliHeads(file, layer).forEach((a, i) => {
        const card = all.find((c) => c.layer === layer && c.head === i + 1);
        const want = figuresOf(a);
        assert.ok(card.colours > 2, `${card.label}: drawn`);
        for (const key of ['entropy', 'sink', 'previous']) assert.ok(Math.abs(card[key] - want[key]) < 0.0006, `${card.label} ${key}: ${card[key]} on the page, ${want[key]} from the CLI's map`);
      });
    }
    // The two layers differ: the view did not draw the first layer twice.
    assert.notDeepEqual(all.slice(0, 4).map((c) => c.entropy), all.slice(4).map((c) => c.entropy));
    await page.click('.mv-card[data-layer="2"][data-head="3"]');
    await page.waitForFunction(() => window.diffattn.view.specs.active?.shown === 2, null, { timeout: 30_000 });
    await settled(page);
    const s = await page.evaluate(() => ({ ...window.diffattn.state }));
    assert.deepEqual([s.view, s.layer, s.head], ['explore', 2, 3]);
    // Back to the sentence: the model view draws the sentence's model again.
    await page.click('#view-model');
    await settled(page);
    await page.click('#spec-back');
    await settled(page);
    const heads = await page.evaluate(() => window.diffattn.state.heads);
    assert.equal((await cards(page)).length, heads, "the sentence's model: one layer");
    assert.deepEqual(errors, []);
    await page.close();
  });
}

/** A two-layer spec of 32 heads of one channel each over six tokens, seeded (docs/DESIGN.md §7.11). */
function wideSpec() {
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const matrix = (rows, cols, scale) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => random() * scale));
  const tokens = ['the', 'cat', 'sat', 'on', 'a', 'mat'];
  const layer = (n) => ({ mechanism: 'standard', heads: 32, causal: false, x: matrix(6, 32, 2), w_q: matrix(32, 32, 3), w_k: matrix(32, 32, 3), w_v: matrix(32, 32, 1), w_o: matrix(32, 32, 1), layer: n, model: 'wide fixture', tokens });
  return JSON.stringify({ layers: [layer(0), layer(1)] });
}

test('view=model with 32 heads a layer: compact maps, a row per layer after its name, the figures in each title; sorted, one list', async () => {
  const { page, errors } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
  await page.evaluate((json) => window.diffattn.view.specs.load(json, 'wide.json'), wideSpec());
  await settled(page);
  await page.click('#view-model');
  await settled(page);
  let all = await cards(page);
  assert.equal(all.length, 64);
  assert.ok(all.every((c) => c.colours > 1 && c.entropy !== null), 'every map drawn, every title with its figures');
  const grid = () =>
    page.evaluate(() => {
      const g = window.diffattn.root.querySelector('.mv-grid');
      const rows = [...g.querySelectorAll('.mv-row')].filter((r) => r.getBoundingClientRect().width > 0);
      const tops = new Set([...g.querySelectorAll('.mv-card')].map((c) => Math.round(c.getBoundingClientRect().top)));
      const label = g.querySelectorAll('.mv-label, .mv-stats').length;
      return { className: g.className, rows: rows.map((r) => r.textContent), lines: tops.size, label, right: Math.max(...[...g.querySelectorAll('.mv-card')].map((c) => c.getBoundingClientRect().right)) - g.getBoundingClientRect().left, width: g.getBoundingClientRect().width };
    });
  let g = await grid();
  assert.match(g.className, /mv-compact/);
  assert.deepEqual(g.rows, ['L1', 'L2'], "each layer's name at its row's start");
  assert.equal(g.lines, 2, 'a row per layer');
  assert.equal(g.label, 0, 'no label or figures under a compact map: its title has them');
  assert.ok(g.right <= g.width + 1, 'the rows fit the view');
  assert.match(await page.evaluate(() => window.diffattn.root.querySelector('.mv-note').textContent), /a row per layer\. Point at a head/);
  await page.selectOption('#model-sort', 'entropy');
  await settled(page);
  all = await cards(page);
  const entropies = all.map((c) => c.entropy);
  assert.ok(entropies.every((e, i) => i === 0 || e <= entropies[i - 1]), 'highest first');
  g = await grid();
  assert.deepEqual(g.rows, [], 'sorted: no row names');
  assert.deepEqual(errors, []);
  await page.close();
});
